"""bench/goodpoints_mixture.py KDISTILL_BIN GOODPOINTS_DIR [LOG2N ...] - kdistill's CLI against
goodpoints' Compress++ (compress.compresspp_kt, g = 4) on one core, side by side, on a 2-D
8-component Gaussian mixture (means on the circle of radius 4, unit covariances, equal weights;
seeds 42, 43, 44; n rows -> sqrt(n)). Kernel exp(-|x-y|^2 / (2 ls^2)), ls = 2 (goodpoints'
k_params = 2 ls^2 = 8). kdistill: `kdistill thin X.npy` with kt_compress g = 4 on one process,
timed by the algorithm seconds it reports (/metrics attribute `seconds`; the exact O(n^2) self
term of its MMD report is skipped, target.self: false). goodpoints: the compresspp_kt call. Both
coresets' MMD against the input is then computed exactly: kdistill's by `kdistill mmd OUT.h5
CONFIG` with target.self: exact, goodpoints' from it by the exact differences of the two
coreset terms (MMD^2 = zz - 2 cross + self; zz is the same for both, cross and self by numpy).
The two sides alternate per seed. Prints one line per run and the medians per size.
GOODPOINTS_DIR is a goodpoints source tree built in place (python3 setup.py build_ext --inplace,
Debian's cython3), outside this repository."""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

kd_bin = os.path.realpath(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from goodpoints import compress  # noqa: E402

LS = 2.0
sizes = [int(a) for a in sys.argv[3:]] or [14, 16, 18]
env = dict(os.environ, OPENBLAS_NUM_THREADS="1")


def exact_mmd2(out_h5, xf, work):
    """The exact MMD^2 of the rule in out_h5 against the rows of xf (the CLI, target.self exact)."""
    cfg = os.path.join(work, "mmd.yaml")
    with open(cfg, "w") as f:
        f.write("task: thin\ndata: {type: npy, path: '%s'}\ntarget: {type: data, self: exact}\n"
                "kernel: {name: gaussian, ls: %g}\nalgorithm: {name: uniform, n_out: 1}\n"
                % (xf, LS))
    r = subprocess.run([kd_bin, "mmd", out_h5, cfg], check=True, capture_output=True, text=True,
                       env=env)
    return float([ln for ln in r.stdout.splitlines() if ln.startswith("mmd2:")][0].split()[1])


def gram(A, B):
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T
    return np.exp(-np.maximum(d2, 0) / (2 * LS * LS))


def mixture(n, seed):
    rng = np.random.default_rng(seed)
    ang = 2 * np.pi * np.arange(8) / 8
    means = 4.0 * np.stack([np.cos(ang), np.sin(ang)], axis=1)
    return means[rng.integers(0, 8, size=n)] + rng.normal(size=(n, 2))


def coreset_terms(C, X):
    """(1/m^2) sum k(c, c') and (1/(n m)) sum k(x, c) of an equal-weight coreset C."""
    cross = sum(gram(X[i:i + 8192], C).sum() for i in range(0, len(X), 8192))
    return gram(C, C).sum() / len(C) ** 2, cross / (len(X) * len(C))


with tempfile.TemporaryDirectory() as work:
    for lg in sizes:
        n, rows = 2 ** lg, []
        for seed in (42, 43, 44):
            X = mixture(n, seed)
            xf, of = os.path.join(work, "x.npy"), os.path.join(work, "o.h5")
            np.save(xf, X)
            subprocess.run([kd_bin, "thin", xf, "--n-out", str(int(np.sqrt(n))), "-o", of,
                            "--set", "algorithm.name=kt_compress", "--set", "algorithm.g=4",
                            "--set", "kernel.name=gaussian", "--set", "kernel.ls=%g" % LS,
                            "--set", "target.self=false", "--set", "run.seed=%d" % seed,
                            "--quiet"], check=True, env=env)
            with h5py.File(of) as f:
                t_kd = float(f["metrics"].attrs["seconds"])
                pts = f["coreset/points"][:]
            t0 = time.perf_counter()
            idx = compress.compresspp_kt(X, b"gaussian", k_params=np.array([2 * LS * LS]), g=4,
                                         seed=seed)
            t_gp = time.perf_counter() - t0
            m2_kd = exact_mmd2(of, xf, work)
            s_kd, c_kd = coreset_terms(pts, X)
            s_gp, c_gp = coreset_terms(X[idx], X)
            m_kd = np.sqrt(max(m2_kd, 0))
            m_gp = np.sqrt(max(m2_kd + (s_gp - s_kd) - 2 * (c_gp - c_kd), 0))
            rows.append((t_kd, t_gp, m_kd, m_gp))
            print("  2^%d seed %d: kdistill %.4f s (%d points) mmd %.3e | goodpoints %.3f s "
                  "(%d points) mmd %.3e | %.1fx" % (lg, seed, t_kd, len(pts), m_kd, t_gp,
                                                    len(idx), m_gp, t_gp / t_kd), flush=True)
        med = [statistics.median(r[i] for r in rows) for i in range(4)]
        print("2^%d: kdistill %.4f s, goodpoints %.3f s, time ratio %.1fx; MMD kdistill %.3e, "
              "goodpoints %.3e, MMD ratio %.2f" % (lg, med[0], med[1], med[1] / med[0], med[2],
                                                   med[3], med[2] / med[3]), flush=True)
