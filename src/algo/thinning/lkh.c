/* lkh.c - LKH(delta), Low-Rank Thinning Alg. B.2: Kernel Halving with the linear kernel <x,y>
 * (psi kept as a d-vector, thresholds from get_swap_params), repeated down to n_out. */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_lkh_params_[] = {
    KD_THIN_PARAM_NOUT, KD_THIN_PARAM_DELTA,    KD_THIN_PARAM_REFINE,  KD_THIN_PARAM_PASSES,
    KD_THIN_PARAM_POOL, KD_THIN_PARAM_REWEIGHT, KD_THIN_PARAM_PAIRING,
};

static kd_err kd_lkh_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_thin_plan plan;
  KD_TRY(kd_thin_plan_from_params(in->params, &plan));
  plan.kind = KD_HALVE_LKH;
  plan.compress = 0;
  KD_TRY(kd_thin_run(in, &plan, out));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_lkh = {
    "lkh",
    "thin",
    "linear-kernel Kernel Halving LKH(delta), O(n d) per round (Alg. B.2)",
    kd_lkh_params_,
    (int)(sizeof kd_lkh_params_ / sizeof kd_lkh_params_[0]),
    kd_lkh_run_};
