#!/bin/bash
# run_libfuzzer.sh BUILD_DIR SECONDS [HARNESS...] - coverage-guided fuzzing of the readers (issue 34):
# each libFuzzer harness of tests/fuzz/lf (built with -DKD_ENABLE_FUZZ=ON under clang, ASan and
# UBSan) runs for SECONDS on its committed seed corpus and dictionary (the config harness also on
# configs/). Any crash, sanitizer report, leak of an input's time budget (> 2 s per input) or
# memory (> 2 GB) fails the run; the input that did it is kept in BUILD_DIR/lf-crashes/ and
# printed. New inputs go to a scratch corpus, never into the committed one. Prints each harness's
# executions, coverage and corpus size (libFuzzer's final stats).
set -u
build=$1
secs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=(npy npz csv config)
crashes="$build/lf-crashes"
mkdir -p "$crashes"
# Open MPI's own allocations are reported as leaks (as in the ASan stage); MPI needs no daemon
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OMPI_MCA_ess_singleton_isolated=1
fail=0
for h in "${harnesses[@]}"; do
  bin="$build/tests/fuzz/lf_$h"
  [ -x "$bin" ] || { echo "run_libfuzzer: $bin not built (cmake -DKD_ENABLE_FUZZ=ON, CC=clang-14)"; exit 2; }
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/kd_lf_${h}_XXXXXX")
  extra=()
  [ "$h" = config ] && extra=("$root/configs")
  "$bin" -max_total_time="$secs" -timeout=2 -rss_limit_mb=2048 -max_len=65536 \
    -dict="$here/lf/$h.dict" -artifact_prefix="$crashes/$h-" -print_final_stats=1 \
    "$scratch" "$here/lf/corpus/$h" "${extra[@]}" >"$build/lf-$h.log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/lf-$h.log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$build/lf-$h.log" | tail -1)
  ft=$(grep -o 'ft: [0-9]*' "$build/lf-$h.log" | tail -1)
  echo "lf_$h: ${secs} s, ${execs:-?} executions, ${cov:-cov: ?}, ${ft:-ft: ?}, corpus $(ls "$scratch" | wc -l) new + $(ls "$here/lf/corpus/$h" | wc -l) seeds, exit $rc"
  if [ $rc -ne 0 ]; then
    fail=1
    echo "---- lf_$h failed; the end of its log ($build/lf-$h.log):"
    tail -n 40 "$build/lf-$h.log"
    ls -l "$crashes" | grep "$h-" || true
  fi
  if [ $rc -eq 0 ]; then rm -rf "$scratch"; else echo "(its corpus is kept in $scratch)"; fi
done
if [ $fail -ne 0 ]; then
  echo "libFuzzer: FAILED"
  exit 1
fi
echo "libFuzzer: ${#harnesses[@]} harnesses, ${secs} s each, no crash, timeout or sanitizer report"
