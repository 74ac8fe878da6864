/* ctt_impl.h - shared pieces of the testing family: the second sample handed to the `ctt` task's
 * algorithms, and the permutation decision rule of Compress Then Test (paper 003, Alg. 3), which
 * the exact full-sample permutation test reuses. Private to src/algo/testing/ and its tests. */
#ifndef KDISTILL_CTT_IMPL_H
#define KDISTILL_CTT_IMPL_H

#include "kdistill/author/kd_algo.h"

/** task_in of the algorithms of task "ctt": in->points is X (m rows), y is Y (n rows). Both
 *  point sets live on in->comm (any row split). Borrowed. */
typedef struct {
  const kd_pointset *y;
} kd_ctt_in;

/** RNG streams of the testing family (seed = kd_algo_in.seed). */
#define KD_CTT_STREAM_BIN 0x4354540000000000ULL    /* + bin id: KT-Compress of that bin */
#define KD_CTT_STREAM_PERM 0x4354550000000000ULL   /* + b: permutation b (0-based) */
#define KD_CTT_STREAM_DECIDE 0x4354560000000000ULL /* tie break (counter 0), reject draw (1) */

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

/** Typed parameters of the testing family, filled once with kd_params_fill from the spec table
 *  of `ctt` (s, g, delta, B, alpha) or of `ctt_exact` (B, alpha, tile); the tables state the
 *  defaults. */
typedef struct {
  int64_t s, g; /* ctt: bins, compression level */
  double delta; /* ctt: KT-Compress failure probability */
  int64_t B;    /* label permutations */
  double alpha; /* nominal level */
  int64_t tile; /* ctt_exact: kernel tile edge */
} kd_ctt_params;

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
} kd_ctt_study_spec;

/** Results, replicated on every rank; configuration c < n_g is CTT with g_list[c], c = n_g the
 *  exact test (if requested). Arrays [T * n_conf] are row-major by replicate. Free with
 *  kd_ctt_study_free. */
typedef struct {
  int n_conf;
  int64_t T;
  int64_t *g;           /* [n_conf]: g, or -1 for the exact test */
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
 *  statistic, seconds} datasets of r. Local. */
kd_err kd_ctt_study_add_outputs(const kd_ctt_study_out *st, kd_result *r);

#endif
