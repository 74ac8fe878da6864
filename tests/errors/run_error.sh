#!/bin/bash
# run_error.sh CASE NP - run the real kdistill binary under mpirun on a bad input and check that it
# fails the agreed way: exit status 1 (or the case's "# status:"), exactly one "kdistill: error:"
# line that contains the case's "# expect:" text, and nothing written at the output path.
# Case files (cases/CASE.yaml) may carry "# setup: <shell>" (run in the scratch dir, $MKINPUT
# available), "# cmd: validate", "# args: <extra CLI args>", "# config: missing". @DIR@ in the
# config is replaced by the scratch directory.
set -u
case=$1
np=${2:-2}
src="$KD_CASES/$case.yaml"
dir=$(mktemp -d "${TMPDIR:-/tmp}/kd_err_${case}_XXXXXX")
trap 'rm -rf "$dir"' EXIT
field() { sed -n "s/^# $1: //p" "$src" | head -n 1; }
expect=$(field expect)
setup=$(field setup)
cmd=$(field cmd)
args=$(field args)
status=$(field status)
cfgmode=$(field config)
cmd=${cmd:-run}
status=${status:-1}
sed "s|@DIR@|$dir|g" "$src" >"$dir/config.yaml"
cfg=config.yaml
[ "$cfgmode" = missing ] && cfg=nope.yaml
if [ -n "$setup" ]; then
  (cd "$dir" && MKINPUT="$KD_MKINPUT" eval "$setup") || { echo "FAIL: setup of $case failed"; exit 1; }
fi
out="$dir/out/result.h5"
extra=()
[ "$cmd" = run ] && extra=(--output "$out")
[ "$cmd" = run_noout ] && cmd=run
cd "$dir" || exit 1
# shellcheck disable=SC2086
timeout 120 "$MPIEXEC" -n "$np" $KD_MPIEXEC_FLAGS "$KD_BIN" "$cmd" "$cfg" "${extra[@]}" $args \
  >stdout.txt 2>stderr.txt
rc=$?
cat stdout.txt stderr.txt >all.txt
fail=0
if [ "$rc" -ne "$status" ]; then
  echo "FAIL: exit status $rc, expected $status"
  fail=1
fi
nerr=$(grep -c '^kdistill: error:' all.txt)
if [ "$nerr" -ne 1 ]; then
  echo "FAIL: $nerr 'kdistill: error:' lines, expected exactly 1"
  fail=1
fi
line=$(grep '^kdistill: error:' all.txt | head -n 1)
if ! grep -qF -- "$expect" <<<"$line"; then
  echo "FAIL: the error line does not contain: $expect"
  fail=1
fi
if compgen -G "$dir/out/*" >/dev/null; then
  echo "FAIL: files left in the output directory: $(ls "$dir/out")"
  fail=1
fi
if [ $fail -ne 0 ]; then
  echo "---- output of kdistill ($case, $np ranks, exit $rc):"
  cat all.txt
  exit 1
fi
echo "ok: $case at $np ranks: $line"
