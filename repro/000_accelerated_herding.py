"""000_accelerated_herding.py - Tsuji & Tanaka, "Acceleration of the kernel herding algorithm by
improved gradient approximation" (paper 000), Figures 4 and 6:
  fig4: Gaussian kernel exp(-|x-y|^2), density ~ exp(-|x|^2) on [-1,1]^2 (configs/
        herd_gauss_truncnormal.yaml, candidates a 128 x 128 grid): worst-case error (MMD) vs
        nodes and vs time for herding with line search (fw_linesearch), plain herding (fw_eq),
        Alg. 5 (pmp) and Alg. 6 (gcos);
  fig5: Matern 3/2 kernel (rho = sqrt(3)), uniform on [-1,1]^2 (configs/herd_matern32_box.yaml:
        the empirical measure of a 120 x 120 midpoint grid, also the candidates): line search,
        pmp, gcos and their fully-corrective variants fc_pmp, fc_gcos;
  fig6: energy kernel 8/3 - |x-y| on S^2, uniform (configs/herd_energy_sphere.yaml, 20000
        candidates): fully-corrective herding (fcfw), FC-PMP (fc_pmp), FC-gcos (fc_gcos); the
        optimal rate is n^(-3/4).
Usage: /usr/bin/python3 repro/000_accelerated_herding.py [--smoke]   (2 cores, ~1 min; smoke:
seconds). Writes repro/out/000_fig{4,5,6}.csv and repro/figures/000_fig{4,5,6}.png (full run only), and prints the table of docs/reproduction.md. With --smoke it
asserts what the paper claims at small sizes and exits 1 if a claim fails."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import repro_common as rc  # noqa: E402

SMOKE = "--smoke" in sys.argv
OUT = os.environ.get("KD_REPRO_OUT") or os.path.join(rc.ROOT, "repro", "out")
ITERS = 40 if SMOKE else 600

GAUSS = """task: herd
candidates: {type: grid, d: 2, lo: [-1, -1], hi: [1, 1], grid_n: %d}
target: {type: trunc_gaussian, d: 2, mean: [0, 0], sd: [0.7071067811865476, 0.7071067811865476],
         lo: [-1, -1], hi: [1, 1]}
kernel: {name: gaussian, ls: 0.7071067811865476}
run: {seed: 1}
""" % (48 if SMOKE else 128)
SPHERE = """task: herd
candidates: {type: sphere, d: 3, n: %d}
target: {type: sphere, d: 3}
kernel: {name: energy}
run: {seed: 1}
""" % (3000 if SMOKE else 20000)
MATERN = """task: herd
candidates: {type: grid, d: 2, lo: [-1, -1], hi: [1, 1], grid_n: %d}
target: {type: data}
kernel: {name: matern32, ls: 1.7320508075688772}
run: {seed: 1}
""" % (40 if SMOKE else 120)
# the candidate sets and targets of configs/herd_gauss_truncnormal.yaml, herd_matern32_box.yaml
# and herd_energy_sphere.yaml
FIGS = {"fig4": (GAUSS, ["fw_linesearch", "fw_eq", "pmp", "gcos"]),
        "fig5": (MATERN, ["fw_linesearch", "pmp", "gcos", "fc_pmp", "fc_gcos"]),
        "fig6": (SPHERE, ["fcfw", "fc_pmp", "fc_gcos"])}
ACCEL = {"pmp", "gcos", "fc_pmp", "fc_gcos"}  # K_max = 5, delta = 1e-4 as in the shipped configs


def main():
    os.makedirs(OUT, exist_ok=True)
    failures = []
    tables = {}
    for fig, (base, algos) in FIGS.items():
        rows, curves = [], {}
        for a in algos:
            out = os.path.join(OUT, "000_%s_%s.h5" % (fig, a))
            cfg = os.path.join(OUT, "000_%s_%s.yaml" % (fig, a))
            with open(cfg, "w") as f:
                f.write(base + "algorithm: {name: %s, max_iter: %d%s}\n" %
                        (a, ITERS, ", K_max: 5, delta: 0.0001" if a in ACCEL else ""))
            rc.run(cfg, out)
            it, atoms, mmd, sec = rc.trace(out)
            curves[a] = (atoms, mmd, sec)
            rows += [(a, int(i), int(n), float(m), float(s)) for i, n, m, s in
                     zip(it, atoms, mmd, sec)]
        rc.write_csv(os.path.join(OUT, "000_%s.csv" % fig),
                     ["algorithm", "iteration", "atoms", "mmd", "seconds"], rows)
        tables[fig] = curves
        if not SMOKE:
            plot(fig, curves)
    report(tables, failures)
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


def report(tables, failures):
    marks = [10, 20, 40] if SMOKE else [25, 50, 100, 200, 400]
    for fig, curves in tables.items():
        print("%s: MMD at n nodes (first iteration with >= n atoms); slope over atoms >= 10" % fig)
        print("| algorithm | " + " | ".join("n = %d" % n for n in marks) +
              " | slope | seconds |")
        print("|---|" + "---|" * (len(marks) + 2))
        for a, (atoms, mmd, sec) in curves.items():
            keep = atoms >= 10
            s = rc.slope(atoms[keep], mmd[keep]) if keep.sum() > 3 else float("nan")
            vals = " | ".join("%.3e" % rc.at_atoms(atoms, mmd, n) for n in marks)
            print("| %s | %s | %.2f | %.3f |" % (a, vals, s, sec[-1]))
        for a, (atoms, mmd, sec) in curves.items():
            if not (np.all(np.isfinite(mmd)) and mmd[-1] < mmd[0]):
                failures.append("%s %s: MMD does not decrease" % (fig, a))
    f4 = tables["fig4"]
    n = marks[1]
    # paper 000, Sec. 4.2: "the fully-corrective approach outperforms the original methods"
    f5 = tables["fig5"]
    for a, b in (("fc_pmp", "pmp"), ("fc_gcos", "gcos")):
        if not rc.at_atoms(*f5[a][:2], n) < rc.at_atoms(*f5[b][:2], n):
            failures.append("fig5: %s not below %s at n = %d" % (a, b, n))
    # paper 000, Sec. 4: "the proposed algorithms outperformed line search"
    for a in ("pmp", "gcos"):
        if not rc.at_atoms(f4[a][0], f4[a][1], n) < rc.at_atoms(*f4["fw_linesearch"][:2], n):
            failures.append("fig4: %s not below line-search herding at n = %d" % (a, n))


def plot(fig, curves):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    f, ax = plt.subplots(1, 2, figsize=(8, 3.2))
    for a, (atoms, mmd, sec) in curves.items():
        ax[0].loglog(atoms, mmd, label=a)
        ax[1].loglog(np.maximum(sec, 1e-4), mmd, label=a)
    if fig == "fig6":
        x = np.array([10.0, 300.0])
        ax[0].loglog(x, curves["fcfw"][1][-1] * (x / x[-1]) ** -0.75, "k:", label="n^-3/4")
    ax[0].set_xlabel("nodes")
    ax[1].set_xlabel("seconds (2 ranks)")
    ax[0].set_ylabel("MMD (worst-case error)")
    ax[0].legend(fontsize=7)
    title = {"fig4": "Fig. 4: Gaussian kernel, d = 2",
             "fig5": "Fig. 5: Matern 3/2 kernel, uniform on [-1,1]^2 (rate n^-5/4 optimal)",
             "fig6": "Fig. 6: energy kernel on S^2"}[fig]
    f.suptitle("paper 000, " + title, fontsize=9)
    f.tight_layout()
    f.savefig(os.path.join(rc.ROOT, "repro", "figures", "000_%s.png" % fig), dpi=80)


if __name__ == "__main__":
    sys.exit(main())
