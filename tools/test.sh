#!/bin/bash
# test.sh - build and run the whole test suite (unit, conformance, io, errors, cli, regression)
# with warnings as errors. Installs missing packages like quickstart.sh. Extra arguments are passed
# to cmake (e.g. -DKD_ENABLE_ASAN=ON -DKD_ENABLE_UBSAN=ON); KD_BUILD_DIR picks the build
# directory (default build-test), KD_JOBS the build parallelism (default 2), KD_CTEST_JOBS the
# test parallelism (default twice KD_JOBS: most tests are end-to-end scripts that wait on mpirun
# and process start-up for much of their time, so two of them overlap well on two cores; measured
# on the 2-core CI machine, the first stage's suite took 949 s at -j4 against 1375 s at -j2).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/deps.sh
# As root, also what the install tests use (tests/install): Lmod for the modulefiles (Debian's
# lmod conflicts with environment-modules: a machine that has the latter keeps it, and the test
# uses it), man-db for `man kdistill`, mypy for the Python package's type hints, and
# jupyter-nbconvert with python3-ipykernel to run examples/python/tour.ipynb. Without
# them those checks report SKIP or are left out.
# The Python tests build a wheel and install it into a venv (python3-build, -venv, -pip,
# -setuptools, -wheel); the `sim` test builds the library for SimGrid's SMPI (libsimgrid-dev:
# smpicc, smpirun; tests/sim).
test_pkgs=(python3-build python3-venv python3-pip python3-setuptools python3-wheel libsimgrid-dev)
if [ "$(id -u)" -eq 0 ]; then
  test_pkgs+=(man-db mypy jupyter-nbconvert python3-ipykernel)
  dpkg-query -W -f='${Status}' environment-modules 2>/dev/null | grep -q "install ok installed" ||
    test_pkgs+=(lmod)
fi
kd_install_deps "${test_pkgs[@]}"
build=${KD_BUILD_DIR:-build-test}
cmake -S . -B "$build" -DKD_WERROR=ON "$@"
cmake --build "$build" -j "${KD_JOBS:-2}"
cd "$build"
ctest --output-on-failure -j "${KD_CTEST_JOBS:-$((2 * ${KD_JOBS:-2}))}"
