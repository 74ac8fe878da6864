/* gcos.c - accelerated herding, greedy cos-theta maximisation (Alg. 4 + Alg. 6), Tsuji & Tanaka;
 * the direction builder lives in herding_accel.c. */
#include "algo/herding/herding_accel.h"

static const kd_param_spec kd_gcos_params_[] = {KD_HERD_ACCEL_PARAMS(5, 1e-4)};

static kd_err kd_gcos_run_(const kd_algo_in *in, kd_result *out) {
  return kd_herd_accel_run(in, out, KD_HERD_GCOS);
}

const kd_algo_desc kd_algo_gcos = {
    "gcos",
    "herd",
    "accelerated herding, greedy cos-theta maximisation (Alg. 4 + Alg. 6)",
    kd_gcos_params_,
    KD_HERD_N_COMMON + 2,
    kd_gcos_run_,
    KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
    NULL,
    NULL};
