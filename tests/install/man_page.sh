#!/bin/bash
# man_page.sh BUILD SOURCE - the generated kdistill(1) names every subcommand of `kdistill --help`,
# every algorithm of `kdistill algorithms`, every key path of `validate --print-defaults` over the
# shipped configs, and the version; it renders without warnings; `cmake --install` puts it where
# `man kdistill` finds it from PATH.
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
exe=$build/kdistill
page=$build/man/kdistill.1
fails=0
bad() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
[ -f "$page" ] || { echo "FAIL: no $page"; exit 1; }
# the page's text with roff escapes undone (\- is -, \e is \)
text=$(sed -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/\\&//g' "$page")
has() { grep -qF -- "$1" <<<"$text"; }
n_cmd=0
for cmd in $("$exe" --help | awk '/^  kdistill [a-z]/ {print $2}' | sort -u); do
  has "kdistill $cmd" || bad "subcommand '$cmd' is not in the page"
  n_cmd=$((n_cmd + 1))
done
[ "$n_cmd" -ge 7 ] || bad "only $n_cmd subcommands found in --help"
n_alg=0
for a in $("$exe" algorithms | awk '/^  [a-z]/ {print $1}'); do
  grep -q "^\.B $a\$" "$page" || bad "algorithm '$a' is not in the page"
  n_alg=$((n_alg + 1))
done
[ "$n_alg" -ge 30 ] || bad "only $n_alg algorithms found"
has "kdistill $("$exe" --version | head -n1 | awk '{print $2}')" || bad "the version is not in the page"
# key paths from the indentation of --print-defaults (list items add [] to their list's path)
n_key=0
cd "$src" || exit 1
for c in configs/*.yaml; do
  keys=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$exe" validate "$c" \
    --print-defaults 2>/dev/null | awk '
    { line = $0; ind = match(line, /[^ ]/) - 1; body = substr(line, ind + 1); item = 0 }
    body ~ /^- / { body = substr(body, 3); ind += 2; item = 1 }
    body !~ /^[A-Za-z_][A-Za-z0-9_]*:/ { next }
    {
      k = body; sub(/:.*/, "", k); v = body; sub(/^[^:]*:[ ]*/, "", v)
      while (depth > 0 && ind_at[depth] >= ind) depth--
      p = depth > 0 ? path_at[depth] (item ? "[]" : "") "." k : k
      if (v == "") { depth++; ind_at[depth] = ind; path_at[depth] = p } else print p
    }')
  [ -n "$keys" ] || bad "$c: validate --print-defaults printed no keys"
  for k in $keys; do
    [ "$k" = task ] && continue
    grep -qxF ".B $k" <<<"$text" || bad "$c: key '$k' is not in the page"
    n_key=$((n_key + 1))
  done
done
[ "$n_key" -ge 200 ] || bad "only $n_key keys checked"
echo "checked $n_cmd subcommands, $n_alg algorithms, $n_key keys"
if command -v man >/dev/null; then
  warn=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  [ -z "$warn" ] || bad "man warns: $warn"
  prefix=$(mktemp -d)
  cmake --install "$build" --prefix "$prefix" >/dev/null
  [ -f "$prefix/share/man/man1/kdistill.1" ] || bad "not installed to share/man/man1"
  found=$(env -u MANPATH PATH="$prefix/bin:/usr/bin:/bin" man -w kdistill 2>&1)
  [ "$found" = "$prefix/share/man/man1/kdistill.1" ] || bad "man -w kdistill from PATH: '$found'"
  rm -rf "$prefix"
else
  echo "(man is not installed: rendering and lookup not checked)"
fi
[ "$fails" -eq 0 ] || exit 1
echo "man page OK"
