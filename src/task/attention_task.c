/* attention_task.c - `task: attention`, Thinformer (Low-Rank Thinning Alg. 1). Reads the point-set
 * sections queries (n_q x d), keys (n x d), values (n x d_v) (typically {type: hdf5, path,
 * dataset}) and the section
 *   attention: {method: kh_compress|uniform, n_out: 0 (= 2^g sqrt(n)), g: 2, delta: 0.5,
 *               threshold: tight|simplified, exact: false}
 * Output: the selected key-value pairs as the coreset (rows [k, v], indices into the keys),
 * /attention/T_hat (n_q x d_v), and with exact: true also /attention/T and the metric
 * max_abs_error = ||T_hat - T||_max. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/apps/apps_impl.h"
#include "comm/dist_impl.h"
#include "task/task_impl.h"

/* The keys of the `attention:` section, in reading order; defaults stated here only. */
static const kd_param_spec kd_attn_keys_[] = {
    {.key = "method",
     .type = KD_PARAM_STR,
     .def_str = "kh_compress",
     .choices = "kh_compress|uniform",
     .doc = "thinning of the key-value pairs (uniform: the baseline)"},
    {.key = "threshold",
     .type = KD_PARAM_STR,
     .def_str = "tight",
     .choices = "tight|simplified",
     .doc = "KH threshold: tight, or Alg. B.1's simplified one"},
    {.key = "n_out",
     .type = KD_PARAM_INT,
     .def = 0,
     .min = 0,
     .max = 1125899906842624.0, /* 2^50 */
     .doc = "pairs kept (0: the Compress output size 2^g sqrt(n))"},
    {.key = "g", .type = KD_PARAM_INT, .def = 2, .min = 0, .max = 30, .doc = "oversampling"},
    {.key = "delta",
     .type = KD_PARAM_F64,
     .def = 0.5,
     .min = 0,
     .max = 1,
     .doc = "KH-Compress failure probability"},
    {.key = "exact",
     .type = KD_PARAM_BOOL,
     .def = 0,
     .doc = "also compute the exact attention and max_abs_error"},
};

typedef struct {
  kd_pointset *Q, *K, *V;
  kd_params keys; /* kd_attn_keys_ */
  const char *method, *threshold;
  int64_t n_out, g;
  double delta;
  int exact;
} kd_attn_state_;

static void kd_attn_destroy_(void **state) {
  kd_attn_state_ *s = state ? *state : NULL;
  if (!s) return;
  kd_pointset_destroy(&s->Q);
  kd_pointset_destroy(&s->K);
  kd_pointset_destroy(&s->V);
  kd_params_free(&s->keys);
  free(s);
  *state = NULL;
}

static kd_err kd_attn_setup_(const kd_task_ctx *ctx, void **state) {
  kd_err err = KD_OK;
  kd_attn_state_ *s = NULL;
  KD_ALLOC(s, 1);
  KD_TRY(kd_task_read_pointset(ctx, "queries", &s->Q, NULL, NULL));
  KD_TRY(kd_task_read_pointset(ctx, "keys", &s->K, NULL, NULL));
  KD_TRY(kd_task_read_pointset(ctx, "values", &s->V, NULL, NULL));
  KD_TRY(kd_config_get_params(ctx->cfg, "attention", kd_attn_keys_,
                              (int)(sizeof kd_attn_keys_ / sizeof kd_attn_keys_[0]), &s->keys));
  s->method = kd_params_str(&s->keys, "method");
  s->threshold = kd_params_str(&s->keys, "threshold");
  s->n_out = kd_params_int(&s->keys, "n_out");
  s->g = kd_params_int(&s->keys, "g");
  s->delta = kd_params_f64(&s->keys, "delta");
  s->exact = kd_params_bool(&s->keys, "exact");
  if (!ctx->validate_only) {
    KD_CHECK(kd_pointset_n_global(s->K) == kd_pointset_n_global(s->V), KD_ERR_INPUT,
             "attention: keys have %lld rows but values have %lld",
             (long long)kd_pointset_n_global(s->K), (long long)kd_pointset_n_global(s->V));
    KD_CHECK(kd_pointset_dim(s->Q) == kd_pointset_dim(s->K), KD_ERR_INPUT,
             "attention: queries have dimension %d but keys %d", kd_pointset_dim(s->Q),
             kd_pointset_dim(s->K));
    KD_CHECK(s->n_out <= kd_pointset_n_global(s->K), KD_ERR_CONFIG,
             "attention.n_out = %lld exceeds the %lld keys", (long long)s->n_out,
             (long long)kd_pointset_n_global(s->K));
  }
  *state = s;
  s = NULL;
cleanup:
  kd_attn_destroy_((void **)&s);
  return err;
}

static kd_err kd_attn_run_(const kd_task_ctx *ctx, void *state, kd_result *res,
                           kd_task_info *info) {
  kd_err err = KD_OK;
  kd_attn_state_ *s = state;
  double *Th = NULL, *Te = NULL, *Ks = NULL, *Vs = NULL;
  int64_t *sel = NULL;
  kd_gidx ns = 0;
  double max_err = NAN;
  uint64_t res_evals = 0;
  const kd_gidx nq = kd_pointset_n_global(s->Q);
  const int dk = kd_pointset_dim(s->K), dv = kd_pointset_dim(s->V);
  const double t0 = kd_dist_wtime();
  const kd_attn_method meth =
      strcmp(s->method, "uniform") == 0 ? KD_ATTN_UNIFORM : KD_ATTN_KH_COMPRESS;
  KD_CHECK(meth == KD_ATTN_KH_COMPRESS || s->n_out > 0, KD_ERR_CONFIG,
           "attention.n_out: method uniform needs n_out > 0");
  KD_ALLOC(Th, nq * dv);
  if (s->exact) KD_ALLOC(Te, nq * dv);
  KD_TRY(kd_thinformer(ctx->comm, s->Q, s->K, s->V, meth, s->n_out, (int)s->g, s->delta,
                       strcmp(s->threshold, "tight") == 0, ctx->seed, Th, &sel, &ns, Te, &max_err,
                       &res_evals));
  KD_TRY(kd_result_alloc(res, ns, dk + dv));
  KD_ALLOC(Ks, ns * dk);
  KD_ALLOC(Vs, ns * dv);
  KD_TRY(kd_pointset_gather_rows(s->K, sel, ns, Ks));
  KD_TRY(kd_pointset_gather_rows(s->V, sel, ns, Vs));
  for (kd_gidx j = 0; j < ns; j++) {
    res->indices[j] = sel[j];
    memcpy(res->points + j * (dk + dv), Ks + j * dk, sizeof(double) * dk);
    memcpy(res->points + j * (dk + dv) + dk, Vs + j * dv, sizeof(double) * dv);
  }
  int64_t dims[2] = {nq, dv};
  KD_TRY(kd_result_add_f64(res, "/attention/T_hat", 2, dims, Th));
  if (s->exact) {
    KD_TRY(kd_result_add_f64(res, "/attention/T", 2, dims, Te));
    KD_TRY(kd_result_set_metric(res, "max_abs_error", max_err));
  }
  res->mmd = NAN;
  res->seconds = kd_dist_wtime() - t0;
  res->kernel_evals = res_evals;
  snprintf(info->algorithm, sizeof info->algorithm, "thinformer/%s", s->method);
  snprintf(info->kernel, sizeof info->kernel, "attention(dk=%d)", dk);
cleanup:
  free(Th);
  free(Te);
  free(Ks);
  free(Vs);
  free(sel);
  return err;
}

const kd_task_desc kd_task_attention = {
    .name = "attention",
    .summary = "Thinformer: softmax attention over a thinned key-value subset (Alg. 1)",
    .setup = kd_attn_setup_,
    .run = kd_attn_run_,
    .destroy = kd_attn_destroy_,
};
