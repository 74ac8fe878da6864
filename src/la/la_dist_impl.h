/* la_dist_impl.h - BLACS process grids and the symmetric eigensolvers used by the quadrature
 * family (Nystrom step of Hayakawa, Oberhauser & Lyons, eq. (10)-(11)): LAPACK dsyevr on one rank
 * for small matrices, ScaLAPACK pdsyevr on a block-cyclic layout over a BLACS grid built from the
 * communicator passed in for large ones. Every LAPACK/ScaLAPACK info is checked with KD_LA. */
#ifndef KDISTILL_LA_DIST_IMPL_H
#define KDISTILL_LA_DIST_IMPL_H

#include <mpi.h>

#include "kdistill/author/kd_util.h"

/** A BLACS process grid over all ranks of a communicator (nprow x npcol = size, nprow the largest
 *  divisor of size not above sqrt(size)). */
typedef struct {
  int sys_handle; /* Csys2blacs_handle(comm) */
  int ctxt;       /* grid context */
  int nprow, npcol, myrow, mycol;
} kd_la_grid;

/** Build the grid from comm (borrowed; must outlive the grid). Collective over comm.
 *  Errors: KD_ERR_MEM, KD_ERR_LA (BLACS did not place this rank). */
kd_err kd_la_grid_create(MPI_Comm comm, kd_la_grid **out);
/** Release the grid (Collective over the grid's communicator). Accepts NULL; sets *g = NULL. */
void kd_la_grid_destroy(kd_la_grid **g);

/** Fill a block of a symmetric l x l matrix: A[i + j*lda] = W(i0 + i, j0 + j) for i < ni, j < nj
 *  (column-major). Must be a pure function of the indices (any rank may ask for any block). */
typedef kd_err (*kd_la_fill_fn)(void *ctx, int i0, int ni, int j0, int nj, double *A, int lda);

/** Top-s eigenpairs of the l x l symmetric matrix given by fill, on the calling rank only, with
 *  LAPACK dsyevr (RANGE = 'I'). lambda[s] descending; U[l*s] row-major, U[i*s + t] = component i
 *  of eigenvector t, each vector's sign fixed so its largest-magnitude component (first within a
 *  factor 1e-8 of the maximum) is positive. Local. Errors: KD_ERR_ARG (s out of [1,l]),
 *  KD_ERR_MEM, KD_ERR_LA. */
kd_err kd_la_eig_top_local(int l, kd_la_fill_fn fill, void *ctx, int s, double *lambda, double *U);

/** Same result, computed with ScaLAPACK pdsyevr on a BLACS grid built from comm: W is filled and
 *  stored block-cyclically (nb x nb blocks), only the local blocks are evaluated on each rank.
 *  lambda and U are returned on every rank. Collective over comm. Errors as above (agreed). */
kd_err kd_la_eig_top_dist(MPI_Comm comm, int l, kd_la_fill_fn fill, void *ctx, int s, int nb,
                          double *lambda, double *U);

/** Null space of the r x K column-major matrix M (lda = r) by QR with column pivoting (dgeqp3):
 *  returns q = K - rank null vectors in V[K*q] column-major (V[j + t*K]), each with a 1 at a
 * distinct pivot position. rank = number of |R_ii| > rtol * |R_11|. M is overwritten. *q may be 0.
 *  V must hold K*K doubles. Local. Errors: KD_ERR_MEM, KD_ERR_LA. */
kd_err kd_la_null_space(int r, int K, double *M, double rtol, double *V, int *q);

#endif
