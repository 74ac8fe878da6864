/* kd_job.h - the library's entry points: what `kdistill run|validate|info|mmd` do, callable
 * in-process on a kd_ctx (kd_ctx.h). Each call binds the context for its duration, clears its
 * error message, and returns an error code that every rank of the context's communicator agrees
 * on, with the message in kd_ctx_message(ctx) (on rank 0 at least). Nothing here exits, aborts or
 * prints to stdout, except kd_job_info which writes to the stream it is given. */
#ifndef KDISTILL_KD_JOB_H
#define KDISTILL_KD_JOB_H

#include <stdio.h>

#include "kd_api.h"
#include "kd_ctx.h"
#include "kd_data.h"
#include "kd_result.h"
#include "kd_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A job: a configuration (file, text or kd_spec) and its command-line style overrides. All
 *  borrowed. */
typedef struct {
  const char *config;      /* YAML file path (rank 0 reads it), or, with config_text, its name */
  const char *config_text; /* YAML text used instead of reading `config` (NULL: read the file) */
  const char *const *sets; /* n_sets "key.path=value" overrides, applied in order */
  int n_sets;
  const char *output; /* overrides output.path (NULL: keep the config's) */
  const char *resume; /* checkpoint file to resume from (NULL: start afresh) */
  int no_output;      /* kd_job_run: 1 = do not write the output file (the result is returned) */
  /* in-memory inputs (kd_data.h) that {type: memory, name: ...} sections refer to; each rank
   * passes its own blocks; borrowed for the call */
  const kd_data_array *arrays;
  int n_arrays;
  /* typed settings (kd_spec.h) applied after `sets`; with neither config nor config_text, the
   * whole configuration (borrowed) */
  const kd_spec *spec;
} kd_job_opts;

/** What a run produced (replicated on every rank). */
typedef struct {
  char task[64];
  char algorithm[64];
  char kernel[160];
  char output[4096]; /* output.path ("" with no_output) */
  kd_gidx n_in;      /* input points (0 if none) */
  kd_gidx n;         /* output points */
  int d;
  int n_ranks;
  double mmd;
  double seconds; /* the algorithm */
  uint64_t kernel_evals;
  double mmd_se;  /* standard error of mmd (0 exact, NaN skipped; kd_mmd_info), or for
                     mmd_method 3 the bound on |mmd - MMD| */
  int mmd_method; /* kd_mmd_method: 0 exact, 1 estimate, 2 skipped, 3 exact to a bound */
  double seconds_load, seconds_evaluation, seconds_write, seconds_total; /* max over ranks */
  int stop_reason;    /* kd_stop_reason (kd_result.h); 0 when the algorithm does not record one */
  int64_t iterations; /* iterative algorithms: iterations run (else 0) */
} kd_job_summary;

/** Load, validate and run the job; write its output atomically (unless o->no_output). With
 *  o->resume, the task must be able to resume (kd_task_desc.can_resume) and the checkpoint must
 *  match the resolved configuration. Collective over kd_ctx_comm(ctx).
 *  @param[out] sum filled on success (may be NULL).
 *  @param[out] res if non-NULL, receives the result (zero-initialised by the caller; owned by the
 *  caller, free with kd_result_free), replicated on every rank.
 *  Errors: any code; KD_ERR_INTERRUPTED after a checkpoint was written on a signal or
 *  kd_ctx_interrupt. */
KD_API kd_err kd_job_run(kd_ctx *ctx, const kd_job_opts *o, kd_job_summary *sum, kd_result *res);
/** kd_job_run that also hands back the resolved configuration (every key with its default, the
 *  median length scale resolved) as YAML: the text the output file stores as config_yaml, also
 *  with o->no_output. @param[out] config_yaml caller frees with kd_free (NULL on error; may be
 *  NULL). Collective. Errors: as kd_job_run. */
KD_API kd_err kd_job_run_resolved(kd_ctx *ctx, const kd_job_opts *o, kd_job_summary *sum,
                                  kd_result *res, char **config_yaml);

/** A value of a resolved configuration (the config_yaml of kd_job_run_resolved or
 *  kd_job_validate, an output file's config_yaml): key is a dotted path, e.g. "run.seed",
 *  "algorithm.alpha", "kernel.ls". Returns its kind; sets *num for a number, *inum for an integer
 *  or a boolean (1/0), and copies a string into buf (len bytes, truncated); outputs may be NULL.
 *  KD_VALUE_NONE when the key is absent, is a section, or config_yaml does not parse. Local. */
KD_API kd_value_kind kd_job_config_value(const char *config_yaml, const char *key, double *num,
                                         int64_t *inum, char *buf, int len);
/** The name of the i-th (from 0) key of the section `section` of a resolved configuration (e.g.
 *  "kernel"), copied into buf (len bytes, truncated). Returns 1, or 0 (buf "") past the last key,
 *  when the section is absent or config_yaml does not parse. Local. */
KD_API int kd_job_config_key_at(const char *config_yaml, const char *section, int i, char *buf,
                                int len);

/** Read every key and open every input without computing. Collective.
 *  @param[out] yaml if non-NULL, the resolved configuration with defaults filled in (caller
 *  frees). @param[out] task if non-NULL, the task name (task_len bytes).
 *  Errors: KD_ERR_CONFIG, KD_ERR_FILE, KD_ERR_INPUT, ... naming file, line and key. */
KD_API kd_err kd_job_validate(kd_ctx *ctx, const kd_job_opts *o, char **yaml, char *task,
                              int task_len);

/** Rank 0 writes a human summary of the kdistill output file `path` to `out` (borrowed; other
 *  ranks write nothing). Collective. Errors: KD_ERR_FILE naming the file. */
KD_API kd_err kd_job_info(kd_ctx *ctx, const char *path, FILE *out);

/** MMD of the rule stored in the output file `path` against the target of the job's config
 *  (herd, thin and quad tasks). Collective.
 *  @param[out] mmd, mmd2 recomputed MMD and MMD^2; stored: the file's /metrics mmd (all may be
 *  NULL). Errors: KD_ERR_FILE, KD_ERR_INPUT (dimension mismatch), KD_ERR_UNSUPPORTED, ... */
KD_API kd_err kd_job_mmd(kd_ctx *ctx, const char *path, const kd_job_opts *o, double *mmd,
                         double *mmd2, double *stored);

/** MMD of the rule stored in the output file `path` against the empirical measure of a data file,
 *  with the kernel the run used (its config's kernel section, the length scale as resolved by
 *  the median heuristic). data_yaml is a point-set section as YAML, e.g.
 *  "{type: npy, path: 'x.npy'}". Collective. Outputs as kd_job_mmd. Errors: as kd_job_mmd;
 *  KD_ERR_UNSUPPORTED for a Stein kernel (its target is a score, not data). */
KD_API kd_err kd_job_mmd_data(kd_ctx *ctx, const char *path, const char *data_yaml, double *mmd,
                              double *mmd2, double *stored);

/** MMD of the rule (points[n*d], weights[n]; the same on every rank, borrowed) against the target
 *  of the job's config (herd, thin and quad tasks), with the config's kernel (ls: median resolved
 *  as a run would). Collective. @param[out] mmd, mmd2 as kd_job_mmd (may be NULL).
 *  Errors: KD_ERR_INPUT (empty rule, dimension mismatch), KD_ERR_UNSUPPORTED, config errors. */
KD_API kd_err kd_job_mmd_rule(kd_ctx *ctx, const kd_job_opts *o, const double *points,
                              const double *weights, int64_t n, int d, double *mmd, double *mmd2);

/** kd_job_mmd_rule, saying what the value is: *method the kd_mmd_method of kd_mmd_info
 *  (kdistill/author/kd_target.h: 0 exact, 1 estimate, 2 skipped, 3 bounded), *mmd_err and
 *  *mmd2_err the errors of mmd and mmd2: 0 when exact, the standard errors of an estimate, the a
 *  priori bounds |mmd - MMD| and |mmd2 - MMD^2| when bounded (the config's target.self decides
 *  the method, as in a run). Any output may be NULL. Collective. Errors: as kd_job_mmd_rule. */
KD_API kd_err kd_job_mmd_rule_info(kd_ctx *ctx, const kd_job_opts *o, const double *points,
                                   const double *weights, int64_t n, int d, double *mmd,
                                   double *mmd2, int *method, double *mmd_err, double *mmd2_err);

/** 1 if the kernel family `name` ("gaussian", ...) has a length scale (the key kernel.ls), 0 if
 *  not, -1 for an unknown name. Local. */
KD_API int kd_kernel_has_ls(const char *name);

#ifdef __cplusplus
}
#endif
#endif
