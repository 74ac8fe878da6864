/* tree_impl.h - the distributed tree / bin primitive: who owns which bin or tree node, moving a
 * node's rows to its parent's owner, collecting contiguous row ranges (bins) on their owners and
 * gathering per-bin results back in bin order.
 * One implementation of the logistics shared by the thinning tree (algo/thinning/driver.c), the
 * recombination tree (algo/quadrature/recombination.c) and the CTT bins (algo/twosample/ctt.c); the
 * algorithms keep only the mathematics of a node. Raw MPI stays in dist/.
 *
 * The tree. n_leaves leaves, arity a >= 2. Level 0 holds the leaves; node (l, i) covers the leaves
 * [i a^l, min((i+1) a^l, n_leaves)), so level l has ceil(n_leaves / a^l) nodes and the children of
 * (l, i) are the nodes (l-1, a i + c), c = 0..a-1, that exist. The leaves are placed by a
 * nondecreasing table start[0..size]: rank r owns the leaves [start[r], start[r+1]). The owner of
 * a node is the owner of its first leaf. Hence at every level the owners are nondecreasing in the
 * node index (each rank owns one contiguous range of nodes, possibly empty), and the owner of a
 * parent is the owner of its first child, never a higher rank than the owner of any child: a node
 * travels only towards lower ranks, so blocking sends issued before the receives cannot deadlock,
 * and gathering the nodes of a level in rank order gives them in node order.
 *
 * Data. A node's content is a block of doubles (kd_dist_block, owned by whoever holds it); what
 * the doubles mean (packed rows with their global index, a recombination set, ...) is the
 * caller's business. Results depend only on the logical tree, never on the rank count.
 *
 * Use. Thinning (algo/thinning/driver.c): arity 4 over the leaf bins, each bin placed with the
 * owner of its first row; kd_dist_bins_collect fills the bins, kd_dist_tree_up + a local halving
 * per parent is one merge level, kd_dist_tree_gather brings the top level to rank 0.
 * Recombination: arity 2 with its leaf_start table (NULL gives the block placement of
 * kd_recomb_leaf_range), kd_dist_tree_up + the pairwise merge per level, the root on the owner of
 * leaf 0, kd_dist_tree_gather for a checkpoint. CTT: kd_dist_bins_collect of each sample's bins to
 * the owners of their first rows (bins inside a block read in place), kd_dist_bins_allgather of the
 * coresets in bin order.
 *
 * Errors. Every function returns kd_err. Collective functions check every MPI code (KD_ERR_MPI);
 * an allocation failure on one rank is returned on that rank only, after all the messages the call
 * expects were drained (so no peer is left blocked): agree it with kd_dist_agree at the next phase
 * boundary, as usual. */
#ifndef KDISTILL_DIST_TREE_IMPL_H
#define KDISTILL_DIST_TREE_IMPL_H

#include <mpi.h>

#include "kdistill/author/kd_util.h"

/** A block of n doubles; v is owned by the holder (free with kd_dist_block_free). */
typedef struct {
  int64_t n;
  double *v;
} kd_dist_block;

/** Free b->v and reset *b to {0, NULL}. Accepts NULL. Local. */
void kd_dist_block_free(kd_dist_block *b);

/** The placement of a tree (opaque). */
typedef struct kd_dist_tree kd_dist_tree;

/** Create the tree of n_leaves >= 1 leaves and arity >= 2 on comm. Collective. The tree's
 *  messages travel on comm with their own tag (7301), each received within the call that sends
 *  it: comm must carry no other point-to-point message with that tag.
 *  @param[in]  comm        the communicator (borrowed: it must outlive the tree).
 *  @param[in]  leaf_start  size+1 nondecreasing entries, leaf_start[0] = 0, leaf_start[size] =
 *                          n_leaves (copied), or NULL for the block placement: rank r owns the
 *                          leaves [ceil(n_leaves r / size), ceil(n_leaves (r+1) / size)).
 *  @param[out] out         the new tree (kd_dist_tree_destroy).
 *  @return KD_ERR_ARG (bad sizes or table, same on every rank), KD_ERR_MEM, KD_ERR_MPI. */
kd_err kd_dist_tree_create(MPI_Comm comm, int arity, int64_t n_leaves, const int64_t *leaf_start,
                           kd_dist_tree **out);
/** Free a tree (and its communicator). Accepts NULL / *t == NULL; sets *t = NULL. Local. */
void kd_dist_tree_destroy(kd_dist_tree **t);

/** Nodes at level l: ceil(n_leaves / arity^l) (1 above the root). Local. */
int64_t kd_dist_tree_nodes(const kd_dist_tree *t, int level);
/** Levels above the leaves up to the root: the smallest L with one node at level L. Local. */
int kd_dist_tree_levels(const kd_dist_tree *t);
/** Rank owning node (level, i) (the owner of its first leaf). Local. */
int kd_dist_tree_owner(const kd_dist_tree *t, int level, int64_t i);
/** The contiguous range [*lo, *hi) of level-l nodes this rank owns (lo == hi: none). Local. */
void kd_dist_tree_range(const kd_dist_tree *t, int level, int64_t *lo, int64_t *hi);

/** Move the nodes of `level` to the owners of their parents. Collective.
 *  @param[in,out] mine  this rank's nodes [lo, hi) of `level` (kd_dist_tree_range), mine[i - lo];
 *                       every block is handed over: sent (and freed) or moved into kids; on return
 *                       all are {0, NULL}.
 *  @param[out]    kids  for each parent p in this rank's range [plo, phi) of level + 1, its
 *                       children in child order: kids[(p - plo) * arity + c] is the block of child
 *                       arity p + c ({0, NULL} if that child does not exist); (phi - plo) * arity
 *                       entries provided by the caller. Blocks received are allocated here.
 *  @return KD_ERR_MPI; KD_ERR_MEM (local) if a received block could not be allocated (its kids
 *          entry is then {0, NULL}). */
kd_err kd_dist_tree_up(const kd_dist_tree *t, int level, kd_dist_block *mine, kd_dist_block *kids);

/** Concatenate the blocks of all nodes of `level` on rank root, in node order. Collective.
 *  @param[in]  mine   this rank's nodes [lo, hi) of the level (borrowed; unchanged).
 *  @param[out] all    root: the concatenation (malloc'ed, caller frees; at least one double);
 *                     other ranks: NULL.
 *  @param[out] n_all  total doubles (every rank).
 *  @return KD_ERR_MEM (agreed: every rank returns it), KD_ERR_MPI. */
kd_err kd_dist_tree_gather(const kd_dist_tree *t, int level, const kd_dist_block *mine, int root,
                           double **all, int64_t *n_all);

/** Collect contiguous row ranges ("bins") of a row-distributed array on their owners. Rank r
 *  holds the global rows [row_offs[r], row_offs[r+1]) as rows[(g - row_offs[r]) * width + ...];
 *  bin j is the rows [bound[j], bound[j+1]) (bound nondecreasing, nbins + 1 entries, inside
 *  [0, row_offs[size])) and goes to rank owner[j] (any placement: owners need not be monotone).
 *  Collective; row_offs, bound and owner identical on every rank.
 *  @param[out] bins  nbins entries: for every j with owner[j] == rank, bins[j] gets the bin's
 *                    (bound[j+1] - bound[j]) * width doubles in row order (allocated here, at
 *                    least one double); other entries are set to {0, NULL}. With views != 0,
 *                    an owned bin whose rows all lie in this rank's block is not copied:
 *                    bins[j] = {its count of doubles, NULL}, and the caller reads it from rows.
 *  @return KD_ERR_MEM (agreed before any traffic), KD_ERR_MPI, KD_ERR_ARG (a count over INT_MAX).
 */
kd_err kd_dist_bins_collect(MPI_Comm comm, const int64_t *row_offs, const double *rows, int width,
                            int64_t nbins, const int64_t *bound, const int *owner, int views,
                            kd_dist_block *bins);

/** The blocks of all bins, concatenated in bin order on every rank (the inverse placement of
 *  kd_dist_bins_collect: owners need not be monotone). Collective; owner identical everywhere.
 *  @param[in]  bins  nbins entries; bins[j] is read on rank owner[j] only (borrowed).
 *  @param[out] all   the concatenation (malloc'ed, caller frees; at least one double).
 *  @param[out] offs  nbins + 1 entries (caller's): bin j is all[offs[j] .. offs[j+1]).
 *  @return KD_ERR_MEM (agreed), KD_ERR_MPI. */
kd_err kd_dist_bins_allgather(MPI_Comm comm, int64_t nbins, const int *owner,
                              const kd_dist_block *bins, double **all, int64_t *offs);

#endif
