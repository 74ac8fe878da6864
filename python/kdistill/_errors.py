"""Exceptions: one class per error code of the C library (include/kdistill/kd_err.h), carrying
the one-line message the command line prints after ``kdistill: error:``.

Each class names its C code (``c_name``); its number and exit status are taken from the loaded
library (:func:`bind`, at import), which also checks that every C code has exactly one class, so
the two cannot drift apart."""

from typing import Any, Dict, Optional, Tuple, Type


class Error(Exception):
    """Base class of every kdistill error. ``code`` is the C error code, ``exit_status`` the status
    the command line would exit with (1 bad input, 2 environment, 3 interrupted). ``key`` is the
    configuration key the error is about, as the library recorded it (``"algorithm.n_out"``;
    ``""`` when it names none); ``known``, for an unknown key, the keys of its section that the
    configuration used."""

    c_name: Optional[str] = None
    code: Optional[int] = None  # set by bind() from the library's table
    exit_status: Optional[int] = None
    key: str = ""
    known: Tuple[str, ...] = ()


class ConfigError(Error, ValueError):
    """Invalid configuration: unknown key, wrong type, value out of range (names the key)."""
    c_name = "KD_ERR_CONFIG"


class DataError(Error, ValueError):
    """Invalid input data: NaN/Inf row (names the 1-based row), empty set, dimension mismatch."""
    c_name = "KD_ERR_INPUT"


class ArgumentError(Error, ValueError):
    """Invalid argument of a call."""
    c_name = "KD_ERR_ARG"


class FileError(Error, OSError):
    """An input file cannot be read (names the file)."""
    c_name = "KD_ERR_FILE"


class UnsupportedError(Error, ValueError):
    """An unsupported combination (e.g. a kernel without a closed form for that target)."""
    c_name = "KD_ERR_UNSUPPORTED"


class NumericError(Error, ArithmeticError):
    """A numerical failure."""
    c_name = "KD_ERR_NUMERIC"


class Interrupted(Error, KeyboardInterrupt):
    """The call was interrupted (Ctrl-C, or SIGTERM/SIGUSR1 for the command line). Also a
    KeyboardInterrupt, so code that stops on Ctrl-C stops on it too."""
    c_name = "KD_ERR_INTERRUPTED"


class OutOfMemory(Error, MemoryError):
    """Out of memory."""
    c_name = "KD_ERR_MEM"


class IOFailure(Error, OSError):
    """An I/O error (e.g. the output directory is not writable)."""
    c_name = "KD_ERR_IO"


class MPIError(Error):
    """An MPI failure."""
    c_name = "KD_ERR_MPI"


class HDF5Error(Error):
    """An HDF5 failure."""
    c_name = "KD_ERR_H5"


class LinAlgError(Error, ArithmeticError):
    """A linear-algebra (LAPACK/ScaLAPACK) failure."""
    c_name = "KD_ERR_LA"


class InternalError(Error):
    """A bug in kdistill."""
    c_name = "KD_ERR_INTERNAL"


_CLASSES: Tuple[Type[Error], ...] = (
    ConfigError, DataError, ArgumentError, FileError, UnsupportedError, NumericError, Interrupted,
    OutOfMemory, IOFailure, MPIError, HDF5Error, LinAlgError, InternalError)
_BY_CODE: Dict[int, Type[Error]] = {}  # filled by bind()


def bind(lib: Any) -> None:
    """Take each class's code and exit status from the library's table (kd_err_name,
    kd_err_exit_status); ImportError when a C code has no class or a class names no C code."""
    by_name = {str(c.c_name): c for c in _CLASSES}
    seen: set = set()
    code = 1  # 0 is KD_OK
    while True:
        name = lib.kd_err_name(code)
        if name is None:
            break
        name = name.decode()
        cls = by_name.get(name)
        if cls is None:
            raise ImportError("kdistill: the C library has error code %s (%d) that this package "
                              "does not know; install the package and the library from one build"
                              % (name, code))
        cls.code, cls.exit_status = code, lib.kd_err_exit_status(code)
        seen.add(name)
        code += 1
    missing = sorted(set(by_name) - seen)
    if missing:
        raise ImportError("kdistill: error classes for codes the C library does not have: %s"
                          % ", ".join(missing))
    _BY_CODE.clear()
    _BY_CODE.update({c.code: c for c in _CLASSES if c.code is not None})


def from_code(code: int, message: str, key: str = "", known: Tuple[str, ...] = ()) -> Error:
    """The exception instance for a C error code, with the key it is about."""
    e = _BY_CODE.get(int(code), InternalError)(message)
    e.key, e.known = key, tuple(known)
    return e
