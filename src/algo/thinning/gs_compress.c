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
};

static kd_err kd_gs_compress_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_thin_plan plan;
  KD_TRY(kd_thin_plan_from_params(in->params, &plan));
  plan.kind = KD_HALVE_GS;
  plan.compress = 1;
  KD_TRY(kd_thin_run(in, &plan, out));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_gs_compress = {
    "gs_compress",
    "thin",
    "GS-Compress: Compress with GS-Halve-Cubic halving (Alg. B.8)",
    kd_gs_compress_params_,
    (int)(sizeof kd_gs_compress_params_ / sizeof kd_gs_compress_params_[0]),
    kd_gs_compress_run_};
