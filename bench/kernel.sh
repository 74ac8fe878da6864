#!/usr/bin/env bash
# bench/kernel.sh - kernel evaluation throughput (evaluations/s), Gaussian kernel, 4096 x 4096.
# Usage: bench/kernel.sh [build-dir] [runs]   (default build, 3 runs; each run = best of 3 reps)
# Prints one markdown table row per (mode, d, ranks) with the median over the runs of the best of
# 3 reps, from the wall clock and from each process's CPU time (which discounts the time slices
# lost to other jobs on a shared machine; the slowest rank counts).
# Modes: tile (materialised K), matvec (fused y = K w), screen (the screening mat-vec: single
# precision with a bound per row, preparation included), dgemm (|a|^2+|b|^2-2AB^T through
# OpenBLAS dgemm + the same exp: a comparison only, the library does not use it).
# With 2 ranks each rank evaluates its half of the rows against all columns.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
runs=${2:-3}
n=${KD_BENCH_N:-4096}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ncores=$(nproc --all)
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
if [ ! -x "$build/tests/unit/kernel/bench_kernel" ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target bench_kernel >/dev/null
fi
exe=$build/tests/unit/kernel/bench_kernel
echo "# $(date -u '+%Y-%m-%d %H:%M UTC')  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" \
     " ${ncores} cores"
echo "# uptime before: $(uptime)"
echo "| mode | d | ranks | evals/s wall (median of $runs) | evals/s CPU time (median of $runs) | all runs (wall; CPU) |"
echo "|---|---|---|---|---|---|"
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for mode in matvec screen tile dgemm; do
  for d in 2 10 100; do
    for np in 1 2; do
      wall=() cpu=()
      for ((r = 0; r < runs; r++)); do
        line=$(mpirun -np "$np" -x OPENBLAS_NUM_THREADS "$exe" "$mode" "$d" "$n" 3 gaussian)
        wall+=("$(sed -n 's/.* evals\/s \([^ ]*\).*/\1/p' <<<"$line")")
        cpu+=("$(sed -n 's/.*cpu_evals\/s \([^ ]*\).*/\1/p' <<<"$line")")
      done
      echo "| $mode | $d | $np | $(median "${wall[@]}") | $(median "${cpu[@]}") | ${wall[*]}; ${cpu[*]} |"
    done
  done
done
echo "# uptime after: $(uptime)"
