#!/bin/bash
# cmake_package.sh BUILD MPIEXEC - `cmake --install` into a fresh prefix, then a downstream CMake
# project (tests/install/app) finds it with find_package(kdistill 0.1) and builds a C program
# against kdistill::kdistill and kdistill::static and a C++ one; the two C programs compute the
# same thinning bit for bit at 1 and 2 ranks. The C example (examples/c) builds the same way and
# gives one coreset at 1, 2 and 3 ranks, the command line's on the same rows. A version the
# install cannot satisfy is refused.
set -euo pipefail
build=$1
mpiexec=$2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in lib/cmake/kdistill/kdistillConfig.cmake lib/cmake/kdistill/kdistillConfigVersion.cmake \
  share/doc/kdistill/LICENSE; do
  [ -f "$work/prefix/$f" ] || fail "missing after install: $f"
done
# the prefix is relocatable: build against a moved copy
mv "$work/prefix" "$work/moved"
mkdir "$work/src"
cp "$here/app/app.c" "$here/app/app.cpp" "$work/src/"
cp "$here/app/project.cmake" "$work/src/CMakeLists.txt"
cmake -S "$work/src" -B "$work/b" -DCMAKE_PREFIX_PATH="$work/moved" -DCMAKE_BUILD_TYPE=Release \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure"; }
cmake --build "$work/b" -j2 >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
want=""
for np in 1 2; do
  for app in app_shared app_static; do
    out=$("$mpiexec" -n $np --oversubscribe "$work/b/$app") || fail "$app at $np ranks: $out"
    echo "$app np $np: $out"
    [[ $out == "n 32 mmd "* ]] || fail "$app: unexpected output '$out'"
    [ -z "$want" ] || [ "$out" = "$want" ] || fail "$app at $np ranks: '$out' differs from '$want'"
    want=$out
  done
done
# the shared program uses the installed library, not the build tree's
# grep without -q: it reads all of ldd's output, so ldd never dies of SIGPIPE (pipefail would
# report that as a failure)
ldd "$work/b/app_shared" | grep "$work/moved/lib/libkdistill.so" >/dev/null ||
  fail "app_shared does not load the installed libkdistill.so: $(ldd "$work/b/app_shared" | grep kdistill)"
out=$("$mpiexec" -n 1 "$work/b/app_cxx") || fail "app_cxx: $out"
[ "$out" = "KD_OK invalid configuration" ] || fail "app_cxx printed '$out'"
# the C example (examples/c) builds from its own CMakeLists.txt and thins in-memory rows from
# typed settings: the same coreset at 1, 2 and 3 ranks, with an exact MMD
cmake -S "$here/../../examples/c" -B "$work/ex" -DCMAKE_PREFIX_PATH="$work/moved" \
  -DCMAKE_BUILD_TYPE=Release >"$work/ex.log" 2>&1 || { cat "$work/ex.log"; fail "configure examples/c"; }
cmake --build "$work/ex" >>"$work/ex.log" 2>&1 || { cat "$work/ex.log"; fail "build examples/c"; }
want=""
for np in 1 2 3; do
  out=$("$mpiexec" -n $np --oversubscribe "$work/ex/thin_array") || fail "thin_array at $np ranks: $out"
  echo "thin_array np $np: $out"
  [[ $out == "n 64 mmd "*" (exact) rows "* ]] || fail "thin_array: unexpected output '$out'"
  [ -z "$want" ] || [ "$out" = "$want" ] || fail "thin_array at $np ranks: '$out' differs from '$want'"
  want=$out
done
# ... and the command line's coreset of the same rows (written by the example) with the same
# settings: the same MMD and the same first rows, bit for bit
"$mpiexec" -n 1 "$work/ex/thin_array" "$work/rows.csv" >/dev/null 2>&1 || fail "thin_array rows.csv"
printf 'task: thin\ndata: {type: csv, path: %s}\nkernel: {name: gaussian, ls: 0.5}\nalgorithm: {name: kt_compress, n_out: 64}\nrun: {seed: 7}\n' \
  "$work/rows.csv" >"$work/rows.yaml"
"$mpiexec" -n 2 --oversubscribe "$work/moved/bin/kdistill" run "$work/rows.yaml" --quiet \
  --output "$work/rows.h5" >"$work/rows.log" 2>&1 || { cat "$work/rows.log"; fail "kdistill run on the example's rows"; }
cli=$(/usr/bin/python3 -c '
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    idx = f["coreset/indices"][:]
    m = f["metrics"].attrs
    how = "exact" if int(m["mmd_method"]) == 0 else "not exact"
    print("n %d mmd %.17g (%s) rows %s" % (len(idx), float(m["mmd"]), how,
                                         " ".join(str(int(i)) for i in idx[:4])))
' "$work/rows.h5") || fail "reading the command line's output"
echo "kdistill run on the example's rows: $cli"
[ "$cli" = "$want" ] || fail "the command line gives '$cli', the example '$want'"
# a version the install does not provide is refused at configure time
sed -i 's/find_package(kdistill 0.1 REQUIRED)/find_package(kdistill 0.2 REQUIRED)/' "$work/src/CMakeLists.txt"
if cmake -S "$work/src" -B "$work/b2" -DCMAKE_PREFIX_PATH="$work/moved" >"$work/v.log" 2>&1; then
  fail "find_package(kdistill 0.2) accepted version 0.1"
fi
grep -q "kdistillConfig.cmake" "$work/v.log" || { cat "$work/v.log"; fail "no version message"; }
echo "cmake package OK"
