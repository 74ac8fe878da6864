#!/bin/bash
# sweep_array.sh - submit a parameter sweep (task: sweep) as a SLURM job array: one array task per
# sweep point (jobs/sweep_array.sbatch, sweep.point = the task id) and a summary job that starts
# when every point task has succeeded (--dependency=afterok) and writes <sweep.dir>/summary.{csv,h5}
# and the best-point output (sweep.summary_only), the same files one allocation would write.
#
# usage (on the login node, from the directory the sweep's relative paths refer to):
#   [KD_CONFIG=sweep.yaml] [KD_SET="key=value ..."] bash jobs/sweep_array.sh [sbatch options]
# The sbatch options apply to the point tasks (e.g. -n 4 -t 1:00:00 --partition=short).
# Environment (besides the KD_* knobs of jobs/kd_job.sh, which reach every task):
#   KD_ARRAY_LIMIT      at most this many point tasks at once (--array=0-N%LIMIT)
#   KD_SUMMARY_AFTER    afterok (default) | afterany: afterany runs the summary even when a point
#                       failed (it then lists the missing points and exits 1, unless the config
#                       has sweep.allow_failures: true)
#   KD_SUMMARY_SBATCH   extra sbatch options of the summary job (e.g. "-t 10 --wait")
# Prints the two job ids. Exit status: 1 if the config is invalid or sbatch fails.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
log() { echo "[kd-sweep-array] $*" >&2; }
cfg=${KD_CONFIG:-$root/jobs/configs/sweep.yaml}
if [ -n "${KD_BIN:-}" ]; then bin=$KD_BIN
elif command -v kdistill >/dev/null 2>&1; then bin=$(command -v kdistill)
else bin=$root/build/kdistill; fi
[ -x "$bin" ] || { log "ERROR: kdistill binary '$bin' not found (set KD_BIN)"; exit 1; }
sets=()
# split on blanks only (`read -a` does no pathname expansion: data.mean=[0,1] stays as written)
read -r -a words <<< "${KD_SET:-}"
for a in "${words[@]}"; do sets+=(--set "$a"); done
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# validate the whole sweep here (every point, every path) and learn the number of points
out=$("$bin" validate "$cfg" "${sets[@]}" 2>&1)
rc=$?
if [ "$rc" != 0 ]; then log "ERROR: $cfg does not validate: $(grep -m1 error <<< "$out")"; exit 1; fi
n=$(sed -n 's/.*sweep: \([0-9][0-9]*\) points.*/\1/p' <<< "$out" | head -n 1)
[ -n "$n" ] || { log "ERROR: $cfg: not a sweep (task: sweep) config"; exit 1; }
range="0-$((n - 1))${KD_ARRAY_LIMIT:+%$KD_ARRAY_LIMIT}"
aid=$(KD_CONFIG=$cfg sbatch --parsable --array="$range" "$@" "$here/sweep_array.sbatch") ||
  { log "ERROR: sbatch of the point tasks failed"; exit 1; }
aid=${aid%%;*}
log "array job $aid: $n point task(s) ($range)"
read -r -a summary_opts <<< "${KD_SUMMARY_SBATCH:-}"
sid=$(KD_CONFIG=$cfg KD_SWEEP_SUMMARY=1 sbatch --parsable -n 1 --job-name=kd-sweep-summary \
      --output="kd-sweep-summary-%j.out" --error="kd-sweep-summary-%j.err" \
      --dependency="${KD_SUMMARY_AFTER:-afterok}:$aid" "${summary_opts[@]}" "$here/sweep_array.sbatch")
rc=$?
sid=${sid%%;*}
log "summary job ${sid:-?} (after ${KD_SUMMARY_AFTER:-afterok}:$aid)"
echo "$aid $sid"
exit "$rc"
