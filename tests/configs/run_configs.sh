#!/bin/bash
# run_configs.sh - every example config a user is given (configs/*.yaml, jobs/configs/*.yaml) must
# validate and run from a fresh clone. For each config of this shard: `kdistill validate`, then a
# run at a reduced size (the --set overrides below; the example's own sizes when it is already
# small) at 2 ranks (NP) from an empty working directory that sees the repository's configs/ and jobs/
# (paths in the configs are relative to the repository root), then check_output.py on the output
# (file exists, every /coreset dataset finite, weights >= 0 summing to 1, MMD finite where the
# task computes one, task-specific tables present).
#
# usage: run_configs.sh REPO KDISTILL_BINARY SHARD NSHARDS [NP]
#   NP: ranks per run (default 2; 1 runs the binary without mpirun, as the ASan build does)
#   SHARD in 0..NSHARDS-1: this run takes the configs whose index in the sorted list is SHARD mod
#   NSHARDS (so a new config is picked up by some shard without editing the CMake file).
# Prints one line per config and "N passed, N failed, N skipped"; exit 0 only if none failed.
set -uo pipefail
REPO=$1
BIN=$2
SHARD=${3:-0}
NSHARDS=${4:-1}
NP=${5:-2}
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
if ! $PY -c "import h5py, numpy" 2>/dev/null; then
  echo "SKIP: run_configs.sh needs python3 with h5py and numpy"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
WORK=$(mktemp -d /tmp/kd_configs.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
PASS=0
FAIL=0
SKIPPED=0

# Reduced sizes: keys per config (basename without .yaml, prefixed jobs_ for jobs/configs).
overrides() {
  case "$1" in
    ctt) echo "x.n=8192 y.n=8192" ;;
    ctt_study) echo "study.m=256 study.n=256 study.replicates=3 study.B=40" ;;
    herd_matern32_box | herd_matern52_box) echo "candidates.grid_n=40 algorithm.max_iter=300" ;;
    thin_gs_compress | thin_kh_compress | thin_kt_compress | thin_lkh | thin_rkh) echo "data.n=4096" ;;
    thin_uniform_mixture) echo "data.n=4096" ;;
    sweep) echo "data.n=1024" ;;
    quad_sobolev_torus) echo "algorithm.n=32" ;;
    jobs_ctt_study) echo "study.m=512 study.replicates=3 study.B=40" ;;
    jobs_herding) echo "candidates.n=4000 algorithm.max_iter=60" ;;
    jobs_quadrature) echo "algorithm.n=32" ;;
    jobs_sweep) echo "data.n=1024" ;;
    jobs_thinning) echo "data.n=4096 algorithm.n_out=64" ;;
    *) echo "" ;;
  esac
}
# Configs that cannot run from a fresh clone, with the reason (reported as SKIP, not PASS): none.
skip_reason() { :; }

mapfile -t all < <(cd "$REPO" && ls configs/*.yaml jobs/configs/*.yaml | sort)
i=-1
for cfg in "${all[@]}"; do
  i=$((i + 1))
  [ $((i % NSHARDS)) = "$SHARD" ] || continue
  name=$(basename "$cfg" .yaml)
  case "$cfg" in jobs/*) name=jobs_$name ;; esac
  why=$(skip_reason "$name")
  if [ -n "$why" ]; then
    echo "SKIP $cfg: $why"
    SKIPPED=$((SKIPPED + 1))
    continue
  fi
  dir=$WORK/$name
  mkdir -p "$dir"
  ln -s "$REPO/configs" "$dir/configs"
  ln -s "$REPO/jobs" "$dir/jobs"
  sets=()
  for kv in $(overrides "$name"); do sets+=(--set "$kv"); done
  t0=$(date +%s.%N)
  if ! (cd "$dir" && "$BIN" validate "$cfg" "${sets[@]}") > "$dir/validate.log" 2>&1; then
    echo "FAIL $cfg: validate: $(tail -n 1 "$dir/validate.log")"
    FAIL=$((FAIL + 1))
    continue
  fi
  launch=(mpirun -np "$NP")
  [ "$NP" = 1 ] && launch=()
  (cd "$dir" && timeout 120 "${launch[@]}" "$BIN" run "$cfg" "${sets[@]}" -q --output "$dir/out.h5") \
    > "$dir/run.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  if [ "$rc" != 0 ]; then
    # the whole log (up to 40 lines): a launcher's message spans several lines and may not say
    # "error" at all
    echo "FAIL $cfg: run exit $rc (${secs} s); its log:"
    grep -v '^ *$' "$dir/run.log" | head -n 40 | sed 's/^/  | /'
    FAIL=$((FAIL + 1))
    continue
  fi
  if msg=$($PY "$REPO/tests/configs/check_config_output.py" "$dir/out.h5" "$dir" 2>&1); then
    echo "ok   $cfg (${secs} s${sets:+, ${sets[*]}}): $msg"
    PASS=$((PASS + 1))
  else
    echo "FAIL $cfg: output: $msg"
    FAIL=$((FAIL + 1))
  fi
done
echo "$PASS passed, $FAIL failed, $SKIPPED skipped"
[ "$FAIL" = 0 ]
