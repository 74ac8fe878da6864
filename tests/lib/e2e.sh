# shellcheck shell=bash
# e2e.sh - the shared start of the end-to-end test scripts that drive the real binary (sourced,
# with KD_E2E_NAME set to name the scratch directory): `set -u`, a scratch directory that is the
# working directory and is removed on exit, the counters ok/bad (the script ends with
# `[ $fails = 0 ]`), and `mpi N ARGS...` = kdistill ARGS on N ranks under a 120 s timeout.
# Environment (from CTest): KD_BIN, MPIEXEC, KD_MPIEXEC_FLAGS.
set -u
dir=$(mktemp -d "${TMPDIR:-/tmp}/kd_${KD_E2E_NAME:-e2e}_XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# shellcheck disable=SC2086
mpi() { local n=$1; shift; timeout 120 "$MPIEXEC" -n "$n" $KD_MPIEXEC_FLAGS "$KD_BIN" "$@"; }
# dump FILE: the numbers of the datasets/attributes in $DSETS (h5dump -d/-a options), full precision
# shellcheck disable=SC2086
dump() { h5dump -m %.17g $DSETS "$1" | sed 1d; }
# same A B TOL: both files exist and their dumps agree, bitwise for TOL = 0, else every number
# within TOL relative to max(SAME_FLOOR, |a|) (default 1) with at least SAME_MIN (default 10)
same() {
  [ -f "$1" ] && [ -f "$2" ] && [ -n "$(dump "$1")" ] || return 1
  if [ "${3:-0}" = 0 ]; then
    cmp -s <(dump "$1") <(dump "$2")
    return
  fi
  paste -d'\n' <(dump "$1" | tr -c '0-9eE.+-' '\n' | grep -E '[0-9]') \
    <(dump "$2" | tr -c '0-9eE.+-' '\n' | grep -E '[0-9]') |
    awk -v tol="$3" -v floor="${SAME_FLOOR:-1}" -v nmin="${SAME_MIN:-10}" '
      NR % 2 == 1 { a = $1; next }
      { d = a - $1; if (d < 0) d = -d; m = a < 0 ? -a : a; if (m < floor) m = floor;
        if (d > tol * m) { bad = 1 } ; n++ }
      END { exit (bad || n < nmin) }'
}
# attr FILE NAME: the value of the root attribute NAME of an HDF5 file (empty if absent)
attr() { h5dump -a "$2" "$1" 2>/dev/null | grep '(0)' | tr -d ' "' | cut -d: -f2; }
# refused WHAT MESSAGE ARGS...: `mpi 2 ARGS` (which writes bad.h5 if anything) must exit 1 with
# exactly one error line that contains MESSAGE, and write no bad.h5
refused() {
  local what=$1 msg=$2 rc
  shift 2
  rm -f bad.h5
  mpi 2 "$@" >refused.txt 2>&1
  rc=$?
  if [ $rc = 1 ] && [ ! -f bad.h5 ] && [ "$(grep -c '^kdistill: error:' refused.txt)" = 1 ] &&
    grep -qF "$msg" refused.txt; then
    ok "$what: exit 1, $(grep '^kdistill' refused.txt)"
  else
    bad "$what: rc $rc: $(cat refused.txt)"
  fi
}
