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
