#!/bin/bash
# quickstart.sh - from a fresh Debian 12 machine to a finished kdistill run, in one command:
# installs missing packages (as root; otherwise prints the apt-get line and exits 2), configures
# and builds in ./build, installs the command line, the shared library, the headers, kdplot, the
# jobs/ scripts and the Python package into a local prefix (KD_PREFIX, default ~/.local, whose
# lib/python3.11/site-packages Debian's python3 reads by itself, so `python3 -c "import kdistill"`
# works right after), and runs the main job configs/quickstart.yaml on 2 MPI ranks, which prints
# a summary (task, algorithm, points in -> out, MMD, output path). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/deps.sh
kd_install_deps
prefix=${KD_PREFIX:-$HOME/.local}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
cmake --build build -j "${KD_JOBS:-2}" --target kdistill_cli kdistill_shared kdistill \
  kdistill_man
cmake --install build >/dev/null
echo "kdistill: installed into $prefix (bin/kdistill, lib/libkdistill.so, the Python package in" \
  "$(cmake -L -N build | sed -n 's/^KD_PYTHON_INSTALL_DIR:STRING=//p'))" >&2
# the commands land in $prefix/bin, which a fresh account's PATH may lack (Debian adds ~/.local/bin
# only at the next login, and only when the folder existed then)
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "kdistill: $prefix/bin is not on your PATH; to run kdistill and kdplot by name, add:" >&2
     echo "  export PATH=\"$prefix/bin:\$PATH\"   (e.g. at the end of ~/.profile)" >&2 ;;
esac
mpirun -np 2 --oversubscribe build/kdistill run configs/quickstart.yaml "$@"
