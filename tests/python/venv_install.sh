#!/bin/bash
# venv_install.sh SOURCE PYTHON VENV - the Python package as a user gets it: a copy of the
# checkout's sources is built into a wheel with `python3 -m build --wheel --no-isolation` (setup.py
# compiles the library and the command line with CMake, Release), the wheel is checked (tag, the
# bundled library, program and build record, py.typed, kdplot) and pip-installed into a fresh
# `python3 -m venv --system-site-packages` (numpy and mpi4py come from Debian). Then the installed
# package is checked (metadata version = __version__ = the CMake project's, build_info, `kdistill`
# and `kdplot` on the venv's PATH), and a Python without numpy must get one clear line, and pip
# without the wheel module setup.py's hint (python3-wheel, --no-build-isolation). The other
# tests of the `python` label run on VENV/bin/python with no PYTHONPATH or KDISTILL_LIB: against
# the installed package, not the source tree.
set -euo pipefail
src=$1
py=$2
venv=$3
fail() { echo "venv_install: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# what a checkout holds for the build, so the in-tree build writes nothing into SOURCE
mkdir -p "$work/src"
cp -r "$src/src" "$src/include" "$src/tools" "$src/python" "$src/configs" "$src/docs" "$work/src/"
cp "$src/pyproject.toml" "$src/setup.py" "$src/CMakeLists.txt" "$work/src/"
find "$work/src/python" \( -name __pycache__ -o -name _libpath.py \) -prune -exec rm -rf {} +
(cd "$work/src" && env -u KDISTILL_BUILD_DIR CMAKE_BUILD_PARALLEL_LEVEL=2 \
  "$py" -m build --wheel --no-isolation --outdir "$work/dist" >"$work/build.log" 2>&1) ||
  { tail -n 30 "$work/build.log"; fail "python3 -m build --wheel failed"; }
wheels=("$work"/dist/*.whl)
[ ${#wheels[@]} -eq 1 ] || fail "expected one wheel, got: ${wheels[*]}"
whl=${wheels[0]}
case $(basename "$whl") in
  kdistill-*-py3-none-linux_*.whl) ;;
  *) fail "wheel tag: $(basename "$whl")" ;;
esac
"$py" - "$whl" <<'PY'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
for f in ("kdistill/__init__.py", "kdistill/py.typed", "kdistill/_libpath.py",
          "kdistill/_native/libkdistill.so.0", "kdistill/_native/kdistill",
          "kdistill/_native/BUILD"):
    assert f in names, "%s not in the wheel" % f
ep = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
assert ep and "kdplot = kdistill._kdplot:main" in zipfile.ZipFile(sys.argv[1]).read(ep[0]).decode(), \
    "kdplot is not an entry point of the wheel"
assert "kdistill/_kdplot.py" in names, "kdistill/_kdplot.py not in the wheel"
PY
rm -rf "$venv"
"$py" -m venv --system-site-packages "$venv"
PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install -q "$whl" ||
  fail "pip install of the wheel failed"
want=$(sed -n 's/^project(kdistill VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
cd "$work"
env -u PYTHONPATH -u KDISTILL_LIB "$venv/bin/python" - "$venv" "$want" <<'PY'
import importlib.metadata as md, os, sys
import numpy as np
import kdistill
venv, want = sys.argv[1], sys.argv[2]
site = os.path.realpath(venv)
here = os.path.realpath(kdistill.__file__)
assert here.startswith(site), "imported %s, not the venv's package" % here
assert md.version("kdistill") == kdistill.__version__ == want, (md.version("kdistill"),
                                                                 kdistill.__version__, want)
lib = os.path.realpath(kdistill._lib._library_path())
assert lib.startswith(os.path.dirname(here)), lib
pkg = os.path.dirname(here)
assert os.path.exists(os.path.join(pkg, "py.typed"))
build = kdistill.build_info()
for key in ("version", "compiler", "mpi", "hdf5", "blas", "scalapack", "yaml"):
    assert build.get(key), (key, build)
with open(os.path.join(pkg, "_native", "BUILD")) as f:
    assert "mpi: " + build["mpi"] in f.read()
reqs = md.requires("kdistill") or []
assert any(r.startswith("numpy") for r in reqs), reqs
assert md.metadata("kdistill")["Requires-Python"], "no Requires-Python"
cs = kdistill.thin(np.random.default_rng(0).normal(size=(1024, 2)), 16, ls=1.0)
assert len(cs) == 16 and abs(cs.weights.sum() - 1) < 1e-12
print("venv package OK:", here, md.version("kdistill"))
PY
# the command line and kdplot are the venv's scripts
out=$(env PATH="$venv/bin:/usr/bin:/bin" kdistill --version) || fail "kdistill --version failed"
[ "$(head -n 1 <<<"$out")" = "kdistill $want" ] || fail "kdistill --version printed: $out"
[ "$(PATH="$venv/bin:/usr/bin:/bin" bash -c 'command -v kdplot')" = "$venv/bin/kdplot" ] ||
  fail "kdplot is not on the venv's PATH"
env PATH="$venv/bin:/usr/bin:/bin" kdistill validate "$src/configs/quickstart.yaml" >/dev/null ||
  fail "kdistill validate through the venv's script failed"
head -n 1 "$venv/bin/kdplot" | grep -qx "#!$venv/bin/python[0-9.]*" || fail "kdplot's #! line"
# a Python without numpy: one line naming numpy, not a traceback from deep inside
"$py" -m venv "$work/bare"
site=$(ls -d "$venv"/lib/python3*/site-packages)
set +e
msg=$(env -u KDISTILL_LIB PYTHONPATH="$site" "$work/bare/bin/python" -c "import kdistill" 2>&1)
rc=$?
set -e
[ $rc -ne 0 ] || fail "import kdistill without numpy succeeded"
last=$(tail -n 1 <<<"$msg")
grep -q "^ImportError: kdistill needs numpy" <<<"$last" || fail "without numpy: $msg"
echo "without numpy: $last"
# a venv without Debian's site packages has no `wheel` module (as one of a pyenv python): offline,
# pip install --no-build-isolation gets setup.py's hint naming python3-wheel, not a bare
# "No module named 'wheel'"
if ! "$work/bare/bin/python" -c "import wheel" 2>/dev/null; then
  set +e
  msg=$(cd "$work" && PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$work/bare/bin/pip" install --no-build-isolation "$work/src" 2>&1)
  rc=$?
  set -e
  [ $rc -ne 0 ] || fail "pip install without the wheel module succeeded"
  grep -q "has no \`wheel\` module" <<<"$msg" && grep -q "apt-get install python3-wheel" <<<"$msg" &&
    grep -q "pip install --no-build-isolation" <<<"$msg" || fail "without wheel: $msg"
  echo "without wheel: setup.py's hint"
fi
