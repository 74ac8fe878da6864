/* bench_mmd.c - exact empirical MMD of an m-point coreset against an N-point 2-D input with the
 * Gaussian kernel, including the input's own double sum zz (N^2 kernel evaluations, half of them
 * computed thanks to symmetry). Not a test: run by bench/mmd.sh.
 * usage: bench_mmd [log2 N = 18] [m = 512] [ls = 0.5] */
#include <stdlib.h>
#include <time.h>

#include "kd_test.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  kd_ctx *ctx = NULL; /* errors and logging act on a bound context */
  if (kd_ctx_create(c, &ctx) != KD_OK) MPI_Abort(c, 2);
  kd_ctx_set_log_level(ctx, KD_LOG_QUIET);
  kd_ctx_bind(ctx);
  int lg = argc > 1 ? atoi(argv[1]) : 18;
  kd_lidx m = argc > 2 ? atol(argv[2]) : 512;
  double ls = argc > 3 ? atof(argv[3]) : 0.5;
  kd_gidx N = (kd_gidx)1 << lg;
  /* input: a 2-D mixture of three Gaussians */
  double means[6] = {0, 0, 2, 1, -1, 2}, sds[6] = {1, 0.5, 0.5, 0.8, 0.7, 0.7},
         mw[3] = {0.5, 0.3, 0.2};
  kd_measure mu = {0};
  mu.type = KD_MEASURE_GAUSSIAN_MIXTURE;
  mu.d = 2;
  mu.n_comp = 3;
  mu.means = means;
  mu.sds = sds;
  mu.mix_w = mw;
  kd_pointset *data = NULL;
  kd_kernel *k = NULL;
  kd_target *t = NULL;
  kd_gidx *idx = malloc(sizeof(kd_gidx) * m);
  double *X = malloc(sizeof(double) * 2 * m), *w = malloc(sizeof(double) * m);
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kp.ls = ls;
  int ok =
      kd_pointset_generate(c, &mu, N, 1, &data) == KD_OK && kd_kernel_create(&kp, 2, &k) == KD_OK;
  /* coreset: every (N/m)-th input row, uniform weights */
  for (kd_lidx i = 0; i < m; i++) {
    idx[i] = i * (N / m);
    w[i] = 1.0 / (double)m;
  }
  ok = ok && kd_pointset_gather_rows(data, idx, m, X) == KD_OK;
  MPI_Barrier(c);
  clock_t c0 = clock();
  double t0 = MPI_Wtime(), zz = 0, mmd = 0, mmd2 = 0;
  int av = 0;
  ok = ok && kd_target_create_empirical(k, data, 0, &t) == KD_OK;
  ok = ok && kd_target_self(t, &zz, &av) == KD_OK;
  MPI_Barrier(c);
  double t1 = MPI_Wtime();
  ok = ok && kd_mmd(t, X, w, m, &mmd, &mmd2) == KD_OK;
  MPI_Barrier(c);
  double t2 = MPI_Wtime();
  double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC; /* this rank's CPU seconds */
  MPI_Allreduce(MPI_IN_PLACE, &cpu, 1, MPI_DOUBLE, MPI_MAX, c);
  uint64_t ev = kd_kernel_evals(k);
  MPI_Allreduce(MPI_IN_PLACE, &ev, 1, MPI_UINT64_T, MPI_SUM, c);
  if (!ok && rank == 0) fprintf(stderr, "bench_mmd failed: %s\n", kd_err_message());
  if (rank == 0)
    printf(
        "ranks %d  N 2^%d  m %ld  ls %g  zz %.16g  mmd %.10g  mmd2 %.6g  zz_s %.3f  rest_s %.3f  "
        "total_s %.3f  max_rank_cpu_s %.3f  evals %.4g  evals_per_s %.4g\n",
        size, lg, (long)m, ls, zz, mmd, mmd2, t1 - t0, t2 - t1, t2 - t0, cpu, (double)ev,
        (double)ev / (t2 - t0));
  kd_target_destroy(&t);
  kd_kernel_destroy(&k);
  kd_pointset_destroy(&data);
  free(idx);
  free(X);
  free(w);
  kd_ctx_unbind(NULL);
  kd_ctx_destroy(&ctx);
  MPI_Finalize();
  return ok ? 0 : 1;
}
