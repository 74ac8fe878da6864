/* lkh.c - LKH(delta), Low-Rank Thinning Alg. B.2: Kernel Halving with the linear kernel <x,y>
 * (psi kept as a d-vector, thresholds from get_swap_params), repeated down to n_out. */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_lkh_params_[] = {
    KD_THIN_PARAM_NOUT, KD_THIN_PARAM_DELTA,    KD_THIN_PARAM_REFINE,  KD_THIN_PARAM_PASSES,
    KD_THIN_PARAM_POOL, KD_THIN_PARAM_REWEIGHT, KD_THIN_PARAM_PAIRING,
};

static const kd_thin_variant kd_lkh_v_ = {KD_HALVE_LKH, 0, 0, 0};

static kd_err kd_lkh_run_(const kd_algo_in *in, kd_result *out) {
  return kd_thin_run_variant(in, &kd_lkh_v_, out);
}

static kd_err kd_lkh_check_(const kd_params *p, const kd_algo_shape *s) {
  return kd_thin_check_variant(p, s, &kd_lkh_v_);
}

const kd_algo_desc kd_algo_lkh = {
    "lkh",
    "thin",
    "linear-kernel Kernel Halving LKH(delta), O(n d) per round (Alg. B.2)",
    kd_lkh_params_,
    (int)(sizeof kd_lkh_params_ / sizeof kd_lkh_params_[0]),
    kd_lkh_run_,
    KD_ALGO_LAZY_INPUT | KD_ALGO_RESUMABLE | KD_ALGO_N_OUT,
    kd_lkh_check_,
    NULL};
