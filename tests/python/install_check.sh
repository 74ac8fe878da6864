#!/bin/bash
# install_check.sh BUILD PYTHON - `cmake --install` into a fresh prefix gives a working tree: the
# CLI, libkdistill.so, the headers, kdistill.pc (a C program compiles and links against it with
# pkg-config) and the Python package, importable from the prefix without any KDISTILL_LIB.
set -euo pipefail
build=$1
py=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/kdistill bin/kdplot lib/libkdistill.so include/kdistill/kdistill.h \
  include/kdistill/kd_data.h lib/pkgconfig/kdistill.pc share/kdistill/jobs/kd_job.sh; do
  [ -e "$prefix/$f" ] || { echo "missing after install: $f"; exit 1; }
done
site=$(ls -d "$prefix"/lib/python3*/site-packages)
cat >"$prefix/t.c" <<'C'
#include <kdistill/kdistill.h>
#include <stdio.h>
int main(void) { printf("%s\n", kd_err_string(KD_ERR_CONFIG)); return 0; }
C
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -o "$prefix/t" "$prefix/t.c" $(pkg-config --cflags --libs kdistill)
# the flags alone make a program that runs (kdistill.pc carries the rpath): no LD_LIBRARY_PATH
[ "$(env -u LD_LIBRARY_PATH "$prefix/t")" = "invalid configuration" ] ||
  { echo "pkg-config program failed (built with pkg-config's flags only)"; exit 1; }
cd "$prefix"
env -u KDISTILL_LIB PYTHONPATH="$site" "$py" -c '
import numpy as np, kdistill, os, sys
assert kdistill._lib._library_path().startswith(sys.argv[1]), kdistill._lib._library_path()
cs = kdistill.thin(np.random.default_rng(0).normal(size=(1024, 2)), 16, ls=1.0)
assert len(cs) == 16
print("installed package OK:", kdistill._lib._library_path())
' "$prefix"
