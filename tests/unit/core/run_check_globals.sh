#!/bin/bash
# run_check_globals.sh - .ci/check_globals.sh finds exactly the bad_* variables of
# check_globals_cases.txt (file-scope and function-scope statics, _Thread_local, pointers to
# modifiable data) and none of the constant tables, prototypes, typedefs or literals around them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$here/check_globals_cases.txt" "$tmp/cases.c"
set +e
"$root/.ci/check_globals.sh" "$tmp" > "$tmp/out.txt"
rc=$?
set -e
got=$(sed -n "s/.*mutable global '\([^']*\)'.*/\1/p" "$tmp/out.txt" | sort | tr '\n' ' ')
want=$(grep -o '\bbad_[a-z0-9][a-z0-9_]*' "$tmp/cases.c" | sort -u | tr '\n' ' ')
if [ "$rc" -ne 1 ] || [ "$got" != "$want" ]; then
  echo "check_globals: exit $rc"
  echo "  reported: $got"
  echo "  expected: $want"
  cat "$tmp/out.txt"
  exit 1
fi
echo "check_globals reports exactly: $got"
