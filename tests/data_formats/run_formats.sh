#!/bin/bash
# run_formats.sh - a user's own data in every format the readers take (docs/config.md, "data"):
#  - several HDF5 datasets or .npz arrays (stored or compressed) as the columns of one point set,
#    their leading dimensions flattened into rows (an ArviZ posterior group: (chain, draw) and
#    (chain, draw, k)), and one flattened .npy, for points and (HDF5) for Stein scores, give
#    bitwise the coreset of the flat n x d matrix;
#  - .npy (C and Fortran order, float64, float32, int64) and .npz (np.savez, named and single
#    arrays; np.savez_compressed, C and Fortran order, float32) give bitwise the coreset of the
#    same data read from HDF5, at 1, 2 and 4 ranks;
#  - CSV: np.savetxt's default (blanks, no header), tab with a header, semicolons, a pandas file
#    with its unnamed index column (left out, logged), columns chosen by name and index, 20 000
#    CRLF rows with comments and blank lines (each rank seeks to its own block), all equal to the
#    HDF5 run;
#  - errors, each exit 1 with one line naming the file: several arrays without data.dataset, an
#    absent array, a compressed array with a wrong CRC-32 or a declared size longer than its stream, 3-D, a truncated file, not an .npy, a missing HDF5
#    dataset (the message lists the datasets the file has; `kdistill thin` names --dataset),
#    datasets as columns whose leading dimensions differ, an absent one, an external link, dataset with datasets,
#    flatten past a dataset's dimensions, npz arrays with different rows, a flattened Fortran
#    array,
#    several 2-D datasets and no data.dataset (a single one is used, logged and recorded), a separator that does not match, an
#    absent column name, a column index out of range; the hints of a quadrature target read
#    from CSV, HDF5 or .npz name target.* keys, not data.*.
KD_E2E_NAME=formats
# shellcheck source=../lib/e2e.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/e2e.sh"
PY=/usr/bin/python3
$PY - <<'PY' || { echo "FAIL: cannot write the inputs"; exit 1; }
import numpy as np, h5py
x = np.random.default_rng(3).normal(size=(3000, 3))
xi = np.rint(x * 100).astype(np.int64)
h5py.File("x.h5", "w")["data"] = x
h5py.File("x32.h5", "w")["data"] = x.astype(np.float32)
h5py.File("xi.h5", "w")["data"] = xi
f = h5py.File("other.h5", "w"); f["X"] = x; f["grp/y"] = x[:, 0]; f.close()
f = h5py.File("two2d.h5", "w"); f["X"] = x; f["grp/Z"] = x[:, :2]; f["y"] = x[:, 0]; f.close()
# an ArviZ-style posterior group: (chain, draw) and (chain, draw, k) datasets, 2001 draws in all
# (rank blocks start inside a chain), and the same numbers flattened into one n x d matrix; scores
# in the same two layouts
r5 = np.random.default_rng(5); C, D = 3, 667
mu, tau, th = r5.normal(size=(C, D)), r5.gamma(2.0, size=(C, D)), r5.normal(size=(C, D, 4))
with h5py.File("post.h5", "w") as f:
    f["posterior/mu"] = mu; f["posterior/tau"] = tau; f["posterior/theta"] = th
    f["score/mu"] = -mu; f["score/tau"] = 1.0 / tau - 1.0; f["score/theta"] = -th
flat = np.concatenate([mu.reshape(-1, 1), tau.reshape(-1, 1), th.reshape(-1, 4)], axis=1)
sflat = np.concatenate([-mu.reshape(-1, 1), (1.0 / tau - 1.0).reshape(-1, 1), -th.reshape(-1, 4)], axis=1)
with h5py.File("flat.h5", "w") as f:
    f["data"] = flat; f["score"] = sflat
h5py.File("flatth.h5", "w")["data"] = th.reshape(-1, 4)
np.savez("post.npz", mu=mu, tau=tau, theta=th)
np.savez_compressed("postz.npz", mu=mu, tau=tau, theta=th, short=np.zeros(5))
np.save("theta.npy", th); np.save("thetaF.npy", np.asfortranarray(th))
with h5py.File("cols_bad.h5", "w") as f:
    f["a"] = np.zeros((3, 5)); f["b"] = np.zeros((3, 6)); f["c"] = np.zeros(7)
    f["ext"] = h5py.ExternalLink("x.h5", "/data")
np.save("c.npy", x); np.save("f.npy", np.asfortranarray(x)); np.save("x32.npy", x.astype(np.float32))
np.save("xi.npy", xi)
np.savez("named.npz", X=x, y=x[:, 0]); np.savez("single.npz", x); np.savez_compressed("zip.npz", X=x)
np.savez_compressed("zipf.npz", X=np.asfortranarray(x), y=x[:, 0]); np.savez_compressed("zip32.npz", x.astype(np.float32))
# damaged compressed archives: the directory's CRC-32 of X.npy changed; its size declared 8 bytes
# longer than the stream holds (both read past the header, so only the data shows them)
def patch(src, dst, field, delta):
    b = bytearray(open(src, "rb").read())
    c = b.rfind(b"PK\x01\x02")  # the last (only) directory record
    v = int.from_bytes(b[c + field:c + field + 4], "little")
    b[c + field:c + field + 4] = ((v + delta) % 2**32).to_bytes(4, "little")
    open(dst, "wb").write(bytes(b))
patch("zip.npz", "zipcrc.npz", 16, 1)
patch("zip.npz", "ziplong.npz", 24, 8)
np.save("cube.npy", np.zeros((2, 2, 2)))
open("trunc.npy", "wb").write(open("c.npy", "rb").read()[:1000])
np.savetxt("blank.txt", x)
np.savetxt("tab.tsv", x, delimiter="\t", header="a\tb\tc", comments="")
np.savetxt("semi.csv", x, delimiter=";")
with open("pandas.csv", "w") as f:
    f.write(",a,b,c\n")
    for i, r in enumerate(x):
        f.write("%d,%r,%r,%r\n" % (i, *r))# 20 000 rows: each rank's block starts past one or more 4096-row marks of the parallel reader;
# a header, comment and blank lines between rows, CRLF line ends
xb = np.random.default_rng(4).normal(size=(20000, 3))
h5py.File("xb.h5", "w")["data"] = xb
with open("big.csv", "w", newline="") as f:
    f.write("a,b,c\r\n")
    for i, r in enumerate(xb):
        if i % 997 == 5:
            f.write("# a comment\r\n\r\n")
        f.write("%r,%r,%r\r\n" % tuple(r))
PY
cfg() { printf 'task: thin\ndata: {type: %s}\nkernel: {name: gaussian, ls: 1.0}\nalgorithm: {name: kt_compress, n_out: 64}\noutput: {path: bad.h5}\n' "$1" >"$2"; }
# hash FILE...: one line per file, a hash of its coreset points (one python3 start for all)
hash() { $PY -c 'import sys, h5py, hashlib
for p in sys.argv[1:]: print(hashlib.sha256(h5py.File(p)["coreset/points"][...].tobytes()).hexdigest()[:16])' "$@"; }
# reference runs on HDF5
for r in x x32 xi xb flat flatth; do
  cfg "hdf5, path: $r.h5" ref_$r.yaml
  mpi 2 run ref_$r.yaml -q --output ref_$r.h5 || bad "reference $r"
done
same_as() { # NAME SPEC REF: the run on SPEC at 1, 2, 4 ranks equals the reference coreset
  local name=$1 spec=$2 ref=$3 n want got files=()
  cfg "$spec" "$name.yaml"
  for n in ${KD_E2E_RANKS:-1 2 4}; do
    mpi $n run "$name.yaml" -q --output "$name.$n.h5" >"$name.txt" 2>&1 || { bad "$name at $n ranks: $(cat "$name.txt")"; return; }
    files+=("$name.$n.h5")
  done
  { read -r want; for n in ${KD_E2E_RANKS:-1 2 4}; do
    read -r got
    [ -n "$want" ] && [ "$got" = "$want" ] || { bad "$name at $n ranks: coreset '$got', HDF5 gives '$want'"; return; }
  done; } < <(hash ref_$ref.h5 "${files[@]}")
  ok "$name: bitwise the HDF5 coreset at ${KD_E2E_RANKS:-1 2 4} ranks"
}
same_as npy_c "npy, path: c.npy" x
same_as npy_fortran "npy, path: f.npy" x
same_as npy_float32 "npy, path: x32.npy" x32
same_as npy_int64 "npy, path: xi.npy" xi
same_as npz_named "npz, path: named.npz, dataset: X" x
same_as npz_single "npz, path: single.npz" x
same_as npz_compressed "npz, path: zip.npz" x
same_as npz_compressed_fortran "npz, path: zipf.npz, dataset: X" x
same_as npz_compressed_float32 "npz, path: zip32.npz" x32
# several datasets as columns, leading dimensions flattened into rows (ArviZ / netCDF4 groups)
same_as h5_columns "hdf5, path: post.h5, datasets: [posterior/mu, posterior/tau, posterior/theta], flatten: 2" flat
same_as h5_flatten "hdf5, path: post.h5, dataset: posterior/theta, flatten: 2" flatth
same_as npz_columns "npz, path: post.npz, datasets: [mu, tau, theta], flatten: 2" flat
same_as npz_columns_compressed "npz, path: postz.npz, datasets: [mu, tau, theta], flatten: 2" flat
same_as npy_flatten "npy, path: theta.npy, flatten: 2" flatth
# the same for the scores of a Stein kernel: the coreset equals the one from the flat matrices
stein_cfg() { printf 'task: thin\ndata: {type: hdf5, path: %s, score: {type: hdf5, path: %s}}\nkernel: {name: stein, base: imq, ls: 1.0}\ntarget: {type: stein}\nalgorithm: {name: stein_thin, n_out: 24}\noutput: {path: bad.h5}\n' "$1" "$2" >"$3"; }
stein_cfg "flat.h5" "flat.h5, dataset: score" sref.yaml
stein_cfg "post.h5, datasets: [posterior/mu, posterior/tau, posterior/theta], flatten: 2" \
  "post.h5, datasets: [score/mu, score/tau, score/theta], flatten: 2" scols.yaml
if mpi 2 run sref.yaml -q --output sref.h5 && mpi 3 run scols.yaml -q --output scols.h5; then
  [ "$(hash sref.h5)" = "$(hash scols.h5)" ] && ok "score datasets as columns: the flat-matrix Stein coreset" ||
    bad "score datasets as columns: $(hash scols.h5), flat gives $(hash sref.h5)"
else
  bad "stein runs on the posterior layouts failed"
fi
# no data.dataset and no /data: the file's only 2-D numeric dataset, logged and recorded
same_as h5_only_2d "hdf5, path: other.h5" x
mpi 1 validate h5_only_2d.yaml --print-defaults >pick.txt 2>&1
grep -q "other.h5: using dataset '/X', the file's only 2-D numeric dataset (set data.dataset to choose)" pick.txt &&
  grep -q "^  dataset: X$" pick.txt && ok "h5_only_2d: the choice is logged and recorded in the resolved config" ||
  bad "h5_only_2d: $(cat pick.txt)"
same_as csv_blanks "csv, path: blank.txt" x
same_as csv_big_marks "csv, path: big.csv" xb
same_as csv_tab_header "csv, path: tab.tsv" x
same_as csv_semicolon "csv, path: semi.csv" x
same_as csv_pandas "csv, path: pandas.csv" x
same_as csv_columns_names "csv, path: pandas.csv, columns: [a, b, c]" x
same_as csv_columns_index "csv, path: pandas.csv, columns: [1, 2, 3]" x
grep -q "pandas.csv: the first column has no name in the header (a pandas index): left out" csv_pandas.txt 2>/dev/null ||
  mpi 2 run csv_pandas.yaml --output p.h5 2>&1 | grep -q "a pandas index): left out" && ok "pandas index column logged" ||
  bad "pandas index column not logged"
cfg "csv, path: pandas.csv, columns: [c, 1]" two.yaml
mpi 2 run two.yaml -q --output two.h5 && $PY -c 'import sys, h5py, numpy as np
x = np.random.default_rng(3).normal(size=(3000, 3))
p = h5py.File("two.h5")["coreset/points"][...]; i = h5py.File("two.h5")["coreset/indices"][...]
sys.exit(not (p.shape == (64, 2) and np.array_equal(p, x[i][:, [2, 0]])))' &&
  ok "columns [c, 1]: the chosen columns in that order" || bad "columns [c, 1]"
# errors
err() { cfg "$2" e.yaml; refused "$1" "$3" run e.yaml; }
err "npz with several arrays" "npz, path: named.npz" "named.npz: the archive holds several arrays; set data.dataset to one of: X, y"
err "npz absent array" "npz, path: named.npz, dataset: Z" "named.npz: no array 'Z' in the archive; it has: X, y"
err "npz compressed, CRC changed" "npz, path: zipcrc.npz" "zipcrc.npz: the compressed array's CRC-32 does not match (damaged archive)"
err "npz compressed, size declared longer" "npz, path: ziplong.npz" "ziplong.npz: the compressed array ends after 72128 bytes; its header declares more (damaged archive)"
err "npy 3-D" "npy, path: cube.npy" "cube.npy: the array has 3 dimensions"
err "npy truncated" "npy, path: trunc.npy" "trunc.npy: the header declares 3000 x 3 values, more than the file holds"
err "npy that is HDF5" "npy, path: x.h5" "x.h5: not a .npy array"
err "npy missing" "npy, path: none.npy" "none.npy: cannot open file"
err "HDF5 dataset missing" "hdf5, path: other.h5, dataset: nope" "other.h5: dataset 'nope' not found; it has: /X (3000 x 3), /grp/y (3000) (set data.dataset)"
err "HDF5 several 2-D datasets" "hdf5, path: two2d.h5" "two2d.h5: no dataset named, no dataset 'data', and several 2-D numeric datasets to choose from; it has: /X (3000 x 3), /grp/Z (3000 x 2), /y (3000) (set data.dataset)"
err "datasets, leading dimensions differ" "hdf5, path: cols_bad.h5, datasets: [a, b], flatten: 2" "cols_bad.h5: dataset 'b' has 6 along dimension 1, 'a' has 5: with data.flatten = 2 the first 2 dimensions must agree"
err "datasets, row counts differ" "hdf5, path: cols_bad.h5, datasets: [a, c]" "cols_bad.h5: dataset 'c' has 7 along dimension 0, 'a' has 3: with data.flatten = 1 the first 1 dimensions must agree"
err "datasets, one absent" "hdf5, path: cols_bad.h5, datasets: [a, zz]" "cols_bad.h5: dataset 'zz' not found; it has: /a (3 x 5), /b (3 x 6), /c (7) (set data.datasets)"
err "npz arrays, rows differ" "npz, path: postz.npz, datasets: [mu, short]" "postz.npz: array 'short' has 5 rows, 'mu' has 3: the arrays of data.datasets must have the same rows"
err "npy Fortran order flattened" "npy, path: thetaF.npy, flatten: 2" "thetaF.npy: a Fortran-order array of 3 dimensions cannot be read with flatten = 2; save it in C order"
err "datasets, one an external link" "hdf5, path: cols_bad.h5, datasets: [a, ext]" "cols_bad.h5: 'ext' is an external link into another file; kdistill reads only the file it is given (set data.allow_external: true to follow it)"
err "dataset and datasets" "hdf5, path: cols_bad.h5, dataset: a, datasets: [b]" "data.dataset and data.datasets are both set"
err "flatten past the dimensions" "hdf5, path: cols_bad.h5, datasets: [c], flatten: 2" "cols_bad.h5: dataset 'c' has 1 dimensions; data.flatten = 2 takes datasets of 2 to 8"
# on the command line the hint names the flag the user typed
refused "thin FILE.h5, several 2-D datasets" "two2d.h5: no dataset named, no dataset 'data', and several 2-D numeric datasets to choose from; it has: /X (3000 x 3), /grp/Z (3000 x 2), /y (3000) (use --dataset NAME)" thin two2d.h5 -o bad.h5
refused "thin FILE.npz, several arrays" "named.npz: the archive holds several arrays; use --dataset with one of: X, y" thin named.npz -o bad.h5
refused "thin FILE.h5 --dataset, absent" "two2d.h5: dataset 'W' not found; it has: /X (3000 x 3), /grp/Z (3000 x 2), /y (3000) (use --dataset NAME)" thin two2d.h5 --dataset W -o bad.h5
err "separator mismatch" "csv, path: blank.txt, delimiter: comma" "blank.txt:1: column 1 is not a number (separator ','"
err "absent column name" "csv, path: pandas.csv, columns: [a, zz]" "pandas.csv: data.columns: no column named 'zz'"
err "column index out of range" "csv, path: blank.txt, columns: [0, 3]" "blank.txt: data.columns: column 3 does not exist (the file has 3 columns"
err "column names without a header" "csv, path: blank.txt, columns: [a]" "blank.txt: data.columns names a column ('a') but the file has no header line"
# a CSV in another section (a quadrature target): its hints name that section's keys
qcfg() { printf 'task: quad\ntarget: {type: csv, path: %s}\nkernel: {name: gaussian, ls: 1.0}\nalgorithm: {name: nystrom_recombination, n: 16}\noutput: {path: bad.h5}\n' "$1" >"$2"; }
qcfg "pandas.csv, columns: [a, zz]" e.yaml
refused "target csv, absent column name" "pandas.csv: target.columns: no column named 'zz'" run e.yaml
qcfg "semi.csv, delimiter: comma" e.yaml
refused "target csv, separator mismatch" "set target.delimiter if the file uses another" run e.yaml
qcfg "tab.tsv" q.yaml
qtype() { qcfg "$1" e.yaml; sed -i "s/type: csv/type: $2/" e.yaml; }
qtype "two2d.h5" hdf5
refused "target hdf5, several 2-D datasets" "two2d.h5: no dataset named, no dataset 'data', and several 2-D numeric datasets to choose from; it has: /X (3000 x 3), /grp/Z (3000 x 2), /y (3000) (set target.dataset)" run e.yaml
qtype "named.npz" npz
refused "target npz with several arrays" "named.npz: the archive holds several arrays; set target.dataset to one of: X, y" run e.yaml
mpi 1 validate q.yaml > q.txt 2>&1 &&
  [ "$(grep -c "tab.tsv: 3 tab-separated columns; line 1 is a header (no field starts like a number) (target.header: auto" q.txt)" = 1 ] &&
  ok "target csv: validate notes the header once, naming target.header" || bad "target csv header note: $(cat q.txt)"
[ $fails = 0 ]
