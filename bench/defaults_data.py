"""bench/defaults_data.py KDISTILL_BIN GOODPOINTS_SRC - the measurement behind
bench/results/defaults.md (issue 61): which `kt_compress` parameters give a mean MMD <= that of
goodpoints' compresspp_kt (g = 4) on every data set. Called by bench/defaults.sh, which prints
the machine, date and load around it and describes the environment variables.

The data sets, their rows (first n of the 2^16 drawn once per set; digits: its 1,797 rows), the
median-heuristic length scale passed to both sides, g (lowered to log4(n) - 1 at small n) and the
exact MMD to the input rows are bench/dimension_data.py's, imported, not copied. For each data set
and size: goodpoints' coreset MMD for seeds 0..S-1 (cached in WORK/gp.tsv, computed once), and
kdistill's for each variant (a list of `--set` key=value; cached in WORK/kd.tsv per binary
version line, variant and seed). Only MMD is recorded: it is deterministic per seed, so the load
on the machine does not change it. Printed per (data, n): goodpoints' mean MMD, then per variant
its mean MMD, the mean over seeds of the paired ratio kd/gp, the worst (largest) seed's ratio,
and the paired mean ratio to the first variant (the baseline)."""
import os
import subprocess
import sys

import numpy as np

sys.argv = sys.argv[:3]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dimension_data as dd  # noqa: E402  (reads argv: KD_BIN, GP_SRC; imports goodpoints)
import h5py  # noqa: E402

ALL = dd.ALL
DATA = os.environ.get("DEF_DATA", "all").replace("all", ALL).split()
LOG2N = [int(v) for v in os.environ.get("DEF_LOG2N", "14").split()]
DIGITS_LOG2N = [int(v) for v in os.environ.get("DEF_DIGITS_LOG2N", "8 10").split()]
MAX_D_16 = int(os.environ.get("DEF_MAX_D_16", "64"))  # 2^16 only where d <= this
SEEDS = int(os.environ.get("DEF_SEEDS", "5"))
WORK = os.environ.get("DEF_WORK", "/tmp/kd_defaults")
VARIANTS = [v.strip() for v in os.environ.get("DEF_VARIANTS", "default").split(";")]
dd.WORK = WORK  # zz_*.txt (the exact self term) cached here


def version():
    out = subprocess.run([dd.KD_BIN, "--version"], capture_output=True, text=True).stdout
    return out.splitlines()[1].strip()


def load(path, nkey):
    """A cache TSV as {key columns: mmd}."""
    got = {}
    if os.path.exists(path):
        for line in open(path).read().splitlines()[1:]:
            f = line.split("\t")
            got[tuple(f[:nkey])] = float(f[nkey])
    return got


def append(path, header, fields):
    fresh = not os.path.exists(path)
    with open(path, "a") as f:
        if fresh:
            f.write(header + "\n")
        f.write("\t".join(str(v) for v in fields) + "\n")


def kd_mmd(X, xf, m, g, ls, zz, seed, variant):
    of = os.path.join(WORK, "out_%d.h5" % os.getpid())
    sets = [] if variant == "default" else variant.split()
    cmd = dd.kd_command(xf, m, g, ls, seed, of) + sum((["--set", kv] for kv in sets), [])
    subprocess.run(cmd, check=True)
    with h5py.File(of) as f:
        C = f["coreset/points"][:]
    os.remove(of)
    return dd.mmd(C, X, ls, zz)


def main():
    os.makedirs(WORK, exist_ok=True)
    gp_path, kd_path = os.path.join(WORK, "gp.tsv"), os.path.join(WORK, "kd.tsv")
    gp_cache, kd_cache = load(gp_path, 3), load(kd_path, 4)
    ver = version()
    print("kdistill: %s; variants (baseline first): %s" % (ver, " | ".join(VARIANTS)))
    print("seeds 0..%d; per variant: mean MMD, mean kd/gp (paired), worst seed's kd/gp, "
          "mean kd/baseline (paired)" % (SEEDS - 1), flush=True)
    for name in DATA:
        sizes = DIGITS_LOG2N if name == "digits" else LOG2N
        Xall = dd.make(name, 2 ** max(sizes + [16]))
        ls = dd.median_ls(Xall)
        for lg in sizes:
            if lg > 14 and Xall.shape[1] > MAX_D_16:
                continue
            n = 2 ** lg
            X, m, g = np.ascontiguousarray(Xall[:n]), int(round(np.sqrt(n))), dd.g_of(lg)
            key = "%s_%d_%s" % (name, lg, dd.hashlib.sha1(X.tobytes()).hexdigest()[:12])
            xf = os.path.join(WORK, "x_%s.npy" % key)
            if not os.path.exists(xf):
                np.save(xf, X)
            zz = dd.zz_of(X, ls, key)
            gp = []
            for s in range(SEEDS):
                k = (key, str(g), str(s))
                if k not in gp_cache:
                    _, Cg = dd.run_gp(X, g, ls, s)
                    gp_cache[k] = dd.mmd(Cg, X, ls, zz)
                    append(gp_path, "key\tg\tseed\tgp_mmd", list(k) + ["%.10e" % gp_cache[k]])
                gp.append(gp_cache[k])
            gp = np.array(gp)
            print("%-8s d=%-4d n=2^%d m=%d g=%d ls=%.4g  goodpoints mean MMD %.4e" % (
                name, X.shape[1], lg, m, g, ls, gp.mean()))
            base = None
            for v in VARIANTS:
                kd = []
                for s in range(SEEDS):
                    k = (ver, key, v, str(s))
                    if k not in kd_cache:
                        kd_cache[k] = kd_mmd(X, xf, m, g, ls, zz, s, v)
                        append(kd_path, "version\tkey\tvariant\tseed\tkd_mmd",
                               list(k) + ["%.10e" % kd_cache[k]])
                    kd.append(kd_cache[k])
                kd = np.array(kd)
                base = kd if base is None else base
                r = kd / gp
                print("    %-62s %.4e  %.3f  %.3f  %.3f" % (
                    v, kd.mean(), r.mean(), r.max(), (kd / base).mean()), flush=True)


if __name__ == "__main__":
    main()
