/* sc.c - Stein Cholesky (Li, Dwivedi, Mackey et al. 2024, "Debiased distribution compression",
 * SC): a weighted coreset of n_out rows of a biased sample whose weights sum to 1.
 *   1. debias: simplex weights w over all n rows minimising KSD(w)^2 = w^T K_p w (kd_stein_pfw;
 *      lsc, LSC: the low-rank debiasing of low_rank_debias.c);
 *   2. select: n_out pivots of the weighted randomly pivoted Cholesky of K_p, pivot drawn in
 *      proportion to w_i times the residual diagonal (kd_stein_rpc_factor with weights), so the
 *      rows carry the debiased measure's mass;
 *   3. weigh: `weights: constant` (the paper's constant-preserving weights): the minimiser of
 *      1/2 v^T K_SS v - z_S^T v subject to sum v = 1, with no sign constraint,
 *        v = K_SS^-1 (z_S + lambda 1),  lambda = (1 - 1^T K_SS^-1 z_S) / 1^T K_SS^-1 1
 *      (z = 0 for the Stein target: v = K_SS^-1 1 / 1^T K_SS^-1 1), by a Cholesky solve that
 *      every rank does on the same replicated matrix; `weights: simplex`: the simplex QP instead
 *      (non-negative weights, a convex rule).
 * Constant-preserving weights may be negative: the rule integrates constants exactly but is not a
 * probability measure (/metrics signed_weights = 1 says so). /metrics mmd_uniform_weights keeps
 * the KSD of 1/n_out weights. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/stein/stein_impl.h"
#include "comm/dist_impl.h"

extern void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
extern void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a,
                    const int *lda, double *b, const int *ldb, int *info);

typedef struct {
  int64_t n_out, iters;
  int weights; /* index in constant|simplex */
  kd_stein_ld_opts ld;
} kd_sc_params_;

#define KD_SC_SPEC                                                                           \
  KD_PARAM_N_OUT(kd_sc_params_, n_out, 1, 1e5, "number of output points (pivots)"), {        \
    "weights", KD_PARAM_STR, 0, "constant", 0, 0, "constant|simplex",                        \
        "constant: the KSD-optimal weights summing to 1 (may be negative); simplex: convex", \
        KD_PARAM_AT_INDEX(kd_sc_params_, weights)                                            \
  }

static const kd_param_spec kd_sc_spec_[] = {
    KD_SC_SPEC,
    {"reweight_iter", KD_PARAM_INT, 2000, NULL, 1, 1e9, NULL,
     "pairwise Frank-Wolfe steps of the simplex reweighting (stops earlier at the optimum)",
     KD_PARAM_AT(kd_sc_params_, iters)},
};

static const kd_param_spec kd_lsc_spec_[] = {KD_SC_SPEC, KD_STEIN_LD_SPEC(kd_sc_params_)};

/* v = K^-1 (z + lambda 1) with 1^T v = 1; K (m x m, overwritten by its Cholesky factor). A K that
 * is numerically singular gets a diagonal shift of 1e-12, 1e-10, ... times its mean diagonal. */
static kd_err kd_sc_constant_(int m, double *K, const double *z, double *v) {
  kd_err err = KD_OK;
  double *A = NULL, *b = NULL, md = 0.0;
  int info = 1, two = 2;
  KD_ALLOC(A, (size_t)m * m);
  KD_ALLOC(b, 2 * (size_t)m);
  for (int i = 0; i < m; i++) md += K[(size_t)i * m + i] / m;
  for (int tries = 0; tries < 5 && info != 0; tries++) {
    memcpy(A, K, sizeof(double) * (size_t)m * m);
    if (tries)
      for (int i = 0; i < m; i++) A[(size_t)i * m + i] += md * pow(10.0, 2.0 * tries - 14.0);
    dpotrf_("L", &m, A, &m, &info);
  }
  KD_CHECK(info == 0, KD_ERR_NUMERIC,
           "sc: the kernel matrix of the %d pivots is not positive definite (lower n_out)", m);
  for (int i = 0; i < m; i++) b[i] = 1.0, b[m + i] = z[i];
  dpotrs_("L", &m, &two, A, &m, b, &m, &info);
  KD_CHECK(info == 0, KD_ERR_NUMERIC, "sc: the Cholesky solve failed (info %d)", info);
  double s1 = 0.0, sz = 0.0;
  for (int i = 0; i < m; i++) s1 += b[i], sz += b[m + i];
  KD_CHECK(s1 != 0.0 && isfinite(s1) && isfinite(sz), KD_ERR_NUMERIC,
           "sc: the constant-preserving weights are undefined (1^T K^-1 1 = %g)", s1);
  const double lambda = (1.0 - sz) / s1;
  double tot = 0.0;
  for (int i = 0; i < m; i++) v[i] = fma(lambda, b[i], b[m + i]), tot += v[i];
  KD_CHECK(fabs(tot - 1.0) < 1e-6, KD_ERR_NUMERIC,
           "sc: the constant-preserving weights sum to %.17g (the pivots' kernel matrix is too "
           "ill-conditioned: lower n_out or use weights: simplex)",
           tot);
  for (int i = 0; i < m; i++) v[i] /= tot; /* the round-off of the solve */
cleanup:
  free(A);
  free(b);
  return err;
}

static kd_err kd_sc_weights_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  const kd_lidx m = (kd_lidx)out->n;
  double *Q = NULL, *z = NULL, mmd = NAN;
  KD_TRY(kd_mmd(in->target, out->points, out->weights, m, &mmd, NULL));
  KD_TRY(kd_result_set_metric(out, "mmd_uniform_weights", mmd));
  KD_ALLOC(Q, (size_t)m * m);
  KD_ALLOC(z, m);
  KD_TRY(kd_kernel_eval_block(in->kernel, out->points, m, out->points, m, Q, m));
  KD_TRY(kd_target_embed_rows(in->target, out->points, m, z));
  KD_TRY(kd_sc_constant_((int)m, Q, z, out->weights));
  KD_TRY(kd_mmd(in->target, out->points, out->weights, m, &mmd, NULL));
  out->mmd = mmd;
cleanup:
  free(Q);
  free(z);
  return err;
}

static kd_err kd_sc_common_(const kd_algo_in *in, int low_rank, kd_result *out) {
  kd_err err = KD_OK;
  kd_sc_params_ p = {0};
  kd_gidx *piv = NULL;
  double *w = NULL, *F = NULL, obj = NAN;
  int64_t m = 0, steps = 0;
  KD_TRY(kd_params_fill(in->params, &p));
  const kd_lidx nl = kd_pointset_n_local(in->points);
  KD_ALLOC_AGREED(in->comm, w, nl);
  KD_ALLOC_AGREED(in->comm, piv, p.n_out);
  if (low_rank)
    KD_TRY(kd_stein_ld(in, &p.ld, w, &obj));
  else
    KD_TRY(kd_stein_pfw(in, p.iters, w, &steps));
  KD_TRY(kd_stein_rpc_factor(in, p.n_out, w, &F, piv, &m, NULL));
  KD_CHECK(m >= 1, KD_ERR_NUMERIC, "sc: the kernel matrix is zero where the weights are");
  KD_TRY(kd_result_alloc(out, m, kd_pointset_dim(in->points)));
  KD_TRY(kd_pointset_gather_rows(in->points, piv, m, out->points));
  for (int64_t i = 0; i < m; i++) out->indices[i] = piv[i];
  if (p.weights == 1) {
    KD_TRY(kd_stein_simplex_weights(in, 0, "mmd_uniform_weights", out));
  } else {
    KD_TRY(kd_dist_agreed(in->comm, kd_sc_weights_(in, out)));
    KD_TRY(kd_result_set_count(out, "signed_weights", 1));
  }
  if (low_rank)
    KD_TRY(kd_result_set_metric(out, "debias_model_objective", obj));
  else
    KD_TRY(kd_result_set_count(out, "reweight_steps", steps));
cleanup:
  kd_interrupt_anywhere(0);
  free(w), free(F), free(piv);
  return err;
}

static kd_err kd_sc_run_(const kd_algo_in *in, kd_result *out) { return kd_sc_common_(in, 0, out); }

static kd_err kd_lsc_run_(const kd_algo_in *in, kd_result *out) {
  return kd_sc_common_(in, 1, out);
}

const kd_algo_desc kd_algo_sc = {
    "sc",
    "thin",
    "Stein Cholesky (Li et al. 2024): simplex reweighting against the target (KSD), weighted "
    "RPCholesky pivots, constant-preserving (or simplex) weights",
    kd_sc_spec_,
    (int)(sizeof kd_sc_spec_ / sizeof kd_sc_spec_[0]),
    kd_sc_run_,
    KD_ALGO_SCORE | KD_ALGO_N_OUT | KD_ALGO_WEIGHTED,
    NULL,
    NULL};

const kd_algo_desc kd_algo_lsc = {
    "lsc",
    "thin",
    "low-rank Stein Cholesky (Li et al. 2024): low-rank debiasing, weighted RPCholesky pivots, "
    "constant-preserving (or simplex) weights",
    kd_lsc_spec_,
    (int)(sizeof kd_lsc_spec_ / sizeof kd_lsc_spec_[0]),
    kd_lsc_run_,
    KD_ALGO_SCORE | KD_ALGO_N_OUT | KD_ALGO_WEIGHTED,
    NULL,
    NULL};
