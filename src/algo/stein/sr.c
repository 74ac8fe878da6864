/* sr.c - Stein recombination (Li, Dwivedi, Mackey et al. 2024, "Debiased distribution
 * compression", SR): a simplex-weighted coreset of at most n_out rows of a biased sample.
 *   1. debias: simplex weights w over all n rows minimising KSD(w)^2 = w^T K_p w (kd_stein_pfw);
 *   2. features: the n_out - 1 columns of the randomly pivoted Cholesky factor F of K_p (a Nystrom
 *      approximation of the kernel, kd_stein_rpc_factor);
 *   3. recombine: Caratheodory recombination (quadrature/recombine_rows.h) of the measure
 *      sum_i w_i delta_{x_i} to at most n_out of its rows with the same weighted sums of the
 *      features and the same total weight;
 *   4. reweight: the simplex QP of those rows against the target (the KSD-optimal convex weights).
 * The paper's SR preserves the low-rank approximation of the debiased measure the same way;
 * docs/stein.md says where this transcription simplifies (the QP solver of step 1, step 4).
 * With any other kernel/target pair the same steps compress towards that target. lsr (LSR) uses
 * the low-rank debiasing (low_rank_debias.c) in step 1 and draws the step-2 pivots in proportion
 * to the debiased weights (weighted RPCholesky). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/quadrature/recombine_rows.h"
#include "algo/stein/stein_impl.h"
#include "comm/dist_impl.h"

typedef struct {
  int64_t n_out, iters;
  kd_stein_ld_opts ld;
} kd_sr_params_;

#define KD_SR_N_OUT_SPEC                       \
  KD_PARAM_N_OUT(kd_sr_params_, n_out, 2, 1e6, \
                 "at most this many output points (n_out - 1 recombination features)")

static const kd_param_spec kd_sr_spec_[] = {
    KD_SR_N_OUT_SPEC,
    {"reweight_iter", KD_PARAM_INT, 2000, NULL, 1, 1e9, NULL,
     "pairwise Frank-Wolfe steps of the simplex reweighting (stops earlier at the optimum)",
     KD_PARAM_AT(kd_sr_params_, iters)},
};

/* LSR: the low-rank debiasing's options instead of reweight_iter */
static const kd_param_spec kd_lsr_spec_[] = {KD_SR_N_OUT_SPEC, KD_STEIN_LD_SPEC(kd_sr_params_)};

/* the weighted copy of the input and the feature rows, both distributed like the input */
static kd_err kd_sr_sets_(const kd_algo_in *in, double *w, const double *F, int64_t r,
                          kd_pointset **data, kd_pointset **feat) {
  kd_err err = KD_OK;
  const kd_pointset *ps = in->points;
  const kd_lidx nl = kd_pointset_n_local(ps);
  const int d = kd_pointset_dim(ps);
  double *rows = NULL;
  KD_TRY(kd_pointset_create(in->comm, kd_pointset_n_global(ps), d, data));
  KD_TRY(kd_pointset_create(in->comm, kd_pointset_n_global(ps), (int)r, feat));
  kd_pointset_get_rows(*data, &rows);
  if (nl > 0) memcpy(rows, kd_pointset_rows_const(ps), sizeof(double) * (size_t)nl * d);
  kd_pointset_restore_rows(*data, &rows);
  /* w on a grid of 2^-40: the global sum the point set normalises by is then exact, hence the
   * same bits at any rank count (relative change of a weight <= 2^-40 / w) */
  for (kd_lidx i = 0; i < nl; i++) w[i] = nearbyint(w[i] * 0x1p40) * 0x1p-40;
  KD_TRY(kd_pointset_set_weights(*data, w));
  kd_pointset_get_rows(*feat, &rows);
  for (kd_lidx i = 0; i < nl; i++)
    for (int64_t j = 0; j < r; j++) rows[i * r + j] = F[j * nl + i];
  kd_pointset_restore_rows(*feat, &rows);
cleanup:
  return err;
}

static kd_err kd_sr_common_(const kd_algo_in *in, int low_rank, kd_result *out) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_sr_params_ p = {0};
  kd_pointset *data = NULL, *feat = NULL;
  kd_recomb_set rule;
  kd_gidx *piv = NULL;
  double *w = NULL, *F = NULL, *sums = NULL;
  int64_t steps = 0, r = 0;
  memset(&rule, 0, sizeof rule);
  KD_TRY(kd_params_fill(in->params, &p));
  const kd_gidx n = kd_pointset_n_global(in->points);
  const kd_lidx nl = kd_pointset_n_local(in->points);
  w = calloc((size_t)(nl > 0 ? nl : 1), sizeof *w);
  piv = calloc((size_t)p.n_out, sizeof *piv);
  sums = calloc((size_t)p.n_out + 1, sizeof *sums);
  if (!w || !piv || !sums) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "sr: out of memory");
  KD_TRY(kd_dist_agreed(in->comm, lerr));
  double obj = NAN;
  if (low_rank)
    KD_TRY(kd_stein_ld(in, &p.ld, w, &obj));
  else
    KD_TRY(kd_stein_pfw(in, p.iters, w, &steps));
  /* LSR's features come from the weighted RPCholesky of its debiased weights (Li et al.) */
  KD_TRY(kd_stein_rpc_factor(in, p.n_out - 1, low_rank ? w : NULL, &F, piv, &r, NULL));
  KD_CHECK(r >= 1, KD_ERR_NUMERIC, "sr: the kernel matrix is zero");
  KD_TRY(kd_sr_sets_(in, w, F, r, &data, &feat));
  int64_t T = n / (8 * (r + 1));
  T = T < 1 ? 1 : (T > 16 ? 16 : T);
  KD_TRY(kd_recomb_rows(in->comm, data, feat, T, &rule, sums));
  KD_CHECK(rule.n >= 1, KD_ERR_NUMERIC, "sr: recombination returned no points");
  KD_TRY(kd_result_alloc(out, rule.n, kd_pointset_dim(in->points)));
  KD_TRY(kd_pointset_gather_rows(in->points, rule.gid, (kd_lidx)rule.n, out->points));
  double tot = 0.0;
  for (int64_t i = 0; i < rule.n; i++) tot += rule.w[i];
  for (int64_t i = 0; i < rule.n; i++) {
    out->indices[i] = rule.gid[i];
    out->weights[i] = rule.w[i] / tot;
  }
  double mmd = NAN;
  KD_TRY(kd_mmd(in->target, out->points, out->weights, (kd_lidx)rule.n, &mmd, NULL));
  KD_TRY(kd_result_set_metric(out, "mmd_recombination_weights", mmd));
  KD_TRY(kd_stein_simplex_weights(in, 0, NULL, out)); /* mmd_recombination_weights above */
  if (low_rank)
    KD_TRY(kd_result_set_metric(out, "debias_model_objective", obj));
  else
    KD_TRY(kd_result_set_count(out, "reweight_steps", (int64_t)steps));
cleanup:
  kd_recomb_set_free(&rule);
  kd_pointset_destroy(&data);
  kd_pointset_destroy(&feat);
  free(w), free(F), free(piv), free(sums);
  return err;
}

static kd_err kd_sr_run_(const kd_algo_in *in, kd_result *out) { return kd_sr_common_(in, 0, out); }

static kd_err kd_lsr_run_(const kd_algo_in *in, kd_result *out) {
  return kd_sr_common_(in, 1, out);
}

const kd_algo_desc kd_algo_sr = {
    "sr",
    "thin",
    "Stein recombination (Li et al. 2024): simplex reweighting against the target, recombination "
    "to n_out rows preserving RPCholesky features, simplex weights",
    kd_sr_spec_,
    (int)(sizeof kd_sr_spec_ / sizeof kd_sr_spec_[0]),
    kd_sr_run_,
    KD_ALGO_SCORE | KD_ALGO_N_OUT | KD_ALGO_WEIGHTED,
    NULL,
    NULL};

const kd_algo_desc kd_algo_lsr = {
    "lsr",
    "thin",
    "low-rank Stein recombination (Li et al. 2024): low-rank debiasing, recombination to n_out "
    "rows preserving weighted-RPCholesky features, simplex weights",
    kd_lsr_spec_,
    (int)(sizeof kd_lsr_spec_ / sizeof kd_lsr_spec_[0]),
    kd_lsr_run_,
    KD_ALGO_SCORE | KD_ALGO_N_OUT | KD_ALGO_WEIGHTED,
    NULL,
    NULL};
