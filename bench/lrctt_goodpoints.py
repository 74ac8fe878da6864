"""bench/lrctt_goodpoints.py GOODPOINTS_DIR [NULL_TRIALS POWER_TRIALS] - kdistill's lrctt against
goodpoints' ctt.lrctt on the same arrays, in one process, alternating test by test.

Setting: X ~ N(0, I_2), Y ~ N((shift, 0), I_2), m = n = 4096, Gaussian kernel
exp(-|x-y|^2 / (2 ls^2)) with ls = 1 (goodpoints: lam = sqrt(2) ls), r = 256 features, g = 1,
32 permutation bins (kdistill s = 32, goodpoints s = 16: it makes min(2 s, m + n) bins), B = 100
permutations (goodpoints: use_permutations=True, the null kdistill uses), alpha = 0.05,
delta = 0.5. Trial t draws its data from numpy seed 1000 + t and gives both tests their seeds from
t. Prints the null rejection rate of each over NULL_TRIALS (default 400) with a two-sided
binomial test against alpha, the power at a 0.06 shift over POWER_TRIALS (default 200), and the
median wall time per test of each (one process, one core, in-process calls).
GOODPOINTS_DIR is a folder with goodpoints built in place (setup.py build_ext --inplace).
Under mpirun with P > 1 ranks it times kdistill's lrctt on the P ranks (each rank passes its
block of the same arrays; comm=MPI.COMM_WORLD) over 50 null trials, and goodpoints' on rank 0
alone in the same run after each (the other ranks wait), and prints both medians and the ratio."""
import math
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, sys.argv[1])
from goodpoints import ctt as gpctt  # noqa: E402

import kdistill  # noqa: E402
from gp_common import report, time_ranks  # noqa: E402

M = 4096
R, G, B, LS = 256, 1, 100, 1.0


def trials(n_trials, shift):
    rej = [0, 0]
    times = [[], []]
    for t in range(n_trials):
        rng = np.random.default_rng(1000 + t)
        X = rng.normal(size=(M, 2))
        Y = rng.normal(size=(M, 2))
        Y[:, 0] += shift
        t0 = time.perf_counter()
        kd = kdistill.ctt(X, Y, algorithm="lrctt", r=R, g=G, s=32, B=B, ls=LS, seed=t)
        times[0].append(time.perf_counter() - t0)
        rej[0] += kd.reject
        t0 = time.perf_counter()
        gp = gpctt.lrctt(X, Y, G, R, B=B, s=16, lam=math.sqrt(2.0) * LS, use_permutations=True,
                         null_seed=t, statistic_seed=10 ** 6 + t, alpha=0.05, delta=0.5)
        times[1].append(time.perf_counter() - t0)
        # goodpoints returns a rejection probability (its randomised threshold): one draw
        rej[1] += bool(np.random.default_rng(2000 + t).uniform() < gp.rejects)
    return rej, [statistics.median(x) for x in times]


if "OMPI_COMM_WORLD_SIZE" in __import__("os").environ and \
        int(__import__("os").environ["OMPI_COMM_WORLD_SIZE"]) > 1:
    time_ranks("lrctt", M, lambda X, Y, t, comm: kdistill.ctt(
        X, Y, algorithm="lrctt", r=R, g=G, s=32, B=B, ls=LS, seed=t, comm=comm),
        gp=lambda X, Y, t: gpctt.lrctt(X, Y, G, R, B=B, s=16, lam=math.sqrt(2.0) * LS,
                                       use_permutations=True, null_seed=t,
                                       statistic_seed=10 ** 6 + t, alpha=0.05, delta=0.5))
    sys.exit(0)
n_null = int(sys.argv[2]) if len(sys.argv) > 2 else 400
n_pow = int(sys.argv[3]) if len(sys.argv) > 3 else 200
rej, med = trials(n_null, 0.0)
report("null", ("kdistill lrctt", "goodpoints lrctt"), rej, med, n_null, True)
rej, med = trials(n_pow, 0.06)
report("power", ("kdistill lrctt", "goodpoints lrctt"), rej, med, n_pow, False)
