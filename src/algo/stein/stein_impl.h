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

#include "kdistill/author/kd_algo.h"

/** Simplex weights of the rows of in->points minimising MMD^2(w) against in->target (for the
 *  Stein target: KSD^2(w) = w^T K_p w) by pairwise Frank-Wolfe with exact line search, at most
 *  iters steps (stops when no pair improves). w_local[n_local] receives this rank's weights;
 *  *steps the steps taken. Collective. */
kd_err kd_stein_pfw(const kd_algo_in *in, int64_t iters, double *w_local, int64_t *steps);

/** Systematic resampling of m rows from the rows of ps with probabilities w (w_local[n_local] per
 *  rank, >= 0, not all 0): one uniform keyed by seed; the cumulative sums are taken on the
 *  weights as integers of one scale (2^62 / (n max w)), so they are exact and the draw is the same
 *  at any rank count. *out gets the m rows in increasing source order (a new point set on ps's
 *  communicator, block-distributed like any other), *src a one-column set with the same layout
 *  holding each row's source row (as a double). A rank holds its share of the m rows plus the
 *  rows its own weights draw. Collective. */
kd_err kd_stein_resample(const kd_pointset *ps, const double *w_local, kd_gidx m, uint64_t seed,
                         kd_pointset **out, kd_pointset **src);

/** Randomly pivoted Cholesky of the kernel matrix of in->points (rpcholesky.c): up to m_max pivots
 *  piv[m_max] (global rows, every rank), *m_done of them found (fewer when the residual vanishes),
 *  *F (allocated, caller frees) the local rows of the factor, column-major: F[j n_local + i].
 *  w (NULL or the local rows' weights): pivots drawn with probability proportional to w_i times
 *  the residual diagonal (the RPCholesky of diag(w)^1/2 K diag(w)^1/2, Li et al.'s weighted
 *  RPCholesky; the factor is still that of K). resid (NULL or n_local): the residual diagonal
 *  K_ii - |F_i|^2 at the end. Collective. */
kd_err kd_stein_rpc_factor(const kd_algo_in *in, int64_t m_max, const double *w, double **F,
                           kd_gidx *piv, int64_t *m_done, double *resid);

/** Low-rank debiasing (low_rank_debias.c; Li et al. 2024's LD): rounds x (weighted RPCholesky of
 *  rank `rank`, then `steps` steps of accelerated entropic mirror descent on the simplex QP with
 *  K replaced by F F^T + diag(residual)). w_local[n_local] receives this rank's weights (all > 0
 *  unless they underflow), *objective the last round's model objective 1/2 w^T K^ w - z^T w.
 *  Collective. */
typedef struct {
  int64_t rank, rounds, steps;
} kd_stein_ld_opts;
kd_err kd_stein_ld(const kd_algo_in *in, const kd_stein_ld_opts *o, double *w_local,
                   double *objective);

/** The parameter-table rows of the low-rank debiasing options, for an algorithm whose parameter
 *  struct T has a kd_stein_ld_opts member named ld. */
#define KD_STEIN_LD_SPEC(T)                                                                    \
  {"rank",                                                                                     \
   KD_PARAM_INT,                                                                               \
   0,                                                                                          \
   NULL,                                                                                       \
   0,                                                                                          \
   1e6,                                                                                        \
   NULL,                                                                                       \
   "rank of the low-rank debiasing (0: ceil(2 sqrt(n)), at most 256)",                         \
   KD_PARAM_AT(T, ld.rank)},                                                                   \
      {"rounds",                                                                               \
       KD_PARAM_INT,                                                                           \
       3,                                                                                      \
       NULL,                                                                                   \
       1,                                                                                      \
       100,                                                                                    \
       NULL,                                                                                   \
       "adaptive rounds of the low-rank debiasing (weighted RPCholesky, then mirror descent)", \
       KD_PARAM_AT(T, ld.rounds)},                                                             \
  {                                                                                            \
    "amd_steps", KD_PARAM_INT, 200, NULL, 1, 1e7, NULL,                                        \
        "accelerated entropic mirror descent steps per round of the low-rank debiasing",       \
        KD_PARAM_AT(T, ld.steps)                                                               \
  }

/** Weights of the rule out (points, n): the simplex QP min w^T K w / 2 - z^T w against in->target
 *  (uniform != 0: keep the weights out has); metric `before` (e.g. "mmd_uniform_weights"; NULL:
 *  not evaluated, the caller has named it) is the MMD of the weights out has on entry, metric
 *  mmd_convex_weights that of the QP's; out->mmd set. Collective. */
kd_err kd_stein_simplex_weights(const kd_algo_in *in, int uniform, const char *before,
                                kd_result *out);

/** col[i] = k(X_i, row) for the nl local rows X. Local. */
kd_err kd_stein_column(kd_kernel *k, const double *X, kd_lidx nl, const double *row, double *col);

#endif
