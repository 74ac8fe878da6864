/* recombination.h - Caratheodory recombination (Hayakawa, Oberhauser & Lyons, Remark 1): reduce a
 * weighted point measure sum_i w_i delta_{x_i} to at most m+1 of its points with the same total
 * weight and the same weighted sums of m test functions. Deterministic tree algorithm in the spirit
 * of Tchernychova / Litterer-Lyons: split the active points into 2(m+1) groups, reduce the group
 * sums through a null-space step (LAPACK dgeqp3), keep the surviving groups, repeat (about
 * log2(N/m) rounds). Reusable for any weighted point set and test-function matrix. */
#ifndef KDISTILL_RECOMBINATION_H
#define KDISTILL_RECOMBINATION_H

#include <mpi.h>

#include "comm/tree_impl.h"
#include "kdistill/author/kd_util.h"

/** A weighted point set seen through its test functions: n points, global ids gid[n], weights
 *  w[n] >= 0, test-function values F[n*m] row-major (F[i*m + j] = phi_j(x_i)). Arrays owned. */
typedef struct {
  int64_t n;
  int m;
  int64_t *gid;
  double *w;
  double *F;
} kd_recomb_set;

/** Allocate a set of capacity cap (n = 0). Local. */
kd_err kd_recomb_set_alloc(kd_recomb_set *s, int64_t cap, int m);
void kd_recomb_set_free(kd_recomb_set *s);

/** Relative rank tolerance of the null-space steps (|R_ii| <= tol |R_11| counts as zero). */
#define KD_RECOMB_RTOL 1e-13

/** Reduce s in place to at most m+1 points with positive weight (fewer if the test functions are
 *  linearly dependent on the points), preserving sum_i w_i and sum_i w_i F_i up to round-off.
 *  Points keep their relative order. Local, deterministic.
 *  Errors: KD_ERR_MEM, KD_ERR_LA, KD_ERR_NUMERIC (non-finite input). */
kd_err kd_recomb_reduce(kd_recomb_set *s);

/** Leaves [*lo, *hi) of rank `rank` when n_leaves leaves are split in blocks over size ranks
 *  (leaf j on rank floor(j * size / n_leaves), so leaf 0 is on rank 0). */
void kd_recomb_leaf_range(int64_t n_leaves, int rank, int size, int64_t *lo, int64_t *hi);

/** Distributed recombination over a fixed binary tree of n_leaves leaves (independent of the rank
 *  count): this rank passes its leaves leaves[0 .. hi-lo) (the block given by kd_recomb_leaf_range;
 *  contents are consumed), every leaf is reduced locally, then leaves 2j and 2j+1 are merged and
 *  reduced again, level by level, sending through comm/ helpers when the two halves live on
 *  different ranks. Exact: every reduction preserves the weighted sums. *out (allocated here) is
 *  the final set of at most m+1 points, replicated on every rank. Collective over comm. */
kd_err kd_recomb_tree(MPI_Comm comm, int m, int64_t n_leaves, kd_recomb_set *leaves,
                      kd_recomb_set *out);

/** kd_recomb_tree with an explicit leaf placement: rank r holds leaves [leaf_start[r],
 *  leaf_start[r+1]) (leaf_start[0] = 0, nondecreasing, leaf_start[size] = n_leaves; identical on
 *  every rank); NULL means the block split of kd_recomb_leaf_range. The merge tree, hence the
 *  result, does not depend on the placement. Collective over comm. */
kd_err kd_recomb_tree_map(MPI_Comm comm, int m, int64_t n_leaves, const int64_t *leaf_start,
                          kd_recomb_set *leaves, kd_recomb_set *out);

/** The distributed tree as a sequence of levels, so a caller can stop at a level boundary (the safe
 *  points of checkpoint/restart). Level 0 = every leaf reduced locally; level L = the nodes of
 *  the L-th merge round (node j covers leaves [j 2^L, (j+1) 2^L)); the last level,
 *  kd_recomb_tree_levels(n_leaves), has one node, the root. The placement is a binary
 *  kd_dist_tree (comm/tree_impl.h): node j of a level lives on the owner of leaf j 2^L, so the
 *  nodes of a rank are consecutive and rank order is node order; a level moves every node to its
 *  parent's owner (kd_dist_tree_up), which merges the two children in child order.
 *  Every level ends with one error agreement over comm; a rank may ask to stop there (`ask`, e.g.
 *  a pending SIGTERM): the request is folded into that agreement as KD_ERR_INTERRUPTED and, when
 *  it is the agreed outcome, *stop becomes 1 on every rank and the agreement is repeated without
 *  it (so a real error of another rank still wins). The level is complete either way. */
typedef struct {
  MPI_Comm comm;
  int m, rank;
  int64_t n_leaves;
  int64_t level, cnt;  /* current level and its node count */
  kd_dist_tree *tree;  /* the placement: owners, moves to the parent's owner, gathers (owned) */
  kd_recomb_set *node; /* [n_leaves]: node j of the current level (only owned ones set) */
  double *buf;         /* one packed node: 1 + (m+1)(m+2) doubles (the root's broadcast) */
  int64_t cap;
} kd_recomb_tree_state;

/** The agreement that ends a level (and the quadrature pipeline's eigen step): kd_dist_agreed of
 *  lerr with a stop request folded in as described above. Collective. */
kd_err kd_recomb_agree_stop(MPI_Comm comm, kd_err lerr, int ask, int *stop);

/** Merge levels of a tree of n_leaves leaves: ceil(log2(n_leaves)) (0 for one leaf). Local. */
int64_t kd_recomb_tree_levels(int64_t n_leaves);

/** Number of nodes at level L: ceil(n_leaves / 2^L). Local. */
int64_t kd_recomb_tree_count(int64_t n_leaves, int64_t level);

/** Level 0: take this rank's leaves (placement leaf_start as in kd_recomb_tree_map, NULL = block
 *  split; contents consumed), reduce each, agree (with `ask`, see above). *t is set up even on
 *  failure (free it with kd_recomb_tree_state_free). Collective. */
kd_err kd_recomb_tree_begin(MPI_Comm comm, int m, int64_t n_leaves, const int64_t *leaf_start,
                            kd_recomb_set *leaves, int ask, int *stop, kd_recomb_tree_state *t);

/** Set up *t at level `level` from all nodes of that level in node order (replicated on every
 *  rank, e.g. read from a checkpoint): node j has count[j] points; gid/w/F are the concatenated
 *  rows (F row-major, m columns). Each rank keeps the nodes it owns under leaf_start. Checks the
 *  shapes (KD_ERR_INPUT: level range, counts in [0, m+1]). Collective (agrees allocation errors).
 */
kd_err kd_recomb_tree_restore(MPI_Comm comm, int m, int64_t n_leaves, const int64_t *leaf_start,
                              int64_t level, int64_t n_nodes, const int64_t *count,
                              const int64_t *gid, const double *w, const double *F,
                              kd_recomb_tree_state *t);

/** One merge level (level + 1), agreed with `ask` (see above). Collective. */
kd_err kd_recomb_tree_step(kd_recomb_tree_state *t, int ask, int *stop);

/** Points held by this rank's nodes at the current level. Local. */
int64_t kd_recomb_tree_local_points(const kd_recomb_tree_state *t);

/** All nodes of the current level in node order on rank root: *count [cnt], *gid / *w [*total],
 *  *F [*total * m] (allocated on root, caller frees; NULL elsewhere). Collective. */
kd_err kd_recomb_tree_gather(const kd_recomb_tree_state *t, int root, int64_t **count,
                             int64_t *total, int64_t **gid, double **w, double **F);

/** After the last level: the root node, replicated into *out (allocated here). Collective. */
kd_err kd_recomb_tree_finish(kd_recomb_tree_state *t, kd_recomb_set *out);

/** Free *t (accepts a zeroed state). Local. */
void kd_recomb_tree_state_free(kd_recomb_tree_state *t);

/** Alg. 1 steps 2-4: given at most m+1 points from kd_recomb_reduce whose last test function is
 *  k1,diag, remove one more point along a null direction u of [1; phi_1..phi_{m-1}] with
 *  k1,diag^T u >= 0, so the means of phi_1..phi_{m-1} stay and the mean of k1,diag does not grow.
 *  No-op when s has at most m points. Local. */
kd_err kd_recomb_drop_one(kd_recomb_set *s);

#endif
