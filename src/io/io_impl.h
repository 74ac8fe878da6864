/* io_impl.h - private helpers of src/io/ and src/pointset/io_*.c: HDF5 checking, the HDF5 error
 * text, and the output-file summary used by `kdistill info`. */
#ifndef KDISTILL_IO_IMPL_H
#define KDISTILL_IO_IMPL_H

#include <hdf5.h>
#include <stdio.h>

#include "core/ctx_impl.h"
#include "kdistill/kd_io.h"

/** Check an HDF5 call (negative hid_t / herr_t = failure): jump to cleanup with `code` and the
 *  formatted message, followed by HDF5's own description of the innermost failure. */
#define KD_H5C(expr, code, ...)                                   \
  do {                                                            \
    if ((long long)(expr) < 0) {                                  \
      err = kd_h5_fail_((code), __FILE__, __LINE__, __VA_ARGS__); \
      goto cleanup;                                               \
    }                                                             \
  } while (0)

/** Record message + ": " + the innermost HDF5 error description; returns code. Local. */
kd_err kd_h5_fail_(kd_err code, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/** Turn off HDF5's automatic error printing on the default stack (idempotent). Local. */
void kd_h5_quiet(void);
/** Scalar UTF-8 string attribute name = val on loc (NULL writes ""). Local (serial HDF5). */
kd_err kd_h5_attr_str(hid_t loc, const char *name, const char *val);
/** Scalar numeric attribute: stored as ftype, val read as mtype. Local. */
kd_err kd_h5_attr_num(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *val);
/** Dataset at path (rank 0..2, dims[rank]; float64 or int64 when is_int) written in one call;
 *  lcpl may create intermediate groups. Local. */
kd_err kd_h5_dset(hid_t loc, const char *path, hid_t lcpl, int is_int, int rank,
                  const int64_t *dims, const void *data);

/** Print a human summary of a kdistill output file to `out` (root attributes, coreset size and
 *  weight sum, metrics, trace length, extra datasets). Local. Errors name the file. */
kd_err kd_output_info(const char *path, FILE *out);

/** If `key` is absent, insert the list v[0..n) as its resolved default (marked read); no effect
 *  when present. Local. */
kd_err kd_config_default_f64_list(kd_config *cfg, const char *key, int n, const double *v);

/** Check that `path` is an HDF5 file with a readable 1-D/2-D numeric dataset `dset`; *n, *d get
 *  its shape (optional). Rank 0 checks with a serial open, the result is agreed and broadcast.
 *  Collective. */
kd_err kd_h5_check_dataset(MPI_Comm comm, const char *path, const char *dset, int64_t *n, int *d);
/** Check that the CSV file `path` parses (header as in kd_pointset_read_csv); *n, *d get its shape
 *  (optional). Rank 0 parses, the result is agreed and broadcast. Collective. */
kd_err kd_csv_check(MPI_Comm comm, const char *path, int header, int64_t *n, int *d);

/* ---- checkpoint files (io/checkpoint.c; layout in docs/checkpoint.md) ---- */
#define KD_CHECKPOINT_FORMAT 1

/** FNV-1a 64 of the resolved configuration text without the lines of the keys that may change
 *  between runs (output.path, run.checkpoint_path, run.checkpoint_every, run.checkpoint_keep,
 *  run.log_interval), as 16
 *  hex digits into out[17]. Local. */
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
                          const char *config_yaml, kd_result *state, int64_t *iteration);

/** The checkpoint session of the bound context (kd_checkpoint_session in core/ctx_impl.h: set by
 *  the job entry point - config_yaml, cfg, resume - and by the task that checkpoints - path, last
 *  written iteration), or NULL when no context is bound. Local. */
kd_checkpoint_session *kd_checkpoint_session_get(void);

#endif
