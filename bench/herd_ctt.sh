#!/usr/bin/env bash
# bench/herd_ctt.sh - issue 61's herding and CTT goal at d = 64: BPCG herding of 2^16 image
# patches (8 x 8 grey, bench/dimension_data.py's patch8, target: the candidates' empirical
# measure) and ctt on 2 x 2^14 of them, with this build and an older one side by side in one run,
# alternating which goes first; algorithm seconds (/metrics `seconds`), median of R runs, and
# whether the two outputs hold the same coreset, weights and MMD trace (herding) or statistic and
# p-value (ctt).
# Usage: bench/herd_ctt.sh NEW_BUILD OLD_BUILD [GP_SRC]   (directories holding `kdistill`)
# Environment: HC_RUNS (default 3), HC_ITERS (BPCG iterations, default 300), HC_WORK (/tmp/kd_hc).
# goodpoints is not run; bench/dimension_data.py, whose data functions are used, imports it.
set -euo pipefail
new=$(realpath "$1")/kdistill old=$(realpath "$2")/kdistill
. "$(dirname "$0")/gp_env.sh" "$1" "${3:-}"
[ -x "$old" ] || die "no kdistill binary at $old"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC')  $(uname -n)  $(nproc --all) cores"
echo "# new $new: $("$new" --version 2>&1 | sed -n 2p)"
echo "# old $old: $("$old" --version 2>&1 | sed -n 2p)"
echo "# command: HC_RUNS=${HC_RUNS:-3} HC_ITERS=${HC_ITERS:-300} bench/herd_ctt.sh $1 $2"
echo "# uptime before: $(uptime)"
"$py" "$(dirname "$0")/herd_ctt_data.py" "$new" "$old" "$gp"
echo "# uptime after: $(uptime)"
