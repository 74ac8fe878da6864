/* ctt_impl.h - shared pieces of the testing family: the second sample handed to the `ctt` task's
 * algorithms, and the permutation decision rule of Compress Then Test (paper 003, Alg. 3), which
 * the exact full-sample permutation test reuses. Private to src/algo/twosample/ and its tests. */
#ifndef KDISTILL_CTT_IMPL_H
#define KDISTILL_CTT_IMPL_H

#include "kdistill/author/kd_algo.h"

/** task_in of the algorithms of task "ctt": in->points is X (m rows), y is Y (n rows). Both
 *  point sets live on in->comm (any row split). actt only: ls_list (n_ls_list > 0: its length
 *  scales, strictly increasing, in place of the grid of n_ls and ls_ratio around kernel.ls) and
 *  weights (n_weights = the number of length scales, positive: w_j = weights[j] / their sum;
 *  n_weights = 0: w_j = 1/L). The task checks both. Borrowed. */
typedef struct {
  const kd_pointset *y;
  const double *ls_list;
  int n_ls_list;
  const double *weights;
  int n_weights;
} kd_ctt_in;

/** RNG streams of the testing family (seed = kd_algo_in.seed). */
#define KD_CTT_STREAM_BIN 0x4354540000000000ULL    /* + bin id: KT-Compress of that bin */
#define KD_CTT_STREAM_PERM 0x4354550000000000ULL   /* + b: permutation b (0-based) */
#define KD_CTT_STREAM_DECIDE 0x4354560000000000ULL /* tie break (counter 0), reject draw (1) */
#define KD_CTT_STREAM_WILD 0x4354580000000000ULL   /* + b: wild-bootstrap signs b */
#define KD_CTT_STREAM_SUB 0x4354590000000000ULL    /* subsample_test: 0 rows of X, 1 of Y */
#define KD_CTT_STREAM_RFF 0x43545A0000000000ULL    /* lrctt: the Fourier frequencies */
#define KD_CTT_STREAM_ACTT 0x43545B0000000000ULL   /* actt: counter j, length scale j's seed */
#define KD_CTT_STREAM_STUDY                                          \
  0x4354570000000000ULL /* ctt_study: 3t, 3t+1, 3t+2 = replicate t's \
                            X, Y and test seeds */

/** Outcome of the randomised threshold of Alg. 3. */
typedef struct {
  int64_t rank;    /* R: position of the observed statistic among all B+1, 1-based */
  int64_t n_less;  /* #{b <= B : M_b <  M_{B+1}} */
  int64_t n_ties;  /* #{b <= B : M_b == M_{B+1}} (permuted ones only) */
  double p_reject; /* min(1, max(0, R - (1-alpha)(B+1))) */
  double p_value;  /* (1 + #{b <= B : M_b >= M_{B+1}}) / (B+1) */
  int reject;      /* 1 if a uniform draw u satisfies u < p_reject */
} kd_ctt_decision;

/** Alg. 3's threshold step. stat2[0..B) are the permuted squared statistics M_1..M_B and
 *  stat2[B] the observed one; R is the observed value's position in increasing order with ties
 *  broken uniformly at random (one draw keyed by (seed, KD_CTT_STREAM_DECIDE, 0)); the test
 *  rejects with probability p_reject (draw (seed, KD_CTT_STREAM_DECIDE, 1)). Under exchangeability
 *  P(reject) = alpha exactly. Requires B >= 1 and 0 < alpha < 1 (KD_ERR_ARG otherwise). Local. */
kd_err kd_ctt_decide(const double *stat2, int64_t B, double alpha, uint64_t seed,
                     kd_ctt_decision *out);

/** Fill labels[0..s) with a uniformly random permutation of the base labelling (the first s_m
 *  entries 0 = X, the rest 1 = Y) by Fisher-Yates on the stream (seed, KD_CTT_STREAM_PERM + b).
 *  Local, pure. */
void kd_ctt_permute_labels(int64_t s, int64_t s_m, uint64_t seed, int64_t b, unsigned char *labels);

/** Squared MMD between the X-labelled and the Y-labelled averages: sum_ij w_i w_j G_ij with
 *  w_i = 1/s_m (label 0) or -1/s_n (label 1), G the s x s matrix of mean kernel values between
 *  coresets, summed in index order (identical partitions give identical bits). Local. */
double kd_ctt_labelled_mmd2(const double *G, int64_t s, const unsigned char *labels);

/** Labellings evaluated side by side by kd_ctt_labelled_stats. */
#define KD_CTT_LANES 8

/** The labelled squared MMDs of L matrices G[j] (s x s) under nperm + 1 labellings:
 *  M[b * L + j] = kd_ctt_labelled_mmd2(G[j], s, labels_b) bit for bit, with labels_b the
 *  permutation kd_ctt_permute_labels(s, s_m, seed, b) for b < nperm and the observed labelling
 *  (the first s_m coresets X's) for b = nperm. KD_CTT_LANES labellings at a time. Local. */
kd_err kd_ctt_labelled_stats(const double *const *G, int64_t L, int64_t s, int64_t s_m,
                             uint64_t seed, int64_t nperm, double *M);

/** The quadratic forms of a pooled sample's labellings (ctt_quad.c): Z [N x d] rows, lab
 *  [N x nb] labels (0: weight wx, 1: weight wy), K visited in tile x tile blocks. Borrowed. */
typedef struct {
  kd_kernel *k;
  const double *Z;
  int64_t N, nb, tile;
  int d;
  const unsigned char *lab;
  double wx, wy;
} kd_ctt_quad;

/** Doubles of scratch kd_ctt_quad_rows needs (tile^2 + 4 tile nb). */
int64_t kd_ctt_quad_ws_size(const kd_ctt_quad *q);
/** The tile rows ti of q's upper triangle with min(ti, nt-1-ti) mod p == rank (all for p = 1):
 *  rowacc[ti * nb + b] = tile row ti's share of w_b^T K w_b (nt = ceil(N / tile)); other rows
 *  are left as they are. ws: kd_ctt_quad_ws_size(q) doubles of scratch (NULL: allocated here).
 *  Polls kd_interrupt_check(what) per tile row unless what is NULL. Local; the caller agrees
 *  the error. */
kd_err kd_ctt_quad_rows(const kd_ctt_quad *q, int rank, int p, const char *what, double *ws,
                        double *rowacc);
/** All tile rows on this rank and stat2[b] = their sum in tile-row order (ws as above, rowacc:
 *  nt x nb scratch). Local. */
kd_err kd_ctt_quad_local(const kd_ctt_quad *q, double *ws, double *rowacc, double *stat2);

/** Wild-bootstrap labels of npair pairs (x_i, y_i) (Chwialkowski et al. 2014, Rademacher
 *  multipliers): pair i (global pair index pair0 + i) is swapped in labelling b when
 *  kd_rng_uniform(seed, KD_CTT_STREAM_WILD + b, pair0 + i) < 1/2, so that with the layout of
 *  lab (rows x_0 .. x_{npair-1}, then y_0 .. y_{npair-1}; nb labellings per row) the form
 *  w_b^T K w_b is (1/npair^2) sum_ij e_i e_j h(z_i, z_j). Column B = nb - 1 is the observed
 *  labelling (no swap). Under the null (X, Y i.i.d., independent) each swap leaves the sample's
 *  distribution unchanged: the randomised threshold of kd_ctt_decide has size alpha exactly.
 *  Local, pure. */
void kd_ctt_wild_labels(int64_t npair, int64_t pair0, int64_t nb, uint64_t seed,
                        unsigned char *lab);

/** Typed parameters of the testing family, filled once with kd_params_fill from the spec table
 *  of `ctt` (s, g, delta, B, alpha) or of `ctt_exact` (B, alpha, tile); the tables state the
 *  defaults. */
typedef struct {
  int64_t s, g;      /* ctt: bins, compression level */
  double delta;      /* ctt: KT-Compress failure probability */
  int64_t B;         /* label permutations */
  double alpha;      /* nominal level */
  int64_t tile;      /* ctt_exact, subsample_test, wblock: kernel tile edge */
  int64_t n_out;     /* subsample_test: rows drawn from each sample */
  int64_t rank;      /* lrctt: random Fourier features r (0: ctt's exact coreset kernel means) */
  int64_t a;         /* lrctt: coreset size factor (0: goodpoints' default) */
  int64_t block;     /* wblock: rows of each sample per block */
  int64_t B2, B3;    /* actt: calibration permutations, bisection steps */
  int64_t n_ls;      /* actt: length scales */
  double ls_ratio;   /* actt: ratio of neighbouring length scales */
  int compression;   /* actt: 0 = one KT-Compress per length scale (each), 1 = the middle one's
                        only (middle), 2 = once with the mean gaussian kernel of the grid (sum) */
  int coresets_only; /* internal (actt's sum): kd_ctt_test stops after the coresets (rows,
                        /test/coreset_sizes, /test/coreset_bin, /test/bins, kernel_evals) */
} kd_ctt_params;

/** Parameter-table rows shared by the algorithms of task ctt (one statement of each default). */
#define KD_CTT_PARAM_B(doc) \
  { "B", KD_PARAM_INT, 100, NULL, 1, 1e8, NULL, doc, KD_PARAM_AT(kd_ctt_params, B) }
#define KD_CTT_PARAM_ALPHA                                                                 \
  {                                                                                        \
    "alpha", KD_PARAM_F64, 0.05, NULL, 0, 1, NULL, "nominal level, strictly inside (0,1)", \
        KD_PARAM_AT(kd_ctt_params, alpha)                                                  \
  }
#define KD_CTT_PARAM_TILE                                                                  \
  {                                                                                        \
    "tile", KD_PARAM_INT, 256, NULL, 8, 8192, NULL, "kernel tile edge (rows and columns)", \
        KD_PARAM_AT(kd_ctt_params, tile)                                                   \
  }
#define KD_CTT_PARAM_DELTA                                              \
  {                                                                     \
    "delta", KD_PARAM_F64, 0.5, NULL, 0, 1, NULL,                       \
        "KT-Compress failure probability delta, strictly inside (0,1)", \
        KD_PARAM_AT(kd_ctt_params, delta)                               \
  }

/** Check the common arguments (B >= 1, 0 < alpha < 1, m, n >= 1, same dimension); the message
 *  names the algorithm key. Local (every rank sees the same values). */
kd_err kd_ctt_check_common(const kd_algo_in *in, const kd_ctt_params *p, const kd_pointset **y);

/** The checks of ctt's parameters against the sample sizes m (x) and n (y) (s >= 2, g, delta, the
 *  split into s_m + s_n equal bins of at least 4 rows: Alg. 3); *bins_x, *bins_y, *bin_rows get
 *  s_m, s_n and the rows of a bin. When s does not split m and n evenly, the bin count nearest to
 *  s within [s/2, 2s] that leaves the fewest rows unused (the last rows of X and Y) is taken. The
 * run and the descriptor's check hook (validate) call this. KD_ERR_CONFIG with the key recorded.
 * Local. */
kd_err kd_ctt_check_sizes(const kd_ctt_params *p, kd_gidx m, kd_gidx n, int64_t *bins_x,
                          int64_t *bins_y, int64_t *bin_rows);

/** Compress Then Test (Alg. 3) of in->points against the task_in's Y with the typed parameters p
 *  (s, g, delta, B, alpha; in->params is not read): what algorithm `ctt` runs once it has filled
 *  p. Outputs as documented in docs/ctt.md. Collective over in->comm; errors agreed. */
kd_err kd_ctt_test(const kd_algo_in *in, const kd_ctt_params *p, kd_result *out);

/** The exact permutation test with the typed parameters p (B, alpha, tile; in->params is not
 *  read): what algorithm `ctt_exact` runs. Collective over in->comm; errors agreed. */
kd_err kd_ctt_exact_test(const kd_algo_in *in, const kd_ctt_params *p, kd_result *out);

/** The Subsampling baseline (subsample_test.c) with the typed parameters p (n_out, B, alpha,
 *  tile). Collective over in->comm; errors agreed. */
kd_err kd_ctt_subsample_test(const kd_algo_in *in, const kd_ctt_params *p, kd_result *out);

/** Aggregated CTT (actt.c) with the typed parameters p (s, g, delta, B, B2, B3, n_ls, ls_ratio,
 *  compression, alpha; in->params is not read): what algorithm `actt` runs. p_value is NaN (a
 *  decision at level alpha). Collective over in->comm; errors agreed. */
kd_err kd_ctt_actt_test(const kd_algo_in *in, const kd_ctt_params *p, kd_result *out);
/** Whether actt's length-scale grid applies to kernel family t (the length scale a pure rescaling
 *  of the inputs: gaussian, laplace, imq, matern). Local. */
int kd_actt_scalable(kd_kernel_type t);

/** The W-Block baseline (wblock.c) with the typed parameters p (block, B, alpha, tile).
 *  Collective over in->comm; errors agreed. */
kd_err kd_ctt_wblock_test(const kd_algo_in *in, const kd_ctt_params *p, kd_result *out);

/** G_ij = the mean of k between coresets i and j (s x s; coreset b = rows coff[b] .. coff[b+1] of
 *  pts, on every rank): pair q = (i <= j) on rank q mod p, then summed over ranks (each entry
 *  non-zero on one rank: the same bits at any rank count). Collective over comm; errors agreed. */
kd_err kd_ctt_coreset_means(MPI_Comm comm, kd_kernel *k, const double *pts, const int64_t *coff,
                            int64_t s, int d, double *G);
/** Kernels at most in one kd_ctt_coreset_means_multi call: an aggregated test's length scales. */
#define KD_CTT_MAX_KERNELS KD_KERNEL_MAX_LS
/** kd_ctt_coreset_means for L kernels of one dimension and accumulation (kd_kernel_matvec_multi)
 *  at once: G[l] the same bits as kd_ctt_coreset_means(comm, ks[l], ...), the distances between
 *  the coresets computed once. 1 <= L <= KD_CTT_MAX_KERNELS. Collective; errors agreed. */
kd_err kd_ctt_coreset_means_multi(MPI_Comm comm, kd_kernel *const *ks, int L, const double *pts,
                                  const int64_t *coff, int64_t s, int d, double *const *G);

/** lrctt's compression of one bin of n_in rows (lrctt.c): with p->a = 0, sub-bins of 4^(g+1)
 *  rows halved by KT-Compress when p->rank > 4^(g+1), else the whole bin; with p->a > 0
 *  (checked by kd_lrctt_check_a), sub-bins of r^2 / (4^g a^2) rows compressed to r / a rows;
 *  idx[*n_out] = the kept rows (bin order). Sub-bin t uses the seed kd_rng_u64(seed, stream, t).
 *  Local. */
/** lrctt's algorithm.a against r, g and the n_in rows of a permutation bin: a = 0, or
 *  r^2 / (4^g a^2) a power of 4 between 4^g and n_in (its value in *q; 0 when a = 0).
 *  KD_ERR_CONFIG naming algorithm.a otherwise. Local. */
kd_err kd_lrctt_check_a(const kd_ctt_params *p, int64_t n_in, int64_t *q);
kd_err kd_lrctt_compress_bin(kd_kernel *k, const double *rows, kd_lidx n_in, int d,
                             const kd_ctt_params *p, uint64_t seed, uint64_t stream, kd_lidx *idx,
                             kd_lidx *n_out);
/** lrctt's s x s matrix G = F F^T of the coresets' mean random Fourier features (r features of
 *  the gaussian kernel k; coreset b = rows coff[b] .. coff[b+1] of pts, on every rank).
 *  Collective over comm; the same bits at any rank count. */
kd_err kd_lrctt_gram(MPI_Comm comm, const kd_kernel *k, const double *pts, const int64_t *coff,
                     int64_t s, int d, int64_t r, uint64_t seed, double *G);

/** The end of a test with squared statistics stat2[0..B] (B replicates, then the observed):
 *  refuses a non-finite value (KD_ERR_NUMERIC naming `name`), decides (kd_ctt_decide with p's
 *  alpha), allocates out with no rows of dimension d, adds the /test outputs, and sets the run's
 *  wall time since t0 (maximum over ranks), its kernel evaluations (this rank's evals, summed)
 *  and mmd = the statistic. Collective over in->comm (stat2 replicated). */
kd_err kd_ctt_finish(const kd_algo_in *in, const char *name, const double *stat2,
                     const kd_ctt_params *p, int d, double t0, uint64_t evals, kd_result *out);
/** The check hook of an algorithm whose only size check is size_check(p, m, n) (empty samples
 *  left to the run's own message). Local. */
kd_err kd_ctt_check_with(const kd_params *params, const kd_algo_shape *sh,
                         kd_err (*size_check)(const kd_ctt_params *, kd_gidx, kd_gidx));

/** Append the /test datasets shared by both algorithms: statistic (MMD = sqrt of the observed
 *  squared statistic, clipped at 0), p_value, reject, rank, p_reject, permutation_statistics
 *  (B permuted MMDs). Local. */
kd_err kd_ctt_add_outputs(kd_result *out, const double *stat2, int64_t B,
                          const kd_ctt_decision *dec);

/* ---------------- studies: rejection rate and time over seeded replicates ---------------- */
/** One study: T replicates of (X ~ mx with m rows, Y ~ my with n rows); replicate t is tested on
 *  rank t mod p alone (a one-rank communicator), by CTT at every g of g_list and, if exact != 0,
 *  by the exact test, all on the same data. All pointers borrowed. */
typedef struct {
  const kd_measure *mx, *my;
  int64_t m, n, T;
  uint64_t seed;              /* replicate t: data seeds and test seed drawn from (seed, t) */
  const kd_kernel_params *kp; /* fixed length scale (resolve `median` before) */
  int64_t s, B;
  double delta, alpha;
  const int64_t *g_list;
  int n_g;
  int exact;
  int64_t exact_tile;
  const int64_t *n_out_list; /* subsample_test at each n_out (n_sub values; NULL: none) */
  int n_sub;
  const int64_t *block_list; /* wblock at each block size (n_wb values; NULL: none) */
  int n_wb;
  const int64_t *r_list; /* lrctt at each feature count r (n_lr values; NULL: none), g = lr_g */
  int n_lr;
  int64_t lr_g;
  const int64_t *actt_g_list; /* actt at each g (n_actt values; NULL: none), with actt_n_ls length
                                 scales kp->ls actt_ls_ratio^(j - (n-1)/2), B2, B3 and
                                 kd_ctt_params.compression actt_compression (0 each, 1 middle,
                                 2 sum) */
  int n_actt;
  int64_t actt_n_ls, actt_B2, actt_B3;
  double actt_ls_ratio;
  int actt_compression;
  const double *actt_ls_list; /* n_actt_ls_list > 0: actt's length scales in place of the grid
                                 (kd_ctt_in.ls_list; actt_n_ls is then their count) */
  int n_actt_ls_list;
  const double *actt_weights; /* n_actt_weights > 0: actt's weights (kd_ctt_in.weights) */
  int n_actt_weights;
} kd_ctt_study_spec;

/** The tests a study runs (kd_ctt_study_out.method). */
enum {
  KD_STUDY_CTT = 0,
  KD_STUDY_EXACT = 1,
  KD_STUDY_SUBSAMPLE = 2,
  KD_STUDY_WBLOCK = 3,
  KD_STUDY_LRCTT = 4,
  KD_STUDY_ACTT = 5
};

/** Results, replicated on every rank; configuration c < n_g is CTT with g_list[c], then the exact
 *  test (if requested), then subsample_test at each n_out, then wblock at each block size, then
 *  lrctt at each r, then actt at each g (its p_value entries are NaN: actt decides only).
 *  Arrays [T * n_conf] are row-major by replicate. Free with kd_ctt_study_free. */
typedef struct {
  int n_conf;
  int64_t T;
  int64_t *g;           /* [n_conf]: g (ctt, actt), or -1 for the other tests */
  int64_t *method;      /* [n_conf]: KD_STUDY_* */
  int64_t *size;        /* [n_conf]: g, n_out, block, r or g (0 for the exact test) */
  int64_t *rejections;  /* [n_conf] */
  double *rate, *se;    /* [n_conf]: rejections / T and sqrt(rate (1 - rate) / T) */
  double *mean_seconds; /* [n_conf]: mean wall time of one test (one rank) */
  int64_t *reject;      /* [T * n_conf] */
  double *p_value, *statistic, *seconds; /* [T * n_conf] */
} kd_ctt_study_out;

/** Run a study. Collective over comm; errors on any rank are agreed. Checkpointing
 *  (docs/checkpoint.md) through ck (NULL = off): replicates run in rounds of p; the safe point
 *  after round r (all but the last) writes the finished results in global order under /state when
 *  kd_ckpt_due(ck, r) says so (every `every` rounds, or an agreed SIGTERM / SIGUSR1: then
 *  KD_ERR_INTERRUPTED); a resume state in ck is continued from. */
kd_err kd_ctt_study_run(MPI_Comm comm, const kd_ctt_study_spec *spec, kd_ckpt *ck,
                        kd_ctt_study_out *out);
void kd_ctt_study_free(kd_ctt_study_out *out);
/** Add the study as /study/{g, rejections, rejection_rate, se, mean_seconds, reject, p_value,
 *  statistic, seconds} datasets of r, and /study/{method, size} when a baseline ran. Local. */
kd_err kd_ctt_study_add_outputs(const kd_ctt_study_out *st, kd_result *r);

#endif
