#!/bin/bash
# .ci/check_abi.sh - the exported interface of the shared library (docs/ARCHITECTURE.md, "Public API
# in two tiers"):
#   (a) libkdistill.so exports exactly the functions listed in .ci/abi_symbols.txt (the user tier:
#       the functions that the headers directly in include/kdistill/ mark KD_API). A change of the
#       exported set is a change of the ABI: update the list in the same commit, deliberately;
#   (b) every C function the Python package binds (python/kdistill/_lib.py) is exported;
#   (c) the user-tier headers include no author-tier header (include/kdistill/author/; the
#       umbrella include/kdistill/author.h is the author tier's own).
# usage: bash .ci/check_abi.sh [BUILD_DIR]   (default build-test). Exit 1 on any offence.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-test}
so=$build/libkdistill.so
[ -f "$so" ] || { echo ".ci/check_abi.sh: $so not built" >&2; exit 1; }
fail=0
got=$(mktemp)
trap 'rm -f "$got"' EXIT
nm -D --defined-only "$so" | awk '$2 ~ /^[TtWiV]$/ {print $3}' | sort -u >"$got"

echo "--- (a) exported symbols of $so against .ci/abi_symbols.txt"
if ! diff -u .ci/abi_symbols.txt "$got"; then
  echo "    the exported set changed (- listed, + exported): mark the function KD_API in a user-tier"
  echo "    header (or remove the mark) and update .ci/abi_symbols.txt in the same commit"
  fail=1
fi

echo "--- (b) functions the Python package binds"
for f in $(grep -oE '^ +"kd_[a-z_0-9]+": \(' python/kdistill/_lib.py | grep -oE 'kd_[a-z_0-9]+'); do
  grep -qx "$f" "$got" || { echo "    python/kdistill/_lib.py binds $f, which is not exported"; fail=1; }
done

echo "--- (c) user-tier headers include only user-tier headers"
if grep -nE '#[[:space:]]*include[[:space:]]*"(author/|\.\./)' $(ls include/kdistill/*.h | grep -v /author.h); then
  echo "    a user-tier header includes the author tier"
  fail=1
fi
[ "$fail" = 0 ] && echo "abi check passed ($(wc -l <"$got") exported functions)"
exit "$fail"
