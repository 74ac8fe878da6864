/* kh.c - Kernel Halving KH(delta), Low-Rank Thinning Alg. B.1 with the simplified swapping
 * threshold a_i = b_i b_max,i (1/2 + log(2 n_in / delta)): one halving of the whole input. */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_kh_params_[] = {
    KD_THIN_PARAM_DELTA, KD_THIN_PARAM_THRESHOLD, KD_THIN_PARAM_REFINE,  KD_THIN_PARAM_PASSES,
    KD_THIN_PARAM_POOL,  KD_THIN_PARAM_REWEIGHT,  KD_THIN_PARAM_PAIRING,
};

static kd_err kd_kh_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_thin_plan plan;
  KD_TRY(kd_thin_plan_from_params(in->params, &plan));
  plan.kind = KD_HALVE_KH;
  plan.compress = 0;
  plan.n_out = kd_pointset_n_global(in->points) / 2;
  KD_TRY(kd_thin_run(in, &plan, out));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_kh = {
    "kh",
    "thin",
    "one Kernel Halving round KH(delta): n_out = floor(n_in/2) (Alg. B.1)",
    kd_kh_params_,
    (int)(sizeof kd_kh_params_ / sizeof kd_kh_params_[0]),
    kd_kh_run_};
