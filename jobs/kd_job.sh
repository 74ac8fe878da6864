# shellcheck shell=bash
# kd_job.sh - shared body of the kdistill sbatch scripts (sourced, not run). docs/hpc.md explains
# every knob. A job script sets KD_JOB_NAME and KD_JOB_CONFIG (default config, relative to the
# repository root) and calls kd_job_main "$@".
#
# Environment knobs (all optional):
#   KD_CONFIG      config file                      (default: the script's config under jobs/configs)
#   KD_OUTPUT      output HDF5 path                  (default: kd-<name>-<jobid>.h5 in the submit dir)
#   KD_BIN         kdistill binary                   (default: kdistill on PATH, else <repo>/build/kdistill)
#   KD_SET         extra "key=value" overrides, blank-separated (each becomes --set key=value)
#   KD_ARGS        extra kdistill arguments, e.g. "--verbose" or "--quiet"
#   KD_LAUNCHER    auto | srun | mpirun | none      (auto: srun with pmix if SLURM has it, else mpirun)
#   KD_SRUN_MPI    srun --mpi plugin                 (default pmix)
#   KD_MPIRUN_ARGS extra mpirun arguments            (e.g. "--bind-to core")
#   KD_CHECKPOINT  checkpoint file; when it exists the run resumes from it (--resume)
#   KD_REQUEUE     1: on exit status 3 (interrupted, checkpoint written) requeue the job (needs
#                  KD_CHECKPOINT, or a job that resumes by itself: KD_JOB_SELF_RESUMING=1, set by
#                  sweep.sbatch, whose requeued run keeps finished points with sweep.resume)
#   KD_INFO        0: skip the "kdistill info" summary printed after a successful run
#   KD_MODULES     modules to load before anything else ("gcc openmpi hdf5 openblas": `module
#                  load $KD_MODULES`; exit 1 if there is no `module` command or the load fails)
#   KD_MODULE_INIT the module system's init script(s) to try when the batch shell has no `module`
#                  (default: /etc/profile.d/modules.sh /etc/profile.d/lmod.sh, then Lmod's)
#   KD_NO_OUTPUT   1: pass no --output (a sweep array task: the point file is its only output)
#
# Exit status: kdistill's (0 ok, 1 bad input, 2 environment, 3 interrupted with a checkpoint
# written); 1 when this script finds a problem before launching (message on stderr).

kd_job_log() { echo "[kd-job] $*" >&2; }

# Repository root: the parent of the jobs/ directory holding this file.
kd_job_root() { (cd "$KD_JOBS_DIR/.." && pwd); }

kd_job_find_bin() {
  if [ -n "${KD_BIN:-}" ]; then
    echo "$KD_BIN"
  elif command -v kdistill >/dev/null 2>&1; then
    command -v kdistill
  else
    echo "$(kd_job_root)/build/kdistill"
  fi
}

# The launcher prefix, one word per line (read into an array by the caller).
kd_job_launcher() {
  local which=${KD_LAUNCHER:-auto} np=${SLURM_NTASKS:-${SLURM_NPROCS:-1}}
  if [ "$which" = auto ]; then
    if [ -n "${SLURM_JOB_ID:-}" ] && command -v srun >/dev/null 2>&1 &&
       srun --mpi=list 2>&1 | grep -qw "${KD_SRUN_MPI:-pmix}"; then
      which=srun
    elif command -v mpirun >/dev/null 2>&1; then
      which=mpirun
    else
      kd_job_log "ERROR: neither srun (with the ${KD_SRUN_MPI:-pmix} plugin) nor mpirun found"
      return 1
    fi
  fi
  case "$which" in
    srun)
      command -v srun >/dev/null 2>&1 || { kd_job_log "ERROR: KD_LAUNCHER=srun but no srun"; return 1; }
      printf '%s\n' srun "--mpi=${KD_SRUN_MPI:-pmix}" ;;
    mpirun)
      command -v mpirun >/dev/null 2>&1 || { kd_job_log "ERROR: KD_LAUNCHER=mpirun but no mpirun"; return 1; }
      printf '%s\n' mpirun -np "$np" -x KDISTILL_SIGNAL_GRACE
      local extra=()
      read -r -a extra <<< "${KD_MPIRUN_ARGS:-}"
      [ "${#extra[@]}" -eq 0 ] || printf '%s\n' "${extra[@]}" ;;
    none) ;;
    *) kd_job_log "ERROR: KD_LAUNCHER=$which (expected auto, srun, mpirun or none)"; return 1 ;;
  esac
}

# Signals: SLURM sends USR1 to this shell (--signal=B:USR1@120) before the time limit, and TERM
# at the limit or on scancel. Forward both to the launcher, which passes them to every rank;
# kdistill then checkpoints at its next safe point and exits with status 3.
# A rank that has no safe point within KDISTILL_SIGNAL_GRACE seconds of the signal is stopped
# without a checkpoint (docs/reliability.md). The warning comes 120 s before the limit and SLURM's
# KillWait between TERM and KILL is 30 s by default, so 20 s lets a long step finish and checkpoint.
export KDISTILL_SIGNAL_GRACE="${KDISTILL_SIGNAL_GRACE:-20}"
KD_CHILD=""
KD_TRAPPED=0
kd_job_forward() {
  KD_TRAPPED=1
  kd_job_log "received SIG$1; forwarding to the solver (pid ${KD_CHILD:-none})"
  [ -n "$KD_CHILD" ] && kill "-$1" "$KD_CHILD" 2>/dev/null
  return 0
}

# Environment modules / Lmod: `module` is a shell function their init script defines; batch
# shells often inherit it, else source the usual init scripts.
kd_job_modules() {
  [ -n "${KD_MODULES:-}" ] || return 0
  local f inits=() mods=()
  read -r -a inits <<< "${KD_MODULE_INIT:-/etc/profile.d/modules.sh /etc/profile.d/lmod.sh /usr/share/lmod/lmod/init/bash}"
  read -r -a mods <<< "$KD_MODULES"
  if ! type module >/dev/null 2>&1; then
    for f in "${inits[@]}"; do
      # shellcheck disable=SC1090
      if [ -r "$f" ]; then . "$f" >/dev/null 2>&1 && break; fi
    done
  fi
  if ! type module >/dev/null 2>&1; then
    kd_job_log "ERROR: KD_MODULES='$KD_MODULES' but there is no 'module' command here" \
               "(environment modules / Lmod not set up); load the modules before sbatch or unset KD_MODULES"
    return 1
  fi
  kd_job_log "module load $KD_MODULES"
  module load "${mods[@]}" || { kd_job_log "ERROR: module load $KD_MODULES failed"; return 1; }
}

kd_job_main() {
  local name=${KD_JOB_NAME:?KD_JOB_NAME not set} root bin cfg out rc launcher=() cmd=() a
  root=$(kd_job_root)
  kd_job_modules || return 1
  bin=$(kd_job_find_bin)
  cfg=${KD_CONFIG:-$root/${KD_JOB_CONFIG:?KD_JOB_CONFIG not set}}
  out=${KD_OUTPUT:-${SLURM_SUBMIT_DIR:-$PWD}/kd-$name-${SLURM_JOB_ID:-local}.h5}
  if [ ! -x "$bin" ]; then
    kd_job_log "ERROR: kdistill binary '$bin' not found or not executable (set KD_BIN)"
    return 1
  fi
  if [ ! -r "$cfg" ]; then
    kd_job_log "ERROR: config '$cfg' not found or not readable (set KD_CONFIG)"
    return 1
  fi
  mapfile -t launcher < <(kd_job_launcher) || return 1
  [ "${#launcher[@]}" -gt 0 ] || [ "${KD_LAUNCHER:-auto}" = none ] || return 1
  if [ "$(id -u)" = 0 ]; then
    # Open MPI refuses root unless told (containers, CI)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
  # Open MPI keeps each job's session files under one per-user directory of $TMPDIR, which the
  # last job on the node removes when it ends; a job starting at that instant fails in MPI_Init.
  # Jobs sharing a node (array tasks, small jobs) each get a session root of their own, removed
  # at the end. Single-node jobs only: the path must exist on every node of the job.
  local session=""
  if [ -z "${OMPI_MCA_orte_tmpdir_base:-}" ] && [ "${SLURM_JOB_NUM_NODES:-1}" = 1 ]; then
    # a new directory of our own (mktemp), never one that already exists: another user's or
    # job's folder of that name must not be used, nor removed at the end
    session=$(mktemp -d "${TMPDIR:-/tmp}/kd-${SLURM_JOB_ID:-$$}.XXXXXX") ||
      { kd_job_log "ERROR: cannot create a session directory in ${TMPDIR:-/tmp}"; return 1; }
    export OMPI_MCA_orte_tmpdir_base=$session
  fi
  cmd=("$bin" run "$cfg")
  if [ "${KD_NO_OUTPUT:-0}" = 1 ]; then out=""; else cmd+=(--output "$out"); fi
  # split on blanks only: `read -a` does no pathname expansion, so a value such as
  # data.mean=[0,1] stays as written even when a file matches it as a pattern
  local words=()
  read -r -a words <<< "${KD_SET:-}"
  for a in "${words[@]}"; do cmd+=(--set "$a"); done
  if [ -n "${KD_CHECKPOINT:-}" ]; then
    cmd+=(--set "run.checkpoint_path=$KD_CHECKPOINT")
    if [ -s "$KD_CHECKPOINT" ]; then
      kd_job_log "checkpoint $KD_CHECKPOINT found: resuming"
      cmd+=(--resume "$KD_CHECKPOINT")
    fi
  fi
  read -r -a words <<< "${KD_ARGS:-}"
  cmd+=("${words[@]}")
  local limit=""
  if [ -n "${SLURM_JOB_ID:-}" ] && command -v squeue >/dev/null 2>&1; then
    limit=$(squeue -h -j "$SLURM_JOB_ID" -o "%l" 2>/dev/null | head -n 1)
  fi
  kd_job_log "job ${SLURM_JOB_ID:-none} '$name' on ${SLURM_JOB_NODELIST:-$(hostname)}:" \
             "${SLURM_NTASKS:-1} task(s), time limit ${limit:-unknown}"
  kd_job_log "run: ${launcher[*]} ${cmd[*]}"
  trap 'kd_job_forward USR1' USR1
  trap 'kd_job_forward TERM' TERM
  # in the background, so the traps run while we wait (bash defers traps during a foreground child)
  "${launcher[@]}" "${cmd[@]}" &
  KD_CHILD=$!
  while :; do
    KD_TRAPPED=0
    wait "$KD_CHILD"
    rc=$?
    [ "$KD_TRAPPED" = 1 ] || break # a trap interrupted wait: the solver may still be running
  done
  KD_CHILD=""
  trap - USR1 TERM
  case "$rc" in
    0)
      kd_job_log "done: ${out:-no output file (KD_NO_OUTPUT=1)}"
      if [ -n "$out" ] && [ "${KD_INFO:-1}" != 0 ]; then "${launcher[@]}" "$bin" info "$out" || true; fi ;;
    3)
      kd_job_log "interrupted: checkpoint written (exit 3)"
      if [ "${KD_REQUEUE:-0}" = 1 ] && [ -n "${SLURM_JOB_ID:-}" ]; then
        if [ -z "${KD_CHECKPOINT:-}" ] && [ "${KD_JOB_SELF_RESUMING:-0}" != 1 ]; then
          kd_job_log "KD_REQUEUE=1 without KD_CHECKPOINT: the requeued job would start over; not requeuing"
        else
          kd_job_log "requeuing job $SLURM_JOB_ID to resume from ${KD_CHECKPOINT:-the finished points}"
          scontrol requeue "$SLURM_JOB_ID" || kd_job_log "scontrol requeue failed"
        fi
      fi ;;
    *) kd_job_log "kdistill failed with exit status $rc" ;;
  esac
  [ -z "$session" ] || rm -rf "$session"
  return "$rc"
}
