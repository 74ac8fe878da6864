/* nystrom_recombination.c - convex kernel quadrature "N. + emp [+ opt]" (Hayakawa, Oberhauser &
 * Lyons, Alg. 1 with the Nystrom test functions of eq. (10)-(11), weights of eq. (14)). */
#include "algo/quadrature/quad_common.h"

static kd_err kd_nystrom_recomb_run_(const kd_algo_in *in, kd_result *out) {
  return kd_quad_run(in, out, KD_QUAD_NYSTROM);
}

static kd_err kd_nystrom_recomb_check_(const kd_params *p, const kd_algo_shape *s) {
  return kd_quad_check(p, s, KD_QUAD_NYSTROM);
}

static kd_err kd_nystrom_recomb_mem_(const kd_params *p, const kd_algo_shape *s, kd_algo_mem *out) {
  return kd_quad_mem(p, s, KD_QUAD_NYSTROM, out);
}

const kd_algo_desc kd_algo_nystrom_recombination = {
    "nystrom_recombination",
    "quad",
    "Nystrom test functions + recombination of an N-point sample, optional convex QP weights",
    kd_quad_params,
    KD_QUAD_N_PARAMS,
    kd_nystrom_recomb_run_,
    KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
    kd_nystrom_recomb_check_,
    kd_nystrom_recomb_mem_};
