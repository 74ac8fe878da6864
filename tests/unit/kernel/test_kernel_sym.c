/* test_kernel_sym.c - the mat-vecs that evaluate each pair once (src/kernel/kernel_sym.c) against
 * kd_kernel_matvec, bit for bit:
 *  - kd_kernel_matvec_pair: ya = K(A, B) wb and yb = K(B, A) wa equal the two kd_kernel_matvec
 *    calls' bits (memcmp);
 *  - kd_kernel_matvec_sym: y = K(A, A) w equals kd_kernel_matvec(A, A)'s bits;
 * for d = 1, 2, 3, 17, 64, 100 and 200 (one, several and narrower panels), the Gaussian, Laplace,
 * Matern 3/2, IMQ and energy kernels, shapes 1 x 1 to 600 x 530 (partial panels, fewer than 4
 * columns, rows not a multiple of 4 or 8), weights NULL, positive and signed, and duplicate
 * rows; points spread beyond the normal-range box of some panels (both finishes run).
 *  - The evaluation counts: na nb for the pair form, about n^2 / 2 for the symmetric one.
 *  - The families without symmetric bits are refused (linear, Stein). Serial. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"
#include "kernel/kernel_impl.h"

static double *points(kd_lidx n, int d, uint64_t seed, double spread) {
  double *X = malloc(sizeof(double) * (size_t)(n * d));
  for (kd_lidx i = 0; i < n * d; i++)
    X[i] = spread * (i % 97 == 0 ? 30.0 : 1.0) * kd_rng_normal(seed, 5, (uint64_t)i);
  for (kd_lidx i = 9; i < n; i += 10) memcpy(X + i * d, X + (i - 1) * d, sizeof(double) * d);
  return X;
}

static double *weights(kd_lidx n, int kind, uint64_t seed) {
  if (kind == 0) return NULL;
  double *w = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (kd_lidx i = 0; i < n; i++) {
    const double u = kd_rng_uniform(seed, 9, (uint64_t)i);
    w[i] = kind == 1 ? u / (double)n : 2.0 * u - 1.0;
  }
  return w;
}

static kd_kernel *kernel_of(kd_kernel_type t, int d) {
  kd_kernel_params p = kd_kernel_params_default(t);
  p.ls = sqrt((double)d);
  kd_kernel *k = NULL;
  if (kd_kernel_create(&p, d, &k)) return NULL;
  return k;
}

static const kd_kernel_type types[] = {KD_KERNEL_GAUSSIAN, KD_KERNEL_LAPLACE, KD_KERNEL_MATERN32,
                                       KD_KERNEL_IMQ, KD_KERNEL_ENERGY};
static const int dims[] = {1, 2, 3, 17, 64, 100, 200};

static void pair_bits(void) {
  const kd_lidx shapes[][2] = {{1, 1}, {3, 2}, {5, 300}, {300, 3}, {64, 256}, {600, 530}};
  int cases = 0, wrong = 0;
  for (int a = 0; a < 7; a++)
    for (int t = 0; t < 5; t++) {
      kd_kernel *k = kernel_of(types[t], dims[a]);
      KD_TEST(k != NULL && kd_kernel_matvec_pair_ok(k), "kernel %d d %d: symmetric", t, dims[a]);
      for (int s = 0; s < 6; s++) {
        const kd_lidx na = shapes[s][0], nb = shapes[s][1];
        const int d = dims[a], wk = (a + t + s) % 3;
        double *X = points(na + nb, d, (uint64_t)(a * 31 + s), 1.0 + t);
        double *wa = weights(na, wk, 1), *wb = weights(nb, wk, 2);
        double *ya = calloc((size_t)na, 8), *yb = calloc((size_t)nb, 8);
        double *ra = calloc((size_t)na, 8), *rb = calloc((size_t)nb, 8);
        const double *A = X, *B = X + na * d;
        KD_TEST_OK(kd_kernel_matvec(k, A, na, B, nb, wb, 0.0, ra));
        KD_TEST_OK(kd_kernel_matvec(k, B, nb, A, na, wa, 0.0, rb));
        const uint64_t e0 = k->evals;
        KD_TEST_OK(kd_kernel_matvec_pair(k, A, na, B, nb, wa, wb, ya, yb));
        const int ok = memcmp(ya, ra, 8 * (size_t)na) == 0 && memcmp(yb, rb, 8 * (size_t)nb) == 0 &&
                       k->evals - e0 == (uint64_t)(na * nb);
        if (!ok && wrong++ < 5)
          KD_TEST(0, "pair: kernel %d d %d %lld x %lld weights %d: ya[0] %.17g vs %.17g", t, d,
                  (long long)na, (long long)nb, wk, ya[0], ra[0]);
        cases++;
        free(X);
        free(wa);
        free(wb);
        free(ya);
        free(yb);
        free(ra);
        free(rb);
      }
      kd_kernel_destroy(&k);
    }
  KD_TEST(wrong == 0 && cases == 210, "pair form: %d cases bit for bit, %d differ", cases, wrong);
}

static void sym_bits(void) {
  const kd_lidx sizes[] = {1, 2, 5, 16, 255, 256, 257, 700};
  int cases = 0, wrong = 0;
  for (int a = 0; a < 7; a++)
    for (int t = 0; t < 5; t++) {
      kd_kernel *k = kernel_of(types[t], dims[a]);
      for (int s = 0; s < 8; s++) {
        const kd_lidx n = sizes[s];
        const int d = dims[a], wk = (a + t + s) % 3;
        double *X = points(n, d, (uint64_t)(a * 7 + s), 1.0 + t), *w = weights(n, wk, 3);
        double *y = calloc((size_t)n, 8), *r = calloc((size_t)n, 8);
        KD_TEST_OK(kd_kernel_matvec(k, X, n, X, n, w, 0.0, r));
        const uint64_t e0 = k->evals;
        KD_TEST_OK(kd_kernel_matvec_sym(k, X, n, w, y));
        const uint64_t ev = k->evals - e0;
        const int ok = memcmp(y, r, 8 * (size_t)n) == 0 && 2 * ev >= (uint64_t)(n * n) &&
                       2 * ev <= (uint64_t)(n * n + n * kd_kernel_panel_(d));
        if (!ok && wrong++ < 5)
          KD_TEST(0, "sym: kernel %d d %d n %lld weights %d: y[0] %.17g vs %.17g, %llu evaluations",
                  t, d, (long long)n, wk, y[0], r[0], (unsigned long long)ev);
        cases++;
        free(X);
        free(w);
        free(y);
        free(r);
      }
      kd_kernel_destroy(&k);
    }
  KD_TEST(wrong == 0 && cases == 280, "symmetric form: %d cases bit for bit, %d differ", cases,
          wrong);
}

static void refused(void) {
  kd_kernel *k = kernel_of(KD_KERNEL_LINEAR, 4);
  double X[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[2], z[2];
  KD_TEST(k && !kd_kernel_matvec_pair_ok(k), "linear: no symmetric form");
  KD_TEST(kd_kernel_matvec_pair(k, X, 1, X + 4, 1, NULL, NULL, y, z) == KD_ERR_ARG &&
              kd_kernel_matvec_sym(k, X, 2, NULL, y) == KD_ERR_ARG,
          "linear: both forms refuse it");
  kd_kernel_destroy(&k);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  pair_bits();
  sym_bits();
  refused();
  return kd_test_finish();
}
