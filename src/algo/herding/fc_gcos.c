/* fc_gcos.c - accelerated herding, fully-corrective greedy cos (Alg. 4 + Alg. 7), Tsuji & Tanaka;
 * the direction builder lives in herding_accel.c. */
#include "algo/herding/herding_accel.h"

static const kd_param_spec kd_fc_gcos_params_[] = {KD_HERD_ACCEL_PARAMS(5, 1e-4)};

static kd_err kd_fc_gcos_run_(const kd_algo_in *in, kd_result *out) {
  return kd_herd_accel_run(in, out, KD_HERD_FC_GCOS);
}

const kd_algo_desc kd_algo_fc_gcos = {
    "fc_gcos",
    "herd",
    "accelerated herding, fully-corrective greedy cos (Alg. 4 + Alg. 7)",
    kd_fc_gcos_params_,
    KD_HERD_N_COMMON + 2,
    kd_fc_gcos_run_,
    KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
    NULL,
    NULL};
