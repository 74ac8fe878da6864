/* thin_impl.h - building blocks shared by the thinning family (private to src/algo/thinning/ and
 * src/algo/apps/): the halving rules of Low-Rank Thinning App. B (KH(delta) Alg. B.1, LKH(delta)
 * Alg. B.2, GS-Halve-Cubic Alg. B.7), the KH-Refine swap pass (App. H, Alg. H.1), the Compress
 * recursion (Alg. B.4 / B.8) on one rank, and the distributed driver used by every `thin`
 * algorithm. All Local functions are deterministic: randomness is keyed by (seed, stream, counter)
 * with stream = node id * 64 + level, so results never depend on where a call runs. */
#ifndef KDISTILL_THIN_IMPL_H
#define KDISTILL_THIN_IMPL_H

#include "kdistill/author/kd_algo.h"
#include "kdistill/author/kd_ckpt.h"

#include "comm/tree_impl.h"

/* KD_HALVE_KHA: KH(delta) with the adaptive get_swap_params thresholds (threshold: adaptive) */
typedef enum { KD_HALVE_KH = 0, KD_HALVE_LKH = 1, KD_HALVE_GS = 2, KD_HALVE_KHA = 3 } kd_halve_kind;
/** Flag or'ed into a kd_halve_kind (`pairing: local`): the halving pairs the points of its input by
 *  kd_thin_pair_local instead of taking consecutive rows as pairs. */
#define KD_HALVE_LOCAL 16
#define KD_HALVE_RULE(kind) ((kd_halve_kind)((int)(kind) & (KD_HALVE_LOCAL - 1)))

/** stream of a node: (node id, level) -> one 64-bit stream id. Levels < 64. */
#define KD_THIN_STREAM(node, level) ((uint64_t)(node)*64u + (uint64_t)(level))
/** level id used for the remainder halving inside a leaf bin */
#define KD_THIN_LEVEL_REMAINDER 62
/** level id used for the final halving rounds at the root (level = 40 + round) */
#define KD_THIN_LEVEL_FINAL 40

/** Halve the sequence X[n*d] (n even, consecutive pairs (X_{2i}, X_{2i+1})): keep[i] in {2i, 2i+1}
 *  for i < n/2. With KD_HALVE_LOCAL in kind the pairs are those of kd_thin_pair_local (coin i for
 *  its pair i) and keep[] holds one row of each, in increasing order. KH: Alg. B.1 with a_i = b_i
 * b_max,i (1/2 + log(2n/delta)) (delta < 0 selects the `tight` threshold a_i = b_i b_max,i / 2);
 * KHA: KH(delta) with a_i, sigma_i from get_swap_params of Alg. B.2 applied to f_i = k(x,.) -
 * k(x',.), delta_i = delta / (2 i (log(n/2) + 1)); LKH: Alg. B.2 (linear kernel <x,y>,
 * get_swap_params, kernel k unused, may be NULL); GS: Alg. B.7 (cubic GS walk with rank-one inverse
 * downdates; delta unused). Local. */
kd_err kd_thin_halve(kd_kernel *k, kd_halve_kind kind, const double *X, kd_lidx n, int d,
                     double delta, uint64_t seed, uint64_t stream, kd_lidx *keep);

/** The rows [lo, hi) of w rows that rank `rank` of `size` computes when the ranks share one
 *  kd_kernel_matvec by rows: whole groups of four rows, split evenly. kd_kernel_matvec sums each
 *  row by itself; only the groups of four rows it forms (from the first row of a call) choose
 *  between its paths, so a share starting at a multiple of four gives every row the bits of the
 *  whole call. Local. */
void kd_thin_row_share(kd_lidx w, int rank, int size, kd_lidx *lo, kd_lidx *hi);

/** The ranks of comm halving one sequence together (kd_thin_halve_team): every rank holds the
 *  whole sequence. skip accumulates the kernel evaluations this rank made that another rank also
 *  made (0 on rank 0), for the driver's count of distinct evaluations. A KH halving splits each
 *  chunk's rows over at most KD_THIN_HALVE_GROUP ranks (one group of four rows each): a larger
 *  team halves in groups of consecutive ranks of at most halve_group ranks (0: that default),
 *  every group making the same halving, over a communicator split once (gcomm, when ngroups > 0;
 *  kd_thin_team_free). Zero-initialise the fields after refine_rows. */
typedef struct {
  MPI_Comm comm;
  int rank, size;
  uint64_t skip;
  kd_lidx refine_rows; /* KH-Refine's candidates per rank below which it runs on fewer ranks
                        * (kd_thin_refine_team); 0: the default */
  int halve_group;     /* most ranks of a halving's group; 0: KD_THIN_HALVE_GROUP */
  int ngroups;         /* 0 until the groups are made (the first halving that needs them) */
  MPI_Comm gcomm;      /* this rank's group, when ngroups > 0 */
} kd_thin_team;
#define KD_THIN_HALVE_GROUP 32
/** Frees the team's group communicator (nothing else: comm is the caller's). Local. */
void kd_thin_team_free(kd_thin_team *team);

/** kd_thin_halve by every rank of team->comm on the same X (collective; team NULL or one rank:
 *  kd_thin_halve itself). The same keep[] bit for bit whatever the rank count: for KH and KHA each
 *  chunk's mat-vec rows are split over the ranks (whole groups of four rows, whose sums do not
 *  depend on the rows beside them) and all-gathered; the chunk's own pairs, the coins and the
 *  exact rows of unsettled screened coins are computed by every rank. LKH and GS run whole on
 *  every rank. Errors are agreed over the team. */
kd_err kd_thin_halve_team(kd_kernel *k, kd_halve_kind kind, const double *X, kd_lidx n, int d,
                          double delta, uint64_t seed, uint64_t stream, kd_thin_team *team,
                          kd_lidx *keep);

/** The fast Gauss transform of the KH halving (halve_fgt.c): the signed kernel sums of the
 *  points placed so far from Hermite expansions kept per cell of a grid, each row with a proven
 *  bound on its distance to kd_kernel_matvec's value (signs +-1). */
typedef struct kd_kh_fgt kd_kh_fgt;
/** The grid for the n rows X (Gaussian kernel, 1 <= d <= 3; *out NULL otherwise, or when no grid
 *  fits its memory cap) and *cross, the number of earlier points from which a row costs less by
 *  the expansions than by exact evaluations (an estimate). Local. */
kd_err kd_kh_fgt_prepare(kd_kernel *k, const double *X, kd_lidx n, int d, kd_kh_fgt **out,
                         double *cross);
/** Adds the cnt rows X with signs sgn (+-1) to the expansions. Local. */
void kd_kh_fgt_add(kd_kh_fgt *f, const double *X, kd_lidx cnt, const double *sgn);
/** y[i] = the sum over the nb points added so far at row A_i, yb[i] its bound. Local. */
void kd_kh_fgt_eval(kd_kh_fgt *f, const double *A, kd_lidx rows, kd_lidx nb, double *y, double *yb);
void kd_kh_fgt_free(kd_kh_fgt **f);

/** perm[n] (n even): an order of the rows X[n*d] in which the two rows of every consecutive pair
 *  (perm[2i], perm[2i+1]) are close: a k-d split on the widest coordinate (median, even halves,
 *  ties by row) down to cells of two. Deterministic. Local. */
kd_err kd_thin_pair_local(const double *X, kd_lidx n, int d, kd_lidx *perm);

/** KH-Refine swap pass (App. H, Alg. H.1): candidates C[nc*d], zc[nc] = mean embedding of the
 * target P_in at the candidates, sel[m] = distinct indices into C (the current coreset). For i =
 * 0..m-1 replace sel[i] by the candidate not in the coreset (or sel[i] itself) that minimises
 *  MMD(P_in, coreset); ties keep the current point, then the lowest index. The MMD never increases
 *  (Remark 3). `passes` sweeps (1 = Alg. H.1), stopping early after a sweep without a swap.
 *  *n_swaps (optional) counts the replacements. Local. */
kd_err kd_thin_refine(kd_kernel *k, const double *C, kd_lidx nc, int d, const double *zc,
                      kd_lidx *sel, kd_lidx m, int passes, kd_lidx *n_swaps);
/** kd_thin_refine by every rank of team->comm (collective; team NULL or one rank: kd_thin_refine):
 *  the candidates are shared over groups of at most nc / team->refine_rows consecutive ranks
 *  (kd_thin_row_share; every rank alone when that is below 2), each step's best replacement agreed
 *  in one all-gather over the group, every group running the same pass; the same swaps and sel[]
 *  bit for bit whatever the rank count. The evaluations of ranks outside the first group are added
 *  to team->skip. Errors are agreed over the team. */
kd_err kd_thin_refine_team(kd_kernel *k, const double *C, kd_lidx nc, int d, const double *zc,
                           kd_lidx *sel, kd_lidx m, int passes, kd_thin_team *team,
                           kd_lidx *n_swaps);

/** One leaf bin of the thinning tree: *err = fn(arg) and 1, except in a timing-only run of the
 *  SMPI build (leaf_sample_smpi.c, KD_SIM_SAMPLE_LEAVES), where once SimGrid has sampled enough
 *  bins it charges their mean time instead, returns 0 and leaves the bin's output to the caller
 *  (a placeholder). leaf_sample.c (every other build) always runs it. Local. */
int kd_leaf_sample_run(kd_err (*fn)(void *), void *arg, kd_err *err);

/** Compress (Alg. B.4 / B.8) of one node of height h: X[4^h * d] rows -> out[2^(g+h)] indices into
 *  X (or all 4^h rows when h <= g). Node id `node` keys the randomness (children 4*node+c).
 *  delta_fn scaling: the halving at a node of input size l uses delta * l^2 / delta_den.
 *  refine_top: 1 -> the halving at this node (not its children) is followed by KH-Refine against
 *  the uniform measure on X itself. Local. */
kd_err kd_thin_compress_node(kd_kernel *k, kd_halve_kind kind, const double *X, int d, int h, int g,
                             double delta, double delta_den, uint64_t seed, uint64_t node,
                             int refine_top, kd_lidx *out, kd_lidx *n_out);

/** Rows on demand: get(ctx, i0, cnt, dst) writes rows i0 .. i0+cnt-1 of a node's row sequence to
 *  dst[cnt*d] (e.g. generated rows of lazy data). */
typedef struct {
  kd_err (*get)(void *ctx, kd_lidx i0, kd_lidx cnt, double *dst);
  void *ctx;
} kd_thin_rows;

/** The rows of a generated leaf bin after the remainder rule (a kd_thin_rows context for
 *  kd_thin_bin_rows_get): rows i < nf are the bin's input rows g0 + i (from ps), row nf + a is
 *  row kk[a] of the halved tail T. */
typedef struct {
  const kd_pointset *ps;
  kd_gidx g0;
  kd_lidx nf;
  const double *T;
  const kd_lidx *kk;
  int d;
} kd_thin_bin_rows;
kd_err kd_thin_bin_rows_get(void *ctx, kd_lidx i0, kd_lidx cnt, double *dst);

/** kd_thin_compress_node (refine_top 0) over the 4^h rows src[r0 ..], which are never all held:
 *  a node of height <= max(hb, g) gets its rows from src at once and runs the resident recursion,
 *  a higher one recurses into its children and keeps only their outputs. Bitwise the result of
 *  kd_thin_compress_node on the same rows; also returns the output rows' coordinates outx[n_out*d].
 *  Memory O(4^hb d + 2^(g+h) d). Local. */
kd_err kd_thin_compress_node_src(kd_kernel *k, kd_halve_kind kind, const kd_thin_rows *src,
                                 kd_lidx r0, int d, int h, int hb, int g, double delta,
                                 double delta_den, uint64_t seed, uint64_t node, kd_lidx *out,
                                 double *outx, kd_lidx *n_out);

/** The rows Compress keeps of a node of height h with oversampling g: 2^(g+h), or all its 4^h
 *  rows when h <= g. */
kd_lidx kd_thin_node_out(int h, int g);

/** The top of kd_thin_compress_node(_src) for node `node` of height h whose descendants of height
 *  hs <= h are compressed already (on other ranks, kd_thin_leaves_split): descendant q = 0 ..
 *  4^(h-hs) - 1 (row order; node id 4^(h-hs) node + q) gave its so rows (2^(g+hs), or all 4^hs
 *  when hs <= g) at sidx[q so ..] (row indices relative to this node's first row) with their
 *  coordinates sx[q so d ..]. out, outx, n_out: bitwise those of kd_thin_compress_node_src on
 *  the node's rows. Local. */
kd_err kd_thin_compress_join(kd_kernel *k, kd_halve_kind kind, int d, int h, int hs, int g,
                             double delta, double delta_den, uint64_t seed, uint64_t node,
                             const kd_lidx *sidx, const double *sx, kd_lidx *out, double *outx,
                             kd_lidx *n_out);

/** The remainder rule's halving of the last 2e rows T[2e*d] of bin `bin` (kk[e]: indices into T),
 *  as kd_thin_absorb_remainder does it. Local. */
kd_err kd_thin_remainder_halve(kd_kernel *k, kd_halve_kind kind, const double *T, kd_lidx e, int d,
                               double delta, uint64_t seed, uint64_t bin, kd_lidx *kk);

/** Remainder rule: a bin of s rows with B <= s < 2B logical slots (B = bin size) becomes B rows by
 *  kernel-halving its last 2(s-B) rows (pairs in order) and keeping the first 2B - s rows as they
 *  are. keep[B] gets indices into the bin. LKH/GS bins use the same halving rule as the algorithm.
 *  Local. */
kd_err kd_thin_absorb_remainder(kd_kernel *k, kd_halve_kind kind, const double *X, kd_lidx s,
                                kd_lidx B, int d, double delta, uint64_t seed, uint64_t bin,
                                kd_lidx *keep);

/** What a `thin` algorithm asks the distributed driver for. */
typedef struct {
  kd_halve_kind kind;
  int compress;      /* 1: Compress with oversampling g over the bins; 0: plain repeated halving */
  int g;             /* oversampling (compress only) */
  double delta;      /* failure probability in (0,1) */
  int refine;        /* 1: KH-Refine after the last halving round (target = P_in) */
  int max_rounds;    /* > 0: at most this many halving rounds (kh: 1); 0: down to n_out */
  kd_gidx n_out;     /* requested output size */
  int reweight;      /* 1: convex reweighting against P_in (kd_simplex_qp) */
  int tight;         /* 1: KH threshold a_i = b_i b_max,i / 2 instead of Alg. B.1's */
  int refine_passes; /* sweeps of the refine pass (>= 1) */
  kd_lidx refine_group_rows; /* KH-Refine's candidates per rank below which fewer ranks share
                              * them (kd_thin_team.refine_rows; 0: the default) */
  int refine_pool;   /* candidates of KH-Refine: the input of the last refine_pool halving rounds */
  int leaf_split;    /* the leaf bins' split over the ranks (kd_thin_leaf_split_depth): -1 auto */
  int halve_group;   /* the shared halvings' most ranks per group (kd_thin_team; 0: default) */
  int refine_target; /* 0: z over P_in (kd_target_embed_rows); 1: over the Compress output */
  int adaptive;      /* 1: KH rounds use KD_HALVE_KHA (threshold: adaptive); 0 with tight = 0:
                        Alg. B.1's simplified threshold */
  int pairing_local; /* 1: every halving pairs close points (kd_thin_pair_local); 0: consecutive
                        rows as given (the reference implementation's order) */
  int progress;      /* 1: rank-0 progress line per tree step (set by kd_thin_plan_from_params;
                        0 for the callers in src/algo/apps/, which zero the plan) */
} kd_thin_plan;

/** Run a thinning plan on in->points (distributed rows) with target in->target (P_in).
 *  Collective. */
kd_err kd_thin_run(const kd_algo_in *in, const kd_thin_plan *plan, kd_result *out);

/** The typed parameters of the `thin` family: every algorithm declares the rows it uses (the
 *  KD_THIN_PARAM_* rows below, defaults stated there only) and kd_thin_plan_from_params fills this
 *  struct from them once (kd_params_fill; members of keys an algorithm does not declare stay 0). */
typedef struct {
  int64_t n_out, g, refine_passes, refine_pool, refine_group_rows, leaf_split, halve_group;
  double delta;
  int refine;
  int reweight;      /* index in none|convex */
  int threshold;     /* index in adaptive|simplified|tight */
  int refine_target; /* index in input|compress */
  int pairing;       /* index in local|input */
} kd_thin_params;

/** Shared parameter rows (so every algorithm documents the same keys the same way). */
#define KD_THIN_PARAM_NOUT KD_PARAM_N_OUT(kd_thin_params, n_out, 1, 1e15, "number of output points")
#define KD_THIN_PARAM_DELTA                                             \
  {                                                                     \
    "delta", KD_PARAM_F64, 0.5, NULL, 0, 1, NULL,                       \
        "failure probability delta, in (0,1) (KH swapping thresholds)", \
        KD_PARAM_AT(kd_thin_params, delta)                              \
  }
#define KD_THIN_PARAM_G_ROW(def, doc) KD_PARAM_G(kd_thin_params, g, def, -1, doc)
#define KD_THIN_PARAM_G                                                                  \
  KD_THIN_PARAM_G_ROW(-1,                                                                \
                      "Compress oversampling: bins output 2^g sqrt(size) points; needs " \
                      "4^(g+1) <= n_in; -1: 4, lowered to fit an input of fewer than 4^5 rows")
/* Compress's leaf bins over more ranks than bins */
#define KD_THIN_PARAM_LEAF_SPLIT                                                                  \
  {                                                                                               \
    "leaf_split", KD_PARAM_INT, -1, NULL, -1, 8, NULL,                                            \
        "Compress on more ranks than leaf bins (64 per tree): every bin is compressed from its "  \
        "4^leaf_split descendants on other ranks, then joined on its owner; -1: the least split " \
        "that gives every rank a part (none with fewer ranks than bins); 0: none; the same "      \
        "result at any value",                                                                    \
        KD_PARAM_AT(kd_thin_params, leaf_split)                                                   \
  }
#define KD_THIN_PARAM_REFINE                                                 \
  {                                                                          \
    "refine", KD_PARAM_BOOL, 0, NULL, 0, 1, NULL,                            \
        "run the KH-Refine swap pass (App. H) after the last halving round", \
        KD_PARAM_AT(kd_thin_params, refine)                                  \
  }
#define KD_THIN_PARAM_REWEIGHT                                                  \
  {                                                                             \
    "reweight", KD_PARAM_STR, 0, "none", 0, 0, "none|convex",                   \
        "convex: re-optimise the output weights over the simplex against P_in", \
        KD_PARAM_AT_INDEX(kd_thin_params, reweight)                             \
  }
/* index of each choice of `threshold` */
enum {
  KD_THIN_THRESHOLD_ADAPTIVE = 0,
  KD_THIN_THRESHOLD_SIMPLIFIED = 1,
  KD_THIN_THRESHOLD_TIGHT = 2
};
#define KD_THIN_PARAM_THRESHOLD_ROW(def)                                                       \
  {                                                                                            \
    "threshold", KD_PARAM_STR, 0, def, 0, 0, "adaptive|simplified|tight",                      \
        "KH swapping threshold: adaptive = get_swap_params of Alg. B.2 (sigma tracked by eq. " \
        "(70)); simplified = Alg. B.1 b_i b_max (1/2 + log(2n/delta)); tight = b_i b_max / 2 " \
        "(greedier, no sub-Gaussian guarantee)",                                               \
        KD_PARAM_AT_INDEX(kd_thin_params, threshold)                                           \
  }
#define KD_THIN_PARAM_THRESHOLD KD_THIN_PARAM_THRESHOLD_ROW("simplified")

#define KD_THIN_PARAM_PASSES_ROW_D(def)                                                       \
  {                                                                                           \
    "refine_passes", KD_PARAM_INT, def, NULL, 1, 100, NULL,                                   \
        "sweeps of the KH-Refine swap loop (1 = Alg. H.1 exactly); stops early when a sweep " \
        "swaps "                                                                              \
        "nothing",                                                                            \
        KD_PARAM_AT(kd_thin_params, refine_passes)                                            \
  }
/* the rows every algorithm with the swap loop declares: its sweeps and its groups, and the groups
 * of the shared halvings */
#define KD_THIN_PARAM_PASSES_ROW KD_THIN_PARAM_PASSES_ROW_D(3)
#define KD_THIN_PARAM_PASSES \
  KD_THIN_PARAM_PASSES_ROW, KD_THIN_PARAM_GROUP_ROWS, KD_THIN_PARAM_HALVE_GROUP

/* the shared halvings' groups on many ranks */
#define KD_THIN_PARAM_HALVE_GROUP                                                               \
  {                                                                                             \
    "halve_group", KD_PARAM_INT, KD_THIN_HALVE_GROUP, NULL, 1, KD_THIN_HALVE_GROUP, NULL,       \
        "the halvings every rank makes together (the top of the tree, the last rounds) run in " \
        "groups of at most halve_group consecutive ranks, every group making the same halving " \
        "(one all-gather over a group per 64 pairs); the same result at any value",             \
        KD_PARAM_AT(kd_thin_params, halve_group)                                                \
  }

/* KH-Refine's group size on several ranks */
#define KD_THIN_PARAM_GROUP_ROWS                                                                \
  {                                                                                             \
    "refine_group_rows", KD_PARAM_INT, 2048, NULL, 1, 1073741824, NULL,                         \
        "KH-Refine on several ranks: its nc candidates are split over groups of at most "       \
        "nc / refine_group_rows ranks, every group making the same pass (below 2 "              \
        "refine_group_rows candidates every rank runs it alone); the same result at any value", \
        KD_PARAM_AT(kd_thin_params, refine_group_rows)                                          \
  }

#define KD_THIN_PARAM_POOL_ROW(def, doc)                     \
  {                                                          \
    "refine_pool", KD_PARAM_INT, def, NULL, 1, 4, NULL, doc, \
        KD_PARAM_AT(kd_thin_params, refine_pool)             \
  }
#define KD_THIN_PARAM_POOL                                                                  \
  KD_THIN_PARAM_POOL_ROW(1,                                                                 \
                         "KH-Refine candidates: the input of the last refine_pool halving " \
                         "rounds (1 = Alg. H.1: 2 n_out candidates; 2: 4 n_out)")
#define KD_THIN_PARAM_POOL2                                                                     \
  KD_THIN_PARAM_POOL_ROW(2,                                                                     \
                         "KH-Refine candidates: the input of the last refine_pool halving "     \
                         "rounds (1 = Alg. H.1: 2 n_out candidates; 2: 4 n_out, with the best " \
                         "of the KT-Split branches refined)")
#define KD_THIN_PARAM_RTARGET_ROW(def, doc)                             \
  {                                                                     \
    "refine_target", KD_PARAM_STR, 0, def, 0, 0, "input|compress", doc, \
        KD_PARAM_AT_INDEX(kd_thin_params, refine_target)                \
  }
#define KD_THIN_PARAM_RTARGET                                                                 \
  KD_THIN_PARAM_RTARGET_ROW("input",                                                          \
                            "measure KH-Refine matches: input = P_in (O(n_in n_out) kernel "  \
                            "evaluations); compress = the Compress output (O(2^g sqrt(n_in) " \
                            "n_out), Compress++ style)")

/* index of each choice of `pairing` */
enum { KD_THIN_PAIRING_LOCAL = 0, KD_THIN_PAIRING_INPUT = 1 };
#define KD_THIN_PARAM_PAIRING                                                                  \
  {                                                                                            \
    "pairing", KD_PARAM_STR, 0, "local", 0, 0, "local|input",                                  \
        "which points each halving pairs: local = close points (k-d split; small b_i, same "   \
        "sub-Gaussian guarantee); input = consecutive points in input order (reference code)", \
        KD_PARAM_AT_INDEX(kd_thin_params, pairing)                                             \
  }

/* kt_compress's defaults: Compress++'s refine target (the Compress output: O(n) evaluations, so
 * the whole algorithm stays O(4^g n log n)) with 16 n_out candidates, the tight threshold and 10
 * sweeps: chosen by MMD against goodpoints' compresspp_kt on N(0, I_d), image patches and digits
 * at d = 2-784 (bench/results/defaults.md) */
#define KD_THIN_PARAM_POOL4                                                                      \
  KD_THIN_PARAM_POOL_ROW(4,                                                                      \
                         "KH-Refine candidates: the input of the last refine_pool halving "      \
                         "rounds (1 = Alg. H.1: 2 n_out candidates; 4: 16 n_out, with the best " \
                         "of the KT-Split branches refined)")
#define KD_THIN_PARAM_THRESHOLD_T KD_THIN_PARAM_THRESHOLD_ROW("tight")
#define KD_THIN_PARAM_PASSES10 \
  KD_THIN_PARAM_PASSES_ROW_D(10), KD_THIN_PARAM_GROUP_ROWS, KD_THIN_PARAM_HALVE_GROUP
#define KD_THIN_PARAM_RTARGET_C                                                                \
  KD_THIN_PARAM_RTARGET_ROW("compress",                                                        \
                            "measure KH-Refine matches: compress = the Compress output "       \
                            "(O(2^g sqrt(n_in) n_out), Compress++); input = P_in through the " \
                            "ring embedding (O(n_in n_out) kernel evaluations)")

/** Fill a plan from the common keys of params (n_out, delta, and those present of g, refine,
 *  reweight). Local. */
kd_err kd_thin_plan_from_params(const kd_params *p, kd_thin_plan *plan);

/** What fixes a `thin` algorithm beyond its keys: its halving rule, whether it compresses,
 *  refine = 1: always KH-Refine (else the key `refine` decides, when declared), and (half = 1,
 *  kh) n_out = floor(n_in / 2). */
typedef struct {
  kd_halve_kind kind;
  int compress, refine, half;
} kd_thin_variant;
/** The plan of variant v from the algorithm's keys for n input rows. Local. */
kd_err kd_thin_plan_make(const kd_params *p, const kd_thin_variant *v, kd_gidx n,
                         kd_thin_plan *plan);
/** Resolve an automatic g (Compress: 4, or the largest g with 4^(g+1) <= n; logged when log = 1)
 *  and check the plan against n input rows: 1 <= n_out <= n, delta in (0,1) (KH rules), g below
 *  log4 n and a Compress output of at least n_out rows. The driver's checks and the
 *  descriptor's check hook (validate) are this one function. Errors KD_ERR_CONFIG with the key
 *  recorded. Local. */
kd_err kd_thin_plan_check(kd_thin_plan *pl, kd_gidx n, int log);
/** run() and check() of the thinning algorithms: the plan of variant v, then kd_thin_run or
 *  kd_thin_plan_check. */
kd_err kd_thin_run_variant(const kd_algo_in *in, const kd_thin_variant *v, kd_result *out);
kd_err kd_thin_check_variant(const kd_params *p, const kd_algo_shape *s, const kd_thin_variant *v);

/* ---------------- checkpoint / restart of the tree (thin_ckpt.c, docs/thinning.md)
 * ---------------- Steps (the `iteration` of a checkpoint): s = h_leaf after the leaf bins, s = h
 * after merge level h (h_leaf < h <= K), s = K + r after the r-th halving round of rank 0. The
 * state after step s is the node outputs in global logical order, independent of the rank count. */

/** Geometry of the tree of a plan on n_in rows (every rank computes the same). */
typedef struct {
  kd_gidx n;    /* n_in */
  int d;        /* dimension */
  int K;        /* floor(log4 n) */
  int hl;       /* leaf height max(0, K-3) */
  kd_gidx F;    /* trees: floor(n / 4^K) */
  kd_gidx nb;   /* leaf bins F 4^(K-hl) */
  int g;        /* Compress oversampling, -1 for plain halving */
  int direct;   /* 1: no tree (all rows to rank 0; no safe point) */
  kd_gidx L0;   /* rows reaching rank 0 (phase D) */
  int rounds;   /* halving rounds of rank 0 in phase E */
  int refine_c; /* 1: KH-Refine against the Compress output (kept in the state after s > K) */
  int progress; /* plan's progress flag */
} kd_thin_tree;

/** Fill the geometry of plan pl (resolved kind, n_out) on n rows of dimension d. Local. */
void kd_thin_tree_init(kd_thin_tree *t, kd_gidx n, int d, const kd_thin_plan *pl);
/** Rows of one node after step s (s <= K), or of the whole set (s > K). Local. */
kd_gidx kd_thin_tree_node_rows(const kd_thin_tree *t, int s);
/** Nodes after step s: F 4^(K-s) for s <= K, 1 for s > K. Local. */
kd_gidx kd_thin_tree_nodes(const kd_thin_tree *t, int s);
/** 1 if step s is a safe point (plain halving: only s >= K, the tree levels only move rows). */
int kd_thin_tree_safe(const kd_thin_tree *t, int s);

/** End of step s (Collective; replaces the step's kd_dist_agree): agree the local error lerr,
 *  with a pending SIGTERM/SIGUSR1 folded in when checkpointing is on and s is a safe point (no
 *  extra collective unless a signal is agreed; a real error of any rank still wins). Returns the
 *  agreed error; *write = 2 after an agreed signal, 1 at a periodic point (s % checkpoint_every
 *  == 0), else 0. */
kd_err kd_thin_ckpt_agree(const kd_algo_in *in, const kd_thin_tree *t, int s, kd_err lerr,
                          int *write);

/** Write the state of step s through in->ckpt (Collective): mine[nrows * (d+1)] = this
 *  rank's node outputs, packed [global row, x_1..x_d], contiguous in logical order across ranks
 *  (for s > K rank 0 holds them all); cout[L0 * d] (rank 0; refine_c and s > K only, else NULL) =
 *  the Compress output. t0 = kd_dist_wtime() at the start of run(). Returns KD_ERR_INTERRUPTED
 *  (message "interrupted at step s") when signal != 0, else KD_OK. */
kd_err kd_thin_ckpt_save(const kd_algo_in *in, const kd_thin_tree *t, int s, int signal,
                         const double *mine, kd_lidx nrows, const double *cout, double t0);

/** Validate the resume state of in->ckpt against the tree: *s = its step, *rows = its packed rows
 * [total, d+1] in logical order, *cout = the Compress output [L0, d] (refine_c and s > K, else
 * NULL). Pointers borrow from the resume state. Errors: KD_ERR_INPUT naming the mismatch. Local
 * (identical on every rank: the state is replicated). */
kd_err kd_thin_ckpt_restore(const kd_algo_in *in, const kd_thin_tree *t, int *s,
                            const double **rows, const double **cout);

/** Check that the resumed rows[nrows, d+1] equal the input rows they name (each rank checks the
 *  rows it holds, bit for bit), so that a checkpoint is never combined with changed data: one
 *  KD_ERR_INPUT naming the row otherwise. Collective (one agreement). */
kd_err kd_thin_ckpt_check_data(const kd_algo_in *in, const double *rows, kd_gidx nrows);

/** Rank-0 progress line of step s (points alive, elapsed, eta) if t->progress. Local. */
void kd_thin_progress(const kd_thin_tree *t, int s);

/** The leaf bins split over more ranks than bins (leaf_split.c): bins [lo, hi) of the nb are this
 *  rank's (owner[b] its owner; bstart[nb + 1] their first rows, B = 4^hl slots each), every bin
 *  compressed from its 4^j descendants of height hl - j on the ranks in contiguous runs. Stored
 *  input: bins[b - lo] = the owned bin's rows; generated (lazy): rows from ps. */
typedef struct {
  kd_kernel *k;
  const kd_thin_plan *pl;
  MPI_Comm comm;
  int rank, size, d, hl, j, lazy;
  kd_gidx nb, lo, hi;
  const kd_gidx *bstart;
  const int *owner;
  const double *const *bins;
  const kd_pointset *ps;
  kd_lidx B;
  double delta_rem, den, dsign;
  uint64_t seed;
} kd_leaf_split;
/** The split's depth j: req >= 0 (the key leaf_split) capped at hl; -1 (auto): the least j with
 *  nb 4^j >= size, at most hl - g - 1 (sub-nodes that still halve), 0 when that is below 1. */
int kd_thin_leaf_split_depth(int req, kd_gidx nb, int size, int hl, int g);
/** nodes[b - lo] = the output of bin b, packed [global row, x] as kd_leaf_ / kd_leaf_lazy_ give it
 *  bit for bit. *ev_skip += the evaluations another rank also made (a generated bin's tail halved
 *  on a rank that is not its owner). Errors agreed. Collective. */
kd_err kd_thin_leaves_split(const kd_leaf_split *L, kd_dist_block *nodes, uint64_t *ev_skip);

#endif
