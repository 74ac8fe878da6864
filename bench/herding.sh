#!/bin/sh
# bench/herding.sh - distributed BPCG herding speed: m = 1e6 candidates from N(0, I_2), Gaussian
# kernel ls = 1, closed-form target, 500 BPCG iterations. For each rank count prints every run
# and the medians of: col_s (one fused kernel column over the local candidates), iter_s (one BPCG
# iteration), their ratio, and the speed-up of iter_s against the first rank count.
# usage: bench/herding.sh [BUILD_DIR=build] [RUNS=3] [M=1000000] [ITERS=500] [RANKS="1 2 4"]
# Ranks beyond the core count are oversubscribed (correctness only there).
# KD_BENCH_YIELD=1 adds --mca mpi_yield_when_idle 1 (waiting ranks yield the core instead of
# busy-polling: on a shared, overloaded machine this is the fairer setting for 2 ranks).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
runs=${2:-3}
m=${3:-1000000}
iters=${4:-500}
ranks=${5:-"1 2 4"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ncores=$(nproc --all)
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
exe=$build/tests/herding/bench_herding
if [ ! -x "$exe" ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target bench_herding >/dev/null
fi
yield=""
[ "${KD_BENCH_YIELD:-0}" = 1 ] && yield="--mca mpi_yield_when_idle 1"
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
field() { echo "$1" | sed "s/.* $2 \([^ ]*\).*/\1/"; }
echo "# $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -n)  ${ncores} cores" \
     "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# mpirun extra flags: ${yield:-none}"
echo "# load before: $(uptime | sed 's/.*load average://')"
base=""
for np in $ranks; do
  cols="" its="" ratios="" cr=""
  i=0
  while [ "$i" -lt "$runs" ]; do
    line=$(mpirun --oversubscribe $yield -np "$np" "$exe" "$m" "$iters" | grep '^algo')
    echo "$line"
    cols="$cols $(field "$line" col_s)"
    its="$its $(field "$line" iter_s)"
    ratios="$ratios $(field "$line" ratio)"
    cr="$cr $(field "$line" cpu_ratio)"
    i=$((i + 1))
  done
  mc=$(median $cols)
  mi=$(median $its)
  mr=$(median $ratios)
  mcr=$(median $cr)
  [ -n "$base" ] || base=$mi
  sp=$(awk -v a="$base" -v b="$mi" 'BEGIN {printf "%.2f", a / b}')
  echo "ranks $np: median col_s $mc  iter_s $mi  ratio $mr  cpu_ratio $mcr  speed-up $sp  (load:$(uptime | sed 's/.*load average://'))"
done
