# shellcheck shell=bash
# rank_configs.sh - the small jobs whose results the rank-invariance tests compare (sourced by
# tests/ranks/run_many_ranks.sh and tests/sim/run_sim.sh): writes thin.yaml (kt_compress, 4096
# mixture rows), herd.yaml (bpcg, 3000 candidates), quad.yaml (nystrom_recombination + opt) and
# ctt.yaml (2 x 4096 rows, s = 16) into the working directory.
cat >thin.yaml <<'Y'
task: thin
data: {type: gaussian_mixture, n: 4096, means: [[-2, 0], [2, 0]], sds: [[1, 1], [1, 1]], weights: [0.5, 0.5]}
kernel: {name: gaussian, ls: 2.0}
algorithm: {name: kt_compress, n_out: 64, g: 2}
run: {seed: 3}
Y
cat >herd.yaml <<'Y'
task: herd
candidates: {type: gaussian, d: 2, n: 3000}
target: {type: gaussian, d: 2}
kernel: {name: gaussian, ls: 1.0}
algorithm: {name: bpcg, max_iter: 60}
run: {seed: 3}
Y
cat >quad.yaml <<'Y'
task: quad
target: {type: gaussian, d: 3}
kernel: {name: gaussian, ls: 1.0}
algorithm: {name: nystrom_recombination, n: 32, opt: convex}
run: {seed: 3}
Y
cat >ctt.yaml <<'Y'
task: ctt
x: {type: gaussian, d: 2, n: 4096}
y: {type: gaussian, d: 2, n: 4096, mean: [0.1, 0], seed: 9}
kernel: {name: gaussian, ls: 1.0}
algorithm: {name: ctt, s: 16, g: 1, B: 50}
run: {seed: 3}
Y
