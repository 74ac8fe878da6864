"""bench/python_goodpoints.py GOODPOINTS_DIR [LOG2N ...] - kdistill.thin against goodpoints'
compress.compresspp_kt (g = 4) on the same arrays: standard normal rows in d = 2 (seeds 42, 43,
44), Gaussian kernel exp(-|x-y|^2 / (2 ls^2)) with ls = 2 (goodpoints: k_params = 2 ls^2 = 8),
n_out = sqrt(n). Both times are whole in-process calls on one core; kdistill skips the O(n^2) self
term of its own MMD report (target.self: false). Both coresets' MMD against the input is then
computed exactly by kdistill.mmd. Prints one line per size with medians of the 3 seeds.
GOODPOINTS_DIR is a folder with goodpoints built in place (setup.py build_ext --inplace)."""
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, sys.argv[1])
from goodpoints import compress  # noqa: E402

import kdistill  # noqa: E402

sizes = [int(a) for a in sys.argv[2:]] or [14, 16, 18]
for lg in sizes:
    n = 2 ** lg
    rows = []
    for seed in (42, 43, 44):
        X = np.random.default_rng(seed).normal(size=(n, 2))
        t0 = time.perf_counter()
        cs = kdistill.thin(X, int(np.sqrt(n)), g=4, ls=2.0, seed=seed,
                           target={"type": "data", "self": False})
        t_kd = time.perf_counter() - t0
        t0 = time.perf_counter()
        idx = compress.compresspp_kt(X, b"gaussian", k_params=np.array([8.0]), g=4, seed=seed)
        t_gp = time.perf_counter() - t0
        m_kd = kdistill.mmd(cs.points, None, X, ls=2.0)
        m_gp = kdistill.mmd(X[idx], None, X, ls=2.0)
        rows.append((t_kd, t_gp, m_kd, m_gp, len(idx)))
        print("  2^%d seed %d: kdistill %.3f s mmd %.3e | goodpoints %.3f s mmd %.3e (%d points)"
              % (lg, seed, t_kd, m_kd, t_gp, m_gp, len(idx)), flush=True)
    med = [statistics.median(r[i] for r in rows) for i in range(4)]
    print("2^%d: kdistill %.3f s, goodpoints %.3f s, time ratio %.1fx; MMD kdistill %.3e, "
          "goodpoints %.3e, MMD ratio (kdistill / goodpoints) %.2f"
          % (lg, med[0], med[1], med[1] / med[0], med[2], med[3], med[2] / med[3]), flush=True)
