#!/bin/bash
# run_checkpoint_quad.sh - checkpoint / restart of the quadrature family with the real binary
# (docs/quadrature.md, "Checkpoint and restart"): what the checkpoint conformance table
# (tests/conformance/checkpoint/: every safe point of both algorithms, every rank count, damaged
# states, interrupts on one rank) cannot express. Compared: /coreset/points, /coreset/weights,
# /coreset/indices and the /metrics attributes mmd, mmd_recombination, mmd_opt, test_functions.
#  (a) the CLI path: run.checkpoint_every = 1 with run.checkpoint_keep leaves the file of tree
#      level 3 (reason periodic) and does not change the output; resumed at 2 ranks it equals the
#      uninterrupted run bitwise; the eigenpairs of the ScaLAPACK path (2 ranks) resumed at 1 rank
#      give the 2-rank rule bitwise;
#  (b) a signal mid-run to the real processes: SIGTERM to a single process (twice, 0.1 s apart),
#      SIGUSR1 to one of the two rank processes under mpirun: exit 3, one line naming the
#      checkpoint, reason "signal"; resumed it equals the uninterrupted run; the checkpoint is
#      removed after the output. A signal that arrives only after the last safe point cannot
#      interrupt (the run ends normally with the same output): such an attempt is repeated, up to
#      4 attempts;
#  (c) --resume with a changed configuration on the command line (algorithm.n): exit 1 naming the
#      key, no output.
# These runs must reach their safe point and checkpoint however loaded the machine is: the
# signal guard's default grace (1 s, tested in tests/hostile) would stop a slow step first.
export KDISTILL_SIGNAL_GRACE=600
KD_E2E_NAME=ckpt_quad
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"
SAME_FLOOR=1e-300 SAME_MIN=40
cp "$KD_SRC/nystrom.yaml" .
DSETS="-d /coreset/points -d /coreset/weights -d /coreset/indices -a /metrics/mmd
 -a /metrics/mmd_recombination -a /metrics/mmd_opt -a /metrics/test_functions"
# resume_at NP CFG CKPT REF WHAT [ARGS]: resume at NP ranks and compare with REF (2 ranks)
resume_at() {
  local np=$1 cfg=$2 ck=$3 ref=$4 what=$5 tol=1e-10
  shift 5
  [ $np = 2 ] && tol=0
  cp "$ck" rk.h5 # a finished run removes the checkpoint it resumed from: use a copy
  mpi $np run "$cfg" -q "$@" --set output.path=r$np.h5 --resume rk.h5 2>err.txt ||
    { bad "$what: resume at $np ranks: $(cat err.txt)"; return; }
  same "$ref" r$np.h5 $tol && ok "$what: resumed at $np ranks equals the uninterrupted run (tol $tol)" ||
    bad "$what: resumed at $np ranks differs: $(diff <(dump "$ref") <(dump r$np.h5) | head -6)"
}

# (a) the CLI path of periodic checkpoints: the kept one is the last written
mpi 2 run nystrom.yaml -q --set output.path=full.h5 2>err.txt || bad "uninterrupted: $(cat err.txt)"
mpi 2 run nystrom.yaml -q --set output.path=p1.h5 --set run.checkpoint_every=1 \
  --set run.checkpoint_keep=true --set run.checkpoint_path=ck1.h5 2>err.txt ||
  bad "checkpoint_every=1: $(cat err.txt)"
if [ -f ck1.h5 ]; then
  same full.h5 p1.h5 0 && ok "checkpoint_every=1 does not change the output" ||
    bad "checkpoint_every=1 changed the output"
  it=$(attr ck1.h5 iteration)
  lev=$(h5dump -d /state/level ck1.h5 | grep '(0)' | awk '{print $2}')
  [ "$it $lev" = "4 3" ] && [ "$(attr ck1.h5 reason)" = periodic ] &&
    ok "checkpoint_every=1: last checkpoint at iteration $it (level $lev)" ||
    bad "checkpoint_every=1: iteration '$it', level '$lev', want '4 3'"
  resume_at 2 nystrom.yaml ck1.h5 full.h5 "nystrom level $lev"
else
  bad "checkpoint_every=1: no checkpoint"
fi

# the ScaLAPACK eigen path (2 ranks, l = 240 >= eig_parallel_min): the eigen-step checkpoint carries
# its eigenpairs, so a resume at 1 rank (which would use LAPACK) still gives the 2-rank rule bitwise
sl="--set algorithm.eig_parallel_min=100 --set algorithm.block_size=16"
mpi 2 run nystrom.yaml -q $sl --set output.path=sfull.h5 2>err.txt || bad "scalapack: $(cat err.txt)"
mpi 2 run nystrom.yaml -q $sl --set output.path=sp.h5 --set run.checkpoint_every=5 \
  --set run.checkpoint_keep=true --set run.checkpoint_path=sck.h5 2>err.txt ||
  bad "scalapack periodic: $(cat err.txt)"
mpi 1 run nystrom.yaml -q $sl --set output.path=s1.h5 --resume sck.h5 2>err.txt ||
  bad "scalapack resume at 1: $(cat err.txt)"
es=$(h5dump -a /metrics/eig_scalapack s1.h5 | grep '(0)' | awk '{print $2}')
same sfull.h5 s1.h5 0 && [ "$es" = 1 ] &&
  ok "ScaLAPACK eigenpairs of 2 ranks resumed at 1 rank: bitwise equal, eig_scalapack $es" ||
  bad "ScaLAPACK eigen-step resume at 1 rank differs (eig_scalapack '$es')"

# (b) a signal mid-run. The long problem: the test functions on N = 131072 rows take most of the
# run, between the first checkpoint (eigen step) and tree level 0.
long="--set algorithm.n=48 --set algorithm.sample_size=131072"
mpi 2 run nystrom.yaml -q $long --set output.path=lfull.h5 2>err.txt || bad "long: $(cat err.txt)"
# signal_run NP SIG: start, wait (<= 60 s) for the first checkpoint, signal one rank process
signal_run() {
  local np=$1 sig=$2 pid kids
  rm -f sig.h5 sig.h5.ckpt.h5
  if [ "$np" = 1 ]; then
    timeout 120 "$KD_BIN" run nystrom.yaml -q $long --set output.path=sig.h5 \
      --set run.checkpoint_every=1 2>sig.txt &
    pid=$!
  else
    timeout 120 "$MPIEXEC" -n "$np" $KD_MPIEXEC_FLAGS "$KD_BIN" run nystrom.yaml -q $long \
      --set output.path=sig.h5 --set run.checkpoint_every=1 2>sig.txt &
    pid=$!
  fi
  for i in $(seq 1 3000); do [ -f sig.h5.ckpt.h5 ] && break; sleep 0.02; done
  if [ "$np" = 1 ]; then
    # the kdistill process itself, not `timeout` (which passes a signal on to the process and
    # again to its process group)
    kids=$(pgrep -P $pid | head -1)
    kill -$sig ${kids:-$pid}
    # and again while it works towards its safe point: a repeated signal (SLURM and timeout
    # signal a process group as well as the process) must not kill it
    sleep 0.1
    kill -$sig ${kids:-$pid} 2>/dev/null
  else
    # one rank process only (a child of mpirun; under `timeout` the grandchildren)
    kids=$(pgrep -P "$(pgrep -P $pid | head -1)" | head -1)
    [ -n "$kids" ] && kill -$sig $kids
  fi
  wait $pid
}
for mode in "1 TERM" "2 USR1"; do
  set -- $mode
  np=$1 sig=$2 rc=0
  for attempt in 1 2 3 4; do
    signal_run $np $sig
    rc=$?
    [ $rc = 0 ] || break
    # the signal came after the last safe point: a normal, complete run
    same lfull.h5 sig.h5 1e-10 || bad "SIG$sig at $np: the uninterrupted output differs"
    echo "note: SIG$sig at $np ranks arrived after the last safe point (attempt $attempt)"
  done
  reason=$(attr sig.h5.ckpt.h5 reason)
  if [ $rc = 3 ] && [ ! -f sig.h5 ] && [ "$(grep -c '^kdistill' sig.txt)" = 1 ] &&
    [ "$reason" = signal ] &&
    grep -q "^kdistill: interrupted at iteration [0-9]*; checkpoint written to sig.h5.ckpt.h5 (resume with --resume sig.h5.ckpt.h5)$" sig.txt; then
    ok "SIG$sig at $np rank(s): exit 3, level $(h5dump -d /state/level sig.h5.ckpt.h5 |
      grep '(0)' | awk '{print $2}'), $(grep '^kdistill' sig.txt)"
    cp sig.h5.ckpt.h5 sig_$np.h5
    resume_at 2 nystrom.yaml sig_$np.h5 lfull.h5 "SIG$sig at $np" $long
    # resumed into the same output path: its checkpoint is removed once the output is in place
    mpi 1 run nystrom.yaml -q $long --set output.path=sig.h5 --resume sig.h5.ckpt.h5 2>err.txt ||
      bad "SIG$sig at $np: resume into sig.h5: $(cat err.txt)"
    [ -f sig.h5 ] && [ ! -f sig.h5.ckpt.h5 ] && ok "SIG$sig at $np: checkpoint removed after the output" ||
      bad "SIG$sig at $np: checkpoint left behind"
  else
    bad "SIG$sig at $np rank(s): rc $rc, reason '$reason', stderr: $(cat sig.txt)"
  fi
done

# (c) a different configuration
refused "changed algorithm.n" \
  "ck1.h5: written for a different configuration (algorithm.n: 24 in the checkpoint, 25 now)" \
  run nystrom.yaml -q --set output.path=bad.h5 --set algorithm.n=25 --resume ck1.h5

echo "$fails failure(s)"
[ $fails = 0 ]
