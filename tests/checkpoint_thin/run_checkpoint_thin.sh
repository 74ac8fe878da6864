#!/bin/bash
# run_checkpoint_thin.sh - checkpoint / restart of the thinning tree with the real binary
# (docs/thinning.md, "Checkpoint and restart"). thin.yaml: kt_compress, n_in = 2^14, g = 2,
# n_out = 16: steps 4 (leaf bins), 5..7 (merge levels), 8..10 (halving rounds of rank 0).
#  (a) periodic checkpoints (run.checkpoint_keep) do not change the output; the last one kept is
#      at the expected step with /state/rows of the expected shape; resumed, the output
#      (/coreset/*) equals the uninterrupted 2-rank output bitwise: at a merge level (step 6; at
#      1, 2 and 4 ranks), between rank 0's rounds (step 8; 4 ranks), after the last round
#      (step 10; 1 rank) and at the leaf level (n_out = 128: step 4; 2 ranks);
#      one progress line per step on rank 0, none under --quiet;
#  (b) SIGUSR1 sent to the kdistill processes (not mpirun) of an rkh run (n_in = 3 * 4^7) once its
#      first checkpoint (step K = 7) exists, i.e. during the first halving round of rank 0, which
#      takes most of the run: exit 3, one line naming the checkpoint, reason "signal", a step in
#      8..17, no output; resumed at 2 and 4 ranks it equals the uninterrupted run bitwise, and
#      the checkpoint is removed after the output;
# (the thinning rows of tests/conformance/checkpoint/ resume every step of five algorithms at the
# run's rank count and at 1 rank without files.)
#  (c) --resume with --set algorithm.g=3: exit 1 naming algorithm.g, no output; with
#      algorithm.refine_group_rows, halve_group and leaf_split changed (not part of the
#      configuration hash): the same output;
#  (d) --resume of a kt_compress checkpoint in a kh_compress run: exit 1, no output.
# These runs must reach their safe point and checkpoint however loaded the machine is: the
# signal guard's default grace (1 s, tested in tests/hostile) would stop a slow step first.
export KDISTILL_SIGNAL_GRACE=600
KD_E2E_NAME=ckpt_thin
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"
DSETS="-d /coreset/points -d /coreset/weights -d /coreset/indices"
cp "$KD_SRC/thin.yaml" .
grep -v '^  g: \|^  refine_' thin.yaml >plain.yaml # keys rkh does not have
# same(A, B): both outputs exist and their coresets are bitwise equal
shape() { h5dump -H -d "$2" "$1" 2>/dev/null | grep -o 'SIMPLE { ( [0-9, ]* )' | tr -dc '0-9,'; }

# (a) periodic checkpoints: case = "name|extra --set|every|step|rows shape|rank counts"
mpi 2 run thin.yaml --set output.path=full.h5 2>full.txt || bad "uninterrupted run: $(cat full.txt)"
n=$(grep -c '^kdistill: \[thin\] iter' full.txt)
[ "$n" = 7 ] && grep -q '^kdistill: \[thin\] iter 8  atoms 256  elapsed' full.txt &&
  ok "7 progress lines (steps 4..10)" || bad "progress lines: $(grep iter full.txt)"
# the time left is labelled an estimate (the mean step time so far; it said "eta <= 5.5 s" at
# 12.35 s of a run that ended at 31 s)
grep -q '^kdistill: \[thin\] iter 8  atoms 256  elapsed [0-9.]* s  eta ~ [0-9.]* s (estimate)$' full.txt &&
  ! grep -q 'eta <=' full.txt && ok "eta labelled an estimate" || bad "eta: $(grep iter full.txt)"
for c in "level||6|6|1024,3|1 2 4" "round||4|8|256,3|4" "last||1|10|64,3|1" \
  "leaf|--set algorithm.n_out=128|4|4|4096,3|2"; do
  IFS='|' read -r name extra every step rows nps <<<"$c"
  cfg=thin.yaml
  f=full.h5
  if [ -n "$extra" ]; then
    f=full_$name.h5
    mpi 2 run $cfg -q $extra --set output.path=$f 2>err.txt || bad "$name: uninterrupted: $(cat err.txt)"
  fi
  mpi 2 run $cfg -q $extra --set output.path=p_$name.h5 --set run.checkpoint_every=$every \
    --set run.checkpoint_keep=true --set run.checkpoint_path=ck_$name.h5 2>p.txt ||
    bad "$name: periodic run: $(cat p.txt)"
  [ -s p.txt ] && bad "$name: --quiet run printed: $(cat p.txt)"
  [ -f ck_$name.h5 ] || { bad "$name: no checkpoint written"; continue; }
  same $f p_$name.h5 && ok "$name: checkpointing does not change the output" ||
    bad "$name: checkpointing changed the output"
  it=$(attr ck_$name.h5 iteration)
  sh=$(shape ck_$name.h5 /state/rows)
  [ "$it" = $step ] && [ "$sh" = $rows ] && [ "$(attr ck_$name.h5 reason)" = periodic ] &&
    ok "$name: checkpoint at step $it, /state/rows [$sh]" ||
    bad "$name: checkpoint at step '$it' (want $step), /state/rows '$sh' (want $rows)"
  for np in $nps; do
    cp ck_$name.h5 rk.h5 # a finished run removes the checkpoint it resumed from: use a copy
    mpi $np run $cfg -q $extra --set output.path=r${np}_$name.h5 --resume rk.h5 2>err.txt ||
      { bad "$name: resume at $np: $(cat err.txt)"; continue; }
    same $f r${np}_$name.h5 && ok "$name: resumed after step $it at $np ranks: bitwise equal" ||
      bad "$name: resumed at $np ranks differs: $(diff <(dump $f) <(dump r${np}_$name.h5) | head -4)"
  done
done

# (b) SIGUSR1 to the ranks of a slower run: rkh on 49152 rows (F = 3 trees of 4^7). Its safe
# points are steps 7 (K: the input after the leaves' remainder rule) and 8..17 (rank 0's halving
# rounds, 49152 -> 48); the first round takes most of the run (0.9 s of 1.2 s here, 10x more under
# ASan), so the signal sent once the checkpoint of step 7 exists arrives well before the last safe
# point. target.self false: the exact MMD would need n_in^2 kernel evaluations (not compared).
long="--set algorithm.name=rkh --set data.n=49152 --set target.self=false"
mpi 2 run plain.yaml -q $long --set output.path=full_sig.h5 2>err.txt || bad "long run: $(cat err.txt)"
"$MPIEXEC" -n 2 $KD_MPIEXEC_FLAGS "$KD_BIN" run plain.yaml -q $long --set output.path=sig.h5 \
  --set run.checkpoint_every=7 2>sig.txt &
pid=$!
for i in $(seq 1 6000); do [ -f sig.h5.ckpt.h5 ] && break; sleep 0.01; done
kids=$(pgrep -P $pid)
[ -n "$kids" ] && kill -USR1 $kids
wait $pid
rc=$?
it=$(attr sig.h5.ckpt.h5 iteration)
if [ $rc = 3 ] && [ ! -f sig.h5 ] && [ "$(grep -c '^kdistill' sig.txt)" = 1 ] &&
  [ "${it:-0}" -ge 8 ] && [ "${it:-0}" -le 17 ] &&
  [ "$(attr sig.h5.ckpt.h5 reason)" = signal ] &&
  grep -q "^kdistill: interrupted at iteration $it; checkpoint written to sig.h5.ckpt.h5 (resume with --resume sig.h5.ckpt.h5)$" sig.txt; then
  ok "SIGUSR1: exit 3 after step $it, $(grep '^kdistill' sig.txt)"
else
  bad "SIGUSR1: rc $rc, step '$it', reason '$(attr sig.h5.ckpt.h5 reason)', stderr: $(cat sig.txt)"
fi
cp sig.h5.ckpt.h5 sig_copy.h5 2>/dev/null
mpi 2 run plain.yaml -q $long --set output.path=sig.h5 --resume sig.h5.ckpt.h5 2>err.txt ||
  bad "resume after SIGUSR1: $(cat err.txt)"
same full_sig.h5 sig.h5 && ok "SIGUSR1: resumed at 2 ranks equals the uninterrupted run bitwise" ||
  bad "SIGUSR1 resume differs: $(diff <(dump full_sig.h5) <(dump sig.h5) | head -4)"
[ ! -f sig.h5.ckpt.h5 ] && ok "checkpoint removed after the output" || bad "checkpoint left behind"
for np in 4; do
  mpi $np run plain.yaml -q $long --set output.path=sig$np.h5 --resume sig_copy.h5 2>err.txt ||
    bad "resume after SIGUSR1 at $np ranks: $(cat err.txt)"
  same full_sig.h5 sig$np.h5 && ok "SIGUSR1: resumed at $np ranks: bitwise equal" ||
    bad "SIGUSR1 resume at $np ranks differs"
done

# (c) a different configuration
refused "changed algorithm.g" \
  "ck_level.h5: written for a different configuration (algorithm.g: 2 in the checkpoint, 3 now)" \
  run thin.yaml -q --set output.path=bad.h5 --set algorithm.g=3 --resume ck_level.h5

# (c2) keys that do not change the result may change: KH-Refine's groups, the halvings' groups,
# the leaf bins' split; run.checkpoint_keep on the resuming run keeps the file it resumed from
if mpi 2 run thin.yaml -q --set output.path=rg.h5 --set algorithm.refine_group_rows=1 \
  --set algorithm.halve_group=1 --set algorithm.leaf_split=2 --set run.checkpoint_keep=true \
  --resume ck_level.h5 2>err.txt; then
  same full.h5 rg.h5 && ok "resumed with refine_group_rows changed: bitwise equal" ||
    bad "resumed with refine_group_rows changed: the output differs"
  [ -f ck_level.h5 ] || bad "run.checkpoint_keep: the checkpoint resumed from was removed"
else
  bad "resume with refine_group_rows changed refused: $(cat err.txt)"
fi

# (d) a checkpoint of another algorithm
refused "another algorithm" \
  "ck_level.h5: written for a different configuration (algorithm.name: kt_compress in the checkpoint, kh_compress now)" \
  run thin.yaml -q --set output.path=bad.h5 --set algorithm.name=kh_compress --resume ck_level.h5

echo "$fails failure(s)"
[ $fails = 0 ]
