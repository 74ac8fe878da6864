"""bench/gp_common.py - pieces shared by the side-by-side scripts against goodpoints
(lrctt_goodpoints.py, actt_goodpoints.py): the exact two-sided binomial test of a rejection
count against alpha, the report lines, and the timing of kdistill alone on several ranks."""
import math
import statistics
import time

import numpy as np


def binom_two_sided(k, n, p):
    """P(|K - n p| >= |k - n p|) for K ~ Binomial(n, p), by summing the pmf."""
    pmf = [math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(n + 1)]
    dev = abs(k - n * p)
    return min(1.0, sum(q for i, q in enumerate(pmf) if abs(i - n * p) >= dev - 1e-9))


def report(what, names, rej, med, n, null):
    """Print the rejection counts of each side (null: with the binomial test against 0.05;
    else: with their standard errors) and the ratio of the median times per test."""
    for name, k in zip(names, rej):
        if null:
            print("null  %-17s rejections %3d / %d = %.4f (binomial test vs 0.05: p = %.3f)"
                  % (name, k, n, k / n, binom_two_sided(k, n, 0.05)), flush=True)
        else:
            print("power %-17s rejections %3d / %d = %.3f +- %.3f"
                  % (name, k, n, k / n, math.sqrt(k / n * (1 - k / n) / n)), flush=True)
    print("time  kdistill %.4f s, goodpoints %.4f s per test (medians over the %s trials), "
          "ratio %.1fx" % (med[0], med[1], what, med[1] / med[0]), flush=True)


def time_ranks(name, m, run, gp=None, trials=50, shift=0.0):
    """Under mpirun: `trials` tests of run(X_block, Y_block, t, comm) on every rank (each rank
    passes its block of the same m x 2 arrays, drawn from numpy seed 1000 + t, Y shifted by
    `shift` on its first coordinate); rank 0 prints the median of the slowest rank's wall time.
    With gp, rank 0 also runs gp(X, Y, t) on the whole arrays after each kdistill test while the
    other ranks wait at a barrier (goodpoints on one core, in the same run), and prints its
    median and the ratio."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    lo, hi = m * rank // size, m * (rank + 1) // size
    times, gp_times = [], []
    for t in range(trials):
        rng = np.random.default_rng(1000 + t)
        X, Y = rng.normal(size=(m, 2)), rng.normal(size=(m, 2))
        Y[:, 0] += shift
        comm.Barrier()
        t0 = time.perf_counter()
        run(X[lo:hi], Y[lo:hi], t, comm)
        times.append(comm.allreduce(time.perf_counter() - t0, op=MPI.MAX))
        if gp is not None:
            if rank == 0:
                t0 = time.perf_counter()
                gp(X, Y, t)
                gp_times.append(time.perf_counter() - t0)
            comm.Barrier()
    if rank == 0:
        kd = statistics.median(times)
        print("time  kdistill %s on %d ranks: %.4f s per test (median of %d)"
              % (name, size, kd, trials), flush=True)
        if gp is not None:
            g = statistics.median(gp_times)
            print("time  goodpoints %s on one core, same run: %.4f s per test, ratio %.1fx"
                  % (name, g, g / kd), flush=True)
