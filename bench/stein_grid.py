"""stein_grid.py - the debiasing grid of bench/results/stein.md (issue 63).

Targets p: equal mixtures of k unit-covariance Gaussians in R^d whose means are the vertices of a
regular simplex with edge `sep` (d = 2, k = 4 has no such simplex: the square of side `sep`), and
the 2-D product of two 1-D bimodals 1/2 N(-2, 1) + 1/2 N(2, 1) (four modes). The biased sample
puts 80 % of its rows on the first mode and splits the rest equally (the product: 0.8 / 0.2 per
coordinate). Every method compresses the sample with its exact scores; the MMD to p is closed form
with a Gaussian kernel of ls = max(1, sqrt(d / 2)). `iid` is the same number of exact draws from
p, `uniform` uniform subsampling of the biased sample.

  /usr/bin/python3 bench/stein_grid.py [--small] [--seeds 5] [--methods ...] [--cases ...]
      [--ls auto|median|NUMBER] [--pre auto|none|diag|matrix] [--json OUT]

--small: 1024 rows -> 32 points and d = 2, 5 only (a few minutes); default 4096 -> 64.
Prints one markdown row per case and method: mean, median, min-max of the MMD over the seeds, and
the mean divided by iid's mean. With --ls / --pre unset the library's defaults are used."""

import argparse
import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import kdistill  # noqa: E402

METHODS = ("skt", "lskt", "sr", "lsr", "sc", "lsc", "stein_thin", "rpcholesky")


def simplex(k, d, sep):
    """k points in R^d, pairwise `sep` apart (a square for k = 4 > d + 1 = 3)."""
    if k > d + 1:
        return sep / 2 * np.array([[-1, -1], [1, -1], [-1, 1], [1, 1]], float)
    e = np.eye(k) - 1.0 / k
    u, _, _ = np.linalg.svd(e)
    v = e @ u[:, :k - 1] * sep / math.sqrt(2)  # rows pairwise sep apart, centred
    out = np.zeros((k, d))
    out[:, :k - 1] = v
    return out


def cases(small):
    out = []
    for d in ((2, 5) if small else (2, 5, 10)):
        for k in (2, 3, 4):
            for sep in (3.0, 4.0):
                mu = simplex(k, d, sep)
                share = np.array([0.8] + [0.2 / (k - 1)] * (k - 1))
                out.append(("d%d k%d sep%g" % (d, k, sep), mu, share))
    mu = np.array([[a, b] for a in (-2.0, 2.0) for b in (-2.0, 2.0)])
    share = np.array([a * b for a in (0.2, 0.8) for b in (0.2, 0.8)])
    out.append(("product 2x bimodal", mu, share))
    return out


def score(X, mu):
    """grad log of the equal mixture of N(mu_c, I)."""
    l2 = -0.5 * ((X[:, None, :] - mu[None]) ** 2).sum(2)
    r = np.exp(l2 - l2.max(1, keepdims=True))
    r /= r.sum(1, keepdims=True)
    return r @ mu - X


def draw(rng, mu, share, n):
    c = rng.choice(len(mu), size=n, p=share)
    return mu[c] + rng.normal(size=(n, mu.shape[1]))


def proto_ls(spec, X, S):
    """Prototype length-scale rules: fisher:C = C sqrt(d / mean |s|^2); ksdmax = the ls of a
    grid (x 2^(1/2) steps) maximising m KSD^2 / mean k_p(x, x) of 512 strided rows."""
    if isinstance(spec, float) or spec in ("auto", "median"):
        return spec
    d = X.shape[1]
    lf = math.sqrt(d / np.mean((S ** 2).sum(1)))
    if spec.startswith("dfisher"):
        return float(spec.split(":")[1]) * lf * math.sqrt(d)
    if spec.startswith("fisher"):
        return float(spec.split(":")[1]) * lf if ":" in spec else lf
    idx = np.linspace(0, len(X) - 1, 512).astype(int)
    best = None
    for e in range(-4, 7):
        ls = lf * 2 ** (e / 2)
        k2 = kdistill.ksd(X[idx], None, S[idx], ls=ls) ** 2
        diag = d / ls ** 2 + np.mean((S[idx] ** 2).sum(1))
        r = len(idx) * k2 / diag
        if best is None or r > best[0]:
            best = (r, ls)
    return best[1]


def one_case(mu, share, args):
    d = mu.shape[1]
    ls = max(1.0, math.sqrt(d / 2))
    target = kdistill.Mixture(mu.tolist(), 1.0, [1.0 / len(mu)] * len(mu))
    res = {m: [] for m in ("iid", "uniform") + tuple(args.methods)}
    info = {m: [] for m in args.methods}
    for seed in range(args.seeds):
        rng = np.random.default_rng(1000 + seed)
        X = draw(rng, mu, share, args.n)
        S = score(X, mu)
        Y = draw(rng, mu, np.full(len(mu), 1.0 / len(mu)), args.n_out)
        res["iid"].append(float(kdistill.mmd(Y, None, target, ls=ls)))
        for m in ("uniform",) + tuple(args.methods):
            kern = {"name": "stein", "base": "imq"}
            if args.pre:
                kern["precondition"] = args.pre
            kw = {} if args.ls is None else {"ls": proto_ls(args.ls, X, S)}
            cs = kdistill.thin(X, args.n_out, algorithm=m, score=S, seed=seed, kernel=kern, **kw)
            res[m].append(float(kdistill.mmd(cs.points, cs.weights, target, ls=ls)))
            if m in info:
                info[m].append({k: cs.metrics.get(k) for k in
                                ("kernel_ls", "kernel_precondition", "debias_groups", "debias_resolution", "debias_untrusted")})
    return res, info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--methods", nargs="*", default=list(METHODS))
    ap.add_argument("--cases", nargs="*", default=None, help="substrings of case names")
    ap.add_argument("--ls", default=None)
    ap.add_argument("--pre", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    args.n, args.n_out = (1024, 32) if args.small else (4096, 64)
    try:
        args.ls = float(args.ls)
    except (TypeError, ValueError):
        pass
    allres = {}
    print("| case | method | mean MMD | median | min-max | mean / iid |")
    print("|---|---|---|---|---|---|")
    t0 = time.time()
    for name, mu, share in cases(args.small):
        if args.cases and not any(c in name for c in args.cases):
            continue
        res, info = one_case(mu, share, args)
        allres[name] = {"mmd": res, "info": info}
        iid = float(np.mean(res["iid"]))
        for m, v in res.items():
            a = np.array(v)
            print("| %s | %s | %.4f | %.4f | %.4f-%.4f | %.2f |" %
                  (name, m, a.mean(), np.median(a), a.min(), a.max(), a.mean() / iid), flush=True)
    print("# %.0f s" % (time.time() - t0))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(allres, f)


if __name__ == "__main__":
    main()
