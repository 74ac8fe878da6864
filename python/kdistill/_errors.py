"""Exceptions: one class per error code of the C library (include/kdistill/kd_err.h), carrying
the one-line message the command line prints after ``kdistill: error:``."""

KD_ERR_ARG = 3
KD_ERR_INTERNAL = 13


class Error(Exception):
    """Base class of every kdistill error. ``code`` is the C error code, ``exit_status`` the status
    the command line would exit with (1 bad input, 2 environment, 3 interrupted)."""

    code = KD_ERR_INTERNAL
    exit_status = 2


class ConfigError(Error, ValueError):
    """Invalid configuration: unknown key, wrong type, value out of range (names the key)."""
    code, exit_status = 1, 1


class DataError(Error, ValueError):
    """Invalid input data: NaN/Inf row (names the 1-based row), empty set, dimension mismatch."""
    code, exit_status = 2, 1


class ArgumentError(Error, ValueError):
    """Invalid argument of a call."""
    code, exit_status = 3, 1


class FileError(Error, OSError):
    """An input file cannot be read (names the file)."""
    code, exit_status = 4, 1


class UnsupportedError(Error, ValueError):
    """An unsupported combination (e.g. a kernel without a closed form for that target)."""
    code, exit_status = 5, 1


class NumericError(Error, ArithmeticError):
    """A numerical failure."""
    code, exit_status = 6, 1


class Interrupted(Error):
    """The call was interrupted (Ctrl-C, or SIGTERM/SIGUSR1 for the command line); iterative
    algorithms wrote a checkpoint first (the message names it)."""
    code, exit_status = 7, 3


class OutOfMemory(Error, MemoryError):
    """Out of memory."""
    code, exit_status = 8, 2


class IOFailure(Error, OSError):
    """An I/O error (e.g. the output directory is not writable)."""
    code, exit_status = 9, 2


class MPIError(Error):
    """An MPI failure."""
    code, exit_status = 10, 2


class HDF5Error(Error):
    """An HDF5 failure."""
    code, exit_status = 11, 2


class LinAlgError(Error, ArithmeticError):
    """A linear-algebra (LAPACK/ScaLAPACK) failure."""
    code, exit_status = 12, 2


class InternalError(Error):
    """A bug in kdistill."""
    code, exit_status = 13, 2


_BY_CODE = {c.code: c for c in (ConfigError, DataError, ArgumentError, FileError,
                                UnsupportedError, NumericError, Interrupted, OutOfMemory,
                                IOFailure, MPIError, HDF5Error, LinAlgError, InternalError)}


def from_code(code, message):
    """The exception instance for a C error code."""
    return _BY_CODE.get(int(code), InternalError)(message)
