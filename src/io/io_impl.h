/* io_impl.h - private helpers of src/io/: the HDF5 helpers (io/h5_util.h), the output-file summary
 * used by `kdistill info`, list defaults of the config and the checkpoint files. */
#ifndef KDISTILL_IO_IMPL_H
#define KDISTILL_IO_IMPL_H

#include <hdf5.h>
#include <stdio.h>

#include "core/ctx_impl.h"
#include "io/h5_util.h"
#include "kdistill/author/kd_io.h"

/** Print a human summary of a kdistill output file to `out` (root attributes, coreset size and
 *  weight sum, metrics, trace length, extra datasets). Local. Errors name the file. */
kd_err kd_output_info(const char *path, FILE *out);

/** If `key` is absent, insert the list v[0..n) as its resolved default (marked read); no effect
 *  when present. Local. */
kd_err kd_config_default_f64_list(kd_config *cfg, const char *key, int n, const double *v);

/* ---- checkpoint files (io/checkpoint.c; layout in docs/checkpoint.md) ---- */
/* 2: input fingerprints (root attribute input_prints); 1 had none and is refused */
#define KD_CHECKPOINT_FORMAT 2

/** The version of the libyaml the process loaded (kd_build_info). Local. */
const char *kd_config_yaml_version(void);
/** FNV-1a 64 of the resolved configuration text without the lines of the keys that may change
 *  between runs (output.path, run.checkpoint_path, run.checkpoint_every, run.checkpoint_keep,
 *  run.log_interval, ...) and of the input files' paths (every key X.path: the inputs are
 *  compared by their fingerprints instead), as 16 hex digits into out[17]. Local. */
void kd_checkpoint_config_hash(const char *yaml, char out[17]);
/** The first key (in text order, ignored keys skipped) whose line differs between two resolved
 *  configurations, as "key: A in the checkpoint, B now" into buf. Returns 1 if one was found. */
int kd_checkpoint_config_diff(const char *then, const char *now, char *buf, size_t len);

/** Root attributes of a checkpoint. */
typedef struct {
  const char *task, *algorithm, *config_yaml; /* borrowed */
  int64_t iteration;
  const char *reason; /* "periodic" or "signal" */
  int n_ranks;
  const kd_input_print *inputs; /* the run's input fingerprints (borrowed), n_inputs of them */
  int n_inputs;
} kd_checkpoint_meta;

/** Write `state` (its /state/... datasets, trace, seconds = cumulative elapsed, kernel_evals) to
 *  `path` atomically: rank 0 writes "<path>.tmp.<pid>" (state is replicated; a dataset that is
 *  significant on rank 0 only is fine), every rank agrees, rank 0 renames it into place. On failure
 *  the previous checkpoint at `path` is intact. Collective. */
kd_err kd_checkpoint_write(MPI_Comm comm, const char *path, const kd_checkpoint_meta *meta,
                           const kd_result *state);
/** Read a checkpoint for `task` / `algorithm` and the resolved configuration `config_yaml`: rank 0
 *  reads and checks it (format, version major.minor, task, algorithm, config hash), the outcome is
 *  agreed and the state broadcast (replicated in *state on return: datasets, trace, seconds,
 *  kernel_evals); *iteration gets the iteration it was written at. KD_ERR_FILE naming the file if
 *  unreadable / truncated / another format; KD_ERR_CONFIG if written for another configuration.
 *  Collective. */
kd_err kd_checkpoint_read(MPI_Comm comm, const char *path, const char *task, const char *algorithm,
                          const char *config_yaml, kd_result *state, int64_t *iteration,
                          char **inputs);
/** Compare the input fingerprints a checkpoint stored (`stored`, the text *inputs of
 *  kd_checkpoint_read) with the inputs this run read (now[0..n)): KD_ERR_CONFIG naming the
 *  checkpoint `file` and the input that changed (shape, type or values) or is missing. Local (the
 *  same on every rank). */
kd_err kd_checkpoint_inputs_check(const char *file, const char *stored, const kd_input_print *now,
                                  int n);

/** The checkpoint session of the bound context (kd_checkpoint_session in core/ctx_impl.h: set by
 *  the job entry point - config_yaml, cfg, resume - and by the task that checkpoints - path, last
 *  written iteration), or NULL when no context is bound. Local. */
kd_checkpoint_session *kd_checkpoint_session_get(void);

/** kd_output_write, placing the file only where nothing is at `path` when it is renamed into place
 *  (atomic: link(2)); a file that appeared there meanwhile is left alone and the call fails with
 *  KD_ERR_FILE ("a file is already there; it is left alone"). Collective. */
kd_err kd_output_write_new(MPI_Comm comm, const char *path, const kd_output_meta *meta,
                           const kd_result *res);

#endif
