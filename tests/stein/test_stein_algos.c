/* test_stein_algos.c - the algorithms with the Stein kernel (rows (x, s(x)), IMQ base, ls 1) and
 * the Stein target, at 1, 2 and 4 ranks:
 *   1. every registered `thin` and `herd` algorithm runs unchanged on 256 draws of N(0, I_2) with
 *      s(x) = -x: its reported MMD is the KSD of its output by a direct double sum of k_p (to
 *      1e-10), and its output equals the in-process MPI_COMM_SELF run (thin: indices, points and
 *      weights bit for bit; herd: the same atoms, weights to 1e-12);
 *   2. stein_thin picks exactly the rows of a direct transcription of Riabiz et al.'s greedy rule
 *      (argmin_i k_p(x_i, x_i)/2 + sum_{j chosen} k_p(x_j, x_i), lowest index on ties), with
 *      replacement, on 60 rows in d = 1;
 *   3. debiasing (Li et al. 2024): 4096 draws of the shifted N((0.5, 0.5), I_2) with the scores of
 *      the target N(0, I_2). The MMD to N(0, I_2) (Gaussian kernel ls 1, closed form) of
 *      skt's 64 points is at least 5x below uniform thinning of the same sample and below
 *      KT-Compress (same Stein kernel) of the biased sample; rpcholesky (Stein Cholesky) and sr
 *      (Stein recombination, at most 64 weighted points) are at least 5x below uniform too. */
#include <stdlib.h>
#include <string.h>

#include "kd_algo_kv.h"
#include "kd_test.h"

static double kp_imq(const double *a, const double *b, int dx) {
  double r2 = 0, gx_sy = 0, gy_sx = 0, ss = 0;
  for (int j = 0; j < dx; j++) {
    double u = a[j] - b[j];
    r2 += u * u;
    gx_sy += -u * b[dx + j];
    gy_sx += u * a[dx + j];
    ss += a[dx + j] * b[dx + j];
  }
  double u = 1 + r2;
  return dx * pow(u, -1.5) - 3 * r2 * pow(u, -2.5) + (gx_sy + gy_sx) * pow(u, -1.5) + ss / sqrt(u);
}

/* n rows (x, -x), x ~ N(shift, I_dx) (score of N(0, I)) */
static double *chain_rows(kd_gidx n, int dx, double shift, uint64_t seed) {
  double *R = malloc(sizeof(double) * (size_t)n * 2 * dx);
  for (kd_gidx i = 0; i < n; i++)
    for (int j = 0; j < dx; j++) {
      double x = shift + kd_rng_normal(seed, 1, (uint64_t)(i * dx + j));
      R[i * 2 * dx + j] = x;
      R[i * 2 * dx + dx + j] = -x;
    }
  return R;
}

static kd_kernel *stein_kernel(int dx) {
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_STEIN);
  p.base = KD_KERNEL_IMQ;
  p.ls = 1.0;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, 2 * dx, &k));
  return k;
}

static double direct_ksd(const kd_result *r, int dx) {
  long double s = 0;
  for (int64_t i = 0; i < r->n; i++)
    for (int64_t j = 0; j < r->n; j++)
      s += r->weights[i] * r->weights[j] *
           kp_imq(r->points + i * 2 * dx, r->points + j * 2 * dx, dx);
  return sqrt((double)(s > 0 ? s : 0));
}

static void run_all(const double *R, kd_gidx n) {
  const int rank = kd_test_rank();
  kd_kernel *k = stein_kernel(2);
  kd_pointset *pw = NULL, *ps = NULL;
  kd_target *tw = NULL, *ts = NULL;
  KD_TEST_OK(kd_pointset_from_replicated(MPI_COMM_WORLD, n, 4, R, NULL, &pw));
  KD_TEST_OK(kd_target_create_stein(MPI_COMM_WORLD, k, &tw));
  if (rank == 0) {
    KD_TEST_OK(kd_pointset_from_replicated(MPI_COMM_SELF, n, 4, R, NULL, &ps));
    KD_TEST_OK(kd_target_create_stein(MPI_COMM_SELF, k, &ts));
  }
  const char *kv[] = {"n_out=16", "g=1", "max_iter=40", NULL};
  for (int i = 0; kd_algo_at(i); i++) {
    const kd_algo_desc *a = kd_algo_at(i);
    const int thin = !strcmp(a->task, "thin");
    if (!thin && strcmp(a->task, "herd")) continue;
    const char *use[4];
    int u = 0;
    for (int q = 0; kv[q]; q++)
      for (int j = 0; j < a->n_params; j++)
        if (!strncmp(a->params[j].key, kv[q], strlen(a->params[j].key)) &&
            kv[q][strlen(a->params[j].key)] == '=')
          use[u++] = kv[q];
    use[u] = NULL;
    kd_algo_kv_opts opt = {0};
    opt.fill_mmd = 1;
    kd_result rw = KD_RESULT_INIT, rs = KD_RESULT_INIT;
    if (!KD_TEST_OK(kd_algo_run_kv(MPI_COMM_WORLD, a->task, a->name, use, k, pw, tw, 5, &opt, &rw)))
      continue;
    KD_TEST(rw.n >= 1 && rw.d == 4, "%s: %lld rows of width %d", a->name, (long long)rw.n, rw.d);
    KD_TEST_REL(rw.mmd, direct_ksd(&rw, 2), 1e-10, a->name);
    if (rank == 0 &&
        KD_TEST_OK(kd_algo_run_kv(MPI_COMM_SELF, a->task, a->name, use, k, ps, ts, 5, &opt, &rs))) {
      int same = rw.n == rs.n && !memcmp(rw.indices, rs.indices, sizeof(int64_t) * rw.n);
      double dw = 0;
      for (int64_t j = 0; same && j < rw.n; j++) dw = fmax(dw, fabs(rw.weights[j] - rs.weights[j]));
      if (same && thin)
        same = !memcmp(rw.points, rs.points, sizeof(double) * rw.n * 4) && dw == 0.0;
      KD_TEST(same && dw <= 1e-12, "%s: %d ranks == MPI_COMM_SELF (weights within %.2g)", a->name,
              kd_test_size(), dw);
      if (kd_test_size() == 1)
        printf("%-16s KSD %.4e (%lld points)\n", a->name, rw.mmd, (long long)rw.n);
    }
    kd_result_free(&rw);
    kd_result_free(&rs);
  }
  kd_target_destroy(&tw);
  kd_target_destroy(&ts);
  kd_pointset_destroy(&pw);
  kd_pointset_destroy(&ps);
  kd_kernel_destroy(&k);
}

static void greedy_transcription(void) {
  const kd_gidx n = 60;
  const int m = 12;
  double *R = chain_rows(n, 1, 0.3, 77);
  kd_kernel *k = stein_kernel(1);
  kd_pointset *pw = NULL;
  kd_target *tw = NULL;
  kd_result r = KD_RESULT_INIT;
  KD_TEST_OK(kd_pointset_from_replicated(MPI_COMM_WORLD, n, 2, R, NULL, &pw));
  KD_TEST_OK(kd_target_create_stein(MPI_COMM_WORLD, k, &tw));
  const char *kv[] = {"n_out=12", "replacement=true", NULL};
  KD_TEST_OK(kd_algo_run_kv(MPI_COMM_WORLD, "thin", "stein_thin", kv, k, pw, tw, 1, NULL, &r));
  int pick[12], same = r.n == m, repeat = 0;
  for (int t = 0; t < m; t++) {
    double best = INFINITY;
    for (int i = 0; i < n; i++) {
      double f = 0.5 * kp_imq(R + 2 * i, R + 2 * i, 1);
      for (int j = 0; j < t; j++) f += kp_imq(R + 2 * pick[j], R + 2 * i, 1);
      if (f < best) best = f, pick[t] = i;
    }
    for (int j = 0; j < t; j++) repeat |= pick[j] == pick[t];
    same &= same && r.indices[t] == pick[t];
  }
  KD_TEST(same, "stein_thin == the direct greedy transcription (12 of 60 rows)");
  if (kd_test_rank() == 0) printf("greedy picks repeat a row: %d\n", repeat);
  kd_result_free(&r);
  kd_target_destroy(&tw);
  kd_pointset_destroy(&pw);
  kd_kernel_destroy(&k);
  free(R);
}

/* MMD to N(0, I_2) with the Gaussian kernel (ls 1) of the x part of a result */
static double mmd_to_normal(const kd_result *r) {
  kd_kernel_params gp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  gp.ls = 1.0;
  kd_kernel *g = NULL;
  kd_target *t = NULL;
  double mean[2] = {0, 0}, sd[2] = {1, 1}, v = NAN;
  kd_measure mu = {0};
  mu.type = KD_MEASURE_GAUSSIAN;
  mu.d = 2;
  mu.mean = mean;
  mu.sd = sd;
  double *X = malloc(sizeof(double) * r->n * 2);
  for (int64_t i = 0; i < r->n; i++)
    X[2 * i] = r->points[4 * i], X[2 * i + 1] = r->points[4 * i + 1];
  KD_TEST_OK(kd_kernel_create(&gp, 2, &g));
  KD_TEST_OK(kd_target_create_closed(MPI_COMM_WORLD, g, &mu, &t));
  KD_TEST_OK(kd_mmd(t, X, r->weights, r->n, &v, NULL));
  kd_target_destroy(&t);
  kd_kernel_destroy(&g);
  free(X);
  return v;
}

static void debias(void) {
  const kd_gidx n = 4096;
  double *R = chain_rows(n, 2, 0.5, 2024);
  kd_kernel *k = stein_kernel(2);
  kd_pointset *pw = NULL;
  kd_target *tw = NULL;
  KD_TEST_OK(kd_pointset_from_replicated(MPI_COMM_WORLD, n, 4, R, NULL, &pw));
  KD_TEST_OK(kd_target_create_stein(MPI_COMM_WORLD, k, &tw));
  const char *names[9] = {"skt",  "uniform", "kt_compress", "rpcholesky", "sr",
                          "lskt", "lsr",     "sc",          "lsc"};
  const char *kv[] = {"n_out=64", NULL};
  double mmd[9];
  for (int a = 0; a < 9; a++) {
    kd_result r = KD_RESULT_INIT;
    KD_TEST_OK(kd_algo_run_kv(MPI_COMM_WORLD, "thin", names[a], kv, k, pw, tw, 3, NULL, &r));
    mmd[a] = mmd_to_normal(&r);
    if (kd_test_rank() == 0) printf("%-12s MMD to N(0, I) %.4e\n", names[a], mmd[a]);
    /* sr/lsr name the KSD of their recombination weights so, not as uniform weights */
    double mw = NAN;
    const int recomb = !strcmp(names[a], "sr") || !strcmp(names[a], "lsr");
    if (!strcmp(names[a], "rpcholesky") || !strcmp(names[a], "sr") || !strcmp(names[a], "lsr"))
      KD_TEST(kd_result_get_metric(&r, "mmd_recombination_weights", &mw) == recomb &&
                  kd_result_get_metric(&r, "mmd_uniform_weights", &mw) == !recomb &&
                  kd_result_get_metric(&r, "mmd_convex_weights", &mw) && mw == r.mmd,
              "%s: metrics mmd_%s_weights and mmd_convex_weights (= mmd)", names[a],
              recomb ? "recombination" : "uniform");
    kd_result_free(&r);
  }
  KD_TEST(5 * mmd[0] <= mmd[1], "skt %.3e at least 5x below uniform %.3e", mmd[0], mmd[1]);
  KD_TEST(mmd[0] < mmd[2], "skt %.3e below KT-Compress of the biased sample %.3e", mmd[0], mmd[2]);
  KD_TEST(5 * mmd[3] <= mmd[1], "rpcholesky %.3e at least 5x below uniform %.3e", mmd[3], mmd[1]);
  KD_TEST(5 * mmd[4] <= mmd[1], "sr %.3e at least 5x below uniform %.3e", mmd[4], mmd[1]);
  for (int a = 5; a < 9; a++)
    KD_TEST(5 * mmd[a] <= mmd[1] && mmd[a] < mmd[2],
            "%s %.3e at least 5x below uniform %.3e and below KT-Compress %.3e", names[a], mmd[a],
            mmd[1], mmd[2]);
  kd_target_destroy(&tw);
  kd_pointset_destroy(&pw);
  kd_kernel_destroy(&k);
  free(R);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  double *R = chain_rows(256, 2, 0.0, 9);
  run_all(R, 256);
  free(R);
  greedy_transcription();
  debias();
  return kd_test_finish();
}
