/* la_impl.h - small dense linear algebra shared by the algorithms (LAPACK/BLAS wrappers and the
 * simplex-constrained QP). All Local and deterministic (same input -> same bits on every rank). */
#ifndef KDISTILL_LA_IMPL_H
#define KDISTILL_LA_IMPL_H

#include "kdistill/kd_types.h"

/** Minimise f(w) = 1/2 w^T Q w - c^T w over the probability simplex {w >= 0, sum w = 1}.
 *  Q: n x n symmetric PSD, row-major. w: in = starting point (any point of the simplex, or all
 *  zeros for a default start), out = solution. Stops when the simplex KKT violation is below tol
 *  or after max_iter outer iterations. Returns KD_ERR_NUMERIC if it cannot make progress.
 *  Implemented in la/simplex_qp.c (herding issue); reused by thinning reweight and quadrature +opt.
 */
kd_err kd_simplex_qp(int n, const double *Q, const double *c, double tol, int max_iter, double *w);

/** Minimise f(w) = 1/2 w^T Q w - c^T w over the nonnegative orthant {w >= 0} (no sum constraint);
 *  same active-set solver as kd_simplex_qp (la/simplex_qp.c). Used by herding's FC-PMP / FC-gcos
 *  direction problem (3.9) of Tsuji & Tanaka. w: in = start (zeros allowed), out = solution.
 *  Returns KD_ERR_NUMERIC if unbounded below or stalled. Local, deterministic. */
kd_err kd_nonneg_qp(int n, const double *Q, const double *c, double tol, int max_iter, double *w);

/** y[i] = fma(x[i], a, y[i]) for i < n (vec.c: vectorised where the CPU allows, same bits). */
void kd_vec_fma(int64_t n, double a, const double *x, double *y);

/** Use one BLAS thread per process unless OPENBLAS_NUM_THREADS is set (ranks are the
 *  parallelism). Local; call once after MPI_Init. */
void kd_la_single_thread(void);

#endif
