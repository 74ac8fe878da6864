#!/bin/bash
# run_quad_cli.sh - the quadrature family through the real binary: nystrom_recombination,
# mercer_recombination and task recombine at 1, 2 and 4 ranks (identical outputs, valid convex
# rules, closed-form quality bounds, recombination means to 1e-10), and a bad sample size (exit 1,
# no output file).
KD_E2E_NAME=quad_cli
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"
src="$KD_QSRC/cli"
run() { # run NP CONFIG OUT
  timeout 200 "$MPIEXEC" -n "$1" $KD_MPIEXEC_FLAGS "$KD_BIN" run "$2" --output "$3" >log.txt 2>&1
}
# inputs for recombine: 600 seeded rows, test functions x, y, z, x^2, xy, sin(z)
awk 'BEGIN { srand(3); for (i = 0; i < 600; i++) { x = rand(); y = rand() - 0.5; z = 3 * rand();
  printf "%.17g,%.17g,%.17g\n", x, y, z > "points.csv";
  printf "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", x, y, z, x * x, x * y, sin(z) > "tf.csv" } }'
for np in 1 2 4; do
  run $np "$src/sobolev.yaml" "s$np.h5" || bad "sobolev at $np ranks: $(cat log.txt)"
  run $np "$src/mercer.yaml" "m$np.h5" || bad "mercer at $np ranks: $(cat log.txt)"
  run $np "$src/recombine.yaml" "r$np.h5" || bad "recombine at $np ranks: $(cat log.txt)"
done
"$QCHECK" rule s1.h5 16 1 || bad "sobolev rule"
"$QCHECK" rule m1.h5 20 2 || bad "mercer rule"
"$QCHECK" rule r1.h5 7 3 || bad "recombine rule (<= m+1 = 7 rows)"
for f in s m r; do
  "$QCHECK" same ${f}1.h5 ${f}2.h5 || bad "$f: 1 vs 2 ranks"
  "$QCHECK" same ${f}1.h5 ${f}4.h5 || bad "$f: 1 vs 4 ranks"
done
# Sobolev r=1, n=16: wce^2 of N.+emp+opt within 3x of the grid value 2 zeta(2)/n^2 = 0.01285
# (wce within sqrt(3 * 0.01285) = 0.196), and below Monte Carlo's sqrt(2 zeta(2)/n) = 0.453
"$QCHECK" metric s1.h5 mmd_opt 0 0.196 || bad "sobolev +opt quality"
"$QCHECK" metric s1.h5 mmd_recombination 0 0.453 || bad "sobolev N.+emp below Monte Carlo"
"$QCHECK" metric r1.h5 max_mean_error 0 1e-10 || bad "recombine means"
# bad input: exit status 1, one error line, no output file
timeout 100 "$MPIEXEC" -n 2 $KD_MPIEXEC_FLAGS "$KD_BIN" run "$src/bad_sample.yaml" \
  --output bad.h5 >bad.txt 2>&1
st=$?
[ $st = 1 ] || bad "N < n+1: exit $st, want 1"
grep -q "sample_size" bad.txt || bad "N < n+1: message does not name sample_size: $(cat bad.txt)"
[ ! -e bad.h5 ] || bad "N < n+1 left an output file"
[ $fails = 0 ] && ok "quadrature CLI runs identical at 1, 2, 4 ranks, bounds hold" || exit 1
