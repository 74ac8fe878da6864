/* pfw.c - pairwise Frank-Wolfe herding (BPCG paper baseline "Pairwise"): move weight from the away
 * atom to the global LMO vertex with exact line search over [0, w_away]. */
#include "algo/herding/herding_impl.h"

static const kd_param_spec kd_pfw_params_[] = {KD_HERD_COMMON_PARAMS};

static kd_err kd_pfw_iter_(kd_herd *h, void *ctx, int64_t it, double *gap) {
  kd_err err = KD_OK;
  kd_gidx g;
  int v, a, s, dropped;
  (void)ctx;
  (void)it;
  KD_TRY(kd_herd_lmo_gap(h, gap, &g));
  if (h->done) goto cleanup;
  KD_TRY(kd_herd_ensure_atom(h, g, h->col, NULL, &v));
  kd_herd_away_local(h, &a, &s);
  KD_TRY(kd_herd_step_pair(h, a, v, &dropped));
  kd_herd_prune(h);
  kd_herd_refresh(h);
cleanup:
  return err;
}

static kd_err kd_pfw_run_(const kd_algo_in *in, kd_result *out) {
  return kd_herd_drive(in, out, kd_pfw_iter_, NULL, NULL);
}

const kd_algo_desc kd_algo_pfw = {"pfw",
                                  "herd",
                                  "pairwise Frank-Wolfe herding",
                                  kd_pfw_params_,
                                  KD_HERD_N_COMMON,
                                  kd_pfw_run_,
                                  KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
                                  NULL,
                                  NULL};
