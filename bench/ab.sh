#!/bin/bash
# ab.sh - A/B timing of two kdistill builds on one config, runs alternating (A B A B ...), so that
# a change in machine load hits both sides alike. Prints every run's algorithm seconds (the
# `seconds` metric of the output: the algorithm's own wall time, max over ranks) and the median
# per side, plus the load average before and after. For an empirical target, pass
# --set target.self=false to skip the exact double sum (it is not part of the algorithm's time).
#   bench/ab.sh OLD_BIN NEW_BIN RANKS RUNS CONFIG [--set key=value]...
# Example: bench/ab.sh /tmp/kdistill.base build/kdistill 2 3 configs/thin_kt_compress.yaml \
#            --set data.n=262144 --set algorithm.n_out=512
set -euo pipefail
[ $# -ge 5 ] || { sed -n 2,8p "$0"; exit 2; }
a=$(realpath "$1") b=$(realpath "$2") np=$3 runs=$4 cfg=$(realpath "$5")
shift 5
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
secs() {
  /usr/bin/python3 -c 'import h5py,sys; print("%.4f" % h5py.File(sys.argv[1])["metrics"].attrs["seconds"])' "$1"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
ta=() tb=()
for ((i = 0; i < runs; i++)); do
  for side in a b; do
    bin=$a
    [ $side = b ] && bin=$b
    mpirun -np "$np" --oversubscribe "$bin" run "$cfg" --quiet "$@" --output "$work/$side.h5" \
      >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
    s=$(secs "$work/$side.h5")
    if [ $side = a ]; then ta+=("$s"); else tb+=("$s"); fi
  done
done
med() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "A $a: ${ta[*]}  median $(med "${ta[@]}") s"
echo "B $b: ${tb[*]}  median $(med "${tb[@]}") s"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
