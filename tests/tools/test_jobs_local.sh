#!/bin/bash
# test_jobs_local.sh - the job scripts outside SLURM (run with bash, KD_LAUNCHER=mpirun/none), so
# ordinary CI covers jobs/kd_job.sh without root or SLURM daemons: a real thinning run through
# mpirun (exit 0, output written, log lines), USR1 sent to the script forwarded through mpirun to
# both ranks of a stand-in solver (exit 3), TERM the same with KD_LAUNCHER=none, kdplot on the
# real output (when h5py/matplotlib are there), and bad input
# (missing binary, missing config, unknown launcher: exit 1 with a message, solver not started).
# tests/slurm/run_job_tests.sh does the same under a real SLURM (.ci/slurm.sh).
#
# usage: test_jobs_local.sh REPO_DIR KDISTILL_BINARY
# These runs must reach their safe point and checkpoint however loaded the machine is: the
# signal guard's default grace (1 s, tested in tests/hostile) would stop a slow step first.
export KDISTILL_SIGNAL_GRACE=600
REPO=$1
BIN=$2
KD_E2E_NAME=jobs_local
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"
set -o pipefail
WORK=$dir
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export KD_JOBS_DIR=$REPO/jobs SLURM_NTASKS=2
unset SLURM_JOB_ID SLURM_PROCID
# check STATUS WHAT: a failed check counts with bad (tests/lib/e2e.sh); WHAT says what went wrong
check() { [ "$1" = 0 ] || bad "$2"; }

cat > "$WORK/thin.yaml" <<'EOF'
task: thin
data: {type: gaussian, n: 400, d: 2, mean: [0, 0], sd: [1, 1]}
kernel: {name: gaussian, ls: 1.0}
algorithm: {name: uniform, n_out: 10}
run: {seed: 3}
EOF

# 1. a real run through mpirun
KD_LAUNCHER=mpirun KD_BIN=$BIN KD_CONFIG=$WORK/thin.yaml KD_OUTPUT=$WORK/out.h5 \
  bash "$REPO/jobs/thinning.sbatch" > "$WORK/run.out" 2> "$WORK/run.err"
rc=$?
check "$rc" "real run: exit $rc; stderr: $(tail -n 5 "$WORK/run.err")"
[ -s "$WORK/out.h5" ]; check $? "real run: no output file"
grep -q "run: mpirun -np 2 -x KDISTILL_SIGNAL_GRACE $BIN run $WORK/thin.yaml --output $WORK/out.h5" "$WORK/run.err"
check $? "real run: command line logged"
grep -q "done: $WORK/out.h5" "$WORK/run.err"; check $? "real run: done line"
grep -q "coreset: *10 points in 2 dimensions" "$WORK/run.out"; check $? "real run: kdistill info of the output"

# kdplot reads the real output (the layout kdistill writes, not only the h5py-made test files)
PY=python3
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; fi
if $PY -c "import h5py, matplotlib" 2>/dev/null; then
  $PY "$REPO/python/kdistill/_kdplot.py" coreset "$WORK/out.h5" -o "$WORK/coreset.png" > /dev/null 2>&1
  check $? "kdplot coreset on the real output"
  [ "$(stat -c %s "$WORK/coreset.png" 2>/dev/null || echo 0)" -gt 8192 ]
  check $? "kdplot coreset: PNG missing or tiny"
else
  echo "note: kdplot on the real output skipped (no h5py/matplotlib for $PY)"
fi

# 2. USR1 to the script reaches both ranks through mpirun
sig_test() { # launcher signal
  local l=$1 s=$2 out=$WORK/sig_$1_$2.h5 pid rc n=2
  [ "$l" = none ] && n=1
  KD_LAUNCHER=$l KD_BIN=$REPO/tests/slurm/fake_kdistill.sh KD_CONFIG=$WORK/thin.yaml \
    KD_OUTPUT=$out FAKE_WAIT=60 bash "$REPO/jobs/herding.sbatch" > /dev/null 2> "$WORK/sig_$l.err" &
  pid=$!
  for _ in $(seq 300); do
    local started=("$out".started.*)
    [ -e "${started[0]}" ] && [ "${#started[@]}" = "$n" ] && break
    sleep 0.1
  done
  kill "-$s" "$pid"
  wait "$pid"
  rc=$?
  check $(( rc != 3 )) "signal $s via $l: exit $rc, expected 3"
  local got
  got=$(cat "$out".signal.* 2>/dev/null | tr '\n' ' ')
  if [ "$n" = 2 ]; then [ "$got" = "$s $s " ]; else [ "$got" = "$s " ]; fi
  check $? "signal $s via $l: ranks got '$got'"
  grep -q "received SIG$s; forwarding" "$WORK/sig_$l.err"; check $? "signal $s via $l: logged"
}
sig_test mpirun USR1
sig_test none TERM

# 3. bad input: exit 1, a message, nothing launched
refused() { # what needle env...
  local what=$1 needle=$2
  shift 2
  env "$@" KD_OUTPUT="$WORK/bad.h5" bash "$REPO/jobs/thinning.sbatch" > /dev/null 2> "$WORK/bad.err"
  local rc=$?
  check $(( rc != 1 )) "$what: exit $rc, expected 1"
  grep -q "$needle" "$WORK/bad.err"; check $? "$what: message '$needle' in: $(cat "$WORK/bad.err")"
  [ ! -e "$WORK/bad.h5" ]; check $? "$what: output written"
}
refused "missing binary" "kdistill binary .* not found" KD_BIN="$WORK/nope" KD_CONFIG="$WORK/thin.yaml"
refused "missing config" "config .* not found" KD_BIN="$BIN" KD_CONFIG="$WORK/nope.yaml"
refused "unknown launcher" "KD_LAUNCHER=bogus" KD_BIN="$BIN" KD_CONFIG="$WORK/thin.yaml" KD_LAUNCHER=bogus
refused "unknown key" "lsx" KD_BIN="$BIN" KD_CONFIG="$WORK/thin.yaml" KD_LAUNCHER=mpirun KD_SET="kernel.lsx=1"

# 4. KD_MODULES: `module load` runs before the solver (a stand-in `module` function, exported as
# the init scripts of environment modules / Lmod do); without a `module` command: exit 1, message
module() { echo "$*" >> "$MODULE_LOG"; }
export -f module
export MODULE_LOG=$WORK/module.log
KD_MODULES="gcc openmpi hdf5" KD_LAUNCHER=none KD_BIN=$BIN KD_CONFIG=$WORK/thin.yaml KD_INFO=0 \
  KD_OUTPUT=$WORK/mod.h5 bash "$REPO/jobs/thinning.sbatch" > /dev/null 2> "$WORK/mod.err"
check $? "KD_MODULES: exit status ($(tail -n 1 "$WORK/mod.err"))"
[ "$(cat "$MODULE_LOG" 2>/dev/null)" = "load gcc openmpi hdf5" ]
check $? "KD_MODULES: module got '$(cat "$MODULE_LOG" 2>/dev/null)'"
grep -q "module load gcc openmpi hdf5" "$WORK/mod.err"; check $? "KD_MODULES: logged"
unset -f module
# (the machine may have a module system: its init scripts are pointed away)
refused "KD_MODULES without module" "no 'module' command" KD_BIN="$BIN" KD_CONFIG="$WORK/thin.yaml" \
  KD_MODULES=gcc KD_MODULE_INIT=/nonexistent/init.sh
# 5. the sweep array script outside an array job: exit 1 with the way to submit it
env KD_BIN="$BIN" bash "$REPO/jobs/sweep_array.sbatch" > /dev/null 2> "$WORK/arr.err"
rc=$?
check $(( rc != 1 )) "sweep_array.sbatch outside an array: exit $rc, expected 1"
grep -q "not an array task" "$WORK/arr.err"; check $? "sweep_array.sbatch: message"


# 6. KD_SET is split on blanks only, never glob-expanded: with a file named data.mean=0 in the
# working directory, data.mean=[0,1] stays as written (it used to become --set data.mean=0);
# the session directory is a new one: an existing ${TMPDIR}/kd-<job id> of someone else's is
# neither used nor removed
mkdir -p "$WORK/globdir" "$WORK/tmp/kd-4242"
touch "$WORK/globdir/data.mean=0" "$WORK/tmp/kd-4242/victim"
(cd "$WORK/globdir" && SLURM_JOB_ID=4242 TMPDIR=$WORK/tmp KD_LAUNCHER=none KD_BIN=$BIN \
  KD_CONFIG=$WORK/thin.yaml KD_OUTPUT=$WORK/glob.h5 KD_INFO=0 KD_SET='data.mean=[0,1] run.seed=4' \
  KD_ARGS='--quiet' bash "$REPO/jobs/thinning.sbatch" > /dev/null 2> "$WORK/glob.err")
check $? "KD_SET with a glob character: exit status ($(tail -n 2 "$WORK/glob.err"))"
grep -qF -- "--set data.mean=[0,1] --set run.seed=4" "$WORK/glob.err"
check $? "KD_SET: the value was expanded: $(grep -m1 'run:' "$WORK/glob.err")"
[ -e "$WORK/tmp/kd-4242/victim" ]; check $? "session directory: another's kd-4242 was removed"
[ "$(find "$WORK/tmp" -mindepth 1 -maxdepth 1 | wc -l)" = 1 ]
check $? "session directory: ours was left behind: $(ls "$WORK/tmp")"

[ "$fails" = 0 ]
