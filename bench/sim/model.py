#!/usr/bin/env python3
"""model.py - the scaling model of docs/hpc.md section 7 against simulated runs (bench/sim).

    python3 bench/sim/model.py RUNS.txt [-o FIGURE.png]

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


def main():
    args = sys.argv[1:]
    out = None
    if "-o" in args:
        i = args.index("-o")
        out = args[i + 1]
        del args[i : i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    runs = read_runs(args[0])
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
    if out:
        plot(runs, fits, out)


def plot(runs, fits, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = [t for t in ("thin20", "herd", "ctt") if ("strong", t, "crossbar") in runs]
    names = {"thin20": "thin (kt_compress), 2^20 rows", "herd": "herd (bpcg), 2^18 candidates",
             "ctt": "ctt, 2 x 2^18 rows, s = 256"}
    weak_names = {"thin20": "2^16 rows per rank", "herd": "2^14 candidates per rank",
                  "ctt": "2 x 2^14 rows per rank, s = 4p"}
    fig, axes = plt.subplots(2, len(tasks), figsize=(4.2 * len(tasks), 7.2), squeeze=False)
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
        rows = runs.get(("weak", task, "crossbar"))
        if rows:
            ps = [r["p"] for r in rows]
            ax.plot(ps, [rows[0]["t"] / r["t"] for r in rows], "o-", label="simulated, crossbar")
            ax.axhline(1.0, color="grey", ls=":", label="ideal")
            ax.set_xscale("log", base=2)
            ax.set_ylim(0, max(1.1, max(rows[0]["t"] / r["t"] for r in rows) + 0.1))
            ax.set_title("weak: T(1) / T(p), " + weak_names.get(task, task), fontsize=9)
            ax.set_xlabel("simulated ranks p (input grows with p)")
            ax.legend(fontsize=7)
        else:
            ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


if __name__ == "__main__":
    main()
