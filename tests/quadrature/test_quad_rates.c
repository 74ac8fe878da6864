/* test_quad_rates.c - Hayakawa, Oberhauser & Lyons §3.1 (Fig. 1d) and §3.2: N. + emp + opt has a
 * lower mean worst-case error than Monte Carlo (n iid points, weights 1/n) at every n >= 16 for
 * (a) the periodic Sobolev kernel r = 3 on [0,1)^3 (closed-form target) and (b) a Gaussian kernel
 * with the median-heuristic bandwidth on a seeded 5-D Gaussian mixture data set (empirical target,
 * M = 5000 rows). Seeds per n: 5 (the issue allows shrinking; keeps the test < 60 s at 4 ranks on
 * 2 cores). The measured ratios are printed and recorded in docs/quadrature.md. */
#include "quad_test_util.h"

#define NSEED 5

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm world = MPI_COMM_WORLD;
  const int ns[3] = {16, 32, 64};

  /* (a) Sobolev r = 3, d = 3, uniform on the torus */
  {
    kd_kernel *k = NULL;
    kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_SOBOLEV);
    kp.order = 3;
    KD_TEST_OK(kd_kernel_create(&kp, 3, &k));
    kd_measure mu = {0};
    mu.type = KD_MEASURE_TORUS;
    mu.d = 3;
    kd_target *t = NULL;
    KD_TEST_OK(kd_target_create_closed(world, k, &mu, &t));
    for (int a = 0; a < 3; a++) {
      char nbuf[32];
      snprintf(nbuf, sizeof nbuf, "n=%d", ns[a]);
      const char *kv[] = {nbuf, NULL};
      double e_opt = 0, e_rec = 0, e_mc = 0;
      for (int sd = 0; sd < NSEED; sd++) {
        kd_result r = KD_RESULT_INIT, mc = KD_RESULT_INIT;
        KD_TEST_OK(qt_run(world, "nystrom_recombination", k, t, 300 + sd, kv, &r));
        qt_check_rule("sobolev r=3 d=3", &r, ns[a], (int64_t)ns[a] * ns[a]);
        double m1 = NAN, m2 = NAN, m3 = NAN;
        kd_result_get_metric(&r, "mmd_recombination", &m1);
        kd_result_get_metric(&r, "mmd_opt", &m2);
        KD_TEST_OK(qt_run(world, "monte_carlo", k, t, 300 + sd, kv, &mc));
        KD_TEST_OK(kd_mmd(t, mc.points, mc.weights, mc.n, &m3, NULL));
        e_rec += m1 / NSEED;
        e_opt += m2 / NSEED;
        e_mc += m3 / NSEED;
        kd_result_free(&r);
        kd_result_free(&mc);
      }
      if (kd_test_rank() == 0)
        printf(
            "sobolev r=3 d=3 n=%2d: mean wce  MC %.4e  N.+emp %.4e  N.+emp+opt %.4e  "
            "MC/(N.+emp+opt) %.2f\n",
            ns[a], e_mc, e_rec, e_opt, e_mc / e_opt);
      KD_TEST(e_opt < e_mc, "sobolev r=3 d=3 n=%d: N.+emp+opt %.4e < MC %.4e", ns[a], e_opt, e_mc);
    }
    kd_target_destroy(&t);
    kd_kernel_destroy(&k);
  }

  /* (b) Gaussian kernel, median heuristic, empirical 5-D Gaussian mixture (3 components) */
  {
    const int d = 5, M = 5000;
    double means[15], sds[15], mw[3] = {0.5, 0.3, 0.2};
    for (int i = 0; i < 15; i++) {
      means[i] = 3.0 * kd_rng_normal(11, 0, (uint64_t)i);
      sds[i] = 0.5 + kd_rng_uniform(11, 1, (uint64_t)i);
    }
    kd_measure mix = {0};
    mix.type = KD_MEASURE_GAUSSIAN_MIXTURE;
    mix.d = d;
    mix.n_comp = 3;
    mix.means = means;
    mix.sds = sds;
    mix.mix_w = mw;
    kd_pointset *data = NULL;
    KD_TEST_OK(kd_pointset_generate(world, &mix, M, 12, &data));
    /* median heuristic on the first 1000 rows (all ranks compute the same value) */
    double *rows = malloc(sizeof(double) * M * d), *dist = malloc(sizeof(double) * 1000 * 999 / 2);
    KD_TEST_OK(kd_pointset_allgather(data, rows));
    int64_t c = 0;
    for (int i = 0; i < 1000; i++)
      for (int j = 0; j < i; j++) {
        double s = 0;
        for (int q = 0; q < d; q++)
          s += (rows[i * d + q] - rows[j * d + q]) * (rows[i * d + q] - rows[j * d + q]);
        dist[c++] = sqrt(s);
      }
    qsort(dist, (size_t)c, sizeof *dist, cmp_d);
    kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
    kp.ls = dist[c / 2];
    kd_kernel *k = NULL;
    KD_TEST_OK(kd_kernel_create(&kp, d, &k));
    kd_target *t = NULL;
    KD_TEST_OK(kd_target_create_empirical(k, data, 0, &t));
    for (int a = 0; a < 3; a++) {
      char nbuf[32];
      snprintf(nbuf, sizeof nbuf, "n=%d", ns[a]);
      const char *kv[] = {nbuf, NULL};
      double e_opt = 0, e_rec = 0, e_mc = 0;
      for (int sd = 0; sd < NSEED; sd++) {
        kd_result r = KD_RESULT_INIT;
        KD_TEST_OK(qt_run(world, "nystrom_recombination", k, t, 500 + sd, kv, &r));
        qt_check_rule("gaussian mixture", &r, ns[a], M);
        double m1 = NAN, m2 = NAN, m3 = NAN;
        kd_result_get_metric(&r, "mmd_recombination", &m1);
        kd_result_get_metric(&r, "mmd_opt", &m2);
        /* Monte Carlo: n rows drawn with replacement, weights 1/n */
        double *X = malloc(sizeof(double) * ns[a] * d), *w = malloc(sizeof(double) * ns[a]);
        for (int i = 0; i < ns[a]; i++) {
          int64_t g = (int64_t)(kd_rng_uniform(500 + sd, 9, (uint64_t)i) * M);
          memcpy(X + i * d, rows + g * d, sizeof(double) * d);
          w[i] = 1.0 / ns[a];
        }
        KD_TEST_OK(kd_mmd(t, X, w, ns[a], &m3, NULL));
        free(X);
        free(w);
        e_rec += m1 / NSEED;
        e_opt += m2 / NSEED;
        e_mc += m3 / NSEED;
        kd_result_free(&r);
      }
      if (kd_test_rank() == 0)
        printf(
            "gaussian 5-D mixture (ls %.4g) n=%2d: mean wce  MC %.4e  N.+emp %.4e  "
            "N.+emp+opt %.4e  MC/(N.+emp+opt) %.2f\n",
            kp.ls, ns[a], e_mc, e_rec, e_opt, e_mc / e_opt);
      KD_TEST(e_opt < e_mc, "gaussian mixture n=%d: N.+emp+opt %.4e < MC %.4e", ns[a], e_opt, e_mc);
    }
    free(rows);
    free(dist);
    kd_target_destroy(&t);
    kd_kernel_destroy(&k);
    kd_pointset_destroy(&data);
  }
  return kd_test_finish();
}
