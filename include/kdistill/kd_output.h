/* kd_output.h - reading a kdistill output file back, releasing what the library allocated, and
 * the sizes of the structs a binding mirrors (user tier). */
#ifndef KDISTILL_KD_OUTPUT_H
#define KDISTILL_KD_OUTPUT_H

#include <stddef.h>

#include "kd_api.h"
#include "kd_ctx.h"
#include "kd_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Read an output file back (coreset, metrics, trace; extras not read). meta strings are
 *  malloc'ed into *yaml_out / *algo_out etc. when non-NULL (caller frees with kd_free). Local. */
KD_API kd_err kd_output_read(const char *path, kd_result *res, char **config_yaml, char **task,
                             char **algorithm);

/** The root attributes of an output file that kd_output_read leaves out: the description of the
 *  run's kernel (as the run's summary prints it, e.g. "gaussian(ls=1)") into *kernel (malloc'ed:
 *  kd_free) and the run's rank count into *n_ranks; either may be NULL. An attribute the file
 *  lacks (a file other tools wrote) gives NULL and 0. Local. Errors:
 *  KD_ERR_FILE, KD_ERR_INPUT naming the file and the attribute. */
KD_API kd_err kd_output_read_meta(const char *path, char **kernel, int *n_ranks);

/** Write res to `path` in the layout `kdistill run` writes (root attributes task, algorithm,
 *  kernel, n_ranks, seed, config_yaml, ...; /coreset; /metrics; trace; extra datasets), so that
 *  kd_output_read, `kdistill info` and `kdistill mmd` read it back. Rank 0 of the context writes
 *  a temporary next to path and renames it into place (parent directories are created); on
 *  error nothing appears at path. An existing file at path is left alone (KD_ERR_FILE) unless
 *  `replace` is 1; only a regular file is ever replaced. NULL strings are written as "".
 *  Collective over the context; the outcome is agreed. */
KD_API kd_err kd_output_save(kd_ctx *ctx, const char *path, const kd_result *res, const char *task,
                             const char *algorithm, const char *kernel, int n_ranks, uint64_t seed,
                             const char *config_yaml, int replace);

/** Read a point-set section (the YAML text of a mapping, e.g. "{type: csv, path: x.csv,
 *  columns: [a, b]}") with the readers `kdistill run` uses for `data:` (HDF5, CSV dialects and
 *  column selection, .npy/.npz, generators), validated as a run would (unknown keys, NaN rows):
 *  every row, in file order, into *rows (n x d, row-major, malloc'ed: kd_free) on every rank.
 *  Messages name the key as data.KEY. Collective; the outcome is agreed. */
KD_API kd_err kd_data_read(kd_ctx *ctx, const char *section, double **rows, int64_t *n, int *d);

/** free() for memory the library allocated and handed over (the strings of kd_output_read and
 *  kd_job_validate, ...): a binding that loads the library cannot know which C runtime's free
 *  matches. Accepts NULL. Local. */
KD_API void kd_free(void *p);

/** sizeof of a public struct a binding mirrors, by name: "kd_result", "kd_result_metric",
 *  "kd_result_dataset", "kd_job_opts", "kd_job_summary", "kd_data_array"; 0 for any other name.
 *  A binding compares these with its own layouts when it loads the library. Local. */
KD_API size_t kd_abi_sizeof(const char *name);

#ifdef __cplusplus
}
#endif
#endif
