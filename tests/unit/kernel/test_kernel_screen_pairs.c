/* test_kernel_screen_pairs.c - the screening mat-vec of pairs' differences
 * (src/kernel/kernel_screen_pair.c).
 *  - Its single-precision expm1 on [-80, 0] against libm's expm1 in double: the relative error is
 *    at most half the bound the screening assumes (5 2^-24) and above 0.1 2^-24; NaN stays NaN.
 *  - |y_pair - (y0 - y1)| <= bound for every pair, y0, y1 = kd_kernel_matvec of its two rows, over
 *    d = 1, 2, 3, 7, length scales 0.05 .. 20, points offset by 1000, pair distances from 1e-5 to
 *    3 length scales, weights in [-1, 1], +-1 and NULL, several panels and prefixes.
 *  - For close pairs (distance <= 0.01 ls) the bound is at most 5% of the row screening's bounds
 *    of the same two rows (kd_kernel_screen_matvec): the point of the pair form.
 *  - Against single columns the error reaches at least 1% of the bound (it is not vacuous).
 *  - Pairs too far apart for the pair form (d = 1, scaled distance 60) fall back on the rows:
 *    still within the bound.
 *  - Evaluations counted: 2 per pair and column.
 * Serial. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kd_test.h"
#include "kernel/kernel_impl.h"

static void expm1_accuracy(void) {
  const kd_lidx n = 1 << 21;
  float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
  for (kd_lidx i = 0; i < n; i++) x[i] = (float)(-80.0 * pow((double)i / (double)(n - 1), 3.0));
  x[1] = -0.0f;
  x[2] = -0x1p-30f;
  x[3] = -0.34657359f; /* ln2 / 2: the reduction's edge */
  x[4] = -0.34657362f;
  kd_kernel_vfexpm1_neg_(n, x, y);
  double worst = 0.0;
  for (kd_lidx i = 2; i < n; i++) {
    const double e = expm1((double)x[i]), r = fabs((double)y[i] - e) / fabs(e);
    if (!(r <= worst)) worst = r;
  }
  printf("single-precision expm1 on [-80, 0]: max relative error %.3f 2^-24\n", worst / 0x1p-24);
  KD_TEST(y[1] == 0.0f, "expm1(-0) = %g", (double)y[1]);
  KD_TEST(
      worst <= 2.5 * 0x1p-24 && worst >= 0.1 * 0x1p-24,
      "single-precision expm1 on [-80, 0]: max relative error %.3f 2^-24 (bound 5, test <= 2.5)",
      worst / 0x1p-24);
  const float nan = NAN;
  float yn = 0.0f;
  kd_kernel_vfexpm1_neg_(1, &nan, &yn);
  KD_TEST(isnan(yn), "expm1(NaN) = %g", (double)yn);
  free(x);
  free(y);
}

typedef struct {
  double worst;   /* max |diff| / bound */
  double vs_rows; /* max pair bound / row bounds, close pairs */
  kd_lidx pairs;
} pair_stats;

/* n points in pairs: x_{2p} normal with spread sd around 1000, x_{2p+1} = x_{2p} + eps_p ls
 * times a normal direction, eps_p cycling through 1e-5 .. 3 */
static double *pair_points(kd_lidx n, int d, double sd, double ls, uint64_t seed, double *eps) {
  const double e[] = {1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 3.0};
  double *X = malloc(sizeof(double) * (size_t)(n * d));
  for (kd_lidx p = 0; p < n / 2; p++) {
    eps[p] = e[p % 7];
    for (int kk = 0; kk < d; kk++) {
      const uint64_t i = (uint64_t)(p * d + kk);
      X[2 * p * d + kk] = 1000.0 + sd * kd_rng_normal(seed, 3, i);
      X[(2 * p + 1) * d + kk] =
          X[2 * p * d + kk] + eps[p] * ls * kd_rng_normal(seed, 4, i) / sqrt((double)d);
    }
  }
  return X;
}

/* pairs [p0, p0 + np) of X against its first nb rows: pair form, exact rows, row screening */
static void check_pairs(kd_kernel *k, const kd_kernel_screen *S, const double *X, int d,
                        const double *eps, kd_lidx p0, kd_lidx np, kd_lidx nb, int wmode,
                        uint64_t seed, pair_stats *st) {
  double *w = malloc(sizeof(double) * (size_t)(nb + 1)), *yp = malloc(sizeof(double) * np),
         *bp = malloc(sizeof(double) * np), yr[2], br[2], ye[2];
  double wsum = 0.0;
  for (kd_lidx j = 0; j < nb; j++) {
    const double u = kd_rng_uniform(seed, 7, (uint64_t)j);
    w[j] = wmode == 1 ? (u < 0.5 ? -1.0 : 1.0) : 2.0 * u - 1.0;
    wsum += wmode == 0 ? 1.0 : fabs(w[j]);
  }
  const double *wp = wmode == 0 ? NULL : w;
  const uint64_t e0 = kd_kernel_evals(k);
  KD_TEST_OK(kd_kernel_screen_pairs(k, S, 2 * p0, np, nb, wp, yp, bp));
  KD_TEST(kd_kernel_evals(k) - e0 == (uint64_t)(2 * np * nb), "evaluations counted: %llu",
          (unsigned long long)(kd_kernel_evals(k) - e0));
  for (kd_lidx p = 0; p < np; p++) {
    const kd_lidx r = 2 * (p0 + p);
    KD_TEST_OK(kd_kernel_matvec(k, X + r * d, 2, X, nb, wp, 0.0, ye));
    const double diff = fabs(yp[p] - (ye[0] - ye[1]));
    if (!(diff <= bp[p]))
      KD_TEST(0, "d %d pair %lld (eps %g) nb %lld w %d: |%.17g - %.17g| = %.3g above %.3g", d,
              (long long)(p0 + p), eps[p0 + p], (long long)nb, wmode, yp[p], ye[0] - ye[1], diff,
              bp[p]);
    if (bp[p] > 0 && diff / bp[p] > st->worst) st->worst = diff / bp[p];
    if (eps[p0 + p] <= 1e-2 && nb >= 64) {
      KD_TEST_OK(kd_kernel_screen_matvec(k, S, r, 2, nb, wp, yr, br));
      const double ratio = bp[p] / (br[0] + br[1]);
      if (ratio > st->vs_rows) st->vs_rows = ratio;
    }
    st->pairs++;
  }
  (void)wsum;
  free(w);
  free(yp);
  free(bp);
}

static void bound_holds(void) {
  const int dims[] = {1, 2, 3, 7};
  const double lss[] = {0.05, 0.5, 2.0, 20.0};
  pair_stats all = {0, 0, 0}, single = {0, 0, 0};
  const kd_lidx n = 700; /* three panels, the last one partial */
  double eps[350];
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) {
      const int d = dims[a];
      double *X = pair_points(n, d, lss[b] < 0.1 ? 0.25 : 1.0, lss[b], (uint64_t)(10 * a + b), eps);
      kd_kernel *k = kd_test_gaussian(d, lss[b]);
      kd_kernel_screen *S = NULL;
      KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
      KD_TEST(S != NULL, "d %d ls %g: a screening form", d, lss[b]);
      if (S) {
        const kd_lidx nbs[] = {17, 256, 300, 700};
        for (int c = 0; c < 4; c++)
          for (int wm = 0; wm < 3; wm++)
            check_pairs(k, S, X, d, eps, (kd_lidx)(19 * c), 70, nbs[c], wm, (uint64_t)(a + b + c),
                        &all);
        for (kd_lidx p0 = 1; p0 < n / 2; p0 += 23) /* one column: one difference */
          check_pairs(k, S, X, d, eps, p0, 1, 1 + (p0 % 3), 2, (uint64_t)p0, &single);
      }
      kd_kernel_screen_free(&S);
      kd_kernel_destroy(&k);
      free(X);
    }
  printf(
      "%lld pairs: worst |diff|/bound %.4f, close pairs' bound at most %.4f of the rows'; "
      "single columns: worst %.4f\n",
      (long long)all.pairs, all.worst, all.vs_rows, single.worst);
  KD_TEST(all.pairs > 3000, "%lld pairs checked", (long long)all.pairs);
  KD_TEST(all.vs_rows > 0 && all.vs_rows <= 0.05,
          "close pairs: the pair bound is at most %.4f of the row bounds (test <= 0.05)",
          all.vs_rows);
  KD_TEST(single.worst >= 0.01, "single columns: worst |diff|/bound %.4f (the bound is tight)",
          single.worst);
}

/* d = 1, a wide panel (scaled radius ~ 60): pairs 60 scaled units apart take the row fallback */
static void far_pairs(void) {
  const kd_lidx n = 256;
  const double ls = 1.0;
  double *X = malloc(sizeof(double) * (size_t)n), eps[128];
  for (kd_lidx p = 0; p < n / 2; p++) {
    X[2 * p] = 1000.0 + 30.0 * (2.0 * kd_rng_uniform(5, 1, (uint64_t)p) - 1.0);
    X[2 * p + 1] = 2000.0 - X[2 * p] + ((p % 2) ? 1e-3 : 0.0); /* mirrored: far, or near 1000 */
    eps[p] = 1.0;
  }
  kd_kernel *k = kd_test_gaussian(1, ls);
  kd_kernel_screen *S = NULL;
  KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
  KD_TEST(S != NULL, "wide points: a screening form");
  pair_stats st = {0, 0, 0};
  if (S)
    for (int wm = 0; wm < 3; wm++) check_pairs(k, S, X, 1, eps, 0, n / 2, n, wm, 9, &st);
  printf("far pairs: worst |diff|/bound %.4f over %lld pairs\n", st.worst, (long long)st.pairs);
  KD_TEST(st.pairs == 3 * n / 2, "far pairs checked: %lld", (long long)st.pairs);
  kd_kernel_screen_free(&S);
  kd_kernel_destroy(&k);
  free(X);
}

static void bad_args(void) {
  const kd_lidx n = 64;
  double eps[32];
  double *X = pair_points(n, 2, 1.0, 1.0, 1, eps), y, b;
  kd_kernel *k = kd_test_gaussian(2, 1.0);
  kd_kernel_screen *S = NULL;
  KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
  KD_TEST(kd_kernel_screen_pairs(k, S, n - 1, 1, n, NULL, &y, &b) == KD_ERR_ARG,
          "a pair past the last row: KD_ERR_ARG");
  KD_TEST(kd_kernel_screen_pairs(k, S, 0, 1, n + 1, NULL, &y, &b) == KD_ERR_ARG,
          "columns past the set: KD_ERR_ARG");
  kd_err_clear();
  kd_kernel_screen_free(&S);
  kd_kernel_destroy(&k);
  free(X);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  expm1_accuracy();
  bound_holds();
  far_pairs();
  bad_args();
  return kd_test_finish();
}
