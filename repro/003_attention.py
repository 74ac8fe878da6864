"""003_attention.py - Carrell et al., "Low-rank thinning" (paper 003), Sec. 4, Theorem 2 and
Table 3: Thinformer (Alg. 1, kdistill's `attention` task) against uniform key subsampling.

The paper scores attention approximations inside a pretrained T2T-ViT on ImageNet (Top-1
accuracy), which cannot be run here. Stand-in: one attention layer on synthetic tokens shaped like
image-patch embeddings - n = 4096 keys in d = 16 drawn from 32 clusters of different sizes and
spreads, 256 queries from the same clusters, values in d_v = 8 - and the quantity Theorem 2
bounds, the max-norm error |T_hat - T|_max of the attention output against exact softmax
attention, for n_out = 2^g sqrt(n) kept key-value pairs (g = 0 ... 3), 3 seeds.
Usage: /usr/bin/python3 repro/003_attention.py [--smoke]   (2 cores, ~20 s; smoke: seconds).
Writes repro/out/003_attention.csv and repro/figures/003_attention.png (full run only), prints
the table of docs/reproduction.md; --smoke asserts the claims and exits 1 if one fails."""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import repro_common as rc  # noqa: E402

SMOKE = "--smoke" in sys.argv
OUT = os.environ.get("KD_REPRO_OUT") or os.path.join(rc.ROOT, "repro", "out")
N = 1024 if SMOKE else 4096
GS = [0, 2] if SMOKE else [0, 1, 2, 3]
SEEDS = [1, 2] if SMOKE else [1, 2, 3]
D, DV, NQ = 16, 8, 256


def tokens(seed):
    r = np.random.default_rng(seed)
    centres = r.normal(size=(32, D)) * 0.6
    sizes = r.dirichlet(np.ones(32) * 0.7)
    spread = r.uniform(0.1, 0.4, size=32)

    def draw(m):
        c = r.choice(32, size=m, p=sizes)
        return centres[c] + r.normal(size=(m, D)) * spread[c][:, None]
    return draw(NQ), draw(N), r.normal(size=(N, DV))


def main():
    os.makedirs(OUT, exist_ok=True)
    rows, err = [], {}
    for seed in SEEDS:
        Q, K, V = tokens(seed)
        path = os.path.join(OUT, "003_att_s%d.h5" % seed)
        with h5py.File(path, "w") as f:
            f["Q"], f["K"], f["V"] = Q, K, V
        for g in GS:
            for method in ("kh_compress", "uniform"):
                cfg = os.path.join(OUT, "003_att_s%d_g%d_%s.yaml" % (seed, g, method))
                out = cfg[:-5] + ".h5"
                with open(cfg, "w") as f:
                    f.write("task: attention\n" + "".join(
                        "%s: {type: hdf5, path: '%s', dataset: %s}\n" % (s, path, ds)
                        for s, ds in (("queries", "Q"), ("keys", "K"), ("values", "V"))) +
                        "attention: {method: %s, g: %d, n_out: %d, exact: true}\n"
                        "run: {seed: %d}\n" % (method, g, 0 if method == "kh_compress" else
                                               2 ** g * int(np.sqrt(N)), seed))
                rc.run(cfg, out)
                e = rc.metric(out, "max_abs_error")
                with h5py.File(out, "r") as f:
                    nout = f["coreset/points"].shape[0]
                err.setdefault((method, g), []).append((nout, e))
                rows.append((method, g, seed, nout, e, rc.metric(out, "seconds")))
    rc.write_csv(os.path.join(OUT, "003_attention.csv"),
                 ["method", "g", "seed", "n_out", "max_abs_error", "seconds"], rows)
    print("n = %d keys, d = %d, %d queries: |T_hat - T|_max, mean over %d seeds" %
          (N, D, NQ, len(SEEDS)))
    print("| method | " + " | ".join("n_out = %d" % err[("uniform", g)][0][0] for g in GS) +
          " | slope |")
    print("|---|" + "---|" * (len(GS) + 1))
    slopes, means = {}, {}
    for method in ("kh_compress", "uniform"):
        no = np.array([err[(method, g)][0][0] for g in GS], float)
        me = np.array([np.mean([e for _, e in err[(method, g)]]) for g in GS])
        slopes[method], means[method] = rc.slope(no, me), me
        print("| %s | %s | %.2f |" % ("Thinformer" if method == "kh_compress" else "uniform",
                                      " | ".join("%.4f" % v for v in me), slopes[method]))
    failures = []
    # Theorem 2: error ~ sqrt(log n_out)/n_out for Thinformer against 1/sqrt(n_out) for uniform:
    # a steeper decay and a lower error once Compress oversamples (g >= 1; at g = 0 the Compress
    # output is sqrt(n) rows with no halving to choose among them)
    if not np.all(means["kh_compress"][1:] < means["uniform"][1:]):
        failures.append("Thinformer not below uniform subsampling at every g >= 1")
    if not SMOKE and not slopes["kh_compress"] < slopes["uniform"] - 0.1:
        failures.append("Thinformer's error does not decay faster than uniform's")
    if not SMOKE:
        plot(err)
    return rc.finish(failures)


def plot(err):
    plt = rc.pyplot()
    f, ax = plt.subplots(1, 1, figsize=(4.5, 3.3))
    for method, label in (("kh_compress", "Thinformer"), ("uniform", "uniform keys")):
        no = np.array([err[(method, g)][0][0] for g in GS], float)
        me = np.array([np.mean([e for _, e in err[(method, g)]]) for g in GS])
        ax.loglog(no, me, "o-", label=label)
    ax.loglog(no, me[0] * (no / no[0]) ** -0.5, "k:", label="n_out^-1/2")
    ax.set_xlabel("n_out (key-value pairs kept)")
    ax.set_ylabel("|T_hat - T|_max")
    ax.legend(fontsize=7)
    rc.save_figure(f, "paper 003, Thm. 2 (stand-in for Tab. 3): attention, n = %d" % N,
                   "003_attention.png")


if __name__ == "__main__":
    sys.exit(main())
