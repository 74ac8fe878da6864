/* dist_impl.h - the only home of raw MPI. Algorithms communicate through these helpers.
 * Every helper is Collective over comm unless marked Local, checks every MPI return code and
 * returns kd_err. */
#ifndef KDISTILL_DIST_IMPL_H
#define KDISTILL_DIST_IMPL_H

#include <mpi.h>

#include "kdistill/author/kd_algo.h"
#include "kdistill/author/kd_util.h"

int kd_dist_rank(MPI_Comm comm); /* Local; 0 on failure */
int kd_dist_size(MPI_Comm comm); /* Local; 1 on failure */

/** Agree on an error at a phase boundary: if any rank has *err != KD_OK, every rank returns with
 *  *err set to the code of the lowest failing rank and that rank's message installed locally
 *  (so rank 0 can print it). Returns KD_OK if the agreement itself worked (then check *err). */
kd_err kd_dist_agree(MPI_Comm comm, kd_err *err);
/** Convenience: agree on err and return the agreed code (KD_ERR_MPI if agreement failed). */
kd_err kd_dist_agreed(MPI_Comm comm, kd_err err);

/** KD_ALLOC followed by an agreement over comm: when any rank cannot allocate, every rank goes to
 *  cleanup with that rank's message (ptr is set or NULL per rank; cleanup frees it). Collective:
 *  use it before a collective where a lone failure would leave the other ranks waiting. */
#define KD_ALLOC_AGREED(comm, ptr, n)                                                          \
  do {                                                                                         \
    kd_err kd_aa_e_ = KD_OK;                                                                   \
    size_t kd_aa_n_ = (size_t)(n);                                                             \
    (ptr) = calloc(kd_aa_n_ ? kd_aa_n_ : 1, sizeof(*(ptr)));                                   \
    if (!(ptr))                                                                                \
      kd_aa_e_ =                                                                               \
          kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "cannot allocate %zu x %zu bytes for %s", \
                     kd_aa_n_, sizeof(*(ptr)), #ptr);                                          \
    KD_TRY(kd_dist_agreed((comm), kd_aa_e_));                                                  \
  } while (0)

/** A (value, global index) pair reduced with ties to the smallest index. A rank with no candidate
 *  passes idx = -1 (and any value). A rank with a local error passes err != KD_OK: the error is
 *  folded into the same reduction and returned on every rank (message of the lowest failing rank).
 *  On return: *vout, *iout (idx -1 if nobody had a candidate). */
kd_err kd_dist_argmin(MPI_Comm comm, double v, kd_gidx idx, kd_err err, double *vout,
                      kd_gidx *iout);
kd_err kd_dist_argmax(MPI_Comm comm, double v, kd_gidx idx, kd_err err, double *vout,
                      kd_gidx *iout);
/** kd_dist_argmin with npay (<= 65) doubles of payload per rank, the same npay on every rank: on
 *  return pout holds the payload of the rank whose (value, index) won, so a winner's row needs no
 *  broadcast after the reduction. */
kd_err kd_dist_argmin_pay(MPI_Comm comm, double v, kd_gidx idx, kd_err err, const double *pay,
                          int npay, double *vout, kd_gidx *iout, double *pout);

/** In-place element-wise sums / maxima / minima over ranks. */
kd_err kd_dist_sum(MPI_Comm comm, double *buf, int n);
/** The sum over all ranks of this rank's x[0..n) (non-negative, finite), the same double whatever
 *  the rank count and order: the values are added exactly in fixed point (exact_sum.c) and the
 *  exact total is rounded by one fixed procedure (to within 2^-42 relative). Collective. */
kd_err kd_dist_sum_exact(MPI_Comm comm, const double *x, int64_t n, double *out);
/** out[j] = sum over all ranks of sum_i V[j nl + i] x[i] (x NULL: 1), j < m: signed sums that do
 *  not depend on the rank count or order. Every term is scaled by one power of two per column
 *  (from a bound on its terms and n_global) and added exactly into two int64 fixed-point digits,
 *  which are summed over the ranks; the error is below n_global^2 2^-94 times the bound
 *  (n_global < 2^30 terms). bound: NULL (then the exact maximum |term| is reduced first, one
 *  more collective) or bound[m] >= every |V x| term of its column, the same bits on every rank.
 *  Collective. */
kd_err kd_dist_dot_fixed(MPI_Comm comm, int m, int64_t nl, const double *V, const double *x,
                         kd_gidx n_global, const double *bound, double *out);
kd_err kd_dist_sum_i64(MPI_Comm comm, int64_t *buf, int n);
kd_err kd_dist_sum_u64(MPI_Comm comm, uint64_t *buf, int n);
kd_err kd_dist_max(MPI_Comm comm, double *buf, int n);
kd_err kd_dist_min(MPI_Comm comm, double *buf, int n);
kd_err kd_dist_max_i64(MPI_Comm comm, int64_t *buf, int n);

/** Broadcast nbytes from root. */
kd_err kd_dist_bcast(MPI_Comm comm, void *buf, int64_t nbytes, int root);
/** Ring shift: send send[0..ns) doubles to rank+1, receive up to cap doubles from rank-1 into
 *  recv; *nr gets the count received. */
kd_err kd_dist_ring_shift(MPI_Comm comm, const double *send, int64_t ns, double *recv, int64_t cap,
                          int64_t *nr);
/** All-gather variable-length double blocks: every rank contributes n_local values; out gets the
 *  concatenation in rank order (length = sum). counts/displs computed internally. */
kd_err kd_dist_allgatherv(MPI_Comm comm, const double *in, int64_t n_local, double *out);
kd_err kd_dist_allgatherv_i64(MPI_Comm comm, const int64_t *in, int64_t n_local, int64_t *out);
/** All-gather n values from every rank (the same n on every rank): out gets size * n values in
 *  rank order. */
kd_err kd_dist_allgather(MPI_Comm comm, const double *in, int64_t n, double *out);
/** kd_dist_allgatherv when every rank knows every rank's count: counts[r] values from rank r at
 *  out + displs[r] (both the same on every rank; in holds counts[rank] values). One collective
 *  instead of two, and nothing allocated, so no rank can fail alone before it. */
kd_err kd_dist_allgatherv_known(MPI_Comm comm, const double *in, const int *counts,
                                const int *displs, double *out);
/** Gather variable-length blocks to root only (out significant on root). */
kd_err kd_dist_gatherv(MPI_Comm comm, const double *in, int64_t n_local, double *out, int root);
/** *before = the sum of v over the ranks below this one (0 on rank 0). */
kd_err kd_dist_exscan_i64(MPI_Comm comm, int64_t v, int64_t *before);
/** All-to-all exchange: this rank sends scount[r] doubles to rank r (blocks consecutive in send,
 *  in rank order) and receives rcount[r] doubles from rank r (consecutive in recv, in rank order);
 *  the counts must match pairwise and each side stay below 2^31 values. */
kd_err kd_dist_alltoallv(MPI_Comm comm, const double *send, const int64_t *scount, double *recv,
                         const int64_t *rcount);
/** Barrier. */
kd_err kd_dist_barrier(MPI_Comm comm);
/** Split comm into groups (MPI_Comm_split with color, key = rank); *out owned by caller
 *  (kd_dist_comm_free). Installs MPI_ERRORS_RETURN. */
kd_err kd_dist_split(MPI_Comm comm, int color, MPI_Comm *out);
/** Duplicate a communicator (for private traffic), with MPI_ERRORS_RETURN installed. */
kd_err kd_dist_dup(MPI_Comm comm, MPI_Comm *out);
void kd_dist_comm_free(MPI_Comm *c);
/** Point-to-point helpers for tree merges: blocking send / receive of doubles with tag. recv: up
 *  to cap values, *nr gets the count. */
kd_err kd_dist_send(MPI_Comm comm, const double *buf, int64_t n, int dest, int tag);
kd_err kd_dist_recv(MPI_Comm comm, double *buf, int64_t cap, int64_t *nr, int src, int tag);
/** Seconds this process has spent inside the kd_dist_* helpers (waiting included), and reset.
 *  Local. */
/** Add the seconds since t0 (MPI_Wtime) to the bound context's communication timer (for the
 *  --verbose timing line); every dist/ helper that communicates calls it. Local. */
void kd_dist_comm_add(double t0);
/** Count one communication operation over comm moving `bytes` of payload into or out of this rank
 *  (sent plus received) on the bound context (the --verbose volume: /metrics comm_*); nothing on
 *  a one-rank communicator. Local. */
void kd_dist_comm_count(MPI_Comm comm, int64_t bytes);
/** The bound context's counted payload bytes and operations since the last reset. Local. */
int64_t kd_dist_comm_bytes(void);
int64_t kd_dist_comm_ops(void);
double kd_dist_comm_seconds(void);
void kd_dist_comm_seconds_reset(void);
/** --verbose: rank-0 lines with min / mean / max over ranks of compute (total_seconds minus
 *  communication) and communication seconds, and of the communication volume; with res, the
 *  /metrics comm_bytes_max, comm_bytes_mean, comm_ops_max (int64) and comm_seconds_max (the run
 *  so far: load, algorithm and evaluation). Collective. */
kd_err kd_dist_timing_report(MPI_Comm comm, double total_seconds, kd_result *res);
/** Wall clock (MPI_Wtime). Local. */
double kd_dist_wtime(void);

#endif
