/* afw.c - away-step Frank-Wolfe herding (BPCG paper baseline "Away"; Lacoste-Julien & Jaggi):
 * FW step toward the LMO vertex if its gap is at least the away gap, else an away step from the
 * active atom with the largest gradient (drop step when its weight reaches 0). */
#include "algo/herding/herding_impl.h"

static const kd_param_spec kd_afw_params_[] = {KD_HERD_COMMON_PARAMS};

static kd_err kd_afw_iter_(kd_herd *h, void *ctx, int64_t it, double *gap) {
  kd_err err = KD_OK;
  kd_gidx g;
  int v, a, s, dropped;
  (void)ctx;
  (void)it;
  KD_TRY(kd_herd_lmo_gap(h, gap, &g));
  if (h->done) goto cleanup;
  kd_herd_away_local(h, &a, &s);
  double away_gap = kd_herd_grad(h, a) - kd_herd_wgrad(h);
  if (*gap >= away_gap) {
    KD_TRY(kd_herd_ensure_atom(h, g, h->col, NULL, &v));
    KD_TRY(kd_herd_step_fw(h, v, -1.0, NULL));
  } else {
    KD_TRY(kd_herd_step_away(h, a, &dropped));
  }
cleanup:
  return err;
}

static kd_err kd_afw_run_(const kd_algo_in *in, kd_result *out) {
  return kd_herd_drive(in, out, kd_afw_iter_, NULL, NULL);
}

const kd_algo_desc kd_algo_afw = {"afw",
                                  "herd",
                                  "away-step Frank-Wolfe herding",
                                  kd_afw_params_,
                                  KD_HERD_N_COMMON,
                                  kd_afw_run_,
                                  KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
                                  NULL,
                                  NULL};
