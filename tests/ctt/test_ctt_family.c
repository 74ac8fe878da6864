/* test_ctt_family.c - the tests of task ctt beside ctt and ctt_exact (test_ctt_basic):
 * lrctt (low-rank CTT) and the baselines of paper 003, Sec. 6.2 (Fig. 2): subsample_test (the MMD
 * test on n_out uniformly drawn rows of each sample, wild bootstrap) and wblock (the mean of
 * block MMD^2 over n / block blocks, wild bootstrap):
 *  - conformance: the observed and two bootstrap statistics equal a brute-force double sum over
 *    the drawn rows (subsample_test: the rows kd_pointset_choose_keyed picks; n_out = m = n: the
 *    whole samples) or the blocks (wblock, also at unequal sizes, where the last rows of the
 *    larger sample are unused), with the Rademacher signs of kd_rng_uniform on the wild stream;
 *  - the same statistic, bootstrap statistics, p-value and decision on the job's communicator as
 *    on one rank (so at 1, 2 and 4 ranks);
 *  - level: 200 null replicates (50 under ASan, where only the rate is asserted) (X, Y ~ N(0, I_2),
 * m = n = 1024 and m = 1000, n = 700), rejection rate <= 0.05 + 3 SE (nominal SE 0.0154), at least
 * one rejection, mean p-value 0.505 within 4 SE;
 *  - power: m = n = 4096, Y shifted by 0.3 on one axis, 100 replicates (20 under ASan): rejection
 *    rate >= 0.9
 *    (subsample_test n_out = 1024, wblock block = 128);
 *  - bad sizes: clear errors naming algorithm.n_out / algorithm.block;
 *  - lrctt: the statistic equals w^T F F^T w with the features recomputed here from the coresets
 *    and the frequencies kd_rng_normal(seed, KD_CTT_STREAM_RFF, .) / ls, to 1e-12; with r = 8192
 *    it is within 10 % of the kernel MMD^2 of the same coresets; coresets: lrctt keeps half of
 *    every sub-bin of 4^(g+1) rows; the same outputs at any rank count; level (m = n = 1024 and
 *    1000 / 700) and power (m = n = 4096, 0.3 shift, r = 256) as above; r odd and a non-Gaussian
 *    kernel are refused;
 *  - ctt_study with the baselines, lrctt and actt: configurations in the documented order (CTT's
 *    g, the exact test, subsample_test's n_out, wblock's block, lrctt's r, actt's g) with their
 *    method and size, and the same table on the job's communicator as on one rank; actt's row of
 *    replicate 1 (statistic, decision, NaN p-value) equals a direct actt run on that replicate's
 *    data and test seed, with the study's actt compression each and sum, and with a free list of
 *    length scales and unequal weights (study.actt_ls_list / actt_weights). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "ctt_test_util.h"
#include "kd_test.h"

/* (1/np^2) sum_ij w_i w_j k(z_i, z_j) over the pooled rows Z (np rows of X, then np of Y) with
 * the wild signs of replicate b (b < 0: none) for global pair indices pair0 + i: brute force. */
static double brute_stat(kd_kernel *k, const double *Z, int64_t np, uint64_t seed, int64_t b,
                         int64_t pair0) {
  const int64_t N = 2 * np;
  double *K = malloc(sizeof(double) * N * N), *w = malloc(sizeof(double) * N);
  kd_kernel_eval_block(k, Z, N, Z, N, K, N);
  for (int64_t i = 0; i < np; i++) {
    const double e = (b >= 0 && kd_rng_uniform(seed, KD_CTT_STREAM_WILD + (uint64_t)b,
                                               (uint64_t)(pair0 + i)) < 0.5)
                         ? -1.0
                         : 1.0;
    w[i] = e / (double)np;
    w[np + i] = -e / (double)np;
  }
  double s = 0.0;
  for (int64_t i = 0; i < N; i++)
    for (int64_t j = 0; j < N; j++) s += w[i] * w[j] * K[i * N + j];
  free(K);
  free(w);
  return s;
}

static double perm_stat2(const kd_result *r, int64_t b) {
  const kd_result_dataset *p = kd_result_find(r, "/test/permutation_statistics");
  return p ? p->f64[b] * p->f64[b] : NAN;
}

/* the observed and bootstrap 0, 1 squared statistics of r against brute force */
static void check_stats(const kd_result *r, const double *want, const char *what) {
  const double got[3] = {ctt_test_f64(r, "/test/statistic_squared"), perm_stat2(r, 0),
                         perm_stat2(r, 1)};
  for (int i = 0; i < 3; i++) {
    /* the bootstrap values are stored as sqrt(max(s, 0)): negative ones compare as 0 */
    const double w = i ? fmax(want[i], 0.0) : want[i];
    KD_TEST(fabs(got[i] - w) <= 1e-12 * fabs(w) + 1e-15, "%s: statistic %d = %.17g, brute %.17g",
            what, i, got[i], w);
  }
}

static void test_conformance(MPI_Comm comm) {
  const int d = 2;
  const double shift[2] = {0.4, 0.0};
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, d, &k));
  kd_pointset *X = NULL, *Y = NULL;
  const int64_t m = 300, n = 170;
  KD_TEST_OK(ctt_test_gauss(comm, m, d, NULL, 31, &X));
  KD_TEST_OK(ctt_test_gauss(comm, n, d, shift, 32, &Y));
  double *Xa = malloc(sizeof(double) * m * d), *Ya = malloc(sizeof(double) * n * d);
  double *Z = malloc(sizeof(double) * 2 * m * d);
  KD_TEST_OK(kd_pointset_allgather(X, Xa));
  KD_TEST_OK(kd_pointset_allgather(Y, Ya));
  const uint64_t seed = 7;
  { /* subsample_test, n_out = 100 of 300 and 170: the keyed rows */
    kd_result r = KD_RESULT_INIT;
    const char *st[] = {"n_out=100", "B=30", "tile=64", NULL};
    KD_TEST_OK(ctt_test_run(comm, "subsample_test", k, X, Y, seed, st, &r));
    kd_gidx ix[100], iy[100];
    KD_TEST_OK(kd_pointset_choose_keyed(X, seed, KD_CTT_STREAM_SUB, 100, ix));
    KD_TEST_OK(kd_pointset_choose_keyed(Y, seed, KD_CTT_STREAM_SUB + 1, 100, iy));
    for (int i = 0; i < 100; i++)
      for (int c = 0; c < d; c++) {
        Z[i * d + c] = Xa[ix[i] * d + c];
        Z[(100 + i) * d + c] = Ya[iy[i] * d + c];
      }
    const double want[3] = {brute_stat(k, Z, 100, seed, -1, 0), brute_stat(k, Z, 100, seed, 0, 0),
                            brute_stat(k, Z, 100, seed, 1, 0)};
    check_stats(&r, want, "subsample_test n_out=100");
    KD_TEST(want[0] > 0.0 && want[0] > fmax(want[1], want[2]),
            "shifted samples: observed %.3g above the bootstrap values %.3g %.3g", want[0], want[1],
            want[2]);
    kd_result_free(&r);
  }
  { /* subsample_test with n_out = m = n = 170: the whole samples, in any order */
    kd_result r = KD_RESULT_INIT, re = KD_RESULT_INIT;
    kd_pointset *X2 = NULL;
    KD_TEST_OK(ctt_test_gauss(comm, n, d, NULL, 31, &X2));
    const char *st[] = {"n_out=170", "B=30", NULL};
    const char *se[] = {"B=30", NULL};
    KD_TEST_OK(ctt_test_run(comm, "subsample_test", k, X2, Y, seed, st, &r));
    KD_TEST_OK(ctt_test_run(comm, "ctt_exact", k, X2, Y, seed, se, &re));
    KD_TEST_REL(ctt_test_f64(&r, "/test/statistic_squared"),
                ctt_test_f64(&re, "/test/statistic_squared"), 1e-12,
                "n_out = n: the full-sample MMD^2 of ctt_exact");
    kd_result_free(&r);
    kd_result_free(&re);
    kd_pointset_destroy(&X2);
  }
  { /* wblock, block = 32: floor(170 / 32) = 5 blocks, 300 + 170 - 320 rows unused */
    kd_result r = KD_RESULT_INIT;
    const char *st[] = {"block=32", "B=30", "tile=24", NULL};
    KD_TEST_OK(ctt_test_run(comm, "wblock", k, X, Y, seed, st, &r));
    double want[3] = {0, 0, 0};
    for (int j = 0; j < 5; j++) {
      memcpy(Z, Xa + j * 32 * d, sizeof(double) * 32 * d);
      memcpy(Z + 32 * d, Ya + j * 32 * d, sizeof(double) * 32 * d);
      for (int b = -1; b < 2; b++) want[b + 1] += brute_stat(k, Z, 32, seed, b, j * 32) / 5.0;
    }
    check_stats(&r, want, "wblock block=32");
    double nblk = 0, unused = 0;
    KD_TEST(kd_result_get_metric(&r, "blocks", &nblk) && nblk == 5.0, "5 blocks, got %g", nblk);
    KD_TEST(kd_result_get_metric(&r, "rows_unused", &unused) && unused == 150.0,
            "150 rows unused, got %g", unused);
    kd_result_free(&r);
  }
  free(Xa);
  free(Ya);
  free(Z);
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_kernel_destroy(&k);
}

/* lrctt on (X, Y): the statistic against the features recomputed from its coresets, and (r large)
 * against the kernel MMD^2 of the same coresets */
static void test_lrctt_conformance(MPI_Comm comm) {
  const int d = 2;
  const double shift[2] = {1.5, 0.0}, ls = 1.3;
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kp.ls = ls;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, d, &k));
  kd_pointset *X = NULL, *Y = NULL;
  KD_TEST_OK(ctt_test_gauss(comm, 512, d, NULL, 51, &X));
  KD_TEST_OK(ctt_test_gauss(comm, 256, d, shift, 52, &Y));
  for (int pass = 0; pass < 2; pass++) {
    const int64_t r = pass ? 8192 : 64;
    char rs[32];
    snprintf(rs, sizeof rs, "r=%lld", (long long)r);
    const char *st[] = {"s=12", "g=0", "B=20", rs, NULL};
    kd_result res = KD_RESULT_INIT;
    KD_TEST_OK(ctt_test_run(comm, "lrctt", k, X, Y, 9, st, &res));
    const kd_result_dataset *cb = kd_result_find(&res, "/test/coreset_bin");
    const kd_result_dataset *bins = kd_result_find(&res, "/test/bins");
    if (!cb || !bins) {
      KD_TEST(0, "lrctt: no /test/coreset_bin or /test/bins");
      continue;
    }
    /* 768 rows in 12 bins of 64 (8 of X, 4 of Y): sub-bins of 4 rows halved, 32 rows a bin */
    KD_TEST(bins->i64[0] == 8 && bins->i64[1] == 4 && res.n == 12 * 32,
            "lrctt bins %lld + %lld, %lld coreset rows (want 8 + 4, 384)", (long long)bins->i64[0],
            (long long)bins->i64[1], (long long)res.n);
    const int64_t s = bins->i64[0] + bins->i64[1], h = r / 2;
    double *F = calloc((size_t)(s * r), sizeof(double)), *cnt = calloc((size_t)s, sizeof(double));
    for (int64_t i = 0; i < res.n; i++) {
      const int64_t b = cb->i64[i];
      cnt[b] += 1.0;
      for (int64_t j = 0; j < h; j++) {
        double t = 0.0;
        for (int c = 0; c < d; c++)
          t += kd_rng_normal(9, KD_CTT_STREAM_RFF, (uint64_t)(j * d + c)) / ls *
               res.points[i * d + c];
        F[b * r + 2 * j] += cos(t);
        F[b * r + 2 * j + 1] += sin(t);
      }
    }
    double v = 0.0, mag = 0.0, kv = 0.0;
    double *w = malloc(sizeof(double) * (size_t)s);
    for (int64_t b = 0; b < s; b++)
      w[b] = b < bins->i64[0] ? 1.0 / bins->i64[0] : -1.0 / bins->i64[1];
    for (int64_t a = 0; a < s; a++)
      for (int64_t b = 0; b < s; b++) {
        double g = 0.0;
        for (int64_t t = 0; t < r; t++) g += F[a * r + t] * F[b * r + t];
        g *= 2.0 / (double)r / (cnt[a] * cnt[b]);
        v += w[a] * w[b] * g;
        mag += fabs(w[a] * w[b] * g);
      }
    for (int64_t i = 0; i < res.n; i++) /* the kernel MMD^2 of the labelled coreset averages */
      for (int64_t j = 0; j < res.n; j++) {
        const int64_t a = cb->i64[i], b = cb->i64[j];
        double dd = 0.0;
        for (int c = 0; c < d; c++)
          dd += (res.points[i * d + c] - res.points[j * d + c]) *
                (res.points[i * d + c] - res.points[j * d + c]);
        kv += w[a] * w[b] / (cnt[a] * cnt[b]) * exp(-dd / (2 * ls * ls));
      }
    const double got = ctt_test_f64(&res, "/test/statistic_squared");
    KD_TEST(fabs(got - v) <= 1e-12 * mag, "lrctt r=%lld: statistic^2 %.17g, features %.17g",
            (long long)r, got, v);
    if (pass)
      KD_TEST(fabs(got - kv) <= 0.1 * kv, "lrctt r=8192: %.6g within 10%% of the kernel's %.6g",
              got, kv);
    double rr = 0;
    KD_TEST(kd_result_get_metric(&res, "r", &rr) && rr == (double)r, "lrctt: metric r");
    free(F);
    free(cnt);
    free(w);
    kd_result_free(&res);
  }
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_kernel_destroy(&k);
}

/* lrctt's coreset size factor a (bins of 64 rows, r = 64, g = 0): a = r / 2 is the default's
 * halving bit for bit; a = 16 and 8 give sub-bins of 16 and 64 rows compressed to r / a = 4 and 8
 * rows; a = 64 keeps the bins whole; a = 3 (not a power of 4), 4 (sub-bins of 256 rows), 128
 * (a > r) and, at g = 1, 32 (sub-bins of 1 row for coresets of 2) are refused naming
 * algorithm.a. */
static void test_lrctt_a(MPI_Comm comm) {
  const double shift[2] = {0.5, 0.0};
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kp.ls = 1.0;
  kd_kernel *k = NULL;
  kd_pointset *X = NULL, *Y = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, 2, &k));
  KD_TEST_OK(ctt_test_gauss(comm, 512, 2, NULL, 61, &X));
  KD_TEST_OK(ctt_test_gauss(comm, 256, 2, shift, 62, &Y));
  const char *as[5] = {"a=0", "a=32", "a=16", "a=8", "a=64"};
  const int64_t per_bin[5] = {32, 32, 16, 8, 64};
  kd_result r0 = KD_RESULT_INIT;
  for (int i = 0; i < 5; i++) {
    const char *st[] = {"s=12", "g=0", "B=20", "r=64", as[i], NULL};
    kd_result res = KD_RESULT_INIT;
    KD_TEST_OK(ctt_test_run(comm, "lrctt", k, X, Y, 9, st, &res));
    const kd_result_dataset *sz = kd_result_find(&res, "/test/coreset_sizes");
    int sizes_ok = sz && sz->dims[0] == 12;
    for (int64_t b = 0; sizes_ok && b < 12; b++) sizes_ok = sz->i64[b] == per_bin[i];
    KD_TEST(sizes_ok && res.n == 12 * per_bin[i],
            "lrctt %s: %lld coreset rows (want 12 bins of %lld)", as[i], (long long)res.n,
            (long long)per_bin[i]);
    if (i == 0) {
      r0 = res;
      continue;
    }
    if (i == 1)
      KD_TEST(res.n == r0.n &&
                  !memcmp(res.points, r0.points, sizeof(double) * (size_t)(res.n * res.d)) &&
                  ctt_test_f64(&res, "/test/statistic_squared") ==
                      ctt_test_f64(&r0, "/test/statistic_squared"),
              "lrctt a = r/2 differs from the default a = 0");
    kd_result_free(&res);
  }
  kd_result_free(&r0);
  const char *b3[] = {"a=3", "r=64", "s=12", NULL}, *b4[] = {"a=4", "r=64", "s=12", NULL},
             *b128[] = {"a=128", "r=64", "s=12", NULL},
             *b32[] = {"a=32", "r=64", "s=12", "g=1", NULL};
  KD_TEST(ctt_test_config_error(comm, "lrctt", b3, "algorithm.a", KD_KERNEL_GAUSSIAN) &&
              ctt_test_config_error(comm, "lrctt", b32, "algorithm.a", KD_KERNEL_GAUSSIAN) &&
              ctt_test_config_error(comm, "lrctt", b4, "algorithm.a", KD_KERNEL_GAUSSIAN) &&
              ctt_test_config_error(comm, "lrctt", b128, "algorithm.a", KD_KERNEL_GAUSSIAN),
          "lrctt: a = 3, 4, 128 refused naming algorithm.a (last: '%s')", kd_err_message());
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_kernel_destroy(&k);
}

/* the same outputs on comm as on one rank */
static void test_ranks(MPI_Comm comm, MPI_Comm self) {
  const int d = 2;
  const double shift[2] = {0.1, 0.0};
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kd_kernel *k = NULL;
  kd_pointset *X = NULL, *Y = NULL, *X1 = NULL, *Y1 = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, d, &k));
  KD_TEST_OK(ctt_test_gauss(comm, 3000, d, NULL, 41, &X));
  KD_TEST_OK(ctt_test_gauss(comm, 2100, d, shift, 42, &Y));
  KD_TEST_OK(ctt_test_gauss(self, 3000, d, NULL, 41, &X1));
  KD_TEST_OK(ctt_test_gauss(self, 2100, d, shift, 42, &Y1));
  const char *algos[3] = {"subsample_test", "wblock", "lrctt"};
  for (int a = 0; a < 3; a++) {
    kd_result r = KD_RESULT_INIT, r1 = KD_RESULT_INIT;
    const char *s0[] = {"n_out=700", "B=50", "tile=96", NULL};
    const char *s1[] = {"block=16", "B=50", NULL}; /* 131 blocks: 3 chunks of 64 */
    const char *s2[] = {"s=16", "g=1", "r=128", "B=50", NULL};
    const char *const *st = a == 0 ? s0 : a == 1 ? s1 : s2;
    KD_TEST_OK(ctt_test_run(comm, algos[a], k, X, Y, 123, st, &r));
    KD_TEST_OK(ctt_test_run(self, algos[a], k, X1, Y1, 123, st, &r1));
    KD_TEST(ctt_test_same_outputs(&r, &r1, 50),
            "%s: statistic %.17g at %d ranks vs %.17g at 1, or the p-value, decision, rank or "
            "bootstrap statistics differ",
            algos[a], ctt_test_f64(&r, "/test/statistic_squared"), kd_dist_size(comm),
            ctt_test_f64(&r1, "/test/statistic_squared"));
    kd_result_free(&r);
    kd_result_free(&r1);
  }
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_pointset_destroy(&X1);
  kd_pointset_destroy(&Y1);
  kd_kernel_destroy(&k);
}

/* T replicates of (X ~ N(0, I_2) with m rows, Y ~ N((shift, 0), I_2) with n rows), replicate t on
 * rank t mod p alone; rej[t], pv[t] on every rank. */
static void replicates(MPI_Comm comm, const char *algo, const char *const *st, int64_t m, int64_t n,
                       double shift, int T, uint64_t seed, int *rej, double *pv) {
  const int rank = kd_dist_rank(comm), p = kd_dist_size(comm);
  const double mx[2] = {shift, 0.0};
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, 2, &k));
  for (int t = 0; t < T; t++) {
    rej[t] = 0;
    pv[t] = 0.0;
  }
  for (int t = rank; t < T; t += p) {
    kd_pointset *X = NULL, *Y = NULL;
    kd_result r = KD_RESULT_INIT;
    KD_TEST_OK(ctt_test_gauss(MPI_COMM_SELF, m, 2, NULL, seed + 3 * (uint64_t)t, &X));
    KD_TEST_OK(ctt_test_gauss(MPI_COMM_SELF, n, 2, mx, seed + 3 * (uint64_t)t + 1, &Y));
    KD_TEST_OK(ctt_test_run(MPI_COMM_SELF, algo, k, X, Y, seed + 3 * (uint64_t)t + 2, st, &r));
    rej[t] = (int)ctt_test_i64(&r, "/test/reject");
    pv[t] = ctt_test_f64(&r, "/test/p_value");
    kd_result_free(&r);
    kd_pointset_destroy(&X);
    kd_pointset_destroy(&Y);
  }
  MPI_Allreduce(MPI_IN_PLACE, rej, T, MPI_INT, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, pv, T, MPI_DOUBLE, MPI_SUM, comm);
  kd_kernel_destroy(&k);
}

static void test_level(MPI_Comm comm, const char *algo, const char *const *st, int64_t m,
                       int64_t n) {
  /* under ASan (KD_TEST_SANITIZED) the first 50 replicates: memory safety is what is checked */
  enum { TMAX = 200 };
  const int T = KD_TEST_SANITIZED ? 50 : TMAX;
  int rej[TMAX];
  double pv[TMAX];
  const double t0 = MPI_Wtime();
  replicates(comm, algo, st, m, n, 0.0, T, 5000, rej, pv);
  int nrej = 0;
  double pm = 0.0;
  for (int t = 0; t < T; t++) {
    nrej += rej[t];
    pm += pv[t] / T;
  }
  const double rate = nrej / (double)T, se0 = sqrt(0.05 * 0.95 / T);
  if (kd_test_rank() == 0)
    printf("level %s (m=%lld, n=%lld, %s): rejection %.4f (%d/%d), mean p %.3f, %.1f s\n", algo,
           (long long)m, (long long)n, st[0], rate, nrej, T, pm, MPI_Wtime() - t0);
  KD_TEST(rate <= 0.05 + 3 * se0, "%s: null rejection rate %.4f > 0.05 + 3 SE = %.4f", algo, rate,
          0.05 + 3 * se0);
  if (KD_TEST_SANITIZED) return;
  KD_TEST(nrej >= 1, "%s: never rejected in %d null replicates", algo, T);
  /* null p-values (B = 100) near uniform on {1/101, ..., 1}: mean 0.505, sd 0.29/sqrt(T) */
  KD_TEST_NEAR(pm, 0.505, 4 * 0.29 / sqrt((double)T), "mean null p-value");
}

static void test_power(MPI_Comm comm, const char *algo, const char *const *st) {
  enum { TMAX = 100 };
  const int T = KD_TEST_SANITIZED ? 20 : TMAX; /* under ASan the first 20 replicates */
  int rej[TMAX];
  double pv[TMAX];
  const double t0 = MPI_Wtime();
  replicates(comm, algo, st, 4096, 4096, 0.3, T, 9000, rej, pv);
  int nrej = 0;
  for (int t = 0; t < T; t++) nrej += rej[t];
  if (kd_test_rank() == 0)
    printf("power %s (%s): rejection %.3f (%d/%d), %.1f s\n", algo, st[0], nrej / (double)T, nrej,
           T, MPI_Wtime() - t0);
  KD_TEST(nrej >= 0.9 * T, "%s (%s): power %.2f < 0.9 at a 0.3 shift, m = n = 4096", algo, st[0],
          nrej / (double)T);
}

/* algo with settings st fails with KD_ERR_CONFIG naming key */
static void expect_config_error(MPI_Comm comm, const char *algo, const char *const *st,
                                const char *key, kd_kernel_type kt) {
  KD_TEST(ctt_test_config_error(comm, algo, st, key, kt),
          "%s %s: KD_ERR_CONFIG naming %s (got '%s')", algo, st[0], key, kd_err_message());
}

/* The study's actt row of replicate 1 against actt run directly on that replicate's data (seeds
 * kd_rng_u64(seed, KD_CTT_STREAM_STUDY, 3 + 0 / 1 / 2)) with the study's parameters. */
static void check_study_actt(const kd_ctt_study_spec *sp, const kd_ctt_study_out *a,
                             const char *compression) {
  const int64_t t = 1, c = a->n_conf - 1;
  kd_pointset *X = NULL, *Y = NULL;
  kd_kernel *k = NULL;
  kd_result r = KD_RESULT_INIT;
  KD_TEST_OK(kd_pointset_generate(MPI_COMM_SELF, sp->mx, sp->m,
                                  kd_rng_u64(sp->seed, KD_CTT_STREAM_STUDY, 3 * t), &X));
  KD_TEST_OK(kd_pointset_generate(MPI_COMM_SELF, sp->my, sp->n,
                                  kd_rng_u64(sp->seed, KD_CTT_STREAM_STUDY, 3 * t + 1), &Y));
  KD_TEST_OK(kd_kernel_create(sp->kp, 2, &k));
  const char *st[] = {"s=16",   "g=0",        "B=50",      "B2=40", "B3=10",
                      "n_ls=3", "ls_ratio=2", compression, NULL};
  const kd_ctt_in ti = {.y = Y,
                        .ls_list = sp->actt_ls_list,
                        .n_ls_list = sp->n_actt_ls_list,
                        .weights = sp->actt_weights,
                        .n_weights = sp->n_actt_weights};
  KD_TEST_OK(ctt_test_run_in(MPI_COMM_SELF, "actt", k, X, &ti,
                             kd_rng_u64(sp->seed, KD_CTT_STREAM_STUDY, 3 * t + 2), st, &r));
  const kd_result_dataset *sta = kd_result_find(&r, "/test/statistic"),
                          *rej = kd_result_find(&r, "/test/reject");
  KD_TEST(sta && rej && sta->f64[0] == a->statistic[t * a->n_conf + c] &&
              rej->i64[0] == a->reject[t * a->n_conf + c] && isnan(a->p_value[t * a->n_conf + c]),
          "study actt row (%s): statistic %.17g reject %lld p %g, direct actt %.17g reject %lld",
          compression, a->statistic[t * a->n_conf + c], (long long)a->reject[t * a->n_conf + c],
          a->p_value[t * a->n_conf + c], sta ? sta->f64[0] : NAN,
          rej ? (long long)rej->i64[0] : -1LL);
  kd_result_free(&r);
  kd_kernel_destroy(&k);
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
}

static void test_study(MPI_Comm comm) {
  kd_measure gx, gy;
  double gv[6];
  ctt_test_shifted_pair(0.2, gv, &gx, &gy);
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  const int64_t g_list[1] = {1}, subs[2] = {64, 256}, blocks[1] = {32}, rs[1] = {64}, ag[1] = {0};
  kd_ctt_study_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.mx = &gx;
  sp.my = &gy;
  sp.m = 1024;
  sp.n = 800;
  sp.T = 12;
  sp.seed = 17;
  sp.kp = &kp;
  sp.s = 16;
  sp.B = 50;
  sp.delta = 0.5;
  sp.alpha = 0.05;
  sp.g_list = g_list;
  sp.n_g = 1;
  sp.exact = 1;
  sp.n_out_list = subs;
  sp.n_sub = 2;
  sp.block_list = blocks;
  sp.n_wb = 1;
  sp.r_list = rs;
  sp.n_lr = 1;
  sp.lr_g = 0;
  sp.actt_g_list = ag;
  sp.n_actt = 1;
  sp.actt_n_ls = 3;
  sp.actt_ls_ratio = 2.0;
  sp.actt_B2 = 40;
  sp.actt_B3 = 10;
  kd_ctt_study_out a, b;
  KD_TEST_OK(kd_ctt_study_run(comm, &sp, NULL, &a));
  KD_TEST_OK(kd_ctt_study_run(MPI_COMM_SELF, &sp, NULL, &b));
  enum { NC = 7 };
  const int64_t want_m[NC] = {KD_STUDY_CTT,       KD_STUDY_EXACT,  KD_STUDY_SUBSAMPLE,
                              KD_STUDY_SUBSAMPLE, KD_STUDY_WBLOCK, KD_STUDY_LRCTT,
                              KD_STUDY_ACTT};
  const int64_t want_s[NC] = {1, 0, 64, 256, 32, 64, 0}, want_g[NC] = {1, -1, -1, -1, -1, -1, 0};
  KD_TEST(a.n_conf == NC, "%d configurations, got %d", NC, a.n_conf);
  for (int c = 0; c < NC && a.n_conf == NC; c++)
    KD_TEST(a.method[c] == want_m[c] && a.size[c] == want_s[c] && a.g[c] == want_g[c],
            "configuration %d: method %lld size %lld g %lld", c, (long long)a.method[c],
            (long long)a.size[c], (long long)a.g[c]);
  const int64_t n = a.T * a.n_conf;
  KD_TEST(a.n_conf == b.n_conf && a.T == b.T &&
              !memcmp(a.reject, b.reject, sizeof(int64_t) * (size_t)n) &&
              !memcmp(a.p_value, b.p_value, sizeof(double) * (size_t)n) &&
              !memcmp(a.statistic, b.statistic, sizeof(double) * (size_t)n),
          "study with baselines: the same table at %d ranks as on one", kd_dist_size(comm));
  kd_result r = KD_RESULT_INIT;
  KD_TEST_OK(kd_ctt_study_add_outputs(&a, &r));
  const kd_result_dataset *ds = kd_result_find(&r, "/study/size");
  KD_TEST(ds && ds->dims[0] == NC && ds->i64[3] == 256, "/study/size written");
  /* the lrctt configuration runs lrctt, not ctt: another statistic on the same replicate */
  KD_TEST(a.statistic[5] > 0.0 && a.statistic[5] != a.statistic[0],
          "lrctt's statistic %.6g differs from ctt's %.6g", a.statistic[5], a.statistic[0]);
  kd_result_free(&r);
  if (a.n_conf == NC) check_study_actt(&sp, &a, "compression=each");
  kd_ctt_study_free(&a);
  kd_ctt_study_free(&b);
  /* study.actt_compression: sum, with ctt g = 1 and actt only, two replicates */
  kd_ctt_study_spec sq = sp;
  sq.T = 2;
  sq.exact = 0;
  sq.n_sub = sq.n_wb = sq.n_lr = 0;
  sq.actt_compression = 2;
  KD_TEST_OK(kd_ctt_study_run(comm, &sq, NULL, &a));
  KD_TEST(a.n_conf == 2 && a.method[1] == KD_STUDY_ACTT,
          "actt-only study: 2 configurations, got %d", a.n_conf);
  if (a.n_conf == 2) check_study_actt(&sq, &a, "compression=sum");
  const double sum_stat = a.n_conf == 2 ? a.statistic[3] : NAN;
  kd_ctt_study_free(&a);
  /* study.actt_ls_list / actt_weights: a free list with unequal weights reaches actt (the row
   * equals a direct actt run with the same lists; the list's middle length scale, whose MMD is
   * the statistic, is not the grid's, so a study that dropped the list fails here) */
  const double ls3[3] = {0.5, 1.5, 3.0}, w3[3] = {1.0, 2.0, 1.0};
  sq.actt_compression = 0;
  sq.actt_ls_list = ls3;
  sq.n_actt_ls_list = 3;
  sq.actt_weights = w3;
  sq.n_actt_weights = 3;
  KD_TEST_OK(kd_ctt_study_run(comm, &sq, NULL, &a));
  if (a.n_conf == 2) {
    check_study_actt(&sq, &a, "compression=each");
    KD_TEST(a.statistic[3] != sum_stat, "the lists change actt's statistic (%.17g)",
            a.statistic[3]);
  }
  kd_ctt_study_free(&a);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  test_conformance(comm);
  test_ranks(comm, MPI_COMM_SELF);
  test_lrctt_conformance(comm);
  test_lrctt_a(comm);
  const char *sub[] = {"n_out=256", "B=100", NULL}, *wb[] = {"block=32", "B=100", NULL};
  test_level(comm, "subsample_test", sub, 1024, 1024);
  test_level(comm, "wblock", wb, 1024, 1024);
  test_level(comm, "subsample_test", sub, 1000, 700);
  test_level(comm, "wblock", wb, 1000, 700);
  const char *lr[] = {"r=64", "s=16", "g=0", "B=100", NULL};
  test_level(comm, "lrctt", lr, 1024, 1024);
  test_level(comm, "lrctt", lr, 1000, 700);
  const char *subp[] = {"n_out=1024", "B=100", NULL}, *wbp[] = {"block=128", "B=100", NULL};
  test_power(comm, "subsample_test", subp);
  test_power(comm, "wblock", wbp);
  const char *lrp[] = {"r=256", "s=16", "g=1", "B=100", NULL};
  test_power(comm, "lrctt", lrp);
  const char *bad0[] = {"n_out=41", NULL}, *bad1[] = {"block=41", NULL};
  expect_config_error(comm, "subsample_test", bad0, "algorithm.n_out", KD_KERNEL_GAUSSIAN);
  expect_config_error(comm, "wblock", bad1, "algorithm.block", KD_KERNEL_GAUSSIAN);
  const char *bad2[] = {"r=63", NULL};
  expect_config_error(comm, "lrctt", bad2, "algorithm.r", KD_KERNEL_GAUSSIAN);
  const char *lap[] = {"r=64", "s=8", NULL};
  expect_config_error(comm, "lrctt", lap, "gaussian kernel", KD_KERNEL_LAPLACE);
  test_study(comm);
  return kd_test_finish();
}
