"""bench/actt_goodpoints.py GOODPOINTS_DIR [NULL_TRIALS POWER_TRIALS [COMPRESSION]] - kdistill's
actt against
goodpoints' ctt.actt on the same arrays, in one process, alternating test by test.

Setting: X ~ N(0, I_2), Y ~ N((shift, 0), I_2), m = n = 4096; the Gaussian kernel
exp(-|x-y|^2 / (2 ls^2)) at the five length scales ls = 0.25, 0.5, 1, 2, 4 (goodpoints:
lam = sqrt(2) ls) with equal weights; g = 1; 32 bins (kdistill s = 32, goodpoints s = 16: it
makes min(2 s, m + n) bins); B = 299, B2 = 200, B3 = 20 (goodpoints' defaults, on both sides);
alpha = 0.05; delta = 0.5. goodpoints compresses once with the sum of the five kernels (its
default, same_compression=True); kdistill compresses as COMPRESSION says (algorithm.compression:
each, once per length scale, the default; middle, once with the middle one's kernel). Trial t draws its data
from numpy seed 1000 + t and gives both tests their seeds from t. Prints the null rejection rate
of each over NULL_TRIALS (default 400) with a two-sided binomial test against alpha, the power at
a 0.06 shift over POWER_TRIALS (default 200), and the median wall time per test of each (one
process, one core, in-process calls). goodpoints' actt prints its bisection steps; they are
discarded. GOODPOINTS_DIR is a folder with goodpoints built in place (setup.py build_ext
--inplace). Under mpirun with P > 1 ranks it times kdistill's actt on the P ranks (each rank
passes its block of the same arrays; comm=MPI.COMM_WORLD) over 50 null trials, and goodpoints'
on rank 0 alone in the same run after each (the other ranks wait), and prints both medians and
the ratio."""
import contextlib
import io
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, sys.argv[1])
from goodpoints import ctt as gpctt  # noqa: E402

import kdistill  # noqa: E402
from gp_common import report, time_ranks  # noqa: E402

M, G = 4096, 1
LS = [0.25, 0.5, 1.0, 2.0, 4.0]
KD = dict(algorithm="actt", g=G, s=32, B=299, B2=200, B3=20, ls=LS,
          compression=sys.argv[4] if len(sys.argv) > 4 else "each")


def trials(n_trials, shift):
    rej = [0, 0]
    times = [[], []]
    lam = np.sqrt(2.0) * np.array(LS)
    w = np.full(len(LS), 1.0 / len(LS))
    for t in range(n_trials):
        rng = np.random.default_rng(1000 + t)
        X = rng.normal(size=(M, 2))
        Y = rng.normal(size=(M, 2))
        Y[:, 0] += shift
        t0 = time.perf_counter()
        kd = kdistill.ctt(X, Y, seed=t, **KD)
        times[0].append(time.perf_counter() - t0)
        rej[0] += kd.reject
        with contextlib.redirect_stdout(io.StringIO()):
            t0 = time.perf_counter()
            gp = gpctt.actt(X, Y, G, B=299, B_2=200, B_3=20, s=16, lam=lam, weights=w,
                            null_seed=t, statistic_seed=10 ** 6 + t, alpha=0.05)
            times[1].append(time.perf_counter() - t0)
        rej[1] += int(gp.rejects)
    return rej, [statistics.median(x) for x in times]


if int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1")) > 1:
    lam_gp = np.sqrt(2.0) * np.array(LS)
    w_gp = np.full(len(LS), 1.0 / len(LS))

    def gp_run(X, Y, t):
        with contextlib.redirect_stdout(io.StringIO()):
            gpctt.actt(X, Y, G, B=299, B_2=200, B_3=20, s=16, lam=lam_gp, weights=w_gp,
                       null_seed=t, statistic_seed=10 ** 6 + t, alpha=0.05)

    time_ranks("actt", M, lambda X, Y, t, comm: kdistill.ctt(X, Y, seed=t, comm=comm, **KD),
               gp=gp_run)
    sys.exit(0)
n_null = int(sys.argv[2]) if len(sys.argv) > 2 else 400
n_pow = int(sys.argv[3]) if len(sys.argv) > 3 else 200
names = ("kdistill actt/" + KD["compression"], "goodpoints actt")
rej, med = trials(n_null, 0.0)
report("null", names, rej, med, n_null, True)
rej, med = trials(n_pow, 0.06)
report("power", names, rej, med, n_pow, False)
