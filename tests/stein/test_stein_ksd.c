/* test_stein_ksd.c - the kernel Stein discrepancy through the exact MMD path (kd_mmd with the
 * Stein target, z = 0 and zz = 0): for an iid sample of N(0, I_2) with its score s(x) = -x and the
 * IMQ base (ls 1, beta 1/2)
 *   - KSD^2 = (1/n^2) sum_ij k_p(x_i, x_j) agrees with an independent double sum (the formula
 *     transcribed here with libm, summed in long double) to 1e-12;
 *   - E KSD^2 = E k_p(X, X) / n (the off-diagonal terms have mean 0), so KSD decays like n^{-1/2}:
 *     the least-squares slope of log sqrt(mean KSD^2 over 6 samples) on log n, n = 128 .. 4096, is
 *     -0.5 +- 0.1;
 *   - the KSD at 1, 2, 4 ranks is bitwise the one of an in-process MPI_COMM_SELF run. */
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"

/* rows (x, -x) of n iid N(0, I_2) draws, seed s */
static void sample(kd_lidx n, uint64_t s, double *R) {
  for (kd_lidx i = 0; i < n; i++)
    for (int j = 0; j < 2; j++) {
      R[i * 4 + j] = kd_rng_normal(s, 3, (uint64_t)(2 * i + j));
      R[i * 4 + 2 + j] = -R[i * 4 + j];
    }
}

/* k_p of the IMQ base (1 + |x-y|^2)^(-1/2), d = 2, written from the definition:
 * grad_x k = -(x-y) u^(-3/2), div_x div_y k = 2 u^(-3/2) - 3 |x-y|^2 u^(-5/2), u = 1 + |x-y|^2 */
static double kp_direct(const double *a, const double *b) {
  double r2 = 0, gx_sy = 0, gy_sx = 0, ss = 0;
  for (int j = 0; j < 2; j++) {
    double u = a[j] - b[j];
    r2 += u * u;
    gx_sy += -u * b[2 + j];
    gy_sx += u * a[2 + j];
    ss += a[2 + j] * b[2 + j];
  }
  double u = 1 + r2;
  return 2 * pow(u, -1.5) - 3 * r2 * pow(u, -2.5) + (gx_sy + gy_sx) * pow(u, -1.5) + ss / sqrt(u);
}

static double ksd(MPI_Comm comm, kd_kernel *k, const double *R, kd_lidx n, double *w) {
  kd_target *t = NULL;
  double v = NAN;
  for (kd_lidx i = 0; i < n; i++) w[i] = 1.0 / (double)n;
  KD_TEST_OK(kd_target_create_stein(comm, k, &t));
  KD_TEST_OK(kd_mmd(t, R, w, n, &v, NULL));
  kd_target_destroy(&t);
  return v;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_STEIN);
  p.base = KD_KERNEL_IMQ;
  p.ls = 1.0;
  p.beta = 0.5;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, 4, &k));
  const kd_lidx nmax = 4096;
  double *R = malloc(sizeof(double) * 4 * nmax), *w = malloc(sizeof(double) * nmax);

  /* independent double sum */
  const kd_lidx n0 = 500;
  sample(n0, 7, R);
  long double s = 0.0L;
  for (kd_lidx i = 0; i < n0; i++)
    for (kd_lidx j = 0; j < n0; j++) s += kp_direct(R + 4 * i, R + 4 * j);
  const double ref = sqrt((double)(s / ((long double)n0 * n0)));
  const double got = ksd(MPI_COMM_WORLD, k, R, n0, w);
  KD_TEST_REL(got, ref, 1e-12, "KSD via kd_mmd vs the direct double sum");
  const double self = ksd(MPI_COMM_SELF, k, R, n0, w);
  KD_TEST(memcmp(&got, &self, sizeof got) == 0, "KSD at %d ranks == MPI_COMM_SELF bitwise",
          kd_test_size());

  /* n^{-1/2} */
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int m = 0;
  for (kd_lidx n = 128; n <= nmax; n *= 2, m++) {
    double mean2 = 0.0;
    for (int r = 0; r < 6; r++) {
      sample(n, 100 + (uint64_t)r * 7919 + (uint64_t)n, R);
      double v = ksd(MPI_COMM_WORLD, k, R, n, w);
      mean2 += v * v / 6.0;
    }
    const double lx = log((double)n), ly = 0.5 * log(mean2);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
    if (kd_test_rank() == 0) printf("n = %5lld  sqrt(mean KSD^2) = %.5f\n", (long long)n, exp(ly));
  }
  const double slope = (m * sxy - sx * sy) / (m * sxx - sx * sx);
  if (kd_test_rank() == 0) printf("fitted slope %.4f\n", slope);
  KD_TEST_NEAR(slope, -0.5, 0.1, "slope of log KSD on log n for iid N(0, I_2)");
  free(R);
  free(w);
  kd_kernel_destroy(&k);
  return kd_test_finish();
}
