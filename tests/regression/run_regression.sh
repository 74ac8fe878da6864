#!/bin/bash
# run_regression.sh CASE - run CASE/config.yaml with the real binary at 1, 2 and 4 ranks; the
# three coresets must be identical bit for bit, valid (n, d, weights >= 0 summing to 1), and the
# MMD must match CASE/reference.txt ("n N", "d D", "mmd VALUE RTOL").
set -u
case=$1
src="$KD_REG/$case"
dir=$(mktemp -d "${TMPDIR:-/tmp}/kd_reg_${case}_XXXXXX")
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
ref() { sed -n "s/^$1 //p" "$src/reference.txt"; }
n=$(ref n)
d=$(ref d)
read -r mmd rtol <<<"$(ref mmd)"
fail=0
for np in 1 2 4; do
  if ! timeout 200 "$MPIEXEC" -n $np $KD_MPIEXEC_FLAGS "$KD_BIN" run "$src/config.yaml" \
      --output "out$np.h5" >"run$np.txt" 2>&1; then
    echo "FAIL: run at $np ranks:"; cat "run$np.txt"; exit 1
  fi
  "$KD_OUTCHECK" valid "out$np.h5" "$n" "$d" || fail=1
done
"$KD_OUTCHECK" same out1.h5 out2.h5 || fail=1
"$KD_OUTCHECK" same out1.h5 out4.h5 || fail=1
"$KD_OUTCHECK" mmd out1.h5 "$mmd" "$rtol" || fail=1
cat run2.txt
[ $fail = 0 ] && echo "ok: $case identical at 1, 2, 4 ranks and matches the reference" || exit 1
