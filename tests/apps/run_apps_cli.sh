#!/bin/bash
# run_apps_cli.sh - end-to-end: the `attention`, `reorder` and `thin` (kt_compress) tasks through
# the real binary at 1, 2 and 4 ranks: exit 0, the same outputs at every rank count (h5diff),
# ||T_hat - T||_max recorded and small, the permutation a permutation with a smaller prefix
# discrepancy; bad input (attention.delta = 1, reorder with a non-permutation) exits 1 and leaves
# no output file. Env: KD_BIN, MPIEXEC, KD_SRC (repository root).
KD_E2E_NAME=apps_cli
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"
T=$dir
run() { # np config output [extra...]
  local np=$1 cfg=$2 out=$3
  shift 3
  "$MPIEXEC" -np "$np" --oversubscribe "$KD_BIN" run "$cfg" --output "$out" --quiet "$@"
}
# check CONDITION WHAT: the shared counters (ok/bad of tests/lib/e2e.sh) on an evaluated condition
check() { if eval "$1"; then ok "$2"; else bad "$2"; fi; }
for np in 1 2 4; do
  run $np "$KD_SRC/configs/attention_generated.yaml" "$T/att$np.h5"
  check "[ $? = 0 ]" "attention at $np ranks exits 0"
  run $np "$KD_SRC/configs/reorder_generated.yaml" "$T/reo$np.h5"
  check "[ $? = 0 ]" "reorder at $np ranks exits 0"
  run $np "$KD_SRC/configs/thin_kt_compress.yaml" "$T/kt$np.h5" --set data.n=5000 --set algorithm.n_out=100 --set algorithm.g=2
  check "[ $? = 0 ]" "thin kt_compress (n_in 5000 -> 100) at $np ranks exits 0"
done
for np in 2 4; do
  check "h5diff -q $T/att1.h5 $T/att$np.h5 /attention/T_hat >/dev/null" "T_hat identical at 1 and $np ranks"
  check "h5diff -q $T/reo1.h5 $T/reo$np.h5 /reorder/permutation >/dev/null" "permutation identical at 1 and $np ranks"
  check "h5diff -q $T/kt1.h5 $T/kt$np.h5 /coreset/indices >/dev/null" "kt_compress coreset identical at 1 and $np ranks"
done
err=$("$KD_BIN" info "$T/att1.h5" | sed -n 's/.*max_abs_error = //p')
check "awk 'BEGIN{exit !($err > 0 && $err < 0.3)}'" "attention max_abs_error = $err in (0, 0.3)"
before=$("$KD_BIN" info "$T/reo1.h5" | sed -n 's/.*prefix_discrepancy_before = //p')
after=$("$KD_BIN" info "$T/reo1.h5" | sed -n 's/.*prefix_discrepancy_after = //p')
check "awk 'BEGIN{exit !($after < 0.8 * $before)}'" "reorder: prefix discrepancy $before -> $after"
h5dump -d /reorder/permutation -y -w 0 -o "$T/perm.txt" "$T/reo1.h5" >/dev/null
perm=$(tr -cs '0-9' '\n' <"$T/perm.txt" | grep -c .)
uniq=$(tr -cs '0-9' '\n' <"$T/perm.txt" | grep . | sort -n | uniq | wc -l)
top=$(tr -cs '0-9' '\n' <"$T/perm.txt" | grep . | sort -n | tail -1)
check "[ $perm = 4096 ] && [ $uniq = 4096 ] && [ $top = 4095 ]" "permutation of 0..4095 ($perm entries, $uniq distinct, max $top)"
# bad input: exit 1, no output
run 2 "$KD_SRC/configs/attention_generated.yaml" "$T/bad1.h5" --set attention.delta=1 2>"$T/e1"
check "[ $? = 1 ] && [ ! -e $T/bad1.h5 ] && grep -q delta $T/e1" "attention.delta = 1: exit 1, no file, message names delta"
run 2 "$KD_SRC/configs/thin_kt_compress.yaml" "$T/bad2.h5" --set algorithm.n_out=20000 2>"$T/e2"
check "[ $? = 1 ] && [ ! -e $T/bad2.h5 ] && grep -q n_out $T/e2" "n_out > n_in: exit 1, no file"
[ "$fails" = 0 ]
