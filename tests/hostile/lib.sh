#!/bin/bash
# lib.sh - sourced by the hostile-input case scripts (run_hostile.sh, run_files.sh): the scratch
# directory, the mpirun wrapper with a timeout, and the assertions every case uses. Reads the
# caller's arguments: CASE [NP].
set -u
case=$1
np=${2:-2}
PY=${KD_PYTHON:-/usr/bin/python3}
dir=$(mktemp -d "${TMPDIR:-/tmp}/kd_hostile_${case}_XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fail=0
bad() { echo "FAIL[$case np$np]: $*"; fail=1; }
# kd ARGS... : run kdistill under mpirun with a timeout; sets rc, all.txt
kd() {
  timeout -k 5 "${KD_TIMEOUT:-120}" "$MPIEXEC" -n "$np" --oversubscribe "$KD_BIN" "$@" \
    >stdout.txt 2>stderr.txt
  rc=$?
  cat stdout.txt stderr.txt >all.txt
}
# expect_err STATUS TEXT: exit status, one error line containing TEXT, one stderr line in all
expect_err() {
  [ "$rc" -eq "$1" ] || bad "exit status $rc, expected $1"
  local n
  n=$(grep -c '^kdistill: error:' all.txt)
  [ "$n" -eq 1 ] || bad "$n error lines, expected 1"
  # the error is one line: what follows it is another kdistill line, mpirun's notice or nothing
  awk '/^kdistill: error:/{e=1;next} e{e=0; if ($0 != "" && $0 !~ /^(kdistill:|-----|Primary job)/) bad=1} END{exit bad}' all.txt ||
    bad "the error message runs over more than one line"
  grep '^kdistill: error:' all.txt | grep -qF -- "$2" || bad "error line lacks: $2"
}
expect_ok() { [ "$rc" -eq 0 ] || bad "exit status $rc, expected 0"; }
no_tmp() { ! compgen -G "$1*.tmp.*" >/dev/null || bad "temporary left: $(ls "$1"*.tmp.*)"; }
herd_cfg() { # herd_cfg FILE [extra yaml lines]
  cat >"$1" <<YAML
task: herd
candidates: {type: gaussian, d: 2, n: ${KD_N:-2000}}
target: {type: gaussian, d: 2}
kernel: {name: gaussian, ls: 1.0}
algorithm: {name: fw_eq, max_iter: 40}
output: {path: out.h5}
run: {seed: 1}
YAML
}
mkckpt() { # a checkpoint of herd.yaml at ck.h5 (kept after the run)
  herd_cfg herd.yaml
  kd run herd.yaml --set run.checkpoint_every=5 --set run.checkpoint_path=ck.h5 \
    --set run.checkpoint_keep=true
  [ "$rc" -eq 0 ] && [ -f ck.h5 ] || bad "could not make a checkpoint (rc $rc)"
  rm -f out.h5
}
h5edit() { "$PY" -c "import h5py,numpy as np,sys; f=h5py.File('ck.h5','r+'); $1; f.close()"; }

# kd_finish: the case's verdict (its last output when it failed) and exit status
kd_finish() {
  if [ $fail -ne 0 ]; then
    echo "---- last output ($case, $np ranks, exit ${rc:-none}):"
    head -c 3000 all.txt 2>/dev/null
    exit 1
  fi
  echo "PASS $case np$np"
}
