#!/bin/bash
# check_functions.sh - no function in src/ longer than KD_MAX_FUNC_LINES (default 120) lines,
# counted from the line that opens its definition to its closing brace. Prints the ten longest
# functions (for the record) and every offender; exits 1 if there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
max=${KD_MAX_FUNC_LINES:-120}
python3 - "$max" <<'PY'
import os, re, sys
limit = int(sys.argv[1])
sig = re.compile(r"^[A-Za-z_][\w \t\*]*\b(\w+)\s*\(")
rows = []
for root, _, files in os.walk("src"):
    for name in sorted(files):
        if not name.endswith(".c"):
            continue
        path = os.path.join(root, name)
        lines = open(path, encoding="utf-8").read().split("\n")
        i = 0
        while i < len(lines):
            m = sig.match(lines[i])
            if not m or re.match(r"^(if|for|while|switch|do|else|return|typedef)\b", lines[i]):
                i += 1
                continue
            # a definition: the signature (possibly over several lines) ends with "{"
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(("{", ";")) and j - i < 12:
                j += 1
            if j >= len(lines) or not lines[j].rstrip().endswith("{"):
                i += 1
                continue
            k = j + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            rows.append((k - i + 1, path, m.group(1), i + 1))
            i = k + 1
rows.sort(reverse=True)
print("longest functions in src/:")
for n, path, fn, line in rows[:10]:
    print(f"  {n:4d}  {fn}  ({path}:{line})")
bad = [r for r in rows if r[0] > limit]
for n, path, fn, line in bad:
    print(f"{path}:{line}: {fn} is {n} lines (limit {limit}): split it into named steps")
sys.exit(1 if bad else 0)
PY
