#!/bin/bash
# fgt_coverage.sh KDISTILL [TIMEOUT] - which `target.self: fgt` requests run and which are refused
# ("no cell grid fits"), over a grid: d = 1..5, N = 2^10, 2^13, 2^15 target rows, ls = 0.3, 1, 3, 10,
# and three data shapes: N(0, I_d), a tiny box (N(0, 0.01^2 I_d)) and N(0, I_d) with one outlier
# row at (50, ..., 50). Each request is `kdistill run` of task thin (uniform, 16 rows) against
# the data's empirical measure on one rank; a run that takes longer than TIMEOUT s (default 120)
# is counted apart. Prints one line per request and a table per d. docs/targets.md quotes it.
set -uo pipefail
bin=$(realpath "${1:?usage: fgt_coverage.sh KDISTILL [TIMEOUT]}")
tmo=${2:-120}
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
/usr/bin/python3 - <<'PY'
import numpy as np
for d in range(1, 6):
    for e in (10, 13, 15):
        rng = np.random.default_rng(100 * d + e)
        X = rng.standard_normal((2 ** e, d))
        np.save("gauss_%d_%d.npy" % (d, e), X)
        np.save("tiny_%d_%d.npy" % (d, e), 0.01 * X)
        Y = X.copy()
        Y[0] = 50.0
        np.save("outlier_%d_%d.npy" % (d, e), Y)
PY
printf '%-8s %2s %6s %4s  %s\n' shape d N ls result
for d in 1 2 3 4 5; do
  for e in 10 13 15; do
    for shape in gauss tiny outlier; do
      for ls in 0.3 1 3 10; do
        printf 'task: thin\ndata: {type: npy, path: %s_%d_%d.npy}\nkernel: {name: gaussian, ls: %s}\nalgorithm: {name: uniform, n_out: 16}\ntarget: {type: data, self: fgt}\n' \
          "$shape" "$d" "$e" "$ls" >c.yaml
        t0=$(date +%s.%N)
        timeout "$tmo" "$bin" run c.yaml -q -o out.h5 >log.txt 2>&1
        rc=$?
        t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
        if [ $rc = 0 ]; then
          r="ran ($t s)"
        elif [ $rc = 124 ]; then
          r="timeout (> $tmo s)"
        elif grep -q "no cell grid fits" log.txt; then
          r="refused: no cell grid fits"
        else
          r="error: $(grep '^kdistill: error' log.txt | head -1)"
        fi
        printf '%-8s %2d %6d %4s  %s\n' "$shape" "$d" $((1 << e)) "$ls" "$r"
        rm -f out.h5
      done
    done
  done
done | tee lines.txt
echo
echo "d  ran refused timeout other (of 36 per d)"
for d in 1 2 3 4 5; do
  awk -v d=$d '$2 == d {n++; if ($5 == "ran") a++; else if ($5 == "refused:") r++; else if ($5 == "timeout") t++; else o++}
    END {printf "%d  %3d %7d %7d %5d\n", d, a, r, t, o}' lines.txt
done
