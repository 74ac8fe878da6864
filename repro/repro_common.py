"""repro_common.py - shared helpers of the reproduction scripts (docs/reproduction.md): run the
kdistill binary on a shipped config with overrides, read an output's trace and metrics, fit
log-log slopes, write CSV tables. Standard library, numpy and h5py only."""
import csv
import os
import subprocess
import sys

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def binary():
    """The kdistill binary: $KD_BIN, else build/kdistill under the repository."""
    b = os.environ.get("KD_BIN") or os.path.join(ROOT, "build", "kdistill")
    if not os.path.exists(b):
        sys.exit("repro: no kdistill binary at %s (build first, or set KD_BIN)" % b)
    return b


def run(config, out, sets=(), ranks=2):
    """Run CONFIG (absolute, or relative to the repository) with --set overrides into OUT."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", binary(), "run",
           os.path.join(ROOT, config), "-q", "--output", out]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("repro: %s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))


def trace(path):
    """(iteration, atoms, mmd, seconds) arrays of an output's /metrics/trace."""
    with h5py.File(path, "r") as f:
        t = f["metrics/trace"]
        return (t["iteration"][...], t["n_atoms"][...], t["mmd"][...], t["seconds"][...])


def metric(path, name):
    with h5py.File(path, "r") as f:
        return float(f["metrics"].attrs[name])


def slope(x, y):
    """Least-squares slope of log y against log x."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = (x > 0) & (y > 0)
    return float(np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)[0])


def write_csv(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def at_atoms(atoms, mmd, n):
    """The MMD of the first trace row with at least n atoms (nan if never reached)."""
    i = np.nonzero(np.asarray(atoms) >= n)[0]
    return float(mmd[i[0]]) if len(i) else float("nan")


def ctt_matches_exact(top, ex, timed):
    """Paper 003's "CTT ... matches the power of an exact MMD test in a fraction of the time": the
    failed parts for CTT's largest g, top = (name, g, power, se, seconds), against the exact
    test's ex: power within 3 standard errors, and (timed: the full run only, since a loaded
    machine would make a smoke test flaky) less than half the exact test's time."""
    failures = []
    if not top[2] >= ex[2] - 3 * np.hypot(top[3], ex[3]) - 1e-12:
        failures.append("ctt g=%d power %.3f below exact %.3f by > 3 SE" % (top[1], top[2],
                                                                             ex[2]))
    if timed and not top[4] < 0.5 * ex[4]:
        failures.append("ctt g=%d not below half the exact test's time" % top[1])
    return failures


def finish(failures):
    """Print the failed claims (if any) and return the script's exit status."""
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


def pyplot():
    """matplotlib.pyplot with the file-only Agg backend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_figure(fig, title, name, dpi=80):
    """Title, tight layout and repro/figures/NAME for a figure of the full run."""
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(ROOT, "repro", "figures", name), dpi=dpi)
