#!/bin/sh
# bench/ctt.sh - Compress Then Test benchmarks (issue 5). Prints the figures recorded in
# bench/results/ctt.md. Usage: bench/ctt.sh [build-dir] [section...]
#   sections: ref time exact power power16 (default: all)
# Needs a Release build with tests (build/tests/ctt/ctt_bench). Runs as root with Open MPI.
set -eu
BUILD=${1:-build}
shift 2>/dev/null || true
SECTIONS=${*:-"ref time exact power power16"}
BENCH="$BUILD/tests/ctt/ctt_bench"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
run() { np=$1; shift; mpirun -np "$np" --oversubscribe "$BENCH" "$@"; }

echo "# ctt bench on $(hostname), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
echo "# load: $(uptime)"
for sec in $SECTIONS; do
  case $sec in
  ref)
    # the Python/Cython reference setting: m = n = 2^14, d = 2, s = 32, B = 39, g = 1, Gaussian
    # exp(-|x-y|^2 / 8) (goodpoints bandwidth^2 = 8, i.e. ls = 2), mean shift 0.05 on axis 0
    for np in 1 2; do
      run $np time m=16384 n=16384 d=2 s=32 g=1 B=39 ls=2 shift=0.05 exact=0 reps=7
    done
    run 2 study m=16384 n=16384 d=2 s=32 g=1 B=39 ls=2 shift=0.05 exact=0 T=50 seed=3
    ;;
  time)
    # time per test, s = 32, B = 100, g = 0..3, d = 2 and 10, m = n = 2^16 and 2^18
    for m in 65536 262144; do
      for d in 2 10; do
        for np in 1 2; do
          run $np time m=$m n=$m d=$d s=32 g=0,1,2,3 B=100 exact=0 reps=3 shift=0.02
        done
      done
    done
    ;;
  exact)
    # the quadratic exact test at m = n = 2^16 (one run each: minutes per test)
    run 2 time m=65536 n=65536 d=2 s=32 g=1 B=100 exact=1 reps=1 shift=0.02
    run 1 time m=65536 n=65536 d=2 s=32 g=1 B=100 exact=1 reps=1 shift=0.02
    run 2 time m=65536 n=65536 d=10 s=32 g=1 B=100 exact=1 reps=1 shift=0.02
    ;;
  power)
    # power on the same replicates, m = n = 2^13, shift 0.07 (= 0.14 sqrt(2^11 / 2^13))
    run 2 study m=8192 n=8192 d=2 s=32 g=0,1,2,3 B=100 exact=1 T=100 shift=0.07 seed=5
    ;;
  power16)
    # CTT power at m = n = 2^16, shift 0.0247 (= 0.14 sqrt(2^11 / 2^16)); exact too slow for T=100
    run 2 study m=65536 n=65536 d=2 s=32 g=0,1,2,3 B=100 exact=0 T=100 shift=0.0247 seed=5
    ;;
  esac
done
