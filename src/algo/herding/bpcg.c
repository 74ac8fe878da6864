/* bpcg.c - Blended Pairwise Conditional Gradients for kernel herding (Tsuji, Tanaka & Pokutta,
 * Alg. 1 / Alg. 3) with the relaxed step selection of App. C:
 *   K_sc <grad, a - s> >= <grad, x - w>  -> pairwise step a -> s inside the active set (drop step
 *   when a's weight reaches 0), else a FW step toward the global LMO vertex w (line search). */
#include "algo/herding/herding_impl.h"

static const kd_param_spec kd_bpcg_params_[] = {
    KD_HERD_COMMON_PARAMS,
    {"K_sc", KD_PARAM_F64, 1.0, NULL, 1.0, 1e6, NULL,
     "relaxed step-selection factor K_sc >= 1 (App. C); larger = sparser",
     KD_PARAM_AT(kd_herd_params, K_sc)},
};

static kd_err kd_bpcg_iter_(kd_herd *h, void *ctx, int64_t it, double *gap) {
  kd_err err = KD_OK;
  const double ksc = *(const double *)ctx;
  kd_gidx g;
  int v, a, s, dropped;
  (void)it;
  kd_herd_away_local(h, &a, &s);
  KD_TRY(kd_herd_lmo_gap(h, gap, &g));
  if (h->done) goto cleanup;
  if (ksc * (kd_herd_grad(h, a) - kd_herd_grad(h, s)) >= *gap) {
    KD_TRY(kd_herd_step_pair(h, a, s, &dropped));
  } else {
    KD_TRY(kd_herd_ensure_atom(h, g, h->col, NULL, &v));
    KD_TRY(kd_herd_step_fw(h, v, -1.0, NULL));
  }
cleanup:
  return err;
}

static kd_err kd_bpcg_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_herd_params hp;
  KD_TRY(kd_herd_params_read(in->params, &hp));
  double ksc = hp.K_sc;
  KD_CHECK_KEY(ksc >= 1.0, KD_ERR_CONFIG, "algorithm.K_sc",
               "algorithm.K_sc must be >= 1 (App. C), got %g", ksc);
  KD_TRY(kd_herd_drive(in, out, kd_bpcg_iter_, &ksc, NULL));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_bpcg = {
    "bpcg",
    "herd",
    "Blended Pairwise Conditional Gradients herding (BPCG Alg. 3, K_sc of App. C)",
    kd_bpcg_params_,
    KD_HERD_N_COMMON + 1,
    kd_bpcg_run_,
    KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
    NULL,
    NULL};
