#!/bin/bash
# fcfw_curve.sh - the per-iteration cost of fully-corrective herding (fcfw) as the active set grows,
# for two kdistill builds side by side (runs alternating A B A B ...): configs/herd_matern32_box.yaml
# (14 400 grid candidates, Matern 3/2) with algorithm.name=fcfw, one rank, ATOMS iterations. From
# each run's /metrics/trace it takes the milliseconds per iteration over the 20 iterations before
# |S| = 100, 200, 400, 800, ... and prints the median per side and size, and the exponent b of
# cost ~ |S|^b between the two largest sizes.
#   bench/fcfw_curve.sh OLD_BIN NEW_BIN [RUNS=3] [ATOMS=1200]
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,8p "$0"; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
a=$(realpath "$1") b=$(realpath "$2") runs=${3:-3} atoms=${4:-1200}
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "# $(date -u '+%Y-%m-%d %H:%M UTC')  $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < runs; i++)); do
  for side in a b; do
    bin=$a
    [ $side = b ] && bin=$b
    "$bin" run "$here/configs/herd_matern32_box.yaml" --quiet --set algorithm.name=fcfw \
      --set algorithm.max_iter="$atoms" --set algorithm.max_atoms=$((atoms + 100)) \
      --output "$work/$side$i.h5" 2>"$work/err" || { cat "$work/err"; exit 1; }
  done
done
/usr/bin/python3 - "$work" "$runs" "$a" "$b" <<'PY'
import sys, h5py, numpy as np
work, runs = sys.argv[1], int(sys.argv[2])
sizes = None
for side, name in (("a", sys.argv[3]), ("b", sys.argv[4])):
    per = {}
    for i in range(runs):
        t = h5py.File("%s/%s%d.h5" % (work, side, i))["metrics/trace"]
        it, s, na = t["iteration"][:], t["seconds"][:], t["n_atoms"][:]
        k = 100
        while True:
            j = int(np.searchsorted(na, k))
            if j >= len(na) or j < 20:
                break
            per.setdefault(k, []).append(1000 * (s[j] - s[j - 20]) / (it[j] - it[j - 20]))
            k *= 2 if k < 800 else 1.5
            k = int(k)
        mmd = t["mmd"][-1]
    ks = sorted(per)
    med = {k: float(np.median(per[k])) for k in ks}
    cells = "  ".join("|S|=%d %.2f" % (k, med[k]) for k in ks)
    b = np.log(med[ks[-1]] / med[ks[-2]]) / np.log(ks[-1] / ks[-2])
    print("%s %s\n  ms/iteration (median of %d): %s\n  exponent %d->%d: %.2f   final MMD %.6e"
          % (side.upper(), name, runs, cells, ks[-2], ks[-1], b, mmd))
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
