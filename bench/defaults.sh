#!/usr/bin/env bash
# bench/defaults.sh - issue 61: choose kt_compress's default parameters by MMD against
# goodpoints' compresspp_kt (g = 4). For each data set and size, goodpoints' coreset MMD per seed
# (cached) and kdistill's for each variant of `--set` keys, seeds 0..S-1, exact MMD to the input
# rows, the median-heuristic length scale passed to both sides. Data, length scale, g and MMD are
# bench/dimension_data.py's (imported by bench/defaults_data.py, which documents the details).
# MMD only, no time: it is deterministic per seed. Results go to bench/results/defaults.md by hand.
# Usage: bench/defaults.sh [BUILD_DIR] [GP_SRC]
#   BUILD_DIR  holds the kdistill CLI (default: build); KD_BIN overrides the binary itself.
#   GP_SRC     a goodpoints source tree with its Cython extensions built in place (/tmp/gp/src).
# Environment:
#   DEF_DATA          data sets, default all = "gauss2 gauss8 gauss32 gauss128 patch4 patch8
#                     patch8c patch28 digits"
#   DEF_LOG2N         sizes log2 n, default "14"; DEF_DIGITS_LOG2N for digits, default "8 10"
#   DEF_MAX_D_16      sizes above 2^14 only for d <= this (default 64; goodpoints is slow at high d)
#   DEF_SEEDS         seeds 0..S-1, default 5
#   DEF_VARIANTS      ';'-separated variants, each space-separated `--set` key=value, "default"
#                     = no key; the first is the baseline of the last column. Default "default".
#   DEF_WORK          work directory: inputs, zz_*.txt, gp.tsv and kd.tsv caches (/tmp/kd_defaults)
# Smoke (< 1 minute): DEF_DATA="gauss8 digits" DEF_LOG2N=10 DEF_SEEDS=2 \
#   DEF_VARIANTS="default;algorithm.threshold=tight" bench/defaults.sh build-h
set -euo pipefail
. "$(dirname "$0")/gp_env.sh"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -n)  $(nproc --all) cores"
echo "# kdistill $kd: $("$kd" --version 2>&1 | sed -n 2p)"
echo "# goodpoints $gp: $(cat "$gp/REVISION" 2>/dev/null || echo "commit unknown")"
echo "# command: DEF_DATA='${DEF_DATA:-all}' DEF_LOG2N='${DEF_LOG2N:-14}'" \
  "DEF_DIGITS_LOG2N='${DEF_DIGITS_LOG2N:-8 10}' DEF_SEEDS=${DEF_SEEDS:-5}" \
  "DEF_VARIANTS='${DEF_VARIANTS:-default}' bench/defaults.sh $build $gp"
echo "# uptime before: $(uptime)"
"$py" "$here/bench/defaults_data.py" "$kd" "$gp"
echo "# uptime after:  $(uptime)"
echo "# done $(date -u '+%Y-%m-%d %H:%M UTC')"
