/* kt_compress.c - KT-Compress(delta), Low-Rank Thinning App. H, Compress++ style: KH-Compress with
 * oversampling g, KH for every later halving round but the last, and KH-Refine (Alg. H.1) for the
 * last round, swapping against z over the Compress output (default, as Compress++ does: O(n)
 * evaluations) or over P_in (refine_target: input, the ring embedding: O(n_in n_out)). */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_kt_compress_params_[] = {
    KD_THIN_PARAM_NOUT,        KD_THIN_PARAM_G,        KD_THIN_PARAM_DELTA,
    KD_THIN_PARAM_THRESHOLD_T, KD_THIN_PARAM_PASSES10, KD_THIN_PARAM_POOL4,
    KD_THIN_PARAM_RTARGET_C,   KD_THIN_PARAM_REWEIGHT, KD_THIN_PARAM_PAIRING,
    KD_THIN_PARAM_LEAF_SPLIT,
};

static const kd_thin_variant kd_kt_compress_v_ = {KD_HALVE_KH, 1, 1, 0};

static kd_err kd_kt_compress_run_(const kd_algo_in *in, kd_result *out) {
  return kd_thin_run_variant(in, &kd_kt_compress_v_, out);
}

static kd_err kd_kt_compress_check_(const kd_params *p, const kd_algo_shape *s) {
  return kd_thin_check_variant(p, s, &kd_kt_compress_v_);
}

const kd_algo_desc kd_algo_kt_compress = {
    "kt_compress",
    "thin",
    "KT-Compress(delta) / Compress++: KH rounds, KH-Refine on the last (App. H)",
    kd_kt_compress_params_,
    (int)(sizeof kd_kt_compress_params_ / sizeof kd_kt_compress_params_[0]),
    kd_kt_compress_run_,
    KD_ALGO_LAZY_INPUT | KD_ALGO_RESUMABLE | KD_ALGO_N_OUT,
    kd_kt_compress_check_,
    NULL};
