#!/usr/bin/env bash
# bench/dimension.sh - issue 61's side-by-side run: kdistill kt_compress (g = 4, 1 rank) against
# goodpoints' compresspp_kt (g = 4, one core), n rows -> sqrt(n), Gaussian kernel with the median
# heuristic's length scale passed to both, on N(0, I_d) (d = 2, 8, 32, 128), image patches cut
# from scikit-image's bundled photographs (4x4, 8x8 grey, 8x8x3 colour, 28x28 grey: d = 16, 64,
# 192, 784) and scikit-learn's digits (d = 64, small n). The two sides alternate per run; the
# table gives the median time of the runs, their ratio, and the mean exact MMD of each coreset
# over the runs' seeds (one numpy formula for both). bench/dimension_data.py does the work and
# documents the details; results go to bench/results/dimension.md by hand.
# Usage: bench/dimension.sh [BUILD_DIR] [GP_SRC]
#   BUILD_DIR  holds the kdistill CLI (default: build); KD_BIN overrides the binary itself.
#   GP_SRC     a goodpoints source tree with its Cython extensions built in place (default
#              /tmp/gp/src; built outside this repository as bench/results/dimension.md says; its
#              commit is printed from GP_SRC/REVISION when that file exists).
# Environment (subsets and the smoke run):
#   DIM_DATA          data sets, default all = "gauss2 gauss8 gauss32 gauss128 patch4 patch8 patch8c
#                     patch28 digits"
#   DIM_LOG2N         sizes log2 n, default "14 16"; DIM_DIGITS_LOG2N for digits, default "8 10"
#   DIM_RUNS          alternating runs (seeds 0..R-1), default 5 (>= 3 for a median time)
#   DIM_WORK          work directory for inputs, outputs, runs.tsv, table.txt (default
#                     /tmp/kd_dimension; the exact zz of each input is cached there)
#   DIM_G             g of both sides, default 4 (lowered to log4(n) - 1 at small n)
#   DIM_KD_SET        extra kdistill keys, e.g. "algorithm.threshold=tight"
# Smoke (< 1 minute): DIM_LOG2N=10 DIM_DIGITS_LOG2N=8 DIM_RUNS=3 bench/dimension.sh build-h
set -euo pipefail
. "$(dirname "$0")/gp_env.sh"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)
echo "# $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -n)  $cpu  $(nproc --all) cores"
echo "# kdistill $kd: $("$kd" --version 2>&1 | sed -n 2p)"
echo "# goodpoints $gp: $(cat "$gp/REVISION" 2>/dev/null || echo "commit unknown")"
echo "# command: DIM_DATA='${DIM_DATA:-all}' DIM_LOG2N='${DIM_LOG2N:-14 16}'" \
  "DIM_DIGITS_LOG2N='${DIM_DIGITS_LOG2N:-8 10}' DIM_RUNS=${DIM_RUNS:-5} DIM_G=${DIM_G:-4}" \
  "DIM_KD_SET='${DIM_KD_SET:-}' bench/dimension.sh $build $gp"
echo "# uptime before: $(uptime)"
"$py" "$here/bench/dimension_data.py" "$kd" "$gp"
echo "# uptime after:  $(uptime)"
echo "# done $(date -u '+%Y-%m-%d %H:%M UTC')"
