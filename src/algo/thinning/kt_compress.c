/* kt_compress.c - KT-Compress(delta), Low-Rank Thinning App. H, Compress++ style: KH-Compress with
 * oversampling g, KH for every later halving round but the last, and KH-Refine (Alg. H.1) for the
 * last round, swapping against z over the Compress output (default, as Compress++ does: O(n)
 * evaluations) or over P_in (refine_target: input, the ring embedding: O(n_in n_out)). */
#include "algo/thinning/thin_impl.h"

static const kd_param_spec kd_kt_compress_params_[] = {
    KD_THIN_PARAM_NOUT,      KD_THIN_PARAM_G,        KD_THIN_PARAM_DELTA,
    KD_THIN_PARAM_THRESHOLD, KD_THIN_PARAM_PASSES,   KD_THIN_PARAM_POOL3,
    KD_THIN_PARAM_RTARGET_C, KD_THIN_PARAM_REWEIGHT, KD_THIN_PARAM_PAIRING,
};

static kd_err kd_kt_compress_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_thin_plan plan;
  KD_TRY(kd_thin_plan_from_params(in->params, &plan));
  plan.kind = KD_HALVE_KH;
  plan.compress = 1;
  plan.refine = 1;
  KD_TRY(kd_thin_run(in, &plan, out));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_kt_compress = {
    "kt_compress",
    "thin",
    "KT-Compress(delta) / Compress++: KH rounds, KH-Refine on the last (App. H)",
    kd_kt_compress_params_,
    (int)(sizeof kd_kt_compress_params_ / sizeof kd_kt_compress_params_[0]),
    kd_kt_compress_run_};
