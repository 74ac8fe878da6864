/* fw_linesearch.c - kernel herding as Frank-Wolfe with exact line search
 * (Tsuji & Tanaka Alg. 1 with alpha_t = argmin F, "linesearch"). */
#include "algo/herding/herding_impl.h"

static const kd_param_spec kd_fw_ls_params_[] = {KD_HERD_COMMON_PARAMS};

static kd_err kd_fw_ls_iter_(kd_herd *h, void *ctx, int64_t it, double *gap) {
  kd_err err = KD_OK;
  kd_gidx g;
  int v;
  (void)ctx;
  (void)it;
  KD_TRY(kd_herd_lmo_gap(h, gap, &g));
  if (h->done) goto cleanup;
  KD_TRY(kd_herd_ensure_atom(h, g, h->col, NULL, &v));
  KD_TRY(kd_herd_step_fw(h, v, -1.0, NULL));
cleanup:
  return err;
}

static kd_err kd_fw_ls_run_(const kd_algo_in *in, kd_result *out) {
  return kd_herd_drive(in, out, kd_fw_ls_iter_, NULL, NULL);
}

const kd_algo_desc kd_algo_fw_linesearch = {"fw_linesearch",
                                            "herd",
                                            "kernel herding, Frank-Wolfe with exact line search",
                                            kd_fw_ls_params_,
                                            KD_HERD_N_COMMON,
                                            kd_fw_ls_run_,
                                            KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
                                            NULL,
                                            NULL};
