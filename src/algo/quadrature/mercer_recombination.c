/* mercer_recombination.c - convex kernel quadrature "M. + emp [+ opt]" (Hayakawa, Oberhauser &
 * Lyons, Alg. 1 with the Mercer test functions of §2.2: periodic Sobolev eigenfunctions 1,
 * sqrt2 cos(2 pi m x), sqrt2 sin(2 pi m x) and their tensor products on [0,1)^d). */
#include "algo/quadrature/quad_common.h"

static kd_err kd_mercer_recomb_run_(const kd_algo_in *in, kd_result *out) {
  return kd_quad_run(in, out, KD_QUAD_MERCER);
}

static kd_err kd_mercer_recomb_check_(const kd_params *p, const kd_algo_shape *s) {
  return kd_quad_check(p, s, KD_QUAD_MERCER);
}

static kd_err kd_mercer_recomb_mem_(const kd_params *p, const kd_algo_shape *s, kd_algo_mem *out) {
  return kd_quad_mem(p, s, KD_QUAD_MERCER, out);
}

const kd_algo_desc kd_algo_mercer_recombination = {
    "mercer_recombination",
    "quad",
    "periodic Sobolev Mercer test functions + recombination, optional convex QP weights",
    kd_quad_params,
    KD_QUAD_N_PARAMS,
    kd_mercer_recomb_run_,
    KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
    kd_mercer_recomb_check_,
    kd_mercer_recomb_mem_};
