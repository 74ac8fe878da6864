/* bench_fgt.c (built as test_fgt_exact) - the MMD of an m-point coreset against an N-point 2-D
 * input (Gaussian kernel) by the fast Gauss transform (target.self: fgt), with its bound, and
 * optionally the exact value beside it. Run by bench/fgt.sh and as the test test_fgt_exact_np2
 * (which checks |fgt - exact| <= bound). usage: test_fgt_exact [log2 N = 20] [m = 512] [ls = 0.5]
 * [exact = 0] [d = 2] Prints one line; exit 1 when the exact value lies outside the bound. */
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  kd_ctx *ctx = NULL;
  if (kd_ctx_create(c, &ctx) != KD_OK) MPI_Abort(c, 2);
  kd_ctx_set_log_level(ctx, KD_LOG_QUIET);
  kd_ctx_bind(ctx);
  const int lg = argc > 1 ? atoi(argv[1]) : 20;
  const kd_lidx m = argc > 2 ? atol(argv[2]) : 512;
  const double ls = argc > 3 ? atof(argv[3]) : 0.5;
  const int exact = argc > 4 ? atoi(argv[4]) : 0;
  const int d = argc > 5 ? atoi(argv[5]) : 2;
  const kd_gidx N = (kd_gidx)1 << lg;
  /* input: a mixture of three Gaussians (bench_mmd's in 2-D) */
  double means[15] = {0, 0, 0, 0, 0, 2, 1, 0.5, -0.5, 1, -1, 2, 1, 0, -1};
  double sds[15] = {1, 0.5, 1, 0.7, 0.9, 0.5, 0.8, 0.6, 0.6, 0.6, 0.7, 0.7, 0.5, 0.8, 0.9};
  double mw[3] = {0.5, 0.3, 0.2}, M[15], S[15];
  for (int j = 0; j < 3; j++)
    for (int k = 0; k < d; k++) {
      M[j * d + k] = means[j * 5 + k];
      S[j * d + k] = sds[j * 5 + k];
    }
  kd_measure mu = {0};
  mu.type = KD_MEASURE_GAUSSIAN_MIXTURE;
  mu.d = d;
  mu.n_comp = 3;
  mu.means = M;
  mu.sds = S;
  mu.mix_w = mw;
  kd_pointset *data = NULL;
  kd_kernel *k = NULL;
  kd_target *t = NULL, *te = NULL;
  kd_gidx *idx = malloc(sizeof(kd_gidx) * m);
  double *X = malloc(sizeof(double) * d * m), *w = malloc(sizeof(double) * m);
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kp.ls = ls;
  int ok =
      kd_pointset_generate(c, &mu, N, 1, &data) == KD_OK && kd_kernel_create(&kp, d, &k) == KD_OK;
  for (kd_lidx i = 0; i < m; i++) { /* every (N/m)-th row, uniform weights */
    idx[i] = i * (N / m);
    w[i] = 1.0 / (double)m;
  }
  ok = ok && kd_pointset_gather_rows(data, idx, m, X) == KD_OK;
  ok = ok && kd_target_create_empirical(k, data, 0, &t) == KD_OK;
  ok = ok && kd_target_set_self(t, KD_SELF_FGT, 0, 1) == KD_OK;
  kd_mmd_info f, e;
  memset(&f, 0, sizeof f);
  memset(&e, 0, sizeof e);
  MPI_Barrier(c);
  double t0 = MPI_Wtime();
  ok = ok && kd_mmd_eval(t, X, w, m, &f) == KD_OK;
  MPI_Barrier(c);
  double t1 = MPI_Wtime(), t2 = t1;
  if (exact) {
    ok = ok && kd_target_create_empirical(k, data, 0, &te) == KD_OK;
    ok = ok && kd_target_set_self(te, KD_SELF_EXACT, 0, 1) == KD_OK;
    ok = ok && kd_mmd_eval(te, X, w, m, &e) == KD_OK;
    MPI_Barrier(c);
    t2 = MPI_Wtime();
  }
  if (!ok && rank == 0) fprintf(stderr, "bench_fgt failed: %s\n", kd_err_message());
  const int inside = !exact || fabs(f.mmd2 - e.mmd2) <= f.mmd2_bound;
  if (rank == 0) {
    printf(
        "ranks %d  N 2^%d  d %d  m %ld  ls %g  mmd %.10e  mmd2 %.10e  bound %.2e  order %d  "
        "cells %lld  fgt_s %.3f",
        size, lg, d, (long)m, ls, f.mmd, f.mmd2, f.mmd2_bound, f.fgt_order, (long long)f.fgt_cells,
        t1 - t0);
    if (exact)
      printf("  exact_mmd2 %.10e  diff %.2e  exact_s %.3f  %s", e.mmd2, fabs(f.mmd2 - e.mmd2),
             t2 - t1, inside ? "inside" : "OUTSIDE THE BOUND");
    printf("\n");
  }
  kd_target_destroy(&t);
  kd_target_destroy(&te);
  kd_kernel_destroy(&k);
  kd_pointset_destroy(&data);
  free(idx);
  free(X);
  free(w);
  kd_ctx_unbind(NULL);
  kd_ctx_destroy(&ctx);
  MPI_Finalize();
  return ok && inside ? 0 : 1;
}
