#!/bin/bash
# run_sweep_cli.sh - the sweep through the real CLI: (1) array mode: every point run on its own
# (sweep.point=K, as one SLURM array task each), then sweep.summary_only=true assembles the
# summary; it must be byte-identical (summary.csv and summary.h5) to the summary the
# single-allocation sweep writes over the same point files, and its mmd / n_atoms / kernel_evals
# columns equal to those of an independent single-allocation sweep from scratch; a point run
# alone writes no output.path; summary_only with a point missing fails naming the file and
# computes nothing; a point's identity does not depend on --output. (2) issue 16: a summary path the sweep cannot write (a directory named
# summary.csv) fails `validate` and `run` with exit 1 and one line naming the path, before any
# point is computed. (3) sweep.point out of range and point + summary_only: exit 1, one line.
#
# usage: run_sweep_cli.sh KDISTILL_BINARY NP
BIN=$1
NP=${2:-2}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
KD_E2E_NAME=sweep_cli
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"
set -o pipefail
# check STATUS WHAT: the shared counters (ok/bad of tests/lib/e2e.sh) on an exit status
check() { if [ "$1" = 0 ]; then ok "$2"; else bad "$2"; fi; }
run() { mpirun -np "$NP" "$BIN" "$@"; }
cat > sw.yaml <<'YAML'
task: sweep
sweep:
  task: thin
  dir: arr
  product:
    - {key: algorithm.n_out, values: [8, 16, 32]}
    - {key: run.seed, values: [1, 2]}
data: {type: gaussian, n: 1024, d: 2, mean: [0, 0], sd: [1, 1]}
kernel: {name: gaussian, ls: 1.0}
algorithm: {name: kt_compress}
output: {path: best.h5}
YAML
N=6

# (1) array mode
for k in $(seq 0 $((N - 1))); do
  run run sw.yaml -q --set sweep.point=$k --output point_run.h5 2> "pt$k.err"
  check $? "point $k: exit status ($(tail -n 1 "pt$k.err"))"
done
[ "$(ls arr/point_*.h5 2>/dev/null | wc -l)" = $N ]; check $? "array: $N point files"
[ ! -e arr/summary.csv ] && [ ! -e point_run.h5 ]
check $? "array: a point run alone writes neither a summary nor output.path"
run run sw.yaml -q --set sweep.summary_only=true 2> sum.err
check $? "summary_only: exit status ($(tail -n 1 sum.err))"
cp arr/summary.csv a.csv && cp arr/summary.h5 a.h5 && cp best.h5 a_best.h5
# the single-allocation sweep over the same point files (kept, not recomputed) writes the same
# bytes, also a second later (no object timestamps in the summary)
sleep 1
run run sw.yaml -q --set sweep.resume=true 2> res.err
check $? "resume: exit status"
cmp -s a.csv arr/summary.csv; check $? "summary.csv of the array differs from the sweep's"
cmp -s a.h5 arr/summary.h5; check $? "summary.h5 of the array differs from the sweep's"
# an independent single-allocation sweep from scratch (one group: every point on all ranks, as
# an array task runs it, so even the kernel-evaluation counts agree) computes the same numbers
run run sw.yaml -q --set sweep.dir=full --set sweep.groups=1 --output full.h5 2> full.err
check $? "from scratch: exit status"
/usr/bin/python3 - a.csv full/summary.csv a_best.h5 full.h5 <<'PY'
import csv, sys, h5py, numpy as np
a = list(csv.DictReader(open(sys.argv[1]))); b = list(csv.DictReader(open(sys.argv[2])))
bad = [] if len(a) == len(b) == 6 else ["rows %d vs %d" % (len(a), len(b))]
for ra, rb in zip(a, b):
    for k in ("point", "algorithm.n_out", "run.seed", "status", "n_atoms", "kernel_evals"):
        if ra[k] != rb[k]: bad.append("point %s %s: %s vs %s" % (ra["point"], k, ra[k], rb[k]))
    if abs(float(ra["mmd"]) - float(rb["mmd"])) > 1e-12 * max(1.0, float(rb["mmd"])):
        bad.append("point %s mmd %s vs %s" % (ra["point"], ra["mmd"], rb["mmd"]))
with h5py.File(sys.argv[3]) as x, h5py.File(sys.argv[4]) as y:
    if not np.array_equal(x["coreset/indices"][()], y["coreset/indices"][()]): bad.append("best coreset")
for m in bad: print("  " + m)
sys.exit(1 if bad else 0)
PY
check $? "array summary vs an independent sweep: same points, statuses, MMDs, best coreset"
# points run without --output, the summary with it (a config without an output section): the
# point hash must not depend on where the output key lands in the configuration
cat > noout.yaml <<'YAML'
task: sweep
sweep: {task: thin, dir: noout, zip: [{key: algorithm.n_out, values: [8, 16]}]}
data: {type: gaussian, n: 256, d: 2, mean: [0, 0], sd: [1, 1]}
kernel: {name: gaussian, ls: 1.0}
algorithm: {name: kt_compress, g: 1}
YAML
run run noout.yaml -q --set sweep.point=0 && run run noout.yaml -q --set sweep.point=1 &&
  run run noout.yaml -q --set sweep.summary_only=true --output noout_best.h5 2> noout.err
check $? "points without --output, summary with it: $(tail -n 1 noout.err)"
rm arr/point_0003.h5
run run sw.yaml -q --set sweep.summary_only=true 2> miss.err
rc=$?
check $(( rc != 1 )) "summary_only with a point missing: exit $rc, expected 1"
grep -q "arr/point_0003.h5 is missing" miss.err; check $? "summary_only: names the missing file"
[ ! -e arr/point_0003.h5 ]; check $? "summary_only computed the missing point"

# (2) summary paths checked before anything runs (issue 16)
mkdir -p bad/summary.csv
for cmd in validate run; do
  run $cmd sw.yaml --set sweep.dir=bad 2> "bad_$cmd.err" > /dev/null
  rc=$?
  check $(( rc != 1 )) "unwritable summary ($cmd): exit $rc, expected 1"
  [ "$(grep -c 'kdistill: error' "bad_$cmd.err")" = 1 ]; check $? "unwritable summary ($cmd): one error line"
  grep -q "bad/summary.csv is a directory" "bad_$cmd.err"
  check $? "unwritable summary ($cmd): names the path: $(cat "bad_$cmd.err")"
done
! compgen -G "bad/point_*" > /dev/null; check $? "unwritable summary: a point was computed"
touch notadir
run run sw.yaml --set sweep.dir=notadir/sub 2> nd.err > /dev/null
rc=$?
check $(( rc != 2 )) "sweep.dir under a file: exit $rc, expected 2 (an I/O problem)"
grep -q "notadir" nd.err; check $? "sweep.dir under a file: names the path"

# (3) bad array options
run validate sw.yaml --set sweep.point=$N 2> r.err > /dev/null
rc=$?
check $(( rc != 1 )) "sweep.point out of range: exit $rc"
grep -q "sweep.point" r.err; check $? "sweep.point out of range: names the key"
run validate sw.yaml --set sweep.point=0 --set sweep.summary_only=true 2> r2.err > /dev/null
rc=$?
check $(( rc != 1 )) "point + summary_only: exit $rc"
grep -q "at most one" r2.err; check $? "point + summary_only: message"
[ "$fails" = 0 ]
