#!/bin/bash
# .ci/check_layers.sh - the layering rules of src/ (docs/ARCHITECTURE.md), checked by grep:
#   (a) src/algo/ calls no MPI_* and no H5* function directly (comm/ and io/ do that);
#   (b) src/algo/ reads no configuration (kd_config_*, kd_cfg_*) and no checkpoint session
#       (kd_checkpoint_session*): algorithms get everything through kd_algo_in / their own structs;
#       (b2) nor looks a parameter up by its key (kd_params_int/f64/str/bool): rows land in typed
#       structs (kd_params_fill), shared rows are found by role;
#   (g) the configuration tree's API (kd_config_*, kd_section_key) is called only by io/, task/,
#       sweep/, job/ and the section readers beside the objects (src/<layer>/<object>_config.c);
#   (c) the include graph between the folders of src/ follows the layer order
#         core <- comm <- la, io <- pointset <- kernel <- embed <- algo <- task <- sweep <- job <- cli
#       (an arrow X -> Y, "a file of X includes a header of Y", must point to a lower layer or stay
#       within the layer) and has no cycle. Subfolders of algo/ count as algo. Folders of one
#       layer (la/io) may include each other as long as no cycle forms (checked
#       on the folder graph). Public headers (#include "kdistill/...", include/kdistill/) are the
#       API surface every layer may use; they are not part of the graph;
#   (d) public headers in include/kdistill/ include only other public headers;
#   (f) calls through public headers: a function declared in include/kdistill/ counts as the
#       layer of the folder of src/ that defines it, and no file calls one of a higher layer;
#   (e) HDF5 is called only by io/ and the point-set readers (pointset/io_h5.c, io_h5_cols.c), and
#       libyaml only by io/config.c: other modules (e.g. sweep/) read and write through kd_io.h.
# Prints every offender and exits 1 if there is any. Run from anywhere: paths are relative to the
# repository root.
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0

echo "--- (a) raw MPI / HDF5 calls in src/algo/"
if grep -rnE '\bMPI_[A-Z][a-z_]+\s*\(|\bH5[A-Z][a-z_0-9]*\s*\(' src/algo; then
  echo "    raw MPI/HDF5 calls in src/algo (use the comm/ helpers; I/O belongs to io/ and task/)"
  fail=1
fi

echo "--- (b) configuration / checkpoint-session access in src/algo/"
if grep -rnE '\b(kd_config_|kd_cfg_)[A-Za-z0-9_]*\s*\(|\bkd_checkpoint_session' src/algo; then
  echo "    src/algo reads the config or the checkpoint session (read keys in task/, pass them in" \
    "kd_algo_in / the algorithm's own argument struct)"
  fail=1
fi

echo "--- (b2) parameters looked up by name in src/algo/"
if grep -rnE '\bkd_params_(int|f64|str|bool)\s*\(' src/algo; then
  echo "    src/algo looks a parameter up by its key (declare the row with KD_PARAM_AT and read" \
    "the typed struct kd_params_fill fills; shared rows by their role: kd_params_role_i64)"
  fail=1
fi

echo "--- (g) the configuration tree's API outside io/, the task layers and the section readers"
# kd_config_* and kd_section_key are called by io/ (which owns the tree), by task/ and the layers
# that handle whole configurations above it (sweep/, job/), and by the section readers beside the
# objects (src/*/*_config.c: kernel/kernel_config.c, pointset/measure_config.c); nowhere else
offenders=$(grep -rlE '\b(kd_config_[a-z_0-9]+|kd_section_key)\s*\(' src |
  grep -vE '^src/(io|task|sweep|job)/|^src/[a-z]+/[a-z_]+_config\.c$' || true)
if [ -n "$offenders" ]; then
  echo "$offenders"
  echo "    these files read the configuration: put the reading in the object's section reader" \
    "(src/<layer>/<object>_config.c, on a kd_section) or in task/"
  fail=1
fi

echo "--- (c) include graph between the folders of src/"
layer_of() {
  case "$1" in
    core) echo 0 ;;
    comm) echo 1 ;;
    la | io) echo 2 ;;
    pointset) echo 3 ;;
    kernel) echo 4 ;;
    embed) echo 5 ;;
    algo) echo 6 ;;
    task) echo 7 ;;
    sweep) echo 8 ;;
    job) echo 9 ;;
    cli) echo 10 ;;
    *) echo -1 ;;
  esac
}
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
while IFS= read -r -d '' f; do
  from=${f#src/}
  from=${from%%/*}
  grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "$f" | while IFS= read -r line; do
    inc=$(sed -E 's/.*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"${line#*:}")
    to=${inc%%/*}
    [ "$to" = "$inc" ] && continue    # no folder: a header next to the file
    [ "$to" = kdistill ] && continue  # public API
    echo "$from $to $f:${line%%:*}: #include \"$inc\""
  done
done < <(find src -name '*.[ch]' -print0 | sort -z) >"$edges"
while read -r from to where; do
  lf=$(layer_of "$from")
  lt=$(layer_of "$to")
  if [ "$lf" -lt 0 ] || [ "$lt" -lt 0 ]; then
    echo "$where"
    echo "    folder '$([ "$lf" -lt 0 ] && echo "$from" || echo "$to")' has no layer: add it to" \
      ".ci/check_layers.sh and docs/ARCHITECTURE.md"
    fail=1
  elif [ "$lt" -gt "$lf" ]; then
    echo "$where"
    echo "    $from (layer $lf) includes $to (layer $lt): an arrow up the layer order"
    fail=1
  fi
done <"$edges"
# cycles: transitive closure of the folder graph (self-includes ignored)
cycles=$(awk '$1 != $2 { e[$1 " " $2] = 1; n[$1] = 1; n[$2] = 1 }
  END {
    for (k in n) for (i in n) for (j in n)
      if ((i " " k) in e && (k " " j) in e) e[i " " j] = 1
    for (i in n) for (j in n)
      if (i < j && (i " " j) in e && (j " " i) in e) print i " <-> " j
  }' "$edges")
if [ -n "$cycles" ]; then
  echo "$cycles" | while read -r c; do echo "    include cycle between folders: $c"; done
  awk '$1 != $2' "$edges" | while read -r from to where; do
    grep -q "^$to <-> $from\$\|^$from <-> $to\$" <<<"$cycles" && echo "$where"
  done
  fail=1
fi
awk '$1 != $2 { print $1 " -> " $2 }' "$edges" | sort | uniq -c | sed 's/^/    /'

echo "--- (d) public headers include only public headers"
if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' include/kdistill/*.h \
  include/kdistill/author/*.h |
  grep -vE '#[[:space:]]*include[[:space:]]*"(kdistill/|author/|\.\./)?kd[a-z_]*\.h"'; then
  echo "    include/kdistill/ must not include private headers of src/"
  fail=1
fi

echo "--- (e) HDF5 outside io/ (and the point-set readers pointset/io_h5*.c), libyaml outside io/config.c"
if grep -rnE '\bH5[A-Z][a-z_0-9]*\s*\(|#[[:space:]]*include[[:space:]]*<hdf5\.h>' src |
  grep -vE '^src/(io/|pointset/io_h5(_cols)?\.c:)'; then
  echo "    write and read HDF5 through io/ (kd_io.h: kd_output_write, kd_h5_file)"
  fail=1
fi
if grep -rnE '\byaml_[a-z_]+\s*\(|#[[:space:]]*include[[:space:]]*<yaml\.h>' src |
  grep -vE '^src/io/config\.c:'; then
  echo "    parse and emit YAML through io/'s config API (kd_io.h: kd_config_*)"
  fail=1
fi

echo "--- (f) calls through the public headers follow the layer order"
# A function declared in include/kdistill/ (either tier) belongs to the layer of the folder of
# src/ that defines it; a call from a lower layer is an arrow up the order that (c) cannot see,
# since public headers are not part of the include graph.
python3 - <<'PY' || { echo "    call the function from its layer or above, or move it down"; fail=1; }
import os, re, sys, glob
LAYER = {"core": 0, "comm": 1, "la": 2, "io": 2, "pointset": 3, "kernel": 4, "embed": 5,
         "algo": 6, "task": 7, "sweep": 8, "job": 9, "cli": 10}
def strip(s):
    s = re.sub(r'/\*.*?\*/', lambda m: '\n'*m.group(0).count('\n'), s, flags=re.S)
    s = re.sub(r'//[^\n]*', '', s)
    s = re.sub(r'"(\\.|[^"\\\n])*"', '""', s)
    return s
declared = set()
for h in glob.glob('include/kdistill/**/*.h', recursive=True):
    declared |= set(re.findall(r'\b(kd_[a-z0-9_]+)\s*\(', strip(open(h).read())))
defined = {}
files = sorted(glob.glob('src/**/*.[ch]', recursive=True))
for f in files:
    if not f.endswith('.c'): continue
    txt = strip(open(f).read())
    for m in re.finditer(r'^[A-Za-z_][^;{}()\n]*?\b(kd_[a-z0-9_]+)\s*\([^;{]*?\)\s*\{', txt, re.M):
        name = m.group(1)
        if name in declared:
            defined.setdefault(name, f.split('/')[1])
bad = 0
for f in files:
    src_folder = f.split('/')[1]
    lf = LAYER[src_folder]
    txt = strip(open(f).read())
    for i, line in enumerate(txt.split('\n'), 1):
        for m in re.finditer(r'\b(kd_[a-z0-9_]+)\s*\(', line):
            callee = defined.get(m.group(1))
            if callee is None or LAYER[callee] <= lf: continue
            print("%s:%d: %s (layer %d) calls %s, defined in %s/ (layer %d)" % (f, i, src_folder, lf, m.group(1), callee, LAYER[callee]))
            bad = 1
print("%d public functions, %d with a definition in src/" % (len(declared), len(defined)), file=sys.stderr)
sys.exit(bad)
PY

if [ "$fail" -ne 0 ]; then
  echo "layering check FAILED"
  exit 1
fi
echo "layering check passed"
