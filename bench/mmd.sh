#!/bin/sh
# bench/mmd.sh - exact empirical MMD of a 512-point coreset against a 2^18-point 2-D input
# (Gaussian kernel, ls = 0.5), including the input's own double sum zz, at 1 and 2 ranks.
# Prints every run and the median total seconds per rank count.
# usage: bench/mmd.sh [BUILD_DIR=build] [RUNS=3] [LOG2N=18] [RANKS="1 2"]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
runs=${2:-3}
lg=${3:-18}
ranks=${4:-"1 2"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ ! -x "$build/tests/unit/embed/bench_mmd" ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target bench_mmd >/dev/null
fi
echo "# $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -n)  $(nproc) cores  load:$(uptime | sed 's/.*load average://')"
for np in $ranks; do
  times=""
  i=0
  while [ "$i" -lt "$runs" ]; do
    line=$(mpirun -np "$np" "$build/tests/unit/embed/bench_mmd" "$lg" 512 0.5)
    echo "$line"
    times="$times $(echo "$line" | sed 's/.*total_s \([0-9.]*\).*/\1/')"
    i=$((i + 1))
  done
  med=$(printf '%s\n' $times | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "ranks $np: median total_s $med over $runs runs  (load:$(uptime | sed 's/.*load average://'))"
done
