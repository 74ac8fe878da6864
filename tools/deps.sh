#!/bin/bash
# deps.sh - sourced by quickstart.sh and test.sh: make sure the Debian 12 packages kdistill needs
# are installed (the Python package runs on Debian's python3 with python3-numpy and
# python3-mpi4py). As root, missing packages are installed with apt-get; otherwise the exact
# apt-get line is printed and the script exits with status 2. Idempotent: installed packages are
# left alone (nothing is downloaded when everything is present).
KD_PACKAGES=(gcc libc6-dev make cmake pkg-config openmpi-bin libopenmpi-dev openssh-client
             libhdf5-openmpi-dev hdf5-tools libopenblas-dev libscalapack-openmpi-dev libyaml-dev zlib1g-dev
             python3 python3-numpy python3-mpi4py python3-h5py)

kd_install_deps() {
  local missing=() p
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "kdistill: dpkg-query not found; this script expects Debian 12. Install the equivalents of:" >&2
    echo "  ${KD_PACKAGES[*]}" >&2
    return 0
  fi
  for p in "${KD_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "kdistill: missing Debian packages. Install them as root, then run this command again:" >&2
    echo "  apt-get install -y --no-install-recommends ${missing[*]}"
    exit 2
  fi
  echo "kdistill: installing ${missing[*]}" >&2
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Running as root: Open MPI refuses unless told it is intended.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
