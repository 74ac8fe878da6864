"""bench/ctt_goodpoints.py GOODPOINTS_DIR [TRIALS] - kdistill's ctt against goodpoints' ctt.ctt at
the reference setting, in one process, alternating test by test on the same arrays.

Setting (bench/results/ctt.md, "The Python/Cython reference setting"): X ~ N(0, I_2),
Y ~ N((0.05, 0), I_2), m = n = 2^14; the Gaussian kernel exp(-|x-y|^2 / 8) (kdistill ls = 2,
goodpoints lam = sqrt(8)); g = 1; 32 bins (kdistill s = 32, goodpoints s = 16: it makes
min(2 s, m + n) bins); B = 39; alpha = 0.05; delta = 0.5. Trial t draws its data from numpy seed
1000 + t and gives both tests their seeds from t. goodpoints returns a rejection probability;
one seeded uniform draw turns it into a decision. Prints both rejection counts over TRIALS
(default 50) and the median wall time per test of each, both on one core.

Under mpirun with P > 1 ranks, kdistill's ctt runs on all P ranks (each passes its block of the
same arrays; comm=MPI.COMM_WORLD) and goodpoints' on rank 0 alone while the other ranks wait at a
barrier, alternating trial by trial in the same run (gp_common.time_ranks); kdistill's time is
the slowest rank's. GOODPOINTS_DIR is a folder with goodpoints built in place (setup.py
build_ext --inplace)."""
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, sys.argv[1])
from goodpoints import ctt as gpctt  # noqa: E402

import kdistill  # noqa: E402
from gp_common import time_ranks  # noqa: E402

M, G, B, SHIFT = 16384, 1, 39, 0.05


def kd_run(X, Y, t, comm=None):
    return kdistill.ctt(X, Y, seed=t, g=G, s=32, B=B, ls=2.0, comm=comm)


def gp_run(X, Y, t):
    return gpctt.ctt(X, Y, G, B=B, s=16, lam=np.sqrt(8.0), null_seed=t,
                     statistic_seed=10 ** 6 + t, alpha=0.05)


def main():
    n_trials = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    if int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1")) > 1:
        time_ranks("ctt", M, kd_run, gp=gp_run, trials=n_trials, shift=SHIFT)
        return
    rej, times = [0, 0], [[], []]
    for t in range(n_trials):
        rng = np.random.default_rng(1000 + t)
        X, Y = rng.normal(size=(M, 2)), rng.normal(size=(M, 2))
        Y[:, 0] += SHIFT
        t0 = time.perf_counter()
        rej[0] += kd_run(X, Y, t).reject
        times[0].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        gp = gp_run(X, Y, t)
        times[1].append(time.perf_counter() - t0)
        rej[1] += int(np.random.default_rng(2 * 10 ** 6 + t).uniform() < gp.rejects)
    med = [statistics.median(x) for x in times]
    print("ctt m = n = %d, d = 2, g = %d, B = %d, shift %.2f, %d trials, one core"
          % (M, G, B, SHIFT, n_trials))
    print("rejections: kdistill %d / %d, goodpoints %d / %d" % (rej[0], n_trials, rej[1], n_trials))
    print("time  kdistill %.4f s, goodpoints %.4f s per test (medians), ratio %.1fx"
          % (med[0], med[1], med[1] / med[0]), flush=True)


main()
