/* recombine_task.c - `task: recombine`: Caratheodory recombination (Hayakawa, Oberhauser & Lyons,
 * Remark 1) of any weighted point set against any test-function matrix, reusing recombination.c.
 *
 *   task: recombine
 *   data:           a point-set section (N x d rows; the rule's support is taken from these rows)
 *   test_functions: optional point-set section (N x m matrix, row i = the m test functions at
 *                   data row i); default: the data coordinates themselves (m = d)
 *   recombine:      {leaves: 0}   (0 = auto: min(16, N / (8(m+1))), at least 1)
 *
 * The task reads the keys and the inputs; kd_recomb_rows (algo/quadrature/recombine_rows.c)
 * computes. Output: at most m+1 data rows (indices = 0-based data rows) with weights >= 0 summing
 * to 1 whose weighted test-function means equal those of the (weighted) data; /metrics
 * max_mean_error (the largest relative mean error) and test_functions = m. Rows are moved to their
 * leaves one rank block at a time (a broadcast per rank), so the rule does not depend on the rank
 * count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/quadrature/recombine_rows.h"
#include "task/task_impl.h"

/* The keys of the `recombine:` section; defaults stated here only. */
static const kd_param_spec kd_recombine_keys_[] = {
    {.key = "leaves",
     .type = KD_PARAM_INT,
     .def = 0,
     .min = 0,
     .max = 1e6,
     .doc = "leaves of the recombination tree (0: min(16, N / (8(m+1))), at least 1)"},
};

typedef struct {
  kd_pointset *data, *tf;
  int64_t leaves;
} kd_recombine_state_;

static void kd_recombine_destroy_(void **state) {
  kd_recombine_state_ *s = state ? *state : NULL;
  if (!s) return;
  kd_pointset_destroy(&s->data);
  kd_pointset_destroy(&s->tf);
  free(s);
  *state = NULL;
}

static kd_err kd_recombine_setup_(const kd_task_ctx *ctx, void **state) {
  kd_err err = KD_OK;
  kd_recombine_state_ *s = NULL;
  kd_params keys = {0};
  KD_ALLOC(s, 1);
  KD_TRY(kd_task_read_pointset(ctx, "data", &s->data, NULL, NULL));
  if (kd_config_has(ctx->cfg, "test_functions"))
    KD_TRY(kd_task_read_pointset(ctx, "test_functions", &s->tf, NULL, NULL));
  KD_TRY(kd_config_get_params(ctx->cfg, "recombine", kd_recombine_keys_,
                              (int)(sizeof kd_recombine_keys_ / sizeof kd_recombine_keys_[0]),
                              &keys));
  s->leaves = kd_params_int(&keys, "leaves");
  if (s->data && s->tf)
    KD_CHECK(kd_pointset_n_global(s->tf) == kd_pointset_n_global(s->data), KD_ERR_INPUT,
             "test_functions: %lld rows but data has %lld", (long long)kd_pointset_n_global(s->tf),
             (long long)kd_pointset_n_global(s->data));
  *state = s;
  s = NULL;
cleanup:
  kd_params_free(&keys);
  kd_recombine_destroy_((void **)&s);
  return err;
}

static kd_err kd_recombine_run_(const kd_task_ctx *ctx, void *state, kd_result *res,
                                kd_task_info *info) {
  kd_err err = KD_OK;
  kd_recombine_state_ *s = state;
  kd_recomb_set rule = {0};
  double *sums = NULL, *rsum = NULL;
  KD_CHECK(s && s->data, KD_ERR_INTERNAL, "task run without setup");
  const kd_pointset *F = s->tf ? s->tf : s->data;
  const int m = kd_pointset_dim(F), d = kd_pointset_dim(s->data);
  const int64_t N = kd_pointset_n_global(s->data);
  int64_t T = s->leaves > 0 ? s->leaves : N / (8 * (int64_t)(m + 1));
  if (s->leaves == 0 && T > 16) T = 16;
  if (T < 1) T = 1;
  if (T > N) T = N;
  snprintf(info->algorithm, sizeof info->algorithm, "recombination");
  snprintf(info->kernel, sizeof info->kernel, "none");
  KD_ALLOC(sums, m + 1);
  KD_ALLOC(rsum, m + 1);
  KD_TRY(kd_recomb_rows(ctx->comm, s->data, F, T, &rule, sums));
  /* the rule: data rows, normalised weights, check of the means */
  KD_TRY(kd_result_alloc(res, rule.n, d));
  double tw = 0;
  for (int64_t i = 0; i < rule.n; i++) tw += rule.w[i];
  for (int64_t i = 0; i < rule.n; i++) {
    res->indices[i] = rule.gid[i];
    res->weights[i] = rule.w[i] / tw;
    rsum[m] += rule.w[i];
    for (int q = 0; q < m; q++) rsum[q] += rule.w[i] * rule.F[i * m + q];
  }
  KD_TRY(kd_pointset_gather_rows(s->data, rule.gid, rule.n, res->points));
  double worst = fabs(rsum[m] - sums[m]) / fabs(sums[m]);
  for (int q = 0; q < m; q++)
    worst = fmax(worst, fabs(rsum[q] - sums[q]) / fmax(fabs(sums[q]), 1e-300));
  res->mmd = NAN;
  KD_TRY(kd_result_set_metric(res, "max_mean_error", worst));
  KD_TRY(kd_result_set_count(res, "test_functions", (int64_t)m));
  KD_TRY(kd_result_set_count(res, "leaves", (int64_t)T));
cleanup:
  kd_recomb_set_free(&rule);
  free(sums);
  free(rsum);
  return err;
}

/* designated initialisers: fields added later to kd_task_desc stay zero (NULL) */
const kd_task_desc kd_task_recombine = {
    .name = "recombine",
    .summary =
        "Caratheodory recombination of a weighted point set to <= m+1 rows matching m "
        "test-function means",
    .setup = kd_recombine_setup_,
    .run = kd_recombine_run_,
    .destroy = kd_recombine_destroy_};
