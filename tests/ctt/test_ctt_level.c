/* test_ctt_level.c - level of CTT (paper 003, Alg. 3; Prop. 1 of Domingo-Enrich et al.: the
 * permutation test with the randomised threshold has size alpha exactly). X, Y ~ N(0, I_2),
 * m = n = 2^12, s = 16 bins, g in {0, 1}, alpha = 0.05, B = 100, T = 200 seeded replicates split
 * over the ranks (Gaussian kernel, ls = 1). Asserted bound per g: rejection rate
 * <= 0.05 + 3 SE with SE = sqrt(0.05 * 0.95 / T) = 0.0154 (the nominal-level SE, so the bound is
 * 0.0962 and does not shrink when a run happens to reject rarely). Also: each g rejects at least
 * once, and the mean null p-value is 0.505 within 4 SE. The same at unequal sizes m = 3000,
 * n = 1700, which s = 16 does not split evenly: the bins are those kd_ctt_check_sizes picks (the
 * count near s leaving the fewest rows unused), and the level holds as well. (Rank-count
 * independence of study tables is checked in test_ctt_basic.) */
#include <math.h>
#include <string.h>

#include "ctt_test_util.h"
#include "kd_test.h"

static void level(int64_t m, int64_t n) {
  kd_measure gx, gy;
  double gv[6];
  ctt_test_shifted_pair(0.0, gv, &gx, &gy);
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  const int64_t g_list[2] = {0, 1};
  kd_ctt_study_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.mx = &gx;
  sp.my = &gx;
  sp.m = m;
  sp.n = n;
  sp.T = 200;
  sp.seed = 2024;
  sp.kp = &kp;
  sp.s = 16;
  sp.B = 100;
  sp.delta = 0.5;
  sp.alpha = 0.05;
  sp.g_list = g_list;
  sp.n_g = 2;
  kd_ctt_study_out st;
  double t0 = MPI_Wtime();
  KD_TEST_OK(kd_ctt_study_run(MPI_COMM_WORLD, &sp, NULL, &st));
  const double se0 = sqrt(0.05 * 0.95 / (double)sp.T);
  for (int c = 0; c < st.n_conf; c++) {
    if (kd_test_rank() == 0)
      printf("level (m=%lld, n=%lld): g=%lld rejection %.4f +- %.4f (%lld/%lld), %.4f s/test\n",
             (long long)m, (long long)n, (long long)st.g[c], st.rate[c], st.se[c],
             (long long)st.rejections[c], (long long)st.T, st.mean_seconds[c]);
    KD_TEST(st.rate[c] <= 0.05 + 3 * se0, "g=%lld: rejection rate %.4f > 0.05 + 3 SE = %.4f",
            (long long)st.g[c], st.rate[c], 0.05 + 3 * se0);
    /* a test that never rejects would also pass the bound: it must reject sometimes */
    KD_TEST(st.rejections[c] >= 1, "g=%lld: never rejected in %lld null replicates",
            (long long)st.g[c], (long long)st.T);
    double pm = 0.0;
    for (int64_t t = 0; t < st.T; t++) pm += st.p_value[t * st.n_conf + c] / st.T;
    /* null p-values (B = 100) are near uniform on {1/101, ..., 1}: mean 0.505, sd 0.29/sqrt(T) */
    KD_TEST_NEAR(pm, 0.505, 4 * 0.29 / sqrt((double)st.T), "mean null p-value");
  }
  if (kd_test_rank() == 0) printf("level study: %.1f s\n", MPI_Wtime() - t0);
  kd_ctt_study_free(&st);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  level(4096, 4096);
  int64_t bx = 0, by = 0, br = 0;
  const kd_ctt_params cp = {.s = 16, .g = 0, .delta = 0.5};
  KD_TEST_OK(kd_ctt_check_sizes(&cp, 3000, 1700, &bx, &by, &br));
  KD_TEST((bx + by) * br < 4700 || bx + by != 16, "3000 + 1700 is not Alg. 3's even split");
  level(3000, 1700);
  return kd_test_finish();
}
