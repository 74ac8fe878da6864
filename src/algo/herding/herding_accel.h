/* herding_accel.h - the accelerated herding driver shared by pmp.c, gcos.c, fc_pmp.c, fc_gcos.c
 * (Tsuji & Tanaka Alg. 4 with Alg. 5 / 6 / 7). */
#ifndef KDISTILL_HERDING_ACCEL_H
#define KDISTILL_HERDING_ACCEL_H

#include "algo/herding/herding_impl.h"

typedef enum { KD_HERD_PMP, KD_HERD_GCOS, KD_HERD_FC_PMP, KD_HERD_FC_GCOS } kd_herd_accel_mode;

/** Run Alg. 4 with the direction builder of `mode`; reads K_max and delta. Adds the dataset
 *  /herding/cos_theta (rows: outer iteration t, round k, cos theta_{t,k} of the accepted
 *  direction) and the metric direction_rounds. Collective. */
kd_err kd_herd_accel_run(const kd_algo_in *in, kd_result *out, kd_herd_accel_mode mode);

#define KD_HERD_ACCEL_PARAMS(kmax_def, delta_def)                                \
  KD_HERD_COMMON_PARAMS,                                                         \
      {"K_max",                                                                  \
       KD_PARAM_INT,                                                             \
       kmax_def,                                                                 \
       NULL,                                                                     \
       1,                                                                        \
       100000,                                                                   \
       NULL,                                                                     \
       "maximum rounds (vertices) per direction search",                         \
       KD_PARAM_AT(kd_herd_params, K_max)},                                      \
  {                                                                              \
    "delta", KD_PARAM_F64, delta_def, NULL, -1, 0.999999, NULL,                  \
        "truncation: accept a round only if cos theta rises by more than delta", \
        KD_PARAM_AT(kd_herd_params, delta)                                       \
  }

#endif
