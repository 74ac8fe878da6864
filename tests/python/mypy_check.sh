#!/bin/bash
# mypy_check.sh MYPY SOURCE CACHE PATHS... - the package's type hints and the examples against
# them (SOURCE/pyproject.toml [tool.mypy]), checked twice with Debian 12's mypy (1.0.1): as in a
# checkout, and with a copy of the package installed in the user site (~/.local/lib/python3.X/
# site-packages, where tools/quickstart.sh puts it, with the _libpath.py cmake --install writes),
# which mypy also reads. HOME points at a scratch folder for the second run.
set -euo pipefail
mypy=$1
src=$2
cache=$3
shift 3
"$mypy" --config-file "$src/pyproject.toml" --cache-dir "$cache/plain" "$@"
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
# the user site of the interpreter mypy runs on (its #! line)
py=$(head -n 1 "$(command -v "$mypy")" | sed 's/^#! *//; s/ .*//')
site=$(HOME=$home "$py" -c 'import site; print(site.getusersitepackages())')
mkdir -p "$site"
cp -r "$src/python/kdistill" "$site/"
echo 'LIBRARY = "../../../libkdistill.so"' >"$site/kdistill/_libpath.py"
HOME=$home "$mypy" --config-file "$src/pyproject.toml" --cache-dir "$cache/user_site" "$@"
