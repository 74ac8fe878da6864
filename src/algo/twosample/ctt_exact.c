/* ctt_exact.c - the quadratic-time full-sample permutation MMD test that CTT approximates
 * (paper 003, eq. 36 with the permutation null and the threshold of Alg. 3). With the pooled
 * sample Z = (X, Y) of N = m + n rows and a labelling w (w_i = 1/m on X-labelled rows, -1/n on
 * Y-labelled ones), MMD^2 = w^T K w. All B + 1 labellings are evaluated together: the kernel
 * matrix is never stored; it is visited in bt x bt tiles of its upper triangle, and each tile
 * K_IJ meets the block W_J of all labellings in one dgemm. Tile row ti goes to rank
 * min(ti, nt-1-ti) mod p (balanced triangle), its B+1 partial sums are summed over ranks (each
 * non-zero on one rank, so exact) and added in tile-row order: the statistics are bit-for-bit
 * the same at any rank count. Work O(N^2 (B+1) / p), memory O(N d + N (B+1) bytes) per rank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/twosample/ctt_impl.h"
#include "comm/dist_impl.h"

static const kd_param_spec kd_ctt_exact_params_[] = {
    KD_CTT_PARAM_B("number of label permutations (replicates)"),
    KD_CTT_PARAM_ALPHA,
    KD_CTT_PARAM_TILE,
};

/* ---------------- the driver: phases over one state ----------------
 * kd_ctt_exact_run_ = setup (pooled sample and labellings), the tiles of the upper triangle on
 * their ranks, the sum over ranks and tile rows, the decision and outputs. */
typedef struct {
  const kd_algo_in *in;
  kd_ctt_params cfg;
  MPI_Comm comm;
  int rank, p, d;
  kd_gidx m, n, N;    /* X rows, Y rows, pooled rows */
  int64_t nb, nt;     /* labellings B + 1, tile rows */
  double wx, wy;      /* weights of X- and Y-labelled rows */
  double *Z;          /* [N x d] pooled sample (X rows, then Y rows), on every rank */
  unsigned char *lab; /* [N x nb] labels: column b < B permutation b, column B the observed */
  double *rowacc;     /* [nt x nb] partial statistics of each tile row */
  double *stat2;      /* [nb] squared statistics */
  uint64_t evals;     /* kernel evaluations on this rank */
  double t0;
} kd_exact_drv_;

/* The pooled sample on every rank and all B + 1 labellings. Collective. */
static kd_err kd_exact_setup_(kd_exact_drv_ *D, const kd_algo_in *in, const kd_ctt_params *prm) {
  kd_err err = KD_OK, lerr = KD_OK;
  const kd_pointset *Y = NULL;
  unsigned char *perm = NULL;
  D->in = in;
  D->t0 = kd_dist_wtime();
  D->cfg = *prm;
  KD_TRY(kd_ctt_check_common(in, prm, &Y));
  D->comm = in->comm;
  D->rank = kd_dist_rank(D->comm);
  D->p = kd_dist_size(D->comm);
  const int64_t B = D->cfg.B, bt = D->cfg.tile;
  const kd_gidx m = kd_pointset_n_global(in->points), n = kd_pointset_n_global(Y), N = m + n;
  const int d = kd_pointset_dim(in->points);
  const int64_t nb = B + 1;
  D->m = m;
  D->n = n;
  D->N = N;
  D->d = d;
  D->nb = nb;
  D->nt = (N + bt - 1) / bt;
  D->wx = 1.0 / (double)m;
  D->wy = -1.0 / (double)n;
  KD_CHECK_KEY(bt >= 1, KD_ERR_CONFIG, "algorithm.tile", "algorithm.tile must be >= 1");
  KD_ALLOC(D->Z, N * d);
  KD_TRY(kd_pointset_allgather(in->points, D->Z));
  KD_TRY(kd_pointset_allgather(Y, D->Z + (size_t)m * d));
  D->lab = malloc((size_t)N * (size_t)nb);
  perm = malloc((size_t)N);
  if (!D->lab || !perm)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                      "ctt_exact: cannot allocate %lld x %lld labels", (long long)N, (long long)nb);
  KD_TRY(kd_dist_agreed(D->comm, lerr));
  for (int64_t b = 0; b < B; b++) {
    kd_ctt_permute_labels(N, m, in->seed, b, perm);
    for (int64_t i = 0; i < N; i++) D->lab[i * nb + b] = perm[i];
  }
  for (int64_t i = 0; i < N; i++) D->lab[i * nb + B] = (unsigned char)(i < m ? 0 : 1);
cleanup:
  free(perm);
  return err;
}

/* The tile rows of this rank: row ti on rank min(ti, nt-1-ti) mod p (balanced triangle), agreed.
 * Collective. */
static kd_err kd_exact_tiles_(kd_exact_drv_ *D) {
  kd_err err = KD_OK;
  const kd_ctt_quad q = {D->in->kernel, D->Z, D->N, D->nb, D->cfg.tile, D->d, D->lab, D->wx, D->wy};
  KD_ALLOC_AGREED(D->comm, D->rowacc, D->nt * D->nb);
  const uint64_t ev0 = kd_kernel_evals(D->in->kernel);
  KD_TRY(kd_dist_agreed(
      D->comm, kd_ctt_quad_rows(&q, D->rank, D->p, "ctt_exact (no checkpoint)", NULL, D->rowacc)));
  D->evals = kd_kernel_evals(D->in->kernel) - ev0;
cleanup:
  return err;
}

/* The statistics: tile-row partial sums summed over ranks (each non-zero on one rank: exact) in
 * chunks, then added in tile-row order. Collective. */
static kd_err kd_exact_reduce_(kd_exact_drv_ *D) {
  kd_err err = KD_OK;
  const int64_t nb = D->nb, nt = D->nt;
  for (int64_t off = 0; off < nt * nb; off += (1 << 26)) {
    const int64_t len = nt * nb - off < (1 << 26) ? nt * nb - off : (1 << 26);
    KD_TRY(kd_dist_sum(D->comm, D->rowacc + off, (int)len));
  }
  KD_ALLOC(D->stat2, nb);
  for (int64_t b = 0; b < nb; b++) {
    double acc = 0.0;
    for (int64_t ti = 0; ti < nt; ti++) acc += D->rowacc[ti * nb + b];
    D->stat2[b] = acc;
  }
cleanup:
  return err;
}

/* The decision of Alg. 3, the /test outputs and the run's totals. Collective. */
static kd_err kd_exact_outputs_(kd_exact_drv_ *D, kd_result *out) {
  return kd_ctt_finish(D->in, "ctt_exact", D->stat2, &D->cfg, D->d, D->t0, D->evals, out);
}

kd_err kd_ctt_exact_test(const kd_algo_in *in, const kd_ctt_params *p, kd_result *out) {
  kd_err err = KD_OK;
  kd_exact_drv_ D;
  memset(&D, 0, sizeof D);
  KD_TRY(kd_exact_setup_(&D, in, p));
  KD_TRY(kd_exact_tiles_(&D));
  KD_TRY(kd_exact_reduce_(&D));
  KD_TRY(kd_exact_outputs_(&D, out));
cleanup:
  free(D.Z);
  free(D.lab);
  free(D.rowacc);
  free(D.stat2);
  return err;
}

static kd_err kd_ctt_exact_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_ctt_params p;
  memset(&p, 0, sizeof p);
  KD_TRY(kd_params_fill(in->params, &p));
  KD_TRY(kd_ctt_exact_test(in, &p, out));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_ctt_exact = {
    "ctt_exact",
    "ctt",
    "exact quadratic-time permutation MMD test on the full samples (CTT's reference)",
    kd_ctt_exact_params_,
    (int)(sizeof kd_ctt_exact_params_ / sizeof kd_ctt_exact_params_[0]),
    kd_ctt_exact_run_,
    0,
    NULL,
    NULL};
