#!/bin/bash
# kt_series.sh RUNS K... -- BIN... : the kt_compress scale series of bench/RESULTS_scale.md.
# For each K, writes tK.yaml (mK.h5 from gen_mixture_h5.py K, kt_compress g = 4, n_out = 2^(K/2),
# Gaussian kernel ls = 1, seed 1) and runs it RUNS times on 2 ranks with every BIN in turn
# (alternating), printing per run: K, binary, the CLI's load / algorithm / evaluation / total
# seconds, peak RSS of each rank (KB) and the load average. Run it in the directory of the inputs.
# KT_TARGET, when set, is written as the configs' target section (for instance
# KT_TARGET='{self: estimate, cross: estimate}': the MMD by estimate at every size, which leaves the
# algorithm seconds as they are and saves the exact cross term's minute at 2^24).
set -uo pipefail
runs=$1
shift
ks=()
while [ "$1" != "--" ]; do
  ks+=("$1")
  shift
done
shift
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for k in "${ks[@]}"; do
  cat > "t$k.yaml" <<YAML
task: thin
data: {type: hdf5, path: m$k.h5, dataset: x}
kernel: {name: gaussian, ls: 1.0}
algorithm: {name: kt_compress, g: 4, n_out: $((1 << (k / 2)))}
run: {seed: 1}
YAML
  [ -n "${KT_TARGET:-}" ] && echo "target: $KT_TARGET" >> "t$k.yaml"
  for r in $(seq "$runs"); do
    for bin in "$@"; do
      out=$(mpirun -np 2 /usr/bin/time -f "rss %M" "$bin" run "t$k.yaml" -o "o${k}_run.h5" 2>&1)
      t=$(echo "$out" | grep '^time:' | sed 's/^time: *//')
      rss=$(echo "$out" | grep '^rss' | awk '{printf "%s ", $2}')
      echo "2^$k $bin run $r: $t; rss KB $rss; load $(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
