#!/bin/bash
# calibrate.sh - the speeds that make simulated compute times those of a target machine
# (bench/sim/README.md, "Calibration"):
#   bench/sim/calibrate.sh BUILD [TARGET_RATE]
# BUILD: a normal (real MPI) build with its benchmarks (tests/unit/kernel/bench_kernel).
# Measures this host's rate of the fused Gaussian mat-vec (d = 2, 4096 x 4096, one rank, the
# median of 5 runs of the best of 3) in kernel evaluations per second, and prints the settings
# that take one kernel evaluation as SimGrid's unit of work ("f"):
#   HOST_SPEED  smpi/host-speed: this host's rate, so that a burst of t host seconds counts as
#               t * HOST_SPEED evaluations;
#   SPEED       the simulated nodes' speed: TARGET_RATE, the same benchmark's rate on one core
#               of the target machine (default: this host's, which simulates this host's cores).
# Then `KD_SIM_HOST_SPEED=$HOST_SPEED bench/sim/scale.sh SMPI_BUILD CONFIG PLATFORM MAX_P $SPEED`
# scales every rank's computing time by HOST_SPEED / SPEED. Take it on a quiet machine (uptime is
# printed): the rate moves with the load.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: calibrate.sh BUILD [TARGET_RATE]" >&2; exit 2; }
exe=$1/tests/unit/kernel/bench_kernel
[ -x "$exe" ] || { echo "calibrate.sh: $exe not found (build the benchmarks)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# uptime: $(uptime)"
rates=()
for _ in 1 2 3 4 5; do
  line=$(mpirun -np 1 "$exe" matvec 2 4096 3 gaussian)
  rates+=("$(sed -n 's/.* evals\/s \([^ ]*\).*/\1/p' <<<"$line")")
done
host=$(printf '%s\n' "${rates[@]}" | sort -g | awk '{a[NR] = $1} END {printf "%.4g", a[3]}')
target=${2:-$host}
echo "# runs (evaluations/s): ${rates[*]}"
echo "HOST_SPEED=${host}f"
echo "SPEED=${target}f"
echo "# simulated compute = host compute x $(awk -v h="$host" -v t="$target" 'BEGIN { printf "%.3f", h / t }')"
