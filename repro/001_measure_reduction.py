"""001_measure_reduction.py - Hayakawa, Oberhauser & Lyons (paper 001), Sec. 3.2, Figure 2:
reducing a large discrete measure (the uniform measure on a data set, centred and normalised)
with a Gaussian kernel whose length scale comes from the median heuristic; mean log10 wce^2 over
trials against n = 4 ... 128 for Monte Carlo (n rows drawn without replacement), N. + emp,
N. + emp + opt (N = n^2, l = 10 n),
Thinning and Thin + opt (KT-Compress of n^2 rows drawn from the measure, reweighted against it),
and equal-weight herding over all rows.

The paper's data sets (UCI 3D Road Network, 43 487 of its rows; Combined Cycle Power Plant,
9568 rows) cannot be downloaded here. Stand-ins with the same sizes and dimensions:
  road  (d = 3): 43 487 points along 60 random polyline "roads" in the plane, with a smooth
                 altitude field plus noise as the third coordinate;
  power (d = 5): 9568 rows of four "ambient" variables (a bimodal seasonal temperature, and
                 pressure, humidity and vacuum depending on it nonlinearly) and an output that is
                 a noisy function of all four.
The worst-case error against the data's uniform measure is computed exactly (N <= 2^16).
Usage: /usr/bin/python3 repro/001_measure_reduction.py [--smoke]   (2 cores, ~3 min with 3
trials, the paper used 20; smoke: power only, n = 8, 16, seconds). Writes repro/out/001_fig2.csv
and repro/figures/001_fig2.png (full run only) and prints the tables of docs/reproduction.md;
--smoke asserts the paper's orderings and exits 1 if one fails."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import repro_common as rc  # noqa: E402

SMOKE = "--smoke" in sys.argv
OUT = os.environ.get("KD_REPRO_OUT") or os.path.join(rc.ROOT, "repro", "out")
SETS = ["power"] if SMOKE else ["road", "power"]
NS = [8, 16] if SMOKE else [4, 8, 16, 32, 64, 128]
TRIALS = 1 if SMOKE else 3


def road(rng):
    pts = []
    for _ in range(60):
        k = rng.integers(3, 8)
        v = np.cumsum(rng.normal(size=(k, 2)) * 3.0, axis=0) + rng.uniform(-10, 10, size=2)
        t = rng.random(43487 // 60 + 1)
        seg = rng.integers(0, k - 1, size=len(t))
        pts.append(v[seg] + (v[seg + 1] - v[seg]) * t[:, None])
    xy = np.concatenate(pts)[:43487] + rng.normal(scale=0.05, size=(43487, 2))
    z = np.sin(xy[:, 0] / 4) + 0.5 * np.cos(xy[:, 1] / 3) + rng.normal(scale=0.1, size=43487)
    return np.column_stack([xy, z])


def power(rng):
    n = 9568
    season = rng.random(n) < 0.55
    t = np.where(season, rng.normal(25, 4, n), rng.normal(12, 5, n))
    p = 1013 - 0.3 * t + rng.normal(0, 5, n)
    h = 90 - 1.2 * t + rng.normal(0, 10, n)
    v = 40 + 1.1 * t + 3 * np.sin(t / 3) + rng.normal(0, 4, n)
    e = 495 - 1.8 * t - 0.2 * v + 0.05 * (p - 1013) + rng.normal(0, 3, n)
    return np.column_stack([t, v, p, h, e])


def dataset(name):
    X = (road if name == "road" else power)(np.random.default_rng(2024))
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    path = os.path.join(OUT, "001_%s.npy" % name)
    np.save(path, X)
    r = np.random.default_rng(7)
    S = X[r.choice(len(X), size=min(len(X), 2000), replace=False)]
    d = np.sqrt(((S[:, None, :] - S[None, :, :]) ** 2).sum(-1))
    return X, path, float(np.median(d[np.triu_indices(len(S), 1)]))


def trial(name, X, path, ls, n, seed):
    tgt = "target: {type: npy, path: '%s'}\nkernel: {name: gaussian, ls: %.17g}\n" % (path, ls)
    tag = "001f2_%s_n%d_s%d" % (name, n, seed)
    res = {}

    def run(suffix, text):
        cfg = os.path.join(OUT, tag + suffix + ".yaml")
        out = os.path.join(OUT, tag + suffix + ".h5")
        with open(cfg, "w") as f:
            f.write(text + "run: {seed: %d}\n" % seed)
        rc.run(cfg, out)
        return out
    # Monte Carlo from a discrete measure: n rows drawn uniformly (thin's `uniform`)
    p = run("_mc", "task: thin\ndata: {type: npy, path: '%s'}\ntarget: {type: data}\n"
            "kernel: {name: gaussian, ls: %.17g}\nalgorithm: {name: uniform, n_out: %d}\n"
            % (path, ls, n))
    res["Monte Carlo"] = rc.metric(p, "mmd") ** 2
    p = run("_nys", "task: quad\n%salgorithm: {name: nystrom_recombination, n: %d, opt: convex}\n"
            % (tgt, n))
    res["N. + emp"] = rc.metric(p, "mmd_recombination") ** 2
    res["N. + emp + opt"] = rc.metric(p, "mmd_opt") ** 2
    sub = os.path.join(OUT, tag + "_sample.npy")
    np.save(sub, X[np.random.default_rng(seed).integers(0, len(X), size=n * n)])
    p = run("_thin", "task: thin\ndata: {type: npy, path: '%s'}\n%salgorithm: {name: kt_compress, "
            "n_out: %d, reweight: convex}\n" % (sub, tgt, n))
    res["Thinning"] = rc.metric(p, "mmd_uniform_weights") ** 2
    res["Thin + opt"] = rc.metric(p, "mmd_convex_weights") ** 2
    if seed == 1:  # deterministic
        p = run("_herd", "task: herd\ncandidates: {type: npy, path: '%s'}\ntarget: {type: data}\n"
                "kernel: {name: gaussian, ls: %.17g}\nalgorithm: {name: fw_eq, max_atoms: %d}\n"
                % (path, ls, n))
        res["herding"] = rc.metric(p, "mmd") ** 2
    return res


def main():
    os.makedirs(OUT, exist_ok=True)
    table, rows = {}, []
    for name in SETS:
        X, path, ls = dataset(name)
        print("%s: %d rows, d = %d, median length scale %.4f" % (name, len(X), X.shape[1], ls))
        for n in NS:
            per = {}
            for seed in range(1, TRIALS + 1):
                for m, w2 in trial(name, X, path, ls, n, seed).items():
                    per.setdefault(m, []).append(w2)
                    rows.append((name, n, seed, m, w2))
            table[(name, n)] = {m: (float(np.mean(np.log10(v))), float(np.std(np.log10(v))))
                                for m, v in per.items()}
    rc.write_csv(os.path.join(OUT, "001_fig2.csv"), ["data", "n", "seed", "method", "wce2"], rows)
    failures = report(table)
    if not SMOKE:
        plot(table)
    return rc.finish(failures)


def report(table):
    failures = []
    methods = ["Monte Carlo", "herding", "Thinning", "Thin + opt", "N. + emp", "N. + emp + opt"]
    for name in SETS:
        print("%s: mean log10 wce^2 over %d trials (herding: deterministic, one run)" %
              (name, TRIALS))
        print("| method | " + " | ".join("n = %d" % n for n in NS) + " |")
        print("|---|" + "---|" * len(NS))
        for m in methods:
            print("| %s | %s |" % (m, " | ".join("%.2f" % table[(name, n)][m][0] for n in NS)))
        v = {m: table[(name, NS[-1])][m][0] for m in methods}
        # "N. + emp + opt successfully exploits the fast spectral decay of Gaussian kernel and
        # significantly outperforms other methods"
        for m in methods:
            if m != "N. + emp + opt" and not v["N. + emp + opt"] < v[m]:
                failures.append("%s: N. + emp + opt not below %s at n = %d" % (name, m, NS[-1]))
        # "N. + emp (and Thinning) show a decent convergence rate": below Monte Carlo
        for m in ("N. + emp", "Thinning"):
            if not v[m] < v["Monte Carlo"]:
                failures.append("%s: %s not below Monte Carlo at n = %d" % (name, m, NS[-1]))
    return failures


def plot(table):
    plt = rc.pyplot()
    f, axs = plt.subplots(1, len(SETS), figsize=(4.2 * len(SETS), 3.3))
    for ax, name in zip(np.atleast_1d(axs), SETS):
        for m in table[(name, NS[0])]:
            y = np.array([table[(name, n)][m][0] for n in NS])
            e = np.array([table[(name, n)][m][1] for n in NS])
            ax.plot(NS, y, "--" if "opt" in m else "-", marker=".", label=m)
            ax.fill_between(NS, y - e, y + e, alpha=0.15)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n")
        ax.set_title("%s stand-in" % name, fontsize=8)
    np.atleast_1d(axs)[0].set_ylabel("log10 wce^2")
    np.atleast_1d(axs)[0].legend(fontsize=6)
    rc.save_figure(f, "paper 001, Fig. 2 (synthetic stand-ins): measure reduction, Gaussian "
                   "kernel", "001_fig2.png", dpi=72)


if __name__ == "__main__":
    sys.exit(main())
