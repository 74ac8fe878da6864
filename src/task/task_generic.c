/* task_generic.c - the three basic tasks:
 *   herd: candidates section -> point set; target section (closed form, file, or `data` = the
 *         candidates) -> mu; an algorithm of task "herd" picks a weighted rule from the candidates.
 *   thin: data section -> point set; target defaults to the empirical measure of the data; an
 *         algorithm of task "thin" returns a subset (coreset) of the data.
 *   quad: target section -> mu (closed form or file); an algorithm of task "quad" returns a
 *         quadrature rule. The optional candidates section is a sample pool passed as points.
 * Each builds the kernel for the points' dimension (ls: median computed on the relevant points
 * before any target is created), runs the algorithm through kd_task_run_algo (timing, evaluation
 * count, exact MMD) and reports the algorithm and kernel names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "comm/dist_impl.h"
#include "io/io_impl.h"
#include "task/task_impl.h"

typedef struct {
  const char *task;
  kd_pointset *points;     /* candidates / data / sample pool (may be NULL for quad) */
  kd_pointset *tpts;       /* points of a file target */
  kd_pointset *median_pts; /* quad: generated sample for the median heuristic */
  kd_kernel *kernel;
  kd_target *target;
  const kd_algo_desc *desc;
  kd_params params;
  /* checkpointing (run.checkpoint_every, run.checkpoint_path; docs/checkpoint.md) */
  int64_t ckpt_every;
  char *ckpt_path;
  int ckpt_keep; /* run.checkpoint_keep: leave the checkpoint after a successful output */
} kd_generic_state;

static void kd_generic_destroy_(void **state) {
  kd_generic_state *s = state ? *state : NULL;
  if (!s) return;
  kd_target_destroy(&s->target); /* before the point sets and kernel it borrows */
  kd_pointset_destroy(&s->tpts);
  kd_pointset_destroy(&s->points);
  kd_pointset_destroy(&s->median_pts);
  kd_kernel_destroy(&s->kernel);
  kd_params_free(&s->params);
  free(s->ckpt_path);
  free(s);
  *state = NULL;
}

/* Up-front memory estimate of one rank (docs/reliability.md), before anything is computed (and by
 * validate): the rank's block of the n x d points plus the per-point vectors the algorithms of the
 * family keep (herding: the candidates packed once more for the kernel columns, gradient, kernel
 * sums, weights, active-set and cache bookkeeping, d + 8 doubles per point; thinning: about 4).
 * Decided on the largest block, so every rank agrees. */
static kd_err kd_generic_mem_check_(const kd_task_ctx *ctx, const char *task, const char *section,
                                    kd_gidx n, int d, int lazy) {
  const int64_t per_point = d + (!strcmp(task, "herd") ? d + 8 : 4);
  int64_t rows = n / kd_dist_size(ctx->comm) + 1;
  if (lazy && rows > n / 16 + 1) rows = n / 16 + 1; /* lazy: one leaf bin (at least 16 bins) */
  size_t bytes = 0;
  char what[96];
  snprintf(what, sizeof what, "task %s on %lld %s points", task, (long long)n, section);
  if (!kd_size_ok(rows, per_point, sizeof(double), &bytes))
    return kd_mem_require(UINT64_MAX, what, "n");
  return kd_mem_require((uint64_t)bytes, what, "n");
}

/* run.checkpoint_* (docs/checkpoint.md): the herd, thin and quad tasks checkpoint - periodic with
 * checkpoint_every > 0, else on a signal; algorithms without a safe point simply run to the end. */
/* The shape the algorithm's checks see (kd_algo_shape). */
static kd_algo_shape kd_generic_shape_(const kd_task_ctx *ctx, kd_gidx n_in, kd_gidx n_target,
                                       int d) {
  kd_algo_shape sh = {n_in, n_target, d, kd_dist_size(ctx->comm), 0};
  return sh;
}

/* run.checkpoint_every asks for periodic checkpoints; an algorithm without a safe point
 * (no KD_ALGO_RESUMABLE) writes none and says so once. */
static void kd_generic_warn_no_safe_point_(const kd_task_ctx *ctx, const kd_generic_state *s) {
  if (ctx->validate_only || s->ckpt_every <= 0 || (s->desc->flags & KD_ALGO_RESUMABLE)) return;
  kd_log_warn(
      "run.checkpoint_every: %s has no safe point; it runs to the end without a "
      "checkpoint",
      s->desc->name);
}

/* herd and thin: a point set section, then kernel, median, target, algorithm. */
static kd_err kd_generic_setup_points_(const kd_task_ctx *ctx, const char *task,
                                       const char *section, void **state) {
  kd_err err = KD_OK;
  kd_generic_state *s = NULL;
  kd_gidx n = 0;
  int d = 0;
  int lazy = 0;
  KD_ALLOC(s, 1);
  s->task = task;
  if (!strcmp(task, "thin"))
    KD_TRY(kd_task_read_pointset_lazy(ctx, section, &s->points, &n, &d, &lazy));
  else
    KD_TRY(kd_task_read_pointset(ctx, section, &s->points, &n, &d));
  /* agreed: the memory each rank sees can differ (KD_MEMORY_LIMIT, cgroups, MemAvailable) */
  KD_TRY(kd_dist_agreed(ctx->comm, kd_generic_mem_check_(ctx, task, section, n, d, lazy)));
  KD_TRY(kd_task_read_kernel(ctx, "kernel", d, &s->kernel));
  if (!ctx->validate_only) KD_TRY(kd_task_kernel_finish(ctx, s->kernel, s->points));
  if (!strcmp(task, "herd")) {
    /* herding needs an explicit target (type: data = the candidates' empirical measure) */
    const char *t = NULL;
    KD_TRY(kd_config_get_str(
        ctx->cfg, "target.type", NULL,
        "data|hdf5|csv|npy|npz|memory|stein|uniform_box|gaussian|gaussian_mixture|"
        "sphere|torus|grid|trunc_gaussian",
        1, &t));
  }
  KD_TRY(kd_task_read_target(ctx, "target", s->kernel, s->points, 1, &s->target, &s->tpts));
  KD_TRY(kd_task_read_algo(ctx, "algorithm", task, &s->desc, &s->params));
  if (lazy) {
    char where[512], names[256];
    KD_CHECK(kd_algo_accepts_lazy(s->desc), KD_ERR_CONFIG,
             "%s: data.lazy: true: %s reads every row of its input; the thinning-tree algorithms "
             "(%s) generate the rows bin by bin; set lazy: false or choose one of them",
             kd_config_where(ctx->cfg, "data.lazy", where, sizeof where), s->desc->name,
             kd_algo_names_with("thin", KD_ALGO_LAZY_INPUT, names, sizeof names));
  }
  if (!ctx->evaluate_only) {
    const kd_algo_shape sh =
        kd_generic_shape_(ctx, n, s->tpts ? kd_pointset_n_global(s->tpts) : 0, d);
    KD_TRY(kd_task_check_algo(ctx, s->desc, &s->params, &sh));
  }
  KD_TRY(kd_task_read_checkpoint(ctx, &s->ckpt_every, &s->ckpt_keep, &s->ckpt_path));
  kd_generic_warn_no_safe_point_(ctx, s);
  if (!ctx->validate_only)
    kd_log_info("task %s: %lld points (%s) in %d dimension%s, kernel %s", task, (long long)n,
                section, d, d == 1 ? "" : "s", kd_kernel_describe(s->kernel));
  *state = s;
  s = NULL;
cleanup:
  kd_generic_destroy_((void **)&s);
  return err;
}

static kd_err kd_herd_setup_(const kd_task_ctx *ctx, void **state) {
  return kd_generic_setup_points_(ctx, "herd", "candidates", state);
}

static kd_err kd_thin_setup_(const kd_task_ctx *ctx, void **state) {
  return kd_generic_setup_points_(ctx, "thin", "data", state);
}

/* quad: the target fixes the dimension; the pool (candidates) is optional. */
static kd_err kd_quad_setup_(const kd_task_ctx *ctx, void **state) {
  kd_err err = KD_OK;
  kd_generic_state *s = NULL;
  kd_measure m;
  const char *type = NULL;
  int d = 0, pd = 0;
  int64_t ms = 0;
  kd_gidx n_emp = 0, n_pool = 0;
  memset(&m, 0, sizeof m);
  KD_ALLOC(s, 1);
  s->task = "quad";
  KD_TRY(kd_config_get_str(ctx->cfg, "target.type", NULL,
                           "hdf5|csv|npy|npz|memory|uniform_box|gaussian|gaussian_mixture|sphere|"
                           "torus|grid|trunc_gaussian",
                           1, &type));
  const int read = kd_task_is_file_type(type) || !strcmp(type, "memory");
  if (read) {
    KD_TRY(kd_task_read_pointset(ctx, "target", &s->tpts, &n_emp, &d));
  } else {
    KD_TRY(kd_task_read_measure(ctx, "target", &m));
    d = m.d;
  }
  if (kd_config_has(ctx->cfg, "candidates")) {
    KD_TRY(kd_task_read_pointset(ctx, "candidates", &s->points, &n_pool, &pd));
    n_emp = n_pool;
    KD_CHECK(pd == d, KD_ERR_INPUT,
             "candidates: the sample pool has dimension %d but the target has %d", pd, d);
  }
  KD_TRY(kd_task_read_kernel(ctx, "kernel", d, &s->kernel));
  if (!ctx->validate_only && kd_kernel_median_pending(s->kernel)) {
    const kd_pointset *mp = s->points ? s->points : s->tpts;
    if (!mp) {
      ms = kd_kernel_get_params(s->kernel)->median_sample;
      KD_TRY(
          kd_pointset_generate(ctx->comm, &m, ms, ctx->seed ^ 0x6d656469616eULL, &s->median_pts));
      mp = s->median_pts;
    }
    KD_TRY(kd_task_kernel_finish(ctx, s->kernel, mp));
  }
  /* validate_only: the target's file was checked above and is not checked (and logged) again */
  KD_TRY(kd_task_read_target(ctx, "target", s->kernel, NULL, 0, &s->target,
                             ctx->validate_only && read && !s->tpts ? NULL : &s->tpts));
  KD_TRY(kd_task_read_algo(ctx, "algorithm", "quad", &s->desc, &s->params));
  if (!ctx->evaluate_only) {
    const kd_algo_shape sh = kd_generic_shape_(ctx, n_pool, n_pool ? 0 : n_emp, d);
    KD_TRY(kd_task_check_algo(ctx, s->desc, &s->params, &sh));
  }
  KD_TRY(kd_task_read_checkpoint(ctx, &s->ckpt_every, &s->ckpt_keep, &s->ckpt_path));
  kd_generic_warn_no_safe_point_(ctx, s);
  if (!ctx->validate_only)
    kd_log_info("task quad: target %s in %d dimension%s, kernel %s", type, d, d == 1 ? "" : "s",
                kd_kernel_describe(s->kernel));
  *state = s;
  s = NULL;
cleanup:
  kd_measure_free(&m);
  kd_generic_destroy_((void **)&s);
  return err;
}

/* ---- checkpointing (herd, thin, quad): the task hands the algorithm a kd_ckpt whose sink writes
 * the checkpoint file, with the interval and the resume state of the session set by `kdistill run
 * --resume`. */
typedef struct {
  const kd_task_ctx *ctx;
  kd_generic_state *s;
  int64_t iteration; /* of the last checkpoint written (or skipped: written = 0) */
  int written;
} kd_generic_ckpt_ctx;

/* The sink of the run's kd_ckpt: write the state to the session's checkpoint path. Collective. */
static kd_err kd_generic_ckpt_hook_(void *vctx, const kd_result *state) {
  kd_err err = KD_OK;
  kd_generic_ckpt_ctx *c = vctx;
  const char *reason = "";
  KD_TRY(kd_task_checkpoint_write(c->ctx, c->s->task, c->s->desc->name, c->s->ckpt_path, state,
                                  &c->iteration, &reason));
  c->written = strcmp(reason, "not written") != 0;
  if (c->written)
    kd_log_info("checkpoint written at iteration %lld (%s): %s", (long long)c->iteration, reason,
                c->s->ckpt_path);
cleanup:
  return err;
}

static kd_err kd_generic_run_ckpt_(const kd_task_ctx *ctx, kd_generic_state *s, kd_result *res) {
  kd_err err = KD_OK;
  kd_generic_ckpt_ctx c = {ctx, s, -1, 0};
  kd_ckpt *ck = NULL;
  const kd_result *resume = NULL;
  KD_TRY(kd_task_ckpt_open(ctx, s->ckpt_every, s->ckpt_path, s->ckpt_keep, kd_generic_ckpt_hook_,
                           &c, &ck, &resume));
  err = kd_task_run_algo(ctx, s->desc, &s->params, s->kernel, s->points, s->target, NULL, ck, res);
  if (err == KD_ERR_INTERRUPTED && c.iteration >= 0) {
    /* every rank takes this branch (the run's error is agreed): one message naming the file; an
     * algorithm without a safe point (c.iteration < 0) keeps its "nothing was written" line */
    kd_err_clear();
    KD_CHECK(c.written, KD_ERR_INTERRUPTED,
             "interrupted at iteration %lld; no checkpoint written "
             "(run.checkpoint_on_interrupt: false)",
             (long long)c.iteration);
    KD_FAIL(KD_ERR_INTERRUPTED,
            "interrupted at iteration %lld; checkpoint written to %s (resume with --resume %s)",
            (long long)c.iteration, s->ckpt_path, s->ckpt_path);
  }
  KD_TRY(err);
  if (s->points && kd_pointset_is_lazy(s->points)) /* the MMD is to the generating measure */
    KD_TRY(kd_result_set_count(res, "data_lazy", 1));
  if (resume) { /* cumulative over the interrupted runs; /metrics seconds_resumed: their part */
    res->seconds += resume->seconds;
    res->kernel_evals += resume->kernel_evals;
    KD_TRY(kd_result_set_metric(res, "seconds_resumed", resume->seconds));
  }
cleanup:
  kd_ckpt_destroy(&ck);
  return err;
}

/* Herding and quadrature rules carry no node of weight 0 (recombination and the convex QP can
 * leave some): they are removed and counted in /metrics zero_weight_nodes_dropped. Local. */
static kd_err kd_generic_drop_zeros_(const kd_generic_state *s, kd_result *res) {
  kd_err err = KD_OK;
  kd_gidx dropped = 0;
  if (strcmp(s->task, "herd") && strcmp(s->task, "quad")) return KD_OK;
  KD_TRY(kd_result_drop_zero_weights(res, &dropped));
  KD_TRY(kd_result_set_count(res, "zero_weight_nodes_dropped", (int64_t)dropped));
  if (dropped)
    kd_log_info("%lld nodes of weight 0 left out of the output (%lld remain)", (long long)dropped,
                (long long)res->n);
cleanup:
  return err;
}

static kd_err kd_generic_run_(const kd_task_ctx *ctx, void *state, kd_result *res,
                              kd_task_info *info) {
  kd_err err = KD_OK;
  kd_generic_state *s = state;
  KD_CHECK(s && s->target, KD_ERR_INTERNAL, "task run without setup");
  snprintf(info->algorithm, sizeof info->algorithm, "%s", s->desc->name);
  info->n_in = s->points ? kd_pointset_n_global(s->points) : 0;
  if (!s->ckpt_path) {
    KD_TRY(kd_task_run_algo(ctx, s->desc, &s->params, s->kernel, s->points, s->target, NULL, NULL,
                            res));
  } else {
    KD_TRY(kd_generic_run_ckpt_(ctx, s, res));
  }
  KD_TRY(kd_generic_drop_zeros_(s, res));
  KD_TRY(kd_task_record_kernel(s->kernel, info, res));
  if (!kd_result_get_metric(res, "stop_reason", NULL)) /* not an iterative herding run */
    KD_TRY(kd_result_set_count(res, "stop_reason", KD_STOP_COMPLETE));
cleanup:
  return err;
}

const kd_task_desc kd_task_herd = {
    "herd",
    "weighted rule chosen from a candidate set to match a target (kernel herding, FW)",
    kd_herd_setup_,
    kd_generic_run_,
    kd_generic_destroy_,
    1};
const kd_task_desc kd_task_thin = {
    "thin",
    "coreset of a data set matching its empirical distribution (or a target)",
    kd_thin_setup_,
    kd_generic_run_,
    kd_generic_destroy_,
    1};
const kd_task_desc kd_task_quad = {"quad",
                                   "convex quadrature rule for a target measure",
                                   kd_quad_setup_,
                                   kd_generic_run_,
                                   kd_generic_destroy_,
                                   1};

kd_err kd_task_basic_target(const kd_task_desc *task, void *state, kd_target **t) {
  kd_err err = KD_OK;
  const kd_generic_state *s = state;
  *t = NULL;
  KD_CHECK(task == &kd_task_herd || task == &kd_task_thin || task == &kd_task_quad,
           KD_ERR_UNSUPPORTED, "kdistill mmd: task %s is not supported (herd, thin, quad are)",
           task->name);
  KD_CHECK(s && s->target, KD_ERR_INTERNAL, "kdistill mmd: the task built no target");
  *t = s->target;
cleanup:
  return err;
}
