#!/usr/bin/env python3
"""model.py - the scaling model of docs/hpc.md section 7 against simulated runs (bench/sim).

    python3 bench/sim/model.py RUNS.txt [RUNS.txt ...] [-o FIGURE.png]

RUNS.txt holds scale.sh tables, each after a header line "## strong|weak TASK PLATFORM ...".
For every strong-scaling table the model

    T(p) = W / p + R + N * (lam * ceil(log2 p) + mu * p)

is fitted to the job's seconds (sim_job_s: inputs, algorithm and evaluation, without the
context's set-up) and their split: W (the work divided over the ranks) and R (the part every
rank repeats) to the busiest rank's computing seconds (job less communication seconds), lam (the latency of one step of a collective; a recursive-doubling collective takes
ceil(log2 p) steps) and mu (a cost per operation growing with the ranks) to its communication
seconds, each by least squares in relative terms; N is
the measured number of operations per rank (the busiest rank's, over the job). The table gives the
simulated and the modelled seconds and their difference: a difference above 25% says the model's
form misses something there. With -o, a figure of the simulated curves (strong and weak
scaling), the model and the ideal 1/p.

When the tables hold strong crossbar series of thin at several sizes (tasks named thinK: n = 2^K
rows, g = 2, n_out = sqrt(n), as in bench/sim/README.md) are fitted together by

    T(n, p) = A n log2(n) / p + B sqrt(n) + C sqrt(n) ceil(log2 min(p, G(n)))

A (the Compress tree's evaluations, 4^g n log n, shared out) and B (the shared top and
KH-Refine: 2^g sqrt(n) rows, repeated on every rank of a group) to the computing seconds, C (the
top's chunks and KH-Refine's steps, both about sqrt(n) collectives, each over a group of at most
G(n) = max(32, 2^g sqrt(n) / 2048) ranks) to the communication seconds. It prints the fit
against every run and the projection of that formula to 10^9 and 10^10 rows on 4096 and 65 536
ranks: an extrapolation, not a simulation. The figure then has a column for them: the series
with the fitted formula, and the formula against n at 256 simulated ranks and at the
projection's rank counts.
"""
import math
import re
import sys

def read_runs(path):
    runs, cur = {}, None
    with open(path) as f:
        for line in f:
            m = re.match(r"## (strong|weak) (\S+) (\S+)", line)
            if m:
                cur = runs.setdefault(m.groups(), [])
                continue
            parts = line.split()
            if cur is not None and parts and parts[0].isdigit() and len(parts) >= 8:
                p, _alg, job, _ctx, comm, ops = parts[:6]
                cur.append({"p": int(p), "t": float(job), "comm": float(comm),
                            "ops": float(ops)})
    return runs


def fit(rows):
    """W, R from the computing seconds (T - communication) = W / p + R, and lam from the
    communication seconds = N * lam * ceil(log2 p), each by least squares in relative terms."""
    import numpy as np

    comp = np.array([x["t"] - x["comm"] for x in rows])
    inv = np.array([1.0 / x["p"] for x in rows])
    a = np.stack([inv, np.ones_like(inv)], axis=1) / comp[:, None]
    (w, r), *_ = np.linalg.lstsq(a, np.ones_like(comp), rcond=None)
    if r < 0:  # nothing repeated: W alone
        r = 0.0
        w = float(np.sum(a[:, 0]) / np.sum(a[:, 0] ** 2))
    multi = [x for x in rows if x["p"] > 1 and x["ops"] > 0]
    lam = mu = 0.0
    if multi:
        comm = np.array([x["comm"] for x in multi])
        b = np.array([[x["ops"] * math.ceil(math.log2(x["p"])), x["ops"] * x["p"]] for x in multi])
        b = b / comm[:, None]
        (lam, mu), *_ = np.linalg.lstsq(b, np.ones_like(comm), rcond=None)
        if mu < 0:  # no part growing with p: the steps alone
            mu = 0.0
            lam = float(np.sum(b[:, 0]) / np.sum(b[:, 0] ** 2))
        if lam < 0:
            lam = 0.0
            mu = float(np.sum(b[:, 1]) / np.sum(b[:, 1] ** 2))
    return float(w), float(r), float(lam), float(mu)


def model(w, r, lam, mu, p, ops):
    return w / p + r + (ops * (lam * math.ceil(math.log2(p)) + mu * p) if p > 1 else 0.0)


G_ROWS = 2048  # refine_group_rows: KH-Refine's candidates per rank of a group
G_HALVE = 32  # halve_group: the most ranks a shared halving's all-gather spans


def steps(n, p, g=2):
    """Steps of one of the top's collectives: recursive doubling over its group."""
    group = max(G_HALVE, 2**g * math.sqrt(n) / G_ROWS)
    return math.ceil(math.log2(min(p, group))) if p > 1 else 0


def fit_sizes(rows):
    """A, B from the computing seconds, C from the communication seconds (relative least squares)."""
    import numpy as np

    comp = np.array([x["t"] - x["comm"] for x in rows])
    a = np.array([[x["n"] * math.log2(x["n"]) / x["p"], math.sqrt(x["n"])] for x in rows])
    (ca, cb), *_ = np.linalg.lstsq(a / comp[:, None], np.ones_like(comp), rcond=None)
    multi = [x for x in rows if x["p"] > 1]
    comm = np.array([x["comm"] for x in multi])
    b = np.array([math.sqrt(x["n"]) * steps(x["n"], x["p"]) for x in multi]) / comm
    cc = float(np.sum(b) / np.sum(b**2))
    return float(ca), float(cb), cc


def sized(runs):
    """The strong crossbar series of thin named thinK, each row with its n = 2^K."""
    rows = []
    for (kind, task, plat), series in runs.items():
        m = re.fullmatch(r"thin(\d+)", task)
        if kind == "strong" and plat == "crossbar" and m:
            rows += [dict(x, n=2.0 ** int(m.group(1))) for x in series]
    return rows if len({x["n"] for x in rows}) >= 2 else []


def size_model(c, n, p):
    """The three terms of T(n, p): the tree, the repeated top, the communication."""
    ca, cb, cc = c
    return ca * n * math.log2(n) / p, cb * math.sqrt(n), cc * math.sqrt(n) * steps(n, p)


def project(rows):
    sizes = sorted({x["n"] for x in rows})
    consts = fit_sizes(rows)
    ca, cb, cc = consts

    def terms(n, p):
        return size_model(consts, n, p)

    print(f"\nthin at n = {', '.join(f'2^{int(math.log2(n))}' for n in sizes)} (g = 2, n_out = sqrt(n)): "
          f"A = {ca * 1e9:.3f} ns per n log2 n, B = {cb * 1e6:.3f} us per sqrt(n), "
          f"C = {cc * 1e6:.4f} us per sqrt(n) and step")
    print("| n | p | simulated s | model s | difference |")
    print("|---|---|---|---|---|")
    worst = 0.0
    for x in sorted(rows, key=lambda x: (x["n"], x["p"])):
        m = sum(terms(x["n"], x["p"]))
        diff = (m - x["t"]) / x["t"] * 100
        worst = max(worst, abs(diff))
        print(f"| 2^{int(math.log2(x['n']))} | {x['p']} | {x['t']:.4f} | {m:.4f} | {diff:+.0f}% |")
    print(f"largest difference {worst:.0f}%")
    print("\nprojection (the formula above, extrapolated; g = 2, n_out = sqrt(n), the simulated platform"
          " and cores):")
    print("| n | p | tree, s | shared top and KH-Refine, s | communication, s | in all, s |")
    print("|---|---|---|---|---|---|")
    for n in (1e9, 1e10):
        for p in (4096, 65536):
            w, r, c = terms(n, p)
            print(f"| {n:.0e} | {p} | {w:.3f} | {r:.2f} | {c:.2f} | {w + r + c:.2f} |")


def main():
    args = sys.argv[1:]
    out = None
    if "-o" in args:
        i = args.index("-o")
        out = args[i + 1]
        del args[i : i + 2]
    if not args:
        sys.exit(__doc__)
    runs = {}
    for path in args:
        for key, rows in read_runs(path).items():
            runs.setdefault(key, []).extend(rows)
    fits = {}
    for (kind, task, plat), rows in runs.items():
        if kind != "strong" or len(rows) < 3:
            continue
        w, r, lam, mu = fit(rows)
        fits[(task, plat)] = (w, r, lam, mu)
        print(f"\n{task} on {plat}: W = {w:.4f} s, R = {r:.5f} s, lam = {lam * 1e6:.2f} us "
              f"per step, mu = {mu * 1e9:.0f} ns per rank, N = {rows[-1]['ops']:.0f} "
              "operations per rank")
        print("| p | simulated s | model s | difference |")
        print("|---|---|---|---|")
        for row in rows:
            m = model(w, r, lam, mu, row["p"], row["ops"])
            diff = (m - row["t"]) / row["t"] * 100
            print(f"| {row['p']} | {row['t']:.4f} | {m:.4f} | {diff:+.0f}% |")
    many = sized(runs)
    if many:
        project(many)
    if out:
        plot(runs, fits, many, out)


def plot(runs, fits, many, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = [t for t in ("thin20", "herd", "ctt") if ("strong", t, "crossbar") in runs]
    names = {"thin20": "thin (kt_compress), 2^20 rows", "herd": "herd (bpcg), 2^18 candidates",
             "ctt": "ctt, 2 x 2^18 rows, s = 256"}
    weak_names = {"thin20": "2^16 rows per rank", "herd": "2^14 candidates per rank",
                  "ctt": "2 x 2^14 rows per rank, s = 4p"}
    cols = len(tasks) + (1 if many else 0)
    fig, axes = plt.subplots(2, cols, figsize=(4.2 * cols, 7.2), squeeze=False)
    if many:
        plot_sizes(axes[0][-1], axes[1][-1], many)
    for j, task in enumerate(tasks):
        ax = axes[0][j]
        for plat, mk in (("crossbar", "o"), ("fattree", "s")):
            rows = runs.get(("strong", task, plat))
            if not rows:
                continue
            ps = [r["p"] for r in rows]
            ax.plot(ps, [r["t"] for r in rows], mk + "-", label=f"simulated, {plat}")
            if (task, plat) in fits and plat == "crossbar":
                w, r, lam, mu = fits[(task, plat)]
                ax.plot(ps, [model(w, r, lam, mu, q, row["ops"]) for q, row in zip(ps, rows)], "k--",
                        label="model (crossbar fit)")
                ax.plot(ps, [rows[0]["t"] / q for q in ps], ":", color="grey", label="ideal 1/p")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title("strong: " + names.get(task, task), fontsize=9)
        ax.set_xlabel("simulated ranks p")
        ax.set_ylabel("simulated job seconds (no context set-up)")
        ax.legend(fontsize=7)
        ax = axes[1][j]
        top = 1.1
        for plat, mk in (("crossbar", "o"), ("fattree", "s")):
            rows = runs.get(("weak", task, plat))
            if rows:
                ps = [r["p"] for r in rows]
                eff = [rows[0]["t"] / r["t"] for r in rows]
                ax.plot(ps, eff, mk + "-", label=f"simulated, {plat}")
                top = max(top, max(eff) + 0.1)
        if ("weak", task, "crossbar") in runs:
            ax.axhline(1.0, color="grey", ls=":", label="ideal")
            ax.set_xscale("log", base=2)
            ax.set_ylim(0, top)
            ax.set_title("weak: T(1) / T(p), " + weak_names.get(task, task), fontsize=9)
            ax.set_xlabel("simulated ranks p (input grows with p)")
            ax.legend(fontsize=7)
        else:
            ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


def plot_sizes(top, bottom, rows):
    """thin at several sizes with the fitted T(n, p), and that formula extrapolated in n."""
    c = fit_sizes(rows)
    for n in sorted({x["n"] for x in rows}):
        sub = sorted((x for x in rows if x["n"] == n), key=lambda x: x["p"])
        ps = [x["p"] for x in sub]
        line = top.plot(ps, [x["t"] for x in sub], "o-", label=f"2^{int(math.log2(n))}")[0]
        top.plot(ps, [sum(size_model(c, n, q)) for q in ps], "--", color=line.get_color())
    top.set_xscale("log", base=2)
    top.set_yscale("log")
    top.set_title("strong: thin, g = 2, n_out = sqrt(n) (2^24, 2^26 timing\n"
                  "only); dashed: T(n, p) fitted to all three", fontsize=9)
    top.set_xlabel("simulated ranks p")
    top.legend(fontsize=7, title="rows", title_fontsize=7)
    ns = [2.0**k for k in range(20, 34)]
    for p, st in ((256, "-"), (4096, "--"), (65536, ":")):
        bottom.plot(ns, [sum(size_model(c, n, p)) for n in ns], st, color="k", label=f"T(n, {p})")
    big = [x for x in rows if x["p"] == 256]
    bottom.plot([x["n"] for x in big], [x["t"] for x in big], "o", label="simulated, p = 256")
    bottom.set_xscale("log", base=2)
    bottom.set_yscale("log")
    bottom.set_title("thin: the fitted T(n, p) extrapolated in n", fontsize=9)
    bottom.set_xlabel("rows n")
    bottom.set_ylabel("seconds")
    bottom.legend(fontsize=7)


if __name__ == "__main__":
    main()
