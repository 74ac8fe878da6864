#!/bin/bash
# notebook.sh PYTHON NOTEBOOK OUTDIR - execute NOTEBOOK top to bottom with jupyter-nbconvert, its
# kernel PYTHON (the test venv's interpreter, which has the installed package): Debian's
# ipykernel registers /usr/bin/python3 as the kernel "python3", so the venv gets a kernel of its
# own (in its prefix, where the venv's jupyter looks) and the notebook runs on that one.
set -euo pipefail
py=$1 nb=$2 out=$3
export PYDEVD_DISABLE_FILE_VALIDATION=1
"$py" -m ipykernel install --sys-prefix --name kdistill-venv --display-name "kdistill (test venv)" \
  >/dev/null
mkdir -p "$out"
"$py" -m nbconvert --to notebook --execute --ExecutePreprocessor.kernel_name=kdistill-venv \
  --ExecutePreprocessor.timeout=240 --output-dir "$out" "$nb"
# every code cell ran and none raised
"$py" - "$out/$(basename "$nb")" <<'PY'
import json, sys
cells = [c for c in json.load(open(sys.argv[1]))["cells"] if c["cell_type"] == "code"]
ran = [c for c in cells if c.get("execution_count")]
errs = [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
print("notebook: %d of %d code cells ran, %d errors" % (len(ran), len(cells), len(errs)))
sys.exit(0 if len(ran) == len(cells) and not errs else 1)
PY
