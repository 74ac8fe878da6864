/* test_kernel_screen_gemm.c - the screening mat-vec with its squared distances from sgemm
 * (src/kernel/kernel_screen_gemm.c), forced on at every d.
 *  - |y_screened - y_exact| <= bound for every row, y_exact = kd_kernel_matvec of the same row,
 *    over d = 1 .. 1024 and length scales 1e-3 .. 1e3 times sqrt(d) (spread 1), points offset by
 *    1000, duplicate and near-duplicate rows (1e-7 apart), weights in [-1, 1], +-1 and NULL,
 *    prefixes inside the first block of 512 columns, at its end, one past it and all, 40 and 130
 *    rows (past one sgemm product of 128 rows). Where the argument's error could pass 1e-3 (small
 *    length scales: points far apart in units of ls) the bound is infinite, never wrong.
 *  - At length scales >= sqrt(d) (the median heuristic's) every bound is finite and below
 *    (4e-6 + 2.5e-7 d) sum|w|, the header's E with norms up to 2 and a margin: a looser bound
 *    fails.
 *  - Where the rounding of the norms dominates (d = 1, pairs 0.5 apart at 15 scaled units from
 *    the mean, each row against one column) the error reaches at least 2% of the bound: a bound
 *    ten times looser fails there.
 *  - The pairs' form (kd_kernel_screen_pairs) is the rows' difference within its bound, and counts
 *    2 np nb evaluations; a NaN coordinate gives no form.
 *  - By default the sgemm form is taken from d = 16 on (docs/kernels.md), the direct one below.
 * Serial. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"
#include "kernel/kernel_impl.h"
#include "kernel/kernel_screen_impl.h"
#include "screen_test_util.h"

typedef struct {
  double worst;  /* max |diff| / bound over rows with a finite bound */
  double loose;  /* max bound / sum |w| over them */
  kd_lidx rows;  /* rows checked */
  kd_lidx inf;   /* of those, with an infinite bound */
  kd_lidx wrong; /* of those, outside their bound */
} gemm_stats;

static double *weights(kd_lidx nb, int wmode, uint64_t seed, double *wsum) {
  double *w = malloc(sizeof(double) * (size_t)(nb + 1));
  *wsum = 0.0;
  for (kd_lidx j = 0; j < nb; j++) {
    const double u = kd_rng_uniform(seed, 7, (uint64_t)j);
    w[j] = wmode == 1 ? (u < 0.5 ? -1.0 : 1.0) : 2.0 * u - 1.0;
    *wsum += wmode == 0 ? 1.0 : fabs(w[j]);
  }
  return w;
}

static void check_rows(kd_kernel *k, const kd_kernel_screen *S, const double *X, int d, kd_lidx i0,
                       kd_lidx na, kd_lidx nb, int wmode, uint64_t seed, gemm_stats *st) {
  double wsum;
  double *w = weights(nb, wmode, seed, &wsum), *ys = malloc(sizeof(double) * (size_t)na),
         *yb = malloc(sizeof(double) * (size_t)na), *yd = malloc(sizeof(double) * (size_t)na);
  const double *wp = wmode == 0 ? NULL : w;
  KD_TEST_OK(kd_kernel_screen_matvec(k, S, i0, na, nb, wp, ys, yb));
  KD_TEST_OK(kd_kernel_matvec(k, X + i0 * d, na, X, nb, wp, 0.0, yd));
  for (kd_lidx i = 0; i < na; i++) {
    const double diff = fabs(ys[i] - yd[i]);
    st->rows++;
    if (!(diff <= yb[i])) {
      if (st->wrong++ < 5)
        KD_TEST(0, "d %d row %lld nb %lld w %d: |%.17g - %.17g| = %.3g above the bound %.3g", d,
                (long long)(i0 + i), (long long)nb, wmode, ys[i], yd[i], diff, yb[i]);
      continue;
    }
    if (isinf(yb[i])) {
      st->inf++;
      continue;
    }
    if (yb[i] > 0 && diff / yb[i] > st->worst) st->worst = diff / yb[i];
    if (wsum > 0 && yb[i] / wsum > st->loose) st->loose = yb[i] / wsum;
  }
  free(w), free(ys), free(yb), free(yd);
}

/* n points N(1000, sd^2 I_d), with duplicates (row 3i+1 = row 3i for i < 20) and near-duplicates
 * (row 3i+2 = row 3i + 1e-7 noise) among the first 60 */
static double *points(kd_lidx n, int d, double sd, uint64_t seed) {
  double *X = malloc(sizeof(double) * (size_t)(n * d));
  for (kd_lidx i = 0; i < n * d; i++) X[i] = 1000.0 + sd * kd_rng_normal(seed, 3, (uint64_t)i);
  for (kd_lidx i = 0; i < 20; i++)
    for (int kk = 0; kk < d; kk++) {
      X[(3 * i + 1) * d + kk] = X[3 * i * d + kk];
      X[(3 * i + 2) * d + kk] =
          X[3 * i * d + kk] + 1e-7 * kd_rng_normal(seed, 4, (uint64_t)(i * d + kk));
    }
  return X;
}

static void grid(void) {
  const int dims[] = {1, 2, 7, 24, 64, 128, 384, 1024};
  const double facs[] = {1e-3, 1e-1, 1.0, 10.0, 1e3};
  gemm_stats all = {0, 0, 0, 0, 0};
  const kd_lidx n = 600;
  int fine = 1;
  for (int a = 0; a < 8; a++) {
    const int d = dims[a];
    double *X = points(n, d, 1.0, (uint64_t)(50 + a));
    for (int b = 0; b < 5; b++) {
      kd_kernel *k = kd_test_gaussian(d, facs[b] * sqrt((double)d));
      kd_kernel_set_screen_gemm_(k, 1);
      kd_kernel_screen *S = NULL;
      KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
      KD_TEST(S != NULL, "d %d ls %g sqrt(d): a screening form", d, facs[b]);
      gemm_stats st = {0, 0, 0, 0, 0};
      const kd_lidx nbs[] = {17, 512, 513, n};
      for (int c = 0; S && c < 4; c++)
        for (int wm = 0; wm < 3; wm++)
          check_rows(k, S, X, d, (kd_lidx)(7 * c), c == 3 ? 130 : 40, nbs[c], wm,
                     (uint64_t)(a + b + c), &st);
      if (facs[b] >= 1.0) { /* the median heuristic's scale and wider: finite and small */
        const double cap = 4e-6 + 2.5e-7 * d;
        if (st.inf > 0 || st.loose > cap) {
          fine = 0;
          KD_TEST(0, "d %d ls %g sqrt(d): %lld infinite bounds, bound up to %.3g sum|w| (cap %.3g)",
                  d, facs[b], (long long)st.inf, st.loose, cap);
        }
        all.loose = st.loose / cap > all.loose ? st.loose / cap : all.loose;
      }
      all.rows += st.rows;
      all.inf += st.inf;
      all.wrong += st.wrong;
      all.worst = st.worst > all.worst ? st.worst : all.worst;
      kd_kernel_screen_free(&S);
      kd_kernel_destroy(&k);
    }
    free(X);
  }
  printf(
      "grid: %lld rows, %lld outside the bound, %lld with an infinite bound; worst |diff|/bound "
      "%.4f; at ls >= sqrt(d) the bound reaches %.3f of its cap\n",
      (long long)all.rows, (long long)all.wrong, (long long)all.inf, all.worst, all.loose);
  KD_TEST(all.rows > 8000 && all.wrong == 0 && fine,
          "grid: %lld rows within their bounds, finite and capped at ls >= sqrt(d)",
          (long long)all.rows);
  KD_TEST(all.inf > 0, "grid: small length scales give infinite bounds (%lld rows)",
          (long long)all.inf);
}

/* d = 1: pairs (2i, 2i+1) 0.5 apart at -15 or +15 scaled units from the mean (ls 1: sigma =
 * 1/sqrt 2), each row against the other point of its pair alone */
static void norms_dominate(void) {
  const kd_lidx n = 2048;
  const double R = 15.0 * sqrt(2.0);
  double *X = malloc(sizeof(double) * (size_t)n);
  for (kd_lidx i = 0; i < n; i += 2) {
    X[i] = (i % 4 ? R : -R) + 0.3 * kd_rng_uniform(21, 0, (uint64_t)i);
    X[i + 1] = X[i] + 0.5 + 0.2 * kd_rng_uniform(21, 1, (uint64_t)i);
  }
  kd_kernel *k = kd_test_gaussian(1, 1.0);
  kd_kernel_set_screen_gemm_(k, 1);
  kd_kernel_screen *S = NULL;
  KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
  KD_TEST(S != NULL, "norms 15: a screening form");
  const double worst = screen_neighbour_worst(k, S, X, n, "norms 15");
  printf("norms 15: worst |diff|/bound %.4f\n", worst);
  KD_TEST(worst >= 0.02, "norms 15: worst |diff|/bound %.4f (test >= 0.02: the bound is tight)",
          worst);
  kd_kernel_screen_free(&S);
  kd_kernel_destroy(&k);
  free(X);
}

static void pairs_and_counts(void) {
  const int d = 64;
  const kd_lidx n = 700, np = 40, nb = 600;
  double *X = points(n, d, 1.0, 77), wsum;
  double *w = weights(nb, 2, 3, &wsum), y[40], yb[40], y2[80];
  kd_kernel *k = kd_test_gaussian(d, 8.0);
  kd_kernel_set_screen_gemm_(k, 1);
  kd_kernel_screen *S = NULL;
  KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
  KD_TEST(S != NULL, "d 64: a screening form");
  kd_kernel_reset_evals(k);
  KD_TEST_OK(kd_kernel_screen_pairs(k, S, 100, np, nb, w, y, yb));
  KD_TEST(kd_kernel_evals(k) == 2 * (uint64_t)np * (uint64_t)nb &&
              kd_kernel_screened_evals(k) == kd_kernel_evals(k),
          "pairs: %llu evaluations counted (expected %llu)", (unsigned long long)kd_kernel_evals(k),
          (unsigned long long)(2 * np * nb));
  KD_TEST_OK(kd_kernel_matvec(k, X + 100 * d, 2 * np, X, nb, w, 0.0, y2));
  int within = 1;
  for (kd_lidx p = 0; p < np; p++) within &= fabs(y[p] - (y2[2 * p] - y2[2 * p + 1])) <= yb[p];
  KD_TEST(within, "pairs: every difference within its bound");
  kd_kernel_screen_free(&S);
  X[5 * d + 3] = NAN;
  KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
  KD_TEST(S == NULL, "a NaN coordinate: no sgemm form");
  kd_kernel_destroy(&k);
  free(X), free(w);
}

static void default_form(void) {
  const kd_lidx n = 64;
  for (int d = 14; d <= 17; d++) {
    double *X = points(n, d, 1.0, 90);
    kd_kernel *k = kd_test_gaussian(d, sqrt((double)d));
    kd_kernel_screen *S = NULL;
    KD_TEST_OK(kd_kernel_screen_prepare(k, X, n, &S));
    KD_TEST(S != NULL && S->gemm == (d >= 16), "d %d: the %s form by default", d,
            S && S->gemm ? "sgemm" : "direct");
    kd_kernel_screen_free(&S);
    kd_kernel_destroy(&k);
    free(X);
  }
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  default_form();
  grid();
  norms_dominate();
  pairs_and_counts();
  return kd_test_finish();
}
