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
head = re.compile(r"^[A-Za-z_][^;#]*\)\s*\{\s*$")
rows = []
for root, _, files in os.walk("src"):
    for name in sorted(files):
        if not name.endswith(".c"):
            continue
        path = os.path.join(root, name)
        lines = open(path, encoding="utf-8").read().split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            if head.match(line) and not re.match(r"^(if|for|while|switch|do|else)\b", line):
                start = i
                # a signature may span lines: walk back to the line that starts it
                while start > 0 and lines[start - 1].strip() and not lines[start - 1].rstrip().endswith(
                        (";", "}", "*/")) and not lines[start - 1].startswith("#"):
                    start -= 1
                j = i + 1
                while j < len(lines) and lines[j] != "}":
                    j += 1
                fn = re.findall(r"(\w+)\s*\(", " ".join(lines[start:i + 1]))
                rows.append((j - start + 1, path, fn[0] if fn else "?", start + 1))
                i = j
            i += 1
rows.sort(reverse=True)
print("longest functions in src/:")
for n, path, fn, line in rows[:10]:
    print(f"  {n:4d}  {fn}  ({path}:{line})")
bad = [r for r in rows if r[0] > limit]
for n, path, fn, line in bad:
    print(f"{path}:{line}: {fn} is {n} lines (limit {limit}): split it into named steps")
sys.exit(1 if bad else 0)
PY
