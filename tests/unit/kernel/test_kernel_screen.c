/* test_kernel_screen.c - the screening mat-vec (src/kernel/kernel_screen.c).
 *  - Its single-precision exponential on [-80, 0] against libm's exp in double: the relative error
 *    is at most half the bound the screening assumes (3 2^-24), and above 0.1 2^-24 (it is single
 *    precision).
 *  - |y_screened - y_exact| <= bound for every row, y_exact = kd_kernel_matvec of the same row,
 *    over d = 1, 2, 3, 7, length scales 0.05 .. 20 (arguments far below the clamp at -80 among
 *    them), points offset by 1000 (the centring), weights in [-1, 1], +-1 and NULL, several
 *    panels and prefixes; the bound stays below 2e-5 sum|w| (it is not vacuous).
 *  - Where the rounding of the points dominates (d = 1, a panel spread over a scaled radius of
 *    90, each row against one nearby column) the error reaches at least 5% of the bound: a bound
 *    without its radius term is exceeded there.
 *  - No screening form (a NULL handle, no error) for another kernel, screening switched off,
 *    points too spread for single precision, and a NaN coordinate.
 *  - kd_kernel_screen_exact gives kd_kernel_matvec's bits for rows against every kind of prefix
 *    of the columns (inside the first panel, exactly at a panel boundary, one past it, in the
 *    last panel, all of them), 1 - 9 rows (groups of four and their remainder), d = 1, 2, 3, 7,
 *    weights +-1, real and NULL, and counts the same evaluations.
 * Serial. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"
#include "kernel/kernel_impl.h"
#include "screen_test_util.h"

static void exp_accuracy(void) {
  const kd_lidx n = 1 << 21;
  float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
  for (kd_lidx i = 0; i < n; i++) x[i] = (float)(-80.0 * (double)i / (double)(n - 1));
  x[1] = -0.0f;
  x[2] = -0x1p-30f;
  x[3] = -0.34657359f; /* ln2 / 2: the reduction's edge */
  kd_kernel_vfexp_neg_(n, x, y);
  double worst = 0.0;
  for (kd_lidx i = 0; i < n; i++) {
    const double e = exp((double)x[i]), r = fabs((double)y[i] - e) / e;
    if (!(r <= worst)) worst = r;
  }
  printf("single-precision exp on [-80, 0]: max relative error %.3f 2^-24\n", worst / 0x1p-24);
  KD_TEST(worst <= 1.5 * 0x1p-24 && worst >= 0.1 * 0x1p-24,
          "single-precision exp on [-80, 0]: max relative error %.3f 2^-24 (bound 3, test <= 1.5)",
          worst / 0x1p-24);
  free(x);
  free(y);
}

typedef struct {
  double worst; /* max |diff| / bound over rows */
  double loose; /* max bound / sum |w| */
  kd_lidx rows;
} scr_stats;

/* rows [i0, i0 + na) of X against its first nb rows, screened and exact, weights wmode (0: NULL,
 * 1: +-1, 2: uniform in [-1, 1]) */
static void check_rows(kd_kernel *k, const kd_kernel_screen *S, const double *X, int d, kd_lidx i0,
                       kd_lidx na, kd_lidx nb, int wmode, uint64_t seed, scr_stats *st) {
  double *w = malloc(sizeof(double) * (size_t)(nb + 1)), *ys = malloc(sizeof(double) * na),
         *yb = malloc(sizeof(double) * na);
  double wsum = 0.0;
  for (kd_lidx j = 0; j < nb; j++) {
    const double u = kd_rng_uniform(seed, 7, (uint64_t)j);
    w[j] = wmode == 1 ? (u < 0.5 ? -1.0 : 1.0) : 2.0 * u - 1.0;
    wsum += wmode == 0 ? 1.0 : fabs(w[j]);
  }
  const double *wp = wmode == 0 ? NULL : w;
  KD_TEST_OK(kd_kernel_screen_matvec(k, S, i0, na, nb, wp, ys, yb));
  for (kd_lidx i = 0; i < na; i++) {
    double yd = 0.0;
    KD_TEST_OK(kd_kernel_matvec(k, X + (i0 + i) * d, 1, X, nb, wp, 0.0, &yd));
    const double diff = fabs(ys[i] - yd);
    if (!(diff <= yb[i]))
      KD_TEST(0, "d %d row %lld nb %lld w %d: |%.17g - %.17g| = %.3g above the bound %.3g", d,
              (long long)(i0 + i), (long long)nb, wmode, ys[i], yd, diff, yb[i]);
    if (yb[i] > 0 && diff / yb[i] > st->worst) st->worst = diff / yb[i];
    if (wsum > 0 && yb[i] / wsum > st->loose) st->loose = yb[i] / wsum;
    st->rows++;
  }
  free(w);
  free(ys);
  free(yb);
}

/* n points: normal with spread `sd` around 1000 in every coordinate */
static double *points(kd_lidx n, int d, double sd, uint64_t seed) {
  double *X = malloc(sizeof(double) * (size_t)(n * d));
  for (kd_lidx i = 0; i < n * d; i++) X[i] = 1000.0 + sd * kd_rng_normal(seed, 3, (uint64_t)i);
  return X;
}

static void bound_holds(void) {
  const int dims[] = {1, 2, 3, 7};
  const double lss[] = {0.05, 0.5, 2.0, 20.0};
  scr_stats all = {0, 0, 0}, single = {0, 0, 0};
  const kd_lidx n = 700; /* three panels, the last one partial */
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) {
      const int d = dims[a];
      /* spread 1, less at the smallest ls (else single precision cannot resolve the points) */
      double *X = points(n, d, lss[b] < 0.1 ? 0.25 : 1.0, (uint64_t)(10 * a + b));
      kd_kernel *k = kd_test_gaussian(d, lss[b]);
      kd_kernel_screen *S = NULL;
      KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
      KD_TEST(S != NULL, "d %d ls %g: a screening form", d, lss[b]);
      if (S) {
        const kd_lidx nbs[] = {17, 256, 300, 700};
        for (int c = 0; c < 4; c++)
          for (int wm = 0; wm < 3; wm++)
            check_rows(k, S, X, d, (kd_lidx)(37 * c), 40, nbs[c], wm, (uint64_t)(a + b + c), &all);
        for (kd_lidx i0 = 1; i0 < n; i0 += 60) /* one column: one value against its bound */
          check_rows(k, S, X, d, i0, 1, 1, 2, (uint64_t)i0, &single);
      }
      kd_kernel_screen_free(&S);
      kd_kernel_destroy(&k);
      free(X);
    }
  printf(
      "%lld rows: worst |diff|/bound %.4f, bound at most %.3e sum|w|; single values: worst "
      "%.4f\n",
      (long long)all.rows, all.worst, all.loose, single.worst);
  KD_TEST(all.rows > 1000 && all.loose <= 2e-5,
          "%lld rows: within the bound, worst |diff|/bound %.3f, bound at most %.2e sum|w|",
          (long long)all.rows, all.worst, all.loose);
  KD_TEST(single.worst >= 0.02, "single values: worst |diff|/bound %.3f (the bound is tight)",
          single.worst);
}

/* The coordinate-rounding regime: d = 1, points spread near the widest range screening accepts
 * (scaled radius ~90), each against one column close to it: the rounding of the points (up to
 * 90 2^-24 each) dominates the error, and the bound's radius term must cover it. */
static void wide_points(void) {
  const kd_lidx n = 4096;
  const double half = 90.0 * sqrt(2.0); /* ls 1: sigma = 1/sqrt(2), scaled radius 90 */
  double *X = malloc(sizeof(double) * (size_t)n);
  for (kd_lidx i = 0; i < n; i++) /* pairs (2i, 2i+1) about 1 apart, all over the range */
    X[i] = i % 2 ? X[i - 1] + 0.5 + kd_rng_uniform(9, 1, (uint64_t)i)
                 : -half + 2.0 * (half - 2.0) * kd_rng_uniform(9, 0, (uint64_t)i);
  kd_kernel *k = kd_test_gaussian(1, 1.0);
  kd_kernel_screen *S = NULL;
  KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
  KD_TEST(S != NULL, "scaled radius 90: a screening form");
  /* row i against column i - 1 alone */
  const double worst = screen_neighbour_worst(k, S, X, n, "wide points");
  KD_TEST(worst >= 0.05, "wide points: worst |diff|/bound %.4f (the radius term is tight)", worst);
  printf("wide points: worst |diff|/bound %.4f\n", worst);
  kd_kernel_screen_free(&S);
  kd_kernel_destroy(&k);
  free(X);
}

static void no_form(void) {
  const kd_lidx n = 64;
  double *X = points(n, 2, 1.0, 5);
  kd_kernel_screen *S = NULL;
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_MATERN52);
  p.ls = 1.0;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, 2, &k));
  KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
  KD_TEST(S == NULL && !kd_kernel_screen_available(k), "Matern 5/2: no screening form");
  kd_kernel_destroy(&k);
  k = kd_test_gaussian(2, 1.0);
  kd_kernel_set_screening(k, 0);
  KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
  KD_TEST(S == NULL, "screening off: none");
  kd_kernel_set_screening(k, 1);
  KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
  KD_TEST(S != NULL, "screening on again: a form");
  kd_kernel_screen_free(&S);
  X[5] = NAN;
  KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
  KD_TEST(S == NULL, "a NaN coordinate: none");
  kd_kernel_destroy(&k);
  free(X);
  X = points(n, 2, 1e4, 6); /* spread 1e4 at ls 1: single precision cannot resolve it */
  k = kd_test_gaussian(2, 1.0);
  KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
  KD_TEST(S == NULL, "points spread 1e4 at ls 1: none");
  kd_kernel_destroy(&k);
  free(X);
}

/* the exact rows over the screening set's packed copy: kd_kernel_matvec's bits */
static void exact_rows(void) {
  const int dims[] = {1, 2, 3, 7};
  int cases = 0, differ = 0;
  for (int di = 0; di < 4; di++) {
    const int d = dims[di];
    kd_kernel *k = kd_test_gaussian(d, 1.5);
    const kd_lidx P = kd_kernel_panel_(d), n = 2 * P + 77;
    double *X = points(n, d, 2.0, 11 + (uint64_t)d), *w = malloc(sizeof(double) * (size_t)n);
    double y1[9], y2[9];
    kd_kernel_screen *S = NULL;
    KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
    KD_TEST(S != NULL, "d = %d: a screening form", d);
    const kd_lidx nbs[] = {1, 5, 17, P - 1, P, P + 1, 2 * P + 3, n};
    for (int wi = 0; wi < 3 && S; wi++) {
      for (kd_lidx j = 0; j < n; j++)
        w[j] = wi == 0 ? ((j * 7) % 3 == 0 ? 1.0 : -1.0) : kd_rng_uniform(5, 9, (uint64_t)j) - 0.5;
      for (int bi = 0; bi < 8; bi++)
        for (kd_lidx na = 1; na <= 9; na += 2) {
          const kd_lidx i0 = (kd_lidx)(bi * 37 + na) % (n - na), nb = nbs[bi];
          const double *wp = wi == 2 ? NULL : w;
          kd_kernel_reset_evals(k);
          KD_TEST_OK(kd_kernel_matvec(k, X + i0 * d, na, X, nb, wp, 0.0, y1));
          const uint64_t e1 = kd_kernel_evals(k);
          kd_kernel_reset_evals(k);
          KD_TEST_OK(kd_kernel_screen_exact(k, S, i0, na, nb, wp, y2));
          cases++;
          if (memcmp(y1, y2, sizeof(double) * (size_t)na) != 0 || kd_kernel_evals(k) != e1) {
            differ++;
            KD_TEST(0, "d %d rows %lld+%lld columns %lld: %.17g vs %.17g", d, (long long)i0,
                    (long long)na, (long long)nb, y1[0], y2[0]);
          }
        }
    }
    kd_kernel_screen_free(&S);
    free(X), free(w);
    kd_kernel_destroy(&k);
  }
  KD_TEST(cases == 480 && differ == 0, "%d exact-row cases, %d differ from kd_kernel_matvec", cases,
          differ);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  exp_accuracy();
  bound_holds();
  wide_points();
  no_form();
  exact_rows();
  return kd_test_finish();
}
