"""kdistill: compress a probability distribution into a small weighted point set with tiny kernel
MMD, in-process on numpy arrays, on one process or on every rank of an MPI run.

    import numpy as np, kdistill
    X = np.random.default_rng(0).normal(size=(2**14, 2))
    cs = kdistill.thin(X, 128)                       # kernel thinning (KT-Compress++)
    cs.points, cs.weights, cs.indices, cs.mmd
    rule = kdistill.herd(X, kdistill.Gaussian([0, 0], 1), n_atoms=40)
    test = kdistill.ctt(X, X + 0.1)                  # Compress Then Test: test.p_value, test.reject
    q = kdistill.quad(kdistill.Gaussian(0, 1, d=2), 32)
    kdistill.mmd(q.points, q.weights, kdistill.Gaussian(0, 1, d=2), ls=1.0)
    kdistill.load("out/quickstart.h5")               # any output file of `kdistill run`
    kdistill.run("configs/quickstart.yaml", write=False)

Under ``mpirun -np P python3 script.py`` every function is collective over ``comm`` (an mpi4py
communicator; default every process) and each rank passes its own block of rows. Errors raise
:class:`Error` subclasses on every rank with the command line's one-line message; Ctrl-C raises
:class:`Interrupted`. Log lines go to the ``logging`` logger ``"kdistill"`` (rank 0).
See docs/python.md.
"""

try:
    import numpy as _numpy  # noqa: F401  (every function takes and returns numpy arrays)
except ImportError:
    raise ImportError("kdistill needs numpy, which this Python (%s) does not have: on Debian 12 "
                      "use /usr/bin/python3 with python3-numpy, or a venv made with "
                      "`python3 -m venv --system-site-packages`, or `pip install numpy`"
                      % __import__("sys").executable) from None

from ._errors import (ArgumentError, ConfigError, DataError, Error, FileError, HDF5Error,
                      Interrupted, InternalError, IOFailure, LinAlgError, MPIError, NumericError,
                      OutOfMemory, UnsupportedError)
from ._deep import Deep
from ._api import (MMD, Box, Coreset, Gaussian, Measure, Mixture, Rule, Sphere, TestResult, Torus,
                   TruncGaussian, ctt, herd, ksd, load, mmd, quad, read_points, run, thin)
from ._lib import build_info
from ._plot import plot

__version__ = "0.1.0"

__all__ = ["build_info", "plot", "thin", "herd", "ctt", "quad", "mmd", "ksd", "run", "load", "read_points", "Coreset",
           "Rule", "TestResult", "MMD", "Deep", "Measure", "Gaussian", "Box", "TruncGaussian", "Mixture", "Torus",
           "Sphere", "Error", "ConfigError", "DataError", "ArgumentError", "FileError",
           "UnsupportedError", "NumericError", "Interrupted", "OutOfMemory", "IOFailure",
           "MPIError", "HDF5Error", "LinAlgError", "InternalError"]
