/* bench_halve.c - benchmark of one KH halving for bench/results/scale.md (built, not registered as
 * a test): the single-precision screening alone against the fast Gauss transform, alternating.
 * Usage: bench_halve LOG2N D LS REPS [LOCAL [FORCE]]
 *   data: the 8-component mixture of the tests, KH(0.5), consecutive pairs (LOCAL = 1: local
 *   pairing), Gaussian kernel of length scale LS; FORCE = 1: the transform from the
 *   second chunk on (kd_kernel_set_screening 2), not only where it pays. Prints per repetition and
 * mode the halving's wall seconds and kernel evaluations, and whether both modes kept the same
 * rows. Serial. */
#include <stdio.h>

#include "algo/thinning/thin_impl.h"
#include "thin_test_util.h"

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const int lg = argc > 1 ? atoi(argv[1]) : 16, d = argc > 2 ? atoi(argv[2]) : 2;
  const double ls = argc > 3 ? atof(argv[3]) : 1.0;
  const int reps = argc > 4 ? atoi(argv[4]) : 3, local = argc > 5 ? atoi(argv[5]) : 0;
  const int force = argc > 6 ? atoi(argv[6]) : 0;
  const kd_lidx n = (kd_lidx)1 << lg;
  const kd_halve_kind kind = local ? (kd_halve_kind)(KD_HALVE_KH | KD_HALVE_LOCAL) : KD_HALVE_KH;
  kd_measure mu = thin_test_mixture(d);
  double *X = malloc(sizeof(double) * (size_t)(n * d));
  kd_lidx *a = malloc(sizeof(kd_lidx) * (size_t)n), *b = malloc(sizeof(kd_lidx) * (size_t)n);
  KD_TEST_OK(kd_measure_sample(&mu, 7, 0, n, X));
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  p.ls = ls;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, d, &k));
  for (int r = 0; r < reps; r++)
    for (int m = 0; m < 2; m++) {
      kd_kernel_set_screening(k, m == 0 ? 3 : (force ? 2 : 1));
      kd_kernel_reset_evals(k);
      const double t0 = MPI_Wtime();
      KD_TEST_OK(kd_thin_halve(k, kind, X, n, d, 0.5, (uint64_t)r, 3, m == 0 ? a : b));
      const double t = MPI_Wtime() - t0;
      printf("n=2^%d d=%d ls=%g local=%d rep %d %s: %.4f s, %llu evaluations%s\n", lg, d, ls, local,
             r, m == 0 ? "screening" : "fgt      ", t, (unsigned long long)kd_kernel_evals(k),
             m == 1 ? (memcmp(a, b, sizeof(kd_lidx) * (size_t)(n / 2)) ? " DIFFER" : " same") : "");
    }
  kd_kernel_destroy(&k);
  kd_measure_free(&mu);
  free(X), free(a), free(b);
  return kd_test_finish();
}
