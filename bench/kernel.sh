#!/usr/bin/env bash
# bench/kernel.sh - kernel evaluation throughput (evaluations/s), Gaussian kernel, 4096 x 4096.
# Usage: bench/kernel.sh [build-dir] [runs]   (default build, 3 runs; each run = best of 3 reps)
# Prints one markdown table row per (mode, d, ranks) with the median over the runs of the best of
# 3 reps, from the wall clock and from each process's CPU time (which discounts the time slices
# lost to other jobs on a shared machine; the slowest rank counts).
# Modes: tile (materialised K), matvec (fused y = K w), screen (the screening mat-vec: single
# precision with a bound per row, its form by d, preparation excluded), dgemm (|a|^2+|b|^2-2AB^T
# through OpenBLAS dgemm + the same exp: a comparison only, the library does not use it).
# Then the GEMM roofline table (below; KD_BENCH_ROOF_D sets its dimensions).
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
# The GEMM roofline (issue 61): OpenBLAS's sgemm and dgemm rates on this core (one thread, the
# same n x n x d shapes) give the pairs per second a GEMM formulation could reach at 2 d flops a
# pair (the exponential not counted); each kernel mode's rate is printed against it (sgemm's for
# the single-precision screening, dgemm's for the double-precision rows). One rank, CPU time.
echo
echo "| d | sgemm GFlop/s | dgemm GFlop/s | mode | evals/s (CPU, median of $runs) | of its roofline |"
echo "|---|---|---|---|---|---|"
for d in ${KD_BENCH_ROOF_D:-16 64 128 784}; do
  rate() { # mode: median CPU figure
    local v=()
    for ((r = 0; r < runs; r++)); do
      v+=("$("$exe" "$1" "$d" "$n" 3 gaussian | sed -n 's/.*cpu_evals\/s \([^ ]*\).*/\1/p')")
    done
    median "${v[@]}"
  }
  gs=$(rate gemm_s) gd=$(rate gemm_d)
  for mode in screen_gemm screen_direct matvec tile; do
    e=$(rate $mode)
    roof=$([ "${mode#screen}" != "$mode" ] && echo "$gs" || echo "$gd")
    echo "| $d | $(awk -v x="$gs" 'BEGIN{printf "%.1f", x/1e9}') |" \
      "$(awk -v x="$gd" 'BEGIN{printf "%.1f", x/1e9}') | $mode | $e |" \
      "$(awk -v e="$e" -v r="$roof" -v d="$d" \
        'BEGIN{if (e < 1) printf "no screening form"; else printf "%.0f %%", 100*e*2*d/r}') |"
  done
done
echo "# uptime after: $(uptime)"
