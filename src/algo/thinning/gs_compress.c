/* gs_compress.c - GS-Compress, Low-Rank Thinning Alg. B.8: Compress with GS-Halve-Cubic halving,
 * then GS rounds down to n_out. */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_gs_compress_params_[] = {
    KD_THIN_PARAM_NOUT,
    KD_THIN_PARAM_G_ROW(
        1, "Compress oversampling: bins output 2^g sqrt(size) points (GS-Halve is cubic in 2^g)"),
    KD_THIN_PARAM_REFINE,
    KD_THIN_PARAM_PASSES,
    KD_THIN_PARAM_POOL,
    KD_THIN_PARAM_RTARGET,
    KD_THIN_PARAM_REWEIGHT,
    KD_THIN_PARAM_PAIRING,
    KD_THIN_PARAM_LEAF_SPLIT,
};

static const kd_thin_variant kd_gs_compress_v_ = {KD_HALVE_GS, 1, 0, 0};

static kd_err kd_gs_compress_run_(const kd_algo_in *in, kd_result *out) {
  return kd_thin_run_variant(in, &kd_gs_compress_v_, out);
}

static kd_err kd_gs_compress_check_(const kd_params *p, const kd_algo_shape *s) {
  return kd_thin_check_variant(p, s, &kd_gs_compress_v_);
}

const kd_algo_desc kd_algo_gs_compress = {
    "gs_compress",
    "thin",
    "GS-Compress: Compress with GS-Halve-Cubic halving (Alg. B.8)",
    kd_gs_compress_params_,
    (int)(sizeof kd_gs_compress_params_ / sizeof kd_gs_compress_params_[0]),
    kd_gs_compress_run_,
    KD_ALGO_LAZY_INPUT | KD_ALGO_RESUMABLE | KD_ALGO_N_OUT,
    kd_gs_compress_check_,
    NULL};
