/* apps_impl.h - the applications of Low-Rank Thinning §4-5 as C functions (the `attention` and
 * `reorder` tasks are thin wrappers that read config and files around them). */
#ifndef KDISTILL_APPS_IMPL_H
#define KDISTILL_APPS_IMPL_H

#include "kdistill/author/kd_algo.h"

typedef enum { KD_ATTN_KH_COMPRESS = 0, KD_ATTN_UNIFORM = 1 } kd_attn_method;

/** Thinformer (Low-Rank Thinning Alg. 1). Q (n_q x dk), K (n x dk), V (n x dv) are distributed
 *  point sets on comm (K and V with the same n). The augmented pairs (k_i / dk^(1/4), (v_i, v_max))
 *  are thinned to n_out with KH-Compress(delta) (oversampling g; n_out = 0 -> the Compress output
 *  size, 2^g sqrt(n) for n a power of 4) under the attention kernel exp(<k,k'>) <v,v'>, or
 *  uniformly (method KD_ATTN_UNIFORM, the baseline). tight = 1 uses the tight KH threshold
 *  (thin_impl.h); 0 Alg. B.1's simplified one. Outputs, replicated on every rank:
 *  T_hat[n_q * dv] = softmax attention of all queries over the selected pairs; sel[*n_sel]
 *  (malloc'ed, caller frees) the selected global rows; if T_exact != NULL the exact attention
 *  [n_q * dv] and *max_err = ||T_hat - T||_max. *kernel_evals (optional): evaluations of the
 *  attention kernel by the thinning, summed over ranks. Collective. */
kd_err kd_thinformer(MPI_Comm comm, const kd_pointset *Q, const kd_pointset *K,
                     const kd_pointset *V, kd_attn_method method, kd_gidx n_out, int g,
                     double delta, int tight, uint64_t seed, double *T_hat, int64_t **sel,
                     kd_gidx *n_sel, double *T_exact, double *max_err, uint64_t *kernel_evals);

/** Thinned reordering (Low-Rank Thinning Alg. 2) with LKH(delta): X (n x d, distributed) holds
 *  the gradients x_i = grad f_{pi_k(i)} in processing order, pi_k[n] (replicated; NULL =
 *  identity) the prior order. LKH keeps n/2 rows; kept rows are appended in order, the others
 *  prepended to a second list, pi_next = concat. pi_next[n] replicated. Collective. */
kd_err kd_thin_reorder(MPI_Comm comm, const kd_pointset *X, const int64_t *pi_k, double delta,
                       uint64_t seed, int64_t *pi_next);

/** max_j || sum_{i<=j} (x_pi(i) - mean) ||_2 of rows G[n*d] (Local helper for tests/metrics). */
double kd_prefix_discrepancy(const double *G, int64_t n, int d, const int64_t *pi);

#endif
