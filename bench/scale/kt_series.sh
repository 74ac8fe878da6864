#!/bin/bash
# kt_series.sh RUNS K... -- BIN... : the kt_compress scale series of bench/results/scale.md.
# For each K, writes tK.yaml (mK.h5 from gen_mixture_h5.py K, kt_compress g = 4, n_out = 2^(K/2),
# Gaussian kernel ls = 1, seed 1) and runs it RUNS times on 2 ranks with every BIN in turn
# (alternating), printing per run: K, binary, the CLI's load / algorithm / evaluation / total
# seconds, peak RSS of each rank (KB), the load average before the run and the CPU time the
# hypervisor stole from this VM during it (steal, in seconds summed over the CPUs: more than a few
# tenths means a neighbour took cycles and the run's time is suspect). Run it in the directory of
# the inputs.
# KT_TARGET, when set, is written as the configs' target section (for instance
# KT_TARGET='{self: estimate, cross: estimate}': the MMD by estimate at every size, which leaves the
# algorithm seconds as they are and saves the exact cross term's minute at 2^24).
# KT_ORDER=interleave runs every size once per round (round 1: each K with each BIN, then round 2,
# ...) instead of all rounds of one size before the next: a growth ratio then compares runs taken
# minutes apart, not a quarter of an hour. KT_MAX_LOAD, when set (e.g. 1.5), waits before each run
# until the one-minute load average is below it.
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
hz=$(getconf CLK_TCK)

steal_ticks() {
  awk '/^cpu /{print $9}' /proc/stat
}

run_one() { # run_one K ROUND BIN
  local k=$1 r=$2 bin=$3 load s0 s1 out t rss
  if [ -n "${KT_MAX_LOAD:-}" ]; then
    while awk -v m="$KT_MAX_LOAD" '{exit !($1 >= m)}' /proc/loadavg; do sleep 5; done
  fi
  load=$(cut -d' ' -f1 /proc/loadavg)
  s0=$(steal_ticks)
  out=$(mpirun -np 2 /usr/bin/time -f "rss %M" "$bin" run "t$k.yaml" -o "o${k}_run.h5" 2>&1)
  s1=$(steal_ticks)
  t=$(echo "$out" | grep '^time:' | sed 's/^time: *//')
  rss=$(echo "$out" | grep '^rss' | awk '{printf "%s ", $2}')
  echo "2^$k $bin run $r: $t; rss KB $rss; load $load; steal $(awk -v t=$((s1 - s0)) -v hz="$hz" \
    'BEGIN{printf "%.2f", t / hz}') s"
}

for k in "${ks[@]}"; do
  cat > "t$k.yaml" <<YAML
task: thin
data: {type: hdf5, path: m$k.h5, dataset: x}
kernel: {name: gaussian, ls: 1.0}
algorithm: {name: kt_compress, g: 4, n_out: $((1 << (k / 2)))}
run: {seed: 1}
YAML
  [ -n "${KT_TARGET:-}" ] && echo "target: $KT_TARGET" >> "t$k.yaml"
done
if [ "${KT_ORDER:-}" = interleave ]; then
  for r in $(seq "$runs"); do
    for k in "${ks[@]}"; do
      for bin in "$@"; do run_one "$k" "$r" "$bin"; done
    done
  done
else
  for k in "${ks[@]}"; do
    for r in $(seq "$runs"); do
      for bin in "$@"; do run_one "$k" "$r" "$bin"; done
    done
  done
fi
