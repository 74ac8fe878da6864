/* test_fgt_halve.c - the fast Gauss transform of the KH halving (halve_fgt.c):
 *  - the bound holds: |y_fgt - y_exact| <= yb for every row, y_exact = kd_kernel_matvec of the
 *    same row and signs, at d = 1, 2, 3, length scales 0.3, 1 and 3 (grids of a few to a few
 *    hundred cells per coordinate), 2000 earlier points with random signs, rows among and beyond
 *    them; the bound is below 1e-6 (not vacuous: a coin whose threshold is 0.01 is settled but
 *    for one in 10^4);
 *  - the bound is not loose: on one point placed at a cell's corner, a row at several offsets,
 *    the error of the expansion reaches at least 1e-4 of the truncation bound (Cramer's
 *    inequality is not tight, but a bound a million times too large fails this);
 *  - the halvings keep the rows they keep without it: KH(0.5), KH with adaptive thresholds, the
 *    tight heuristic with local pairing, d = 1, 2, 3, length scales 0.3 and 2, the transform
 *    forced from the second chunk, 2048 and 8192 rows (8192: d <= 2), 3 seeds; against the
 *    exact halving bit for bit, and at d <= 2 on 8192 rows with at most 10% of the exact
 *    halving's kernel evaluations (so the transform settled nearly every coin);
 *  - where it pays by itself (screening on, 16384 rows, d = 1 and 2): the same rows, and fewer
 *    evaluations than the single-precision screening alone;
 *  - it is the Gaussian kernel's only (docs/kernels.md says why): no grid for the Laplace and
 *    Matern kernels, whose halvings take the exact rows.
 * Serial (test_thin_team runs the forced transform in teams of 1 - 4 ranks). */
#include "algo/thinning/thin_impl.h"
#include "thin_test_util.h"

static void sample(int d, kd_lidx n, uint64_t stream, double *X) {
  kd_measure mu = thin_test_mixture(d);
  KD_TEST_OK(kd_measure_sample(&mu, 33, stream, n, X));
  kd_measure_free(&mu);
}

static void bound_holds(void) {
  const kd_lidx n = 3000, nb = 2000;
  const double lss[] = {0.3, 1.0, 3.0};
  double worst = 0.0, largest = 0.0;
  int rows = 0, fail = 0, grids = 0;
  for (int d = 1; d <= 3; d++) {
    double *X = malloc(sizeof(double) * (size_t)(n * d)), *sg = malloc(sizeof(double) * n);
    double *y = malloc(sizeof(double) * n), *yb = malloc(sizeof(double) * n);
    double *ye = malloc(sizeof(double) * n);
    sample(d, n, (uint64_t)d, X);
    kd_rng r = kd_rng_make(5, (uint64_t)d);
    for (kd_lidx j = 0; j < n; j++) sg[j] = kd_rng_next_uniform(&r) < 0.5 ? 1.0 : -1.0;
    for (int li = 0; li < 3; li++) {
      kd_kernel *k = kd_test_gaussian(d, lss[li]);
      kd_kh_fgt *f = NULL;
      double cross = 0.0;
      KD_TEST_OK(kd_kh_fgt_prepare(k, X, n, d, &f, &cross));
      KD_TEST(f != NULL || d == 3, "d %d ls %g: no grid", d, lss[li]);
      if (f) {
        grids++;
        kd_kh_fgt_add(f, X, nb, sg);
        kd_kh_fgt_eval(f, X, n, nb, y, yb);
        KD_TEST_OK(kd_kernel_matvec(k, X, n, X, nb, sg, 0.0, ye));
        double gl = 0.0;
        for (kd_lidx i = 0; i < n; i += 7) gl = yb[i] > gl ? yb[i] : gl;
        if (getenv("FGT_DBG")) printf("d %d ls %g: bound %.3g\n", d, lss[li], gl);
        for (kd_lidx i = 0; i < n; i += 7) {
          const double e = fabs(y[i] - ye[i]);
          rows++;
          worst = e / yb[i] > worst ? e / yb[i] : worst;
          largest = yb[i] > largest ? yb[i] : largest;
          if (!(e <= yb[i]) && fail++ < 5)
            KD_TEST(0, "d %d ls %g row %lld: |%.17g - %.17g| = %.3g above the bound %.3g", d,
                    lss[li], (long long)i, y[i], ye[i], e, yb[i]);
        }
      }
      kd_kh_fgt_free(&f);
      kd_kernel_destroy(&k);
    }
    free(X), free(sg), free(y), free(yb), free(ye);
  }
  printf("fgt: %d rows on %d grids, worst |diff|/bound %.3g, bound at most %.3g\n", rows, grids,
         worst, largest);
  KD_TEST(grids >= 6 && fail == 0 && largest <= 5e-6,
          "fgt: %d rows within their bounds (%d outside) on %d grids (test >= 6), bounds at most "
          "%.3g (test <= 5e-6)",
          rows, fail, grids, largest);
}

/* One point at the corner of its cell (the largest offsets), rows at a few distances: the
 * expansion's error against the truncation bound alone (the cutoff and the roundings are far
 * smaller here). */
static void bound_tight(void) {
  double ratio = 0.0;
  for (int d = 1; d <= 2; d++) {
    /* ls = 1 / sqrt(2): scaled coordinates are the original ones; row 0 at the origin, the box's
     * low corner and its cell's, the other rows within 3.2 of it */
    const kd_lidx n = 64;
    double *X = calloc((size_t)(n * d), sizeof(double));
    double y[64], yb[64], ye[64], sg[1] = {1.0};
    for (kd_lidx i = 1; i < n; i++)
      for (int kk = 0; kk < d; kk++) X[i * d + kk] = 0.05 * (double)i / (double)(kk + 1);
    kd_kernel *k = kd_test_gaussian(d, sqrt(0.5));
    kd_kh_fgt *f = NULL;
    double cross = 0.0;
    KD_TEST_OK(kd_kh_fgt_prepare(k, X, n, d, &f, &cross));
    if (f) {
      kd_kh_fgt_add(f, X, 1, sg);
      kd_kh_fgt_eval(f, X, n, 1, y, yb);
      KD_TEST_OK(kd_kernel_matvec(k, X, n, X, 1, sg, 0.0, ye));
      for (kd_lidx i = 1; i < n; i++)
        if (fabs(y[i] - ye[i]) / yb[i] > ratio) ratio = fabs(y[i] - ye[i]) / yb[i];
    }
    kd_kh_fgt_free(&f);
    kd_kernel_destroy(&k);
    free(X);
  }
  printf("fgt: one point, worst |diff|/bound %.3g\n", ratio);
  KD_TEST(ratio >= 1e-4 && ratio <= 1.0, "fgt: one point's error %.3g of its bound (test >= 1e-4)",
          ratio);
}

/* keep a with the transform (mode 2 forced, 1 where it pays) and b without screening; returns 1
 * when they agree; *ev_on, *ev_off the evaluations */
static int on_off(kd_kernel *k, int mode, kd_halve_kind kind, const double *X, kd_lidx n, int d,
                  double delta, uint64_t seed, kd_lidx *a, kd_lidx *b, uint64_t *ev_on,
                  uint64_t *ev_off) {
  kd_kernel_set_screening(k, mode);
  kd_kernel_reset_evals(k);
  KD_TEST_OK(kd_thin_halve(k, kind, X, n, d, delta, seed, 9, a));
  *ev_on = kd_kernel_evals(k);
  kd_kernel_set_screening(k, 0);
  kd_kernel_reset_evals(k);
  KD_TEST_OK(kd_thin_halve(k, kind, X, n, d, delta, seed, 9, b));
  *ev_off = kd_kernel_evals(k);
  const int same = memcmp(a, b, sizeof(kd_lidx) * (size_t)(n / 2)) == 0;
  KD_TEST(same, "n %lld d %d ls %g kind %d seed %llu mode %d: other rows", (long long)n, d,
          kd_kernel_get_params(k)->ls, (int)kind, (unsigned long long)seed, mode);
  return same;
}

static void halvings(void) {
  const kd_lidx sizes[] = {2048, 8192};
  const double lss[] = {0.3, 2.0};
  const kd_halve_kind kinds[] = {KD_HALVE_KH, KD_HALVE_KHA,
                                 (kd_halve_kind)(KD_HALVE_KH | KD_HALVE_LOCAL)};
  const double deltas[] = {0.5, 0.5, -1.0};
  int cases = 0, differ = 0;
  double share = 0.0; /* the largest share of the exact halving's evaluations, 8192 rows */
  const int seeds = KD_TEST_SANITIZED ? 1 : 3;
  for (int d = 1; d <= 3; d++)
    for (int si = 0; si < 2; si++) {
      const kd_lidx n = sizes[si];
      if (n > 2048 && (d == 3 || KD_TEST_SANITIZED)) continue;
      double *X = malloc(sizeof(double) * (size_t)(n * d));
      kd_lidx *a = malloc(sizeof(kd_lidx) * (size_t)n), *b = malloc(sizeof(kd_lidx) * (size_t)n);
      sample(d, n, (uint64_t)(10 * d + si), X);
      for (int li = 0; li < 2; li++) {
        kd_kernel *k = kd_test_gaussian(d, lss[li]);
        for (int ki = 0; ki < 3; ki++)
          for (int s = 0; s < seeds; s++) {
            uint64_t on = 0, off = 0;
            differ += !on_off(k, 2, kinds[ki], X, n, d, deltas[ki], (uint64_t)s, a, b, &on, &off);
            cases++;
            if (n == 8192 && ki < 2 && (double)on / (double)off > share)
              share = (double)on / (double)off;
            if (getenv("FGT_DBG"))
              printf("d %d n %lld ls %g kind %d: %.4f\n", d, (long long)n, lss[li], ki,
                     (double)on / (double)off);
          }
        kd_kernel_destroy(&k);
      }
      free(X), free(a), free(b);
    }
  printf("fgt: %d halvings, %d with other rows; at 8192 rows at most %.2f%% of the evaluations\n",
         cases, differ, 100.0 * share);
  KD_TEST(differ == 0 && (KD_TEST_SANITIZED || share <= 0.10),
          "fgt: %d halvings keep the exact halving's rows (%d differ), at most %.2f%% of its "
          "evaluations at 8192 rows (test <= 10%%)",
          cases, differ, 100.0 * share);
}

/* where it pays by itself: fewer evaluations than the single-precision screening alone */
static void by_itself(void) {
  const kd_lidx n = KD_TEST_SANITIZED ? 8192 : 16384;
  int differ = 0, fewer = 0;
  for (int d = 1; d <= 2; d++) {
    double *X = malloc(sizeof(double) * (size_t)(n * d));
    kd_lidx *a = malloc(sizeof(kd_lidx) * (size_t)n), *b = malloc(sizeof(kd_lidx) * (size_t)n);
    sample(d, n, (uint64_t)(40 + d), X);
    kd_kernel *k = kd_test_gaussian(d, 1.0);
    uint64_t on = 0, off = 0, scr = 0;
    differ += !on_off(k, 1, KD_HALVE_KH, X, n, d, 0.5, 1, a, b, &on, &off);
    kd_kernel_set_screening(k, 3);
    kd_kernel_reset_evals(k);
    KD_TEST_OK(kd_thin_halve(k, KD_HALVE_KH, X, n, d, 0.5, 1, 9, a));
    scr = kd_kernel_evals(k);
    differ += memcmp(a, b, sizeof(kd_lidx) * (size_t)(n / 2)) != 0;
    fewer += on < scr / 2;
    printf("fgt: d %d, %lld rows: %llu evaluations with the transform, %llu without\n", d,
           (long long)n, (unsigned long long)on, (unsigned long long)scr);
    kd_kernel_destroy(&k);
    free(X), free(a), free(b);
  }
  KD_TEST(differ == 0 && fewer == 2,
          "fgt where it pays: the same rows (%d differ), fewer than half the evaluations in %d of "
          "2 cases",
          differ, fewer);
}

/* the Laplace and Matern kernels get no grid, at any length scale and d <= 3 */
static void gaussian_only(void) {
  const kd_kernel_type types[] = {KD_KERNEL_LAPLACE, KD_KERNEL_MATERN32, KD_KERNEL_MATERN52};
  const kd_lidx n = 512;
  int grids = 0, cases = 0;
  for (int d = 1; d <= 3; d++) {
    double *X = malloc(sizeof(double) * (size_t)(n * d));
    sample(d, n, 40 + (uint64_t)d, X);
    for (int ti = 0; ti < 3; ti++)
      for (int li = 0; li < 2; li++) {
        kd_kernel_params p = kd_kernel_params_default(types[ti]);
        p.ls = li ? 3.0 : 0.3;
        kd_kernel *k = NULL;
        kd_kh_fgt *f = NULL;
        double cross = 0.0;
        KD_TEST_OK(kd_kernel_create(&p, d, &k));
        KD_TEST_OK(kd_kh_fgt_prepare(k, X, n, d, &f, &cross));
        grids += f != NULL;
        cases++;
        kd_kh_fgt_free(&f);
        kd_kernel_destroy(&k);
      }
    free(X);
  }
  printf("fgt: %d grids for %d Laplace / Matern cases\n", grids, cases);
  KD_TEST(grids == 0 && cases == 18, "fgt: %d grids for the Laplace and Matern kernels", grids);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  gaussian_only();
  bound_holds();
  bound_tight();
  halvings();
  by_itself();
  return kd_test_finish();
}
