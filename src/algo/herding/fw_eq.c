/* fw_eq.c - kernel herding with equal weights: Frank-Wolfe with step 1/(t+1)
 * (Tsuji & Tanaka Alg. 1 / Alg. 2, "eq-weight"). */
#include "algo/herding/herding_impl.h"

static const kd_param_spec kd_fw_eq_params_[] = {KD_HERD_COMMON_PARAMS};

static kd_err kd_fw_eq_iter_(kd_herd *h, void *ctx, int64_t it, double *gap) {
  kd_err err = KD_OK;
  kd_gidx g;
  int v;
  (void)ctx;
  KD_TRY(kd_herd_lmo_gap(h, gap, &g));
  if (h->done) goto cleanup;
  KD_TRY(kd_herd_ensure_atom(h, g, h->col, NULL, &v));
  KD_TRY(kd_herd_step_fw(h, v, 1.0 / ((double)it + 1.0), NULL));
cleanup:
  return err;
}

static kd_err kd_fw_eq_run_(const kd_algo_in *in, kd_result *out) {
  return kd_herd_drive(in, out, kd_fw_eq_iter_, NULL, NULL);
}

const kd_algo_desc kd_algo_fw_eq = {"fw_eq",
                                    "herd",
                                    "kernel herding, Frank-Wolfe with step 1/(t+1) (equal weights)",
                                    kd_fw_eq_params_,
                                    KD_HERD_N_COMMON,
                                    kd_fw_eq_run_,
                                    KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
                                    NULL,
                                    NULL};
