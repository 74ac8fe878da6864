/* test_thin_quality.c - issue 4's quality numbers on the seeded 2-D 8-component mixture
 * (n_in = 2^14, n_out = 128, Gaussian kernel sigma^2 = 2d): rkh, kh_compress (g=4) and gs_compress
 * at most 1/2 of the mean uniform-subsampling MMD over 10 seeds, kt_compress (g=4) at most 1/10,
 * with the defaults (Alg. B.1's threshold, pairing: local); the reference order (pairing: input)
 * and the other thresholds for comparison;
 * KH-Refine never increases the MMD (Remark 3, every refined run here and in test_thin_ranks);
 * coresets hold distinct rows; the reported MMD equals the test's own serial computation. Runs at
 * 1, 2, 4 ranks. */
#include "thin_test_util.h"

static double g_unif;

static void check_run(MPI_Comm c, const char *name, kd_pointset *ps, kd_kernel *k, kd_target *t,
                      const double *X, kd_lidx n, double xx, uint64_t seed, const char *const *kv,
                      double factor, double *mean, int reps) {
  kd_result r = KD_RESULT_INIT;
  *mean = 0;
  for (int s = 0; s < reps; s++) {
    double t0 = MPI_Wtime();
    if (!KD_TEST_OK(thin_test_run(c, name, ps, k, t, seed + s, kv, &r))) break;
    KD_TEST(r.n == 128, "%s: n_out %lld", name, (long long)r.n);
    KD_TEST(thin_test_distinct(r.indices, r.n, n), "%s: distinct input rows", name);
    double mine = thin_test_mmd_idx(k, X, n, 2, xx, r.indices, NULL, r.n);
    KD_TEST_REL(r.mmd, mine, 1e-6, "reported MMD = serial MMD");
    KD_TEST(r.mmd <= factor * g_unif, "%s seed %d: MMD %.3e <= %.2f x uniform %.3e", name, s, r.mmd,
            factor, g_unif);
    double before;
    if (kd_result_get_metric(&r, "mmd_before_refine", &before))
      KD_TEST(r.mmd <= before * (1 + 1e-12), "%s: refine never increases MMD (%.6e -> %.6e)", name,
              before, r.mmd);
    double b2 = 0, a2 = 0; /* Remark 3 against the refine's own target (P_in or Compress) */
    if (kd_result_get_metric(&r, "refine_mmd2_before_minus_self", &b2) &&
        kd_result_get_metric(&r, "refine_mmd2_after_minus_self", &a2))
      KD_TEST(a2 <= b2 + 1e-12 * fabs(b2), "%s: refine never increases MMD to its target", name);
    *mean += r.mmd / reps;
    if (kd_test_rank() == 0)
      printf("  %-12s seed %d  MMD %.4e  (%.3f x uniform)  %.2f s  %llu evals\n", name, s, r.mmd,
             r.mmd / g_unif, MPI_Wtime() - t0, (unsigned long long)r.kernel_evals);
  }
  kd_result_free(&r);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  const int d = 2;
  const kd_lidx n = 1 << 14;
  kd_measure mu = thin_test_mixture(d);
  kd_pointset *ps = NULL;
  KD_TEST_OK(kd_pointset_generate(c, &mu, n, 2024, &ps));
  double *X = malloc(sizeof(double) * n * d);
  KD_TEST_OK(kd_pointset_allgather(ps, X));
  kd_kernel *k = thin_test_gauss(d);
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_empirical(k, ps, 0, &t));
  double xx = thin_test_self(k, X, n, d);
  double zz = 0;
  int av = 0;
  KD_TEST_OK(kd_target_self(t, &zz, &av));
  KD_TEST_REL(zz, xx, 1e-10, "target zz");

  /* uniform baseline: the registry's `uniform` over 10 seeds */
  kd_result r = KD_RESULT_INIT;
  const char *const kv_u[] = {"n_out=128", NULL};
  g_unif = 0;
  for (int s = 0; s < 10; s++) {
    KD_TEST_OK(thin_test_run(c, "uniform", ps, k, t, 500 + s, kv_u, &r));
    double mmd = 0;
    KD_TEST_OK(kd_mmd(t, r.points, r.weights, r.n, &mmd, NULL));
    g_unif += mmd / 10;
  }
  kd_result_free(&r);
  if (kd_test_rank() == 0) printf("uniform mean MMD over 10 seeds: %.4e\n", g_unif);

  /* The defaults: Alg. B.1's simplified threshold a_i = b_i b_max (1/2 + log(2n/delta)) with
   * `pairing: local` (each halving pairs close points, halve.c / pairing.c); kt_compress's own:
   * threshold tight, refine_pool 4, refine_passes 10 (bench/results/defaults.md). 10 seeds each, as
   * the issue asks (the first 3 under ASan, KD_TEST_SANITIZED); every run and the mean are
   * asserted. Measured here (mean / worst of 10): rkh 0.21 / 0.27, kh_compress 0.23 / 0.25,
   * gs_compress 0.17 / 0.25, kt_compress 0.040 / 0.049 x uniform (0.050 / 0.056 with simplified,
   * refine_pool 3, refine_passes 3). */
  double mean;
  const int reps = KD_TEST_SANITIZED ? 3 : 10; /* under ASan: the first 3 seeds (thresholds kept) */
  /* rkh halves all 2^14 rows (1.8e8 kernel values, 11 s a run under ASan): there one seed, and
   * the comparison runs below skip it (their thresholds and pairing run in the Compress runs) */
  const int reps_rkh = KD_TEST_SANITIZED ? 1 : reps;
  const char *const kv_n[] = {"n_out=128", NULL};
  const char *const kv_g4[] = {"n_out=128", "g=4", NULL};
  const char *const kv_g1[] = {"n_out=128", "g=1", NULL};
  check_run(c, "rkh", ps, k, t, X, n, xx, 100, kv_n, 0.5, &mean, reps_rkh);
  KD_TEST(mean <= 0.5 * g_unif, "rkh mean %.3e <= uniform / 2", mean);
  check_run(c, "kh_compress", ps, k, t, X, n, xx, 200, kv_g4, 0.5, &mean, reps);
  KD_TEST(mean <= 0.5 * g_unif, "kh_compress mean %.3e <= uniform / 2", mean);
  check_run(c, "gs_compress", ps, k, t, X, n, xx, 21, kv_g1, 0.5, &mean, reps);
  KD_TEST(mean <= 0.5 * g_unif, "gs_compress mean %.3e <= uniform / 2", mean);
  check_run(c, "kt_compress", ps, k, t, X, n, xx, 31, kv_g4, 0.1, &mean, reps);
  KD_TEST(mean <= 0.1 * g_unif, "kt_compress mean %.3e <= uniform / 10", mean);
  /* pairing: input (consecutive rows, the reference implementation's order): Alg. B.1's threshold
   * is then close to a fair coin on the small halvings of the last rounds, measured 0.56-0.69 x
   * uniform for rkh / kh_compress; threshold: tight (a_i = b_i b_max / 2, a heuristic) gets
   * 0.29; threshold: adaptive (get_swap_params of Alg. B.2, sigma by eq. (70)) 0.64 / 0.69. */
  const char *const kv_ni[] = {"n_out=128", "pairing=input", NULL};
  const char *const kv_nti[] = {"n_out=128", "threshold=tight", "pairing=input", NULL};
  const char *const kv_g4i[] = {"n_out=128", "g=4", "pairing=input", NULL};
  const char *const kv_g4ii[] = {"n_out=128", "g=4", "pairing=input", "refine_target=input", NULL};
  const char *const kv_g4ti[] = {"n_out=128", "g=4", "threshold=tight", "pairing=input", NULL};
  const char *const kv_g4ri[] = {"n_out=128", "g=4", "refine=true", "pairing=input", NULL};
  if (!KD_TEST_SANITIZED) {
    check_run(c, "rkh", ps, k, t, X, n, xx, 1, kv_ni, 0.85, &mean, 1);
    check_run(c, "rkh", ps, k, t, X, n, xx, 1, kv_nti, 0.5, &mean, 1);
  }
  check_run(c, "kh_compress", ps, k, t, X, n, xx, 11, kv_g4i, 0.85, &mean, 2);
  check_run(c, "kh_compress", ps, k, t, X, n, xx, 11, kv_g4ti, 0.5, &mean, 2);
  check_run(c, "kh_compress", ps, k, t, X, n, xx, 14, kv_g4ri, 0.2, &mean, 2);
  check_run(c, "kt_compress", ps, k, t, X, n, xx, 31, kv_g4ii, 0.1, &mean, 3);
  KD_TEST(mean <= 0.1 * g_unif, "kt_compress (input pairing) mean %.3e <= uniform / 10", mean);
  const char *const kv_na[] = {"n_out=128", "threshold=adaptive", "pairing=input", NULL};
  const char *const kv_g4a[] = {"n_out=128", "g=4", "threshold=adaptive", NULL};
  if (!KD_TEST_SANITIZED) check_run(c, "rkh", ps, k, t, X, n, xx, 1, kv_na, 0.95, &mean, 1);
  check_run(c, "kt_compress", ps, k, t, X, n, xx, 31, kv_g4a, 0.1, &mean, 3);
  KD_TEST(mean <= 0.1 * g_unif, "kt_compress adaptive mean %.3e <= uniform / 10", mean);
  /* kh_refine (= rkh + refine, another 1.8e8 kernel evaluations) runs in test_thin_ranks */

  kd_target_destroy(&t);
  kd_pointset_destroy(&ps);
  kd_kernel_destroy(&k);
  kd_measure_free(&mu);
  free(X);
  return kd_test_finish();
}
