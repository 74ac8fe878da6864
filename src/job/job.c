/* job.c - the library's entry points (include/kdistill/kd_job.h): load a configuration, set up its
 * task, run it, resume it from a checkpoint, write the output, validate, inspect an output file,
 * recompute an MMD. Each binds the caller's kd_ctx for its duration, works on the context's
 * communicator, and returns an agreed error code with the message in the context.
 * job/ is the top library layer (... <- task <- sweep <- job <- cli): it must see every task,
 * including those above task/ (the sweep runs other tasks). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ctx_impl.h"
#include "comm/dist_impl.h"
#include "io/io_impl.h"
#include "io/paths.h"
#include "job/job_registry.h"
#include "job/spec_impl.h"
#include "task/task_impl.h"

typedef struct {
  kd_config *cfg;
  const kd_task_desc *task;
  kd_task_ctx tctx;
  void *state;
  const char *output;
  double saved_interval; /* the context's log interval, restored after the job */
} kd_job;

/* kd_job_load_'s validate_only for a run's precheck: validate, but not a sweep */
enum { KD_JOB_PRECHECK = 2 };

/* Load the config and read the job-level keys (task, run.*, output.*), then set up the task and
 * (check_unused) reject keys nobody read. Collective. */
static kd_err kd_job_load_(kd_ctx *ctx, const kd_job_opts *o, int validate_only, int check_unused,
                           int evaluate_only, kd_job *job) {
  kd_err err = KD_OK;
  char choices[1024];
  const char *task = NULL;
  int64_t seed = 0;
  double interval = 1.0;
  memset(job, 0, sizeof *job);
  job->saved_interval = ctx->log_interval;
  KD_CHECK(o && (o->config || o->config_text || o->spec), KD_ERR_ARG, "no configuration given");
  if (o->config_text)
    KD_TRY(kd_config_load_string(o->config_text, o->config ? o->config : "<config>", &job->cfg));
  else if (o->config)
    KD_TRY(kd_config_load(ctx->comm, o->config, &job->cfg));
  else
    KD_TRY(kd_config_new(kd_spec_name(o->spec), &job->cfg));
  for (int i = 0; i < o->n_sets; i++) KD_TRY(kd_config_set(job->cfg, o->sets[i]));
  if (o->spec) KD_TRY(kd_spec_apply(o->spec, job->cfg));
  if (o->output) KD_TRY(kd_config_set_str(job->cfg, "output.path", o->output));
  kd_job_task_choices(choices, sizeof choices);
  KD_TRY(kd_config_get_str(job->cfg, "task", NULL, choices, 1, &task));
  job->task = kd_job_task_find(task);
  KD_CHECK(job->task, KD_ERR_INTERNAL, "task %s not registered", task);
  /* the precheck of a run (kd_job_precheck_) leaves a sweep alone: its validation sets up every
   * point, which its run does anyway */
  if (validate_only == KD_JOB_PRECHECK && !strcmp(job->task->name, "sweep")) goto cleanup;
  KD_TRY(kd_config_get_int(job->cfg, "run.seed", 0, 0, INT64_MAX, &seed));
  KD_TRY(kd_config_get_f64(job->cfg, "run.log_interval", job->saved_interval, 0.0, 1e9, &interval));
  KD_TRY(kd_config_get_str(job->cfg, "output.path", "kdistill_out.h5", NULL, 0, &job->output));
  KD_CHECK(job->output[0], KD_ERR_CONFIG, "output.path: must not be empty");
  job->tctx.comm = ctx->comm;
  if (!o->no_output) /* checked before any work */
    KD_TRY(kd_task_check_output(&job->tctx, "output.path", job->output));
  ctx->log_interval = interval;
  job->tctx.comm = ctx->comm;
  job->tctx.cfg = job->cfg;
  job->tctx.seed = (uint64_t)seed;
  job->tctx.validate_only = validate_only != 0;
  job->tctx.evaluate_only = evaluate_only;
  job->tctx.arrays = o->arrays;
  job->tctx.n_arrays = o->n_arrays;
  /* a run (kd_job_run_ reset the session): its inputs' fingerprints are recorded as they are read
   * (for a checkpoint, task/) */
  if (!validate_only && !evaluate_only) ctx->ckpt.cfg = job->cfg;
  KD_TRY(job->task->setup(&job->tctx, &job->state));
  if (check_unused) KD_TRY(kd_config_check_unused(job->cfg));
cleanup:
  return err;
}

/* A resumed state the task rejects ("checkpoint: ..." from its range checks) is named by file:
 * "<file>: checkpoint: ...". Local (the message is the same on every rank). */
static void kd_job_name_checkpoint_(kd_ctx *ctx, const char *file) {
  char buf[2 * sizeof ctx->err_msg];
  if (strncmp(ctx->err_msg, "checkpoint: ", 12) != 0) return;
  snprintf(buf, sizeof buf, "%s: %s", file, ctx->err_msg);
  size_t len = strlen(buf);
  if (len >= sizeof ctx->err_msg) len = sizeof ctx->err_msg - 1;
  memcpy(ctx->err_msg, buf, len);
  ctx->err_msg[len] = '\0';
}

static void kd_job_free_(kd_ctx *ctx, kd_job *job) {
  if (job->task && job->state) job->task->destroy(&job->state);
  kd_config_destroy(&job->cfg);
  ctx->log_interval = job->saved_interval;
}

/* Entry and exit of every entry point: bind, clear the message; agree, unbind. */
static kd_ctx *kd_job_enter_(kd_ctx *ctx) {
  kd_ctx *prev = kd_ctx_bind(ctx);
  kd_err_clear();
  kd_ctx_claims_reset(ctx); /* the files this job reads and writes (io/paths.h) */
  return prev;
}

static kd_err kd_job_leave_(kd_ctx *ctx, kd_ctx *prev, kd_err err) {
  kd_ctx_claims_reset(ctx);
  if (kd_dist_agree(ctx->comm, &err) != KD_OK && err == KD_OK) err = KD_ERR_MPI;
  kd_ctx_unbind(prev);
  return err;
}

/* --resume: read the checkpoint into *resume and record it in the session. Collective. */
static kd_err kd_job_resume_(kd_ctx *ctx, const kd_job *job, const char *path, const char *yaml,
                             kd_result *resume, char **inputs) {
  kd_err err = KD_OK;
  kd_checkpoint_session *ss = &ctx->ckpt;
  const char *algo = job->task->name; /* a task without an algorithm section (ctt_study) */
  char names[256];
  kd_task_resumable_names(names, sizeof names);
  KD_CHECK(job->task->can_resume, KD_ERR_UNSUPPORTED,
           "--resume: task %s does not checkpoint (the %s tasks do)", job->task->name, names);
  if (kd_config_has(job->cfg, "algorithm.name"))
    KD_TRY(kd_config_get_str(job->cfg, "algorithm.name", NULL, NULL, 1, &algo));
  KD_TRY(kd_checkpoint_read(ctx->comm, path, job->task->name, algo, yaml, resume,
                            &ss->resume_iteration, inputs));
  ss->resume_inputs = *inputs;
  if (ctx->rank == 0) kd_path_id(path, &ss->resumed); /* removed at the end only if unchanged */
  ss->resume = resume;
  ss->resume_path = path;
cleanup:
  return err;
}

static void kd_job_summarize_(const kd_ctx *ctx, const kd_job *job, const kd_task_info *info,
                              const kd_result *res, int wrote, kd_job_summary *sum) {
  memset(sum, 0, sizeof *sum);
  snprintf(sum->task, sizeof sum->task, "%s", job->task->name);
  snprintf(sum->algorithm, sizeof sum->algorithm, "%s", info->algorithm);
  snprintf(sum->kernel, sizeof sum->kernel, "%s", info->kernel);
  snprintf(sum->output, sizeof sum->output, "%s", wrote ? job->output : "");
  sum->n_in = info->n_in;
  sum->n = res->n;
  sum->d = res->d;
  sum->n_ranks = ctx->size;
  sum->mmd = res->mmd;
  sum->seconds = res->seconds;
  sum->kernel_evals = res->kernel_evals;
  double v = 0.0;
  sum->mmd_method = kd_result_get_metric(res, "mmd_method", &v) ? (int)v : 0;
  sum->mmd_se = 0.0;
  kd_result_get_metric(res, "mmd_se", &sum->mmd_se);
  if (sum->mmd_method == KD_MMD_SKIPPED) sum->mmd_se = NAN;
  if (sum->mmd_method == KD_MMD_BOUNDED) kd_result_get_metric(res, "mmd_bound", &sum->mmd_se);
  kd_result_get_metric(res, "seconds_load", &sum->seconds_load);
  if (kd_result_get_metric(res, "stop_reason", &v)) sum->stop_reason = (int)v;
  if (kd_result_get_metric(res, "iterations", &v)) sum->iterations = (int64_t)v;
  kd_result_get_metric(res, "seconds_evaluation", &sum->seconds_evaluation);
}

/* /metrics seconds_load: everything before the output is written that is neither the algorithm
 * (seconds, less seconds_resumed: the runs before a resume) nor the evaluation of its MMD
 * (seconds_evaluation): config, reading the data, the median length scale, the target.
 * Collective. */
static kd_err kd_job_seconds_load_(const kd_ctx *ctx, double t_start, kd_result *res) {
  kd_err err = KD_OK;
  double ev = 0.0, before = 0.0, t = kd_dist_wtime() - t_start;
  KD_TRY(kd_dist_max(ctx->comm, &t, 1));
  kd_result_get_metric(res, "seconds_evaluation", &ev);
  kd_result_get_metric(res, "seconds_resumed", &before);
  t -= (res->seconds - before) + ev;
  KD_TRY(kd_result_set_metric(res, "seconds_load", t > 0.0 ? t : 0.0));
cleanup:
  return err;
}

/* The body of kd_job_run on the bound context; when asked, the resolved configuration the output
 * file stores is copied out. Collective. */
/* Unknown keys and bad values before any input is read: the setup of a run loads its data and may
 * take the median distance (minutes at 10^8 rows) before the keys nobody read can be known. So a
 * run first sets its task up as `validate` does, on a configuration of its own that is then
 * dropped (the run's configuration, its resolved defaults and so its outputs are untouched).
 * Collective. */
static kd_err kd_job_precheck_(kd_ctx *ctx, const kd_job_opts *o) {
  kd_err err = KD_OK;
  kd_job pre;
  memset(&pre, 0, sizeof pre);
  if (o->arrays) return KD_OK; /* in-memory inputs: nothing slow is read before the check */
  const kd_log_level level = ctx->level; /* its notes come again from the run's own setup */
  ctx->level = KD_LOG_QUIET;
  err = kd_job_load_(ctx, o, KD_JOB_PRECHECK, 1, 0, &pre);
  ctx->level = level;
  kd_job_free_(ctx, &pre);
  kd_ctx_claims_reset(ctx);
  return err;
}

static kd_err kd_job_run_(kd_ctx *ctx, const kd_job_opts *o, kd_job_summary *sum, kd_result *res,
                          char **yaml_out) {
  kd_err err = KD_OK;
  kd_job job;
  memset(&job, 0, sizeof job);
  kd_result resume = KD_RESULT_INIT;
  kd_task_info info;
  char *yaml = NULL, *oyaml = NULL, *inputs = NULL;
  kd_checkpoint_session *ss = &ctx->ckpt;
  memset(&info, 0, sizeof info);
  kd_ctx_session_reset(ctx);
  kd_dist_comm_seconds_reset();
  const double t_start = kd_dist_wtime();
  double t_write = 0.0;
  KD_TRY(kd_job_precheck_(ctx, o));
  KD_TRY(kd_job_load_(ctx, o, 0, 1, 0, &job));
  KD_TRY(kd_config_emit_resolved(job.cfg, &yaml));
  ss->config_yaml = yaml;
  ss->cfg = job.cfg;
  if (o->resume) KD_TRY(kd_job_resume_(ctx, &job, o->resume, yaml, &resume, &inputs));
  /* agreed: a signal that reached only some ranks must not leave the others in a collective */
  KD_TRY(kd_dist_agreed(ctx->comm, kd_interrupt_pending()
                                       ? kd_err_set(KD_ERR_INTERRUPTED, __FILE__, __LINE__,
                                                    "interrupted before the run started")
                                       : KD_OK));
  err = job.task->run(&job.tctx, job.state, res, &info);
  if (err != KD_OK && o->resume) kd_job_name_checkpoint_(ctx, o->resume);
  KD_TRY(err);
  KD_TRY(kd_job_seconds_load_(ctx, t_start, res));
  /* --verbose: compute vs communication seconds, min / mean / max over ranks */
  if (ctx->level == KD_LOG_VERBOSE)
    KD_TRY(kd_dist_timing_report(ctx->comm, kd_dist_wtime() - t_start, res));
  const int write = !o->no_output && !info.no_output;
  if (write) {
    KD_TRY(kd_dist_agreed(ctx->comm, kd_task_output_yaml(job.cfg, res, &oyaml)));
    kd_output_meta meta = {job.task->name, info.algorithm, info.kernel,
                           ctx->size,      job.tctx.seed,  oyaml ? oyaml : yaml};
    t_write = kd_dist_wtime();
    KD_TRY(kd_output_write(ctx->comm, job.output, &meta, res));
    t_write = kd_dist_wtime() - t_write;
    KD_TRY(kd_dist_max(ctx->comm, &t_write, 1));
    /* the output is in place: the checkpoint of this run is no longer needed, nor the one it
     * resumed from (wherever that is: --resume ck.h5 without run.checkpoint_path checkpoints to
     * <output>.ckpt.h5), unless run.checkpoint_keep (ss->path ""). Removed only if each is still
     * the file this run placed there or read, unchanged: a file someone put there since is left
     * alone */
    if (ctx->rank == 0 && ss->path[0]) {
      kd_path_remove_own(ss->path, ss->last_iteration >= 0 ? &ss->written : &ss->resumed);
      if (o->resume) kd_path_remove_own(o->resume, &ss->resumed);
    }
  }
  if (yaml_out) {
    if (!oyaml) KD_TRY(kd_dist_agreed(ctx->comm, kd_task_output_yaml(job.cfg, res, &oyaml)));
    const char *src = oyaml ? oyaml : yaml;
    *yaml_out = strdup(src);
    KD_TRY(kd_dist_agreed(ctx->comm, *yaml_out ? KD_OK
                                               : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                                            "cannot copy the resolved config")));
  }
  if (sum) {
    kd_job_summarize_(ctx, &job, &info, res, write, sum);
    sum->seconds_write = t_write;
    sum->seconds_total = kd_dist_wtime() - t_start;
    KD_TRY(kd_dist_max(ctx->comm, &sum->seconds_total, 1));
  }
cleanup:
  kd_job_free_(ctx, &job);
  kd_result_free(&resume);
  kd_ctx_session_reset(ctx);
  free(yaml);
  free(oyaml);
  free(inputs);
  return err;
}

kd_err kd_job_run(kd_ctx *ctx, const kd_job_opts *o, kd_job_summary *sum, kd_result *res) {
  return kd_job_run_resolved(ctx, o, sum, res, NULL);
}

kd_err kd_job_run_resolved(kd_ctx *ctx, const kd_job_opts *o, kd_job_summary *sum, kd_result *res,
                           char **config_yaml) {
  kd_result own = KD_RESULT_INIT;
  if (!ctx) return KD_ERR_ARG;
  if (config_yaml) *config_yaml = NULL;
  kd_ctx *prev = kd_job_enter_(ctx);
  kd_err err = kd_job_run_(ctx, o, sum, res ? res : &own, config_yaml);
  kd_result_free(&own);
  err = kd_job_leave_(ctx, prev, err);
  if (err && config_yaml) {
    free(*config_yaml);
    *config_yaml = NULL;
  }
  return err;
}

kd_err kd_job_validate(kd_ctx *ctx, const kd_job_opts *o, char **yaml, char *task, int task_len) {
  kd_err err = KD_OK;
  kd_job job;
  if (!ctx) return KD_ERR_ARG;
  kd_ctx *prev = kd_job_enter_(ctx);
  if (yaml) *yaml = NULL;
  KD_TRY(kd_job_load_(ctx, o, 1, 1, 0, &job));
  if (yaml) KD_TRY(kd_config_emit_resolved(job.cfg, yaml));
  if (task && task_len > 0) snprintf(task, (size_t)task_len, "%s", job.task->name);
cleanup:
  kd_job_free_(ctx, &job);
  err = kd_job_leave_(ctx, prev, err);
  if (err && yaml) {
    free(*yaml);
    *yaml = NULL;
  }
  return err;
}

kd_err kd_job_info(kd_ctx *ctx, const char *path, FILE *out) {
  kd_err err = KD_OK;
  if (!ctx) return KD_ERR_ARG;
  kd_ctx *prev = kd_job_enter_(ctx);
  if (ctx->rank == 0) {
    err = kd_output_info(path, out);
    fflush(out);
  }
  return kd_job_leave_(ctx, prev, err);
}

/* A rule with a NaN or Inf in a point or a weight has no MMD (the sums would give NaN, and a NaN
 * compared as 0 was once reported as MMD 0): refused naming its first such row (1-based), like
 * data. Local (every rank holds the same rule). */
static kd_err kd_job_rule_finite_(const char *what, const double *points, const double *weights,
                                  int64_t n, int d) {
  kd_err err = KD_OK;
  for (int64_t i = 0; i < n; i++) {
    int ok = isfinite(weights[i]);
    for (int j = 0; j < d && ok; j++) ok = isfinite(points[i * d + j]);
    KD_CHECK(ok, KD_ERR_INPUT, "%s: row %lld of the rule has a non-finite %s (NaN or Inf)", what,
             (long long)i + 1, isfinite(weights[i]) ? "point" : "weight");
  }
cleanup:
  return err;
}

/* A Stein target works on rows (x, s(x)) of width 2d: the output's points and its
 * /coreset/scores are joined back into those rows. Local. */
static kd_err kd_job_join_scores_(const char *path, int tdim, kd_result *rule) {
  kd_err err = KD_OK;
  const kd_result_dataset *sc = kd_result_find(rule, "/coreset/scores");
  double *rows = NULL;
  if (tdim != 2 * rule->d) return KD_OK;
  KD_CHECK(sc && sc->f64, KD_ERR_INPUT,
           "%s: the config's target works on points with their scores (dimension %d) but the "
           "output has no /coreset/scores",
           path, tdim);
  const int d = rule->d;
  KD_ALLOC(rows, (size_t)rule->n * 2 * d);
  for (int64_t i = 0; i < rule->n; i++) {
    memcpy(rows + i * 2 * d, rule->points + i * d, sizeof(double) * (size_t)d);
    memcpy(rows + i * 2 * d + d, sc->f64 + i * d, sizeof(double) * (size_t)d);
  }
  free(rule->points);
  rule->points = rows;
  rows = NULL;
  rule->d = 2 * d;
cleanup:
  free(rows);
  return err;
}

/* kd_job_mmd, also saying what the value is (*method, *mmd_err as kd_job_mmd_rule_info; may be
 * NULL). Collective. */
static kd_err kd_job_mmd_(kd_ctx *ctx, const char *path, const kd_job_opts *o, double *mmd,
                          double *mmd2, double *stored, int *method, double *mmd_err) {
  kd_err err = KD_OK;
  kd_job job;
  kd_result rule = KD_RESULT_INIT;
  kd_target *t = NULL;
  kd_mmd_info info;
  char *otask = NULL;
  if (!ctx) return KD_ERR_ARG;
  kd_ctx *prev = kd_job_enter_(ctx);
  kd_job_opts eo =
      o ? *o : (kd_job_opts){0}; /* evaluation writes nothing: output.path is not checked */
  eo.no_output = 1;
  memset(&job, 0, sizeof job);
  job.saved_interval = ctx->log_interval;
  KD_TRY(kd_dist_agreed(ctx->comm, kd_output_read(path, &rule, NULL, &otask, NULL)));
  /* only a weighted rule approximating the target can be scored (a CTT output is a test) */
  KD_CHECK(!strcmp(otask, "herd") || !strcmp(otask, "thin") || !strcmp(otask, "quad"), KD_ERR_INPUT,
           "%s: written by task %s, which does not produce a quadrature rule (mmd evaluates the "
           "outputs of herd, thin and quad)",
           path, otask);
  KD_TRY(kd_job_load_(ctx, &eo, 0, 0, 1, &job));
  KD_TRY(kd_task_basic_target(job.task, job.state, &t));
  KD_TRY(kd_job_join_scores_(path, kd_target_dim(t), &rule));
  KD_CHECK(kd_target_dim(t) == rule.d, KD_ERR_INPUT,
           "%s: the rule has dimension %d but the config's target has %d", path, rule.d,
           kd_target_dim(t));
  KD_TRY(kd_job_rule_finite_(path, rule.points, rule.weights, rule.n, rule.d));
  KD_TRY(kd_mmd_eval(t, rule.points, rule.weights, (kd_lidx)rule.n, &info));
  if (mmd) *mmd = info.mmd;
  if (mmd2) *mmd2 = info.method == KD_MMD_SKIPPED ? info.mmd2_minus_self : info.mmd2;
  if (stored) *stored = rule.mmd;
  if (method) *method = (int)info.method;
  if (mmd_err) *mmd_err = info.method == KD_MMD_BOUNDED ? info.mmd_bound : info.mmd_se;
cleanup:
  kd_job_free_(ctx, &job);
  kd_result_free(&rule);
  free(otask);
  return kd_job_leave_(ctx, prev, err);
}

kd_err kd_job_mmd(kd_ctx *ctx, const char *path, const kd_job_opts *o, double *mmd, double *mmd2,
                  double *stored) {
  return kd_job_mmd_(ctx, path, o, mmd, mmd2, stored, NULL, NULL);
}

kd_err kd_output_save(kd_ctx *ctx, const char *path, const kd_result *res, const char *task,
                      const char *algorithm, const char *kernel, int n_ranks, uint64_t seed,
                      const char *config_yaml, int replace) {
  kd_err err = KD_OK, lerr = KD_OK;
  if (!ctx) return KD_ERR_ARG;
  kd_ctx *prev = kd_job_enter_(ctx);
  KD_CHECK(path && path[0] && res && res->n >= 1 && res->d >= 1 && res->points && res->weights &&
               res->indices,
           KD_ERR_ARG, "save: need a path and a result with at least one point");
  if (ctx->rank == 0 && !replace && access(path, F_OK) == 0)
    lerr = kd_err_set(KD_ERR_FILE, __FILE__, __LINE__,
                      "%s: a file is already there; it is left alone (ask to replace it)", path);
  KD_TRY(kd_dist_agreed(ctx->comm, lerr));
  const kd_output_meta meta = {task ? task : "",
                               algorithm ? algorithm : "",
                               kernel ? kernel : "",
                               n_ranks,
                               seed,
                               config_yaml ? config_yaml : ""};
  /* the check above fails early; the link at the end closes the window after it */
  KD_TRY(replace ? kd_output_write(ctx->comm, path, &meta, res)
                 : kd_output_write_new(ctx->comm, path, &meta, res));
cleanup:
  return kd_job_leave_(ctx, prev, err);
}

kd_err kd_data_read(kd_ctx *ctx, const char *section, double **rows, int64_t *n, int *d) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_config *cfg = NULL;
  kd_pointset *pts = NULL;
  kd_gidx *idx = NULL;
  char *text = NULL;
  int dd = 0;
  if (!ctx) return KD_ERR_ARG;
  kd_ctx *prev = kd_job_enter_(ctx);
  if (rows) *rows = NULL; /* freed on error below */
  KD_CHECK(section && rows && n && d, KD_ERR_ARG, "data read: NULL argument");
  *n = 0;
  *d = 0;
  /* the section as the value of a key `data`, so that messages name data.KEY */
  const size_t len = strlen(section) + 16;
  KD_ALLOC(text, len);
  snprintf(text, len, "data: %s\n", section);
  KD_TRY(kd_dist_agreed(ctx->comm, kd_config_load_string(text, "<data>", &cfg)));
  kd_task_ctx tctx;
  memset(&tctx, 0, sizeof tctx);
  tctx.comm = ctx->comm;
  tctx.cfg = cfg;
  KD_TRY(kd_task_read_pointset(&tctx, "data", &pts, NULL, &dd));
  KD_TRY(kd_dist_agreed(ctx->comm, kd_config_check_unused(cfg)));
  const kd_gidx N = kd_pointset_n_global(pts);
  KD_CHECK(kd_size_ok((int64_t)N, dd, sizeof(double), NULL) && N <= INT32_MAX, KD_ERR_INPUT,
           "data: %lld rows of dimension %d do not fit in one process's memory", (long long)N, dd);
  idx = malloc(sizeof *idx * (size_t)(N > 0 ? N : 1));
  *rows = malloc(sizeof **rows * (size_t)(N * dd > 0 ? N * dd : 1));
  if (!idx || !*rows)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "data: cannot hold %lld x %d values",
                      (long long)N, dd);
  KD_TRY(kd_dist_agreed(ctx->comm, lerr));
  for (kd_gidx i = 0; i < N; i++) idx[i] = i;
  KD_TRY(kd_pointset_gather_rows(pts, idx, (kd_lidx)N, *rows));
  *n = N;
  *d = dd;
cleanup:
  if (err && rows) {
    free(*rows);
    *rows = NULL;
  }
  free(idx);
  free(text);
  kd_pointset_destroy(&pts);
  kd_config_destroy(&cfg);
  return kd_job_leave_(ctx, prev, err);
}

kd_err kd_job_mmd_rule(kd_ctx *ctx, const kd_job_opts *o, const double *points,
                       const double *weights, int64_t n, int d, double *mmd, double *mmd2) {
  return kd_job_mmd_rule_info(ctx, o, points, weights, n, d, mmd, mmd2, NULL, NULL, NULL);
}

kd_err kd_job_mmd_rule_info(kd_ctx *ctx, const kd_job_opts *o, const double *points,
                            const double *weights, int64_t n, int d, double *mmd, double *mmd2,
                            int *method, double *mmd_err, double *mmd2_err) {
  kd_err err = KD_OK;
  kd_job job;
  kd_target *t = NULL;
  kd_mmd_info info;
  if (!ctx) return KD_ERR_ARG;
  kd_ctx *prev = kd_job_enter_(ctx);
  memset(&job, 0, sizeof job);
  job.saved_interval = ctx->log_interval;
  kd_job_opts eo =
      o ? *o : (kd_job_opts){0}; /* evaluation writes nothing: output.path is not checked */
  eo.no_output = 1;
  KD_CHECK(n >= 1 && d >= 1 && points && weights, KD_ERR_INPUT,
           "the rule is empty (%lld points of dimension %d)", (long long)n, d);
  KD_TRY(kd_job_load_(ctx, &eo, 0, 0, 1, &job));
  KD_TRY(kd_task_basic_target(job.task, job.state, &t));
  KD_CHECK(kd_target_dim(t) == d, KD_ERR_INPUT,
           "the rule has dimension %d but the target has dimension %d", d, kd_target_dim(t));
  KD_TRY(kd_job_rule_finite_("mmd", points, weights, n, d));
  KD_TRY(kd_mmd_eval(t, points, weights, (kd_lidx)n, &info));
  const int bounded = info.method == KD_MMD_BOUNDED;
  if (mmd) *mmd = info.mmd;
  if (mmd2) *mmd2 = info.method == KD_MMD_SKIPPED ? info.mmd2_minus_self : info.mmd2;
  if (method) *method = (int)info.method;
  if (mmd_err) *mmd_err = bounded ? info.mmd_bound : info.mmd_se;
  if (mmd2_err) *mmd2_err = bounded ? info.mmd2_bound : info.mmd2_se;
cleanup:
  kd_job_free_(ctx, &job);
  return kd_job_leave_(ctx, prev, err);
}

/* The config that scores the rule of output `path` against a data file: task thin (its target is
 * the data's empirical measure), data: data_yaml, and the output's own kernel section with the
 * length scale it used. Every rank reads the (small) output; errors agreed. */
static kd_err kd_job_mmd_data_config_(kd_ctx *ctx, const char *path, const char *data_yaml,
                                      char **text) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_result rule = KD_RESULT_INIT;
  kd_config *cfg = NULL;
  char *yaml = NULL, *ky = NULL;
  const char *kname = NULL;
  double ls = NAN;
  *text = NULL;
  lerr = kd_output_read(path, &rule, &yaml, NULL, NULL);
  if (lerr == KD_OK) lerr = kd_config_load_string(yaml, path, &cfg);
  if (lerr == KD_OK) lerr = kd_config_get_str(cfg, "kernel.name", "gaussian", NULL, 0, &kname);
  if (lerr == KD_OK && !strcmp(kname, "stein"))
    lerr = kd_err_set(KD_ERR_UNSUPPORTED, __FILE__, __LINE__,
                      "%s: a Stein kernel's target is its score, not a data file; evaluate with "
                      "kdistill mmd %s CONFIG",
                      path, path);
  if (lerr == KD_OK && kd_result_get_metric(&rule, "kernel_ls", &ls) && ls > 0) {
    lerr = kd_config_set_f64(cfg, "kernel.ls", ls); /* the value the run used (median) */
  }
  if (lerr == KD_OK) lerr = kd_config_emit_section(cfg, "kernel", &ky);
  if (lerr == KD_OK) {
    const size_t len = strlen(data_yaml) + strlen(ky) + 64;
    *text = malloc(len);
    if (*text)
      snprintf(*text, len, "task: thin\ndata: %s\n%s", data_yaml, ky);
    else
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "out of memory");
  }
  KD_TRY(kd_dist_agreed(ctx->comm, lerr));
cleanup:
  if (err) {
    free(*text);
    *text = NULL;
  }
  kd_config_destroy(&cfg);
  kd_result_free(&rule);
  free(yaml);
  free(ky);
  return err;
}

kd_err kd_job_mmd_file(kd_ctx *ctx, const char *path, const kd_job_opts *o, const char *data_yaml,
                       double *mmd, double *mmd2, double *stored, int *method, double *mmd_err) {
  kd_err err = KD_OK;
  char *text = NULL;
  if (!ctx || !path || !(o || data_yaml)) return KD_ERR_ARG;
  if (!data_yaml) return kd_job_mmd_(ctx, path, o, mmd, mmd2, stored, method, mmd_err);
  kd_job_opts od;
  memset(&od, 0, sizeof od);
  KD_TRY(kd_job_mmd_data_config_(ctx, path, data_yaml, &text));
  od.config = "kdistill mmd";
  od.config_text = text;
  KD_TRY(kd_job_mmd_(ctx, path, &od, mmd, mmd2, stored, method, mmd_err));
cleanup:
  free(text);
  return err;
}

kd_err kd_job_mmd_data(kd_ctx *ctx, const char *path, const char *data_yaml, double *mmd,
                       double *mmd2, double *stored) {
  if (!data_yaml) return KD_ERR_ARG;
  return kd_job_mmd_file(ctx, path, NULL, data_yaml, mmd, mmd2, stored, NULL, NULL);
}
