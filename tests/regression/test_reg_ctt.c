/* test_reg_ctt.c - Compress Then Test (paper 003, Alg. 3) and the exact permutation MMD test
 * against closed-form expectations, Gaussian kernel ls = 1 (k(a,b) = exp(-(a-b)^2/2)):
 *  - statistic on a tiny input: X = {0, 1}, Y = {2, 4} (d = 1). ctt_exact's statistic^2 is
 *    (2 + 2e^-1/2)/4 + (2 + 2e^-2)/4 - 2 (e^-2 + e^-8 + e^-1/2 + e^-9/2)/4; each of its B = 30
 *    permuted statistics is one of the three closed-form values of the 2|2 splits of {0,1,2,4},
 *    and the p-value is (1 + #{b : M_b >= M_obs}) / (B+1) of those values;
 *  - without compression (4^(g+1) > n_in: X = {0, .5, 1, 1.5}, Y = {1, 2, 3, 4}, s = 2, g = 1) the
 *    CTT statistic equals the full-sample MMD written as a double sum of exponentials;
 *  - size: X, Y ~ N(0, I_2), m = n = 32, T = 400 seeded replicates, B = 19, alpha = 0.1: the
 *    randomised threshold makes P(reject) = alpha exactly under exchangeability (Alg. 3), so the
 *    rejection rate of ctt (s = 8, g = 0: bins of 8 KT-Compressed to 4) and of ctt_exact lies
 *    within 3 SE = 3 sqrt(alpha (1-alpha) / T) = 0.045 of 0.1;
 *  - power: Y ~ N((2, 0), I_2), same sizes: both reject in >= 90% of T = 100 replicates (the
 *    population MMD^2, 2 (1/3)(1 - exp(-2^2/6)) = 0.324, is 7.8 times the mean of the
 *    full-sample statistic under the null, (1 - 1/3)(1/32 + 1/32) = 0.042).
 * Replicate t runs on rank t mod p over MPI_COMM_SELF and the counts are summed; the same
 * assertions run at 1, 2 and 4 ranks. */
#include <string.h>

#include "algo/twosample/ctt_impl.h"
#include "kd_algo_kv.h"
#include "kd_test.h"

static double k1(double a, double b) { return exp(-(a - b) * (a - b) / 2); }

/* MMD^2 of the split of Z[4] into {i, j} and the rest */
static double split4(const double *Z, int i, int j) {
  double wx[4];
  for (int a = 0; a < 4; a++) wx[a] = (a == i || a == j) ? 0.5 : -0.5;
  double v = 0;
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++) v += wx[a] * wx[b] * k1(Z[a], Z[b]);
  return v;
}

static kd_err run_ctt(MPI_Comm comm, const char *name, kd_kernel *k, kd_pointset *X, kd_pointset *Y,
                      uint64_t seed, const char *const *kv, kd_result *r) {
  kd_ctt_in ti = {.y = Y};
  kd_algo_kv_opts opt = {0};
  opt.task_in = &ti;
  return kd_algo_run_kv(comm, "ctt", name, kv, k, X, NULL, seed, &opt, r);
}

static void tiny(kd_kernel *k) {
  MPI_Comm c = MPI_COMM_WORLD;
  const double Z[4] = {0, 1, 2, 4};
  kd_pointset *X = NULL, *Y = NULL;
  KD_TEST_OK(kd_pointset_from_replicated(c, 2, 1, Z, NULL, &X));
  KD_TEST_OK(kd_pointset_from_replicated(c, 2, 1, Z + 2, NULL, &Y));
  const double e = exp(1.0);
  const double obs = (2 + 2 / sqrt(e)) / 4 + (2 + 2 / (e * e)) / 4 -
                     2 * (1 / (e * e) + pow(e, -8) + 1 / sqrt(e) + pow(e, -4.5)) / 4;
  KD_TEST_NEAR(split4(Z, 0, 1), obs, 1e-15, "closed form = double sum (self-check)");
  const double vals[3] = {obs, split4(Z, 0, 2), split4(Z, 0, 3)};
  kd_result r = KD_RESULT_INIT;
  const char *kv[] = {"B=30", "alpha=0.05", NULL};
  if (KD_TEST_OK(run_ctt(c, "ctt_exact", k, X, Y, 3, kv, &r))) {
    const kd_result_dataset *s2 = kd_result_find(&r, "/test/statistic_squared");
    const kd_result_dataset *ps = kd_result_find(&r, "/test/permutation_statistics");
    KD_TEST(s2 && fabs(s2->f64[0] - obs) <= 1e-15,
            "ctt_exact statistic^2 %.17g vs closed form %.17g", s2 ? s2->f64[0] : NAN, obs);
    int all_known = ps && ps->dims[0] == 30, ge = 0;
    for (int b = 0; all_known && b < 30; b++) {
      double m2 = ps->f64[b] * ps->f64[b];
      int hit = 0;
      for (int v = 0; v < 3; v++) hit |= fabs(m2 - vals[v]) <= 1e-14;
      all_known &= hit;
      ge += m2 >= obs - 1e-14;
    }
    KD_TEST(all_known, "every permuted statistic is the MMD of one 2|2 split");
    double pv = NAN;
    kd_result_get_metric(&r, "p_value", &pv);
    KD_TEST_NEAR(pv, (1.0 + ge) / 31.0, 1e-15, "p-value (1 + #{M_b >= M_obs}) / (B+1)");
  }
  kd_result_free(&r);
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);

  /* no compression: the CTT statistic is the full-sample MMD */
  const double X4[4] = {0, .5, 1, 1.5}, Y4[4] = {1, 2, 3, 4};
  KD_TEST_OK(kd_pointset_from_replicated(c, 4, 1, X4, NULL, &X));
  KD_TEST_OK(kd_pointset_from_replicated(c, 4, 1, Y4, NULL, &Y));
  double full = 0;
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++)
      full += (k1(X4[a], X4[b]) + k1(Y4[a], Y4[b]) - 2 * k1(X4[a], Y4[b])) / 16;
  const char *kvc[] = {"s=2", "g=1", "B=10", NULL};
  if (KD_TEST_OK(run_ctt(c, "ctt", k, X, Y, 4, kvc, &r))) {
    const kd_result_dataset *s2 = kd_result_find(&r, "/test/statistic_squared");
    KD_TEST(s2 && fabs(s2->f64[0] - full) <= 1e-15 * 16,
            "ctt uncompressed statistic^2 %.17g vs %.17g", s2 ? s2->f64[0] : NAN, full);
    KD_TEST(r.n == 8, "uncompressed: all 8 rows are the coresets (%lld)", (long long)r.n);
  }
  kd_result_free(&r);
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
}

/* rejection counts of {ctt, ctt_exact} over T replicates with Y shifted by `shift` */
static void rates(kd_kernel *k, double shift, int T, uint64_t seed0, double *rate) {
  const int rank = kd_test_rank(), p = kd_test_size();
  double mean[2] = {0, 0}, meany[2] = {shift, 0}, sd[2] = {1, 1};
  kd_measure mx, my;
  memset(&mx, 0, sizeof mx);
  mx.type = KD_MEASURE_GAUSSIAN;
  mx.d = 2;
  mx.mean = mean;
  mx.sd = sd;
  my = mx;
  my.mean = meany;
  long rej[2] = {0, 0};
  const char *kvc[] = {"s=8", "g=0", "B=19", "alpha=0.1", NULL};
  const char *kve[] = {"B=19", "alpha=0.1", NULL};
  for (int t = rank; t < T; t += p) {
    kd_pointset *X = NULL, *Y = NULL;
    KD_TEST_OK(kd_pointset_generate(MPI_COMM_SELF, &mx, 32, seed0 + 2 * (uint64_t)t, &X));
    KD_TEST_OK(kd_pointset_generate(MPI_COMM_SELF, &my, 32, seed0 + 2 * (uint64_t)t + 1, &Y));
    for (int a = 0; a < 2; a++) {
      kd_result r = KD_RESULT_INIT;
      double rj = 0;
      if (KD_TEST_OK(run_ctt(MPI_COMM_SELF, a ? "ctt_exact" : "ctt", k, X, Y, 1000 + (uint64_t)t,
                             a ? kve : kvc, &r)) &&
          kd_result_get_metric(&r, "reject", &rj))
        rej[a] += rj != 0;
      kd_result_free(&r);
    }
    kd_pointset_destroy(&X);
    kd_pointset_destroy(&Y);
  }
  MPI_Allreduce(MPI_IN_PLACE, rej, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  rate[0] = (double)rej[0] / T;
  rate[1] = (double)rej[1] / T;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kd_kernel *k1d = NULL, *k2d = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, 1, &k1d));
  KD_TEST_OK(kd_kernel_create(&kp, 2, &k2d));
  tiny(k1d);
  double null_rate[2], power[2];
  const int T = 400, Tp = 100;
  rates(k2d, 0.0, T, 11, null_rate);
  rates(k2d, 2.0, Tp, 5011, power);
  const double se = sqrt(0.1 * 0.9 / T);
  KD_TEST(fabs(null_rate[0] - 0.1) <= 3 * se, "ctt size %.4f vs alpha 0.1 (3 SE = %.4f)",
          null_rate[0], 3 * se);
  KD_TEST(fabs(null_rate[1] - 0.1) <= 3 * se, "ctt_exact size %.4f vs alpha 0.1 (3 SE = %.4f)",
          null_rate[1], 3 * se);
  KD_TEST(power[0] >= 0.9, "ctt power %.3f >= 0.9 under the shift 2", power[0]);
  KD_TEST(power[1] >= 0.9, "ctt_exact power %.3f >= 0.9 under the shift 2", power[1]);
  if (kd_test_rank() == 0)
    printf("size: ctt %.4f ctt_exact %.4f (alpha 0.1, T %d); power at shift 2: %.3f %.3f\n",
           null_rate[0], null_rate[1], T, power[0], power[1]);
  kd_kernel_destroy(&k1d);
  kd_kernel_destroy(&k2d);
  return kd_test_finish();
}
