"""bench/dimension_data.py KDISTILL_BIN GOODPOINTS_SRC - the side-by-side run behind
bench/results/dimension.md (issue 61): kdistill's kt_compress (one process) against goodpoints'
Compress++ (compress.compresspp_kt, one core), both with g = 4 (DIM_G; lowered to log4(n) - 1
at small n, where kdistill needs 4^(g+1) <= n), n rows -> sqrt(n) points, on synthetic and real
data of dimension 2-784. Called by bench/dimension.sh, which prints the machine, date and load
around it; the environment variables are described there.

Per data set: max(2^16, the largest n) rows are drawn once (seed 7; digits: its 1,797 rows in a
seeded order) and standardised per column; a run at size n takes their first n rows, so a subset
run sees the same rows as the full one. The Gaussian kernel exp(-|x - y|^2 / (2 ls^2)) takes
ls = the median distance between 1000 of those rows (the median heuristic, computed here once per
data set and passed to both sides: kdistill `kernel.ls`, goodpoints `k_params = 2 ls^2`). Then
R runs (DIM_RUNS), seed s = 0..R-1 for both algorithms, alternating which side runs first (s
even: goodpoints first). Times: kdistill's algorithm seconds (/metrics attribute `seconds`; the
O(n^2) self term of its own MMD report is off, target.self: false), goodpoints' wall time of the
compresspp_kt call; the table gives the median over the R runs. MMD: of each coreset (equal
weights) against the n input rows, exact, by one numpy formula for both sides,
MMD^2 = zz - 2 cross + self with zz = (1/n^2) sum k(x_i, x_j) (blocked, each block pair once;
cached in the work directory), cross = (1/(n m)) sum k(x, c), self = (1/m^2) sum k(c, c'); the
table gives the mean over the R seeds. Nothing is written to the repository: the inputs, outputs,
per-run lines (runs.tsv) and the table (table.txt) go to the work directory (DIM_WORK, default
/tmp/kd_dimension)."""
import hashlib
import os
import statistics
import subprocess
import sys
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"  # one core on both sides, before numpy loads its BLAS

import h5py  # noqa: E402
import numpy as np  # noqa: E402

KD_BIN = os.path.realpath(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from goodpoints import compress  # noqa: E402

ALL = "gauss2 gauss8 gauss32 gauss128 patch4 patch8 patch8c patch28 digits"
DATA = os.environ.get("DIM_DATA", "all").replace("all", ALL).split()
if set(DATA) - set(ALL.split()):
    sys.exit("dimension_data.py: unknown DIM_DATA %s; known: %s"
             % (" ".join(sorted(set(DATA) - set(ALL.split()))), ALL))
LOG2N = [int(v) for v in os.environ.get("DIM_LOG2N", "14 16").split()]
DIGITS_LOG2N = [int(v) for v in os.environ.get("DIM_DIGITS_LOG2N", "8 10").split()]
if any(lg % 2 or lg < 4 for lg in LOG2N + DIGITS_LOG2N) or max(DIGITS_LOG2N) > 10:
    sys.exit("dimension_data.py: sizes must be even log2 n >= 4 (n a power of 4, as goodpoints "
             "needs for sqrt(n) points), digits at most 10 (1,797 rows)")
RUNS = int(os.environ.get("DIM_RUNS", "5"))
G = int(os.environ.get("DIM_G", "4"))
WORK = os.environ.get("DIM_WORK", "/tmp/kd_dimension")
EXTRA = os.environ.get("DIM_KD_SET", "").split()  # extra key=value for kdistill, e.g. threshold
DATA_SEED = 7
BLOCK = 4096

# skimage sample images that ship inside python3-skimage (no download); photographs only
GREY = ["camera", "moon", "coins", "clock", "cell", "brick", "grass", "gravel", "page", "text"]
COLOUR = ["astronaut", "chelsea", "coffee", "rocket", "hubble_deep_field",
          "immunohistochemistry", "retina", "stereo_motorcycle"]


def images(colour):
    """The bundled photographs as float arrays in [0, 1]: (h, w, 3) if colour, else (h, w)
    (the colour photographs converted to grey are included in the grey set)."""
    import skimage.color
    import skimage.data
    import skimage.util
    out = []
    for name in COLOUR + ([] if colour else GREY):
        a = getattr(skimage.data, name)()
        a = a[0] if isinstance(a, tuple) else a
        a = skimage.util.img_as_float(a)
        if not colour and a.ndim == 3:
            a = skimage.color.rgb2gray(a[..., :3])
        out.append(a)
    return out


def patches(side, colour, n, rng):
    """n patches side x side (x 3) at random positions: an image is drawn with probability
    proportional to its number of positions, then a position uniformly."""
    ims = images(colour)
    pos = np.array([(a.shape[0] - side + 1) * (a.shape[1] - side + 1) for a in ims], float)
    which = rng.choice(len(ims), size=n, p=pos / pos.sum())
    d = side * side * (3 if colour else 1)
    X = np.empty((n, d))
    for k, a in enumerate(ims):
        rows = np.flatnonzero(which == k)
        i = rng.integers(0, a.shape[0] - side + 1, size=len(rows))
        j = rng.integers(0, a.shape[1] - side + 1, size=len(rows))
        for r, (ii, jj) in zip(rows, zip(i, j)):
            X[r] = a[ii:ii + side, jj:jj + side].reshape(-1)
    return X


def make(name, n):
    """The rows of data set `name` (n of them, all 1,797 for digits; seeded), standardised
    per column; the runs take their first rows."""
    rng = np.random.default_rng(DATA_SEED)
    if name.startswith("gauss"):
        X = rng.standard_normal((n, int(name[5:])))
    elif name == "digits":
        from sklearn.datasets import load_digits
        D = load_digits().data.astype(float)
        X = D[rng.permutation(len(D))]
    else:
        side, colour = {"patch4": (4, False), "patch8": (8, False), "patch8c": (8, True),
                        "patch28": (28, False)}[name]
        X = patches(side, colour, n, rng)
    sd = X.std(0)
    return (X - X.mean(0)) / np.where(sd > 0, sd, 1.0)


def sqdist(A, B):
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
    return np.maximum(d2, 0.0)


def ksum(A, B, ls):
    return np.exp(sqdist(A, B) * (-0.5 / (ls * ls))).sum()


def median_ls(X):
    rng = np.random.default_rng(DATA_SEED + 1)
    S = X[rng.choice(len(X), size=min(len(X), 1000), replace=False)]
    d2 = sqdist(S, S)
    return float(np.sqrt(np.median(d2[np.triu_indices(len(S), 1)])))


def zz_of(X, ls, key):
    """(1/n^2) sum_ij k(x_i, x_j), blocked, each pair of blocks once; cached in WORK."""
    cache = os.path.join(WORK, "zz_%s.txt" % key)
    if os.path.exists(cache):
        return float(open(cache).read())
    n, tot = len(X), 0.0
    for i in range(0, n, BLOCK):
        tot += ksum(X[i:i + BLOCK], X[i:i + BLOCK], ls)
        for j in range(i + BLOCK, n, BLOCK):
            tot += 2.0 * ksum(X[i:i + BLOCK], X[j:j + BLOCK], ls)
    zz = tot / (n * n)
    with open(cache, "w") as f:
        f.write("%.17g\n" % zz)
    return zz


def mmd(C, X, ls, zz):
    """The exact MMD of the equal-weight coreset C against the rows of X."""
    m, n = len(C), len(X)
    cross = sum(ksum(X[i:i + BLOCK], C, ls) for i in range(0, n, BLOCK)) / (n * m)
    m2 = zz - 2.0 * cross + ksum(C, C, ls) / (m * m)
    return float(np.sqrt(max(m2, 0.0)))


def g_of(lg):
    """DIM_G, lowered where kdistill's Compress needs 4^(g+1) <= n (both sides get the same g)."""
    return min(G, lg // 2 - 1)


def kd_command(xf, m, g, ls, seed, of):
    return [KD_BIN, "thin", xf, "--n-out", str(m), "-o", of,
            "--set", "algorithm.name=kt_compress", "--set", "algorithm.g=%s" % g,
            "--set", "kernel.name=gaussian", "--set", "kernel.ls=%.17g" % ls,
            "--set", "target.self=false", "--set", "run.seed=%d" % seed, "--quiet"] + \
        sum((["--set", kv] for kv in EXTRA), [])


def run_kd(xf, m, g, ls, seed, of):
    subprocess.run(kd_command(xf, m, g, ls, seed, of), check=True)
    with h5py.File(of) as f:
        return float(f["metrics"].attrs["seconds"]), f["coreset/points"][:]


def run_gp(X, g, ls, seed):
    t0 = time.perf_counter()
    idx = compress.compresspp_kt(X, b"gaussian", k_params=np.array([2.0 * ls * ls]), g=g,
                                 seed=seed)
    return time.perf_counter() - t0, X[idx]


def main():
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, "runs.tsv")
    fresh = not os.path.exists(path)
    runs = open(path, "a")
    if fresh:
        runs.write("data\td\tn\tg\tseed\tls\tgp_s\tkd_s\tgp_mmd\tkd_mmd\tgp_m\tkd_m\tload1\n")
    table = []
    print("kdistill command (per run): %s" % " ".join(
        kd_command("X.npy", "M", "G", 0.0, 0, "out.h5")).replace("kernel.ls=0", "kernel.ls=LS")
        .replace("run.seed=0", "run.seed=S").replace("--n-out M", "--n-out sqrt(n)"))
    print("goodpoints call (per run): compress.compresspp_kt(X, b'gaussian', "
          "k_params=[2 LS^2], g=G, seed=S)")
    print("G = min(DIM_G = %d, log4(n) - 1), LS = median heuristic, S = 0..%d" % (G, RUNS - 1))
    print("%-8s %4s %7s %5s %2s %8s | %10s %10s %7s | %11s %11s %6s" % (
        "data", "d", "n", "m", "g", "ls", "gp s", "kd s", "gp/kd", "gp MMD", "kd MMD", "kd/gp"),
        flush=True)
    for name in DATA:
        sizes = DIGITS_LOG2N if name == "digits" else LOG2N
        Xall = make(name, 2 ** max(sizes + [16]))  # the same rows whatever sizes are asked
        ls = median_ls(Xall)
        for lg in sizes:
            n = 2 ** lg
            X, m, g = np.ascontiguousarray(Xall[:n]), int(round(np.sqrt(n))), g_of(lg)
            key = "%s_%d_%s" % (name, lg, hashlib.sha1(X.tobytes()).hexdigest()[:12])
            xf = os.path.join(WORK, "x_%s.npy" % key)
            if not os.path.exists(xf):
                np.save(xf, X)
            zz = zz_of(X, ls, key)
            t_gp, t_kd, m_gp, m_kd = [], [], [], []
            for s in range(RUNS):
                of = os.path.join(WORK, "out_%s_%d.h5" % (key, s))
                if s % 2 == 0:
                    tg, Cg = run_gp(X, g, ls, s)
                    tk, Ck = run_kd(xf, m, g, ls, s, of)
                else:
                    tk, Ck = run_kd(xf, m, g, ls, s, of)
                    tg, Cg = run_gp(X, g, ls, s)
                mg, mk = mmd(Cg, X, ls, zz), mmd(Ck, X, ls, zz)
                t_gp.append(tg), t_kd.append(tk), m_gp.append(mg), m_kd.append(mk)
                runs.write("%s\t%d\t%d\t%d\t%d\t%.6g\t%.6f\t%.6f\t%.6e\t%.6e\t%d\t%d\t%s\n" % (
                    name, X.shape[1], n, g, s, ls, tg, tk, mg, mk, len(Cg), len(Ck),
                    os.getloadavg()[0]))
                runs.flush()
                os.remove(of)
            tg, tk = statistics.median(t_gp), statistics.median(t_kd)
            mg, mk = float(np.mean(m_gp)), float(np.mean(m_kd))
            line = "%-8s %4d %7d %5d %2d %8.4g | %10.4f %10.4f %6.1fx | %11.4e %11.4e %6.3f" % (
                name, X.shape[1], n, m, g, ls, tg, tk, tg / tk, mg, mk, mk / mg)
            print(line, flush=True)
            table.append(line)
    with open(os.path.join(WORK, "table.txt"), "a") as f:
        f.write("\n".join(table) + "\n")
    print("(times: median of %d alternating runs; MMD: mean over the same %d seeds; "
          "per run: %s)" % (RUNS, RUNS, os.path.join(WORK, "runs.tsv")))


if __name__ == "__main__":
    main()
