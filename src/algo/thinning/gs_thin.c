/* gs_thin.c - GS-Thin, Low-Rank Thinning Alg. B.5 with GS-Halve-Cubic (Alg. B.7): repeated
 * kernelized Gram-Schmidt-walk halving. Cubic in the size of every halving: for small inputs. */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_gs_thin_params_[] = {
    KD_THIN_PARAM_NOUT, KD_THIN_PARAM_REFINE,   KD_THIN_PARAM_PASSES,
    KD_THIN_PARAM_POOL, KD_THIN_PARAM_REWEIGHT, KD_THIN_PARAM_PAIRING,
};

static const kd_thin_variant kd_gs_thin_v_ = {KD_HALVE_GS, 0, 0, 0};

static kd_err kd_gs_thin_run_(const kd_algo_in *in, kd_result *out) {
  return kd_thin_run_variant(in, &kd_gs_thin_v_, out);
}

static kd_err kd_gs_thin_check_(const kd_params *p, const kd_algo_shape *s) {
  return kd_thin_check_variant(p, s, &kd_gs_thin_v_);
}

const kd_algo_desc kd_algo_gs_thin = {
    "gs_thin",
    "thin",
    "GS-Thin: repeated Gram-Schmidt halving, cubic time (Alg. B.5, B.7)",
    kd_gs_thin_params_,
    (int)(sizeof kd_gs_thin_params_ / sizeof kd_gs_thin_params_[0]),
    kd_gs_thin_run_,
    KD_ALGO_LAZY_INPUT | KD_ALGO_RESUMABLE | KD_ALGO_N_OUT,
    kd_gs_thin_check_,
    NULL};
