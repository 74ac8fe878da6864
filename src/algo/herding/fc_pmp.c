/* fc_pmp.c - accelerated herding, fully-corrective PMP (Alg. 4 + Alg. 5 with (3.9)), Tsuji &
 * Tanaka; the direction builder lives in herding_accel.c. */
#include "algo/herding/herding_accel.h"

static const kd_param_spec kd_fc_pmp_params_[] = {KD_HERD_ACCEL_PARAMS(5, 0)};

static kd_err kd_fc_pmp_run_(const kd_algo_in *in, kd_result *out) {
  return kd_herd_accel_run(in, out, KD_HERD_FC_PMP);
}

const kd_algo_desc kd_algo_fc_pmp = {
    "fc_pmp",
    "herd",
    "accelerated herding, fully-corrective PMP (Alg. 4 + Alg. 5 with (3.9))",
    kd_fc_pmp_params_,
    KD_HERD_N_COMMON + 2,
    kd_fc_pmp_run_,
    KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
    NULL,
    NULL};
