#!/bin/bash
# run_checkpoint.sh - checkpoint / restart of herding with the real binary (docs/checkpoint.md):
# what the checkpoint conformance table (tests/conformance/checkpoint/: all 11 algorithms, every
# safe point, another rank count, damaged states, interrupts on one rank) cannot express.
#  (a) the CLI path: a periodic checkpoint (run.checkpoint_keep) of bpcg_lazy resumed at 2 ranks
#      equals the uninterrupted 2-rank output bitwise (/coreset/*, /metrics/trace except seconds,
#      lmo_calls), and the trace's seconds before the checkpoint come from the file;
#      a signal (SIGTERM to the process) mid-run: exit 3, one line naming the checkpoint,
#      reason "signal"; resumed at 1 rank bitwise and at 2 ranks to 1e-12 against the
#      uninterrupted run; the checkpoint is removed after the final output, also where it is not
#      run.checkpoint_path (--resume COPY), and the summary's time line after a resume shows
#      this run's algorithm time (within the total) beside the sum with the run before;
#  (b) --resume with --set kernel.ls=2: exit 1 naming kernel.ls, no output;
#  (c) a truncated checkpoint: exit 1 naming the file, no output;
#  (d) an input file (.npy candidates): changed in place (same shape) or of another shape: exit 1
#      naming the input and the checkpoint, no output; the same bytes under another path and
#      mtime resume at 2 (bitwise), 4 and 1 ranks; a checkpoint written at 4 ranks resumes at 2;
#      a checkpoint of format 1 (no input fingerprints) is refused saying why.
# These runs must reach their safe point and checkpoint however loaded the machine is: the
# signal guard's default grace (1 s, tested in tests/hostile) would stop a slow step first.
export KDISTILL_SIGNAL_GRACE=600
KD_E2E_NAME=ckpt
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"
cp "$KD_SRC/herd.yaml" .
DSETS="-d /coreset/points -d /coreset/weights -d /coreset/indices -d /metrics/trace/iteration
 -d /metrics/trace/n_atoms -d /metrics/trace/mmd -a /metrics/lmo_calls -a /metrics/iterations"

# (a) the CLI path of a periodic checkpoint, resumed at 2 ranks
for algo in bpcg_lazy; do
  mpi 2 run herd.yaml -q --set algorithm.name=$algo --set output.path=full_$algo.h5 \
    2>err.txt || bad "$algo: uninterrupted run: $(cat err.txt)"
  mpi 2 run herd.yaml -q --set algorithm.name=$algo --set output.path=p_$algo.h5 \
    --set run.checkpoint_every=50 --set run.checkpoint_keep=true \
    --set run.checkpoint_path=ck_$algo.h5 2>err.txt || bad "$algo: periodic run: $(cat err.txt)"
  [ -f ck_$algo.h5 ] || { bad "$algo: no checkpoint written"; continue; }
  same full_$algo.h5 p_$algo.h5 0 || bad "$algo: checkpointing changed the output"
  it=$(h5dump -a iteration ck_$algo.h5 | grep '(0)' | awk '{print $2}')
  for np in 2; do
    # resumed from a copy without run.checkpoint_path: the copy is removed once the output is
    # written, as the checkpoint at run.checkpoint_path is; the time line's parts fit the total
    cp ck_$algo.h5 rk_$algo.h5
    mpi $np run herd.yaml --set algorithm.name=$algo --set output.path=r${np}_$algo.h5 \
      --resume rk_$algo.h5 >sum.txt 2>err.txt || { bad "$algo: resume at $np: $(cat err.txt)"; continue; }
    [ ! -f rk_$algo.h5 ] && [ ! -f r${np}_$algo.h5.ckpt.h5 ] &&
      ok "$algo: the checkpoint resumed from (no run.checkpoint_path) is removed after the output" ||
      bad "$algo: left behind: $(ls rk_$algo.h5 r${np}_$algo.h5.ckpt.h5 2>/dev/null)"
    tl=$(grep '^time:' sum.txt)
    awk '{for (i = 1; i <= NF; i++) { if ($i == "algorithm") a = $(i + 1); if ($i == "total") t = $(i + 1) }
          exit !(a + 0 <= t + 0 && $0 ~ /s with the run before the resume\), evaluation/) }' <<<"$tl" &&
      ok "$algo: $tl" || bad "$algo: the time line after a resume: $tl"
    tol=1e-12
    [ $np = 2 ] && tol=0
    # the trace up to the checkpoint comes from the file (its seconds too), not from a rerun
    secs() { h5dump -m %.17g -d /metrics/trace/seconds -s 0 -c $((it + 1)) "$1" |
      grep '^ *([0-9]'; }
    cmp -s <(secs ck_$algo.h5) <(secs r${np}_$algo.h5) ||
      bad "$algo: resumed trace seconds before iteration $it differ from the checkpoint's"
    same full_$algo.h5 r${np}_$algo.h5 $tol && ok "$algo: resumed at iteration $it on $np ranks (tol $tol)" ||
      bad "$algo: resumed at $np ranks differs: $(diff <(dump full_$algo.h5) <(dump r${np}_$algo.h5) | head -6)"
  done
done

# (a) a signal mid-run: the single process (no mpirun in between) gets SIGTERM
long="--set algorithm.name=fw_eq --set algorithm.max_iter=4000 --set candidates.grid_n=40"
mpi 1 run herd.yaml -q $long --set output.path=full_sig.h5 2>err.txt || bad "long run: $(cat err.txt)"
timeout 120 "$KD_BIN" run herd.yaml -q $long --set output.path=sig.h5 --set run.checkpoint_every=100 \
  2>sig.txt &
pid=$!
# the periodic checkpoint at iteration 100 comes long before the end (4000): wait for it however
# slow the machine is (up to the 120 s timeout), so the signal always lands mid-run
for i in $(seq 1 2400); do [ -f sig.h5.ckpt.h5 ] && break; sleep 0.05; done
# the kdistill process itself, not `timeout` (which passes a signal on to the process and again
# to its process group)
kids=$(pgrep -P $pid | head -1)
kill -TERM ${kids:-$pid}
wait $pid
rc=$?
reason=$(h5dump -a reason sig.h5.ckpt.h5 2>/dev/null | grep '(0)' | tr -d ' "' | cut -d: -f2)
if [ $rc = 3 ] && [ ! -f sig.h5 ] && [ "$(wc -l <sig.txt)" = 1 ] && [ "$reason" = signal ] &&
  grep -q "^kdistill: interrupted at iteration [0-9]*; checkpoint written to sig.h5.ckpt.h5 (resume with --resume sig.h5.ckpt.h5)$" sig.txt; then
  ok "SIGTERM: exit 3, $(cat sig.txt)"
else
  bad "SIGTERM: rc $rc, reason '$reason', stderr: $(cat sig.txt)"
fi
cp sig.h5.ckpt.h5 sig_copy.h5
mpi 1 run herd.yaml -q $long --set output.path=sig.h5 --resume sig.h5.ckpt.h5 2>err.txt ||
  bad "resume after SIGTERM: $(cat err.txt)"
same full_sig.h5 sig.h5 0 && ok "SIGTERM: resumed at 1 rank equals the uninterrupted run bitwise" ||
  bad "SIGTERM resume differs: $(diff <(dump full_sig.h5) <(dump sig.h5) | head -6)"
[ ! -f sig.h5.ckpt.h5 ] && ok "checkpoint removed after the output" || bad "checkpoint left behind"
mpi 2 run herd.yaml -q $long --set output.path=sig2.h5 --resume sig_copy.h5 2>err.txt ||
  bad "resume after SIGTERM at 2 ranks: $(cat err.txt)"
same full_sig.h5 sig2.h5 1e-12 && ok "SIGTERM: resumed at 2 ranks equals it to 1e-12" ||
  bad "SIGTERM resume at 2 ranks differs"
[ ! -f sig_copy.h5 ] && [ ! -f sig2.h5.ckpt.h5 ] && ok "the copy resumed from is removed too" ||
  bad "left behind after the resume from sig_copy.h5: $(ls sig_copy.h5 sig2.h5.ckpt.h5 2>/dev/null)"

# (b) a different configuration
refused "changed kernel.ls" \
  "ck_bpcg_lazy.h5: written for a different configuration (kernel.ls: 1.7320508075688772 in the checkpoint, 2 now)" \
  run herd.yaml -q --set output.path=bad.h5 --set kernel.ls=2 --resume ck_bpcg_lazy.h5

# (c) a truncated checkpoint
head -c 3000 ck_bpcg_lazy.h5 >trunc.h5
mpi 2 run herd.yaml -q --set output.path=bad.h5 --resume trunc.h5 >c.txt 2>&1
rc=$?
if [ $rc = 1 ] && [ ! -f bad.h5 ] && [ "$(grep -c '^kdistill: error: trunc.h5' c.txt)" = 1 ]; then
  ok "truncated: exit 1, $(grep '^kdistill' c.txt)"
else
  bad "truncated: rc $rc: $(cat c.txt)"
fi
mpi 2 run herd.yaml -q --set output.path=bad.h5 --resume missing.h5 >c.txt 2>&1
[ $? = 1 ] && grep -q "^kdistill: error: missing.h5" c.txt && ok "missing checkpoint: exit 1" ||
  bad "missing: $(cat c.txt)"

# (d) the input files: the checkpoint holds their fingerprints (shape, type, a content hash that
# does not depend on the rank count), not their paths or times
PY=${KD_PYTHON:-/usr/bin/python3}
REWRITE="$KD_SRC/../hostile/ckpt_rewrite.py"
"$PY" -c "
import numpy as np
X = np.random.default_rng(5).standard_normal((400, 2))
np.save('cand.npy', X)
Y = X.copy(); Y[123, 1] += 1e-9
np.save('changed.npy', Y)
np.save('wider.npy', np.random.default_rng(5).standard_normal((400, 3)))" ||
  bad "numpy could not write the inputs"
printf 'task: herd\ncandidates: {type: npy, path: cand.npy}\ntarget: {type: data}\nkernel: {name: gaussian, ls: 0.8}\nalgorithm: {name: bpcg, max_iter: 80}\noutput: {path: out.h5}\nrun: {seed: 2}\n' >in.yaml
mpi 2 run in.yaml -q --set output.path=full_in.h5 2>err.txt || bad "input run: $(cat err.txt)"
mpi 2 run in.yaml -q --set output.path=p_in.h5 --set run.checkpoint_every=30 \
  --set run.checkpoint_keep=true --set run.checkpoint_path=ck_in.h5 2>err.txt ||
  bad "input run with checkpoints: $(cat err.txt)"
[ "$(attr ck_in.h5 kdistill_checkpoint_format)" = 2 ] || bad "checkpoint format is not 2"
cp cand.npy orig.npy
cp changed.npy cand.npy # the same file name, shape and type, one value changed
refused "an input changed in place" \
  "ck_in.h5: input candidates (cand.npy) changed since the checkpoint was written (the same shape 400 x 2 <f8, other values); rerun without --resume" \
  run in.yaml -q --set output.path=bad.h5 --resume ck_in.h5
refused "an input of another shape" \
  "ck_in.h5: input candidates (wider.npy) changed since the checkpoint was written (400 x 2 <f8 then, 400 x 3 <f8 now)" \
  run in.yaml -q --set output.path=bad.h5 --set candidates.path=wider.npy --resume ck_in.h5
# the same bytes elsewhere, written later (another mtime): resumes, at any rank count
mkdir moved && sleep 1 && cp orig.npy moved/copy.npy
for np in 2 4 1; do
  rm -f r_in.h5
  mpi $np run in.yaml -q --set output.path=r_in.h5 --set candidates.path=moved/copy.npy \
    --set run.checkpoint_keep=true --resume ck_in.h5 2>err.txt ||
    { bad "moved input: resume at $np: $(cat err.txt)"; continue; }
  tol=1e-12
  [ $np = 2 ] && tol=0
  same full_in.h5 r_in.h5 $tol && ok "moved input: resumed at $np ranks (tol $tol)" ||
    bad "moved input: resumed at $np ranks differs"
done
# a checkpoint written at 4 ranks resumes at 2 (the fingerprint is the same at every rank count)
mpi 4 run in.yaml -q --set candidates.path=orig.npy --set output.path=p4_in.h5 \
  --set run.checkpoint_every=30 --set run.checkpoint_keep=true --set run.checkpoint_path=ck4_in.h5 \
  2>err.txt || bad "4-rank run with checkpoints: $(cat err.txt)"
mpi 2 run in.yaml -q --set candidates.path=orig.npy --set output.path=r42_in.h5 \
  --resume ck4_in.h5 2>err.txt && same full_in.h5 r42_in.h5 1e-12 &&
  ok "written at 4 ranks, resumed at 2" || bad "written at 4 ranks, resumed at 2: $(cat err.txt)"
# a checkpoint of the format before the fingerprints (1) is refused, saying why
cp ck_in.h5 old.h5
"$PY" "$REWRITE" old.h5 "f.attrs['kdistill_checkpoint_format'] = np.int64(1); del f.attrs['input_prints']" ||
  bad "ckpt_rewrite.py failed"
refused "format 1" \
  "old.h5: written by an older kdistill (checkpoint format 1, without the fingerprints of the input files), so it cannot tell whether the inputs changed; rerun without --resume" \
  run in.yaml -q --set output.path=bad.h5 --set candidates.path=orig.npy --resume old.h5

echo "$fails failure(s)"
[ $fails = 0 ]
