/* kh.c - Kernel Halving KH(delta), Low-Rank Thinning Alg. B.1 with the simplified swapping
 * threshold a_i = b_i b_max,i (1/2 + log(2 n_in / delta)): one halving of the whole input. */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_kh_params_[] = {
    KD_THIN_PARAM_DELTA, KD_THIN_PARAM_THRESHOLD, KD_THIN_PARAM_REFINE,  KD_THIN_PARAM_PASSES,
    KD_THIN_PARAM_POOL,  KD_THIN_PARAM_REWEIGHT,  KD_THIN_PARAM_PAIRING,
};

static const kd_thin_variant kd_kh_v_ = {KD_HALVE_KH, 0, 0, 1};

static kd_err kd_kh_run_(const kd_algo_in *in, kd_result *out) {
  return kd_thin_run_variant(in, &kd_kh_v_, out);
}

static kd_err kd_kh_check_(const kd_params *p, const kd_algo_shape *s) {
  return kd_thin_check_variant(p, s, &kd_kh_v_);
}

const kd_algo_desc kd_algo_kh = {
    "kh",
    "thin",
    "one Kernel Halving round KH(delta): n_out = floor(n_in/2) (Alg. B.1)",
    kd_kh_params_,
    (int)(sizeof kd_kh_params_ / sizeof kd_kh_params_[0]),
    kd_kh_run_,
    KD_ALGO_LAZY_INPUT | KD_ALGO_RESUMABLE,
    kd_kh_check_,
    NULL};
