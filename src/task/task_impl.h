/* task_impl.h - tasks: what `kdistill run` does for each `task:` value. A task reads its config
 * keys, loads its inputs (setup), runs one algorithm or a pipeline, and returns a kd_result that
 * the CLI writes to HDF5. Tasks are registered in task/task_list.h (KD_TASK(symbol) lines, one
 * list file per family). Tasks may read config and files; algorithms (src/algo/) may not.
 *
 * Config sections shared by tasks (all keys documented in docs/config.md / --print-defaults):
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
 * dataset} or {type: csv, path, header} or {type: memory, name} (an array the caller registered
 * in kd_job_opts.arrays). Generator keys: d, lo, hi (uniform_box, grid,
 * trunc_gaussian), mean, sd (gaussian, trunc_gaussian), means, sds, weights (gaussian_mixture,
 * means/sds as lists of lists), grid_n (grid). */
#ifndef KDISTILL_TASK_IMPL_H
#define KDISTILL_TASK_IMPL_H

#include "kdistill/author.h"

/** The name of the configuration a command-line shortcut builds (`kdistill thin X.h5`,
 *  src/cli/quick.c): input hints then name the command-line flag (--dataset) instead of the key. */
#define KD_JOB_COMMAND_LINE "command line"

typedef struct {
  MPI_Comm comm;               /* the job's communicator (borrowed) */
  kd_config *cfg;              /* borrowed */
  uint64_t seed;               /* run.seed */
  int validate_only;           /* 1: read + check every key and open inputs, compute nothing */
  int evaluate_only;           /* 1: set up to evaluate a rule (kdistill mmd): writes nothing */
  const kd_data_array *arrays; /* in-memory inputs of {type: memory} sections (kd_data.h) */
  int n_arrays;
} kd_task_ctx;

/** Strings for the output's root attributes; filled by run(). */
typedef struct {
  char algorithm[64];
  char kernel[160];
  kd_gidx n_in;  /* input points (data / candidates / pool); 0 if none. Added last: optional. */
  int no_output; /* 1: the task wrote its own files and the job writes no output.path (a sweep
                    running one point: sweep.point) */
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
  /** 1 if run() checkpoints and resumes (the job's checkpoint session, kd_checkpoint_session_get):
   *  `kdistill run --resume` refuses the other tasks. The checkpoint's algorithm attribute is the
   *  config's algorithm.name, or the task name for a task without an algorithm section. */
  int can_resume;
} kd_task_desc;

/** Registry lookup; NULL if unknown. Iterate with kd_task_at(i) until NULL. */
const kd_task_desc *kd_task_find(const char *name);
const kd_task_desc *kd_task_at(int i);
/** The names of the tasks that can resume, in registry order, as English prose ("herd, thin and
 *  quad") into buf. Local. */
void kd_task_resumable_names(char *buf, int len);

/* ---- helpers shared by tasks: sections read in task/task_kernel.c, task_points.c,
 * task_target.c, task_output.c; one algorithm run in task/task_harness.c ---- */
/** Read a kernel section ("kernel") for dimension d. Collective (no traffic). */
kd_err kd_task_read_kernel(const kd_task_ctx *ctx, const char *section, int d, kd_kernel **out);
/** 1 for the point-set types read from files: hdf5, csv, npy, npz. */
int kd_task_is_file_type(const char *type);
/** kernel.precondition diag|matrix of a stein kernel: the sample covariance of the x coordinates
 *  of ps (or its diagonal) into the kernel (kd_kernel_set_stein_precond); auto, and ls: auto,
 *  by kd_kernel_stein_autotune. Collective. */
kd_err kd_task_stein_precond(const kd_task_ctx *ctx, kd_kernel *k, const kd_pointset *ps);
/* /metrics kernel_precondition (0 none, 1 diag, 2 matrix) and kernel_ls_auto of a stein kernel */
kd_err kd_task_record_stein_kernel(const kd_kernel *k, kd_result *res);
/** After a point-set section is loaded: if it has a `score` subsection, replace *ps by the rows
 *  (x, s(x)) of width 2d (scores from a file or the analytic score of a measure) and double *d.
 *  In validate_only mode (*ps NULL) only the keys and shapes are checked. Collective. */
kd_err kd_task_read_score(const kd_task_ctx *ctx, const char *section, kd_gidx n, kd_pointset **ps,
                          int *d);
/** Stein kernel: split the result's rows (x, s) into /points (x) and the dataset /coreset/scores.
 */
kd_err kd_task_split_scores(kd_kernel *k, const kd_pointset *points, kd_result *res);
/* /metrics debias_groups, debias_resolution, debias_untrusted of a stein run (stein_trust.c):
 * whether the KSD resolves the proportions of the input's well-separated groups of modes.
 * Collective. */
kd_err kd_task_stein_trust(kd_kernel *k, const kd_pointset *ps, kd_result *res);
/** If the kernel asked for ls: median, compute it on ps. Collective. */
kd_err kd_task_kernel_finish(const kd_task_ctx *ctx, kd_kernel *k, const kd_pointset *ps);
/** The kernel's description into info->kernel and its length scale in use (the median heuristic's
 *  value when it was asked for) into res's metric kernel_ls, for families that have one. Local. */
kd_err kd_task_record_kernel(const kd_kernel *k, kd_task_info *info, kd_result *res);
/** The resolved configuration an output stores: cfg with `kernel.ls: median` replaced by the value
 *  the run used (res's metric kernel_ls), so that the output's config_yaml reruns with that length
 *  scale; *yaml = NULL when nothing is replaced (store the run's own resolved text). Caller frees.
 *  Local. */
kd_err kd_task_output_yaml(const kd_config *cfg, const kd_result *res, char **yaml);
/** Read a generator measure section (type + parameters). Local (every rank parses the same). */
kd_err kd_task_read_measure(const kd_task_ctx *ctx, const char *section, kd_measure *out);
/** The same, with the dimension d defaulting to d_default (> 0) when neither d nor a list of
 *  two or more values gives it (a score's measure takes the points' d). Local. */
kd_err kd_task_read_measure_d(const kd_task_ctx *ctx, const char *section, int d_default,
                              kd_measure *out);
/** Read a point-set section and load it (generator, HDF5 or CSV) and validate it (NaN rows etc.).
 *  With ctx->validate_only only checks keys and that files exist (*out = NULL). The shape (*n, *d)
 *  is reported when n / d are not NULL, in validate_only mode too (generators from the config,
 *  files from their headers). Collective. */
kd_err kd_task_read_pointset(const kd_task_ctx *ctx, const char *section, kd_pointset **out,
                             kd_gidx *n, int *d);
/** kd_task_read_pointset that also reads the section's `lazy` key (generator types only; default
 *  false): when true the rows are never stored (kd_pointset_generate_lazy); *lazy tells, in
 *  validate_only mode too. For tasks whose algorithms read rows bin by bin. Collective. */
kd_err kd_task_read_pointset_lazy(const kd_task_ctx *ctx, const char *section, kd_pointset **out,
                                  kd_gidx *n, int *d, int *lazy);
/** "SECTION.KEY" into buf (len bytes). Local. */
void kd_task_key(char *buf, size_t len, const char *section, const char *key);
/** Read an algorithm section for `task`: finds the descriptor by name and fills its params. */
kd_err kd_task_read_algo(const kd_task_ctx *ctx, const char *section, const char *task,
                         const kd_algo_desc **desc, kd_params *params);
/** The algorithm's own checks against the inputs' shape before anything is computed (and by
 *  validate): n_out against the input rows (KD_ALGO_N_OUT), the descriptor's check hook, and its
 *  memory estimate (kd_algo_desc.mem, agreed over ranks). A config error is located at its key's
 *  file and line. Collective. */
kd_err kd_task_check_algo(const kd_task_ctx *ctx, const kd_algo_desc *desc, const kd_params *p,
                          const kd_algo_shape *shape);
/** Read the target section: closed form (needs a kernel) or empirical (data = the pointset given,
 *  or a file). has_data says whether the task has a data set (in validate_only mode data is NULL
 *  although it has one, so `type: data` is allowed and is the default). *owned_points receives a
 *  point set the target borrows and the caller must destroy after the target (NULL if none); if
 *  it is non-NULL on entry it is the already-loaded point set of a file target (type hdf5/csv)
 *  and is used instead of reading the file again. owned_points NULL (validate_only only): the
 *  caller has already checked the file target's section, which is not read again (its notes
 *  would be logged twice). In validate_only mode *out may be NULL.
 *  Collective. */
kd_err kd_task_read_target(const kd_task_ctx *ctx, const char *section, kd_kernel *k,
                           kd_pointset *data, int has_data, kd_target **out,
                           kd_pointset **owned_points);

/** Run one algorithm the way every task should: resets the kernel's counter, times desc->run
 *  (max over ranks), agrees its error, sums kernel evaluations over ranks into res->kernel_evals,
 *  and, if the algorithm left res->mmd NaN, fills it with the exact kd_mmd against target (when
 *  the target's double integral is unavailable res->mmd stays NaN and the metric
 *  "mmd2_minus_self" holds MMD^2 - int int k). ck (borrowed, NULL = no checkpointing) is handed
 *  to the algorithm as kd_algo_in.ckpt. Collective. */
kd_err kd_task_run_algo(const kd_task_ctx *ctx, const kd_algo_desc *desc, const kd_params *params,
                        kd_kernel *k, kd_pointset *points, kd_target *target, const void *task_in,
                        kd_ckpt *ck, kd_result *res);
/** Write a checkpoint of `state` (metrics "iteration" and "interrupted" set by the algorithm) for
 *  this task's config to `path` (src/io/checkpoint.c layout); *iteration receives the state's
 *  iteration and the checkpoint session records it. Collective. */
kd_err kd_task_checkpoint_write(const kd_task_ctx *ctx, const char *task, const char *algorithm,
                                const char *path, const kd_result *state, int64_t *iteration,
                                const char **reason);
/** The '|'-separated names of the registered algorithms of `task` into buf (empty if none). */
void kd_task_algo_choices(const char *task, char *buf, int len);
/** Read run.checkpoint_every (default 0 = off), run.checkpoint_keep (default false) and
 *  run.checkpoint_path (default <output.path>.ckpt.h5; *path is allocated, the caller frees it)
 *  for a task that checkpoints; only such tasks call this, so the keys are an error elsewhere.
 *  Local. */
kd_err kd_task_read_checkpoint(const kd_task_ctx *ctx, int64_t *every, int *keep, char **path);
/** The run's kd_ckpt (kd_ckpt_create with `sink`/`user` writing the checkpoint file at `path`),
 *  wired to the job's checkpoint session when this task's config owns it: the session gets the
 *  path the job removes once the output is in place (none with keep) and hands over the state to
 *  resume from (*resume, NULL when starting afresh; may be NULL). Local; KD_ERR_MEM. */
kd_err kd_task_ckpt_open(const kd_task_ctx *ctx, int64_t every, const char *path, int keep,
                         kd_ckpt_sink sink, void *user, kd_ckpt **ck, const kd_result **resume);
/** A path the run will write (`key` names it): checked on rank 0 before any computation (and by
 *  validate) with kd_path_check_output, the outcome agreed. Collective; KD_ERR_CONFIG, KD_ERR_IO.
 */
kd_err kd_task_check_output(const kd_task_ctx *ctx, const char *key, const char *path);
/** The target built by the setup of one of the basic tasks (herd, thin, quad), borrowed, for
 *  `kdistill mmd`; KD_ERR_UNSUPPORTED for other tasks. Local. */
kd_err kd_task_basic_target(const kd_task_desc *task, void *state, kd_target **t);
/** The '|'-separated names of the registered tasks into buf. */
void kd_task_choices(char *buf, int len);

#endif
