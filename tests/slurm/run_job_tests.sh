#!/bin/bash
# run_job_tests.sh - run every job script in jobs/ for real with `sbatch --wait` on a running SLURM
# (.ci/slurm.sh brings up the single-node SLURM of shared/slurm-local.sh around it) and check what
# each job produced: exit status, the HDF5 output (tests/slurm/check_output.py, h5py), the log
# files; plus signal forwarding (USR1 from `scancel --signal=USR1 --batch` and from the
# --signal=B:USR1@T time-limit warning reach every rank, exit status 3), an interrupted sweep
# that requeues itself and resumes from its finished points, a herding job interrupted mid-run
# that checkpoints, requeues itself and resumes to the uninterrupted output, both launchers
# (srun/pmix and mpirun), bad input (missing binary, bad config: exit 1, no output), and a sweep
# run as a job array (jobs/sweep_array.sh: one task per point, then a summary job whose summary
# is byte-identical to the single-allocation sweep's over the same point files).
#
# usage: tests/slurm/run_job_tests.sh --bin BUILD/kdistill [--work DIR] [--keep] [--only NAME]
# Needs: a SLURM with >= 4 CPUs on one node (SLURM_LOCAL_CPUS=4), sbatch/scancel/squeue on PATH,
# python3 with h5py. Not registered in ctest (needs root + SLURM daemons).
# Prints "N passed, N failed"; exit 0 only if every check passed.
# These runs must reach their safe point and checkpoint however loaded the machine is: the
# signal guard's default grace (1 s, tested in tests/hostile) would stop a slow step first.
export KDISTILL_SIGNAL_GRACE=600
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=""
WORK=""
KEEP=0
ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --only) ONLY=$2; shift 2 ;;
    *) echo "usage: $0 --bin BUILD/kdistill [--work DIR] [--keep] [--only NAME]" >&2; exit 2 ;;
  esac
done
[ -n "$BIN" ] || BIN=$REPO/build/kdistill
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
if [ ! -x "$BIN" ]; then echo "run_job_tests: kdistill binary $BIN not found (--bin)" >&2; exit 2; fi
for c in sbatch scancel squeue sinfo; do
  command -v "$c" >/dev/null || { echo "run_job_tests: $c not found: is SLURM installed and up?" >&2; exit 2; }
done
if ! sinfo -h >/dev/null 2>&1; then echo "run_job_tests: sinfo fails: slurmctld not running" >&2; exit 2; fi
PY=python3
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import h5py" 2>/dev/null; then PY=/usr/bin/python3; fi
$PY -c "import h5py, numpy" 2>/dev/null || { echo "run_job_tests: python3 with h5py needed" >&2; exit 2; }

[ -n "$WORK" ] || WORK=$(mktemp -d /tmp/kd_slurm_tests.XXXXXX)
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
if [ "$KEEP" = 0 ]; then trap 'rm -rf "$WORK"' EXIT; fi
CFG=$REPO/tests/slurm/configs
FAKE=$REPO/tests/slurm/fake_kdistill.sh
PASS=0
FAIL=0
check() { # cond-status what
  if [ "$1" = 0 ]; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); echo "FAIL: $2"; fi
}
want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }
echo "run_job_tests: repo $REPO, binary $BIN, work $WORK"

# submit NAME SCRIPT NTASKS [extra sbatch args...]; environment KD_* from the caller.
# Sets RC (sbatch --wait status = the job's exit status) and JOBID. Runs from $WORK (not the repo),
# so the job scripts must find jobs/kd_job.sh through scontrol, as on a cluster.
submit() {
  local name=$1 script=$2 np=$3
  shift 3
  local t0=$SECONDS
  JOBID=$(cd "$WORK" && timeout 900 sbatch --wait --parsable -J "kdtest-$name" -n "$np" -t 10 \
          --output="$WORK/$name.out" --error="$WORK/$name.err" --export=ALL "$@" \
          "$REPO/jobs/$script")
  RC=$?
  JOBID=${JOBID%%;*}
  echo "  job $name ($script, $np tasks): id ${JOBID:-?}, exit $RC, $((SECONDS - t0)) s"
  if [ "$RC" != "${EXPECT_RC:-0}" ]; then
    echo "  --- $name.err:"; sed 's/^/  | /' "$WORK/$name.err" 2>/dev/null | tail -n 30
  fi
}

# a real run: job exit 0, output file checked against the layout
real_job() { # name script np config task n_out d
  local name=$1 script=$2 np=$3 cfg=$4 task=$5 n_out=$6 d=$7 out
  out=$WORK/$name.h5
  KD_BIN=$BIN KD_CONFIG=$cfg KD_OUTPUT=$out submit "$name" "$script" "$np"
  check $(( RC != 0 )) "$name: job exit status $RC (expected 0)"
  [ -s "$out" ]; check $? "$name: no output file $out"
  if [ -s "$out" ]; then
    $PY "$REPO/tests/slurm/check_output.py" "$out" "$task" "$np" "$n_out" "$d" | grep -v '^[0-9]* passed'
    check "${PIPESTATUS[0]}" "$name: output layout ($out)"
  fi
  grep -q "run: srun\|run: mpirun" "$WORK/$name.err"; check $? "$name: launcher line in $name.err"
  grep -q "done: $out" "$WORK/$name.err"; check $? "$name: 'done' line in $name.err"
}

if want herding; then
  echo "== herding.sbatch (task herd, srun/pmix)"
  real_job herding herding.sbatch 2 "$CFG/herd.yaml" herd - 2
  $PY "$REPO/python/kdistill/_kdplot.py" trace "$WORK/herding.h5" -o "$WORK/herding_trace.png" > /dev/null
  check $? "herding: kdplot trace of the job's output"
fi
if want thinning; then
  echo "== thinning.sbatch (task thin, srun/pmix)"
  real_job thinning thinning.sbatch 2 "$CFG/thin.yaml" thin 16 2
  echo "== thinning.sbatch with KD_LAUNCHER=mpirun"
  KD_LAUNCHER=mpirun real_job thinning_mpirun thinning.sbatch 2 "$CFG/thin.yaml" thin 16 2
  grep -q "run: mpirun -np 2" "$WORK/thinning_mpirun.err"; check $? "thinning_mpirun: used mpirun"
  # the same coreset whichever launcher ran it
  $PY - "$WORK/thinning.h5" "$WORK/thinning_mpirun.h5" <<'EOF'
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
sys.exit(0 if np.array_equal(a["coreset/indices"][()], b["coreset/indices"][()]) else 1)
EOF
  check $? "thinning: srun and mpirun runs picked different coresets"
fi
if want quadrature; then
  echo "== quadrature.sbatch (task quad)"
  real_job quadrature quadrature.sbatch 2 "$CFG/quad.yaml" quad 16 2
fi
if want ctt; then
  echo "== ctt_study.sbatch (task ctt_study)"
  out=$WORK/ctt.h5
  KD_BIN=$BIN KD_CONFIG=$CFG/ctt.yaml KD_OUTPUT=$out submit ctt ctt_study.sbatch 2
  check $(( RC != 0 )) "ctt: job exit status $RC (expected 0)"
  [ -s "$out" ]; check $? "ctt: no output file $out"
  if [ -s "$out" ]; then
    $PY - "$out" <<'EOF'
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
ok = f.attrs["task"] in (b"ctt_study", "ctt_study") and "metrics" in f and "study/rejection_rate" in f
ok = ok and all(k in f["metrics"].attrs for k in ("seconds", "kernel_evals"))
sys.exit(0 if ok else 1)
EOF
    check $? "ctt: output has task ctt_study, /metrics and /study/rejection_rate"
    $PY "$REPO/python/kdistill/_kdplot.py" ctt "$out" -o "$WORK/ctt.png" > /dev/null
    check $? "ctt: kdplot ctt of the job's output"
  fi
fi
if want sweep; then
  echo "== sweep.sbatch (task sweep, 4 ranks in 2 groups)"
  out=$WORK/sweep.h5
  KD_BIN=$BIN KD_CONFIG=$CFG/sweep.yaml KD_OUTPUT=$out KD_SET="sweep.dir=$WORK/sweep_points" \
    submit sweep sweep.sbatch 4
  check $(( RC != 0 )) "sweep: job exit status $RC (expected 0)"
  $PY - "$WORK/sweep_points" "$out" <<'EOF'
import csv, os, sys, h5py, numpy as np
d, out = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(os.path.join(d, "summary.csv"))))
bad = []
if len(rows) != 4: bad.append("summary.csv has %d rows, expected 4" % len(rows))
for r in rows:
    if r["status"] != "0": bad.append("point %s status %s: %s" % (r["point"], r["status"], r["message"]))
    elif not os.path.exists(r["file"]): bad.append("point file %s missing" % r["file"])
    else:
        with h5py.File(r["file"], "r") as f:
            if f["coreset/points"].shape[0] != int(r["n_atoms"]): bad.append("n_atoms of " + r["file"])
            if int(f.attrs["n_ranks"]) != 2: bad.append("%s ran on %s ranks, expected 2 (2 groups of 2)" % (r["file"], f.attrs["n_ranks"]))
with h5py.File(os.path.join(d, "summary.h5"), "r") as f:
    if f["sweep/mmd"].shape != (4,): bad.append("summary.h5 /sweep/mmd shape")
with h5py.File(out, "r") as f:
    m = f["sweep/mmd"][()]
    if abs(float(f["metrics"].attrs["mmd"]) - np.nanmin(m)) > 1e-12: bad.append("best point mmd")
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
EOF
  check $? "sweep: summary, point files and best-point output"
  $PY "$REPO/python/kdistill/_kdplot.py" sweep "$WORK/sweep_points/summary.csv" --mean-over run.seed \
    -o "$WORK/sweep.png" > /dev/null
  check $? "sweep: kdplot sweep of the job's summary"
fi
if want array; then
  echo "== sweep_array.sh: one array task per point (2 tasks each), then a summary job (afterok)"
  out=$WORK/array_best.h5
  pts=$WORK/array_points
  t0=$SECONDS
  ids=$(cd "$WORK" && KD_BIN=$BIN KD_CONFIG=$CFG/sweep.yaml KD_OUTPUT=$out KD_SET="sweep.dir=$pts" \
        KD_SUMMARY_SBATCH="--wait -t 10 --output=$WORK/array_sum.out --error=$WORK/array_sum.err" \
        timeout 900 bash "$REPO/jobs/sweep_array.sh" -n 2 -t 10 --output="$WORK/array_%a.out" \
        --error="$WORK/array_%a.err" 2> "$WORK/array_submit.err")
  rc=$?
  echo "  jobs $ids: exit $rc after $((SECONDS - t0)) s"
  check "$rc" "array: summary job exit $rc ($(tail -n 2 "$WORK/array_submit.err" "$WORK/array_sum.err" 2>/dev/null | tr '\n' ' '))"
  for k in 0 1 2 3; do
    grep -q "sweep: point $k of 4" "$WORK/array_$k.err" 2>/dev/null
    check $? "array: task $k ran point $k alone"
  done
  grep -q "reading the point files (summary_only)" "$WORK/array_sum.err" 2>/dev/null
  check $? "array: the summary job read the point files"
  cp "$pts/summary.csv" "$WORK/array_summary.csv" 2>/dev/null
  cp "$pts/summary.h5" "$WORK/array_summary.h5" 2>/dev/null
  # the single-allocation sweep over the same point files writes byte-identical summaries
  [ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  (cd "$WORK" && timeout 300 mpirun -np 2 --oversubscribe "$BIN" run "$CFG/sweep.yaml" -q \
     --set "sweep.dir=$pts" --set sweep.resume=true --output "$out" 2> "$WORK/array_single.err")
  check $? "array: single-allocation sweep over the array's points ($(tail -n 1 "$WORK/array_single.err"))"
  cmp -s "$WORK/array_summary.csv" "$pts/summary.csv"
  check $? "array: summary.csv differs from the single-allocation sweep's"
  cmp -s "$WORK/array_summary.h5" "$pts/summary.h5"
  check $? "array: summary.h5 differs from the single-allocation sweep's"
  $PY - "$WORK/array_summary.h5" "$pts/summary.h5" "$pts" "$out" <<'EOF2'
import glob, os, sys, h5py, numpy as np
a, b, d, out = sys.argv[1:5]
bad = []
with h5py.File(a, "r") as x, h5py.File(b, "r") as y:
    for k in x["sweep"]:
        if isinstance(x["sweep"][k], h5py.Dataset) and not np.array_equal(x["sweep"][k][()], y["sweep"][k][()]):
            bad.append("summary.h5 /sweep/" + k)
    if x["sweep"].attrs["config_yaml"] == b"" : bad.append("config_yaml empty")
    st = x["sweep/status"][()]
    if st.shape != (4,) or st.any(): bad.append("statuses %s" % st)
for p in sorted(glob.glob(os.path.join(d, "point_*.h5"))):
    with h5py.File(p, "r") as f:
        if int(f.attrs["n_ranks"]) != 2: bad.append("%s ran on %s ranks, expected 2" % (p, f.attrs["n_ranks"]))
if len(glob.glob(os.path.join(d, "point_*.h5"))) != 4: bad.append("point files")
with h5py.File(out, "r") as f:
    if f["sweep/mmd"].shape != (4,): bad.append("best-point output /sweep/mmd")
for m in bad: print("  " + m)
sys.exit(1 if bad else 0)
EOF2
  check $? "array: summary.h5 datasets equal the single-allocation sweep's; points on 2 ranks; best output"
fi

# start_requeued: start the requeued job JOBID 2 s from now. SLURM holds a requeued job back so
# that its relaunch carries a job credential younger (in whole seconds) than the one slurmd revoked
# when the first run was killed. A relaunch within the same second as that revocation is refused
# ("already killed, do not launch batch job") and the job ends without a second run: the likely
# cause of two CI failures (final exit 1 after 10 s; no second run within 300 s). The revocation
# happened before the requeue we have seen, so 2 s later is safe. The wait is here, not in
# StartTime=now+2: only an update makes the scheduler look at the job at once, a begin time that
# merely passes waits for its next periodic pass (up to a minute).
start_requeued() { sleep 2; scontrol update JobId="$JOBID" StartTime=now; }

# requeue_job NAME SCRIPT READY: submit SCRIPT (2 tasks, KD_REQUEUE=1, environment KD_* from the
# caller) in the background, wait until the shell test READY succeeds (the job has started its
# work), send USR1 to the batch shell (as SLURM's --signal=B:USR1 does before the time limit), let
# the job requeue itself and start the requeued job at once. Sets RC (final exit) and JOBID.
requeue_job() {
  local name=$1 script=$2 ready=$3 t0=$SECONDS waiter
  rm -f "$WORK/$name.id" "$WORK/$name.rc"
  (
    cd "$WORK" && KD_REQUEUE=1 timeout 600 sbatch --wait --parsable -J "kdtest-$name" -n 2 \
      -t 10 --output="$WORK/$name.out" --error="$WORK/$name.err" --export=ALL \
      "$REPO/jobs/$script" > "$WORK/$name.id"
    echo $? > "$WORK/$name.rc"
  ) 2> "$WORK/$name.sbatch.err" & # stopped once the final state is known: a "Terminated" line
  waiter=$!
  local ready_ok=0
  for _ in $(seq 600); do
    if eval "$ready"; then ready_ok=1; break; fi
    [ -s "$WORK/$name.rc" ] && break
    sleep 0.2
  done
  JOBID=$(cut -d';' -f1 "$WORK/$name.id" 2>/dev/null)
  [ "$ready_ok" = 1 ] || echo "  job ${JOBID:-?}: not ready after $((SECONDS - t0)) s (job ended or too slow); signalling anyway"
  [ -n "$JOBID" ] && scancel --signal=USR1 --batch "$JOBID"
  # SLURM holds a requeued job back (reason BeginTime, ~2 min): start it sooner (start_requeued)
  for _ in $(seq 300); do
    [ -n "$JOBID" ] || break
    if [ "$(squeue -h -j "$JOBID" -o %r 2>/dev/null)" = BeginTime ]; then
      start_requeued && echo "  requeued job $JOBID: started 2 s after the requeue"
      break
    fi
    [ -s "$WORK/$name.rc" ] && break
    sleep 0.2
  done
  # The job's final state comes from scontrol, not from `sbatch --wait`: that can return while
  # the job is being requeued (it then reports 1 although the requeued run has not started), and
  # it polls ever more slowly (up to 32 s apart). Wait for the requeued run itself and take its
  # exit code; stop sbatch once that is known.
  local info state misses=0 unstarted=0
  RC=""
  for _ in $(seq 1500); do
    [ -n "$JOBID" ] || break
    if ! info=$(scontrol show job -o "$JOBID" 2>/dev/null); then
      misses=$((misses + 1)) # a busy slurmctld can miss a query: give up after 5 s of misses
      [ "$misses" -ge 25 ] && break
      sleep 0.2
      continue
    fi
    misses=0
    state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<< "$info")
    if [ "$state" = PENDING ] && grep -q "Reason=BeginTime" <<< "$info"; then
      start_requeued
    elif grep -q "Restarts=[1-9]" <<< "$info" &&
         [[ "$state" =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)$ ]]; then
      # a final state counts once the requeued run has started: kd_job.sh logs "[kd-job] job ID"
      # as each run starts, and right after the requeue the first run's cancellation may show as
      # final with Restarts=1 before the job is pending again. Final for 15 s with one run only:
      # the requeued run was never launched.
      if [ "$(grep -c "^\[kd-job\] job $JOBID " "$WORK/$name.err" 2>/dev/null)" -ge 2 ]; then
        RC=$(sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p' <<< "$info")
        break
      fi
      unstarted=$((unstarted + 1))
      if [ "$unstarted" -ge 75 ]; then
        echo "  job $JOBID: ended ($state) without starting its requeued run"; RC=1; break
      fi
    elif grep -q "Restarts=0" <<< "$info" &&
         [[ "$state" =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)$ ]]; then
      # the job ended without a requeue (the signal came too late or was lost): take its exit
      # code once that has held for 15 s
      unstarted=$((unstarted + 1))
      if [ "$unstarted" -ge 75 ]; then
        echo "  job $JOBID: ended ($state) without being requeued"
        RC=$(sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p' <<< "$info")
        break
      fi
    else
      unstarted=0
    fi
    sleep 0.2
  done
  [ -n "$RC" ] && pkill -TERM -P "$waiter" 2>/dev/null
  wait "$waiter"
  [ -n "$RC" ] || RC=$(cat "$WORK/$name.rc" 2>/dev/null)
  echo "  job ${JOBID:-?}: final exit ${RC:-?} after $((SECONDS - t0)) s"
  if [ "$RC" != 0 ] || ! grep -q "requeuing job" "$WORK/$name.err"; then requeue_diagnose "$name"; fi
  grep -q "interrupted: checkpoint written (exit 3)" "$WORK/$name.err"
  check $? "$name: first run interrupted (exit 3)"
  grep -q "requeuing job" "$WORK/$name.err"; check $? "$name: job requeued itself"
  check $(( RC != 0 )) "$name: final exit $RC, expected 0"
}

# requeue_diagnose NAME: after a failed requeue test, print what SLURM says about the job (state,
# reason, restarts), the daemons' log lines that name it, and the tail of the job's own log.
requeue_diagnose() {
  local name=$1 f fields
  fields=$(scontrol show job -o "$JOBID" 2>/dev/null |
    grep -o "JobState=[^ ]*\|Reason=[^ ]*\|Restarts=[^ ]*\|ExitCode=[^ ]*" | tr '\n' ' ')
  echo "  | scontrol show job $JOBID: ${fields:-(not known any more)}"
  for f in $(scontrol show config 2>/dev/null | sed -n 's/^Slurm\(ctld\|d\)LogFile *= *//p'); do
    grep -E "(JobId=|job |Job )$JOBID([^0-9_]|\$)" "$f" 2>/dev/null | tail -n 8 |
      sed "s#^#  | ${f##*/}: #"
  done
  tail -n 12 "$WORK/$name.err" 2>/dev/null | sed "s/^/  | $name.err: /"
  grep -v "^Terminated" "$WORK/$name.sbatch.err" 2>/dev/null | tail -n 4 | sed "s/^/  | sbatch: /"
}

if want requeue; then
  echo "== sweep.sbatch interrupted by USR1, requeued (KD_REQUEUE=1), resumed with the finished points"
  out=$WORK/rq.h5
  KD_BIN=$BIN KD_CONFIG=$CFG/sweep_requeue.yaml KD_OUTPUT=$out KD_SET="sweep.dir=$WORK/rq_points" \
    requeue_job rq sweep.sbatch '[ -f "$WORK/rq_points/point_0000.h5" ]'
  grep -q "kept from an earlier run" "$WORK/rq.err"; check $? "requeue: second run kept finished points"
  [ "$(grep -c '^[0-9]*,[0-9]*,0,' "$WORK/rq_points/summary.csv" 2>/dev/null)" = 12 ]
  check $? "requeue: all 12 points ok in the summary"
  [ -s "$out" ]; check $? "requeue: best-point output written"
fi
if want requeue_ckpt; then
  echo "== herding.sbatch interrupted by USR1 mid-run, checkpointed, requeued, resumed (KD_CHECKPOINT)"
  # the uninterrupted run, outside SLURM, at the same rank count (Open MPI refuses root unless told)
  [ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  timeout 300 mpirun -np 2 --oversubscribe "$BIN" run "$CFG/herd_requeue.yaml" -q \
    --output "$WORK/hq_ref.h5" 2> "$WORK/hq_ref.err"
  check $? "requeue_ckpt: uninterrupted reference run ($(tail -n 1 "$WORK/hq_ref.err"))"
  out=$WORK/hq.h5
  KD_BIN=$BIN KD_CONFIG=$CFG/herd_requeue.yaml KD_OUTPUT=$out KD_CHECKPOINT=$WORK/hq.ckpt.h5 \
    requeue_job hq herding.sbatch 'grep -q "\[herd\] iter" "$WORK/hq.err" 2>/dev/null'
  grep -q "kdistill: interrupted at iteration [0-9]*; checkpoint written to $WORK/hq.ckpt.h5" \
    "$WORK/hq.err"
  check $? "requeue_ckpt: solver's one-line interruption message names the checkpoint"
  grep -q "checkpoint $WORK/hq.ckpt.h5 found: resuming" "$WORK/hq.err"
  check $? "requeue_ckpt: requeued run resumed from the checkpoint"
  grep -q "herd: resumed at iteration" "$WORK/hq.err"; check $? "requeue_ckpt: solver resumed"
  [ ! -e "$WORK/hq.ckpt.h5" ]; check $? "requeue_ckpt: checkpoint removed after the final output"
  $PY - "$WORK/hq_ref.h5" "$out" <<'PYEOF'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
bad = [k for k in ("/coreset/points", "/coreset/weights", "/coreset/indices",
                   "/metrics/trace/mmd", "/metrics/trace/n_atoms")
       if not np.array_equal(a[k][()], b[k][()])]
bad += ["mmd"] if a["/metrics"].attrs["mmd"] != b["/metrics"].attrs["mmd"] else []
print("  requeue_ckpt: %d atoms, mmd %.6e; differs from the uninterrupted run: %s"
      % (b["/coreset/points"].shape[0], b["/metrics"].attrs["mmd"], bad or "nothing"))
sys.exit(1 if bad else 0)
PYEOF
  check $? "requeue_ckpt: output bitwise equal to the uninterrupted run"
fi
if want signal; then
  echo "== signal forwarding: scancel --signal=USR1 --batch (fake solver, srun and mpirun)"
  for launcher in srun mpirun; do
    out=$WORK/sig_$launcher.h5
    (
      cd "$WORK" && KD_BIN=$FAKE KD_CONFIG=$CFG/herd.yaml KD_OUTPUT=$out KD_LAUNCHER=$launcher \
        timeout 300 sbatch --wait --parsable -J kdtest-sig -n 2 -t 10 --output="$WORK/sig_$launcher.out" \
        --error="$WORK/sig_$launcher.err" --export=ALL "$REPO/jobs/herding.sbatch" > "$WORK/sig_$launcher.id"
      echo $? > "$WORK/sig_$launcher.rc"
    ) &
    waiter=$!
    for _ in $(seq 300); do [ -f "$out.started.0" ] && [ -f "$out.started.1" ] && break; sleep 0.2; done
    jid=$(cut -d';' -f1 "$WORK/sig_$launcher.id" 2>/dev/null)
    [ -n "$jid" ] && scancel --signal=USR1 --batch "$jid"
    wait "$waiter"
    rc=$(cat "$WORK/sig_$launcher.rc" 2>/dev/null)
    echo "  $launcher: job ${jid:-?} exit ${rc:-?}; ranks got: $(cat "$out".signal.* 2>/dev/null | tr '\n' ' ')"
    check $(( rc != 3 )) "signal/$launcher: job exit $rc, expected 3 (interrupted)"
    [ "$(cat "$out".signal.0 "$out".signal.1 2>/dev/null | tr '\n' ' ')" = "USR1 USR1 " ]
    check $? "signal/$launcher: both ranks must receive USR1"
    grep -q "received SIGUSR1; forwarding" "$WORK/sig_$launcher.err"
    check $? "signal/$launcher: job script logged the forwarding"
  done
  echo "== time-limit warning: sbatch -t 1 --signal=B:USR1@55 (fake solver; up to ~60 s)"
  out=$WORK/sig_timed.h5
  KD_BIN=$FAKE KD_CONFIG=$CFG/herd.yaml KD_OUTPUT=$out EXPECT_RC=3 \
    submit sig_timed herding.sbatch 2 -t 1 --signal=B:USR1@55
  check $(( RC != 3 )) "signal/timed: job exit $RC, expected 3"
  [ "$(cat "$out".signal.0 "$out".signal.1 2>/dev/null | tr '\n' ' ')" = "USR1 USR1 " ]
  check $? "signal/timed: both ranks must receive USR1 before the limit (got: $(cat "$out".signal.* 2>/dev/null | tr '\n' ' '))"
fi
if want bad; then
  echo "== bad input"
  KD_BIN=$WORK/no-such-kdistill KD_CONFIG=$CFG/herd.yaml KD_OUTPUT=$WORK/bad1.h5 EXPECT_RC=1 \
    submit bad_bin herding.sbatch 1
  check $(( RC != 1 )) "bad_bin: exit $RC, expected 1"
  grep -q "kdistill binary .* not found" "$WORK/bad_bin.err"; check $? "bad_bin: message"
  KD_BIN=$BIN KD_CONFIG=$WORK/no-such.yaml KD_OUTPUT=$WORK/bad2.h5 EXPECT_RC=1 \
    submit bad_cfgpath herding.sbatch 1
  check $(( RC != 1 )) "bad_cfgpath: exit $RC, expected 1"
  grep -q "config .* not found" "$WORK/bad_cfgpath.err"; check $? "bad_cfgpath: message"
  KD_BIN=$BIN KD_CONFIG=$CFG/herd.yaml KD_OUTPUT=$WORK/bad3.h5 KD_SET="kernel.lsx=2" EXPECT_RC=1 \
    submit bad_key herding.sbatch 2
  check $(( RC != 1 )) "bad_key: exit $RC, expected 1 (unknown key)"
  grep -q "lsx" "$WORK/bad_key.err"; check $? "bad_key: message names the key"
  [ ! -e "$WORK/bad3.h5" ]; check $? "bad_key: no output file"
fi
echo "slurm: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
