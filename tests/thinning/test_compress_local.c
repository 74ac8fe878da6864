/* test_compress_local.c - the Local compress entry points of compress_impl.h (used by CTT and
 * Thinformer): output size rule, distinct rows, quality against uniform subsampling, remainder
 * rule for n not a power of 4, reproducibility and bad input. Serial (every rank runs the same). */
#include "algo/thinning/compress_impl.h"
#include "thin_test_util.h"

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const int d = 2;
  const kd_lidx n = 4096; /* 4^6 */
  kd_measure mu = thin_test_mixture(d);
  double *X = malloc(sizeof(double) * 6000 * d);
  KD_TEST_OK(kd_measure_sample(&mu, 17, 0, 6000, X));
  kd_kernel *k = thin_test_gauss(d);
  double xx = thin_test_self(k, X, n, d);
  kd_lidx *idx = malloc(sizeof(kd_lidx) * 6000), *idx2 = malloc(sizeof(kd_lidx) * 6000);
  kd_lidx no = 0, no2 = 0;

  /* g = 1: 2^1 * sqrt(4096) = 128 points */
  const int g = 1;
  double mkt = 0, mkh = 0;
  const int reps = 3;
  for (int s = 0; s < reps; s++) {
    KD_TEST_OK(kd_thin_kt_compress_local(k, X, n, d, g, 0.5, 100 + s, 3, idx, &no));
    KD_TEST(no == 128, "kt size %lld", (long long)no);
    KD_TEST(thin_test_distinct(idx, no, n), "kt distinct rows");
    mkt += thin_test_mmd_idx(k, X, n, d, xx, idx, NULL, no) / reps;
    KD_TEST_OK(kd_thin_kh_compress_local(k, X, n, d, g, 0.5, 100 + s, 3, idx, &no));
    KD_TEST(no == 128 && thin_test_distinct(idx, no, n), "kh size/distinct");
    mkh += thin_test_mmd_idx(k, X, n, d, xx, idx, NULL, no) / reps;
  }
  double unif = thin_test_uniform_mmd(k, X, n, d, xx, 128, 10);
  if (kd_test_rank() == 0)
    printf("local compress n=4096 g=1 -> 128: uniform %.3e  kh_compress %.3e  kt_compress %.3e\n",
           unif, mkh, mkt);
  /* KH with the simplified threshold is weak on bins this small (a_i ~ 9 b_i b_max); the refined
   * last round (KT-Compress) is the one CTT relies on */
  KD_TEST(mkh < 0.9 * unif, "kh_compress beats uniform: %g vs %g", mkh, unif);
  KD_TEST(mkt < 0.15 * unif, "kt_compress beats uniform by > 6x: %g vs %g", mkt, unif);

  /* g = 2: 2^2 * 64 = 256 points; same (seed, stream) -> same output; other stream -> different */
  KD_TEST_OK(kd_thin_kt_compress_local(k, X, n, d, 2, 0.5, 5, 9, idx, &no));
  KD_TEST_OK(kd_thin_kt_compress_local(k, X, n, d, 2, 0.5, 5, 9, idx2, &no2));
  KD_TEST(no == 256 && no2 == 256 && memcmp(idx, idx2, sizeof(kd_lidx) * no) == 0,
          "reproducible for the same (seed, stream)");
  KD_TEST_OK(kd_thin_kt_compress_local(k, X, n, d, 2, 0.5, 5, 10, idx2, &no2));
  KD_TEST(memcmp(idx, idx2, sizeof(kd_lidx) * no) != 0, "another stream gives another coreset");

  /* n = 6000 (not a power of 4): K = 6, F = 1, 1904 remainder rows halved into the bin;
   * output 2^g 2^K = 64 for g = 0, rows drawn from the whole input including the last rows */
  KD_TEST_OK(kd_thin_kt_compress_local(k, X, 6000, d, 0, 0.5, 7, 1, idx, &no));
  KD_TEST(no == 64 && thin_test_distinct(idx, no, 6000), "n=6000 size %lld, distinct",
          (long long)no);
  double xx6 = thin_test_self(k, X, 6000, d);
  double m6 = thin_test_mmd_idx(k, X, 6000, d, xx6, idx, NULL, no);
  double u6 = thin_test_uniform_mmd(k, X, 6000, d, xx6, 64, 10);
  KD_TEST(m6 < 0.5 * u6, "n=6000 vs all 6000 rows: %g vs uniform %g", m6, u6);
  /* n = 3 * 4^5 = 3072: F = 3 roots of 1024 -> 3 * 2^(g+5) */
  KD_TEST_OK(kd_thin_kh_compress_local(k, X, 3072, d, 1, 0.5, 7, 1, idx, &no));
  KD_TEST(no == 3 * 64 && thin_test_distinct(idx, no, 3072), "n=3072 g=1 -> %lld", (long long)no);
  int late = 0;
  for (kd_lidx i = 0; i < no; i++) late += idx[i] >= 2048;
  KD_TEST(late > 32, "third root represented (%d rows from the last 1024)", late);

  /* bad input */
  KD_TEST(kd_thin_kt_compress_local(k, X, n, d, 6, 0.5, 1, 1, idx, &no) == KD_ERR_ARG &&
              strstr(kd_err_message(), "g = 6 too large"),
          "g too large: %s", kd_err_message());
  kd_err_clear();
  KD_TEST(kd_thin_kh_compress_local(k, X, n, d, 1, 1.0, 1, 1, idx, &no) == KD_ERR_ARG, "delta = 1");
  kd_err_clear();
  KD_TEST(kd_thin_kh_compress_local(k, X, n, d, 1, 0.0, 1, 1, idx, &no) == KD_ERR_ARG, "delta = 0");
  kd_err_clear();
  X[100 * d + 1] = NAN;
  KD_TEST(kd_thin_kh_compress_local(k, X, n, d, 1, 0.5, 1, 1, idx, &no) == KD_ERR_INPUT &&
              strstr(kd_err_message(), "row 101"),
          "NaN named: %s", kd_err_message());
  kd_err_clear();
  free(X);
  free(idx);
  free(idx2);
  kd_kernel_destroy(&k);
  kd_measure_free(&mu);
  return kd_test_finish();
}
