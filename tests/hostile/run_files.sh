#!/bin/bash
# run_files.sh CASE NP - file safety and agreed refusals (issue 34, "reliability, round two"), one
# case per finding, on the real kdistill binary under mpirun (KD_BIN, MPIEXEC, KD_SRC; the crafted
# files come from Debian's python3 with numpy and h5py, tests/hostile/mknpz.py). Each case checks
# the exit status, one error line naming the file or key, no hang, and that the files the run
# must not touch are byte for byte as they were (docs/reliability.md, "File safety").
source "$(dirname "$0")/lib.sh"
here=$(dirname "$KD_MKH5")
mkdata() { # in.csv, in.npy, in.h5 (dataset data): the same 256 x 2 rows
  "$PY" -c "
import numpy as np, h5py
X = np.random.default_rng(1).standard_normal((256, 2))
np.savetxt('in.csv', X, delimiter=','); np.save('in.npy', X)
with h5py.File('in.h5', 'w') as f: f['data'] = X"
}
same() { cmp -s "$1" "$2" || bad "$1 changed"; }

case $case in
f3_external_storage) # values or links that reach outside the named file are refused
  printf 'TOPSECRET-0123456789abcdef\n' >secret.txt
  "$PY" -c "
import h5py, numpy as np, os
with h5py.File('other.h5', 'w') as f: f['X'] = np.ones((64, 2))
with h5py.File('ext.h5', 'w') as f:
    f.create_dataset('x', shape=(20, 1), dtype='u1', external=[(os.path.abspath('secret.txt'), 0, 20)])
with h5py.File('elink.h5', 'w') as f:
    f['x'] = h5py.ExternalLink('other.h5', '/X'); f['g'] = h5py.ExternalLink('other.h5', '/')
lay = h5py.VirtualLayout(shape=(64, 2), dtype='f8'); lay[:] = h5py.VirtualSource('other.h5', 'X', shape=(64, 2))
with h5py.File('vds.h5', 'w') as f: f.create_virtual_dataset('v', lay)"
  for spec in "ext.h5 x external storage" "elink.h5 x external link" "elink.h5 g/X external link" \
    "vds.h5 v virtual dataset"; do
    set -- $spec
    kd thin "$1" --dataset "$2" --n-out 4 -o o.h5 --set algorithm.name=uniform
    expect_err 1 "$1"
    grep '^kdistill: error:' all.txt | grep -q "allow_external" || bad "$spec: no hint of data.allow_external"
    [ ! -e o.h5 ] || bad "$spec: output written"
  done
  printf 'task: thin\ndata: {type: hdf5, path: ext.h5, dataset: x}\nalgorithm: {name: uniform, n_out: 4}\noutput: {path: o.h5}\n' >t.yaml
  kd validate t.yaml
  expect_err 1 "external storage"
  # the explicit opt-in reads the external raw data
  kd run t.yaml --set data.allow_external=true
  expect_ok
  ;;
f4_output_is_input) # an output never replaces a file the run reads
  mkdata
  for f in in.csv in.npy in.h5; do
    cp "$f" "keep_$f"
    kd thin "$f" -o "$f" --n-out 4
    expect_err 1 "is the same file as the"
    same "$f" "keep_$f"
    kd thin "$f" -o "./sub/../$f" --n-out 4 # another spelling of the same file
    expect_err 1 "same file"
    same "$f" "keep_$f"
    [ ! -d sub ] || bad "a directory was created for a refused output"
  done
  ln -s in.csv alias.csv # the input read through a link is still the same file
  kd thin alias.csv -o in.csv --n-out 4
  expect_err 1 "same file"
  same in.csv keep_in.csv
  herd_cfg c.yaml
  cp c.yaml keep.yaml
  kd run c.yaml --output c.yaml
  expect_err 1 "config file"
  same c.yaml keep.yaml
  kd validate c.yaml --set output.path=c.yaml
  expect_err 1 "output.path"
  # the study CSV and a checkpoint path are outputs too
  sed -e 's|replicates: 200|replicates: 2|' -e 's|m: 2048|m: 128|' -e 's|n: 2048|n: 128|' \
    -e 's|path: out/ctt_study.h5|path: s.h5|' "$KD_SRC/configs/ctt_study.yaml" >s.yaml
  cp s.yaml keep_s.yaml
  kd run s.yaml --set study.csv=s.yaml
  expect_err 1 "study.csv"
  same s.yaml keep_s.yaml
  sed 's|^candidates:.*|candidates: {type: hdf5, path: in.h5}|' c.yaml >ch.yaml
  kd run ch.yaml --set run.checkpoint_path=in.h5 --set run.checkpoint_every=5
  expect_err 1 "run.checkpoint_path"
  same in.h5 keep_in.h5
  # a resume checkpoint is an input of every output but run.checkpoint_path
  mkckpt
  cp ck.h5 keep_ck.h5
  kd run herd.yaml --resume ck.h5 --output ck.h5
  expect_err 1 "resume checkpoint"
  same ck.h5 keep_ck.h5
  kd run herd.yaml --resume ck.h5 --set run.checkpoint_path=ck.h5 --set run.checkpoint_keep=true
  expect_ok
  ;;
f5_checkpoint_is_output) # run.checkpoint_path = output.path: refused by validate and run
  herd_cfg c.yaml
  echo previous >out.h5
  for cmd in validate run; do
    kd $cmd c.yaml --set run.checkpoint_path=out.h5 --set run.checkpoint_every=5
    expect_err 1 "run.checkpoint_path: out.h5 is the same file as output.path"
    [ "$(cat out.h5)" = previous ] || bad "$cmd: the previous output was replaced or deleted"
  done
  kd run c.yaml --set run.checkpoint_path=./out.h5
  expect_err 1 "same file"
  ;;
f7_memory_one_rank) # a memory refusal seen by one rank only is agreed: every rank leaves
  mkdata
  herd_cfg c.yaml
  printf 'task: thin\ndata: {type: csv, path: in.csv}\nalgorithm: {name: kt_compress, n_out: 16}\noutput: {path: t.h5}\n' >tc.yaml
  sed 's|type: csv, path: in.csv|type: npy, path: in.npy|' tc.yaml >tn.yaml
  sed 's|type: csv, path: in.csv|type: hdf5, path: in.h5|' tc.yaml >th.yaml
  printf 'task: quad\ntarget: {type: gaussian, d: 2}\nkernel: {name: gaussian, ls: 1.0}\nalgorithm: {name: nystrom_recombination, n: 24}\noutput: {path: q.h5}\n' >q.yaml
  for cfg in c.yaml tc.yaml tn.yaml th.yaml q.yaml; do
    for cmd in run validate; do
      if [ "$np" -ge 2 ]; then # the limit on the last rank only
        timeout -k 5 60 "$MPIEXEC" --oversubscribe -n $((np - 1)) "$KD_BIN" $cmd $cfg : \
          -n 1 env KD_MEMORY_LIMIT=1K "$KD_BIN" $cmd $cfg >stdout.txt 2>stderr.txt
      else
        KD_MEMORY_LIMIT=1K timeout -k 5 60 "$MPIEXEC" -n 1 "$KD_BIN" $cmd $cfg >stdout.txt 2>stderr.txt
      fi
      rc=$?
      cat stdout.txt stderr.txt >all.txt
      [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || bad "$cmd $cfg: hung (killed by the timeout)"
      expect_err 2 "memory"
    done
  done
  [ ! -e t.h5 ] && [ ! -e out.h5 ] && [ ! -e q.h5 ] || bad "an output was written"
  KD_MEMORY_LIMIT=1x kd validate c.yaml # a limit that is not a size is refused, not ignored
  expect_err 1 "KD_MEMORY_LIMIT"
  KD_MEMORY_LIMIT=512MiB kd validate c.yaml
  expect_ok
  ;;
f1_csv_many_columns) # header detection is linear in the column count (200 000 columns)
  "$PY" -c "
import numpy as np
X = np.random.default_rng(2).standard_normal((4, 200000))
np.savetxt('wide.csv', X, delimiter=',', fmt='%.4f')
with open('hdr.csv', 'w') as f:
    f.write(','.join('c%d' % i for i in range(200000)) + '\n'); f.write(open('wide.csv').read())"
  for f in wide.csv hdr.csv; do
    KD_TIMEOUT=30 kd thin $f --n-out 2 -o o.h5 --set algorithm.name=uniform
    expect_ok
    grep -q "4 points in 200000 dimensions" all.txt || bad "$f: not read as 4 x 200000"
  done
  grep -q "a header" all.txt || bad "hdr.csv: the header was not detected"
  ;;
f2_npz_directory) # damaged zip directory records are refused, never read past
  for kind in extra_overrun huge_offset; do
    "$PY" "$here/mknpz.py" $kind z.npz
    kd thin z.npz --n-out 4 -o o.h5 --set algorithm.name=uniform
    expect_err 1 "zip directory is damaged"
    [ ! -e o.h5 ] || bad "$kind: output written"
  done
  "$PY" "$here/mknpz.py" good z.npz
  kd thin z.npz --n-out 4 -o o.h5 --set algorithm.name=uniform
  expect_ok
  ;;
f8_nonfinite_rule) # a rule with NaN or Inf has no MMD: refused naming the row
  mkdata
  kd thin in.csv --n-out 8 -o r.h5 --set algorithm.name=uniform
  expect_ok
  for edit in "p=f['coreset/points']; a=p[...]; a[2,1]=np.nan; p[...]=a" \
    "w=f['coreset/weights']; a=w[...]; a[4]=np.inf; w[...]=a"; do
    cp r.h5 bad.h5
    # edited with h5py, the checksum tag is dropped: the file is then read as a foreign file
    "$PY" -c "
import h5py, numpy as np
f = h5py.File('bad.h5', 'r+'); $edit; f.close()
b = open('bad.h5', 'rb').read(); open('bad.h5', 'wb').write(bytes(512) + b[512:])"
    kd mmd bad.h5 in.csv
    expect_err 1 "bad.h5: row"
    grep -q "non-finite" all.txt || bad "the message does not say non-finite"
  done
  # finite weights whose sum overflows (1e308 each) make MMD^2 NaN: refused naming the row where
  # the sum overflows, never reported as MMD 0
  cp r.h5 big.h5
  "$PY" -c "
import h5py, numpy as np
f = h5py.File('big.h5', 'r+'); w = f['coreset/weights']; w[...] = np.full(w.shape, 1e308); f.close()
b = open('big.h5', 'rb').read(); open('big.h5', 'wb').write(bytes(512) + b[512:])"
  kd mmd big.h5 in.csv
  expect_err 1 "the rule's weights overflow: their sum in absolute value is infinite at row 2"
  ! grep -q "^mmd:" all.txt || bad "an MMD was printed for overflowing weights"
  # info shows attribute text without its control characters (an escape sequence, a CR)
  cp r.h5 esc.h5
  "$PY" -c "
import h5py
f = h5py.File('esc.h5', 'r+'); f.attrs['algorithm'] = 'uni\x1b[2J\rform'; f.close()
b = open('esc.h5', 'rb').read(); open('esc.h5', 'wb').write(bytes(512) + b[512:])"
  kd info esc.h5
  expect_ok
  ! grep -q "$(printf '\033')" all.txt || bad "info printed an escape character"
  grep -q "uni?\[2J?form" all.txt || bad "info did not show the attribute with ? for control characters"
  ;;
f9_wide_npy) # 8 x 200 000 .npy and .npz are read (the read buffer is sized by bytes)
  "$PY" -c "
import numpy as np
X = np.random.default_rng(3).standard_normal((8, 200000))
np.save('w.npy', X); np.savez('w.npz', X=X)"
  for f in w.npy w.npz; do
    kd thin $f --n-out 2 -o o.h5 --set algorithm.name=uniform
    expect_ok
  done
  ;;
f10_output_path_shape) # refused before any work, by validate too, nothing created
  herd_cfg c.yaml
  long=$(printf 'a%.0s' $(seq 1 300))
  for p in "out/" "d/$long.h5" "$long.h5"; do
    for cmd in validate run; do
      kd $cmd c.yaml --set "output.path=$p"
      expect_err 1 "output.path"
      ! grep -q "running" all.txt || bad "$cmd $p: the work started"
    done
  done
  [ ! -e out ] && [ ! -e d ] || bad "a directory was created"
  kd validate c.yaml --set run.checkpoint_path=ck/ --set run.checkpoint_every=5
  expect_err 1 "run.checkpoint_path"
  # -o is one value, never config text: a quote or a newline in the name is kept as it is
  mkdata
  for name in "it's.h5" "$(printf 'two\nlines.h5')" 'x.h5"}, run: {seed: 9'; do
    kd thin in.csv -o "$name" --n-out 4 --set algorithm.name=uniform
    expect_ok
    [ -f "$name" ] || bad "-o '$name': not written under that name"
  done
  "$PY" -c "import numpy as np; np.save('be.npy', np.ones((8, 2), dtype='>f8'))"
  kd thin be.npy --n-out 2 -o o.h5
  expect_err 1 "element type '>f8' is not supported"
  ;;
f17_output_mode) # a replaced output keeps its mode; a new one gets the umask's default
  KD_N=300 herd_cfg c.yaml
  umask 022
  kd run c.yaml
  expect_ok
  [ "$(stat -c %a out.h5)" = 644 ] || bad "new output: mode $(stat -c %a out.h5), expected 644"
  for m in 600 640 444; do
    chmod $m out.h5
    kd run c.yaml
    expect_ok
    [ "$(stat -c %a out.h5)" = $m ] || bad "rerun onto a $m output left mode $(stat -c %a out.h5)"
  done
  rm -f out.h5
  umask 077
  kd run c.yaml
  expect_ok
  umask 022
  [ "$(stat -c %a out.h5)" = 600 ] || bad "umask 077: mode $(stat -c %a out.h5), expected 600"
  ;;
f12_long_input_path) # a path longer than 4095 characters is refused, never cut
  mkdata
  long=$(printf 'x/%.0s' $(seq 1 2100))in.csv
  printf 'task: thin\ndata: {type: csv, path: %s}\nalgorithm: {name: uniform, n_out: 4}\noutput: {path: o.h5}\n' "$long" >t.yaml
  kd run t.yaml
  expect_err 1 "characters long"
  [ ! -e o.h5 ] || bad "output written"
  ;;
f13_h5_inflate_memory) # a compressed chunk too big to inflate is the environment's: status 2
  # 64 rows in one gzip chunk of 2^26 x 2 doubles (1 GiB inflated, 1 MB on disk)
  "$PY" -c "
import h5py, numpy as np
with h5py.File('bomb.h5', 'w') as f:
    f.create_dataset('X', data=np.ones((64, 2)), maxshape=(None, 2), chunks=(2**26, 2), compression='gzip')"
  if ldd "$KD_BIN" | grep -q libasan; then # ASan maps terabytes: no address-space limit there
    echo "note: not under ASan"
  else
    (ulimit -v 1800000 && kd thin bomb.h5 --dataset X --n-out 4 --set algorithm.name=uniform -o o.h5 &&
      echo "$rc" >rc.txt)
    rc=$(cat rc.txt)
    expect_err 2 "bomb.h5"
    grep -q "memory" all.txt || bad "the line does not say memory"
    [ ! -e o.h5 ] || bad "output written"
  fi
  ;;
f14_study_csv_full_disk) # a full disk under the study CSV is named, not just "cannot write"
  sed -e 's|replicates: 200|replicates: 2|' -e 's|m: 2048|m: 128|' -e 's|n: 2048|n: 128|' \
    -e 's|csv: out/ctt_study.csv|csv: s.csv|' -e 's|path: out/ctt_study.h5|path: s.h5|' \
    "$KD_SRC/configs/ctt_study.yaml" >s.yaml
  LD_PRELOAD="$KD_FAILWRITE" KD_FAILWRITE_AFTER=0 KD_FAILWRITE_MATCH=s.csv.tmp. \
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" kd run s.yaml
  expect_err 2 "s.csv"
  grep '^kdistill: error:' all.txt | grep -q "No space left on device" || bad "ENOSPC not named"
  [ ! -e s.csv ] && [ ! -e s.h5 ] || bad "a file was published"
  no_tmp s.csv
  ;;
f15_ranks_see_other_files) # a stale node-local copy: rank 1 (only) sees another file of that name
  mkdir r0 r1
  "$PY" -c "
import numpy as np, h5py
r = np.random.default_rng(1)
a, b = r.standard_normal((4000, 3)), r.standard_normal((50, 3))
with h5py.File('r0/x.h5', 'w') as f: f['data'] = a
with h5py.File('r1/x.h5', 'w') as f: f['data'] = b
with h5py.File('r0/c.h5', 'w') as f: f['u'] = a[:, :2]; f['v'] = a[:, 2]
with h5py.File('r1/c.h5', 'w') as f: f['u'] = b[:, :2]; f['v'] = b[:, 2]
np.save('r0/x.npy', a[:, :2]); np.save('r1/x.npy', a)
np.savez('r0/x.npz', data=a[:, :2]); np.savez('r1/x.npz', data=a)
np.savetxt('r0/x.csv', a, delimiter=','); np.savetxt('r1/x.csv', a[:, :2], delimiter=',')"
  # every rank runs in its own directory (rank 1 in r1, the others in r0) and reads the relative
  # path rank 0 resolved there
  printf '#!/bin/bash\nd=r0; [ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ] && d=r1\ncd "%s/$d" && exec "%s" "$@"\n' \
    "$dir" "$KD_BIN" >wrap.sh
  chmod +x wrap.sh
  KD_BIN=$dir/wrap.sh
  KD_TIMEOUT=60
  printf 'task: thin\ndata: {type: hdf5, path: c.h5, datasets: [u, v]}\nalgorithm: {name: kt_compress, n_out: 4}\noutput: {path: %s/o.h5}\n' \
    "$dir" >cols.yaml
  # FILE|what rank 1 sees|what rank 0 sees (the sizes in bytes follow each)
  for spec in "x.h5|rank 1 sees 50 x 3 float64, |rank 0 sees 4000 x 3 float64, " \
    "x.npy|rank 1 sees 4000 x 3 <f8, 96128 bytes, |rank 0 sees 4000 x 2 <f8, 64128 bytes" \
    "x.npz|rank 1 sees 4000 x 3 <f8, |rank 0 sees 4000 x 2 <f8, " \
    "x.csv|rank 1 sees 4000 rows of 2 columns, |rank 0 sees 4000 rows of 3 columns, " \
    "cols.yaml|rank 1 sees 50 x 3, |rank 0 sees 4000 x 3, "; do
    f=${spec%%|*}
    rest=${spec#*|}
    rm -f o.h5
    if [ "$f" = cols.yaml ]; then
      kd run "$dir/cols.yaml"
      f=c.h5
    else
      kd thin "$f" --n-out 4 -o "$dir/o.h5"
    fi
    [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || bad "$f: hangs (killed after ${KD_TIMEOUT} s)"
    if [ "$np" = 1 ]; then
      expect_ok
    else
      expect_err 1 "$f: the ranks see different files: ${rest%%|*}"
      grep '^kdistill: error:' all.txt | grep -qF -- "${rest#*|}" || bad "$f: rank 0's view not named"
      [ ! -e o.h5 ] || bad "$f: output written"
      no_tmp o.h5
    fi
  done
  ;;
f16_h5_locked) # an HDF5 input another process holds open for writing (HDF5 file locking)
  mkdata
  rm -f held
  "$PY" -c "
import h5py, time
f = h5py.File('in.h5', 'r+')
open('held', 'w').close()
time.sleep(120)" &
  holder=$!
  for _ in $(seq 1 200); do [ -e held ] && break; sleep 0.1; done
  [ -e held ] || bad "the writer did not open in.h5"
  kd thin in.h5 --n-out 4 -o o.h5
  expect_err 1 "in.h5: cannot open HDF5 file: it is locked by another process (HDF5 file locking); if that writer is done or the file system does not support locks, set HDF5_USE_FILE_LOCKING=FALSE"
  [ ! -e o.h5 ] || bad "output written"
  HDF5_USE_FILE_LOCKING=FALSE kd thin in.h5 --n-out 4 -o o.h5
  expect_ok
  kill "$holder" 2>/dev/null
  wait "$holder" 2>/dev/null
  ;;
*)
  echo "unknown case $case"
  exit 1
  ;;
esac
kd_finish
