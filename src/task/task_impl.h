/* task_impl.h - tasks: what `kdistill run` does for each `task:` value. A task reads its config
 * keys, loads its inputs (setup), runs one algorithm or a pipeline, and returns a kd_result that
 * the CLI writes to HDF5. Tasks are registered in task/task_list.h (KD_TASK(symbol) lines, one
 * list file per family). Tasks may read config and files; algorithms (src/algo/) may not.
 *
 * Config sections shared by tasks (all keys documented in README / --print-defaults):
 *   task:       herd | thin | quad | ...
 *   data:       a point-set section (thin, reorder, ...)
 *   candidates: a point-set section (herd)
 *   target:     a measure section, or {type: data} (empirical = the data section), or a point-set
 *               section with type hdf5/csv (empirical from a file)
 *   kernel:     {name, ls (number or "median"), beta, c, degree, order, dk, median_sample}
 *   algorithm:  {name, <the algorithm's own keys>}
 *   output:     {path}
 *   run:        {seed, log_interval, checkpoint_every, checkpoint_path}
 * A point-set section is {type: <generator>, n, <generator keys>, seed?} or {type: hdf5, path,
 * dataset} or {type: csv, path, header}. Generator keys: d, lo, hi (uniform_box, grid,
 * trunc_gaussian), mean, sd (gaussian, trunc_gaussian), means, sds, weights (gaussian_mixture,
 * means/sds as lists of lists), grid_n (grid). */
#ifndef KDISTILL_TASK_IMPL_H
#define KDISTILL_TASK_IMPL_H

#include "kdistill/kdistill.h"

typedef struct {
  MPI_Comm comm;     /* the job's communicator (borrowed) */
  kd_config *cfg;    /* borrowed */
  uint64_t seed;     /* run.seed */
  int validate_only; /* 1: read + check every key and open inputs, compute nothing */
} kd_task_ctx;

/** Strings for the output's root attributes; filled by run(). */
typedef struct {
  char algorithm[64];
  char kernel[160];
} kd_task_info;

typedef struct {
  const char *name;
  const char *summary;
  /** Read every key the task uses (so unknown keys can be detected afterwards) and load inputs
   *  (unless ctx->validate_only). Collective. */
  kd_err (*setup)(const kd_task_ctx *ctx, void **state);
  /** Compute. res is replicated on all ranks on return. Collective. */
  kd_err (*run)(const kd_task_ctx *ctx, void *state, kd_result *res, kd_task_info *info);
  /** Free the state; accepts NULL. */
  void (*destroy)(void **state);
} kd_task_desc;

/** Registry lookup; NULL if unknown. Iterate with kd_task_at(i) until NULL. */
const kd_task_desc *kd_task_find(const char *name);
const kd_task_desc *kd_task_at(int i);

/* ---- helpers shared by tasks (task/task_common.c) ---- */
/** Read a kernel section ("kernel") for dimension d. Collective (no traffic). */
kd_err kd_task_read_kernel(const kd_task_ctx *ctx, const char *section, int d, kd_kernel **out);
/** If the kernel asked for ls: median, compute it on ps. Collective. */
kd_err kd_task_kernel_finish(const kd_task_ctx *ctx, kd_kernel *k, const kd_pointset *ps);
/** Read a generator measure section (type + parameters). Local (every rank parses the same). */
kd_err kd_task_read_measure(const kd_task_ctx *ctx, const char *section, kd_measure *out);
/** Read a point-set section and load it (generator, HDF5 or CSV) and validate it (NaN rows etc.).
 *  With ctx->validate_only only checks keys and that files exist (*out = NULL). Collective. */
kd_err kd_task_read_pointset(const kd_task_ctx *ctx, const char *section, kd_pointset **out);
/** Read an algorithm section for `task`: finds the descriptor by name and fills its params. */
kd_err kd_task_read_algo(const kd_task_ctx *ctx, const char *section, const char *task,
                         const kd_algo_desc **desc, kd_params *params);
/** Read the target section: closed form (needs a kernel) or empirical (data = the pointset given,
 *  or a file). *owned_points receives a point set the target borrows and the caller must destroy
 *  after the target (NULL if none). Collective. */
kd_err kd_task_read_target(const kd_task_ctx *ctx, const char *section, kd_kernel *k,
                           kd_pointset *data, kd_target **out, kd_pointset **owned_points);

#endif
