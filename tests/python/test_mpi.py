"""Run by cli_vs_py.sh under mpirun -np P (P = 1, 2): bitwise agreement with the command line's
output files for thin, herd, ctt and quad, with rows passed from memory in the library's own block
split and in an uneven split; errors planted on the last rank only raise the same exception on
every rank without a hang, and a later call still works; calls from 4 threads per rank (the same
call on COMM_WORLD, different calls on COMM_SELF) give the results of the calls alone."""

import os
import sys
import threading

import numpy as np
from mpi4py import MPI

import kdistill

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
work = sys.argv[1]
X = np.loadtxt(os.path.join(work, "x.csv"), delimiter=",")
Y = np.loadtxt(os.path.join(work, "y.csv"), delimiter=",")
C = np.loadtxt(os.path.join(work, "c.csv"), delimiter=",")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("rank %d: FAIL %s" % (rank, what), flush=True)


def even(A):
    n = len(A)
    return A[n * rank // size: n * (rank + 1) // size]


def uneven(A):
    # rank 0 takes a quarter, the rest split the remainder (differs from the library's split)
    n = len(A)
    cuts = [0] + [n // 4 + (n - n // 4) * r // max(size - 1, 1) for r in range(size)]
    cuts[-1] = n
    if size == 1:
        cuts = [0, n]
    return A[cuts[rank]: cuts[rank + 1]]


def same(py, cli, what):
    for f in ("points", "weights", "indices"):
        a, b = getattr(py, f), getattr(cli, f)
        check(a.shape == b.shape and np.array_equal(a, b), "%s: %s differ" % (what, f))
    check(py.mmd == cli.mmd or (np.isnan(py.mmd) and np.isnan(cli.mmd)),
          "%s: mmd %r vs %r" % (what, py.mmd, cli.mmd))


def imq_ksd(P, S, w, ls, beta=0.5):
    """sqrt(w^T K_p w), K_p the Langevin Stein kernel of k = (1 + r^2 / ls^2)^(-beta)."""
    d = P.shape[1]
    D = P[:, None, :] - P[None, :, :]
    r2 = (D ** 2).sum(-1)
    c = 1.0 + r2 / ls ** 2
    gx = (-2.0 * beta / ls ** 2) * c[..., None] ** (-beta - 1) * D  # grad_x k; grad_y k = -gx
    tr = (2.0 * beta / ls ** 2) * (d * c ** (-beta - 1)
                                   - 2.0 * (beta + 1) / ls ** 2 * c ** (-beta - 2) * r2)
    kp = tr + (gx * S[None, :, :]).sum(-1) - (gx * S[:, None, :]).sum(-1) + c ** -beta * (S @ S.T)
    return float(np.sqrt(w @ kp @ w))


load = lambda t: kdistill.load(os.path.join(work, "cli_%s.h5" % t))
for split in (even, uneven):
    tag = split.__name__
    cs = kdistill.thin(split(X), 64, g=3, seed=11, comm=comm)
    same(cs, load("thin"), "thin/" + tag)
    r = kdistill.herd(split(C), kdistill.Gaussian([0, 0], [1, 1]), n_atoms=50, ls=1.0, seed=2,
                      max_iter=500, tol_mmd=0.0, comm=comm)
    same(r, load("herd"), "herd/" + tag)
    q = kdistill.quad(split(X), 24, seed=3, comm=comm)
    same(q, load("quad"), "quad/" + tag)
    t = kdistill.ctt(split(X), split(Y), g=1, s=16, B=50, seed=5, comm=comm)
    tc = load("ctt")
    check(isinstance(tc, kdistill.TestResult), "ctt: load gives a TestResult")
    check((t.statistic, t.p_value, t.reject) == (tc.statistic, tc.p_value, tc.reject),
          "ctt/%s: %r vs %r" % (tag, (t.statistic, t.p_value), (tc.statistic, tc.p_value)))

# an error only the last rank can see: a NaN in its block -> DataError on every rank
bad = even(X).copy()
if rank == size - 1:
    bad[1, 0] = np.nan
try:
    kdistill.thin(bad, 16, comm=comm)
    check(False, "NaN on the last rank did not raise")
except kdistill.DataError as e:
    row = len(X) * (size - 1) // size + 2
    if rank == 0:
        check(str(e) == "data (array X): row %d has a non-finite value (NaN or Inf)" % row,
              "message: %s" % e)
# a Python-side error on the last rank only (a 3-D array) is agreed before any collective
try:
    kdistill.thin(np.zeros((4, 2, 2)) if rank == size - 1 else even(X), 16, comm=comm)
    check(False, "3-D array on the last rank did not raise")
except kdistill.DataError as e:
    if rank == 0:
        check("expected a 2-D array" in str(e), "message: %s" % e)
# blocks of different dimension on different ranks
if size > 1:
    try:
        kdistill.thin(even(X) if rank == 0 else even(np.hstack([X, X])), 16, comm=comm)
        check(False, "mixed dimensions did not raise")
    except kdistill.DataError as e:
        if rank == 0:
            check("different dimension" in str(e), "message: %s" % e)
# MPI is still usable: the next call agrees with the CLI again
same(kdistill.thin(even(X), 64, g=3, seed=11, comm=comm), load("thin"), "thin after errors")
# a sub-communicator: every rank alone (COMM_SELF) sees the whole of X
own = kdistill.thin(X, 64, g=3, seed=11, comm=MPI.COMM_SELF)
same(own, load("thin"), "thin on COMM_SELF")

# ksd: the same points on every rank; the value at P ranks is the numpy double sum's
Z = X[:200]
wz = np.arange(1.0, 201.0)
wz /= wz.sum()
got = kdistill.ksd(Z, wz, lambda x: -x, ls=1.3, comm=comm)
check(abs(got - imq_ksd(Z, -Z, wz, 1.3)) <= 1e-12 * got, "ksd %r" % got)
# mmd against a sample target split over the ranks: the fast Gauss transform's value and bound
# are those of one process holding every row, bit for bit, and the bound holds
wz8 = wz[:64] / wz[:64].sum()
whole = kdistill.mmd(Z[:64], wz8, X, ls=0.8, method="fgt", comm=MPI.COMM_SELF)
exact = kdistill.mmd(Z[:64], wz8, X, ls=0.8, comm=MPI.COMM_SELF)
check(whole.method == "bounded" and 0 < whole.mmd2_bound < 1e-10, "fgt: %r" % whole.text())
check(abs(whole.mmd2 - exact.mmd2) <= whole.mmd2_bound, "fgt: outside its bound")
for split in (even, uneven):
    got = kdistill.mmd(Z[:64], wz8, split(X), ls=0.8, method="fgt", comm=comm)
    check((got.mmd2, got.mmd2_bound) == (whole.mmd2, whole.mmd2_bound),
          "fgt/%s: %r vs %r" % (split.__name__, (got.mmd2, got.mmd2_bound),
                                (whole.mmd2, whole.mmd2_bound)))
# lrctt and the Fig. 2 baselines: the same statistics, p-value and decision at P ranks as on one
# process
for alg, kw in (("subsample_test", {"n_out": 300}), ("wblock", {"block": 16}),
                ("lrctt", {"r": 64, "s": 8})):
    one = kdistill.ctt(X, Y, algorithm=alg, B=50, seed=5, ls=1.0, comm=MPI.COMM_SELF, **kw)
    for split in (even, uneven):
        t = kdistill.ctt(split(X), split(Y), algorithm=alg, B=50, seed=5, ls=1.0, comm=comm, **kw)
        check((t.statistic, t.p_value, t.reject) == (one.statistic, one.p_value, one.reject) and
              np.array_equal(t.extras["/test/permutation_statistics"],
                             one.extras["/test/permutation_statistics"]),
              "%s/%s: %r vs %r" % (alg, split.__name__, t, one))
# the deep kernel (phi evaluated on each rank's own rows, both length scales by the median
# heuristic): the same coreset and the same test at P ranks as on one process
Wd = np.array([[0.8, -0.3, 0.5], [0.2, 0.9, -0.7]])
deep = kdistill.Deep(lambda A: np.tanh(A @ Wd), eps=0.3)
one_cs = kdistill.thin(X, 64, g=2, seed=11, kernel=deep, comm=MPI.COMM_SELF)
one_t = kdistill.ctt(X, Y, g=1, s=16, B=50, seed=5, kernel=deep, comm=MPI.COMM_SELF)
for split in (even, uneven):
    same(kdistill.thin(split(X), 64, g=2, seed=11, kernel=deep, comm=comm), one_cs,
         "deep thin/" + split.__name__)
    t = kdistill.ctt(split(X), split(Y), g=1, s=16, B=50, seed=5, kernel=deep, comm=comm)
    check((t.statistic, t.p_value) == (one_t.statistic, one_t.p_value),
          "deep ctt/%s: %r vs %r" % (split.__name__, t, one_t))
# against a closed-form target the median heuristic sees the points once at any rank count
g2 = kdistill.Gaussian([0.5, -1.0], [1.0, 2.0])
mine, alone = kdistill.mmd(Z, wz, g2, comm=comm), kdistill.mmd(Z, wz, g2, comm=MPI.COMM_SELF)
check(mine == alone, "mmd, closed-form target, ls median: %r vs %r on one process" % (mine, alone))
# read_points: every row on every rank, through the library's CSV reader
check(np.array_equal(kdistill.read_points(os.path.join(work, "x.csv"), comm=comm), X),
      "read_points(x.csv) differs from numpy's")
# Coreset.save is collective: one file, rank 0 writes, every rank reads it back
saved = os.path.join(work, "saved_np%d.h5" % size)
cs.save(saved, comm=comm)
same(kdistill.load(saved), cs, "save/load")
try:
    cs.save(saved, comm=comm)
    check(False, "save over an existing file did not raise")
except kdistill.FileError as e:
    check("overwrite=True" in str(e), "save refusal: %s" % e)



# threads: four per rank each make the same thin call on COMM_WORLD at once (each rank runs them
# one at a time, under the package's process lock; identical calls pair up across the ranks in any
# order), then four per rank make different calls on COMM_SELF (no partner ranks): no crash, no
# MPI_ERR_TRUNCATE, no hang (joined with a timeout; a hung thread ends the process), and every
# result is the one the call gives alone. Before the lock: SIGSEGV, or MPI_ERR_TRUNCATE and a hang.
def in_threads(jobs, what):
    out, errs = [None] * len(jobs), []

    def work(i):
        try:
            out[i] = jobs[i]()
        except BaseException as e:
            errs.append(repr(e))
    ts = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(jobs))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    if any(t.is_alive() for t in ts):
        print("rank %d: FAIL %s: threads still running after 60 s" % (rank, what), flush=True)
        os._exit(1)
    check(not errs, "%s: %s" % (what, errs))
    return out


for r in in_threads([lambda: kdistill.thin(even(X), 64, g=3, seed=11, comm=comm)] * 4,
                    "thin on COMM_WORLD from 4 threads"):
    if r is not None:
        same(r, load("thin"), "thin on COMM_WORLD from a thread")
local = [lambda: kdistill.thin(X, 64, g=3, seed=11, comm=MPI.COMM_SELF).indices,
         lambda: kdistill.herd(C, kdistill.Gaussian([0, 0], [1, 1]), n_atoms=20, ls=1.0,
                               max_iter=100, comm=MPI.COMM_SELF).weights,
         lambda: kdistill.ctt(X[:600], Y[:600], g=0, s=8, B=20, seed=5,
                              comm=MPI.COMM_SELF).statistic,
         lambda: kdistill.mmd(Z[:64], wz8, X[:500], ls=0.8, comm=MPI.COMM_SELF)]
for i, r in enumerate(in_threads(local, "different calls on COMM_SELF from 4 threads")):
    check(r is not None and np.array_equal(r, local[i]()),
          "call %d on COMM_SELF from a thread differs from the call alone" % i)

nfail = comm.allreduce(len(failures))
if rank == 0:
    print("test_mpi: %d ranks, %d failures" % (size, nfail), flush=True)
sys.exit(1 if nfail else 0)
