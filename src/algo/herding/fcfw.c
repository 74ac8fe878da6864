/* fcfw.c - fully-corrective Frank-Wolfe kernel herding (Tsuji & Tanaka Alg. 3, "FC"): add the LMO
 * vertex, then re-optimise all weights over the simplex on the active set (kd_simplex_qp). */
#include "algo/herding/herding_impl.h"

static const kd_param_spec kd_fcfw_params_[] = {KD_HERD_COMMON_PARAMS};

static kd_err kd_fcfw_iter_(kd_herd *h, void *ctx, int64_t it, double *gap) {
  kd_err err = KD_OK;
  double val;
  kd_gidx g;
  int v;
  (void)ctx;
  (void)it;
  KD_TRY(kd_herd_lmo(h, &val, &g));
  *gap = kd_herd_wgrad(h) - val;
  if (*gap <= h->tol_gap) {
    h->done = 1;
    goto cleanup;
  }
  KD_TRY(kd_herd_ensure_atom(h, g, h->col, NULL, &v));
  KD_TRY(kd_herd_fc_weights(h));
cleanup:
  return err;
}

static kd_err kd_fcfw_run_(const kd_algo_in *in, kd_result *out) {
  return kd_herd_drive(in, out, kd_fcfw_iter_, NULL, NULL);
}

const kd_algo_desc kd_algo_fcfw = {
    "fcfw",
    "herd",
    "fully-corrective Frank-Wolfe herding (weights re-optimised every step)",
    kd_fcfw_params_,
    KD_HERD_N_COMMON,
    kd_fcfw_run_};
