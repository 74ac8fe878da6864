#!/bin/bash
# comm_volume.sh BUILD/kdistill - communication volume per rank of the four main tasks at
# p = 1, 2, 4, 8, 16 ranks (oversubscribed on a small machine: the volumes are exact, the times
# are not scaling figures), from the --verbose /metrics comm_bytes_max, comm_bytes_mean,
# comm_ops_max (payload bytes sent plus received by a rank through the comm/ helpers; ScaLAPACK's
# own traffic is not counted). Prints a Markdown table (bench/results/scale.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/kdistill}")
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ranks=${KD_RANKS:-"1 2 4 8 16"}
echo "| task (config) | p | MB max/rank | MB mean/rank | operations max/rank | algorithm s |"
echo "|---|---|---|---|---|---|"
for cfg in thin_kt_compress herd_matern32_box quad_gaussian_mixture ctt; do
  for p in $ranks; do
    mpirun -np "$p" --oversubscribe "$bin" run "configs/$cfg.yaml" -v --output "$work/o.h5" \
      >/dev/null 2>&1 || { echo "| $cfg | $p | failed | | | |"; continue; }
    /usr/bin/python3 - "$work/o.h5" "$cfg" "$p" <<'P'
import sys, h5py
m = h5py.File(sys.argv[1], "r")["metrics"].attrs
print("| %s | %s | %.3f | %.3f | %d | %.2f |" % (sys.argv[2], sys.argv[3], m["comm_bytes_max"] / 1e6,
      m["comm_bytes_mean"] / 1e6, m["comm_ops_max"], m["seconds"]))
P
  done
done
