/* kh_refine.c - KH-Refine(delta), Low-Rank Thinning Alg. H.1 used as the last round of repeated KH:
 * the KH output of the last round is greedily improved point by point against z over P_in (Remark
 * 3: the MMD never increases; the metrics record it before and after). */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_kh_refine_params_[] = {
    KD_THIN_PARAM_NOUT,  KD_THIN_PARAM_DELTA,    KD_THIN_PARAM_THRESHOLD, KD_THIN_PARAM_PASSES,
    KD_THIN_PARAM_POOL2, KD_THIN_PARAM_REWEIGHT, KD_THIN_PARAM_PAIRING,
};

static kd_err kd_kh_refine_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_thin_plan plan;
  KD_TRY(kd_thin_plan_from_params(in->params, &plan));
  plan.kind = KD_HALVE_KH;
  plan.compress = 0;
  plan.refine = 1;
  KD_TRY(kd_thin_run(in, &plan, out));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_kh_refine = {
    "kh_refine",
    "thin",
    "repeated KH with the KH-Refine swap pass on the last round (Alg. H.1)",
    kd_kh_refine_params_,
    (int)(sizeof kd_kh_refine_params_ / sizeof kd_kh_refine_params_[0]),
    kd_kh_refine_run_};
