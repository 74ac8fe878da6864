#!/bin/bash
# run_cli.sh - end-to-end checks of the kdistill command line (real binary, mpirun, 2 ranks):
# --help/--version/usage errors, validate and --print-defaults (the printed config must contain
# every section, parse again and be a fixed point), validate computes nothing (a 10^9-row
# generator validates instantly), run writes an output that `info` summarises and whose MMD
# `kdistill mmd` recomputes to 1e-12, --set and --output overrides, and --quiet.
KD_E2E_NAME=cli
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"
mpi() { timeout 120 "$MPIEXEC" -n 2 $KD_MPIEXEC_FLAGS "$KD_BIN" "$@"; }

# --help / --version / usage errors
mpi --help >help.txt 2>&1 && grep -q "kdistill run CONFIG" help.txt && grep -q "thin" help.txt &&
  grep -q "uniform" help.txt && ok "--help" || bad "--help: $(cat help.txt)"
[ "$(mpi --version 2>&1 | grep -c '^kdistill [0-9]')" = 1 ] && ok "--version once" || bad "--version"
mpi >noargs.txt 2>&1
rc=$?
[ $rc = 1 ] && [ "$(grep -c '^kdistill: error: no command given' noargs.txt)" = 1 ] &&
  ok "no command -> exit 1, one line" || bad "no command (rc $rc): $(cat noargs.txt)"
mpi run --bogus x.yaml >bogus.txt 2>&1
[ $? = 1 ] && grep -q "unknown option '--bogus'" bogus.txt && ok "unknown option" ||
  bad "unknown option: $(cat bogus.txt)"

# a misspelt option names the one meant
mpi run x.yaml --nout 3 >nout.txt 2>&1
[ $? = 1 ] && grep -q "unknown option '--nout'; did you mean '--n-out'?" nout.txt &&
  ok "did you mean --n-out" || bad "--nout: $(cat nout.txt)"

# inputs
"$KD_MKINPUT" csv in.csv 300 2 || bad "mkinput"
cp "$KD_SRC/thin.yaml" "$KD_SRC/quad.yaml" .

# an unknown key is refused before the data is read or the median taken: the error is the only line
mpi run thin.yaml --set kernel.lengthscale=1 >early.txt 2>&1
[ $? = 1 ] && grep -q "kernel.lengthscale: unknown key" early.txt &&
  [ "$(grep -c "^kdistill: " early.txt)" = 1 ] && ok "unknown key before any input is read" ||
  bad "unknown key after loading: $(cat early.txt)"

# validate + --print-defaults: every section, parses again, fixed point
for cfg in thin quad "$KD_ROOT/configs/thin_uniform_mixture"; do
  name=$(basename "$cfg")
  mpi validate "$cfg.yaml" --print-defaults >"$name.resolved.yaml" 2>"$name.err" ||
    bad "validate --print-defaults $name: $(cat "$name.err")"
  secs="task data kernel target algorithm output run"
  [ "$name" = quad ] && secs="task target kernel algorithm output run"
  for s in $secs; do
    grep -q "^$s:" "$name.resolved.yaml" || bad "$name: section $s missing from --print-defaults"
  done
  grep -q "^  seed: " "$name.resolved.yaml" && grep -q "^  log_interval: " "$name.resolved.yaml" ||
    bad "$name: run defaults missing"
  mpi validate "$name.resolved.yaml" --print-defaults >"$name.again.yaml" 2>"$name.err2" ||
    bad "resolved $name does not validate: $(cat "$name.err2")"
  if cmp -s "$name.resolved.yaml" "$name.again.yaml"; then
    ok "$name: --print-defaults parses and is a fixed point"
  else
    bad "$name: --print-defaults is not a fixed point: $(diff "$name.resolved.yaml" "$name.again.yaml")"
  fi
done
grep -q "^  median_sample: 300" thin.resolved.yaml && grep -q "^  type: data" thin.resolved.yaml &&
  ok "thin: resolved config keeps values and fills target.type: data" ||
  bad "thin resolved: $(cat thin.resolved.yaml)"
mpi validate thin.yaml >val.txt 2>&1 && grep -q "valid (task thin)" val.txt && ok "validate" ||
  bad "validate: $(cat val.txt)"

# validate computes nothing: 10^9 generated rows would take minutes to generate
start=$(date +%s)
mpi validate quad.yaml --set candidates.type=uniform_box --set candidates.n=1000000000 \
  --set candidates.d=2 >big.txt 2>&1 || bad "validate big: $(cat big.txt)"
[ $(($(date +%s) - start)) -lt 30 ] && ok "validate does not generate data" || bad "validate slow"

# run: output, info, mmd recomputation
mpi run thin.yaml --output res/thin.h5 >run.txt 2>run.err || bad "run thin: $(cat run.err)"
grep -q "^points:     300 -> 25 (d = 2)" run.txt && grep -q "^output:     res/thin.h5" run.txt &&
  ok "run summary" || bad "run summary: $(cat run.txt)"
[ -f res/thin.h5 ] && ! compgen -G "res/*.tmp.*" >/dev/null && ok "output written, no temporary" ||
  bad "output files: $(ls res)"
"$KD_OUTCHECK" valid res/thin.h5 25 2 && ok "output valid" || bad "output invalid"
mpi info res/thin.h5 >info.txt 2>&1 || bad "info: $(cat info.txt)"
grep -q "^task:         thin" info.txt && grep -q "^coreset:      25 points in 2 dimensions, 25 from input rows" info.txt &&
  grep -q "^kernel:       gaussian(ls=" info.txt && ok "info" || bad "info: $(cat info.txt)"
for cfg in thin quad; do
  [ $cfg = quad ] && { mpi run quad.yaml -o res/quad.h5 -q >q.txt 2>&1 || bad "run quad: $(cat q.txt)"; }
  [ $cfg = quad ] && { [ ! -s q.txt ] && ok "--quiet prints nothing" || bad "--quiet: $(cat q.txt)"; }
  mpi mmd res/$cfg.h5 $cfg.yaml >mmd.txt 2>&1 || bad "mmd $cfg: $(cat mmd.txt)"
  rel=$(sed -n 's/^rel_diff: *//p' mmd.txt)
  awk -v r="$rel" 'BEGIN { exit !(r != "" && r + 0 <= 1e-12) }' &&
    ok "$cfg: kdistill mmd recomputes the stored MMD (rel diff $rel)" || bad "mmd $cfg: $(cat mmd.txt)"
done
# the stored resolved config reproduces the run
h5dump -a /config_yaml res/thin.h5 >/dev/null 2>&1 && ok "config_yaml attribute readable" ||
  bad "h5dump config_yaml"
# --set overrides reach the algorithm; info of a missing file fails cleanly
mpi run thin.yaml --set algorithm.n_out=7 -o res/seven.h5 >s.txt 2>&1 &&
  "$KD_OUTCHECK" valid res/seven.h5 7 2 && ok "--set algorithm.n_out=7" || bad "--set: $(cat s.txt)"
mpi info nope.h5 >ni.txt 2>&1
[ $? = 1 ] && [ "$(grep -c '^kdistill: error: nope.h5: cannot open file' ni.txt)" = 1 ] &&
  ok "info on a missing file" || bad "info missing: $(cat ni.txt)"

# evaluation: an empirical target above KD_SELF_EXACT_EVALS (23169 rows) gets an estimated MMD with
# its standard error (target.self: estimate, auto for kernels the fast Gauss transform does not
# cover); the exact value lies within 4 standard errors of it (on MMD^2); the time line splits
# load / algorithm / evaluation / write
printf 'task: thin\ndata: {type: gaussian, d: 2, n: 70000}\nkernel: {name: gaussian, ls: 1.0}\ntarget: {type: data, self: estimate, self_rows: 4096}\nalgorithm: {name: kt_compress, n_out: 256, g: 2}\n' >est.yaml
mpi run est.yaml -o res/est.h5 >est.txt 2>&1 || bad "estimate run: $(cat est.txt)"
grep -q "^mmd: .* +- .* (estimated from sampled target rows" est.txt && ok "target.self: estimate" ||
  bad "estimate summary: $(cat est.txt)"
# `info` words the MMD as the summary does: the value, +- its standard error, and "estimated"
# (it printed "mmd: 0.00...", without the error and the label)
"$KD_BIN" info res/est.h5 >ie.txt 2>&1
[ "$(sed -n 's/^mmd: *//p' ie.txt)" = "$(sed -n 's/^mmd: *//p' est.txt)" ] &&
  grep -q "^mmd: .* +- .* (estimated from sampled target rows" ie.txt &&
  ok "info: the estimated MMD as in the summary" || bad "info of an estimate: $(grep mmd ie.txt)"
# and so does `kdistill mmd` (the value in full precision first, then the same words); an exact
# evaluation says "(exact)"
mpi mmd res/est.h5 est.yaml >me.txt 2>&1 &&
  grep -q "^mmd: *[0-9.e+-]* +- .* (estimated from sampled target rows" me.txt &&
  mpi mmd res/est.h5 est.yaml --set target.self=exact >mx.txt 2>&1 &&
  grep -q "^mmd: *[0-9.e+-]* (exact)$" mx.txt &&
  ok "kdistill mmd says estimated / exact" || bad "kdistill mmd: $(grep mmd: me.txt mx.txt)"
grep -q "^time:       load [0-9.]* s, algorithm [0-9.]* s, evaluation [0-9.]* s, write [0-9.]* s; total" est.txt &&
  ok "time line" || bad "time line: $(cat est.txt)"
mpi run est.yaml --set target.self=exact -o res/exact.h5 -q >ex.txt 2>&1 || bad "exact run: $(cat ex.txt)"
/usr/bin/python3 - res/est.h5 res/exact.h5 <<'PY' >cmp.txt 2>&1 && ok "estimate vs exact: $(cat cmp.txt)" || bad "estimate vs exact: $(cat cmp.txt)"
import sys, h5py
a = h5py.File(sys.argv[1])["metrics"].attrs
b = h5py.File(sys.argv[2])["metrics"].attrs
z = (a["mmd2"] - b["mmd"] ** 2) / a["mmd2_se"]
print("mmd2 %.4g +- %.2g, exact %.4g, z %.2f, methods %d %d, rows %d" % (a["mmd2"], a["mmd2_se"], b["mmd"] ** 2, z, a["mmd_method"], b["mmd_method"], a["self_rows"]))
sys.exit(not (abs(z) <= 4 and a["mmd_method"] == 1 and b["mmd_method"] == 0 and a["self_rows"] == 4096
              and a["mmd_se"] > 0 and a["seconds_evaluation"] >= 0 and "seconds_load" in a))
PY
# the estimate's cross term sampled too (target.cross: estimate; auto does so above 2^36 pairs):
# within 4 standard errors of the exact MMD^2, its atom count in /metrics
mpi run est.yaml --set target.cross=estimate -o res/estc.h5 -q >ec.txt 2>&1 || bad "cross run: $(cat ec.txt)"
/usr/bin/python3 - res/estc.h5 res/exact.h5 <<'PY' >cmpc.txt 2>&1 && ok "sampled cross term vs exact: $(cat cmpc.txt)" || bad "sampled cross term vs exact: $(cat cmpc.txt)"
import sys, h5py
a = h5py.File(sys.argv[1])["metrics"].attrs
b = h5py.File(sys.argv[2])["metrics"].attrs
z = (a["mmd2"] - b["mmd"] ** 2) / a["mmd2_se"]
print("mmd2 %.4g +- %.2g, exact %.4g, z %.2f, atoms %d" % (a["mmd2"], a["mmd2_se"], b["mmd"] ** 2, z, a["cross_rows"]))
sys.exit(not (abs(z) <= 4 and a["mmd_method"] == 1 and a["cross_rows"] == 4096 and a["self_rows"] == 4096))
PY
# auto, gaussian kernel in d = 2: the fast Gauss transform, exact to its bound (checked against the
# exact run), the bound in /metrics and the summary line
mpi run est.yaml --set target.self=auto -o res/fgt.h5 >fg.txt 2>&1 || bad "fgt run: $(cat fg.txt)"
grep -q "^mmd: .* +- .* (exact to this bound: fast Gauss transform" fg.txt && ok "auto above 23169 rows: fast Gauss transform" ||
  bad "fgt summary: $(cat fg.txt)"
"$KD_BIN" info res/fgt.h5 >if.txt 2>&1
[ "$(sed -n 's/^mmd: *//p' if.txt)" = "$(sed -n 's/^mmd: *//p' fg.txt)" ] &&
  ok "info: the bounded MMD as in the summary, with its bound" || bad "info of a bounded MMD: $(grep mmd if.txt)"
"$KD_BIN" info res/exact.h5 | grep -q "^mmd: *[0-9.e+-]* (exact)$" && ok "info: an exact MMD says exact" ||
  bad "info of an exact MMD: $("$KD_BIN" info res/exact.h5 | grep mmd)"
/usr/bin/python3 - res/fgt.h5 res/exact.h5 <<'PY' >cmpf.txt 2>&1 && ok "fgt vs exact: $(cat cmpf.txt)" || bad "fgt vs exact: $(cat cmpf.txt)"
import sys, h5py
a = h5py.File(sys.argv[1])["metrics"].attrs
b = h5py.File(sys.argv[2])["metrics"].attrs
e = abs(a["mmd2"] - b["mmd"] ** 2)
print("mmd2 %.10g, exact %.10g, |diff| %.2g <= bound %.2g, order %d, cells %d" % (a["mmd2"], b["mmd"] ** 2, e, a["mmd2_bound"], a["fgt_order"], a["fgt_cells"]))
sys.exit(not (a["mmd_method"] == 3 and e <= a["mmd2_bound"] < 1e-10 and abs(a["mmd"] - b["mmd"]) <= a["mmd_bound"]))
PY
mpi run est.yaml --set target.self=skip -o res/skip.h5 >sk.txt 2>&1 &&
  grep -q "^mmd:        nan (target.self: skip" sk.txt && ok "target.self: skip" || bad "skip: $(cat sk.txt)"
mpi run "$KD_ROOT/configs/herd_matern32_box.yaml" --set target.self=estimate --set candidates.grid_n=20 -o res/h.h5 >he.txt 2>&1
[ $? = 1 ] && [ "$(grep -c 'herding needs the target.s exact double integral' he.txt)" = 1 ] &&
  ok "herding refuses target.self: estimate" || bad "herding + estimate: $(cat he.txt)"

# herding stops: max_atoms alone runs to m atoms; why a run stopped is recorded and printed
printf 'task: herd\ncandidates: {type: gaussian, d: 2, n: 2000}\ntarget: {type: gaussian, d: 2}\nkernel: {name: gaussian, ls: 1.0}\nalgorithm: {name: fw_eq, max_atoms: 256}\n' >herd.yaml
mpi run herd.yaml -o res/herd.h5 >hd.txt 2>&1 && grep -q "^points:     2000 -> 256 (d = 2)" hd.txt &&
  grep -q "^stopped:    max_atoms (after [0-9]* iterations)" hd.txt &&
  "$KD_OUTCHECK" valid res/herd.h5 256 2 && ok "max_atoms: 256 alone gives 256 atoms" || bad "max_atoms: $(cat hd.txt)"
mpi run herd.yaml --set algorithm.name=bpcg -o res/herd2.h5 >hb.txt 2>&1 &&
  [ "$(grep -c 'warning: herd: stopped after 25600 iterations with [0-9]* of the 256 atoms asked for .*the iteration limit came first' hb.txt)" = 1 ] &&
  grep -q "^stopped:    max_iter (after 25600 iterations)" hb.txt && ok "bpcg short of max_atoms says why" ||
  bad "bpcg max_atoms: $(cat hb.txt)"
mpi run herd.yaml --set algorithm.max_atoms=2001 -o res/herd3.h5 >hx.txt 2>&1
[ $? = 1 ] && [ "$(grep -c 'error: .*algorithm.max_atoms = 2001: more than the 2000 candidates' hx.txt)" = 1 ] &&
  [ ! -e res/herd3.h5 ] && ok "max_atoms above the candidates: exit 1, one line" || bad "max_atoms 2001: $(cat hx.txt)"

# herding's column cache: too small a cache_mb costs evaluations, not results. One warning on
# rank 0 names the size that holds the active set's columns; that size then warns no more and
# evaluates what the default does (20 000 candidates: 80 KB columns per rank, 0.1 MB holds one)
printf 'task: herd\ncandidates: {type: gaussian, d: 2, n: 20000}\ntarget: {type: gaussian, d: 2}\nkernel: {name: gaussian, ls: 1.0}\nalgorithm: {name: bpcg, max_iter: 200}\n' >hc.yaml
evals() { sed -n 's/^seconds: .*(\([0-9]*\) kernel evaluations.*/\1/p' "$1"; }
same_rule() { grep -E '^(points|mmd):' "$1" | diff -q - <(grep -E '^(points|mmd):' "$2") >/dev/null; }
mpi run hc.yaml -o res/hc_default.h5 >hc_default.txt 2>&1 &&
  mpi run hc.yaml --set algorithm.cache_mb=0.1 -o res/hc_small.h5 >hc_small.txt 2>&1 || bad "cache runs: $(tail -3 hc_small.txt)"
need=$(sed -n 's/.*warning: herd: algorithm.cache_mb = 0.1 has room for 1 kernel column of 10000 candidates per rank, so [0-9]* columns .* evaluated again ([0-9]*% of the kernel evaluations); cache_mb: \([0-9]*\) would hold the [0-9]* atoms.*/\1/p' hc_small.txt)
if [ -n "$need" ] && [ "$(grep -c 'warning:' hc_small.txt)" = 1 ] && ! grep -q 'warning:' hc_default.txt &&
  same_rule hc_default.txt hc_small.txt && [ "$(evals hc_small.txt)" -gt $((5 * $(evals hc_default.txt))) ] &&
  mpi run hc.yaml --set algorithm.cache_mb="$need" -o res/hc_need.h5 >hc_need.txt 2>&1 &&
  ! grep -q 'warning:' hc_need.txt && same_rule hc_default.txt hc_need.txt &&
  [ "$(evals hc_need.txt)" = "$(evals hc_default.txt)" ]; then
  ok "herd cache_mb 0.1: one warning, cache_mb: $need named, same rule; $(evals hc_small.txt) evaluations against $(evals hc_default.txt)"
else
  bad "herd column cache: need '$need'; $(grep -E 'warning|^mmd|^seconds' hc_small.txt hc_default.txt hc_need.txt 2>/dev/null)"
fi

# one-line commands, default algorithms, validate's size rules, kdistill algorithms
/usr/bin/python3 -c 'import numpy as np
r = np.random.default_rng(5)
np.save("ox.npy", r.normal(size=(2000, 2))); np.save("oy.npy", r.normal(size=(2000, 2)) + [0.5, 0])
np.savetxt("small.txt", r.normal(size=(300, 3)))
np.savetxt("small2.txt", r.normal(size=(300, 3)) + 1.0)' || bad "one-liner inputs"
mpi thin small.txt --n-out 32 -o res/one.h5 >one.txt 2>&1 && grep -q "^points:     300 -> 32 (d = 3)" one.txt &&
  grep -q "algorithm.g: 3 for n_in = 300" one.txt && grep -q "^algorithm:  kt_compress" one.txt &&
  ok "kdistill thin DATA --n-out 32: kt_compress by default, g lowered for 300 rows" || bad "thin one-liner: $(cat one.txt)"
h5dump -a /config_yaml res/one.h5 2>/dev/null | grep -q "type: csv" && ok "one-liner config stored in config_yaml" ||
  bad "one-liner config_yaml"
grep -q "small.txt: 3 whitespace-separated columns; line 1 is data, not a header (data.header: auto" one.txt &&
  ok "the header decision is logged" || bad "header log line: $(cat one.txt)"
/usr/bin/python3 -c 'import h5py, re, sys
m = h5py.File("res/one.h5", "r")["metrics"].attrs
k = h5py.File("res/one.h5", "r").attrs["kernel"]
k = k.decode() if isinstance(k, bytes) else k
ls = float(re.search(r"ls=([0-9.e+-]+)", k).group(1))
ok = (m["n_in"].dtype.kind == "i" and m["n_in"] == 300 and m["mmd_method"].dtype.kind == "i" and
      m["refine_swaps"].dtype.kind == "i" and m["mmd"].dtype.kind == "f" and
      m["kernel_ls"].dtype.kind == "f" and m["kernel_ls"] == ls and ls > 0)
y = h5py.File("res/one.h5", "r").attrs["config_yaml"]
y = y.decode() if isinstance(y, bytes) else y
ok = ok and float(re.search(r"\n +ls: ([0-9.e+-]+)", y).group(1)) == ls
sys.exit(0 if ok else 1)' && ok "counts are int64 attributes; kernel_ls and config_yaml hold the resolved median length scale" ||
  bad "integer metrics / kernel_ls"
mpi mmd res/one.h5 small.txt >md.txt 2>&1 && grep -q "^rel_diff:   0.000e+00" md.txt &&
  ok "kdistill mmd OUT DATA: the input file gives the stored MMD exactly" || bad "mmd OUT DATA: $(cat md.txt)"
mpi mmd res/one.h5 small2.txt >md2.txt 2>&1 &&
  awk '/^mmd:/ {m = $2} /^stored:/ {s = $2} END {exit !(m > 5 * s)}' md2.txt &&
  ok "kdistill mmd OUT DATA: a shifted file gives a larger MMD" || bad "mmd shifted: $(cat md2.txt)"
mpi mmd res/one.h5 ox.npy >md3.txt 2>&1
[ $? = 1 ] && [ "$(grep -c 'error: .*dimension' md3.txt)" = 1 ] &&
  ok "kdistill mmd OUT DATA of another dimension: one line" || bad "mmd dims: $(cat md3.txt)"
mpi thin nope.npy >nf.txt 2>&1
[ $? = 1 ] && [ "$(grep -c "error: data.path: nope.npy: cannot open file: no such file (looked for $PWD/nope.npy)" nf.txt)" = 1 ] &&
  ok "a missing file names the absolute path looked for" || bad "missing file: $(cat nf.txt)"
printf 'task: ctt_study\nx: {type: gaussian, d: 2}\ny: {type: gaussian, d: 2, mean: [0.5, 0]}\nstudy: {m: 128, n: 128, replicates: 4, g: [0, 1], exact: true, s: 8, B: 20}\noutput: {path: res/study.h5}\n' >study.yaml
mpi run study.yaml >st.txt 2>&1 && grep -q "^replicates: 4 (level alpha = 0.05)" st.txt &&
  grep -qE "^  ctt +0 +[01]\.[0-9]{4} \+- " st.txt && grep -qE "^  exact +- +[01]\.[0-9]{4} " st.txt &&
  ! grep -q "^mmd:" st.txt && ! grep -q "0 kernel evaluations" st.txt &&
  ok "ctt_study summary: its table" || bad "ctt_study summary: $(cat st.txt)"
mpi ctt ox.npy oy.npy -o res/t.h5 >ct.txt 2>&1 && grep -q "^p_value:    " ct.txt &&
  grep -q "^decision:   reject: the samples differ" ct.txt && grep -q "^statistic:  " ct.txt &&
  ! grep -q "^mmd:" ct.txt && ok "kdistill ctt X Y: statistic, p-value, decision" || bad "ctt one-liner: $(cat ct.txt)"
# the printed statistic is the MMD (the square root of /test/statistic_squared), labelled so
grep -q "^statistic:  [0-9.e+-]* (MMD between the two samples' coresets)$" ct.txt &&
  /usr/bin/python3 -c '
import sys, h5py, math
v = float(open(sys.argv[1]).read().split("statistic:")[1].split()[0])
with h5py.File(sys.argv[2], "r") as f:
    s2 = float(f["/test/statistic_squared"][()])
assert s2 > 0 and abs(v - math.sqrt(s2)) <= 1e-6 * v, (v, s2)
' ct.txt res/t.h5 && ok "kdistill ctt: the statistic printed is the MMD, labelled MMD" ||
  bad "ctt statistic label/value: $(cat ct.txt)"
# README.md's quick-start output is what the quick-start config prints at 2 ranks (all but the
# timings and the output path)
mpi run "$KD_ROOT/configs/quickstart.yaml" -o res/qs.h5 >qs.txt 2>/dev/null &&
  awk '/^```/ {if (f) exit; f = 0; next} /^task: +herd$/ {f = 1} f' "$KD_ROOT/README.md" |
  grep -vE "^(seconds|time|output):" >qs_readme.txt && [ -s qs_readme.txt ] &&
  grep -vE "^(seconds|time|output):" qs.txt | diff qs_readme.txt - >qs_diff.txt &&
  ok "README's quick-start output matches the run" ||
  bad "README quick-start output differs: $(cat qs_diff.txt qs.txt)"
mpi ctt ox.npy ox.npy -o res/t0.h5 >c0.txt 2>&1 && grep -q "^decision:   no rejection" c0.txt &&
  ok "kdistill ctt X X: no rejection" || bad "ctt X X: $(cat c0.txt)"
mpi thin data.bin >ob.txt 2>&1
[ $? = 1 ] && [ "$(grep -c 'error: data.bin: cannot tell the format from the file name' ob.txt)" = 1 ] &&
  ok "one-liner with an unknown extension: one line" || bad "unknown extension: $(cat ob.txt)"
mpi algorithms thin >al.txt 2>&1 && grep -q "^  kt_compress .*(default) \[lazy data, resumable\]$" al.txt &&
  grep -q "^  sc .*\[weighted, Stein kernel\]$" al.txt && grep -q "^  uniform .*[^]]$" al.txt &&
  ! grep -q "^herd" al.txt &&
  ok "kdistill algorithms thin" || bad "algorithms: $(cat al.txt)"
mpi algorithms >al2.txt 2>&1 && [ "$(grep -c '^[a-z]*:$' al2.txt)" = 4 ] && ok "kdistill algorithms: four tasks" ||
  bad "algorithms (all): $(cat al2.txt)"
mpi algorithms nope >al3.txt 2>&1
[ $? = 1 ] && grep -q "unknown task 'nope'" al3.txt && ok "algorithms of an unknown task refused" || bad "$(cat al3.txt)"
printf 'task: thin\ndata: {type: gaussian, d: 2, n: 100}\nalgorithm: {n_out: 500}\n' >big_out.yaml
mpi validate big_out.yaml >vb.txt 2>&1
[ $? = 1 ] && [ "$(grep -c 'error: big_out.yaml:3: algorithm.n_out = 500 exceeds the 100 input points' vb.txt)" = 1 ] &&
  ok "validate checks n_out against the input rows" || bad "validate n_out: $(cat vb.txt)"

# every shipped config without external input files validates
for cfg in "$KD_ROOT"/configs/*.yaml; do
  grep -qE 'type: *(hdf5|csv)' "$cfg" && continue
  mpi validate "$cfg" >v.txt 2>&1 && ok "validate $(basename "$cfg")" ||
    bad "shipped config $(basename "$cfg") does not validate: $(cat v.txt)"
done

[ $fails = 0 ] && echo "all CLI checks passed" || { echo "$fails CLI checks failed"; exit 1; }
