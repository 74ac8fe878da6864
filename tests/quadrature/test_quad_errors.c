/* test_quad_errors.c - bad input for nystrom_recombination / mercer_recombination: N < n+1,
 * l < n, a rank-deficient Nystrom Gram matrix W (documented: warn and use fewer test functions,
 * or error with rank_deficient: error), a NaN data row planted on the last rank only, and an
 * unsupported kernel/target pair for the Mercer basis. Every rank must return the same code. */
#include "quad_test_util.h"

/* the same error code on every rank */
static int agreed(kd_err e) {
  int lo = (int)e, hi = (int)e;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm world = MPI_COMM_WORLD;
  kd_kernel *k = NULL;
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_SOBOLEV);
  KD_TEST_OK(kd_kernel_create(&kp, 1, &k));
  kd_measure mu = {0};
  mu.type = KD_MEASURE_TORUS;
  mu.d = 1;
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_closed(world, k, &mu, &t));
  kd_result r = KD_RESULT_INIT;
  kd_err e;

  const char *kv1[] = {"n=8", "sample_size=5", NULL};
  e = qt_run(world, "nystrom_recombination", k, t, 1, kv1, &r);
  KD_TEST(e == KD_ERR_CONFIG && strstr(kd_err_message(), "sample_size") && agreed(e), "N < n+1: %s",
          kd_err_message());
  kd_err_clear();
  kd_result_free(&r);

  const char *kv2[] = {"n=8", "nystrom_points=4", NULL};
  e = qt_run(world, "nystrom_recombination", k, t, 1, kv2, &r);
  KD_TEST(e == KD_ERR_CONFIG && strstr(kd_err_message(), "nystrom_points") && agreed(e),
          "l < n: %s", kd_err_message());
  kd_err_clear();
  kd_result_free(&r);

  /* Mercer basis needs sobolev x torus */
  {
    kd_kernel *g = NULL;
    kd_kernel_params gp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
    KD_TEST_OK(kd_kernel_create(&gp, 1, &g));
    kd_measure gm = {0};
    double m0 = 0, s0 = 1;
    gm.type = KD_MEASURE_GAUSSIAN;
    gm.d = 1;
    gm.mean = &m0;
    gm.sd = &s0;
    kd_target *tg = NULL;
    KD_TEST_OK(kd_target_create_closed(world, g, &gm, &tg));
    const char *kv[] = {"n=8", NULL};
    e = qt_run(world, "mercer_recombination", g, tg, 1, kv, &r);
    KD_TEST(e == KD_ERR_UNSUPPORTED && agreed(e), "mercer on gaussian: %s", kd_err_message());
    kd_err_clear();
    kd_result_free(&r);
    kd_target_destroy(&tg);
    kd_kernel_destroy(&g);
  }

  /* empirical target of 400 rows on only 4 distinct points: W = k(Z,Z) has rank 4 < n-1 */
  {
    const int M = 400, d = 2;
    double *rows = malloc(sizeof(double) * M * d);
    for (int i = 0; i < M; i++) {
      rows[i * d] = (double)(i % 4);
      rows[i * d + 1] = (double)((i % 4) * (i % 4)) * 0.5;
    }
    kd_pointset *ps = NULL;
    KD_TEST_OK(kd_pointset_from_replicated(world, M, d, rows, NULL, &ps));
    kd_kernel *g = NULL;
    kd_kernel_params gp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
    gp.ls = 1.0;
    KD_TEST_OK(kd_kernel_create(&gp, d, &g));
    kd_target *te = NULL;
    KD_TEST_OK(kd_target_create_empirical(g, ps, 0, &te));
    const char *kv_err[] = {"n=16", "rank_deficient=error", NULL};
    e = qt_run(world, "nystrom_recombination", g, te, 3, kv_err, &r);
    KD_TEST(e == KD_ERR_NUMERIC && strstr(kd_err_message(), "eigenvalues") && agreed(e),
            "rank-deficient W, error mode: %s", kd_err_message());
    kd_err_clear();
    kd_result_free(&r);
    const char *kv_warn[] = {"n=16", "sample_size=400", NULL};
    e = qt_run(world, "nystrom_recombination", g, te, 3, kv_warn, &r);
    KD_TEST(e == KD_OK && agreed(e), "rank-deficient W, warn mode succeeds: %s", kd_err_message());
    double nt = -1;
    kd_result_get_metric(&r, "test_functions", &nt);
    KD_TEST(nt == 4, "4 usable eigenvalues -> 4 test functions (got %g)", nt);
    KD_TEST(r.n <= 5, "rule has <= s + 1 = 5 points (got %lld)", (long long)r.n);
    double mmd = -1;
    kd_result_get_metric(&r, "mmd_recombination", &mmd);
    KD_TEST(mmd <= 1e-5, "the 4-atom measure is reproduced (mmd %.3g)", mmd);
    kd_result_free(&r);

    /* NaN in a row owned by the last rank only */
    double *loc;
    kd_pointset_get_rows(ps, &loc);
    const kd_gidx off = kd_pointset_offset(ps);
    const int64_t bad = M - 3;
    if (bad >= off && bad < off + kd_pointset_n_local(ps)) loc[(bad - off) * d + 1] = NAN;
    kd_pointset_restore_rows(ps, &loc);
    e = qt_run(world, "nystrom_recombination", g, te, 3, kv_warn, &r);
    KD_TEST(e == KD_ERR_INPUT && strstr(kd_err_message(), "row 398") && agreed(e),
            "NaN row rejected on every rank: %s", kd_err_message());
    kd_err_clear();
    kd_result_free(&r);
    kd_target_destroy(&te);
    kd_kernel_destroy(&g);
    kd_pointset_destroy(&ps);
    free(rows);
  }
  kd_target_destroy(&t);
  kd_kernel_destroy(&k);
  return kd_test_finish();
}
