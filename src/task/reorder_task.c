/* reorder_task.c - `task: reorder`, thinned SGD reordering (Low-Rank Thinning Alg. 2) with
 * LKH(1/(2K)). Reads the point-set section data (the n x d stochastic gradients x_i =
 * grad f_{pi_k(i)} in processing order), the optional point-set section permutation (the prior
 * order pi_k, n integers 0..n-1, e.g. {type: hdf5, path, dataset}; default identity) and
 *   reorder: {epochs: 1 (K; delta = 1/(2K)), delta: 0 (> 0 overrides 1/(2K))}
 * Output: /reorder/permutation (int64, n) = pi_{k+1}; the coreset is the half LKH kept (rows of
 * data, in processing order); metrics prefix_discrepancy before and after (max_j ||sum_{i<=j}
 * (x_pi(i) - mean)||_2 for the input order and for pi_{k+1}). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/apps/apps_impl.h"
#include "comm/dist_impl.h"
#include "task/task_impl.h"

/* The keys of the `reorder:` section, in reading order; defaults stated here only. */
static const kd_param_spec kd_reorder_keys_[] = {
    {.key = "epochs",
     .type = KD_PARAM_INT,
     .def = 1,
     .min = 1,
     .max = 1e9,
     .doc = "K: LKH(delta) with delta = 1/(2K)"},
    {.key = "delta",
     .type = KD_PARAM_F64,
     .def = 0,
     .min = 0,
     .max = 1,
     .doc = "> 0 overrides 1/(2K)"},
};

typedef struct {
  kd_pointset *X, *P;
  int64_t epochs;
  double delta;
} kd_reorder_state_;

static void kd_reorder_destroy_(void **state) {
  kd_reorder_state_ *s = state ? *state : NULL;
  if (!s) return;
  kd_pointset_destroy(&s->X);
  kd_pointset_destroy(&s->P);
  free(s);
  *state = NULL;
}

static kd_err kd_reorder_setup_(const kd_task_ctx *ctx, void **state) {
  kd_err err = KD_OK;
  kd_reorder_state_ *s = NULL;
  kd_params keys = {0};
  KD_ALLOC(s, 1);
  KD_TRY(kd_task_read_pointset(ctx, "data", &s->X, NULL, NULL));
  if (kd_config_has(ctx->cfg, "permutation"))
    KD_TRY(kd_task_read_pointset(ctx, "permutation", &s->P, NULL, NULL));
  KD_TRY(kd_config_get_params(ctx->cfg, "reorder", kd_reorder_keys_,
                              (int)(sizeof kd_reorder_keys_ / sizeof kd_reorder_keys_[0]), &keys));
  s->epochs = kd_params_int(&keys, "epochs");
  s->delta = kd_params_f64(&keys, "delta");
  if (!ctx->validate_only && s->P) {
    KD_CHECK(kd_pointset_dim(s->P) == 1 && kd_pointset_n_global(s->P) == kd_pointset_n_global(s->X),
             KD_ERR_INPUT, "permutation: need %lld integers (one column), got %lld x %d",
             (long long)kd_pointset_n_global(s->X), (long long)kd_pointset_n_global(s->P),
             kd_pointset_dim(s->P));
  }
  *state = s;
  s = NULL;
cleanup:
  kd_params_free(&keys);
  kd_reorder_destroy_((void **)&s);
  return err;
}

static kd_err kd_reorder_run_(const kd_task_ctx *ctx, void *state, kd_result *res,
                              kd_task_info *info) {
  kd_err err = KD_OK;
  kd_reorder_state_ *s = state;
  const kd_gidx n = kd_pointset_n_global(s->X);
  const int d = kd_pointset_dim(s->X);
  int64_t *pi = NULL, *pn = NULL, *pos = NULL, *keep = NULL;
  double *pd = NULL, *G = NULL;
  char *seen = NULL;
  const double t0 = kd_dist_wtime();
  KD_ALLOC(pi, n);
  KD_ALLOC(pn, n);
  KD_ALLOC(pos, n);
  KD_ALLOC(seen, n);
  if (s->P) {
    KD_ALLOC(pd, n);
    KD_TRY(kd_pointset_allgather(s->P, pd));
    for (kd_gidx i = 0; i < n; i++) {
      KD_CHECK(pd[i] == floor(pd[i]) && pd[i] >= 0 && pd[i] < (double)n && !seen[(int64_t)pd[i]],
               KD_ERR_INPUT, "permutation: entry %lld (= %g) is not a new integer in [0, %lld)",
               (long long)i + 1, pd[i], (long long)n);
      seen[(int64_t)pd[i]] = 1;
      pi[i] = (int64_t)pd[i];
    }
  } else {
    for (kd_gidx i = 0; i < n; i++) pi[i] = i;
  }
  const double delta = s->delta > 0 ? s->delta : 1.0 / (2.0 * (double)s->epochs);
  KD_CHECK(delta > 0 && delta < 1, KD_ERR_CONFIG, "reorder.delta = %g: must be in (0,1)", delta);
  KD_TRY(kd_thin_reorder(ctx->comm, s->X, pi, delta, ctx->seed, pn));
  /* the kept half: rows of data (processing order) holding pi_{k+1}[0 .. n/2) */
  for (kd_gidx i = 0; i < n; i++) pos[pi[i]] = i;
  const kd_gidx h = n / 2;
  KD_ALLOC(keep, h);
  for (kd_gidx j = 0; j < h; j++) keep[j] = pos[pn[j]];
  KD_TRY(kd_result_alloc(res, h, d));
  KD_TRY(kd_pointset_gather_rows(s->X, keep, h, res->points));
  for (kd_gidx j = 0; j < h; j++) res->indices[j] = keep[j];
  int64_t dims[1] = {n};
  KD_TRY(kd_result_add_i64(res, "/reorder/permutation", 1, dims, pn));
  /* prefix discrepancies of the gradients by datapoint id: G[pi[i]] = x_i */
  KD_ALLOC(G, n * d);
  {
    double *Xa = NULL;
    KD_ALLOC(Xa, n * d);
    err = kd_pointset_allgather(s->X, Xa);
    if (err == KD_OK)
      for (kd_gidx i = 0; i < n; i++) memcpy(G + pi[i] * d, Xa + i * d, sizeof(double) * d);
    free(Xa);
    KD_TRY(err);
  }
  KD_TRY(
      kd_result_set_metric(res, "prefix_discrepancy_before", kd_prefix_discrepancy(G, n, d, pi)));
  KD_TRY(kd_result_set_metric(res, "prefix_discrepancy_after", kd_prefix_discrepancy(G, n, d, pn)));
  KD_TRY(kd_result_set_metric(res, "delta", delta));
  res->mmd = NAN;
  res->seconds = kd_dist_wtime() - t0;
  snprintf(info->algorithm, sizeof info->algorithm, "lkh_reorder");
  snprintf(info->kernel, sizeof info->kernel, "linear(c=0)");
cleanup:
  free(pi);
  free(pn);
  free(pos);
  free(keep);
  free(pd);
  free(G);
  free(seen);
  return err;
}

const kd_task_desc kd_task_reorder = {
    .name = "reorder",
    .summary = "thinned SGD reordering with LKH(1/(2K)) (Alg. 2): gradients in, permutation out",
    .setup = kd_reorder_setup_,
    .run = kd_reorder_run_,
    .destroy = kd_reorder_destroy_,
};
