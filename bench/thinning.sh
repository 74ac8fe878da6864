#!/bin/sh
# bench/thinning.sh - kt_compress (g = 4, n_out = sqrt(n_in), Gaussian kernel sigma^2 = 2d, default
# keys: refine_pool 2, refine_target input) at n_in = 2^16, 2^18, 2^20, d = 2 and 10, on 1 and 2
# ranks, 3 repetitions each (medians go to bench/results/thinning.md).
# Data: 2^16 d = 2: standard normal; otherwise the 8-component mixture of the tests.
# The exact MMD needs zz = (1/n^2) sum_ij k(x_i, x_j) over the input; it depends only on the
# seeded data, was computed once with `bench_thin LOG2N D 0 1` (2 ranks; 5-106 s each) and is
# passed in below. 2^20 has no zz (1.1e12 kernel evaluations): the script prints MMD^2 - zz, the
# MMD "up to a constant", identical across rank counts and comparable between runs.
# Usage: bench/thinning.sh [BUILD_DIR] [extra key=value ...]
set -e
B=${1:-build}
[ $# -gt 0 ] && shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
zz_of() {
  case "$1 $2" in
    "16 2") echo 6.660407491874e-01 ;;
    "16 10") echo 3.410028388642e-01 ;;
    "18 2") echo 1.734627544254e-01 ;;
    "18 10") echo 3.411024847371e-01 ;;
    *) echo 0 ;;
  esac
}
echo "# $(date -u +%Y-%m-%dT%H:%MZ)  $(uname -n)  $(nproc) cores  load: $(uptime | sed 's/.*load/load/')"
for lg in 16 18 20; do
  for d in 2 10; do
    for np in 1 2; do
      mpirun -np $np "$B/tests/thinning/bench_thin" $lg $d 3 "$(zz_of $lg $d)" "$@" | grep -E "^n="
    done
    echo "#   load: $(uptime | sed 's/.*load average: //')"
  done
done
echo "# done $(date -u +%H:%MZ)  load: $(uptime | sed 's/.*load/load/')"
