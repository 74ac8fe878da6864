#!/bin/bash
# version.sh BUILD PYTHON MPIEXEC - `kdistill --version` says what a site ticket asks first: the
# version, the compiler, and the MPI, HDF5, BLAS, ScaLAPACK and libyaml versions, each checked
# against what the system itself reports; an output file stores the same as root attributes.
set -uo pipefail
build=$(cd "$1" && pwd)
py=$2
mpiexec=$3
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
v=$("$build/kdistill" --version) || bad "--version failed"
echo "$v"
field() { sed -n "s/^$1: //p" <<<"$v"; }
first=$(head -n1 <<<"$v")
[[ $first =~ ^kdistill\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || bad "first line '$first'"
ver=${first#kdistill }
[[ $(field version) == "$ver"* ]] || bad "version: '$(field version)' does not start with $ver"
[[ $(field compiler) =~ ^(GNU|Clang)\ [0-9]+\.[0-9] ]] || bad "compiler: '$(field compiler)'"
ompi=$("$mpiexec" --version 2>/dev/null | sed -n 's/.*(Open MPI) \([0-9.]*\).*/\1/p' | head -n1)
[ -n "$ompi" ] && { [[ $(field mpi) == "Open MPI v$ompi"* ]] || bad "mpi: '$(field mpi)', mpirun says $ompi"; }
h5=$(pkg-config --modversion hdf5-openmpi 2>/dev/null)
[ -n "$h5" ] && { [ "$(field hdf5)" = "$h5 (parallel)" ] || bad "hdf5: '$(field hdf5)', pkg-config says $h5"; }
sl=$(pkg-config --modversion scalapack-openmpi 2>/dev/null)
[ -n "$sl" ] && { [ "$(field scalapack)" = "scalapack-openmpi $sl" ] || bad "scalapack: '$(field scalapack)'"; }
yv=$(pkg-config --modversion yaml-0.1 2>/dev/null)
[ -n "$yv" ] && { [ "$(field yaml)" = "libyaml $yv" ] || bad "yaml: '$(field yaml)', pkg-config says $yv"; }
ob=$(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null | sed 's/[-+].*//')
[ -n "$ob" ] && { [[ $(field blas) == "OpenBLAS $ob"* ]] || bad "blas: '$(field blas)', dpkg says $ob"; }
# the same as root attributes of an output
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
printf 'task: thin\ndata: {type: gaussian, n: 256, d: 2}\nalgorithm: {name: uniform, n_out: 8}\noutput: {path: o.h5}\n' >t.yaml
"$mpiexec" -n 2 --oversubscribe "$build/kdistill" run t.yaml --quiet >/dev/null || bad "run failed"
attrs=$("$py" -c '
import h5py
f = h5py.File("o.h5", "r")
for k in ("version", "compiler", "mpi", "hdf5", "blas", "scalapack", "yaml"):
    a = f.attrs["build_" + k]
    print("%s: %s" % (k, a.decode() if isinstance(a, bytes) else a))
') || bad "cannot read the build attributes"
[ "$attrs" = "$(tail -n +2 <<<"$v")" ] || bad "root attributes differ from --version:
$attrs"
[ "$fails" -eq 0 ] || exit 1
echo "version OK"
