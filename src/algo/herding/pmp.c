/* pmp.c - accelerated herding with positive matching pursuit (Alg. 4 + Alg. 5), Tsuji & Tanaka; the
 * direction builder lives in herding_accel.c. */
#include "algo/herding/herding_accel.h"

static const kd_param_spec kd_pmp_params_[] = {KD_HERD_ACCEL_PARAMS(5, 0)};

static kd_err kd_pmp_run_(const kd_algo_in *in, kd_result *out) {
  return kd_herd_accel_run(in, out, KD_HERD_PMP);
}

const kd_algo_desc kd_algo_pmp = {
    "pmp",
    "herd",
    "accelerated herding with positive matching pursuit (Alg. 4 + Alg. 5)",
    kd_pmp_params_,
    KD_HERD_N_COMMON + 2,
    kd_pmp_run_,
    KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
    NULL,
    NULL};
