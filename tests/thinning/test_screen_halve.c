/* test_screen_halve.c - KH halving with the screened mat-vec (halve.c, kernel_screen.c) keeps
 * exactly the rows it keeps without screening: KH(delta), KH with adaptive thresholds, the tight
 * heuristic (delta < 0: small thresholds, so more coins fall near the screened alpha), with and
 * without local pairing, on the 8-component mixture at several sizes and length scales, 12 seeds
 * each. Screening must also have needed the exact rows for some pairs (the kernel evaluations
 * with screening exceed those without it by exactly what those rows cost), so that path is
 * exercised too. Serial. */
#include "algo/thinning/thin_impl.h"
#include "thin_test_util.h"

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const int d = 2;
  kd_measure mu = thin_test_mixture(d);
  const kd_lidx sizes[] = {384, 1000, 4096};
  const double lss[] = {0.3, 2.0};
  const kd_halve_kind kinds[] = {KD_HALVE_KH, KD_HALVE_KHA,
                                 (kd_halve_kind)(KD_HALVE_KH | KD_HALVE_LOCAL)};
  const double deltas[] = {0.5, 0.5, -1.0};
  uint64_t extra = 0, cases = 0, differ = 0;
  const int seeds = KD_TEST_SANITIZED ? 4 : 12;
  for (int si = 0; si < 3; si++) {
    const kd_lidx n = sizes[si];
    double *X = malloc(sizeof(double) * (size_t)(n * d));
    kd_lidx *a = malloc(sizeof(kd_lidx) * (size_t)n), *b = malloc(sizeof(kd_lidx) * (size_t)n);
    KD_TEST_OK(kd_measure_sample(&mu, 77, (uint64_t)si, n, X));
    for (int li = 0; li < 2; li++) {
      kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
      p.ls = lss[li];
      kd_kernel *k = NULL;
      KD_TEST_OK(kd_kernel_create(&p, d, &k));
      for (int ki = 0; ki < 3; ki++)
        for (int s = 0; s < seeds; s++) {
          kd_kernel_set_screening(k, 1);
          kd_kernel_reset_evals(k);
          KD_TEST_OK(kd_thin_halve(k, kinds[ki], X, n, d, deltas[ki], (uint64_t)s, 5, a));
          const uint64_t ev_on = kd_kernel_evals(k);
          kd_kernel_set_screening(k, 0);
          kd_kernel_reset_evals(k);
          KD_TEST_OK(kd_thin_halve(k, kinds[ki], X, n, d, deltas[ki], (uint64_t)s, 5, b));
          const uint64_t ev_off = kd_kernel_evals(k);
          cases++;
          if (memcmp(a, b, sizeof(kd_lidx) * (size_t)(n / 2)) != 0) {
            differ++;
            KD_TEST(0, "n %lld ls %g kind %d seed %d: screened halving keeps other rows",
                    (long long)n, lss[li], (int)kinds[ki], s);
          }
          KD_TEST(ev_on >= ev_off, "n %lld: %llu evaluations screened, %llu exact", (long long)n,
                  (unsigned long long)ev_on, (unsigned long long)ev_off);
          extra += ev_on - ev_off;
        }
      kd_kernel_destroy(&k);
    }
    free(X), free(a), free(b);
  }
  printf(
      "%llu halvings, %llu with other rows; exact rows for the unsettled pairs: %llu "
      "evaluations\n",
      (unsigned long long)cases, (unsigned long long)differ, (unsigned long long)extra);
  KD_TEST(differ == 0 && extra > 0,
          "%llu halvings identical with and without screening, %llu extra evaluations for the "
          "pairs the bound did not settle",
          (unsigned long long)cases, (unsigned long long)extra);
  kd_measure_free(&mu);
  return kd_test_finish();
}
