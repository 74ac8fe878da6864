#!/usr/bin/env bash
# quadrature.sh - stage timings of nystrom_recombination (Hayakawa, Oberhauser & Lyons, Alg. 1 with
# Nystrom test functions and + opt), N = n^2, l = 10n, d = 3:
#   sobolev : periodic Sobolev r = 3 on [0,1)^3 (closed-form target z == 1)
#   gaussian: Gaussian kernel ls = 1, target N(0, I_3) (closed form)
# Usage: bench/quadrature.sh [build_dir] [reps] [n list] [rank list] [kernel list]
# Prints one line per run and a markdown table of medians (seconds) per (kernel, n, ranks).
set -euo pipefail
BUILD=${1:-build}
REPS=${2:-3}
NS=${3:-"128 256 512"}
RANKS=${4:-"1 2"}
KERNELS=${5:-"sobolev gaussian"}
BIN="$BUILD/tests/quadrature/bench_quadrature"
[ -x "$BIN" ] || { echo "build $BIN first (cmake --build $BUILD --target bench_quadrature)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# one BLAS thread per rank: ranks, not BLAS threads, share the cores
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
TMP=$(mktemp)
trap 'rm -f "$TMP"' EXIT
echo "# $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -n)  $(nproc) cores  load: $(cut -d' ' -f1-3 /proc/loadavg)"
for k in $KERNELS; do
  for n in $NS; do
    for r in $RANKS; do
      mpirun -n "$r" --oversubscribe "$BIN" "$k" "$n" "$REPS" | grep -v passed | tee -a "$TMP"
    done
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| kernel | n | ranks | total (wall) | cpu (busiest rank) | sampling | eigensolve | test functions | recombination | opt | wce N.+emp | wce +opt |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
awk '
function med(key, f,   n, i, j, t, a) {
  n = split(vals[key, f], a, " ");
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
  return a[int((n + 1) / 2)];
}
{
  split($2, nn, "="); split($3, rr, "=");
  key = $1 " " nn[2] " " rr[2];
  if (!(key in seen)) { seen[key] = 1; order[++cnt] = key }
  vals[key, "total"] = vals[key, "total"] " " $6;
  vals[key, "cpu"] = vals[key, "cpu"] " " $9;
  for (i = 1; i <= NF; i++) {
    if ($i == "sampling") vals[key, "s"] = vals[key, "s"] " " $(i + 1);
    if ($i == "eigensolve") { vals[key, "e"] = vals[key, "e"] " " $(i + 1); path[key] = $(i + 2) }
    if ($i == "test_functions") vals[key, "t"] = vals[key, "t"] " " $(i + 1);
    if ($i == "recombination") vals[key, "r"] = vals[key, "r"] " " $(i + 1);
    if ($i == "opt") vals[key, "o"] = vals[key, "o"] " " $(i + 1);
    if ($i == "N.+emp") vals[key, "w1"] = vals[key, "w1"] " " $(i + 1);
    if ($i == "+opt") vals[key, "w2"] = vals[key, "w2"] " " $(i + 1);
  }
}
END {
  for (c = 1; c <= cnt; c++) {
    key = order[c]; split(key, p, " ");
    printf "| %s | %s | %s | %s | %s | %s | %s %s | %s | %s | %s | %s | %s |\n", p[1], p[2], p[3],
      med(key, "total"), med(key, "cpu"), med(key, "s"), med(key, "e"), path[key], med(key, "t"), med(key, "r"),
      med(key, "o"), med(key, "w1"), med(key, "w2");
  }
}' "$TMP"
