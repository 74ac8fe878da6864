"""python_default.py - what the default kdistill.thin(X, 256) costs against its algorithm's own
seconds (bench/results/python.md, "the default call"), at 2^16, 2^18 and 2^20 rows x 2.

    python3 bench/python_default.py [REPEATS]

Per size, REPEATS calls (default 5) after a first call, each mode in turn (alternating): the
default target (the empirical input, target.self: auto: the exact double sum when it costs at most
2^28 kernel evaluations, up to 23169 rows; above, an estimate from max(256, n_out) sampled rows), self: skip (no absolute MMD; the relative quality mmd2_minus_self, exact), and
self: exact. Prints the medians of wall, cs.seconds and wall / cs.seconds, and the MMD as the
Coreset reports it (exact / estimate with its standard error). The first call of the process
(MPI start-up included) is timed separately on 2^10 rows. Run it with the package importable
(an installed kdistill, or KDISTILL_LIB=build/libkdistill.so PYTHONPATH=python)."""
import statistics
import sys
import time

import numpy as np

import kdistill

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
t0 = time.perf_counter()
kdistill.thin(np.random.default_rng(1).normal(size=(1024, 2)), 32)
print("first call of the process (2^10 rows, MPI start-up included): %.3f s"
      % (time.perf_counter() - t0))
modes = {"default": None, "self: skip": {"type": "data", "self": "skip"},
         "self: exact": {"type": "data", "self": "exact"}}
print("| rows | mode | wall s | cs.seconds | wall / cs.seconds | mmd as reported |")
print("|---|---|---|---|---|---|")
for p in (16, 18, 20):
    X = np.random.default_rng(0).normal(size=(2**p, 2))
    kdistill.thin(X, 256)  # first call at this size: pages touched, caches warm
    runs = {m: [] for m in modes}
    for _ in range(reps):
        for m, tgt in modes.items():
            if m == "self: exact" and p > 16:
                continue  # O(n^2): 2^18 takes ~30 s, 2^20 ~8 min
            t = time.perf_counter()
            cs = kdistill.thin(X, 256, target=tgt)
            runs[m].append((time.perf_counter() - t, cs.seconds, cs.mmd_text()))
    for m, r in runs.items():
        if not r:
            continue
        w = statistics.median(x[0] for x in r)
        a = statistics.median(x[1] for x in r)
        ratio = statistics.median(x[0] / x[1] for x in r)
        print("| 2^%d | %s | %.3f | %.3f | %.2f | %s |" % (p, m, w, a, ratio, r[-1][2]),
              flush=True)
