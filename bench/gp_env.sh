# bench/gp_env.sh - sourced by the scripts that run kdistill and goodpoints side by side
# (bench/dimension.sh, bench/defaults.sh): their arguments (BUILD [GP_SRC]), the binaries and
# Python they use, the checks that both are there, and one BLAS/OpenMP thread per process.
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
gp=${2:-${GP_SRC:-/tmp/gp/src}}
kd=${KD_BIN:-$build/kdistill}
py=${PYTHON:-/usr/bin/python3}
die() { echo "$(basename "$0"): $1" >&2; exit 1; }
[ -x "$kd" ] || die "no kdistill binary at $kd (build it, or set KD_BIN)"
ls "$gp"/goodpoints/compressc*.so >/dev/null 2>&1 ||
  die "no built goodpoints at $gp (see bench/results/dimension.md)"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
