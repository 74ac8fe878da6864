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
# the trust diagnostic (stein_trust.c) and the automatic kernel at 1, 2 and 4 ranks: a sample
# with 80 % of its rows in the right mode of 1/2 N(-s e1, I) + 1/2 N(s e1, I), skt to 32 points
# with the defaults; modes 6 sd apart (s = 3): two groups, debias_untrusted = 1 and one warning
# line; 2 sd apart (s = 1): one group, no warning; the metrics and the chosen ls are the same bits
# at every rank count
attr17() { h5dump -m %.17g -a "$2" "$1" 2>/dev/null | grep '(0)' | tr -d ' "' | cut -d: -f2; }
for s in 3 1; do
  for np in 1 2 4; do
    printf 'task: thin\ndata: {type: gaussian_mixture, n: 2048, means: [[-%s, 0], [%s, 0]], weights: [0.2, 0.8], score: {type: gaussian_mixture, means: [[-%s, 0], [%s, 0]], weights: [0.5, 0.5]}}\nkernel: {name: stein}\ntarget: {type: stein}\nalgorithm: {name: skt, n_out: 32}\n' \
      "$s" "$s" "$s" "$s" >trust.yaml
    rm -f "trust_${s}_$np.h5"
    mpi "$np" run trust.yaml --output "trust_${s}_$np.h5" >"trust_${s}_$np.txt" 2>&1 || bad "trust run s=$s np=$np: $(cat "trust_${s}_$np.txt")"
  done
  want_u=$([ "$s" = 3 ] && echo 1 || echo 0)
  want_g=$([ "$s" = 3 ] && echo 2 || echo 1)
  for np in 1 2 4; do
    f=trust_${s}_$np
    [ "$(attr "$f.h5" /metrics/debias_untrusted)" = "$want_u" ] && [ "$(attr "$f.h5" /metrics/debias_groups)" = "$want_g" ] &&
      [ "$(grep -c 'groups of modes whose proportions' "$f.txt")" = "$want_u" ] &&
      ok "s = $s, $np ranks: debias_untrusted $want_u, $want_g group(s), $want_u warning line(s)" ||
      bad "s = $s, $np ranks: untrusted $(attr "$f.h5" /metrics/debias_untrusted) groups $(attr "$f.h5" /metrics/debias_groups): $(cat "$f.txt")"
    for m in debias_resolution kernel_ls kernel_ls_auto kernel_precondition mmd; do
      [ -n "$(attr17 "$f.h5" /metrics/$m)" ] && [ "$(attr17 "$f.h5" /metrics/$m)" = "$(attr17 "trust_${s}_1.h5" /metrics/$m)" ] ||
        bad "s = $s, $np ranks: $m $(attr17 "$f.h5" /metrics/$m) vs $(attr17 "trust_${s}_1.h5" /metrics/$m) at 1 rank"
    done
  done
done
[ "$(attr trust_3_1.h5 /metrics/kernel_ls_auto)" = 1 ] && [ "$(attr trust_3_1.h5 /metrics/kernel_precondition)" = 0 ] &&
  ok "ls auto, no preconditioner: kernel_ls $(attr trust_3_1.h5 /metrics/kernel_ls)" || bad "auto metrics"
[ $fails = 0 ]
