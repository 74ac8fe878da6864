/* kh_refine.c - KH-Refine(delta), Low-Rank Thinning Alg. H.1 used as the last round of repeated KH:
 * the KH output of the last round is greedily improved point by point against z over P_in (Remark
 * 3: the MMD never increases; the metrics record it before and after). */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_kh_refine_params_[] = {
    KD_THIN_PARAM_NOUT,  KD_THIN_PARAM_DELTA,    KD_THIN_PARAM_THRESHOLD, KD_THIN_PARAM_PASSES,
    KD_THIN_PARAM_POOL2, KD_THIN_PARAM_REWEIGHT, KD_THIN_PARAM_PAIRING,
};

static const kd_thin_variant kd_kh_refine_v_ = {KD_HALVE_KH, 0, 1, 0};

static kd_err kd_kh_refine_run_(const kd_algo_in *in, kd_result *out) {
  return kd_thin_run_variant(in, &kd_kh_refine_v_, out);
}

static kd_err kd_kh_refine_check_(const kd_params *p, const kd_algo_shape *s) {
  return kd_thin_check_variant(p, s, &kd_kh_refine_v_);
}

const kd_algo_desc kd_algo_kh_refine = {
    "kh_refine",
    "thin",
    "repeated KH with the KH-Refine swap pass on the last round (Alg. H.1)",
    kd_kh_refine_params_,
    (int)(sizeof kd_kh_refine_params_ / sizeof kd_kh_refine_params_[0]),
    kd_kh_refine_run_,
    KD_ALGO_LAZY_INPUT | KD_ALGO_RESUMABLE | KD_ALGO_N_OUT,
    kd_kh_refine_check_,
    NULL};
