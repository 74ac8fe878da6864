/* stein_impl.h - building blocks of the score-based family (private to src/algo/stein/), all
 * written for any kernel and target, and independent of the rank count: every per-row quantity
 * follows the same recurrence wherever the row lives, every choice is a reduction with ties to the
 * lowest global index, and random numbers are keyed by (seed, global index).
 *   stein_thin.c  greedy Stein thinning (Riabiz et al. 2022), i.e. greedy MMD minimisation
 *   rpcholesky.c  randomly pivoted Cholesky pivots (Chen, Epperly, Tropp, Webber; Epperly & Moreno
 *                 2023) with simplex weights
 *   sr.c          Stein recombination (Li et al. 2024): simplex reweighting, then Caratheodory
 *                 recombination against the RPCholesky (Nystrom) features, then simplex weights
 *   skt.c         Stein kernel thinning (Li et al. 2024): simplex reweighting of all n rows, then
 *                 resampling and KT-Compress
 *   stein_common.c the distributed pairwise Frank-Wolfe simplex QP and the resampling */
#ifndef KDISTILL_STEIN_IMPL_H
#define KDISTILL_STEIN_IMPL_H

#include "kdistill/kd_algo.h"

/** Simplex weights of the rows of in->points minimising MMD^2(w) against in->target (for the
 *  Stein target: KSD^2(w) = w^T K_p w) by pairwise Frank-Wolfe with exact line search, at most
 *  iters steps (stops when no pair improves). w_local[n_local] receives this rank's weights;
 *  *steps the steps taken. Collective. */
kd_err kd_stein_pfw(const kd_algo_in *in, int64_t iters, double *w_local, int64_t *steps);

/** Systematic resampling of m rows from the rows of ps with probabilities w (w_local[n_local] per
 *  rank): one uniform keyed by seed, cumulative sums in global row order on every rank. *out gets
 *  the m rows (a new point set on ps's communicator), map[m] (allocated, replicated) their source
 *  rows in increasing order. Collective. */
kd_err kd_stein_resample(const kd_pointset *ps, const double *w_local, kd_gidx m, uint64_t seed,
                         kd_pointset **out, kd_gidx **map);

/** Randomly pivoted Cholesky of the kernel matrix of in->points (rpcholesky.c): up to m_max pivots
 *  piv[m_max] (global rows, every rank), *m_done of them found (fewer when the residual vanishes),
 *  *F (allocated, caller frees) the local rows of the factor, column-major: F[j n_local + i].
 *  Collective. */
kd_err kd_stein_rpc_factor(const kd_algo_in *in, int64_t m_max, double **F, kd_gidx *piv,
                           int64_t *m_done);

/** Weights of the rule out (points, n): the simplex QP min w^T K w / 2 - z^T w against in->target
 *  (uniform != 0: keep 1/n); metrics mmd_uniform_weights and mmd_convex_weights; out->mmd set.
 *  Collective. */
kd_err kd_stein_simplex_weights(const kd_algo_in *in, int uniform, kd_result *out);

/** col[i] = k(X_i, row) for the nl local rows X. Local. */
kd_err kd_stein_column(kd_kernel *k, const double *X, kd_lidx nl, const double *row, double *col);

#endif
