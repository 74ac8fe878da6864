"""bench/python_bench.py - what bench/python.sh measures (see bench/results/python.md):
  overhead N   kdistill.thin on N x 2 float64 in-process vs `kdistill run` on the same rows (CSV)
               and config: Python whole-call wall time against the CLI's algorithm seconds,
               median of 3 seeds, and the coresets compared bit for bit
  small        whole-call wall time of kdistill.thin on 2^10 x 2 (median of 50 calls), with a
               fixed length scale and with ls = median
  handover     whole-call wall time of a small CTT (m = n = 64, d = 2, B = 39) in the main thread
               (Python's SIGINT handler: the call runs in place) against the same call with a
               SIGINT handler of the program's own (the call runs on the worker thread): 5 rounds
               of 200 calls each way, alternating; medians
  rss N DTYPE  peak RSS of one process during kdistill.thin on N x 2 (DTYPE float64 | float32)
Needs KDISTILL (the CLI) in the environment for `overhead`."""
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import kdistill


def data(n, seed):
    return np.random.default_rng(seed).normal(size=(n, 2))


def overhead(n):
    """Both sides skip the O(n^2) self term of the exact MMD (target.self: false), which would
    otherwise dominate both (2.2 s at 2^16) and hide the overhead; the CLI runs come first: an
    mpirun started from a process that already uses MPI as a singleton fails."""
    cli = os.environ["KDISTILL"]
    n_out = int(round(np.sqrt(n)))
    seeds = (42, 43, 44)
    refs, rows = {}, []
    with tempfile.TemporaryDirectory() as d:
        for seed in seeds:
            csv = os.path.join(d, "x%d.csv" % seed)
            np.savetxt(csv, data(n, seed), fmt="%.17g", delimiter=",")
            cfg = os.path.join(d, "c%d.yaml" % seed)
            with open(cfg, "w") as f:
                f.write("task: thin\ndata: {type: csv, path: %s}\n"
                        "target: {type: data, self: false}\nkernel: {name: gaussian, ls: 2.0}\n"
                        "algorithm: {name: kt_compress, n_out: %d, g: 4}\nrun: {seed: %d}\n"
                        % (csv, n_out, seed))
            out = os.path.join(d, "o%d.h5" % seed)
            t0 = time.perf_counter()
            subprocess.run(["mpirun", "-np", "1", cli, "run", cfg, "--output", out, "--quiet"],
                           check=True)
            refs[seed] = (out, time.perf_counter() - t0)
        refs = {k: (kdistill.load(o), w) for k, (o, w) in refs.items()}
    kdistill.thin(data(1024, 0), 32, ls=2.0)  # warm: context, libraries
    for seed in seeds:
        X = data(n, seed)
        t0 = time.perf_counter()
        cs = kdistill.thin(X, n_out, g=4, ls=2.0, seed=seed, target={"type": "data", "self": False})
        wall = time.perf_counter() - t0
        ref, cli_wall = refs[seed]
        same = np.array_equal(cs.indices, ref.indices) and np.array_equal(cs.points, ref.points)
        rows.append((wall, cs.seconds, ref.seconds, cli_wall, same))
    med = [statistics.median(r[i] for r in rows) for i in range(4)]
    print("overhead n=2^%d (median of 3 seeds): python whole call %.4f s, its algorithm %.4f s; "
          "CLI algorithm %.4f s, CLI process (mpirun, CSV read) %.3f s; whole call / CLI algorithm"
          " = %.3f; coresets bitwise equal to the CLI's: %s"
          % (int(np.log2(n)), med[0], med[1], med[2], med[3], med[0] / med[2],
             all(r[4] for r in rows)))


def small():
    X = data(1024, 0)
    for ls in (2.0, "median"):
        kdistill.thin(X, 32, ls=ls)
        ts = []
        for _ in range(50):
            t0 = time.perf_counter()
            kdistill.thin(X, 32, ls=ls)
            ts.append(time.perf_counter() - t0)
        print("small n=2^10 ls=%s: whole call median %.2f ms (min %.2f ms)"
              % (ls, 1e3 * statistics.median(ts), 1e3 * min(ts)))


def handover():
    X, Y = data(64, 1), data(64, 2)

    def own(sig, frame):
        raise KeyboardInterrupt

    res = {"in place": [], "worker": []}
    for _ in range(5):
        for mode in res:
            signal.signal(signal.SIGINT, own if mode == "worker" else signal.default_int_handler)
            ts = []
            for t in range(200):
                t0 = time.perf_counter()
                kdistill.ctt(X, Y, seed=t, ls=1.0)
                ts.append(time.perf_counter() - t0)
            res[mode].append(statistics.median(ts))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    a, b = (1e3 * statistics.median(v) for v in res.values())
    print("handover: small ctt whole call median %.3f ms in place, %.3f ms on the worker thread "
          "(+%.3f ms)" % (a, b, b - a))


def rss(n, dtype):
    X = data(n, 1).astype(dtype)
    kdistill.thin(X[:1024], 32, ls=2.0)  # warm: library, context, MPI
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    cs = kdistill.thin(X, int(round(np.sqrt(n))), g=4, ls=2.0,
                       target={"type": "data", "self": False})
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mib = X.nbytes / 2**20
    print("rss n=2^%d %s: input %.0f MiB, RSS before the call %.0f MiB, peak %.0f MiB, growth "
          "%.0f MiB = %.2f x input (%.1f s, mmd %.3e)"
          % (int(np.log2(n)), dtype, mib, base / 1024, peak / 1024, (peak - base) / 1024,
             (peak - base) / 1024 / mib, wall, cs.mmd))


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "overhead":
        overhead(2 ** int(sys.argv[2]))
    elif what == "small":
        small()
    elif what == "handover":
        handover()
    else:
        rss(2 ** int(sys.argv[2]), sys.argv[3])
