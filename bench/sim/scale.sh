#!/bin/bash
# scale.sh - one configuration at p = 1, 2, 4, ... simulated ranks (SimGrid SMPI; README.md here):
#   bench/sim/scale.sh SMPI_BUILD CONFIG.yaml [PLATFORM [MAX_P [SPEED]]] [-- key=value ...]
# SMPI_BUILD: a build of the SMPI variant (CC=smpicc cmake -DKD_SMPI=ON; its kd_sim). PLATFORM:
# crossbar (default) or fattree (platform.sh); MAX_P: 256 by default (fattree: at least 16);
# SPEED: the simulated hosts' speed (default 1Gf); smpi/host-speed is KD_SIM_HOST_SPEED, by
# default SPEED, so that a rank's computing time is the host's measured time for it (calibrate.sh
# prints both for a target machine); the links' latency is KD_SIM_LATENCY (default 1us).
# key=value settings after -- go to every run; {p} in a value is replaced by p and the value
# evaluated, so `-- data.n='65536*{p}'` is a weak-scaling series (65536 rows per rank). Prints
# per p the simulated seconds of the algorithm, of the whole job (configuration, inputs,
# evaluation) and of the context's set-up before it, the busiest rank's communication seconds
# and operations over the job (kd_sim with KD_SIM_VERBOSE=1), the host's wall seconds and the
# result's fingerprint, which must be the same on every line when no setting depends on p.
# Every simulated rank computes, and the host runs them one after another: size the input so
# that its whole computation fits the host. The exception: with KD_SIM_SAMPLE_LEAVES=N in the
# environment, thin's leaf bins on generated rows are sampled (N of them run, the others are
# charged their mean simulated time; README.md, "Timing-only runs at large n"), a table for
# timing only: its fingerprints are not the job's.
set -euo pipefail
usage="usage: scale.sh SMPI_BUILD CONFIG.yaml [crossbar|fattree [MAX_P [SPEED]]] [-- key=value ...]"
[ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
pos=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do pos+=("$1"); shift; done
[ $# -gt 0 ] && shift # the settings after --
[ ${#pos[@]} -ge 2 ] || { echo "$usage" >&2; exit 2; }
build=$(realpath "${pos[0]}") cfg=$(realpath "${pos[1]}") plat=${pos[2]:-crossbar}
maxp=${pos[3]:-256} speed=${pos[4]:-1Gf} hspeed=${KD_SIM_HOST_SPEED:-${pos[4]:-1Gf}}
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$build/kd_sim" ] || { echo "scale.sh: $build/kd_sim not found (build the SMPI variant)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
hosts=$maxp
[ "$plat" = fattree ] && hosts=$(( (maxp + 15) / 16 * 16 ))
bash "$here/platform.sh" "$plat" "$hosts" "$speed" "$work/p.xml" "$work/p.hosts" "${KD_SIM_LATENCY:-1us}"
export OPENBLAS_NUM_THREADS=1
[ -n "${KD_SIM_SAMPLE_LEAVES:-}" ] &&
  echo "# timing only: leaf bins sampled (KD_SIM_SAMPLE_LEAVES=$KD_SIM_SAMPLE_LEAVES), fingerprints not the job's"
printf '%6s %14s %14s %14s %12s %8s %10s  %s\n' ranks sim_alg_s sim_job_s sim_ctx_s comm_s_max ops_max host_s fingerprint
for ((p = 1; p <= maxp; p *= 2)); do
  sets=() # key=value, with {p} in a value replaced by p and the value then evaluated: n='4096*{p}'
  for kv in "$@"; do
    v=${kv#*=}
    [[ $v == *"{p}"* ]] && v=$(( ${v//\{p\}/$p} ))
    sets+=("${kv%%=*}=$v")
  done
  t0=$(date +%s.%N)
  line=$(cd "$work" && KD_SIM_VERBOSE=1 smpirun -np "$p" -platform p.xml -hostfile p.hosts \
    --cfg=smpi/coll-selector:mpich --cfg=smpi/host-speed:"$hspeed" "$build/kd_sim" "$cfg" \
    ${sets[@]+"${sets[@]}"} 2>"$work/err.txt" | grep '^kd_sim ') || { echo "p = $p failed:" >&2; tail -5 "$work/err.txt" >&2; exit 1; }
  t1=$(date +%s.%N)
  read -r alg job ctx cs ops fp < <(awk '{for (i = 1; i < NF; i++) { if ($i == "algorithm_seconds") a = $(i + 1);
    if ($i == "job_seconds") j = $(i + 1); if ($i == "context_seconds") c = $(i + 1);
    if ($i == "comm_seconds_max") s = $(i + 1); if ($i == "comm_ops_max") o = $(i + 1);
    if ($i == "fingerprint") f = $(i + 1) } print a, j, c, s, o, f}' <<<"$line")
  printf '%6d %14s %14s %14s %12s %8s %10.2f  %s\n' "$p" "$alg" "$job" "$ctx" "$cs" "$ops" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$fp"
done
