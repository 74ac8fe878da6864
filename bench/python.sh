#!/bin/bash
# python.sh BUILD - the Python package's figures (bench/results/python.md): call overhead against
# the CLI at 2^16 x 2, whole-call time at 2^10, peak RSS at 2^22 x 2 (float64 and float32), and
# the CLI's own peak RSS on the same job for the library's working set. Uses BUILD/kdistill and
# BUILD/libkdistill.so with Debian's python3. Prints `uptime` first: take figures at load < 1.5.
# KD_GOODPOINTS=DIR adds goodpoints' compress.compresspp_kt (g = 4) on the same arrays, from a
# goodpoints source tree built in place in DIR (Debian's cython3: python3 setup.py build_ext
# --inplace), outside this repository.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export KDISTILL="$build/kdistill" KDISTILL_LIB="$build/libkdistill.so" PYTHONPATH="$PWD/python"
py=/usr/bin/python3
uptime
$py bench/python_bench.py overhead 16
$py bench/python_bench.py small
$py bench/python_bench.py handover
for t in float64 float32; do $py bench/python_bench.py rss 22 $t; done
# the CLI on the same job (rows generated inside the library): its peak RSS holds the input once
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/c.yaml" <<YAML
task: thin
data: {type: gaussian, n: 4194304, d: 2}
target: {type: data, self: false}
kernel: {name: gaussian, ls: 2.0}
algorithm: {name: kt_compress, n_out: 2048, g: 4}
output: {path: $work/o.h5}
YAML
sed 's/n: 4194304/n: 1024/; s/n_out: 2048/n_out: 32/' "$work/c.yaml" >"$work/small.yaml"
/usr/bin/time -f "cli baseline (the same job on 1024 rows): peak RSS %M KiB" \
  "$build/kdistill" run "$work/small.yaml" --quiet
/usr/bin/time -f "cli n=2^22 float64 (64 MiB of rows inside the library): peak RSS %M KiB, %e s" \
  "$build/kdistill" run "$work/c.yaml" --quiet
uptime
# goodpoints' Compress++ on the same arrays, when built in place in $KD_GOODPOINTS (optional)
if [ -n "${KD_GOODPOINTS:-}" ]; then
  $py bench/python_goodpoints.py "$KD_GOODPOINTS" 14 16 18
  uptime
fi
