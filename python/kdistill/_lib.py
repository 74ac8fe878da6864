"""The C library underneath: loading libkdistill.so, MPI setup, contexts and one guarded call.

Nothing here is public. The rest of the package builds a configuration (the same YAML the command
line reads, emitted as JSON, which YAML parsers accept) and calls :func:`run_job`.
"""

import atexit
import ctypes
import functools
import importlib
import logging
import math
import os
import queue
import signal
import sys
import threading
from typing import Any, Callable, cast, Dict, List, Optional, Tuple, TypeVar

import numpy as np

from . import _errors

log = logging.getLogger("kdistill")

KD_LOG_QUIET, KD_LOG_NORMAL, KD_LOG_VERBOSE = 0, 1, 2
MPI_THREAD_SERIALIZED = 2  # Open MPI's (and the MPI standard's) ordering: SINGLE < FUNNELED < ...


class DataArray(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_void_p), ("n_local", ctypes.c_int64),
                ("d", ctypes.c_int), ("dtype", ctypes.c_int), ("row_stride", ctypes.c_int64),
                ("col_stride", ctypes.c_int64)]


class JobOpts(ctypes.Structure):
    _fields_ = [("config", ctypes.c_char_p), ("config_text", ctypes.c_char_p),
                ("sets", ctypes.POINTER(ctypes.c_char_p)), ("n_sets", ctypes.c_int),
                ("output", ctypes.c_char_p), ("resume", ctypes.c_char_p),
                ("no_output", ctypes.c_int), ("arrays", ctypes.POINTER(DataArray)),
                ("n_arrays", ctypes.c_int), ("spec", ctypes.c_void_p)]


class JobSummary(ctypes.Structure):
    _fields_ = [("task", ctypes.c_char * 64), ("algorithm", ctypes.c_char * 64),
                ("kernel", ctypes.c_char * 160), ("output", ctypes.c_char * 4096),
                ("n_in", ctypes.c_int64), ("n", ctypes.c_int64), ("d", ctypes.c_int),
                ("n_ranks", ctypes.c_int), ("mmd", ctypes.c_double), ("seconds", ctypes.c_double),
                ("kernel_evals", ctypes.c_uint64), ("mmd_se", ctypes.c_double),
                ("mmd_method", ctypes.c_int), ("seconds_load", ctypes.c_double),
                ("seconds_evaluation", ctypes.c_double), ("seconds_write", ctypes.c_double),
                ("seconds_total", ctypes.c_double), ("stop_reason", ctypes.c_int),
                ("iterations", ctypes.c_int64)]


class _Metric(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_double), ("is_count", ctypes.c_int)]


class _Dataset(ctypes.Structure):
    _fields_ = [("path", ctypes.c_char_p), ("is_int", ctypes.c_int), ("rank", ctypes.c_int),
                ("dims", ctypes.c_int64 * 2), ("f64", ctypes.POINTER(ctypes.c_double)),
                ("i64", ctypes.POINTER(ctypes.c_int64))]


_PD = ctypes.POINTER(ctypes.c_double)
_PI = ctypes.POINTER(ctypes.c_int64)


class Result(ctypes.Structure):
    _fields_ = [("n", ctypes.c_int64), ("d", ctypes.c_int), ("points", _PD), ("weights", _PD),
                ("indices", _PI), ("mmd", ctypes.c_double), ("seconds", ctypes.c_double),
                ("kernel_evals", ctypes.c_uint64), ("n_trace", ctypes.c_int64),
                ("cap_trace", ctypes.c_int64), ("trace_iter", _PI), ("trace_atoms", _PI),
                ("trace_mmd", _PD), ("trace_seconds", _PD), ("n_metrics", ctypes.c_int),
                ("metrics", ctypes.POINTER(_Metric)), ("n_datasets", ctypes.c_int),
                ("datasets", ctypes.POINTER(_Dataset))]


_SINK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)


def _library_path() -> str:
    env = os.environ.get("KDISTILL_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    # _libpath.py is written by cmake --install or setup.py. Imported by name, not statically:
    # mypy would otherwise resolve it to whichever installed copy it finds (one in ~/.local) or
    # to none, and no one static form type-checks in both cases.
    try:
        libpath = importlib.import_module("._libpath", __package__)
    except ImportError:
        libpath = None
    if libpath is not None:
        return os.path.normpath(os.path.join(here, str(getattr(libpath, "LIBRARY"))))
    # a source checkout: python/kdistill next to build*/libkdistill.so
    root = os.path.dirname(os.path.dirname(here))
    for b in ("build", "build-test"):
        p = os.path.join(root, b, "libkdistill.so")
        if os.path.exists(p):
            return p
    return "libkdistill.so.0"


def _load() -> ctypes.CDLL:
    path = _library_path()
    try:
        # RTLD_GLOBAL: Open MPI's plugins resolve libmpi's symbols in the global scope
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise ImportError("kdistill: cannot load the C library %s (%s); build and install it with "
                          "cmake --install, or set KDISTILL_LIB" % (path, e)) from None
    p, i, u = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER
    sig = {
        "kd_lib_init": (i, [u(i), u(i)]),
        "kd_lib_finalize": (None, []),
        "kd_lib_comm_world_f": (ctypes.c_int64, []),
        "kd_lib_comm_self_f": (ctypes.c_int64, []),
        "kd_ctx_create_f": (i, [ctypes.c_int64, u(p)]),
        "kd_ctx_destroy": (None, [u(p)]),
        "kd_ctx_rank": (i, [p]),
        "kd_ctx_size": (i, [p]),
        "kd_ctx_bind": (p, [p]),
        "kd_ctx_unbind": (None, [p]),
        "kd_ctx_message": (ctypes.c_char_p, [p]),
        "kd_ctx_error_key": (ctypes.c_char_p, [p]),
        "kd_ctx_error_known": (i, [p, i, ctypes.c_char_p, i]),
        "kd_ctx_clear_error": (None, [p]),
        "kd_ctx_set_log_level": (None, [p, i]),
        "kd_ctx_set_log_interval": (None, [p, ctypes.c_double]),
        "kd_ctx_set_log_sink": (None, [p, _SINK, p]),
        "kd_ctx_interrupt": (None, [p]),
        "kd_ctx_clear_interrupt": (None, [p]),
        "kd_ctx_interrupted": (i, [p]),
        "kd_ctx_catch_sigint": (i, [p, i]),
        "kd_ctx_agree": (i, [p, i, ctypes.c_char_p]),
        "kd_err_string": (ctypes.c_char_p, [i]),
        "kd_job_run": (i, [p, u(JobOpts), u(JobSummary), u(Result)]),
        "kd_job_run_resolved": (i, [p, u(JobOpts), u(JobSummary), u(Result), u(p)]),
        "kd_job_validate": (i, [p, u(JobOpts), u(p), ctypes.c_char_p, i]),
        "kd_job_config_value": (i, [ctypes.c_char_p, ctypes.c_char_p, _PD, _PI, ctypes.c_char_p,
                                    i]),
        "kd_job_config_key_at": (i, [ctypes.c_char_p, ctypes.c_char_p, i, ctypes.c_char_p, i]),
        "kd_job_mmd_rule": (i, [p, u(JobOpts), _PD, _PD, ctypes.c_int64, i, _PD, _PD]),
        "kd_job_mmd_rule_info": (i, [p, u(JobOpts), _PD, _PD, ctypes.c_int64, i, _PD, _PD,
                                     u(ctypes.c_int), _PD, _PD]),
        "kd_output_read": (i, [ctypes.c_char_p, u(Result), u(p), u(p), u(p)]),
        "kd_output_read_meta": (i, [ctypes.c_char_p, u(p), u(i)]),
        "kd_result_free": (None, [u(Result)]),
        "kd_output_save": (i, [p, ctypes.c_char_p, u(Result), ctypes.c_char_p, ctypes.c_char_p,
                               ctypes.c_char_p, i, ctypes.c_uint64, ctypes.c_char_p, i]),
        "kd_free": (None, [p]),
        "kd_data_read": (i, [p, ctypes.c_char_p, u(_PD), u(ctypes.c_int64), u(i)]),
        "kd_abi_sizeof": (ctypes.c_size_t, [ctypes.c_char_p]),
        "kd_err_name": (ctypes.c_char_p, [i]),
        "kd_err_exit_status": (i, [i]),
        "kd_kernel_has_ls": (i, [ctypes.c_char_p]),
        "kd_spec_create": (i, [ctypes.c_char_p, u(p)]),
        "kd_spec_set_name": (i, [p, ctypes.c_char_p]),
        "kd_spec_destroy": (None, [u(p)]),
        "kd_spec_set_int": (i, [p, ctypes.c_char_p, ctypes.c_int64]),
        "kd_spec_set_real": (i, [p, ctypes.c_char_p, ctypes.c_double]),
        "kd_spec_set_bool": (i, [p, ctypes.c_char_p, i]),
        "kd_spec_set_text": (i, [p, ctypes.c_char_p, ctypes.c_char_p]),
        "kd_spec_set_reals": (i, [p, ctypes.c_char_p, _PD, ctypes.c_int64, i]),
        "kd_build_info": (ctypes.c_size_t, [ctypes.c_char_p, ctypes.c_size_t]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    # the structs mirrored above must have the library's layout (a library of another version
    # would otherwise be read through the wrong offsets)
    for cname, mirror in (("kd_result", Result), ("kd_result_metric", _Metric),
                          ("kd_result_dataset", _Dataset), ("kd_job_opts", JobOpts),
                          ("kd_job_summary", JobSummary), ("kd_data_array", DataArray)):
        size = lib.kd_abi_sizeof(cname.encode())
        if size != ctypes.sizeof(mirror):
            raise ImportError("kdistill: the C library %s does not match this package: sizeof(%s) "
                              "is %d there, %d here; install the package and the library from "
                              "one build" % (path, cname, size, ctypes.sizeof(mirror)))
    _errors.bind(lib)
    return lib


lib = _load()


# The process lock: every entry into the library that can run MPI or HDF5 or change the library's
# state (MPI setup, contexts, calls) holds it, so threads of one process take turns (MPI is
# initialised MPI_THREAD_SERIALIZED, Debian's HDF5 is not thread-safe, a context holds one call's
# state). Reentrant: a public function holds it across its own steps (agreement, then the call),
# which must not interleave with another thread's collectives on the same communicator.
_lock = threading.RLock()
_F = TypeVar("_F", bound=Callable[..., Any])


def serialised(fn: _F) -> _F:
    """fn holding the process lock (the public functions that call the library)."""

    @functools.wraps(fn)
    def locked(*args: Any, **kw: Any) -> Any:
        with _lock:
            return fn(*args, **kw)
    return cast(_F, locked)


class _Process:
    """MPI for this interpreter: initialised here unless mpi4py (or the embedding program) did it,
    finalised at exit only if initialised here; one context per communicator."""

    def __init__(self) -> None:
        here, level = ctypes.c_int(0), ctypes.c_int(0)
        err = lib.kd_lib_init(ctypes.byref(here), ctypes.byref(level))
        if err:
            raise _errors.from_code(err, lib.kd_err_string(err).decode())
        self.initialized_here = bool(here.value)
        self.thread_level = level.value
        self.contexts: Dict[int, ctypes.c_void_p] = {}
        self.lock = _lock
        atexit.register(self.close)

    def close(self) -> None:
        # at exit: a daemon thread may still be inside a call (non-daemon threads have been
        # joined); then MPI is left as it is rather than finalised under that call
        if not self.lock.acquire(timeout=5.0):
            log.warning("a kdistill call is still running at exit: MPI is not finalised")
            return
        try:
            for ctx in self.contexts.values():
                lib.kd_ctx_destroy(ctypes.byref(ctx))
            self.contexts.clear()
            if self.initialized_here:
                self.initialized_here = False
                lib.kd_lib_finalize()
        finally:
            self.lock.release()

    def context(self, comm: Any) -> ctypes.c_void_p:
        """The context of an mpi4py communicator (None: MPI_COMM_WORLD). Creating one is
        collective over comm: every rank calls the same functions in the same order."""
        if comm is None:
            f = lib.kd_lib_comm_world_f()
        elif comm == "self":
            f = lib.kd_lib_comm_self_f()
        elif hasattr(comm, "py2f"):
            f = comm.py2f()
        elif isinstance(comm, int):
            f = comm
        else:
            raise TypeError("comm must be an mpi4py communicator (or its Fortran handle), got %r"
                            % type(comm).__name__)
        if (self.thread_level < MPI_THREAD_SERIALIZED
                and threading.current_thread() is not threading.main_thread()):
            raise _errors.UnsupportedError(
                "kdistill was called from a thread other than the main one, but MPI was "
                "initialised with thread level %d (below MPI_THREAD_SERIALIZED): call it from the "
                "main thread, or initialise MPI with threads (mpi4py: mpi4py.rc.thread_level = "
                "'serialized' before importing mpi4py.MPI)" % self.thread_level)
        with self.lock:
            ctx = self.contexts.get(f)
            if ctx is None:
                ctx = ctypes.c_void_p()
                err = lib.kd_ctx_create_f(f, ctypes.byref(ctx))
                if err:
                    raise _errors.from_code(err, "cannot create a context on the communicator")
                lib.kd_ctx_set_log_sink(ctx, _sink, None)
                self.contexts[f] = ctx
            return ctx


class _Progress:
    """Where log lines go: Python logging (rank 0 only: the library calls the sink there), plus an
    overwritten progress line on stderr when asked for (default: stderr is a terminal)."""

    def __init__(self) -> None:
        self.bar = False
        self.open = False

    def line(self, level: int, text: str) -> None:
        if text.startswith("kdistill: ") and not text.startswith("kdistill: warning: "):
            text = text[len("kdistill: "):]
        if level >= KD_LOG_VERBOSE:
            log.debug(text)
        elif text.startswith("kdistill: warning: "):
            log.warning(text[len("kdistill: warning: "):])
        else:
            if self.bar and text.startswith("["):
                sys.stderr.write("\r\x1b[K" + text)
                sys.stderr.flush()
                self.open = True
                return
            log.info(text)

    def finish(self) -> None:
        if self.open:
            sys.stderr.write("\n")
            sys.stderr.flush()
        self.open = False


_progress = _Progress()


@serialised
def build_info() -> Dict[str, str]:
    """What the loaded library is and runs on (``kdistill --version``): a dict with the keys
    version, compiler, mpi, hdf5, blas, scalapack, yaml."""
    n = lib.kd_build_info(None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    lib.kd_build_info(buf, n + 1)
    info: Dict[str, str] = {}
    for line in buf.value.decode(errors="replace").splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            info[key] = value
    return info


@_SINK
def _sink(user: Optional[int], level: int, line: bytes) -> None:
    try:
        _progress.line(level, line.decode("utf-8", "replace"))
    except Exception:  # never raise into C
        pass


_process: Optional["_Process"] = None


def process() -> _Process:
    """The process's MPI setup, made by the first call of any thread (under the lock: MPI is
    initialised once)."""
    global _process
    p = _process
    if p is None:
        with _lock:
            if _process is None:
                _process = _Process()
            p = _process
    return p


def _message(ctx: ctypes.c_void_p, err: int) -> str:
    m = lib.kd_ctx_message(ctx)
    m = m.decode("utf-8", "replace") if m else ""
    return m or lib.kd_err_string(err).decode()


def error(ctx: ctypes.c_void_p, err: int) -> _errors.Error:
    """The exception for the error err recorded on ctx: its message, the configuration key it is
    about (``key``) and, for an unknown key, the keys its section used (``known``)."""
    known: List[str] = []
    buf = ctypes.create_string_buffer(256)
    while lib.kd_ctx_error_known(ctx, len(known), buf, len(buf)):
        known.append(buf.value.decode("utf-8", "replace"))
    key = lib.kd_ctx_error_key(ctx)
    return _errors.from_code(err, _message(ctx, err),
                             key.decode("utf-8", "replace") if key else "", tuple(known))


_NONE, _INT, _REAL, _BOOL, _TEXT = range(5)  # kd_value_kind (include/kdistill/kd_types.h)


def config_value(config: Optional[str], key: str) -> Any:
    """The value at the dotted key of a resolved configuration, as the library's parser reads
    it (kd_job_config_value): an int, float, bool or str; None when it is not there."""
    if not config:
        return None
    num, inum = ctypes.c_double(), ctypes.c_int64()
    buf = ctypes.create_string_buffer(4096)
    kind = lib.kd_job_config_value(config.encode(), key.encode(), ctypes.byref(num),
                                   ctypes.byref(inum), buf, len(buf))
    if kind == _INT:
        return int(inum.value)
    if kind == _REAL:
        return float(num.value)
    if kind == _BOOL:
        return bool(inum.value)
    if kind == _TEXT:
        return buf.value.decode("utf-8", "replace")
    return None


def config_section(config: Optional[str], section: str) -> Dict[str, Any]:
    """The keys of a section of a resolved configuration that hold one value, with their values
    (config_value); {} when the section is not there. Nested sections are left out; a
    list of values is a list."""
    out: Dict[str, Any] = {}
    if not config:
        return out
    buf = ctypes.create_string_buffer(256)
    i = 0
    while lib.kd_job_config_key_at(config.encode(), section.encode(), i, buf, len(buf)):
        name = buf.value.decode("utf-8", "replace")
        v = config_value(config, "%s.%s" % (section, name))
        if v is None:  # a list of values: its elements by index
            items: List[Any] = []
            while True:
                x = config_value(config, "%s.%s.%d" % (section, name, len(items)))
                if x is None:
                    break
                items.append(x)
            v = items or None
        if v is not None:
            out[name] = v
        i += 1
    return out


@serialised
def agree(ctx: ctypes.c_void_p, exc: Optional[BaseException]) -> None:
    """Agree over the context's ranks on a Python-side error found on some ranks only, before any
    collective: every rank raises (the lowest failing rank's message), or none does."""
    code = 0 if exc is None else getattr(exc, "code", _errors.ArgumentError.code)
    msg = None if exc is None else str(exc).encode()
    err = lib.kd_ctx_agree(ctx, code, msg)
    if err:
        if exc is not None and code == err:
            raise exc
        raise error(ctx, err)


def _level() -> int:
    if log.isEnabledFor(logging.DEBUG):
        return KD_LOG_VERBOSE
    return KD_LOG_NORMAL


class _Worker:
    """The one thread that runs the main thread's calls, kept for the life of the process (per
    pid: a forked child starts its own). Starting a thread per call cost 0.1-0.6 ms: the thread
    itself, and its stack and allocator arena, which the C library touches afresh every time."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.jobs: "queue.SimpleQueue[Callable[[], None]]" = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="kdistill-call", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            self.jobs.get()()

    def submit(self, job: Callable[[], None]) -> None:
        self.jobs.put(job)


_worker: List[_Worker] = []


def _the_worker() -> _Worker:
    if not _worker or _worker[0].pid != os.getpid() or not _worker[0].thread.is_alive():
        _worker[:] = [_Worker()]
    return _worker[0]


def _on_worker(ctx: ctypes.c_void_p, work: Callable[[], None]) -> bool:
    """Run work on the worker thread and wait for it in the main thread, where a Python SIGINT
    handler can raise KeyboardInterrupt: that interrupts the context (the library stops at its
    next safe point) and the wait goes on until the call has ended. True if interrupted."""
    done = threading.Event()

    def job() -> None:
        try:
            work()
        finally:
            done.set()

    _the_worker().submit(job)
    interrupted = False
    # wait on an Event: a KeyboardInterrupt inside the wait leaves the call running, and the loop
    # waits for its end after interrupting it
    while not done.is_set():
        try:
            done.wait(0.05)
        except KeyboardInterrupt:
            lib.kd_ctx_interrupt(ctx)
            interrupted = True
    return interrupted


@serialised
def call(ctx: ctypes.c_void_p, fn: Callable[..., int], *args: Any,
         progress: Optional[bool] = None) -> None:
    """Run fn(*args) (a collective C entry point returning kd_err) so that Ctrl-C interrupts it
    (the library stops at its next safe point, every rank returns KD_ERR_INTERRUPTED, and this
    raises kdistill.Interrupted; a call that ends anyway raises KeyboardInterrupt after it, as
    Python does for any C call). Raises the matching kdistill exception.

    In the main thread with Python's own SIGINT handler, the call runs right here between
    kd_ctx_catch_sigint brackets (a SIGINT interrupts the context). With a SIGINT handler of the
    program's own, the call runs on a worker thread (when MPI allows it: MPI_THREAD_SERIALIZED)
    so that the handler runs while the main thread waits. The worker's hand-over cost 0.1-0.3 ms
    a call, most of a small test's time."""
    lib.kd_ctx_set_log_level(ctx, _level())
    lib.kd_ctx_clear_interrupt(ctx)
    _progress.bar = bool(progress) if progress is not None else sys.stderr.isatty()
    box: Dict[str, int] = {}

    def work() -> None:
        box["err"] = fn(*args)

    interrupted = False
    try:
        if threading.current_thread() is not threading.main_thread():
            work()  # signals reach the main thread only
        elif signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            if lib.kd_ctx_catch_sigint(ctx, 1):
                raise _errors.InternalError("cannot take over SIGINT for the call")
            try:
                work()
            finally:
                if lib.kd_ctx_catch_sigint(ctx, 0):
                    raise _errors.InternalError("cannot give SIGINT back after the call")
            interrupted = bool(lib.kd_ctx_interrupted(ctx))
        elif process().thread_level >= MPI_THREAD_SERIALIZED:
            # the main thread waits until the call has ended (also after Ctrl-C), so the worker
            # is idle whenever a call is submitted and calls never overlap (MPI_THREAD_SERIALIZED)
            interrupted = _on_worker(ctx, work)
        else:
            work()
    finally:
        _progress.finish()
    err = box.get("err", _errors.InternalError.code)
    if err:
        raise error(ctx, err)
    if interrupted:
        raise KeyboardInterrupt


C_INT_MAX = 2 ** 31 - 1


def c_size(value: int, what: str, top: int = C_INT_MAX) -> int:
    """value, a size handed to the library as a C int (below top), checked:
    ctypes would silently keep its low bits (2^32 + 2 columns read as 2). DataError (a
    ValueError) naming what when it is out of [0, top]."""
    v = int(value)
    if v < 0 or v > top:
        raise _errors.DataError("%s is %d, outside what the library takes (0 to %d)"
                                % (what, v, top))
    return v


def as_array(name: str, X: Any, what: str) -> Tuple[DataArray, np.ndarray]:
    """A DataArray over X without copying when X is float64/float32 (any strides); other dtypes
    and non-native byte order are converted once. Returns (DataArray, the array to keep alive)."""
    X = np.asanyarray(X)
    if np.iscomplexobj(X):
        raise _errors.DataError("%s: complex values are not supported (pass the real and the "
                                "imaginary parts as separate columns)" % what)
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    if X.ndim != 2:
        raise _errors.DataError("%s: expected a 2-D array (rows x dimensions), got shape %s"
                                % (what, X.shape))
    # before any conversion (a zero-stride view of 2^32 columns is no memory until copied)
    # (numpy's strides and row counts are int64 already)
    n, d = X.shape[0], c_size(X.shape[1], "%s: the column count" % what)
    if X.dtype not in (np.float64, np.float32) or not X.dtype.isnative:
        X = np.asarray(X, dtype=np.float64)
    isz = X.dtype.itemsize
    if X.strides[0] % isz or X.strides[1] % isz:
        X = np.ascontiguousarray(X)
    if d < 1:
        raise _errors.DataError("%s: the array has no columns" % what)
    a = DataArray(name.encode(), X.ctypes.data if n else None, n, d,
                  0 if X.dtype == np.float64 else 1, X.strides[0] // isz, X.strides[1] // isz)
    return a, X


def _copy(ptr: Any, n: int, dtype: Any) -> np.ndarray:
    """A numpy copy of the n values (float64 or int64, as dtype says) at the C pointer ptr; one
    memmove (numpy.ctypeslib.as_array costs ~20 us a call, which a small test's result of a dozen
    arrays turned into a fifth of a millisecond)."""
    if n <= 0 or not ptr:
        return np.empty(0, dtype=dtype)
    out = np.empty(n, dtype=dtype)
    ctypes.memmove(out.ctypes.data, ptr, n * out.itemsize)
    return out


def result_dict(r: Result) -> Dict[str, Any]:
    """Copy a kd_result into plain numpy / Python values."""
    n, d = int(r.n), int(r.d)
    out: Dict[str, Any] = {
        "points": _copy(r.points, n * d, np.float64).reshape(n, d),
        "weights": _copy(r.weights, n, np.float64),
        "indices": _copy(r.indices, n, np.int64),
        "mmd": float(r.mmd), "seconds": float(r.seconds), "kernel_evals": int(r.kernel_evals),
        # (slices of the C arrays: one ctypes conversion per entry, not one per field access)
        "metrics": {m.name.decode(): (int(m.value) if m.is_count else float(m.value))
                    for m in (r.metrics[:r.n_metrics] if r.n_metrics > 0 else ())},
        "trace": None, "extras": {},
    }
    t = int(r.n_trace)
    if t > 0:
        out["trace"] = {"iteration": _copy(r.trace_iter, t, np.int64),
                        "n_atoms": _copy(r.trace_atoms, t, np.int64),
                        "mmd": _copy(r.trace_mmd, t, np.float64),
                        "seconds": _copy(r.trace_seconds, t, np.float64)}
    extras = out["extras"]
    for ds in (r.datasets[:r.n_datasets] if r.n_datasets > 0 else ()):
        shape = tuple(ds.dims[:ds.rank])
        size = math.prod(shape)
        v = _copy(ds.i64, size, np.int64) if ds.is_int else _copy(ds.f64, size, np.float64)
        extras[ds.path.decode()] = v.reshape(shape) if shape else v[0]
    return out


def result_struct(fields: Dict[str, Any]) -> Tuple[Result, List[Any]]:
    """A kd_result over numpy copies of result_dict's fields (the inverse of result_dict), and
    the objects that must outlive it. The library only reads it: never kd_result_free it."""
    keep: List[Any] = []

    def arr(v: Any, dtype: Any, ptype: Any) -> Any:
        a = np.ascontiguousarray(v, dtype=dtype)
        keep.append(a)
        return a.ctypes.data_as(ptype)

    r = Result()
    pts = np.asarray(fields["points"], dtype=np.float64)
    r.n, r.d = pts.shape[0], c_size(pts.shape[1], "points: the column count")
    r.points = arr(pts, np.float64, _PD)
    r.weights = arr(fields["weights"], np.float64, _PD)
    r.indices = arr(fields["indices"], np.int64, _PI)
    r.mmd, r.seconds = float(fields["mmd"]), float(fields["seconds"])
    r.kernel_evals = int(fields["kernel_evals"])
    tr = fields.get("trace")
    if tr:
        r.n_trace = r.cap_trace = len(tr["iteration"])
        r.trace_iter = arr(tr["iteration"], np.int64, _PI)
        r.trace_atoms = arr(tr["n_atoms"], np.int64, _PI)
        r.trace_mmd = arr(tr["mmd"], np.float64, _PD)
        r.trace_seconds = arr(tr["seconds"], np.float64, _PD)
    metrics = fields.get("metrics") or {}
    ms = (_Metric * max(len(metrics), 1))()
    for j, (name, v) in enumerate(metrics.items()):
        ms[j].name = name.encode()
        ms[j].value = float(v)
        ms[j].is_count = int(isinstance(v, (int, np.integer)))
    keep.append(ms)
    r.n_metrics, r.metrics = c_size(len(metrics), "metrics: the number of metrics"), ms
    extras = fields.get("extras") or {}
    ds = (_Dataset * max(len(extras), 1))()
    for j, (path, v) in enumerate(extras.items()):
        a = np.asarray(v)
        if a.ndim > 2:
            raise ValueError("extra dataset %s has %d dimensions (at most 2)" % (path, a.ndim))
        ds[j].path = path.encode()
        ds[j].is_int = int(a.dtype.kind in "iub")
        ds[j].rank = a.ndim
        for k in range(a.ndim):
            ds[j].dims[k] = a.shape[k]
        if ds[j].is_int:
            ds[j].i64 = arr(a, np.int64, _PI)
        else:
            ds[j].f64 = arr(a, np.float64, _PD)
    keep.append(ds)
    r.n_datasets, r.datasets = c_size(len(extras), "extras: the number of datasets"), ds
    return r, keep


class Spec:
    """A job's configuration as typed settings (kdistill/kd_spec.h): each value crosses into the
    library as an int, a real, a bool, a text or an array of reals, never as YAML to be parsed.
    Built from (kind, key, value) items (spec_items); freed when the object goes. A setting the
    library refuses is kept by the spec and fails the job that uses it, with its message."""

    def __init__(self, items: List[Tuple[str, str, Any]], name: str = "<python>") -> None:
        self.handle = ctypes.c_void_p()
        if lib.kd_spec_create(None, ctypes.byref(self.handle)) != 0:
            raise MemoryError("kdistill: cannot create a configuration")
        lib.kd_spec_set_name(self.handle, name.encode())
        for kind, key, v in items:
            k = key.encode()
            if kind == "int":
                lib.kd_spec_set_int(self.handle, k, v)
            elif kind == "real":
                lib.kd_spec_set_real(self.handle, k, v)
            elif kind == "bool":
                lib.kd_spec_set_bool(self.handle, k, int(v))
            elif kind == "text":
                lib.kd_spec_set_text(self.handle, k, v.encode("utf-8", "surrogateescape"))
            else:  # "reals": (values float64 C-contiguous, rows, cols)
                a, rows, cols = v
                lib.kd_spec_set_reals(self.handle, k, a.ctypes.data_as(_PD), rows, cols)

    def __del__(self) -> None:
        if getattr(self, "handle", None) and self.handle.value:
            lib.kd_spec_destroy(ctypes.byref(self.handle))


def _spec_value(key: str, v: Any) -> Optional[Tuple[str, str, Any]]:
    """One typed setting for a plain value, or None where it has no typed form."""
    if isinstance(v, bool):
        return ("bool", key, v)
    if isinstance(v, int):
        return ("int", key, v) if -2**63 <= v < 2**63 else None
    if isinstance(v, float):
        return ("real", key, v) if np.isfinite(v) else None
    if isinstance(v, str):
        return ("text", key, v)
    if isinstance(v, (list, tuple)) and v:
        def num(x: Any) -> bool:
            return isinstance(x, (int, float)) and not isinstance(x, bool) and \
                bool(np.isfinite(x)) and abs(x) < 2**53
        if all(num(x) for x in v):
            return ("reals", key, (np.ascontiguousarray(v, dtype=np.float64), len(v), 0))
        if all(isinstance(r, (list, tuple)) and r and len(r) == len(v[0]) and
               all(num(x) for x in r) for r in v):
            a = np.ascontiguousarray(v, dtype=np.float64)
            return ("reals", key, (a, len(v), len(v[0])))
    return None


def spec_items(cfg: Dict[str, Any], prefix: str = "") -> Optional[List[Tuple[str, str, Any]]]:
    """The configuration dict cfg (plain values: numpy converted) as typed settings, in order;
    None when some value has no typed form (an empty section, a list of texts or of mixed
    values, a key that is not a plain name), for which the caller falls back to text."""
    items: List[Tuple[str, str, Any]] = []
    for k, v in cfg.items():
        if not isinstance(k, str) or not k or "." in k or \
                not all(c.isalnum() or c in "_-" for c in k):
            return None
        key = prefix + "." + k if prefix else k
        if isinstance(v, dict):
            sub = spec_items(v, key) if v else None
            if sub is None:
                return None
            items += sub
        elif v is not None:  # null: the key is absent
            it = _spec_value(key, v)
            if it is None:
                return None
            items.append(it)
    return items


def take_string(p: ctypes.c_void_p) -> Optional[str]:
    """Copy and free a malloc'ed C string (char * out-parameter)."""
    if not p.value:
        return None
    s = ctypes.string_at(p.value).decode("utf-8", "replace")
    lib.kd_free(p.value)
    return s
