/* rkh.c - RKH(delta), Low-Rank Thinning Alg. B.3: KH(delta/m) repeated m = log2(n_in/n_out) times.
 */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_rkh_params_[] = {
    KD_THIN_PARAM_NOUT,   KD_THIN_PARAM_DELTA, KD_THIN_PARAM_THRESHOLD, KD_THIN_PARAM_REFINE,
    KD_THIN_PARAM_PASSES, KD_THIN_PARAM_POOL,  KD_THIN_PARAM_REWEIGHT,  KD_THIN_PARAM_PAIRING,
};

static const kd_thin_variant kd_rkh_v_ = {KD_HALVE_KH, 0, 0, 0};

static kd_err kd_rkh_run_(const kd_algo_in *in, kd_result *out) {
  return kd_thin_run_variant(in, &kd_rkh_v_, out);
}

static kd_err kd_rkh_check_(const kd_params *p, const kd_algo_shape *s) {
  return kd_thin_check_variant(p, s, &kd_rkh_v_);
}

const kd_algo_desc kd_algo_rkh = {"rkh",
                                  "thin",
                                  "repeated Kernel Halving RKH(delta) down to n_out (Alg. B.3)",
                                  kd_rkh_params_,
                                  (int)(sizeof kd_rkh_params_ / sizeof kd_rkh_params_[0]),
                                  kd_rkh_run_,
                                  KD_ALGO_LAZY_INPUT | KD_ALGO_RESUMABLE | KD_ALGO_N_OUT,
                                  kd_rkh_check_,
                                  NULL};
