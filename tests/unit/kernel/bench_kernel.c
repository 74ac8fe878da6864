/* bench_kernel.c - kernel evaluation throughput (not a test): Gaussian kernel, n x n with rows of A
 * split over the ranks (each rank evaluates its n/p rows against all n columns of B), modes
 *   tile    materialised K(A_local, B)        (n/p x n, written in 512-row strips)
 *   matvec  fused y = K(A_local, B) w         (K never formed)
 *   pair    kd_kernel_eval one pair at a time (the per-call overhead)
 *   dgemm   tile via |a|^2 + |b|^2 - 2 A B^T with BLAS dgemm + the same exp (comparison only:
 *           not bitwise reproducible, not used by the library)
 *   screen, screen_gemm, screen_direct
 *           the screening mat-vec (kd_kernel_screen_matvec; its form by d, through sgemm, or by
 *           the direct loops), its set prepared outside the timed part
 *   matvec_gemm
 *           kd_kernel_matvec_gemm (dgemm for the Gaussian kernel at d >= 96) over 2048 x 2048
 *           blocks, as the exact MMD's self term calls it
 *   matvec_sym
 *           y = K(B, B) w as the empirical target's embedding at its own rows computes it (one
 *           rank): 2048 x 2048 chunk pairs by kd_kernel_matvec_pair, each chunk with itself by
 *           kd_kernel_matvec_sym, so every pair once; "evals/s" counts the n x n pairs of the
 *           product, as for matvec
 *   gemm_s, gemm_d
 *           the GEMM rate alone: A B^T (n/p x d times d x nb) by sgemm or dgemm, 1 thread; the
 *           "evals/s" figure is then flop/s (2 d per pair), the roofline of bench/kernel.sh
 * Usage: bench_kernel MODE d [n] [reps] [kernel] [nb] (KD_BENCH_BASE=gaussian|imq|matern52: the
 * Stein kernel's base; its d is the row width 2 d_x). A: n rows, B: nb (default n). Prints
 * evaluations/s over all ranks, from the wall clock and from the CPU time of each process (best of
 * reps, slowest rank): on a machine shared with other jobs the CPU-time figure discounts the time
 * slices lost to them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kdistill/author.h"
#include "kernel/kernel_impl.h"

extern void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
                   const float *alpha, const float *a, const int *lda, const float *b,
                   const int *ldb, const float *beta, float *c, const int *ldc);
extern void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
                   const double *alpha, const double *a, const int *lda, const double *b,
                   const int *ldb, const double *beta, double *c, const int *ldc);

static void tile_dgemm(double ls, const double *A, int na, const double *B, int nb, int d,
                       double *K, double *na2, double *nb2) {
  const double one = 1.0, zero = 0.0, g = -0.5 / (ls * ls);
  for (int i = 0; i < na; i++) {
    double s = 0;
    for (int j = 0; j < d; j++) s += A[i * d + j] * A[i * d + j];
    na2[i] = s;
  }
  for (int i = 0; i < nb; i++) {
    double s = 0;
    for (int j = 0; j < d; j++) s += B[i * d + j] * B[i * d + j];
    nb2[i] = s;
  }
  /* row-major K = A B^T  <=>  column-major K^T = B A^T */
  dgemm_("T", "N", &nb, &na, &d, &one, B, &d, A, &d, &zero, K, &nb);
  for (int i = 0; i < na; i++) {
    double *row = K + (size_t)i * nb;
    for (int j = 0; j < nb; j++) {
      double s2 = na2[i] + nb2[j] - 2.0 * row[j];
      row[j] = g * (s2 > 0 ? s2 : 0);
    }
    kd_kernel_vexp_neg_(nb, row, row);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  kd_ctx *ctx = NULL; /* error messages are recorded on a bound context */
  if (kd_ctx_create(MPI_COMM_WORLD, &ctx) != KD_OK) MPI_Abort(MPI_COMM_WORLD, 2);
  kd_ctx_bind(ctx);
  if (argc < 3) {
    if (rank == 0)
      fprintf(stderr, "usage: %s tile|matvec|pair|dgemm d [n] [reps] [kernel] [nb]\n", argv[0]);
    kd_ctx_destroy(&ctx);
    MPI_Finalize();
    return 2;
  }
  const char *mode = argv[1];
  const int d = atoi(argv[2]);
  const kd_lidx n = argc > 3 ? atol(argv[3]) : 4096;
  const int reps = argc > 4 ? atoi(argv[4]) : 3;
  const char *kname = argc > 5 ? argv[5] : "gaussian";
  const kd_lidx ncol = argc > 6 ? atol(argv[6]) : n;
  const kd_lidx r0 = n * rank / size, r1 = n * (rank + 1) / size, na = r1 - r0;
  const kd_lidx strip = 512;
  double *B = malloc(sizeof(double) * n * d), *w = malloc(sizeof(double) * n);
  double *y = malloc(sizeof(double) * n);
  double *K = malloc(sizeof(double) * (size_t)strip * n);
  double *t1 = malloc(sizeof(double) * n), *t2 = malloc(sizeof(double) * n);
  for (kd_lidx i = 0; i < n * d; i++) B[i] = kd_rng_normal(1, 0, (uint64_t)i);
  for (kd_lidx i = 0; i < n; i++) w[i] = kd_rng_uniform(2, 0, (uint64_t)i);
  kd_kernel_params p = kd_kernel_params_default(kd_kernel_from_name(kname));
  p.ls = sqrt((double)d);
  p.dk = d > 1 ? d / 2 : 1;
  if (getenv("KD_BENCH_BASE")) p.base = kd_kernel_from_name(getenv("KD_BENCH_BASE")); /* stein */
  kd_kernel *k = NULL;
  if (kd_kernel_create(&p, d, &k) != KD_OK) {
    fprintf(stderr, "%s\n", kd_err_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const double *A = B + r0 * d;
  double best = 1e300, bestcpu = 1e300, check = 0;
  const int gemm_rate = strncmp(mode, "gemm_", 5) == 0;
  float *Bf = malloc(sizeof(float) * (size_t)(n * d)),
        *Kf = malloc(sizeof(float) * (size_t)strip * n);
  for (kd_lidx i = 0; i < n * d; i++) Bf[i] = (float)B[i];
  kd_kernel_screen *S = NULL;
  if (strncmp(mode, "screen", 6) == 0) {
    kd_kernel_set_screen_gemm_(k, strcmp(mode, "screen_gemm") == 0     ? 1
                                  : strcmp(mode, "screen_direct") == 0 ? 2
                                                                       : 0);
    kd_kernel_screen_prepare(k, B, n, &S);
    if (!S) fprintf(stderr, "screening not available\n");
  }
  const int runs = strncmp(mode, "screen", 6) == 0 && !S ? 0 : reps; /* none: evals/s ~ 0 */
  for (int r = 0; r < runs; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    struct timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    double t0 = MPI_Wtime();
    if (strcmp(mode, "matvec") == 0) {
      kd_kernel_matvec(k, A, na, B, ncol, w, 0.0, y);
      check += y[0];
    } else if (strcmp(mode, "matvec_gemm") == 0) {
      for (kd_lidx i = 0; i < na; i += 2048) /* the exact MMD's chunk pairs: 2048 x 2048 */
        for (kd_lidx j = 0; j < ncol; j += 2048)
          kd_kernel_matvec_gemm(k, A + i * d, na - i < 2048 ? na - i : 2048, B + j * d,
                                ncol - j < 2048 ? ncol - j : 2048, w + j, y + i);
      check += y[0];
    } else if (strcmp(mode, "matvec_sym") == 0) {
      for (kd_lidx j = 0; j < ncol; j += 2048) {
        const kd_lidx mj = ncol - j < 2048 ? ncol - j : 2048;
        for (kd_lidx i = 0; i < j; i += 2048)
          kd_kernel_matvec_pair(k, B + i * d, 2048, B + j * d, mj, w + i, w + j, t1, t1 + 2048);
        kd_kernel_matvec_sym(k, B + j * d, mj, w + j, y + j);
      }
      check += y[0];
    } else if (strncmp(mode, "screen", 6) == 0) {
      if (S) kd_kernel_screen_matvec(k, S, r0, na, ncol, w, y, t1);
      check += y[0];
    } else if (gemm_rate) {
      const double one = 1.0, zero = 0.0;
      const float onef = 1.0f, zerof = 0.0f;
      const int nc = (int)ncol;
      for (kd_lidx i = 0; i < na; i += strip) {
        const int m = (int)(na - i < strip ? na - i : strip);
        if (mode[5] == 's')
          sgemm_("T", "N", &nc, &m, &d, &onef, Bf, &d, Bf + (r0 + i) * d, &d, &zerof, Kf, &nc);
        else
          dgemm_("T", "N", &nc, &m, &d, &one, B, &d, A + i * d, &d, &zero, K, &nc);
        check += mode[5] == 's' ? (double)Kf[0] : K[0];
      }
    } else if (strcmp(mode, "pair") == 0) {
      for (kd_lidx i = 0; i < na; i++)
        for (kd_lidx j = 0; j < ncol; j++) check += kd_kernel_eval(k, A + i * d, B + j * d);
    } else {
      for (kd_lidx i = 0; i < na; i += strip) {
        kd_lidx m = na - i < strip ? na - i : strip;
        if (strcmp(mode, "dgemm") == 0)
          tile_dgemm(p.ls, A + i * d, (int)m, B, (int)ncol, d, K, t1, t2);
        else
          kd_kernel_eval_block(k, A + i * d, m, B, ncol, K, ncol);
        check += K[0];
      }
    }
    double tt[2];
    tt[0] = MPI_Wtime() - t0;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    tt[1] = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    /* ranks run concurrently: the slowest one sets the time */
    MPI_Allreduce(MPI_IN_PLACE, tt, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (tt[0] < best) best = tt[0];
    if (tt[1] < bestcpu) bestcpu = tt[1];
  }
  if (rank == 0)
    printf(
        "mode %s kernel %s d %d n %lld nb %lld ranks %d time %.4f s evals/s %.4g cpu %.4f s "
        "cpu_evals/s %.4g (check %.3g)\n",
        mode, kname, d, (long long)n, (long long)ncol, size, best,
        (gemm_rate ? 2.0 * d : 1.0) * (double)n * (double)ncol / best, bestcpu,
        (gemm_rate ? 2.0 * d : 1.0) * (double)n * (double)ncol / bestcpu, check);
  kd_kernel_screen_free(&S);
  free(Bf);
  free(Kf);
  kd_kernel_destroy(&k);
  free(B);
  free(w);
  free(y);
  free(K);
  free(t1);
  free(t2);
  kd_ctx_unbind(NULL);
  kd_ctx_destroy(&ctx);
  MPI_Finalize();
  return 0;
}
