/* rkh.c - RKH(delta), Low-Rank Thinning Alg. B.3: KH(delta/m) repeated m = log2(n_in/n_out) times.
 */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_rkh_params_[] = {
    KD_THIN_PARAM_NOUT,   KD_THIN_PARAM_DELTA, KD_THIN_PARAM_THRESHOLD, KD_THIN_PARAM_REFINE,
    KD_THIN_PARAM_PASSES, KD_THIN_PARAM_POOL,  KD_THIN_PARAM_REWEIGHT,  KD_THIN_PARAM_PAIRING,
};

static kd_err kd_rkh_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_thin_plan plan;
  KD_TRY(kd_thin_plan_from_params(in->params, &plan));
  plan.kind = KD_HALVE_KH;
  plan.compress = 0;
  KD_TRY(kd_thin_run(in, &plan, out));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_rkh = {"rkh",
                                  "thin",
                                  "repeated Kernel Halving RKH(delta) down to n_out (Alg. B.3)",
                                  kd_rkh_params_,
                                  (int)(sizeof kd_rkh_params_ / sizeof kd_rkh_params_[0]),
                                  kd_rkh_run_};
