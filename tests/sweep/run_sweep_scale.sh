#!/bin/bash
# run_sweep_scale.sh - `kdistill validate` of a sweep grows linearly with its points (issue 60:
# 10000 points took 110 s, 2500 points 5.9 s, because every point copied and re-read the whole
# sweep section). Validate a zip sweep of N and of 4N points (run.seed x data.mean, a list of 4
# numbers per point, over a uniform subsample of a small generated set) and require
# time(4N) <= 10 time(N), each the best of two runs (the machine is shared). Before the fix the
# ratio was about 15 at N = 500. Also: a bad value in the last point of the large sweep is still
# refused naming that point, and an unknown key in the sweep section still by point 0.
#
# usage: run_sweep_scale.sh KDISTILL_BINARY NP
KD_BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
NP=${2:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
KD_E2E_NAME=sweep_scale
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"
N=500
# config N [LAST_SEED]: the sweep of N points (the last point's seed replaced by LAST_SEED)
config() {
  awk -v n="$1" -v last="${2:-}" 'BEGIN {
    print "task: sweep\nsweep:\n  task: thin\n  dir: out\n  zip:"
    printf "    - {key: run.seed, values: ["
    for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? ", " : ""), (i == n && last != "" ? last : i)
    printf "]}\n    - {key: data.mean, values: ["
    for (i = 1; i <= n; i++) printf "%s[%d, 0, 0, 0]", (i > 1 ? ", " : ""), i
    print "]}"
    print "data: {type: gaussian, n: 256, d: 4}\nkernel: {name: gaussian, ls: 1.0}"
    print "algorithm: {name: uniform, n_out: 8}\noutput: {path: best.h5}" }'
}
config $N >small.yaml
config $((4 * N)) >large.yaml
# seconds FILE LIMIT: wall time of `validate FILE` (exit 0 required) under a LIMIT-second timeout;
# prints LIMIT when it ran out
seconds() {
  local t0=$EPOCHREALTIME rc
  # shellcheck disable=SC2086
  timeout "$2" "$MPIEXEC" -n "$NP" $KD_MPIEXEC_FLAGS "$KD_BIN" validate "$1" >v.txt 2>&1
  rc=$?
  [ $rc = 124 ] && { echo "$2"; return 0; }
  # a failed run counts as out of time (the ratio check below then fails)
  [ $rc = 0 ] || { echo "FAIL: validate $1: exit $rc: $(cat v.txt)" >&2; echo "$2"; return 0; }
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }'
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b ? a : b) }'; }
t1=$(min "$(seconds small.yaml 120)" "$(seconds small.yaml 120)")
limit=$(awk -v t="$t1" 'BEGIN { printf "%.0f\n", 10 * t + 1 }')
t4=$(seconds large.yaml "$limit")
awk -v a="$t4" -v b="$t1" 'BEGIN { exit !(a > 10 * b) }' && t4=$(min "$t4" "$(seconds large.yaml "$limit")")
if awk -v a="$t4" -v b="$t1" 'BEGIN { exit !(a <= 10 * b) }'; then
  ok "validate $N points: ${t1}s, $((4 * N)) points: ${t4}s (ratio <= 10)"
else
  bad "validate $N points: ${t1}s, $((4 * N)) points: ${t4}s (ratio > 10; linear would be 4)"
fi
grep -q "sweep: $((4 * N)) points of task thin" v.txt && ok "validate names the point count" ||
  bad "validate output: $(cat v.txt)"

# errors are found as before: a bad value in the last point, an unknown key of the sweep section
config $((4 * N)) -1 >badlast.yaml
mpi "$NP" validate badlast.yaml >bl.txt 2>&1
rc=$?
[ $rc = 1 ] && grep -q "sweep point $((4 * N - 1)) (run.seed=-1, " bl.txt &&
  grep -q "run.seed" bl.txt && [ "$(grep -c '^kdistill: error' bl.txt)" = 1 ] &&
  ok "bad last point: $(grep '^kdistill' bl.txt | cut -c1-100)" || bad "bad last point: rc $rc: $(cat bl.txt)"
sed 's/^  dir: out$/  dir: out\n  grups: 2/' small.yaml >typo.yaml
mpi "$NP" validate typo.yaml >ty.txt 2>&1
rc=$?
[ $rc = 1 ] && grep -q "sweep point 0 (" ty.txt && grep -q "sweep.grups: unknown key" ty.txt &&
  ok "unknown sweep key: $(grep '^kdistill' ty.txt | cut -c1-100)" || bad "unknown sweep key: rc $rc: $(cat ty.txt)"
[ "$fails" = 0 ]
