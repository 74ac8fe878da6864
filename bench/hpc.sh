#!/bin/bash
# bench/hpc.sh - sweep throughput against the rank grouping: the 8-point KT-Compress sweep of
# tests/slurm/configs/sweep_requeue.yaml (n = 16384, 128 points out, seeds 1..8) on NP ranks with
# sweep.groups = 1 (every point on all ranks) .. NP (one rank per point); median wall time of
# REPS runs each, and the largest relative MMD difference between groupings (round-off only).
# usage: bench/hpc.sh [BUILD_DIR] [NP] [REPS]       (results: bench/results/hpc.md)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
np=${2:-2}
reps=${3:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d /tmp/kd_bench_hpc.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(uname -r); load: $(uptime | sed 's/.*load average: //')"
for g in $(seq 1 "$np"); do
  times=()
  for _ in $(seq "$reps"); do
    rm -rf "$work/g$g"
    t0=$(date +%s.%N)
    mpirun -np "$np" --oversubscribe "$build/kdistill" run "$repo/tests/slurm/configs/sweep_requeue.yaml" \
      --set "sweep.dir=$work/g$g" --set "sweep.groups=$g" --output "$work/best$g.h5" -q > /dev/null
    times+=("$(echo "$(date +%s.%N) - $t0" | bc)")
  done
  med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (reps + 1) / 2 ))p")
  echo "groups=$g ranks/point=$(( np / g )): median wall ${med} s over $reps runs (${times[*]})"
done
python3 - "$work" "$np" <<'PY'
import csv, sys
w, np_ = sys.argv[1], int(sys.argv[2])
cols = [[float(r["mmd"]) for r in csv.DictReader(open("%s/g%d/summary.csv" % (w, g)))] for g in range(1, np_ + 1)]
print("max relative MMD difference between groupings: %.2e" %
      max(abs(a - b) / abs(b) for c in cols[1:] for a, b in zip(c, cols[0])))
PY
echo "load after: $(uptime | sed 's/.*load average: //')"
