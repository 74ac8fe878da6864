/* kh_compress.c - KH-Compress(delta), Low-Rank Thinning Alg. B.4 (Compress with KH halving, bins of
 * the lower levels on their own ranks), followed Compress++-style by KH rounds from 2^g sqrt(n_in)
 * down to n_out. */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_kh_compress_params_[] = {
    KD_THIN_PARAM_NOUT,      KD_THIN_PARAM_G,          KD_THIN_PARAM_DELTA,
    KD_THIN_PARAM_THRESHOLD, KD_THIN_PARAM_REFINE,     KD_THIN_PARAM_PASSES,
    KD_THIN_PARAM_POOL,      KD_THIN_PARAM_RTARGET,    KD_THIN_PARAM_REWEIGHT,
    KD_THIN_PARAM_PAIRING,   KD_THIN_PARAM_LEAF_SPLIT,
};

static const kd_thin_variant kd_kh_compress_v_ = {KD_HALVE_KH, 1, 0, 0};

static kd_err kd_kh_compress_run_(const kd_algo_in *in, kd_result *out) {
  return kd_thin_run_variant(in, &kd_kh_compress_v_, out);
}

static kd_err kd_kh_compress_check_(const kd_params *p, const kd_algo_shape *s) {
  return kd_thin_check_variant(p, s, &kd_kh_compress_v_);
}

const kd_algo_desc kd_algo_kh_compress = {
    "kh_compress",
    "thin",
    "KH-Compress(delta) with oversampling g, then KH rounds to n_out (Alg. B.4)",
    kd_kh_compress_params_,
    (int)(sizeof kd_kh_compress_params_ / sizeof kd_kh_compress_params_[0]),
    kd_kh_compress_run_,
    KD_ALGO_LAZY_INPUT | KD_ALGO_RESUMABLE | KD_ALGO_N_OUT,
    kd_kh_compress_check_,
    NULL};
