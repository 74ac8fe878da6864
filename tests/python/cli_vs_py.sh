#!/bin/bash
# cli_vs_py.sh NP KDISTILL PYTHON - the same configs through the command line and through the Python
# package at NP ranks must give bitwise-identical results: writes CSV inputs (17 significant
# digits, so both sides read the same doubles), runs `kdistill run` on them, then runs
# test_mpi.py under mpirun, which passes the rows from memory (each rank its own block, evenly and
# unevenly split) and compares with kdistill.load of the CLI's files. test_mpi.py also plants
# errors on one rank only and checks that every rank raises and that MPI stays usable.
set -euo pipefail
np=$1
cli=$2
py=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mpi=(mpirun -np "$np" --oversubscribe)
"$py" - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
X = rng.normal(size=(3000, 2)) * [1.0, 2.0] + [0.5, -1.0]
Y = rng.normal(size=(3000, 2)) * [1.0, 2.0] + [0.6, -1.0]
C = rng.normal(size=(5000, 2))
for name, a in (("x", X), ("y", Y), ("c", C)):
    np.savetxt(name + ".csv", a, fmt="%.17g", delimiter=",")
cfg = {
 "thin": """task: thin
data: {type: csv, path: x.csv}
kernel: {name: gaussian, ls: median}
algorithm: {name: kt_compress, n_out: 64, g: 3}
run: {seed: 11}
""",
 "herd": """task: herd
candidates: {type: csv, path: c.csv}
target: {type: gaussian, mean: [0, 0], sd: [1, 1]}
kernel: {name: gaussian, ls: 1.0}
algorithm: {name: bpcg, max_atoms: 50, max_iter: 500, tol_mmd: 0.0}
run: {seed: 2}
""",
 "ctt": """task: ctt
x: {type: csv, path: x.csv}
y: {type: csv, path: y.csv}
kernel: {name: gaussian, ls: median}
algorithm: {name: ctt, g: 1, s: 16, B: 50}
run: {seed: 5}
""",
 "quad": """task: quad
target: {type: csv, path: x.csv}
kernel: {name: gaussian, ls: median}
algorithm: {name: nystrom_recombination, n: 24}
run: {seed: 3}
""",
}
for k, v in cfg.items():
    open(k + ".yaml", "w").write(v)
PY
for t in thin herd ctt quad; do
  "${mpi[@]}" "$cli" run "$t.yaml" --output "cli_$t.h5" --quiet
done
"${mpi[@]}" "$py" "$here/test_mpi.py" "$work"
