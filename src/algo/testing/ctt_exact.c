/* ctt_exact.c - the quadratic-time full-sample permutation MMD test that CTT approximates
 * (paper 003, eq. 36 with the permutation null and the threshold of Alg. 3). With the pooled
 * sample Z = (X, Y) of N = m + n rows and a labelling w (w_i = 1/m on X-labelled rows, -1/n on
 * Y-labelled ones), MMD^2 = w^T K w. All B + 1 labellings are evaluated together: the kernel
 * matrix is never stored; it is visited in bt x bt tiles of its upper triangle, and each tile
 * K_IJ meets the block W_J of all labellings in one dgemm. Tile row ti goes to rank
 * min(ti, nt-1-ti) mod p (balanced triangle), its B+1 partial sums are summed over ranks (each
 * non-zero on one rank, so exact) and added in tile-row order: the statistics are bit-for-bit
 * the same at any rank count. Work O(N^2 (B+1) / p), memory O(N d + N (B+1) bytes) per rank. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/testing/ctt_impl.h"
#include "dist/dist_impl.h"

static const kd_param_spec kd_ctt_exact_params_[] = {
    {"B", KD_PARAM_INT, 100, NULL, 1, 1e8, NULL, "number of label permutations (replicates)",
     KD_PARAM_NONE},
    {"alpha", KD_PARAM_F64, 0.05, NULL, 0, 1, NULL, "nominal level, strictly inside (0,1)",
     KD_PARAM_NONE},
    {"tile", KD_PARAM_INT, 256, NULL, 8, 8192, NULL, "kernel tile edge (rows and columns)",
     KD_PARAM_NONE},
};

/* Rows [j0, j0+bj) of all labellings as weights, row-major bj x (B+1). */
static void kd_exact_weights_(const unsigned char *lab, int64_t j0, int64_t bj, int64_t nb,
                              double wx, double wy, double *W) {
  for (int64_t j = 0; j < bj; j++)
    for (int64_t b = 0; b < nb; b++) W[j * nb + b] = lab[(j0 + j) * nb + b] ? wy : wx;
}

static kd_err kd_ctt_exact_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK, lerr = KD_OK;
  const double t0 = kd_dist_wtime();
  const kd_pointset *X = in->points, *Y = NULL;
  double *Z = NULL, *Kt = NULL, *WI = NULL, *WJ = NULL, *U = NULL, *D = NULL, *rowacc = NULL;
  double *stat2 = NULL;
  unsigned char *lab = NULL, *perm = NULL;
  KD_TRY(kd_ctt_check_common(in, &Y));
  const MPI_Comm comm = in->comm;
  const int rank = kd_dist_rank(comm), p = kd_dist_size(comm);
  const int64_t B = kd_params_int(in->params, "B"), bt = kd_params_int(in->params, "tile");
  const double alpha = kd_params_f64(in->params, "alpha");
  const kd_gidx m = kd_pointset_n_global(X), n = kd_pointset_n_global(Y), N = m + n;
  const int d = kd_pointset_dim(X);
  const int64_t nb = B + 1, nt = (N + bt - 1) / bt;
  const double wx = 1.0 / (double)m, wy = -1.0 / (double)n;
  KD_CHECK(bt >= 1, KD_ERR_CONFIG, "algorithm.tile must be >= 1");

  /* pooled sample on every rank, and the labellings: column b < B is permutation b, column B
   * the observed split (rows 0..m-1 are X) */
  KD_ALLOC(Z, N * d);
  KD_TRY(kd_pointset_allgather(X, Z));
  KD_TRY(kd_pointset_allgather(Y, Z + (size_t)m * d));
  lab = malloc((size_t)N * (size_t)nb);
  perm = malloc((size_t)N);
  if (!lab || !perm)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                      "ctt_exact: cannot allocate %lld x %lld labels", (long long)N, (long long)nb);
  KD_TRY(kd_dist_agreed(comm, lerr));
  for (int64_t b = 0; b < B; b++) {
    kd_ctt_permute_labels(N, m, in->seed, b, perm);
    for (int64_t i = 0; i < N; i++) lab[i * nb + b] = perm[i];
  }
  for (int64_t i = 0; i < N; i++) lab[i * nb + B] = (unsigned char)(i < m ? 0 : 1);

  KD_ALLOC(rowacc, nt * nb);
  KD_ALLOC(Kt, bt * bt);
  KD_ALLOC(WI, bt * nb);
  KD_ALLOC(WJ, bt * nb);
  KD_ALLOC(U, bt * nb);
  KD_ALLOC(D, bt * nb);
  const uint64_t ev0 = kd_kernel_evals(in->kernel);
  for (int64_t ti = 0; ti < nt && lerr == KD_OK; ti++) {
    const int64_t q = ti < nt - 1 - ti ? ti : nt - 1 - ti;
    if (q % p != rank) continue;
    const int64_t i0 = ti * bt, bi = (i0 + bt <= N) ? bt : N - i0;
    kd_exact_weights_(lab, i0, bi, nb, wx, wy, WI);
    for (int64_t tj = ti; tj < nt; tj++) {
      const int64_t j0 = tj * bt, bj = (j0 + bt <= N) ? bt : N - j0;
      lerr =
          kd_kernel_eval_block(in->kernel, Z + (size_t)i0 * d, bi, Z + (size_t)j0 * d, bj, Kt, bj);
      if (lerr != KD_OK) break;
      kd_exact_weights_(lab, j0, bj, nb, wx, wy, WJ);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)bi, (int)nb, (int)bj, 1.0, Kt,
                  (int)bj, WJ, (int)nb, tj == ti ? 0.0 : (tj == ti + 1 ? 0.0 : 1.0),
                  tj == ti ? D : U, (int)nb);
    }
    if (ti + 1 >= nt) memset(U, 0, (size_t)bi * nb * sizeof(double)); /* no off-diagonal tile */
    for (int64_t b = 0; b < nb; b++) {
      double acc = 0.0;
      for (int64_t i = 0; i < bi; i++)
        acc += WI[i * nb + b] * (2.0 * U[i * nb + b] + D[i * nb + b]);
      rowacc[ti * nb + b] = acc;
    }
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  for (int64_t off = 0; off < nt * nb; off += (1 << 26)) {
    const int64_t len = nt * nb - off < (1 << 26) ? nt * nb - off : (1 << 26);
    KD_TRY(kd_dist_sum(comm, rowacc + off, (int)len));
  }
  uint64_t evals = kd_kernel_evals(in->kernel) - ev0;
  KD_ALLOC(stat2, nb);
  for (int64_t b = 0; b < nb; b++) {
    double acc = 0.0;
    for (int64_t ti = 0; ti < nt; ti++) acc += rowacc[ti * nb + b];
    stat2[b] = acc;
  }
  for (int64_t b = 0; b < nb; b++) /* replicated: every rank takes the same branch */
    KD_CHECK(isfinite(stat2[b]), KD_ERR_NUMERIC,
             "ctt_exact: the MMD statistic is not finite (NaN or Inf in the data?)");
  kd_ctt_decision dec;
  KD_TRY(kd_ctt_decide(stat2, B, alpha, in->seed, &dec));
  KD_TRY(kd_result_alloc(out, 0, d));
  KD_TRY(kd_ctt_add_outputs(out, stat2, B, &dec));
  {
    double tt = kd_dist_wtime() - t0;
    KD_TRY(kd_dist_max(comm, &tt, 1));
    KD_TRY(kd_dist_sum_u64(comm, &evals, 1));
    out->seconds = tt;
    out->kernel_evals = evals;
    out->mmd = sqrt(fmax(stat2[B], 0.0));
  }
cleanup:
  free(Z);
  free(Kt);
  free(WI);
  free(WJ);
  free(U);
  free(D);
  free(rowacc);
  free(stat2);
  free(lab);
  free(perm);
  return err;
}

const kd_algo_desc kd_algo_ctt_exact = {
    "ctt_exact",
    "ctt",
    "exact quadratic-time permutation MMD test on the full samples (CTT's reference)",
    kd_ctt_exact_params_,
    (int)(sizeof kd_ctt_exact_params_ / sizeof kd_ctt_exact_params_[0]),
    kd_ctt_exact_run_};
