#!/bin/bash
# run_checkpoint_ctt.sh - checkpoint / restart of the ctt_study task with the real binary
# (docs/checkpoint.md): the state is the finished replicates. What the checkpoint conformance
# table (tests/conformance/checkpoint/: every safe point, resume at another rank count, damaged
# states, interrupts on one rank) cannot express:
#  (a) the CLI path: periodic checkpoints (run.checkpoint_keep) do not change the output; the file
#      holds /state/reject [done * n_conf] with done a multiple of the round size; resumed at 2
#      ranks the output equals the uninterrupted 2-rank run bitwise (/study/* except wall times);
#  (b) SIGTERM sent to the kdistill processes (the children of mpirun) after the first checkpoint
#      appeared: exit 3, one line naming the checkpoint, reason "signal"; resumed at 2 ranks it
#      equals the uninterrupted run bitwise and the checkpoint is removed after the output;
#  (c) --resume with a changed study key: exit 1 naming the key, no output;
#  (e) a study with actt (p-values NaN) checkpointed and resumed at 1 rank: bitwise equal;
#  (d) a sweep of herd points with periodic checkpoints: each point's checkpoint
#      (<run.checkpoint_path>.NNNN) is removed once its output is written, kept with
#      run.checkpoint_keep.
# These runs must reach their safe point and checkpoint however loaded the machine is: the
# signal guard's default grace (1 s, tested in tests/hostile) would stop a slow step first.
export KDISTILL_SIGNAL_GRACE=600
KD_E2E_NAME=ckpt_ctt
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"
cp "$KD_SRC/ctt_study.yaml" .
DSETS="-d /study/g -d /study/rejections -d /study/rejection_rate -d /study/se -d /study/reject
 -d /study/p_value -d /study/statistic"

# (a) periodic: 48 replicates, a checkpoint every 3 rounds (6 replicates at 2 ranks)
mpi 2 run ctt_study.yaml -q --set output.path=full.h5 2>err.txt || bad "uninterrupted: $(cat err.txt)"
mpi 2 run ctt_study.yaml -q --set output.path=p.h5 --set run.checkpoint_every=3 \
  --set run.checkpoint_keep=true --set run.checkpoint_path=ck.h5 2>err.txt ||
  bad "periodic run: $(cat err.txt)"
if [ -f ck.h5 ]; then
  it=$(attr ck.h5 iteration)
  nrej=$(h5dump -H -d /state/reject ck.h5 | grep -o 'SIMPLE { ( [0-9]* )' | grep -o '[0-9][0-9]*')
  # the last periodic checkpoint: after 42 of 48 replicates, 3 configurations (g 0, 1, exact)
  [ "$it" = 42 ] && [ "$nrej" = 126 ] && [ "$(attr ck.h5 task)" = ctt_study ] &&
    [ "$(attr ck.h5 reason)" = periodic ] && ok "periodic checkpoint after $it replicates" ||
    bad "checkpoint: iteration '$it', /state/reject of $nrej"
  same full.h5 p.h5 && ok "checkpointing does not change the output" ||
    bad "checkpointing changed the output"
  for np in 2; do
    cp ck.h5 rk.h5 # the file resumed from is removed after the output: resume from a copy
    mpi $np run ctt_study.yaml -q --set output.path=r$np.h5 --resume rk.h5 2>err.txt ||
      { bad "resume at $np: $(cat err.txt)"; continue; }
    [ ! -f rk.h5 ] || bad "the checkpoint resumed from (not run.checkpoint_path) was left behind"
    same full.h5 r$np.h5 && ok "resumed after $it replicates at $np ranks: bitwise equal" ||
      bad "resumed at $np ranks differs: $(diff <(dump full.h5) <(dump r$np.h5) | head -6)"
  done
else
  bad "no periodic checkpoint written"
fi

# (b) SIGTERM to the kdistill processes of a longer study
long="--set study.replicates=300 --set study.m=4096 --set study.exact=false"
mpi 2 run ctt_study.yaml -q $long --set output.path=full_sig.h5 2>err.txt ||
  bad "long run: $(cat err.txt)"
"$MPIEXEC" -n 2 $KD_MPIEXEC_FLAGS "$KD_BIN" run ctt_study.yaml -q $long --set output.path=sig.h5 \
  --set run.checkpoint_every=5 2>sig.txt &
pid=$!
for i in $(seq 1 1200); do [ -f sig.h5.ckpt.h5 ] && break; sleep 0.05; done
kids=$(pgrep -P $pid)
[ -n "$kids" ] && kill -TERM $kids
wait $pid
rc=$?
reason=$(attr sig.h5.ckpt.h5 reason)
if [ $rc = 3 ] && [ ! -f sig.h5 ] && [ "$(grep -c '^kdistill' sig.txt)" = 1 ] &&
  [ "$reason" = signal ] &&
  grep -q "^kdistill: interrupted after [0-9]* of 300 replicates; checkpoint written to sig.h5.ckpt.h5 (resume with --resume sig.h5.ckpt.h5)$" sig.txt; then
  ok "SIGTERM: exit 3, $(grep '^kdistill' sig.txt)"
else
  bad "SIGTERM: rc $rc, reason '$reason', stderr: $(cat sig.txt)"
fi
cp sig.h5.ckpt.h5 sig_copy.h5 2>/dev/null
mpi 2 run ctt_study.yaml -q $long --set output.path=sig.h5 --resume sig.h5.ckpt.h5 2>err.txt ||
  bad "resume after SIGTERM: $(cat err.txt)"
same full_sig.h5 sig.h5 && ok "SIGTERM: resumed at 2 ranks equals the uninterrupted run bitwise" ||
  bad "SIGTERM resume differs: $(diff <(dump full_sig.h5) <(dump sig.h5) | head -6)"
[ ! -f sig.h5.ckpt.h5 ] && ok "checkpoint removed after the output" || bad "checkpoint left behind"

# (e) actt's rows (a decision, p-value NaN) through a periodic checkpoint and a resume at 1 rank
act="--set study.g=[0] --set study.exact=false --set study.actt=[0,1] --set study.actt_n_ls=3
 --set study.actt_B2=30"
mpi 2 run ctt_study.yaml -q $act --set output.path=fa.h5 2>err.txt || bad "actt study: $(cat err.txt)"
mpi 2 run ctt_study.yaml -q $act --set output.path=pa.h5 --set run.checkpoint_every=3 \
  --set run.checkpoint_keep=true --set run.checkpoint_path=cka.h5 2>err.txt ||
  bad "actt study, periodic: $(cat err.txt)"
cp cka.h5 rka.h5
mpi 1 run ctt_study.yaml -q $act --set output.path=ra.h5 --resume rka.h5 2>err.txt ||
  bad "actt study, resume: $(cat err.txt)"
npv=$(h5dump -d /study/p_value fa.h5 | grep -o 'nan' | wc -l)
[ "$(attr cka.h5 iteration)" = 42 ] && [ "$npv" = 96 ] && same fa.h5 pa.h5 && same fa.h5 ra.h5 &&
  ok "actt study: 96 NaN p-values; checkpointed and resumed at 1 rank: bitwise equal" ||
  bad "actt study: iteration '$(attr cka.h5 iteration)', $npv NaN p-values, $(diff <(dump fa.h5) <(dump ra.h5) | head -4)"

# (c) a different configuration
refused "changed study.B" "sig_copy.h5: written for a different configuration (study.B" \
  run ctt_study.yaml -q $long --set output.path=bad.h5 --set study.B=30 --resume sig_copy.h5

# (d) sweep points remove their checkpoints after their output
sed 's/^task: herd/task: sweep/' "$KD_SRC/herd.yaml" >sw.yaml
printf 'sweep:\n  task: herd\n  product:\n    - {key: algorithm.max_iter, values: [100, 120]}\n' \
  >>sw.yaml
for keep in false true; do
  mpi 2 run sw.yaml -q --set run.checkpoint_every=50 --set run.checkpoint_path=sck_$keep.h5 \
    --set run.checkpoint_keep=$keep --set sweep.dir=sw_$keep --set output.path=sw_$keep.h5 \
    2>err.txt || bad "sweep (keep $keep): $(cat err.txt)"
  n=$(ls sck_$keep.h5.* 2>/dev/null | wc -l)
  [ -f sw_$keep/point_0001.h5 ] || bad "sweep (keep $keep): no point output"
  if [ $keep = false ]; then
    [ "$n" = 0 ] && ok "sweep: point checkpoints removed after their outputs" ||
      bad "sweep: $n point checkpoint(s) left behind"
  else
    [ "$n" = 2 ] && ok "sweep: run.checkpoint_keep keeps the 2 point checkpoints" ||
      bad "sweep keep: $n point checkpoint(s)"
  fi
done

echo "$fails failure(s)"
[ $fails = 0 ]
