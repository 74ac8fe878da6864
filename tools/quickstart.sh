#!/bin/bash
# quickstart.sh - from a fresh Debian 12 machine to a finished kdistill run, in one command:
# installs missing packages (as root; otherwise prints the apt-get line and exits 2), configures
# and builds in ./build, and runs the main job configs/quickstart.yaml on 2 MPI ranks, which
# prints a summary (task, algorithm, points in -> out, MMD, output path). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/deps.sh
kd_install_deps
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "${KD_JOBS:-2}" --target kdistill_cli
mpirun -np 2 --oversubscribe build/kdistill run configs/quickstart.yaml "$@"
