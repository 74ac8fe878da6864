"""The public functions: thin, herd, ctt, quad, mmd, run, load, and their result classes.

Every function builds the configuration the command line would read (so the same keys, defaults,
validation and messages apply), hands the arrays to the C library in place, and runs the task on
the calling process, or on every rank of ``comm`` (each rank passing its own block of rows).
"""

import ctypes
import difflib
import functools
import inspect
import json
import os
from typing import (Any, Callable, cast, Dict, List, Optional, Sequence, Tuple, Type, TypeVar,
                    Union)

import numpy as np
import numpy.typing as npt

from . import _errors
from ._deep import Deep, LengthScale, input_width, resolved
from . import _lib
from ._lib import lib

KernelSpec = Union[str, Dict[str, Any]]  # a kernel name, or a dict of kernel keys
AnyKernel = Union[KernelSpec, Deep]  # thin, herd, ctt and mmd also take Deep(phi)
TargetSpec = Union["Measure", Dict[str, Any], npt.ArrayLike]  # closed form, section, or samples
PathLike = Union[str, "os.PathLike[str]"]
_Arrays = List[Tuple[str, Any, str]]


def _has_ls(name: str) -> bool:
    """Whether the kernel family has a length scale (else kernel.ls would be an unknown key); the
    library's own table answers, unknown names are left for the config check to refuse."""
    return lib.kd_kernel_has_ls(str(name).encode()) != 0


# ------------------------------------------------------------------ closed-form target measures
class Measure:
    """A probability measure with a closed-form kernel mean embedding (a ``target:`` section)."""

    def __init__(self, type_: str, **keys: Any) -> None:
        self.section: Dict[str, Any] = {"type": type_}
        self.section.update({k: v for k, v in keys.items() if v is not None})

    def _d_from_lists(self, *names: str) -> None:
        """d, when not given, is the length of the longest of the lists ``names`` (the library's
        reader follows the same rule; d is written out so the section says it)."""
        lens = [len(self.section[k]) for k in names if isinstance(self.section.get(k), list)]
        if "d" not in self.section and lens:
            self.section["d"] = max(lens)

    def __repr__(self) -> str:
        keys = ", ".join("%s=%r" % kv for kv in self.section.items() if kv[0] != "type")
        return "%s(%s)" % (type(self).__name__, keys)


class Gaussian(Measure):
    """N(mean, diag(sd^2)). ``mean`` and ``sd`` are numbers or lists of d numbers; ``d`` defaults
    to the length of the longest list."""

    def __init__(self, mean: Union[float, Sequence[float]] = 0.0,
                 sd: Union[float, Sequence[float]] = 1.0, d: Optional[int] = None) -> None:
        super().__init__("gaussian", mean=_plain(mean), sd=_plain(sd), d=d)
        self._d_from_lists("mean", "sd")


class Box(Measure):
    """The uniform measure on the box prod [lo_i, hi_i]."""

    def __init__(self, lo: Union[float, Sequence[float]] = 0.0,
                 hi: Union[float, Sequence[float]] = 1.0, d: Optional[int] = None) -> None:
        super().__init__("uniform_box", lo=_plain(lo), hi=_plain(hi), d=d)
        self._d_from_lists("lo", "hi")


class TruncGaussian(Measure):
    """N(mean, diag(sd^2)) conditioned on the box prod [lo_i, hi_i]."""

    def __init__(self, mean: Union[float, Sequence[float]] = 0.0,
                 sd: Union[float, Sequence[float]] = 1.0, lo: Union[float, Sequence[float]] = -1.0,
                 hi: Union[float, Sequence[float]] = 1.0, d: Optional[int] = None) -> None:
        super().__init__("trunc_gaussian", mean=_plain(mean), sd=_plain(sd), lo=_plain(lo),
                         hi=_plain(hi), d=d)
        self._d_from_lists("mean", "sd", "lo", "hi")


class Mixture(Measure):
    """sum_k w_k N(means_k, diag(sds_k^2)): ``means`` a list of component means, ``sds`` a number
    or one number / list per component, ``weights`` (normalised) default uniform."""

    def __init__(self, means: Any, sds: Any = 1.0,
                 weights: Optional[Sequence[float]] = None) -> None:
        super().__init__("gaussian_mixture", means=_plain(means), sds=_plain(sds),
                         weights=_plain(weights))


class Torus(Measure):
    """The uniform measure on [0, 1)^d (closed form with the ``sobolev`` kernel)."""

    def __init__(self, d: int = 2) -> None:
        super().__init__("torus", d=d)


class Sphere(Measure):
    """The uniform measure on the sphere S^{d-1} (closed form with ``energy`` in d = 3)."""

    def __init__(self, d: int = 3) -> None:
        super().__init__("sphere", d=d)


# ------------------------------------------------------------------------------ result classes
class Coreset:
    """A weighted point set (a coreset or quadrature rule) and how it was made.

    Attributes: ``points`` (n x d float64), ``weights`` (n, sum 1), ``indices`` (n, 0-based row of
    the input, -1 for points that are not input rows), ``mmd`` (the MMD against the target; how
    it was found is ``mmd_method``: ``"exact"``; ``"bounded"``, exact to within ``mmd_bound``
    (the default above 23169 target rows for the gaussian kernel in d <= 2, where the exact
    double sum would cost more than 2^28 kernel evaluations: the fast Gauss transform, in time
    linear in the rows, with an a priori bound on its error, ``metrics["mmd2_bound"]`` on MMD^2);
    ``"estimate"``, from sampled target rows, with standard error ``mmd_se`` (the default above
    23169 target rows otherwise; ``metrics["mmd2_minus_self"]`` is then the
    exact MMD^2 minus the target's double sum; ask for the
    exact value with :func:`mmd` or ``target={"type": "data", "self": "exact"}``); or
    ``"skipped"``, NaN, when ``target.self: skip``),
    ``metrics`` (dict of the algorithm's metrics), ``trace`` (dict of arrays ``iteration``,
    ``n_atoms``, ``mmd``, ``seconds`` for iterative algorithms, else None), ``extras`` (extra
    datasets by path), ``seconds`` (algorithm wall time), ``kernel_evals``, ``task``,
    ``algorithm``, ``kernel`` (with the resolved length scale when known), ``kernel_ls`` (that
    length scale, or None), ``kernel_precondition`` (a Stein kernel's preconditioner in use,
    ``"none"``, ``"diag"`` or ``"matrix"``; None for other kernels), ``debias_untrusted`` (a
    Stein run: True when the input has well-separated groups of modes whose proportions the KSD
    does not resolve, so the coreset's weights between them are not determined by the scores;
    ``metrics["debias_resolution"]`` says by how much; None for other kernels), ``config`` (the
    resolved configuration as YAML text: every key with its default filled in; it runs unchanged
    with ``kdistill run``)."""

    def __init__(self, fields: Dict[str, Any], task: str = "", algorithm: str = "",
                 kernel: str = "", config: Optional[str] = None, n_ranks: int = 1) -> None:
        self.points: np.ndarray = fields["points"]
        self.weights: np.ndarray = fields["weights"]
        self.indices: np.ndarray = fields["indices"]
        self.mmd: float = fields["mmd"]
        self.seconds: float = fields["seconds"]
        self.kernel_evals: int = fields["kernel_evals"]
        self.metrics: Dict[str, Union[int, float]] = fields["metrics"]
        self.trace: Optional[Dict[str, np.ndarray]] = fields["trace"]
        self.extras: Dict[str, Any] = fields["extras"]
        method = int(self.metrics.get("mmd_method", 0))
        self.mmd_method: str = {0: "exact", 1: "estimate", 2: "skipped",
                                3: "bounded"}.get(method, "exact")
        self.mmd_se: float = (0.0 if self.mmd_method in ("exact", "bounded")
                              else float(self.metrics.get("mmd_se", float("nan"))))
        self.mmd_bound: float = (float(self.metrics.get("mmd_bound", float("nan")))
                                 if self.mmd_method == "bounded" else 0.0)
        self.task, self.algorithm, self.kernel = task, algorithm, kernel
        self.config = config
        pre = self.metrics.get("kernel_precondition")
        #: the Stein kernel's length scale and preconditioner in use (None for other kernels)
        self.kernel_ls: Optional[float] = (float(self.metrics["kernel_ls"])
                                           if "kernel_ls" in self.metrics else None)
        self.kernel_precondition: Optional[str] = (None if pre is None else
                                                   ("none", "diag", "matrix")[int(pre)])
        #: a Stein run whose input has well-separated groups of modes whose proportions the KSD
        #: does not resolve (docs/stein.md, "When the answer cannot be trusted"); None otherwise
        u = self.metrics.get("debias_untrusted")
        self.debias_untrusted: Optional[bool] = None if u is None else bool(u)
        self.n_ranks = n_ranks

    def __len__(self) -> int:
        return len(self.weights)

    @_lib.serialised
    def save(self, path: PathLike, *, overwrite: bool = False, comm: Any = None) -> None:
        """Write the coreset to ``path`` in the HDF5 layout ``kdistill run`` writes
        (/coreset/points, weights, indices; /metrics; the trace; extra datasets; the resolved
        configuration), so :func:`load`, ``kdistill info`` and ``kdistill mmd`` read it back.
        The file appears complete or not at all (a temporary renamed into place); parent
        directories are created. An existing file is left alone (:class:`FileError`) unless
        ``overwrite=True``. Collective over ``comm`` (default every process, as the call that
        made it): rank 0 writes."""
        ctx = _lib.process().context(comm)
        fields = {"points": self.points, "weights": self.weights, "indices": self.indices,
                  "mmd": self.mmd, "seconds": self.seconds, "kernel_evals": self.kernel_evals,
                  "metrics": self.metrics, "trace": self.trace, "extras": self.extras}
        res, keep = _lib.result_struct(fields)
        seed = _lib.config_value(self.config, "run.seed")
        try:
            _lib.call(ctx, lib.kd_output_save, ctx, os.fsencode(path), ctypes.byref(res),
                      self.task.encode(), self.algorithm.encode(), self.kernel.encode(),
                      self.n_ranks, seed if type(seed) is int and seed >= 0 else 0,
                      (self.config or "").encode(), int(bool(overwrite)))
        except _errors.FileError as e:
            if overwrite or "left alone" not in str(e):
                raise
            raise _errors.FileError("%s; pass overwrite=True to replace it" % e) from None
        del keep

    def mmd_text(self) -> str:
        """The MMD as it should be read: ``0.0044 (exact)``, ``0.0044 ± 0.00071 (estimate)``,
        ``0.004412 (bounded ± 2.1e-10)`` or,
        when the target's double sum was skipped, ``nan (skipped; exact mmd2_minus_self -0.57)``:
        MMD^2 minus that double sum, which ranks coresets of the same data exactly."""
        if self.mmd_method == "estimate":
            return "%.2g \u00b1 %.2g (estimate)" % (self.mmd, self.mmd_se)
        if self.mmd_method == "bounded":
            return "%.4g (bounded \u00b1 %.2g)" % (self.mmd, self.mmd_bound)
        rel = self.metrics.get("mmd2_minus_self")
        if self.mmd_method == "skipped" and rel is not None:
            return "nan (skipped; exact mmd2_minus_self %.6g)" % rel
        return "%.4g (%s)" % (self.mmd, self.mmd_method)

    def __repr__(self) -> str:
        return "<kdistill.Coreset %s/%s: %d points in d=%d, mmd=%s, %.3f s>" % (
            self.task, self.algorithm, len(self), self.points.shape[1], self.mmd_text(),
            self.seconds)


Rule = Coreset


class TestResult:
    """A two-sample test (Compress Then Test): ``statistic``, ``p_value`` (NaN for ``actt``,
    which decides at level ``alpha`` without one), ``reject`` (the decision at level ``alpha``),
    ``metrics`` (all of the algorithm's metrics), ``seconds``, ``config``."""

    __test__ = False  # not a unittest/pytest test case

    def __init__(self, fields: Dict[str, Any], config: Optional[str] = None,
                 algorithm: str = "ctt") -> None:
        m = fields["metrics"]
        self.statistic: float = m.get("statistic", float("nan"))
        self.p_value: float = m.get("p_value", float("nan"))
        self.reject: bool = bool(m.get("reject", 0.0) > 0.5)
        alpha = _lib.config_value(config, "algorithm.alpha")
        self.alpha: float = m.get("alpha", float(alpha) if type(alpha) in (int, float)
                                  else float("nan"))
        self.metrics: Dict[str, Union[int, float]] = m
        self.seconds: float = fields["seconds"]
        self.extras: Dict[str, Any] = fields["extras"]
        self.algorithm = algorithm
        self.config = config

    def __repr__(self) -> str:
        p = "" if self.p_value != self.p_value else " p=%.4g" % self.p_value  # actt: none
        return "<kdistill.TestResult %s: statistic=%.4g%s %s>" % (
            self.algorithm, self.statistic, p, "reject" if self.reject else "do not reject")


def _make_result(task: str, fields: Dict[str, Any], algorithm: str, kernel: str,
                 config: Optional[str], n_ranks: int) -> Union[Coreset, "TestResult"]:
    if task in ("ctt",):
        return TestResult(fields, config, algorithm)
    return Coreset(fields, task, algorithm, kernel, config, n_ranks)


# -------------------------------------------------------------------------------------- helpers
def _plain(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def _json_default(v: Any) -> Any:
    if isinstance(v, (np.ndarray, np.generic)):
        return _plain(v)
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if isinstance(v, Deep):
        raise TypeError("kernel=Deep(...) is taken by thin(), herd(), ctt() and mmd() only")
    raise TypeError("cannot put a %s into a configuration" % type(v).__name__)


def _kernel(kernel: KernelSpec, ls: LengthScale) -> Dict[str, Any]:
    k: Dict[str, Any] = dict(kernel) if isinstance(kernel, dict) else {"name": kernel}
    if ls is not None and "ls" not in k and _has_ls(k.get("name", "gaussian")):
        k["ls"] = ls
    return k


def _target(target: TargetSpec, arrays: _Arrays, name: str) -> Dict[str, Any]:
    """A target section: a Measure, or an array (the empirical measure of its rows)."""
    if isinstance(target, Measure):
        return dict(target.section)
    if isinstance(target, dict):
        return dict(target)
    arrays.append((name, target, "target"))
    return {"type": "memory", "name": name}


def _config(cfg: Dict[str, Any]) -> Union[_lib.Spec, str]:
    """A configuration dict as typed settings (kd_spec), or as text where some value has no typed
    form (the same configuration either way)."""
    items = _lib.spec_items(_plain_tree(cfg))
    if items is not None:
        return _lib.Spec(items)
    return json.dumps(cfg, indent=1, default=_json_default)


def _plain_tree(v: Any) -> Any:
    """cfg with numpy values and paths made plain Python (what the typed settings take)."""
    if isinstance(v, dict):
        return {k: _plain_tree(x) for k, x in v.items()}
    if isinstance(v, (np.ndarray, np.generic, list, tuple)):
        return _plain(v)
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    return v


def _opts(config_text: Union[None, str, _lib.Spec] = None, config: Optional[PathLike] = None,
          arrays: Sequence[_lib.DataArray] = (), sets: Sequence[str] = (),
          output: Optional[PathLike] = None, resume: Optional[PathLike] = None,
          no_output: bool = True) -> Tuple[_lib.JobOpts, List[Any]]:
    """JobOpts and the objects that must stay alive while it is used. config_text: the
    configuration as text, or as typed settings (_config)."""
    keep: List[Any] = []
    o = _lib.JobOpts()
    if isinstance(config_text, _lib.Spec):
        o.spec = config_text.handle
        keep.append(config_text)
    elif config_text is not None:
        o.config_text = config_text.encode()
        o.config = b"<python>"
    if config is not None:
        o.config = os.fsencode(config)
    if sets:
        enc = [s.encode() for s in sets]
        sets_arr = (ctypes.c_char_p * len(enc))(*enc)
        keep.append(sets_arr)
        o.sets, o.n_sets = sets_arr, _lib.c_size(len(enc), "sets: the number of overrides")
    if output:
        o.output = os.fsencode(output)
    if resume:
        o.resume = os.fsencode(resume)
    o.no_output = 1 if no_output else 0
    if arrays:
        arr = (_lib.DataArray * len(arrays))(*arrays)
        keep.append(arr)
        o.arrays, o.n_arrays = arr, _lib.c_size(len(arrays), "arrays: the number of arrays")
    return o, keep


def _prepare(ctx: ctypes.c_void_p,
             arrays: Sequence[Tuple[str, Any, str]]) -> Tuple[List[_lib.DataArray], List[Any]]:
    """DataArrays for [(name, X, what)]; an error on any rank raises on every rank."""
    das: List[_lib.DataArray] = []
    keep: List[Any] = []
    exc: Optional[Exception] = None
    try:
        for name, X, what in arrays:
            a, Xk = _lib.as_array(name, X, what)
            das.append(a)
            keep.append(Xk)
    except _errors.Error as e:
        exc = e
    except Exception as e:  # e.g. an object numpy cannot convert
        exc = _errors.DataError("%s" % e)
    _lib.agree(ctx, exc)
    return das, keep


def _run_job(cfg: Optional[Dict[str, Any]] = None, path: Optional[PathLike] = None,
             arrays: Sequence[Tuple[str, Any, str]] = (), comm: Any = None,
             progress: Optional[bool] = None, sets: Sequence[str] = (),
             output: Optional[PathLike] = None, resume: Optional[PathLike] = None,
             write: bool = False, want_config: bool = True, checkpoint: Any = False
             ) -> Union[Coreset, "TestResult"]:
    """checkpoint: False (run(): the configuration decides), None (no checkpoint when
    interrupted) or a path (the checkpoint written when interrupted)."""
    if cfg is not None and checkpoint is not False:
        run_sec = cfg.setdefault("run", {})
        run_sec["checkpoint_on_interrupt"] = checkpoint is not None
        if checkpoint is not None:
            run_sec["checkpoint_path"] = os.fspath(checkpoint)
    try:
        return _run_job_(cfg, path, arrays, comm, progress, sets, output, resume, write,
                         want_config)
    except _errors.Interrupted as e:
        # the command line's advice in this call's words
        msg = str(e)
        head, sep, path = msg.rpartition("(resume with --resume ")
        if sep and path.endswith(")"):
            msg = "%s(resume with resume='%s')" % (head, path[:-1])
        msg = msg.replace("(run.checkpoint_on_interrupt: false)",
                          "(pass checkpoint='FILE.h5' to keep one)")
        if msg == str(e):
            raise
        raise _errors.from_code(e.code or 0, msg, e.key, e.known) from None


def _run_job_(cfg: Optional[Dict[str, Any]], path: Optional[PathLike],
              arrays: Sequence[Tuple[str, Any, str]], comm: Any, progress: Optional[bool],
              sets: Sequence[str], output: Optional[PathLike], resume: Optional[PathLike],
              write: bool, want_config: bool) -> Union[Coreset, "TestResult"]:
    ctx = _lib.process().context(comm)
    das, keep = _prepare(ctx, arrays)
    text: Union[None, str, _lib.Spec] = None
    if cfg is not None:
        text = _config(cfg)
    o, keep2 = _opts(text, path, das, sets, output, resume, not write)
    summary, res = _lib.JobSummary(), _lib.Result()
    y = ctypes.c_void_p()
    try:
        # the resolved configuration comes back with the result (no second pass over the config)
        _lib.call(ctx, lib.kd_job_run_resolved, ctx, ctypes.byref(o), ctypes.byref(summary),
                  ctypes.byref(res), ctypes.byref(y) if want_config else None, progress=progress)
        fields = _lib.result_dict(res)
    finally:
        lib.kd_result_free(ctypes.byref(res))
    config = _lib.take_string(y) if want_config else None
    del keep, keep2
    return _make_result(summary.task.decode(), fields, summary.algorithm.decode(),
                        summary.kernel.decode(), config, summary.n_ranks)


# Names users of other libraries reach for, and the keyword kdistill calls them
_ALIASES = {"lengthscale": "ls", "length_scale": "ls", "bandwidth": "ls", "sigma": "ls",
            "random_state": "seed", "rng": "seed", "n": "n_out", "m": "n_out", "size": "n_out",
            "n_points": "n_out", "coreset_size": "n_out", "level": "alpha"}
_F = TypeVar("_F", bound=Callable[..., Any])


def _keywords(fn: _F) -> _F:
    """A keyword the algorithm does not read raises TypeError naming the closest valid one (the
    function's own keywords and the algorithm's keys), as Python does for a misspelled keyword,
    instead of a ConfigError about a configuration line the caller never wrote."""
    own = [p for p in inspect.signature(fn).parameters if p != "params"]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kw: Any) -> Any:
        try:
            return fn(*args, **kw)
        except _errors.ConfigError as e:
            section, _, bad = e.key.partition(".")
            if section != "algorithm" or not e.known or bad not in kw:
                raise
            keys = [k for k in e.known if k != "name"]
            pool = own + [k for k in keys if k not in own]
            guess = _ALIASES.get(bad.lower())
            if guess not in pool:
                close = difflib.get_close_matches(bad, pool, n=1, cutoff=0.6)
                guess = close[0] if close else None
            hint = "; did you mean %r?" % guess if guess else ""
            raise TypeError("%s() got an unexpected keyword argument %r%s (keywords: %s)" % (
                fn.__name__, bad, hint, ", ".join(pool))) from None
    return wrapper  # type: ignore[return-value]


_R = TypeVar("_R", Coreset, "TestResult")


def _expect(cls: Type[_R], r: Union[Coreset, "TestResult"]) -> _R:
    """The result of a task whose result class is known (thin/herd/quad: Coreset; ctt:
    TestResult), typed as such."""
    if not isinstance(r, cls):
        raise _errors.InternalError("expected a %s, got a %s" % (cls.__name__, type(r).__name__))
    return r


# ---------------------------------------------------------------------------- public functions
@_keywords
@_lib.serialised
def thin(X: npt.ArrayLike, n_out: Optional[int] = None, *, algorithm: str = "kt_compress",
         kernel: AnyKernel = "gaussian", ls: LengthScale = None, seed: int = 0,
         target: Optional[TargetSpec] = None, score: Any = None,
         checkpoint: Optional[PathLike] = None, resume: Optional[PathLike] = None,
         comm: Any = None, progress: Optional[bool] = None, **params: Any) -> Coreset:
    """Thin the rows of X to a coreset of ``n_out`` points (None: the algorithm's default;
    ``kh``, a single halving round, has no ``n_out``).

    X: an (n, d) array (float64 or float32, C or Fortran order, used in place; other types are
    converted once). Under MPI each rank passes its own block of rows and the coreset is the
    same as the command line's on the concatenated rows (rank 0's block first).
    algorithm: a ``thin`` algorithm (``kt_compress``, ``kh_compress``, ``kh``, ``rkh``, ``lkh``,
    ``gs_thin``, ``gs_compress``, ``kh_refine``, ``uniform``); its other keys go in ``params``
    (e.g. ``g=4``). kernel: a name or a dict of kernel keys (``{"name": "imq", "beta": 1}``);
    ls: a length scale, ``"median"``, or None: the kernel's default (``"median"``; ``"auto"`` for
    the Stein kernel, chosen from the scores: docs/stein.md). target: None (the empirical
    measure of X) or a closed-form :class:`Measure`. score: Stein thinning against a density known through its score
    grad log p: an (n, d) array (this rank's rows) or a callable S(X) -> (n, d) array (a numpy,
    JAX or PyTorch log-density gradient), evaluated here on this rank's rows before the run; the
    kernel then defaults to the Stein kernel over IMQ (``{"name": "stein", "base": "imq"}``), the
    target to ``{"type": "stein"}``, and ``mmd`` is the KSD (algorithms ``stein_thin``, ``skt``,
    ``lskt``, ``sr``, ``lsr``, ``sc``, ``lsc``, ``rpcholesky``, or any thinning algorithm).
    The debiasing algorithms correct a shifted sample and the proportions of overlapping modes,
    not those of well-separated modes, which the KSD cannot see (the result's
    ``debias_untrusted`` is then True; docs/stein.md, "Which to use").
    checkpoint: a file for the checkpoint an interrupted call (Ctrl-C, SIGTERM) writes; without
    it an interrupted call writes nothing. resume: such a checkpoint, to continue from (the same
    call otherwise; the same keywords in :func:`herd` and :func:`quad`).
    comm: an mpi4py communicator (default: every process of the run).
    progress: overwrite a progress line on stderr (default: when stderr is a terminal); log lines
    go to the ``kdistill`` logger on rank 0. Returns a :class:`Coreset`.
    Raises :class:`ConfigError`, :class:`DataError`, ... with the command line's message."""
    deep = isinstance(kernel, Deep)
    d = input_width(X)
    if isinstance(kernel, Deep):
        if score is not None:
            raise ValueError("thin(): score= (Stein thinning) and kernel=Deep(...) do not combine")
        if target is not None and not isinstance(target, (Measure, dict)):
            target = kernel.embed(target, "target")
        X = kernel.embed(X)
        kernel = kernel.section(d, ls)
    arrays: _Arrays = [("X", X, "data")]
    data: Dict[str, Any] = {"type": "memory", "name": "X"}
    if score is not None:
        S = score(np.asarray(X)) if callable(score) else score
        arrays.append(("S", S, "score"))
        data["score"] = {"type": "memory", "name": "S"}
        if kernel == "gaussian":
            kernel = {"name": "stein", "base": "imq"}
        if target is None:
            target = {"type": "stein"}
    cfg: Dict[str, Any] = {"task": "thin", "data": data, "kernel": _kernel(kernel, ls),
                           "algorithm": dict({"name": algorithm}, **params),
                           "run": {"seed": seed}}
    if n_out is not None:
        cfg["algorithm"]["n_out"] = n_out
    if target is not None:
        cfg["target"] = _target(target, arrays, "T")
    cs = _expect(Coreset, _run_job(cfg, arrays=arrays, comm=comm, progress=progress,
                                 checkpoint=checkpoint, resume=resume))
    return _inputs_only(cs, d) if deep else cs


def _inputs_only(cs: Coreset, d: int) -> Coreset:
    """A coreset of rows (x, phi(x)) as rows x (the Deep kernel's embedding columns dropped)."""
    cs.points = np.ascontiguousarray(cs.points[:, :d])
    return cs


@_keywords
@_lib.serialised
def herd(candidates: npt.ArrayLike, target: TargetSpec, n_atoms: Optional[int] = None, *,
         algorithm: str = "bpcg", kernel: AnyKernel = "gaussian", ls: LengthScale = "median",
         seed: int = 0, checkpoint: Optional[PathLike] = None,
         resume: Optional[PathLike] = None, comm: Any = None, progress: Optional[bool] = None,
         **params: Any) -> Coreset:
    """Kernel herding / Frank-Wolfe: a sparse convex rule over the rows of ``candidates`` whose
    MMD to ``target`` is small.

    target: a closed-form :class:`Measure` (:class:`Gaussian`, :class:`Box`, :class:`Mixture`,
    :class:`Torus`, :class:`Sphere`, :class:`TruncGaussian`) or an array of samples (the
    empirical measure). n_atoms: the largest number of atoms (``algorithm.max_atoms``; None keeps
    the algorithm's default). Other algorithm keys (``max_iter``, ``tol_mmd``, ...) go in
    ``params``. Returns a :class:`Coreset` whose ``trace`` holds MMD against iterations."""
    deep = isinstance(kernel, Deep)
    d = input_width(candidates)
    if isinstance(kernel, Deep):
        if isinstance(target, (Measure, dict)):
            raise ValueError("herd(): kernel=Deep(...) has no closed-form mean embedding; pass "
                             "the target as an array of samples")
        target = kernel.embed(target, "target")
        candidates = kernel.embed(candidates, "candidates")
        kernel = kernel.section(d, ls)
    arrays: _Arrays = [("C", candidates, "candidates")]
    alg: Dict[str, Any] = {"name": algorithm}
    if n_atoms is not None:
        alg["max_atoms"] = n_atoms
    alg.update(params)
    cfg = {"task": "herd", "candidates": {"type": "memory", "name": "C"},
           "target": _target(target, arrays, "T"), "kernel": _kernel(kernel, ls),
           "algorithm": alg, "run": {"seed": seed}}
    cs = _expect(Coreset, _run_job(cfg, arrays=arrays, comm=comm, progress=progress,
                                 checkpoint=checkpoint, resume=resume))
    return _inputs_only(cs, d) if deep else cs


def _ls_list(ls: Sequence[float], alg: Dict[str, Any]) -> float:
    """A list of length scales for actt, into alg; returns the kernel's ls. A geometric
    progression (in any order) becomes actt's grid (n_ls, ls_ratio around the geometric centre,
    which reproduces the list to round-off); any other list of distinct values is passed as
    ``ls_list``, sorted. ``weights`` in alg, given in the order of ls, is put in the same order."""
    v = [float(x) for x in ls]
    if not v or min(v) <= 0.0 or not all(np.isfinite(v)):
        raise ValueError("ls: a list of length scales must hold positive finite numbers")
    order = sorted(range(len(v)), key=lambda i: v[i])
    srt = [v[i] for i in order]
    if any(srt[i + 1] <= srt[i] for i in range(len(srt) - 1)):
        raise ValueError("ls = %r: the length scales must be distinct" % (v,))
    if "weights" in alg:
        w = [float(x) for x in alg["weights"]]
        if len(w) != len(v):
            raise ValueError("weights: %d weights for %d length scales" % (len(w), len(v)))
        alg["weights"] = [w[i] for i in order]
    if len(srt) == 1:
        alg["n_ls"], alg["ls_ratio"] = 1, 2.0
        return srt[0]
    r = srt[1] / srt[0]
    if all(abs(srt[i + 1] / srt[i] - r) <= 1e-9 * r for i in range(len(srt) - 1)):
        alg["n_ls"], alg["ls_ratio"] = len(srt), r
        return float(np.sqrt(srt[0] * srt[-1]))
    alg["ls_list"] = srt
    return srt[len(srt) // 2]


@_keywords
@_lib.serialised
def ctt(X: npt.ArrayLike, Y: npt.ArrayLike, *, g: Optional[int] = None, algorithm: str = "ctt",
        kernel: AnyKernel = "gaussian", ls: Union[LengthScale, Sequence[float]] = "median",
        seed: int = 0, comm: Any = None, progress: Optional[bool] = None,
        **params: Any) -> "TestResult":
    """Compress Then Test: a kernel two-sample test of "X and Y have the same distribution".

    g: the compression oversampling (larger = more power, more time; None: the library's
    default, the one ``kdistill ctt`` and a config without ``g`` use). Other keys of the
    algorithm (``s`` bins, ``B`` permutations, ``alpha`` level, ``delta``) go in ``params``.
    ``ls`` as a list of distinct length scales (``ls=[0.5, 1, 2, 4]``) runs the aggregated
    test ``actt`` over them (a geometric progression as actt's grid, which reproduces it to
    round-off, any other list as ``ls_list``; the values used are
    ``result.extras["/test/ls"]``), with equal weights or ``weights=[...]`` (positive, in the
    order of ``ls``, normalised to sum 1); ``algorithm="actt"`` with one ``ls`` takes ``n_ls``
    scales around it. Returns a :class:`TestResult` (statistic, p_value, reject; actt
    decides at level alpha and its p_value is NaN). ``kernel=Deep(phi, ...)`` tests with the
    deep kernel (one ``ls``, not a list)."""
    if isinstance(kernel, Deep):
        if isinstance(ls, (list, tuple, np.ndarray)):
            raise ValueError("ctt(): kernel=Deep(...) takes one ls, not a list (actt varies the "
                             "length scale of the gaussian family)")
        d = input_width(X)
        X, Y = kernel.embed(X, "X"), kernel.embed(Y, "Y")
        kernel = kernel.section(d, cast(LengthScale, ls))
    arrays: _Arrays = [("X", X, "x"), ("Y", Y, "y")]
    alg: Dict[str, Any] = {"name": algorithm}
    if g is not None:
        alg["g"] = g
    ls1: LengthScale
    alg.update(params)
    if "weights" in alg and not isinstance(alg["weights"], (list, tuple, np.ndarray)):
        raise TypeError("weights: a list of positive numbers, one per length scale")
    if isinstance(ls, (list, tuple, np.ndarray)):
        if algorithm not in ("ctt", "actt"):
            raise ValueError("ls: a list of length scales runs actt, not %s" % algorithm)
        alg["name"] = "actt"
        ls1 = _ls_list(ls, alg)
    else:
        ls1 = ls  # type: ignore[assignment]
        if "weights" in alg:
            alg["weights"] = [float(x) for x in alg["weights"]]
    cfg = {"task": "ctt", "x": {"type": "memory", "name": "X"},
           "y": {"type": "memory", "name": "Y"}, "kernel": _kernel(kernel, ls1),
           "algorithm": alg, "run": {"seed": seed}}
    # a single test writes no checkpoint (interrupted, it reports where it stopped)
    return _expect(TestResult, _run_job(cfg, arrays=arrays, comm=comm, progress=progress))


@_keywords
@_lib.serialised
def quad(target_or_samples: TargetSpec, n: int, *, algorithm: str = "nystrom_recombination",
         kernel: KernelSpec = "gaussian", ls: LengthScale = "median", seed: int = 0,
         candidates: Optional[npt.ArrayLike] = None, checkpoint: Optional[PathLike] = None,
         resume: Optional[PathLike] = None, comm: Any = None,
         progress: Optional[bool] = None, **params: Any) -> Coreset:
    """A convex kernel quadrature rule of ``n`` points for a closed-form :class:`Measure` or for
    the empirical measure of an array of samples.

    algorithm: ``nystrom_recombination``, ``mercer_recombination`` (``opt="convex"`` for the
    "+opt" variants) or ``monte_carlo``; other keys in ``params``. candidates: an optional array
    (the sample pool). Returns a :class:`Coreset` (the rule)."""
    arrays: _Arrays = []
    cfg: Dict[str, Any] = {"task": "quad", "target": _target(target_or_samples, arrays, "T"),
           "kernel": _kernel(kernel, ls),
           "algorithm": dict({"name": algorithm, "n": n}, **params), "run": {"seed": seed}}
    if candidates is not None:
        arrays.append(("C", candidates, "candidates"))
        cfg["candidates"] = {"type": "memory", "name": "C"}
    return _expect(Coreset, _run_job(cfg, arrays=arrays, comm=comm, progress=progress,
                                   checkpoint=checkpoint, resume=resume))


class MMD(float):
    """The value :func:`mmd` returns: a float (the MMD) that says what it is. ``method``:
    ``"exact"``; ``"bounded"``, exact to within ``bound`` (``|value - MMD| <= bound``, a proven a
    priori bound); ``"estimate"``, with standard error ``se``. ``mmd2`` is the computed MMD^2
    (which may be slightly negative when bounded or estimated) and ``mmd2_bound`` /
    ``mmd2_se`` its bound or standard error."""

    _args: Tuple[float, float, int, float, float]
    method: str
    bound: float
    se: float
    mmd2: float
    mmd2_bound: float
    mmd2_se: float

    def __new__(cls, value: float, mmd2: float = float("nan"), method: int = 0,
                err: float = 0.0, err2: float = 0.0) -> "MMD":
        self = super().__new__(cls, value)
        self._args = (float(value), mmd2, method, err, err2)
        self.method = {0: "exact", 1: "estimate", 2: "skipped", 3: "bounded"}.get(method, "exact")
        bounded, estimate = self.method == "bounded", self.method == "estimate"
        self.mmd2 = mmd2
        self.bound, self.mmd2_bound = (err, err2) if bounded else (0.0, 0.0)
        self.se, self.mmd2_se = (err, err2) if estimate else (0.0, 0.0)
        return self

    def __reduce__(self) -> Tuple[Any, ...]:  # pickle and copy keep what the value is
        return (MMD, self._args)

    def text(self) -> str:
        """The value as it should be read: ``0.004412 (exact)``, ``0.004412 (bounded ± 2.1e-10)``
        or ``0.0044 ± 0.00071 (estimate)``."""
        if self.method == "estimate":
            return "%.2g \u00b1 %.2g (estimate)" % (self, self.se)
        if self.method == "bounded":
            return "%.4g (bounded \u00b1 %.2g)" % (self, self.bound)
        return "%.4g (%s)" % (self, self.method)


_MMD_METHODS = ("exact", "fgt", "estimate", "auto")


@_lib.serialised
def mmd(points: Union[npt.ArrayLike, Coreset], weights: Any = None,
        target: Optional[TargetSpec] = None, kernel: AnyKernel = "gaussian", *,
        ls: LengthScale = "median", method: str = "exact", tol: Optional[float] = None,
        seed: int = 0, comm: Any = None, progress: Optional[bool] = None) -> MMD:
    """The MMD between the weighted points (weights None = uniform; normalised to sum 1) and
    ``target`` (a closed-form :class:`Measure`, or an array of samples), with the kernel of
    ``kernel`` / ``ls`` (``"median"``: the median heuristic on the target samples, or on the points
    for a closed-form target). The same points on every rank. Returns an :class:`MMD`, a float
    whose ``method`` says what it is.

    ``mmd(coreset, X)`` takes the points and weights of a :class:`Coreset` (and, unless given, its
    kernel's length scale): the exact value of an ``mmd`` that was estimated. Against a closed-form
    target the value is exact. Against samples, ``method`` chooses how the target's double sum
    is found: ``"exact"`` (the default): all O(n^2) kernel values for n target rows;
    ``"fgt"``: the fast Gauss transform, O(n) at low dimension (gaussian kernel, d <= 5; it pays
    at d <= 2), exact to the a priori bound it returns in ``bound``, which ``tol`` (default
    1e-12, the configuration's ``target.fgt_tol``) sets; ``"estimate"``: from sampled rows, with
    a standard error; ``"auto"``: as a run evaluates its output (exact up to 23169 rows, then
    the fast Gauss transform where it applies, else the estimate). Progress lines go to the
    ``kdistill`` logger (``progress=True``: a progress line on stderr)."""
    if method not in _MMD_METHODS:
        raise ValueError("mmd(): method must be one of %s, got %r"
                         % (", ".join(repr(m) for m in _MMD_METHODS), method))
    if isinstance(points, Coreset) and isinstance(kernel, Deep):
        kernel = resolved(kernel, points.kernel, points.metrics) or kernel  # the run's scales
    if isinstance(points, Coreset):
        cs = points
        if target is None:
            target, weights = weights, cs.weights
        points = cs.points
        kname = cs.kernel.split("(")[0]
        if kname and kname != "gaussian" and kernel == "gaussian":
            raise TypeError("mmd(coreset, X): the coreset was made with the %s kernel; pass "
                            "kernel= (and its keys) to evaluate it" % cs.kernel)
        found = cs.metrics.get("kernel_ls")  # the length scale the run resolved
        if ls == "median" and found is not None:
            ls = float(found)
    if target is None:
        raise TypeError("mmd() needs a target: mmd(points, weights, target) or mmd(coreset, X)")
    if isinstance(kernel, Deep):
        if isinstance(target, (Measure, dict)):
            raise ValueError("mmd(): kernel=Deep(...) has no closed-form mean embedding; pass "
                             "the target as an array of samples")
        d = input_width(points)
        points, target = kernel.embed(points, "points"), kernel.embed(target, "target")
        kernel = kernel.section(d, ls)
    ctx = _lib.process().context(comm)
    exc: Optional[Exception] = None
    P = np.empty((0, 1))
    w = np.empty(0)
    try:
        P, w = _rule_arrays(points, weights)
    except _errors.Error as e:
        exc = e
    _lib.agree(ctx, exc)
    # the points stand for the candidates once (rank 0's block): the median heuristic sees n rows
    # at any rank count, not n per rank
    arrays: _Arrays = [("P", P if lib.kd_ctx_rank(ctx) == 0 else P[:0], "points")]
    if isinstance(target, (Measure, dict)):
        if method != "exact" or tol is not None:
            raise ValueError("mmd(): method= and tol= choose how a sample target's double sum is "
                             "found; against a closed-form target the MMD is exact")
        cfg = {"task": "quad", "target": _target(target, [], "T"),
               "candidates": {"type": "memory", "name": "P"}, "kernel": _kernel(kernel, ls),
               "algorithm": {"name": "monte_carlo"}, "run": {"seed": seed}}
    else:
        arrays.append(("T", target, "target"))
        # target.self of a run (auto) is not exact above 23169 rows: exact unless asked otherwise
        tgt: Dict[str, Any] = {"type": "data", "self": method}
        if tol is not None:
            tgt["fgt_tol"] = tol
        cfg = {"task": "thin", "data": {"type": "memory", "name": "T"}, "target": tgt,
               "kernel": _kernel(kernel, ls), "algorithm": {"name": "uniform"},
               "run": {"seed": seed}}
    return _rule_mmd(ctx, cfg, arrays, P, w, progress)


def _rule_mmd(ctx: ctypes.c_void_p, cfg: Dict[str, Any], arrays: _Arrays, P: np.ndarray,
              w: np.ndarray, progress: Optional[bool]) -> MMD:
    """The MMD of the rule (P, w) against the target of the job cfg (kd_job_mmd_rule_info)."""
    das, keep = _prepare(ctx, arrays)
    o, keep2 = _opts(_config(cfg), None, das)
    m, m2, e, e2 = ctypes.c_double(), ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    how = ctypes.c_int()
    _lib.call(ctx, lib.kd_job_mmd_rule_info, ctx, ctypes.byref(o),
              P.ctypes.data_as(_lib._PD), w.ctypes.data_as(_lib._PD), len(P),
              _lib.c_size(P.shape[1], "points: the column count"),
              ctypes.byref(m), ctypes.byref(m2), ctypes.byref(how), ctypes.byref(e),
              ctypes.byref(e2), progress=progress)
    del keep, keep2
    return MMD(m.value, m2.value, how.value, e.value, e2.value)


def _rule_arrays(points: Any, weights: Any) -> Tuple[np.ndarray, np.ndarray]:
    """points as a C-order float64 (n, d) array and weights normalised to sum 1 (None: uniform;
    signed weights, as sc and lsc give, are taken as they are); DataError naming ``weights`` when
    one is NaN or infinite, when their sum is not positive, or when they cannot be normalised."""
    P = np.asarray(points, dtype=np.float64)
    if P.ndim == 1:
        P = P.reshape(-1, 1)
    if P.ndim != 2 or len(P) == 0:
        raise _errors.DataError("points: expected a non-empty (n, d) array, got shape %s"
                                % (P.shape,))
    _lib.c_size(P.shape[1], "points: the column count")  # before the copy below
    P = np.ascontiguousarray(P)
    w = (np.full(len(P), 1.0 / len(P)) if weights is None
         else np.ascontiguousarray(np.asarray(weights, dtype=np.float64)).ravel())
    if w.shape != (len(P),):
        raise _errors.DataError("weights: expected %d weights, got %d" % (len(P), w.size))
    bad = np.flatnonzero(~np.isfinite(w))
    if bad.size:
        raise _errors.DataError("weights: weight %d is %r (weights must be finite numbers)"
                                % (bad[0] + 1, float(w[bad[0]])))
    # scaled by the largest |w| first: a sum of large weights (1e308) must not overflow to inf
    # and turn every weight into 0
    top = float(np.max(np.abs(w)))
    ws = w / top if top > 0 else w
    total = float(ws.sum())
    if not total > 0:
        raise _errors.DataError("weights: must have a positive sum (got %.17g)" % (total * top))
    # signed weights that cancel: a sum within its own rounding error of 0 is no sum
    if total <= len(ws) * np.finfo(np.float64).eps * float(np.abs(ws).sum()):
        raise _errors.DataError("weights: must have a positive sum (got %.3g, which is 0 to "
                                "rounding against weights up to %.3g in size)"
                                % (total * top, top))
    return P, ws / total


@_keywords
@_lib.serialised
def ksd(points: Union[npt.ArrayLike, Coreset], weights: Any = None, score: Any = None, *,
        kernel: KernelSpec = "imq", ls: LengthScale = "median", comm: Any = None,
        progress: Optional[bool] = None) -> float:
    """The kernel Stein discrepancy of the weighted points (weights None = uniform; normalised
    to sum 1; or a :class:`Coreset`'s points and weights) against the density p whose score
    grad log p is ``score``: an (n, d) array (its value at each point) or a callable S(points)
    -> (n, d) array. Exact: sqrt(w^T K_p w) over all n^2 pairs with the Stein kernel K_p of the
    base kernel ``kernel`` (a name, ``"imq"`` by default; or a full Stein kernel dict such as
    ``{"name": "stein", "base": "imq", "beta": 0.5}``) and length scale ``ls`` (``"median"``:
    the median heuristic on the points); a base kernel's name gives K_p without a
    preconditioner (``precondition: none``), whatever a compression run would choose. The same points on every rank. Returns a float, the
    value ``thin(..., score=...)`` reports as ``mmd``.

    ``ksd(coreset, score=...)`` of a Stein run's :class:`Coreset` evaluates it with the kernel the
    run used: its base, ``beta`` and resolved length scale (the run's median heuristic over all of
    its data, not one over the coreset), so it returns the run's ``mmd``; ``kernel=`` or a
    number for ``ls`` replace them. A run preconditioned by its data's covariance
    (``precondition: diag|matrix``, or ``auto`` where it chose one) raises
    :class:`UnsupportedError` unless ``kernel=`` is given: the coreset does not hold that matrix."""
    if isinstance(points, Coreset):
        cs = points
        if weights is None:
            weights = cs.weights
        points = cs.points
        run_kernel = _lib.config_section(cs.config, "kernel")
        if run_kernel.get("name") == "stein" and kernel == "imq":
            if run_kernel.get("precondition") == "auto" and cs.kernel_precondition == "none":
                run_kernel = dict(run_kernel, precondition="none")  # auto chose none
            if run_kernel.get("precondition", "none") != "none":
                raise _errors.UnsupportedError(
                    "ksd(coreset): the run preconditioned the Stein kernel by the sample "
                    "covariance of its data (kernel.precondition: %s), which the coreset does "
                    "not hold; its KSD is coreset.mmd (pass kernel= to evaluate another kernel)"
                    % run_kernel["precondition"])
            kernel = run_kernel
            if ls != "median":
                kernel = dict(kernel, ls=ls)
    if score is None:
        raise TypeError("ksd() needs score=: an (n, d) array or a callable S(points)")
    ctx = _lib.process().context(comm)
    exc: Optional[Exception] = None
    P, w, S = np.empty((0, 1)), np.empty(0), np.empty((0, 1))
    try:
        P, w = _rule_arrays(points, weights)
        S = np.asarray(score(P) if callable(score) else score, dtype=np.float64)
        if S.ndim == 1:
            S = S.reshape(-1, 1)
        if S.shape != P.shape:
            raise _errors.DataError("score: expected shape %s (one gradient per point), got %s"
                                    % (P.shape, S.shape))
        S = np.ascontiguousarray(S)
    except _errors.Error as e:
        exc = e
    _lib.agree(ctx, exc)
    # a base kernel's name: the plain Stein kernel of that base (no preconditioner: the
    # documented K_p, not the data-chosen one of a compression run's default)
    kern = (dict(kernel) if isinstance(kernel, dict) and kernel.get("name") == "stein"
            else {"name": "stein", "base": kernel, "precondition": "none"})
    # the points stand for the data once (rank 0's block): the median heuristic and the input
    # checks see n rows at any rank count
    own = lib.kd_ctx_rank(ctx) == 0
    arrays: _Arrays = [("P", P if own else P[:0], "points"), ("S", S if own else S[:0], "score")]
    cfg = {"task": "thin", "data": {"type": "memory", "name": "P",
                                    "score": {"type": "memory", "name": "S"}},
           "target": {"type": "stein"}, "kernel": _kernel(kern, ls),
           "algorithm": {"name": "uniform"}}
    # the Stein kernel's points carry their score
    return float(_rule_mmd(ctx, cfg, arrays, np.ascontiguousarray(np.hstack([P, S])), w,
                           progress))


@_lib.serialised
def run(config: Union[Dict[str, Any], PathLike], *, arrays: Optional[Dict[str, Any]] = None,
        sets: Sequence[str] = (), output: Optional[PathLike] = None, write: bool = True,
        resume: Optional[PathLike] = None, comm: Any = None,
        progress: Optional[bool] = None) -> Union[Coreset, "TestResult"]:
    """Run any task the command line can, with the same validation and messages.

    config: a dict (the YAML structure) or the path of a YAML file. arrays: {name: array} for
    point-set sections ``{type: memory, name: ...}``. sets: ``"key.path=value"`` overrides, as
    ``--set``; output: as ``--output``; write: False = do not write the output file; resume: a
    checkpoint, as ``--resume``. Returns a :class:`Coreset` or :class:`TestResult`."""
    arr = [(k, v, "memory array %s" % k) for k, v in (arrays or {}).items()]
    if isinstance(config, dict):
        return _run_job(config, arrays=arr, comm=comm, progress=progress, sets=tuple(sets),
                        output=output, resume=resume, write=write)
    return _run_job(None, path=os.fspath(config), arrays=arr, comm=comm, progress=progress,
                    sets=tuple(sets), output=output, resume=resume, write=write)


_EXT_TYPES = {".csv": "csv", ".txt": "csv", ".tsv": "csv", ".npy": "npy", ".npz": "npz",
              ".h5": "hdf5", ".hdf5": "hdf5", ".he5": "hdf5"}


@_lib.serialised
def read_points(source: Union[PathLike, Dict[str, Any]], *, comm: Any = None,
                **keys: Any) -> np.ndarray:
    """Every row of a point set, read by the library's own readers (the ones ``kdistill run``
    uses for ``data:``): ``source`` is a file path (its type from the extension: .csv/.txt/.tsv,
    .npy, .npz, .h5/.hdf5) with the section's other keys in ``keys`` (``dataset="/x"``,
    ``columns=["a", "b"]``, ``delimiter="semicolon"``, ``header=True``, ...), or a whole section
    as a dict (``{"type": "gaussian", "n": 100, "d": 2}``). Returns an (n, d) float64 array, the
    same on every rank of ``comm``. Raises the command line's errors (``FileError`` naming the
    file, ``ConfigError`` naming ``data.KEY``, ``DataError`` naming a NaN row)."""
    if isinstance(source, dict):
        sec = dict(source, **keys)
    else:
        path = os.fspath(source)
        ext = os.path.splitext(path)[1].lower()
        if ext not in _EXT_TYPES and "type" not in keys:
            raise ValueError("read_points(%r): cannot tell the file type from its extension; pass "
                             "type= (csv, npy, npz or hdf5)" % path)
        sec = dict({"type": _EXT_TYPES.get(ext), "path": path}, **keys)
    ctx = _lib.process().context(comm)
    rows = _lib._PD()
    n, d = ctypes.c_int64(), ctypes.c_int()
    text = json.dumps(sec, default=_json_default)
    _lib.call(ctx, lib.kd_data_read, ctx, text.encode(), ctypes.byref(rows), ctypes.byref(n),
              ctypes.byref(d))
    try:
        out = _lib._copy(rows, int(n.value) * int(d.value), np.float64)
    finally:
        lib.kd_free(ctypes.cast(rows, ctypes.c_void_p))
    return out.reshape(int(n.value), int(d.value))


@_lib.serialised
def load(path: PathLike) -> Union[Coreset, "TestResult"]:
    """Read an output file of ``kdistill run`` (or of :func:`run`) into the result object the
    call would have returned (:class:`Coreset` or :class:`TestResult`). Local: any rank may call
    it alone once MPI is initialised (under mpirun, initialising MPI is collective: import mpi4py
    first, or make the first kdistill call on every rank). Raises :class:`FileError` naming the
    file."""
    ctx = _lib.process().context("self")
    res = _lib.Result()
    y, t, a, k = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    nr = ctypes.c_int(1)
    prev = lib.kd_ctx_bind(ctx)
    lib.kd_ctx_clear_error(ctx)
    try:
        err = lib.kd_output_read(os.fsencode(path), ctypes.byref(res), ctypes.byref(y),
                                 ctypes.byref(t), ctypes.byref(a))
        if not err:  # the kernel (mmd(load(path), X) takes its length scale) and the rank count
            err = lib.kd_output_read_meta(os.fsencode(path), ctypes.byref(k), ctypes.byref(nr))
        if err:
            for s in (y, t, a, k):
                _lib.take_string(s)
            raise _lib.error(ctx, err)
        fields = _lib.result_dict(res)
    finally:
        lib.kd_ctx_unbind(prev)
        lib.kd_result_free(ctypes.byref(res))
    config, task, algo = _lib.take_string(y), _lib.take_string(t), _lib.take_string(a)
    kernel = _lib.take_string(k) or ""
    return _make_result(task or "", fields, algo or "", kernel, config, max(nr.value, 1))
