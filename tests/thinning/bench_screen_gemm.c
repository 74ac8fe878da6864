/* bench_screen_gemm.c - benchmark of one KH halving for bench/results/kernel.md (built, not
 * registered as a test): its screening's squared distances from sgemm (kernel_screen_gemm.c)
 * against the direct difference loops (kernel_screen.c), and the halving without screening,
 * alternating. Usage: bench_screen_gemm LOG2N D REPS [SD]
 *   data: N(0, SD^2 I_D) rows (SD default 1), KH(0.5), consecutive pairs, Gaussian kernel of
 *   length scale sqrt(D) (about the median heuristic's). Prints per repetition and mode the
 *   halving's wall seconds, its kernel evaluations and those computed screened, and whether each
 *   mode kept the rows of the unscreened halving. Serial. */
#include <stdio.h>

#include "algo/thinning/thin_impl.h"
#include "kernel/kernel_impl.h"
#include "thin_test_util.h"

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const int lg = argc > 1 ? atoi(argv[1]) : 14, d = argc > 2 ? atoi(argv[2]) : 64;
  const int reps = argc > 3 ? atoi(argv[3]) : 3;
  const double sd = argc > 4 ? atof(argv[4]) : 1.0;
  const kd_lidx n = (kd_lidx)1 << lg;
  double *X = malloc(sizeof(double) * (size_t)(n * d));
  kd_lidx *ref = malloc(sizeof(kd_lidx) * (size_t)n), *b = malloc(sizeof(kd_lidx) * (size_t)n);
  for (kd_lidx i = 0; i < n * d; i++) X[i] = sd * kd_rng_normal(11, 2, (uint64_t)i);
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  p.ls = sqrt((double)d);
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, d, &k));
  static const char *names[3] = {"exact ", "direct", "sgemm "};
  for (int r = 0; r < reps; r++)
    for (int m = 0; m < 3; m++) {
      kd_kernel_set_screening(k, m == 0 ? 0 : 3);
      kd_kernel_set_screen_gemm_(k, m == 2 ? 1 : 2);
      kd_kernel_reset_evals(k);
      const double t0 = MPI_Wtime();
      KD_TEST_OK(kd_thin_halve(k, KD_HALVE_KH, X, n, d, 0.5, (uint64_t)r, 3, m == 0 ? ref : b));
      const double t = MPI_Wtime() - t0;
      const int same = m == 0 || memcmp(ref, b, sizeof(kd_lidx) * (size_t)(n / 2)) == 0;
      KD_TEST(same, "d %d rep %d: %s screening keeps other rows", d, r, names[m]);
      printf("n=2^%d d=%d rep %d %s: %.4f s, %llu evaluations, %llu screened%s\n", lg, d, r,
             names[m], t, (unsigned long long)kd_kernel_evals(k),
             (unsigned long long)kd_kernel_screened_evals(k),
             m == 0 ? "" : (same ? " same" : " DIFFER"));
    }
  kd_kernel_destroy(&k);
  free(X), free(ref), free(b);
  return kd_test_finish();
}
