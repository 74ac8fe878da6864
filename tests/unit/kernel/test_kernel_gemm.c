/* test_kernel_gemm.c - the Gaussian mat-vec through dgemm (src/kernel/kernel_gemm.c) against
 * kd_kernel_matvec's direct loops.
 *  - Every row within the stated bound: |y_gemm - y_direct| <= sum_j |w_j| k_j e_j + 2^-50 sum_j
 *    |w_j| k_j, e_j = (2 d + 8) 2^-53 (|a - m|^2 + |b_j - m|^2) / (2 ls^2) + 4 2^-53, m the mean
 *    of A's rows (the header's 2 gamma_d with a margin for the norms' and the exponential's
 *    roundings, and the sums' order), over d = 96 .. 1024, length scales 1e-3 .. 1e3 sqrt(d),
 *    points offset by 1000 (the centring), duplicate rows, weights +-1, in [-1, 1] and NULL,
 *    shapes 1 x 1 to 260 x 530 (two products of 256 x 512 each way).
 *  - The bound is not vacuous: the largest error reaches 3% of it or more (at ls = 0.3 sqrt(d)
 *    the arguments are large), so a bound ten times looser fails.
 *  - The path is taken (values differ from the direct loops' bits somewhere) at d >= 96, and not
 *    below d = 96 or for another kernel: there the results are kd_kernel_matvec's bits.
 *  - The same call twice gives the same bits. Serial. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"
#include "kernel/kernel_impl.h"

static double *points(kd_lidx n, int d, uint64_t seed) {
  double *X = malloc(sizeof(double) * (size_t)(n * d));
  for (kd_lidx i = 0; i < n * d; i++) X[i] = 1000.0 + kd_rng_normal(seed, 5, (uint64_t)i);
  for (kd_lidx i = 9; i < n; i += 10) memcpy(X + i * d, X + (i - 1) * d, sizeof(double) * d);
  return X;
}

/* the bound of row a (see the header) */
static double row_bound(const kd_kernel *k, int d, const double *A, kd_lidx na, const double *a,
                        const double *B, kd_lidx nb, const double *w) {
  double *m = calloc((size_t)d, sizeof(double)), qa = 0.0, e = 0.0, s = 0.0;
  for (kd_lidx i = 0; i < na; i++)
    for (int kk = 0; kk < d; kk++) m[kk] += A[i * d + kk] / (double)na;
  for (int kk = 0; kk < d; kk++) qa += (a[kk] - m[kk]) * (a[kk] - m[kk]);
  const double c0 = 1.0 / (2.0 * kd_kernel_get_params(k)->ls * kd_kernel_get_params(k)->ls);
  for (kd_lidx j = 0; j < nb; j++) {
    double qb = 0.0, dist = 0.0;
    for (int kk = 0; kk < d; kk++) {
      qb += (B[j * d + kk] - m[kk]) * (B[j * d + kk] - m[kk]);
      dist += (a[kk] - B[j * d + kk]) * (a[kk] - B[j * d + kk]);
    }
    const double kv = exp(-c0 * dist) * 1.01, wk = fabs(w ? w[j] : 1.0) * kv;
    e += wk * ((2.0 * d + 8.0) * 0x1p-53 * (qa + qb) * c0 + 4.0 * 0x1p-53);
    s += wk;
  }
  free(m);
  return e + 0x1p-50 * s;
}

static void bound_holds(void) {
  const int dims[] = {96, 128, 256, 784, 1024};
  const double facs[] = {1e-3, 0.3, 1.0, 10.0, 1e3};
  const kd_lidx shapes[][2] = {{1, 1}, {7, 300}, {260, 530}};
  int wrong = 0, differ = 0, cases = 0;
  double worst = 0.0;
  for (int a = 0; a < 5; a++) {
    const int d = dims[a];
    double *X = points(1400, d, (uint64_t)a);
    for (int b = 0; b < 5; b++) {
      kd_kernel *k = kd_test_gaussian(d, facs[b] * sqrt((double)d));
      for (int c = 0; c < 3; c++)
        for (int wm = 0; wm < 3; wm++) {
          const kd_lidx na = shapes[c][0], nb = shapes[c][1];
          const double *A = X, *B = X + 300 * d;
          double *w = malloc(sizeof(double) * (size_t)nb), *y1 = malloc(sizeof(double) * na),
                 *y2 = malloc(sizeof(double) * na), *y3 = malloc(sizeof(double) * na);
          for (kd_lidx j = 0; j < nb; j++) {
            const double u = kd_rng_uniform((uint64_t)(a + b), 8, (uint64_t)j);
            w[j] = wm == 1 ? (u < 0.5 ? -1.0 : 1.0) : 2.0 * u - 1.0;
          }
          const double *wp = wm == 0 ? NULL : w;
          KD_TEST_OK(kd_kernel_matvec(k, A, na, B, nb, wp, 0.0, y1));
          KD_TEST_OK(kd_kernel_matvec_gemm(k, A, na, B, nb, wp, y2));
          KD_TEST_OK(kd_kernel_matvec_gemm(k, A, na, B, nb, wp, y3));
          differ += memcmp(y1, y2, sizeof(double) * (size_t)na) != 0;
          KD_TEST(memcmp(y2, y3, sizeof(double) * (size_t)na) == 0, "d %d: the same call twice", d);
          for (kd_lidx i = 0; i < na; i++) {
            const double bnd = row_bound(k, d, A, na, A + i * d, B, nb, wp);
            const double err = fabs(y2[i] - y1[i]);
            cases++;
            if (!(err <= bnd) && wrong++ < 5)
              KD_TEST(0, "d %d ls %g sqrt(d) %lld x %lld row %lld: |%.17g - %.17g| = %.3g > %.3g",
                      d, facs[b], (long long)na, (long long)nb, (long long)i, y2[i], y1[i], err,
                      bnd);
            if (bnd > 0 && err / bnd > worst) worst = err / bnd;
          }
          free(w), free(y1), free(y2), free(y3);
        }
      kd_kernel_destroy(&k);
    }
    free(X);
  }
  printf(
      "%d rows: %d outside the bound, worst |diff|/bound %.4f; %d of 225 calls not the direct "
      "bits\n",
      cases, wrong, worst, differ);
  KD_TEST(cases > 10000 && wrong == 0, "%d rows within the bound", cases);
  KD_TEST(worst >= 0.03, "worst |diff|/bound %.2e (test >= 0.03: the bound is not vacuous)", worst);
  KD_TEST(differ > 50, "the dgemm path is taken at d >= 96 (%d calls differ from the direct bits)",
          differ);
}

static void direct_elsewhere(void) {
  const kd_lidx na = 40, nb = 700;
  int same = 1;
  const int below[] = {2, 95}; /* below the dgemm path */
  for (int di = 0; di < 2; di++) {
    const int dd = below[di];
    double *X = points(na + nb, dd, 9), y1[40], y2[40];
    kd_kernel *k = kd_test_gaussian(dd, sqrt((double)dd));
    KD_TEST_OK(kd_kernel_matvec(k, X, na, X + na * dd, nb, NULL, 0.0, y1));
    KD_TEST_OK(kd_kernel_matvec_gemm(k, X, na, X + na * dd, nb, NULL, y2));
    same &= memcmp(y1, y2, sizeof y1) == 0;
    kd_kernel_destroy(&k);
    free(X);
  }
  double *X = points(na + nb, 64, 10), y1[40], y2[40];
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_MATERN52);
  p.ls = 8.0;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, 64, &k));
  KD_TEST_OK(kd_kernel_matvec(k, X, na, X + na * 64, nb, NULL, 0.0, y1));
  KD_TEST_OK(kd_kernel_matvec_gemm(k, X, na, X + na * 64, nb, NULL, y2));
  same &= memcmp(y1, y2, sizeof y1) == 0;
  kd_kernel_destroy(&k);
  free(X);
  KD_TEST(same, "d = 2, d = 95 and the Matern kernel at d = 64: kd_kernel_matvec's bits");
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  bound_holds();
  direct_elsewhere();
  return kd_test_finish();
}
