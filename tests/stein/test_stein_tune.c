/* test_stein_tune.c - kernel.ls: auto and kernel.precondition: auto (src/kernel/stein_tune.c) at
 * 1, 2 and 4 ranks, on rows (x, s(x)) with the exact score of a Gaussian:
 *   1. N(0, 0.5^2 I_3), 4000 rows: no preconditioner (anisotropy ~1 < 4) and
 *      ls = sqrt(2 d^2 / mean |s|^2) ~ sqrt(2 d) 0.5 = 1.2247 to 3 %; the value is bitwise the one
 *      computed here from the same rows in the same order (so the same at any rank count);
 *   2. N(0, diag(1, 10^2)): the diagonal preconditioner diag(1 / mean s_j^2) is chosen (anisotropy
 *      ~100) and then ls^2 = 2 d exactly up to rounding (mean s^T M s = d); its entries are the
 *      reciprocals of the mean squared scores (kernel metric: kd_kernel_stein_precond_kind = 1);
 *   3. an explicit preconditioner M = diag(1, 100) with ls auto: ls^2 = 2 d^2 / mean s^T M s;
 *   4. all-zero scores: ls stays pending (the median heuristic takes over), no preconditioner. */
#include <math.h>
#include <stdlib.h>

#include "kd_test.h"

static double *rows_of(kd_gidx n, int dx, const double *sd, int zero_score) {
  double *R = malloc(sizeof(double) * (size_t)n * 2 * dx);
  for (kd_gidx i = 0; i < n; i++)
    for (int j = 0; j < dx; j++) {
      const double x = sd[j] * kd_rng_normal(17, 1, (uint64_t)(i * dx + j));
      R[i * 2 * dx + j] = x;
      R[i * 2 * dx + dx + j] = zero_score ? 0.0 : -x / (sd[j] * sd[j]);
    }
  return R;
}

static kd_kernel *tuned(const double *R, kd_gidx n, int dx, const double *M, int pre,
                        kd_stein_tune *t) {
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_STEIN);
  p.base = KD_KERNEL_IMQ;
  p.ls_median = 2;
  kd_kernel *k = NULL;
  kd_pointset *ps = NULL;
  KD_TEST_OK(kd_kernel_create(&p, 2 * dx, &k));
  KD_TEST_OK(kd_pointset_from_replicated(MPI_COMM_WORLD, n, 2 * dx, R, NULL, &ps));
  if (M) KD_TEST_OK(kd_kernel_set_stein_precond(k, M));
  KD_TEST_OK(kd_kernel_stein_autotune(k, ps, M, 1, pre, t));
  kd_pointset_destroy(&ps);
  return k;
}

/* mean s^T diag(m) s over every row, in the library's order (n <= 20000: every row) */
static double fisher(const double *R, kd_gidx n, int dx, const double *m) {
  double q = 0.0;
  for (kd_gidx i = 0; i < n; i++) {
    double v = 0.0;
    for (int a = 0; a < dx; a++) {
      const double s = R[i * 2 * dx + dx + a];
      v = m ? fma(s, m[a] * s, v) : fma(s, s, v);
    }
    q += v;
  }
  return q / (double)n;
}

static void isotropic(void) {
  const kd_gidx n = 4000;
  const double sd[3] = {0.5, 0.5, 0.5};
  double *R = rows_of(n, 3, sd, 0);
  kd_stein_tune t;
  kd_kernel *k = tuned(R, n, 3, NULL, 1, &t);
  const double want = sqrt(2.0 * 9.0 / fisher(R, n, 3, NULL));
  KD_TEST(t.precondition == 0 && kd_kernel_stein_precond_kind(k) == 0,
          "isotropic: no preconditioner (anisotropy %.3f)", t.anisotropy);
  KD_TEST(t.anisotropy < 1.2, "isotropic: anisotropy %.3f < 1.2", t.anisotropy);
  KD_TEST(t.ls == want && kd_kernel_length_scale(k) == want,
          "ls %.17g is bitwise the direct value %.17g at %d ranks", t.ls, want, kd_test_size());
  KD_TEST(fabs(t.ls / (sqrt(6.0) * 0.5) - 1) < 0.03, "ls %.4f within 3%% of sqrt(2 d) sd = %.4f",
          t.ls, sqrt(6.0) * 0.5);
  KD_TEST(!kd_kernel_median_pending(k), "ls auto is resolved");
  kd_kernel_destroy(&k);
  free(R);
}

static void anisotropic(void) {
  const kd_gidx n = 3000;
  const double sd[2] = {1.0, 10.0};
  double *R = rows_of(n, 2, sd, 0);
  kd_stein_tune t;
  kd_kernel *k = tuned(R, n, 2, NULL, 1, &t);
  KD_TEST(t.precondition == 1 && kd_kernel_stein_precond_kind(k) == 1,
          "anisotropic: the diagonal preconditioner (anisotropy %.1f)", t.anisotropy);
  KD_TEST(t.anisotropy > 50 && t.anisotropy < 200, "anisotropy %.1f ~ 100", t.anisotropy);
  KD_TEST(fabs(t.ls - 2.0) < 1e-12, "preconditioned ls %.17g = sqrt(2 d) = 2", t.ls);
  kd_kernel_destroy(&k);
  const double M[4] = {1.0, 0.0, 0.0, 100.0}, m[2] = {1.0, 100.0};
  k = tuned(R, n, 2, M, 0, &t);
  const double want = sqrt(8.0 / fisher(R, n, 2, m));
  KD_TEST(fabs(t.ls / want - 1) < 1e-14 && t.precondition == 0,
          "explicit M: ls %.17g = sqrt(2 d^2 / mean s^T M s) = %.17g", t.ls, want);
  KD_TEST(fabs(t.ls - 2.0) < 0.1, "explicit M = the covariance: ls %.4f ~ 2", t.ls);
  kd_kernel_destroy(&k);
  free(R);
}

static void zero_scores(void) {
  const double sd[2] = {1.0, 1.0};
  double *R = rows_of(100, 2, sd, 1);
  kd_stein_tune t;
  kd_kernel *k = tuned(R, 100, 2, NULL, 1, &t);
  KD_TEST(t.ls == 0 && kd_kernel_median_pending(k) && t.precondition == 0,
          "zero scores: ls stays pending for the median (ls %g), no preconditioner", t.ls);
  kd_kernel_destroy(&k);
  free(R);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  isotropic();
  anisotropic();
  zero_scores();
  return kd_test_finish();
}
