#!/bin/bash
# stein.sh BUILD [CHAIN.h5] - the figures of bench/results/stein.md:
#   1. Stein-kernel vs base-kernel evaluations per second (bench_kernel, tile and matvec, n x n with
#      n = 4096, 2048 at d = 100), d_x = 2, 10, 100, bases imq and gaussian, median of 3 runs;
#   2. the 2^16 x 2 ULA chain of tools/stein_chain.py compressed to 256 points by uniform,
#      kt_compress, stein_thin, rpcholesky, skt, sr, sc, lskt, lsr and lsc with the Stein kernel
#      (IMQ, ls 1) at 1 and 2 ranks: seconds (median of 3) and KSD.
# KD_BENCH_CHAIN_ONLY=1 skips part 1.
# Prints `uptime` before and after: take figures at load < 1.5.
set -u
B=${1:-build}
chain=${2:-}
bk=$B/tests/unit/kernel/bench_kernel
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
uptime
med() { sort -g | sed -n 2p; }
field() { awk -v f="$1" '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }'; }
echo "| base | d_x | mode | base evals/s (CPU) | Stein evals/s (CPU) | ratio |"
echo "|---|---|---|---|---|---|"
[ "${KD_BENCH_CHAIN_ONLY:-0}" = 1 ] || for base in imq gaussian; do
  for dx in 2 10 100; do
    n=4096
    [ "$dx" = 100 ] && n=2048
    for mode in tile matvec; do
      b=$(for r in 1 2 3; do "$bk" $mode $dx $n 3 $base | field cpu_evals/s; done | med)
      s=$(for r in 1 2 3; do KD_BENCH_BASE=$base "$bk" $mode $((2 * dx)) $n 3 stein | field cpu_evals/s; done | med)
      echo "| $base | $dx | $mode | $b | $s | $(awk -v a="$b" -v b="$s" 'BEGIN { printf "%.2f", a / b }') |"
    done
  done
done
if [ -n "$chain" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  cat >"$dir/c.yaml" <<YAML
task: thin
data: {type: hdf5, path: $chain, dataset: x, score: {type: hdf5, path: $chain, dataset: score}}
kernel: {name: stein, base: imq, ls: 1.0}
target: {type: stein}
algorithm: {name: kt_compress, n_out: 256}
run: {seed: 3}
YAML
  echo "| algorithm | ranks | seconds (median of 3) | KSD | kernel evaluations |"
  echo "|---|---|---|---|---|"
  for a in uniform kt_compress stein_thin rpcholesky skt sr sc lskt lsr lsc; do
    for np in 1 2; do
      for r in 1 2 3; do
        mpirun --oversubscribe -np $np "$B/kdistill" run "$dir/c.yaml" --set algorithm.name=$a \
          --output "$dir/o.h5" >"$dir/log$r" 2>&1
      done
      t=$(for r in 1 2 3; do awk '/^seconds:/ { print $2 }' "$dir/log$r"; done | med)
      k=$(awk '/^mmd:/ { print $2 }' "$dir/log1")
      e=$(awk '/^seconds:/ { print substr($3, 2) }' "$dir/log1")
      echo "| $a | $np | $t | $k | $e |"
    done
  done
fi
uptime
