#!/bin/bash
# .ci/check_globals.sh - no mutable process globals in src/ (issue 11): every run's state lives in
# a kd_ctx (include/kdistill/kd_ctx.h). Lists each non-const variable with static storage in
# src/**/*.c and src/**/*.h - at file scope (static or not, _Thread_local included) and `static`
# ones inside functions - and exits 1 if any is not in the allowlist below.
#
# The scan is a small C reader (awk): comments, string and character literals and preprocessor
# lines (with their continuations) are dropped, initialisers and struct bodies are collapsed, and
# each remaining declaration is split into its declarators. A declarator is constant when the
# object itself is const: `const T x`, `const T x[]`, `T *const p`, `const char *const tbl[]`
# (but `const char *tbl[]` is an array of modifiable pointers and is reported). typedefs, extern
# declarations, function prototypes and definitions, and bare struct / enum definitions are not
# variables.
#
# usage: .ci/check_globals.sh [DIR...]   (default: src)
set -euo pipefail
cd "$(dirname "$0")/.."

# file:variable pairs allowed to stay (each with its reason):
#   - the one per-thread binding of the current context (kd_ctx_bind);
#   - the flag the SIGTERM/SIGUSR1 handler sets: a handler cannot reach a context;
#   - the context the SIGINT handler of kd_ctx_catch_sigint interrupts, for the same reason.
allow=(
  "src/core/ctx.c:kd_ctx_bound_"
  "src/core/interrupt.c:kd_interrupt_signal_"
  "src/core/interrupt.c:kd_sigint_ctx_"
)

dirs=("$@")
[ ${#dirs[@]} -eq 0 ] && dirs=(src)
mapfile -d '' files < <(find "${dirs[@]}" -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)
[ ${#files[@]} -eq 0 ] && { echo "check_globals: no C files under ${dirs[*]}"; exit 1; }

scan() {
  awk '
  # ---- pass 1 (per line): drop comments, literals and preprocessor lines; keep line breaks ----
  FNR == 1 { flush(); file = FILENAME; code = ""; inbc = 0; cont = 0 }
  {
    line = $0
    if (cont) { cont = (line ~ /\\$/); code = code "\n"; next }
    if (!inbc && line ~ /^[ \t]*#/) { cont = (line ~ /\\$/); code = code "\n"; next }
    out = ""; n = length(line); i = 1
    while (i <= n) {
      c = substr(line, i, 1); c2 = substr(line, i, 2)
      if (inbc) { if (c2 == "*/") { inbc = 0; i += 2 } else i++; continue }
      if (c2 == "/*") { inbc = 1; out = out " "; i += 2; continue }
      if (c2 == "//") break
      if (c == "\"" || c == "\047") {
        q = c; i++
        while (i <= n && substr(line, i, 1) != q) i += (substr(line, i, 1) == "\\") ? 2 : 1
        i++; out = out "0"; continue
      }
      out = out c; i++
    }
    code = code out "\n"
  }
  END { flush() }

  function flush() { if (file != "") parse(code, file); file = "" }

  # ---- pass 2 (per file): walk braces and statements ----
  function parse(s, f,    n, i, c, ln, bd, pd, st, stline, fs, fsline, skip, sd) {
    n = length(s); ln = 1; bd = 0; pd = 0; st = ""; fs = ""; skip = 0
    for (i = 1; i <= n; i++) {
      c = substr(s, i, 1)
      if (c == "\n") { ln++; c = " " }
      if (skip) {                       # inside an initialiser or struct body: collapse it
        if (c == "{") sd++
        else if (c == "}" && --sd == 0) skip = 0
        continue
      }
      if (bd == 0) {                    # file scope
        if (c == "(") pd++
        else if (c == ")") pd--
        if (c == "{" && pd == 0) {
          if (st ~ /\)[ \t]*$/ && st !~ /=/) { bd = 1; st = ""; fs = ""; continue }   # function body
          st = st "{}"; skip = 1; sd = 1; continue                        # aggregate
        }
        if (c == ";" && pd == 0) { decl(st, f, stline, 0); st = ""; continue }
        if (st ~ /^[ \t]*$/ && c !~ /[ \t]/) stline = ln
        st = st c
        continue
      }
      # inside a function: only `static` / `_Thread_local` declarations matter
      if (c == "{") {
        if (fs ~ /^[ \t]*(static|_Thread_local|__thread)[ \t]/ && fs ~ /=/) { fs = fs "{}"; skip = 1; sd = 1; continue }
        bd++; fs = ""; continue
      }
      if (c == "}") { bd--; fs = ""; continue }
      if (c == ";") {
        if (fs ~ /^[ \t]*(static|_Thread_local|__thread)[ \t]/) decl(fs, f, fsline, 1)
        fs = ""; continue
      }
      if (fs ~ /^[ \t]*$/ && c !~ /[ \t]/) fsline = ln
      fs = fs c
    }
  }

  function strip_attr(t,    p, i, d, c) {   # remove __attribute__((...)) groups
    while ((p = index(t, "__attribute__")) > 0) {
      i = p + 13; d = 0
      while (i <= length(t)) {
        c = substr(t, i, 1)
        if (c == "(") d++
        else if (c == ")" && --d == 0) break
        i++
      }
      t = substr(t, 1, p - 1) " " substr(t, i + 1)
    }
    return t
  }

  # one declaration statement: report each non-const declarator
  function decl(t, f, ln, inblock,    parts, np, k, d, pd, c, cur, spec, name, pre, isconst, p, q, p0, rest) {
    t = strip_attr(t)
    gsub(/[ \t\n]+/, " ", t); sub(/^ /, "", t); sub(/ $/, "", t)
    if (t == "") return
    if (t ~ /^(typedef|extern|_Static_assert|static_assert)([ (]|$)/) return
    if (t ~ /^(static |const |volatile )*(struct|union|enum)( [A-Za-z_][A-Za-z_0-9]*)? ?\{\}$/) return
    if (t ~ /^(struct|union|enum) [A-Za-z_][A-Za-z_0-9]*$/) return   # forward declaration
    # split at top-level commas
    np = 0; cur = ""; pd = 0
    for (k = 1; k <= length(t); k++) {
      c = substr(t, k, 1)
      if (c == "(" || c == "[") pd++
      else if (c == ")" || c == "]") pd--
      if (c == "," && pd == 0) { parts[++np] = cur; cur = ""; continue }
      cur = cur c
    }
    parts[++np] = cur
    spec = ""
    for (k = 1; k <= np; k++) {
      d = parts[k]
      sub(/=.*$/, "", d)                        # drop the initialiser
      gsub(/\[[^]]*\]/, "", d)                  # and array bounds
      p0 = index(d, "(")
      if (p0 > 0) {
        rest = substr(d, p0 + 1); sub(/^ /, "", rest)
        if (substr(rest, 1, 1) != "*") continue  # function prototype (or a macro call)
        p = d; sub(/\).*$/, "", p)               # pointer to function: (*const name)(...)
        name = p; sub(/^.*[^A-Za-z_0-9]/, "", name)
        pre = substr(p, 1, length(p) - length(name))
      } else {
        sub(/ $/, "", d)
        name = d; sub(/^.*[^A-Za-z_0-9]/, "", name)
        pre = substr(d, 1, length(d) - length(name))
      }
      if (name == "" || name ~ /^[0-9]/) continue
      if (k == 1) spec = pre
      if (pre ~ /\*/) {
        q = pre; sub(/^.*\*/, "", q)
        isconst = (q ~ /(^|[^A-Za-z_0-9])const([^A-Za-z_0-9]|$)/)
      } else {
        q = (k == 1) ? pre : spec
        sub(/\*.*$/, "", q)
        isconst = (q ~ /(^|[^A-Za-z_0-9])const([^A-Za-z_0-9]|$)/)
      }
      if (!isconst) printf "%s:%d:%s:%s\n", f, ln, name, inblock ? "static in a function" : "file scope"
    }
  }
  ' "$@"
}

status=0
while IFS=: read -r f ln name where; do
  [ -z "$f" ] && continue
  ok=0
  for a in "${allow[@]}"; do [ "$a" = "$f:$name" ] && ok=1; done
  if [ $ok -eq 0 ]; then
    echo "$f:$ln: mutable global '$name' ($where): keep it in a kd_ctx or make it const"
    status=1
  fi
done < <(scan "${files[@]}")
if [ $status -ne 0 ]; then
  echo "check_globals: mutable process globals found (allowlist in .ci/check_globals.sh)"
else
  echo "check_globals: no mutable globals in ${dirs[*]} besides the allowlist (${#allow[@]})"
fi
exit $status
