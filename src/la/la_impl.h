/* la_impl.h - small dense linear algebra shared by the algorithms (LAPACK/BLAS wrappers and the
 * simplex-constrained QP). All Local and deterministic (same input -> same bits on every rank). */
#ifndef KDISTILL_LA_IMPL_H
#define KDISTILL_LA_IMPL_H

#include "kdistill/author/kd_util.h"

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

/** The Cholesky factor of an active-set QP's face Hessian, kept from one solve to the next
 *  (la/qp_factor.c). On the simplex the face {w_F : sum w_F = 1} is parametrised around a pivot
 *  index p in F, w_F + sum_a y_a (e_{idx[a]} - e_p), whose Hessian is the Gram matrix of the
 *  differences, H_ab = Q(i_a, i_b) - Q(i_a, p) - Q(p, i_b) + Q(p, p); on the orthant H = Q_FF.
 *  R (upper triangular, column-major, leading dimension cap) holds R^T R = H for the m indices
 *  idx[0..m) in factor order. An index entering the face appends one column (a triangular solve,
 *  O(m^2)), one leaving deletes one (Givens rotations, O(m^2)); only a leaving pivot, a numerically
 *  singular append or a different problem starts the factor anew. Local, deterministic. */
typedef struct {
  int cap;        /* rows / columns allocated */
  int m;          /* factored indices (the pivot excluded) */
  int piv;        /* simplex: the pivot index; -1: none (orthant, or empty factor) */
  int simplex;    /* the problem the factor belongs to */
  int *idx;       /* [cap] the QP indices of the factor's columns */
  double *R;      /* [cap * cap] */
  double *ws;     /* [4 cap] scratch: right-hand side, dpocon work */
  int *iws;       /* [cap] dpocon iwork, index maps */
  char *mark;     /* [cap] membership scratch (all zero between calls) */
  int64_t starts; /* factors started anew (a full O(m^3) build) */
  int64_t appends, deletes, fallbacks; /* updates; steps left to the dense face solve */
} kd_qp_fac;

/** Release a factor's storage and zero it (a zeroed struct is an empty factor). Local. */
void kd_qp_fac_free(kd_qp_fac *f);
/** The indices i with keep[i] > 0 of a QP of size n stay, renumbered in order (0, 1, ...); the
 *  others leave the factor (the caller compacted its problem the same way). Local. */
void kd_qp_fac_compact(kd_qp_fac *f, int n, const double *keep);
/** Serialise into v (length kd_qp_fac_size: pivot, m, the m indices, R's upper triangle by
 *  columns) and back; kd_qp_fac_load checks the layout (KD_ERR_FILE naming `what` if it is not
 *  one). Local. */
int64_t kd_qp_fac_size(const kd_qp_fac *f);
void kd_qp_fac_save(const kd_qp_fac *f, double *v);
kd_err kd_qp_fac_load(kd_qp_fac *f, const double *v, int64_t len, const char *what);
/** kd_simplex_qp with the face Hessian's factor kept in f between calls (warm starts on a growing
 *  problem: fully-corrective herding). Same contract and stopping rule; a step whose factor is
 *  ill conditioned (reciprocal condition <= 1e-10) uses the dense face solve of kd_simplex_qp. */
kd_err kd_simplex_qp_fac(int n, const double *Q, const double *c, double tol, int max_iter,
                         double *w, kd_qp_fac *f);
/** The face step's direction from the factor, brought up to date with the face F (k indices,
 *  ascending; in_f marks them; w the iterate, for the pivot choice). *ok = 0 when the factor is
 *  ill conditioned or singular (p untouched). p[a] belongs to F[a]; g is the gradient. Local. */
kd_err kd_qp_fac_direction(kd_qp_fac *f, int n, const double *Q, const double *g, const double *w,
                           const int *F, int k, const char *in_f, int simplex, double *p, int *ok);

/** y[i] = fma(x[i], a, y[i]) for i < n (vec.c: vectorised where the CPU allows, same bits). */
void kd_vec_fma(int64_t n, double a, const double *x, double *y);

/** Use one BLAS thread per process unless OPENBLAS_NUM_THREADS is set (ranks are the
 *  parallelism). Local; call once after MPI_Init. */
void kd_la_single_thread(void);

/** Local. Under an address-space limit (ulimit -v), check that the BLAS library's work buffer
 *  still fits; KD_ERR_MEM with the reason and the remedy written to msg (len bytes) when it does
 *  not (OpenBLAS would otherwise retry its allocation forever). KD_OK without a limit. */
kd_err kd_la_blas_room(char *msg, size_t len);

#endif
