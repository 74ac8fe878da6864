/* task_harness.c - running one algorithm for a task: the algorithm section (descriptor and
 * parameters), the checks before anything is computed, the run with timing and evaluation
 * counting, and the MMD of its rule against the target (exact, exact to a bound, or estimated). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "core/mem.h"
#include "io/io_impl.h"
#include "task/task_impl.h"

void kd_task_key(char *buf, size_t len, const char *section, const char *key) {
  snprintf(buf, len, "%s.%s", section, key);
}

/* ------------------------------------------------------------ algorithm */
void kd_task_algo_choices(const char *task, char *buf, int len) {
  buf[0] = '\0';
  for (int i = 0; kd_algo_at(i); i++) {
    const kd_algo_desc *a = kd_algo_at(i);
    if (strcmp(a->task, task)) continue;
    size_t l = strlen(buf);
    snprintf(buf + l, (size_t)len - l, "%s%s", l ? "|" : "", a->name);
  }
}

/* The algorithm a task runs when algorithm.name is not given (docs/guide.md says why these). */
static const char *kd_task_default_algo_(const char *task) {
  static const char *const defs[][2] = {
      {"thin", "kt_compress"}, {"herd", "bpcg"}, {"quad", "nystrom_recombination"}, {"ctt", "ctt"}};
  for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
    if (!strcmp(task, defs[i][0])) return defs[i][1];
  return NULL;
}

kd_err kd_task_read_algo(const kd_task_ctx *ctx, const char *section, const char *task,
                         const kd_algo_desc **desc, kd_params *params) {
  kd_err err = KD_OK;
  char key[256], choices[2048], where[512];
  const char *name = NULL;
  *desc = NULL;
  kd_task_algo_choices(task, choices, sizeof choices);
  kd_task_key(key, sizeof key, section, "name");
  KD_CHECK(choices[0], KD_ERR_UNSUPPORTED, "%s: task %s has no registered algorithm",
           kd_config_where(ctx->cfg, key, where, sizeof where), task);
  KD_TRY(kd_config_get_str(ctx->cfg, key, kd_task_default_algo_(task), choices,
                           kd_task_default_algo_(task) == NULL, &name));
  *desc = kd_algo_find(task, name);
  KD_CHECK(*desc, KD_ERR_INTERNAL, "algorithm %s vanished from the registry", name);
  KD_TRY(kd_config_get_params(ctx->cfg, section, (*desc)->params, (*desc)->n_params, params));
cleanup:
  return err;
}

/* ------------------------------------------------------------------ run */
/* Algorithms cannot see the config; when one rejects a parameter it records the key with the
 * message (KD_CHECK_KEY, kd_err_key). Prefix the message with the key's FILE:LINE so every config
 * error reads the same way. */
static void kd_task_locate_message_(const kd_config *cfg) {
  char where[512], msg[1024];
  const char *key = kd_err_key();
  if (!key[0] || !kd_config_has(cfg, key)) return;
  snprintf(msg, sizeof msg, "%s: %s", kd_config_where(cfg, key, where, sizeof where),
           kd_err_message());
  kd_err_set_message(msg);
}

kd_err kd_task_check_algo(const kd_task_ctx *ctx, const kd_algo_desc *desc, const kd_params *p,
                          const kd_algo_shape *shape) {
  kd_err err = KD_OK;
  KD_TRY(kd_algo_check_n_out(desc, p, shape->n_in));
  if (desc->check) KD_TRY(desc->check(p, shape));
  if (desc->mem) {
    kd_algo_mem m;
    memset(&m, 0, sizeof m);
    kd_err local = desc->mem(p, shape, &m);
    if (!local)
      local = kd_mem_require(m.bytes < 1.8e19 ? (uint64_t)m.bytes : UINT64_MAX, m.what, m.key);
    KD_TRY(kd_dist_agreed(ctx->comm, local));
  }
cleanup:
  if (err == KD_ERR_CONFIG) kd_task_locate_message_(ctx->cfg);
  return err;
}

/* The MMD of the algorithm's rule against the target, unless the algorithm reported an exact
 * one: exact, exact to a bound (target.self: fgt, or auto above KD_SELF_EXACT_EVALS where the
 * fast Gauss transform applies), estimated (auto elsewhere above it, or estimate) or skipped;
 * /metrics gets mmd_method (0 exact, 1 estimate, 2 skipped, 3 bounded), the errors or bounds and
 * seconds_evaluation.
 * Collective. */
static kd_err kd_task_evaluate_(MPI_Comm comm, kd_target *target, kd_kernel *k, kd_result *res) {
  kd_err err = KD_OK;
  kd_mmd_info info;
  const double tm = kd_dist_wtime();
  double te = 0.0;
  const char *what = kd_kernel_has(k, KD_KCAP_STEIN) ? "KSD" : "MMD";
  kd_mmd_method method = target ? kd_target_mmd_method(target) : KD_MMD_EXACT;
  if (target && (isnan(res->mmd) || method != KD_MMD_EXACT)) {
    KD_TRY(kd_mmd_eval(target, res->points, res->weights, (kd_lidx)res->n, &info));
    res->mmd = info.mmd;
    method = info.method;
    if (method == KD_MMD_EXACT)
      kd_log_info("exact %s of the %lld-point rule against the target: %.6e (%.3f s)", what,
                  (long long)res->n, info.mmd, kd_dist_wtime() - tm);
    if (method == KD_MMD_ESTIMATE) {
      KD_TRY(kd_result_set_metric(res, "mmd_se", info.mmd_se));
      KD_TRY(kd_result_set_metric(res, "mmd2", info.mmd2));
      KD_TRY(kd_result_set_metric(res, "mmd2_se", info.mmd2_se));
      KD_TRY(kd_result_set_count(res, "self_rows", (int64_t)info.rows));
      if (!isnan(info.mmd2_minus_self)) /* the exact relative quality, beside the estimate */
        KD_TRY(kd_result_set_metric(res, "mmd2_minus_self", info.mmd2_minus_self));
      if (info.cross_rows > 0)
        KD_TRY(kd_result_set_count(res, "cross_rows", (int64_t)info.cross_rows));
    }
    if (method == KD_MMD_BOUNDED) {
      KD_TRY(kd_result_set_metric(res, "mmd2", info.mmd2));
      KD_TRY(kd_result_set_metric(res, "mmd2_bound", info.mmd2_bound));
      KD_TRY(kd_result_set_metric(res, "mmd_bound", info.mmd_bound));
      KD_TRY(kd_result_set_count(res, "fgt_order", (int64_t)info.fgt_order));
      KD_TRY(kd_result_set_count(res, "fgt_cells", info.fgt_cells));
    }
    if (method == KD_MMD_SKIPPED) {
      KD_TRY(kd_result_set_metric(res, "mmd2_minus_self", info.mmd2_minus_self));
      kd_log_warn(
          "the target's double integral was skipped (target.self: skip): mmd is NaN; "
          "/metrics mmd2_minus_self = MMD^2 - int int k = %.10g",
          info.mmd2_minus_self);
    }
  }
  te = kd_dist_wtime() - tm;
  KD_TRY(kd_dist_max(comm, &te, 1));
  KD_TRY(kd_result_set_count(res, "mmd_method", (int64_t)method));
  KD_TRY(kd_result_set_metric(res, "seconds_evaluation", te));
cleanup:
  return err;
}

kd_err kd_task_run_algo(const kd_task_ctx *ctx, const kd_algo_desc *desc, const kd_params *params,
                        kd_kernel *k, kd_pointset *points, kd_target *target, const void *task_in,
                        kd_ckpt *ck, kd_result *res) {
  kd_err err = KD_OK;
  kd_algo_in in;
  double t = 0;
  uint64_t evals = 0;
  memset(&in, 0, sizeof in);
  in.comm = ctx->comm;
  in.kernel = k;
  in.points = points;
  in.target = target;
  in.params = params;
  in.seed = ctx->seed;
  in.task_in = task_in;
  in.ctx = kd_ctx_current();
  in.ckpt = ck;
  res->mmd = NAN;
  kd_kernel_reset_evals(k);
  kd_log_info("running %s (%s)", desc->name, desc->summary);
  t = kd_dist_wtime();
  err = kd_dist_agreed(ctx->comm, kd_algo_run(desc, &in, res));
  if (err == KD_ERR_CONFIG) kd_task_locate_message_(ctx->cfg);
  KD_TRY(err);
  t = kd_dist_wtime() - t;
  KD_TRY(kd_dist_max(ctx->comm, &t, 1));
  evals = kd_kernel_evals(k);
  KD_TRY(kd_dist_sum_u64(ctx->comm, &evals, 1));
  res->seconds = t;
  res->kernel_evals = evals;
  KD_CHECK(res->n >= 1 && res->points && res->weights && res->indices, KD_ERR_INTERNAL,
           "algorithm %s returned no points", desc->name);
  kd_log_info("%s finished in %.3f s (%llu kernel evaluations)", desc->name, t,
              (unsigned long long)evals);
  KD_TRY(kd_task_evaluate_(ctx->comm, target, k, res));
  KD_TRY(kd_task_split_scores(k, points, res));
  kd_kernel_reset_evals(k);
cleanup:
  return err;
}

void kd_task_choices(char *buf, int len) {
  buf[0] = '\0';
  for (int i = 0; kd_task_at(i); i++) {
    size_t l = strlen(buf);
    snprintf(buf + l, (size_t)len - l, "%s%s", l ? "|" : "", kd_task_at(i)->name);
  }
}
