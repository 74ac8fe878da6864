#!/bin/sh
# bench/fgt.sh - the MMD of a 512-point coreset against 2^LOG2N rows of a 3-component mixture
# (Gaussian kernel, length scale LS) by the fast Gauss transform (target.self: fgt), with its
# bound, at RANKS; EXACT=1 computes the exact double sum beside it (feasible to about 2^18).
# Prints every run and the median fgt seconds per rank count.
# usage: bench/fgt.sh [BUILD_DIR=build] [RUNS=3] [LOG2N=22] [RANKS="1 2"] [LS=0.5] [EXACT=0] [D=2]
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
runs=${2:-3}
lg=${3:-22}
ranks=${4:-"1 2"}
ls=${5:-0.5}
exact=${6:-0}
d=${7:-2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
prog=$build/tests/unit/embed/test_fgt_exact
if [ ! -x "$prog" ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target test_fgt_exact >/dev/null
fi
echo "# $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -n)  $(nproc) cores  load:$(uptime | sed 's/.*load average://')"
for np in $ranks; do
  times=""
  i=0
  while [ "$i" -lt "$runs" ]; do
    line=$(mpirun -np "$np" "$prog" "$lg" 512 "$ls" "$exact" "$d")
    echo "$line"
    times="$times $(echo "$line" | sed 's/.*fgt_s \([0-9.]*\).*/\1/')"
    i=$((i + 1))
  done
  med=$(printf '%s\n' $times | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "ranks $np: median fgt_s $med over $runs runs  (load:$(uptime | sed 's/.*load average://'))"
done
