/* quad_common.h - the convex kernel quadrature pipeline shared by nystrom_recombination and
 * mercer_recombination (Hayakawa, Oberhauser & Lyons, Alg. 1 with the test functions of §2.2 /
 * §2.3 and the "+ opt" weights of eq. (14)). Private to src/algo/quadrature/. */
#ifndef KDISTILL_QUAD_COMMON_H
#define KDISTILL_QUAD_COMMON_H

#include "kdistill/author/kd_algo.h"

typedef enum { KD_QUAD_NYSTROM = 0, KD_QUAD_MERCER = 1 } kd_quad_kind;

/** The parameter table of both algorithms (Mercer ignores the Nystrom keys). */
#define KD_QUAD_N_PARAMS 12
extern const kd_param_spec kd_quad_params[KD_QUAD_N_PARAMS];
/** The keys that size a quadrature run (n, sample_size, nystrom_points, eig_parallel_min), typed,
 *  from parameters filled from kd_quad_params. Local. */
typedef struct {
  int64_t n, sample_size, nystrom_points, eig_parallel_min;
} kd_quad_size_keys;
kd_err kd_quad_size_keys_of(const kd_params *p, kd_quad_size_keys *out);

/** The sizes a run resolves: N = n^2 unless given (at most the n_emp empirical rows when
 *  n_emp > 0), l = 10 n unless given. Local. */
void kd_quad_sizes(int64_t n, int64_t N, int64_t ell, kd_gidx n_emp, int64_t *N_out,
                   int64_t *ell_out);
/** N >= n + 1; Nystrom: n <= l (<= n_emp when n_emp > 0; <= N when ell_set, l given by the
 *  user). KD_ERR_CONFIG naming the key. Local. */
kd_err kd_quad_check_sizes(kd_quad_kind kind, int64_t n, int64_t N, int64_t ell, int ell_set,
                           kd_gidx n_emp);
/** The descriptors' check and memory hooks (kd_algo_desc.check / .mem) for `kind`. Local. */
kd_err kd_quad_check(const kd_params *p, const kd_algo_shape *s, kd_quad_kind kind);
kd_err kd_quad_mem(const kd_params *p, const kd_algo_shape *s, kd_quad_kind kind, kd_algo_mem *out);

/** Run the pipeline: sample, test functions, distributed recombination, Alg. 1 steps 2-4,
 *  optional convex re-weighting. Collective over in->comm. */
kd_err kd_quad_run(const kd_algo_in *in, kd_result *out, kd_quad_kind kind);

/** The top s periodic Sobolev (order r) eigenfunctions on [0,1)^d, ordered by eigenvalue (ties:
 *  lexicographic on the 1-D indices 0, +1, -1, +2, -2, ... where +m is sqrt2 cos(2 pi m x) and -m
 *  is sqrt2 sin(2 pi m x)). idx[s*d] gets the signed 1-D indices, lambda[s] the eigenvalues
 *  prod_j max(1,|k_j|)^(-2r). Local. */
kd_err kd_quad_mercer_basis(int d, int r, int s, int *idx, double *lambda);

#endif
