#!/bin/bash
# scale.sh - one configuration at p = 1, 2, 4, ... simulated ranks (SimGrid SMPI; README.md here):
#   bench/sim/scale.sh SMPI_BUILD CONFIG.yaml [PLATFORM [MAX_P [SPEED]]]
# SMPI_BUILD: a build of the SMPI variant (CC=smpicc cmake -DKD_SMPI=ON; its kd_sim). PLATFORM:
# crossbar (default) or fattree (platform.sh); MAX_P: 256 by default (fattree: at least 16);
# SPEED: the simulated hosts' speed and smpi/host-speed, equal (default 1Gf), so that a rank's
# computing time is the host's measured time for it. Prints per p the simulated seconds of the
# algorithm and of the whole job (configuration, inputs, evaluation), the host's wall seconds and
# the result's fingerprint, which must be the same on every line. Every simulated rank computes
# (no SMPI_SAMPLE shortcuts), and the host runs them one after another: size the input so that
# its whole computation fits the host.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: scale.sh SMPI_BUILD CONFIG.yaml [crossbar|fattree [MAX_P [SPEED]]]" >&2; exit 2; }
build=$(realpath "$1") cfg=$(realpath "$2") plat=${3:-crossbar} maxp=${4:-256} speed=${5:-1Gf}
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$build/kd_sim" ] || { echo "scale.sh: $build/kd_sim not found (build the SMPI variant)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
hosts=$maxp
[ "$plat" = fattree ] && hosts=$(( (maxp + 15) / 16 * 16 ))
bash "$here/platform.sh" "$plat" "$hosts" "$speed" "$work/p.xml" "$work/p.hosts"
export OPENBLAS_NUM_THREADS=1
printf '%6s %14s %14s %10s  %s\n' ranks sim_alg_s sim_job_s host_s fingerprint
for ((p = 1; p <= maxp; p *= 2)); do
  t0=$(date +%s.%N)
  line=$(cd "$work" && smpirun -np "$p" -platform p.xml -hostfile p.hosts \
    --cfg=smpi/coll-selector:mpich --cfg=smpi/host-speed:"$speed" "$build/kd_sim" "$cfg" \
    2>"$work/err.txt" | grep '^kd_sim ') || { echo "p = $p failed:" >&2; tail -5 "$work/err.txt" >&2; exit 1; }
  t1=$(date +%s.%N)
  read -r alg job fp < <(awk '{for (i = 1; i < NF; i++) { if ($i == "algorithm_seconds") a = $(i + 1);
    if ($i == "job_seconds") j = $(i + 1); if ($i == "fingerprint") f = $(i + 1) } print a, j, f}' <<<"$line")
  printf '%6d %14s %14s %10.2f  %s\n' "$p" "$alg" "$job" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$fp"
done
