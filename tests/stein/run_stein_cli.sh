#!/bin/bash
# run_stein_cli.sh - scores as data through the real binary (2 ranks): the same rows with their
# scores read from a CSV file and with the analytic score of N(0, I_2) (score: {type: gaussian})
# give bitwise the same KT-Compress coreset, KSD and /coreset/scores; the scores written are those
# of the chosen rows (s = -x); the mixture and truncated scores reduce to it in the degenerate cases;
# validate checks the score file without computing; kdistill mmd reproduces the KSD of an output;
# the shipped Stein configs run (from the repository root: their data paths are relative to it).
KD_E2E_NAME=stein
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"

"$KD_MKINPUT" csv x.csv 500 2 || bad "mkinput"
awk -F, 'NR == 1 { print; next } { printf "%.17g,%.17g\n", -$1, -$2 }' x.csv >s.csv
common='kernel: {name: stein, base: imq, ls: 1.0}
target: {type: stein}
algorithm: {name: kt_compress, n_out: 16, g: 1}'
printf 'task: thin\ndata: {type: csv, path: x.csv, score: {type: csv, path: s.csv}}\n%s\n' \
  "$common" >file.yaml
printf 'task: thin\ndata: {type: csv, path: x.csv, score: {type: gaussian, d: 2}}\n%s\n' \
  "$common" >analytic.yaml
mpi 2 validate file.yaml >val.txt 2>&1 && ok "validate with a score file" || bad "validate: $(cat val.txt)"
mpi 2 run file.yaml --output file.h5 >f.txt 2>&1 || bad "run file scores: $(cat f.txt)"
mpi 2 run analytic.yaml --output analytic.h5 >a.txt 2>&1 || bad "run analytic: $(cat a.txt)"
DSETS="-d /coreset/points -d /coreset/scores -d /coreset/weights -d /coreset/indices"
same file.h5 analytic.h5 0 && ok "file scores == analytic scores, bitwise" ||
  bad "file and analytic scores differ"
[ "$(attr file.h5 /metrics/mmd)" = "$(attr analytic.h5 /metrics/mmd)" ] && [ -n "$(attr file.h5 /metrics/mmd)" ] &&
  ok "same KSD $(attr file.h5 /metrics/mmd)" || bad "KSD $(attr file.h5 /metrics/mmd) vs $(attr analytic.h5 /metrics/mmd)"
vals() { h5dump -m %.17g -d "$2" "$1" | grep '):' | sed 's/.*): //; s/,//g' | tr ' ' '\n' | grep .; }
p=$(vals file.h5 /coreset/points)
s=$(vals file.h5 /coreset/scores)
if [ "$(echo "$p" | wc -l)" = 32 ] && paste -d' ' <(echo "$p") <(echo "$s") | awk '$1 + $2 != 0 { exit 1 }'; then
  ok "/coreset/scores = -/coreset/points (16 x 2)"
else
  bad "scores of the chosen rows: $p / $s"
fi
# the mixture and truncated-Gaussian scores reduce to the Gaussian one: a mixture whose second
# component has weight 0, a truncation box that contains every row
for sc in "{type: gaussian_mixture, means: [[0, 0], [3, 3]], weights: [1, 0]}" \
  "{type: trunc_gaussian, d: 2, lo: -50, hi: 50}"; do
  printf 'task: thin\ndata: {type: csv, path: x.csv, score: %s}\n%s\n' "$sc" "$common" >other.yaml
  rm -f other.h5
  mpi 2 run other.yaml --output other.h5 >o.txt 2>&1 || bad "run $sc: $(cat o.txt)"
  [ -n "$(attr other.h5 /metrics/mmd)" ] && [ "$(attr other.h5 /metrics/mmd)" = "$(attr analytic.h5 /metrics/mmd)" ] &&
    ok "score $sc gives the Gaussian score's KSD" ||
    bad "score $sc: KSD $(attr other.h5 /metrics/mmd) vs $(attr analytic.h5 /metrics/mmd)"
done
# 1-D data: an analytic score without d takes the points' d (one-element lists and scalars alike)
awk -F, 'NR == 1 { print $1; next } { print $1 }' x.csv >x1.csv
awk -F, 'NR == 1 { print $1; next } { printf "%.17g\n", -$1 }' x.csv >s1.csv
printf 'task: thin\ndata: {type: csv, path: x1.csv, score: {type: csv, path: s1.csv}}\n%s\n' \
  "$common" >file1.yaml
mpi 2 run file1.yaml --output file1.h5 >f1.txt 2>&1 || bad "run 1-D file scores: $(cat f1.txt)"
for sc in "{type: gaussian, mean: [0], sd: [1]}" "{type: gaussian, mean: 0}" "{type: gaussian}"; do
  printf 'task: thin\ndata: {type: csv, path: x1.csv, score: %s}\n%s\n' "$sc" "$common" >one.yaml
  rm -f one.h5
  mpi 2 run one.yaml --output one.h5 >o1.txt 2>&1 &&
    [ -n "$(attr one.h5 /metrics/mmd)" ] && [ "$(attr one.h5 /metrics/mmd)" = "$(attr file1.h5 /metrics/mmd)" ] &&
    ok "1-D score $sc without d: the file scores' KSD" ||
    bad "1-D score $sc: $(cat o1.txt) KSD $(attr one.h5 /metrics/mmd) vs $(attr file1.h5 /metrics/mmd)"
done
# kdistill mmd evaluates the KSD of a written Stein coreset (points joined with /coreset/scores):
# the value the run reported, to the last digit
mpi 2 mmd file.h5 file.yaml >m.txt 2>&1 || bad "mmd on a Stein output: $(cat m.txt)"
grep -q '^rel_diff: *0.000e+00' m.txt && ok "mmd of a Stein output = the reported KSD" ||
  bad "mmd of a Stein output: $(cat m.txt)"
mpi 2 mmd file.h5 "$KD_ROOT/configs/quad_monte_carlo.yaml" >m2.txt 2>&1 &&
  bad "mmd of a Stein output against a 3-D Gaussian target succeeded" ||
  { grep -q 'dimension 2' m2.txt && ok "dimension mismatch refused"; } || bad "$(cat m2.txt)"
for c in "$KD_ROOT"/configs/stein_*.yaml; do
  name=$(basename "$c" .yaml)
  here=$PWD
  (cd "$KD_ROOT" && mpi 2 run "$c" --output "$here/$name.h5" --set algorithm.n_out=8) >"$name.txt" 2>&1 &&
    [ -n "$(attr "$name.h5" /metrics/mmd)" ] && ok "$name runs (KSD $(attr "$name.h5" /metrics/mmd))" ||
    bad "$name: $(cat "$name.txt")"
done
# precondition: diag | matrix (the sample covariance of the x coordinates): the same coreset and
# KSD at 1, 2 and 4 ranks, kdistill mmd reproduces it, the kernel description says so
(cd "$KD_ROOT" && mpi 2 run configs/stein_chain_kt.yaml --output "$OLDPWD/pc_none.h5" --set algorithm.n_out=16) \
  >pc_none.txt 2>&1 || bad "chain without preconditioning: $(cat pc_none.txt)"
for pc in diag matrix; do
  for np in 1 2 4; do
    (cd "$KD_ROOT" && mpi $np run configs/stein_chain_kt.yaml --output "$OLDPWD/pc_${pc}_$np.h5" \
      --set kernel.precondition=$pc --set algorithm.n_out=16) >"pc_$pc.txt" 2>&1 ||
      bad "precondition $pc np $np: $(cat "pc_$pc.txt")"
  done
  same=$(/usr/bin/python3 -c 'import sys, h5py, numpy as np
a = [h5py.File(f)["coreset/points"][...] for f in sys.argv[1:]]
print(int(all(np.array_equal(a[0], b) for b in a)))' "pc_${pc}_1.h5" "pc_${pc}_2.h5" "pc_${pc}_4.h5")
  [ "$same" = 1 ] && [ "$(attr "pc_${pc}_1.h5" /metrics/mmd)" = "$(attr "pc_${pc}_4.h5" /metrics/mmd)" ] &&
    ok "precondition $pc: same coreset and KSD at 1/2/4 ranks" || bad "precondition $pc: rank-dependent"
  grep -q "kernel stein(base=imq,ls=1,beta=0.5,precondition=$pc)" "pc_$pc.txt" &&
    ok "precondition $pc: described" || bad "precondition $pc description: $(cat "pc_$pc.txt")"
  (cd "$KD_ROOT" && mpi 2 mmd "$OLDPWD/pc_${pc}_2.h5" configs/stein_chain_kt.yaml --set kernel.precondition=$pc) >pm.txt 2>&1
  grep -q '^rel_diff: *0.000e+00' pm.txt && ok "precondition $pc: mmd reproduces the KSD" || bad "precondition $pc mmd: $(cat pm.txt)"
done
# scores from .npy files: the chain of configs/stein_chain_kt.yaml as x.npy + score.npy gives the
# HDF5 run's KSD exactly
/usr/bin/python3 -c 'import sys, h5py, numpy as np
f = h5py.File(sys.argv[1]); np.save("cx.npy", f["x"][...]); np.save("cs.npy", f["score"][...])' \
  "$KD_ROOT/configs/data/stein_chain.h5" || bad "writing the npy chain"
printf 'task: thin\ndata:\n  type: npy\n  path: cx.npy\n  score: {type: npy, path: cs.npy}\nkernel: {name: stein, base: imq, ls: 1.0}\ntarget: {type: stein}\nalgorithm: {name: skt, n_out: 16, g: 4, reweight_iter: 2000}\nrun: {seed: 3}\n' >npy.yaml
mpi 2 run npy.yaml --output npy.h5 -q >n.txt 2>&1 || bad "npy scores: $(cat n.txt)"
[ -n "$(attr npy.h5 /metrics/mmd)" ] && [ "$(attr npy.h5 /metrics/mmd)" = "$(attr pc_none.h5 /metrics/mmd)" ] &&
  ok "scores from .npy: the HDF5 run's KSD" || bad "npy scores: KSD $(attr npy.h5 /metrics/mmd) vs $(attr pc_none.h5 /metrics/mmd)"
[ "$(attr pc_diag_1.h5 /metrics/mmd)" != "$(attr pc_matrix_1.h5 /metrics/mmd)" ] &&
  ok "diag and matrix are different kernels" || bad "diag and matrix gave the same KSD"
[ $fails = 0 ]
