/* test_ctt_basic.c - Compress Then Test (paper 003, Alg. 3) and the exact permutation MMD test:
 *  - the randomised threshold: closed-form ranks, p-values and rejection probabilities, and
 *    P(reject) = alpha when all B+1 statistics tie (uniform tie break);
 *  - without compression (4^g >= n_in) the CTT statistic equals the full-sample MMD, which equals
 *    the exact test's statistic and a brute-force double sum; a permuted statistic of the exact
 *    test equals brute force with the same labels;
 *  - coreset bookkeeping (sizes 2^g sqrt(n_in), rows are rows of their own bin, weights);
 *  - the same statistic, p-value, decision and permutation statistics on the job's communicator
 *    as on a one-rank communicator (so at 1, 2 and 4 ranks), and the same study table;
 *  - the typed entry points kd_ctt_test / kd_ctt_exact_test (what the study calls, parameters
 *    from the spec tables' defaults by kd_params_fill) give bitwise the outputs of the registered
 *    algorithms run from "key=value" parameters;
 *  - bad input: clear errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctt_test_util.h"
#include "comm/dist_impl.h"
#include "kd_test.h"

static void test_decide(void) {
  enum { B = 99 };
  double st[B + 1];
  kd_ctt_decision dec;
  for (int b = 0; b < B; b++) st[b] = b + 1.0;
  st[B] = 1000.0; /* strictly largest: R = B+1 */
  KD_TEST_OK(kd_ctt_decide(st, B, 0.05, 1, &dec));
  KD_TEST(dec.rank == B + 1, "rank %lld", (long long)dec.rank);
  KD_TEST_NEAR(dec.p_value, 1.0 / (B + 1), 1e-15, "p-value of the largest");
  KD_TEST_NEAR(dec.p_reject, 1.0, 0, "min(1, alpha (B+1)) = 1");
  KD_TEST(dec.reject == 1, "largest statistic rejects");
  st[B] = -1.0; /* strictly smallest: R = 1 */
  KD_TEST_OK(kd_ctt_decide(st, B, 0.05, 1, &dec));
  KD_TEST(dec.rank == 1 && dec.reject == 0 && dec.p_reject == 0.0, "smallest: R=1, no reject");
  KD_TEST_NEAR(dec.p_value, 1.0, 0, "p-value of the smallest");
  /* fractional rejection probability: B = 19, alpha = 0.07, R = 19 -> 19 - 0.93 * 20 = 0.4 */
  double s19[20];
  for (int b = 0; b < 19; b++) s19[b] = b;
  s19[18] = 100.0; /* one permuted value above the observed */
  s19[19] = 50.0;
  KD_TEST_OK(kd_ctt_decide(s19, 19, 0.07, 3, &dec));
  KD_TEST(dec.rank == 19, "rank 19, got %lld", (long long)dec.rank);
  KD_TEST_NEAR(dec.p_reject, 0.4, 1e-12, "fractional rejection probability");
  KD_TEST_NEAR(dec.p_value, 2.0 / 20.0, 1e-15, "p-value (1 + #greater) / (B+1)");
  /* frequency of rejection over seeds with p_reject = 0.4 */
  int rej = 0;
  for (uint64_t sd = 0; sd < 20000; sd++) {
    kd_ctt_decide(s19, 19, 0.07, sd, &dec);
    rej += dec.reject;
  }
  KD_TEST_NEAR(rej / 20000.0, 0.4, 4 * sqrt(0.24 / 20000), "randomised rejection frequency");
  /* all ties: R uniform on 1..B+1, P(reject) = alpha exactly */
  for (int b = 0; b <= B; b++) st[b] = 0.25;
  double mean_rank = 0.0;
  rej = 0;
  const int T = 20000;
  for (int t = 0; t < T; t++) {
    kd_ctt_decide(st, B, 0.05, (uint64_t)t + 77, &dec);
    rej += dec.reject;
    mean_rank += (double)dec.rank / T;
  }
  KD_TEST_NEAR(rej / (double)T, 0.05, 4 * sqrt(0.05 * 0.95 / T), "P(reject) = alpha under ties");
  KD_TEST_NEAR(mean_rank, (B + 2) / 2.0, 4 * sqrt((B + 1.0) * (B + 1.0) / 12.0 / T),
               "mean tie-broken rank");
  KD_TEST(kd_ctt_decide(st, 0, 0.05, 1, &dec) == KD_ERR_ARG, "B = 0 rejected");
  KD_TEST(kd_ctt_decide(st, B, 1.0, 1, &dec) == KD_ERR_ARG, "alpha = 1 rejected");
  /* permutations: s_m zeros kept, and a permutation actually moves labels */
  unsigned char lab[16];
  int moved = 0;
  for (int b = 0; b < 50; b++) {
    kd_ctt_permute_labels(16, 6, 9, b, lab);
    int z = 0;
    for (int i = 0; i < 16; i++) z += lab[i] == 0;
    KD_TEST(z == 6, "permutation keeps 6 X labels, got %d", z);
    for (int i = 0; i < 6; i++) moved += lab[i] != 0;
  }
  KD_TEST(moved > 50, "permutations move labels (%d)", moved);
  /* kd_ctt_labelled_stats: every value bit for bit kd_ctt_labelled_mmd2's, over two matrices,
   * 21 permutations (lanes 8 + 8 + 6 with the observed labelling) and the observed one last */
  enum { S = 13, SM = 5, NP = 21, L = 2 };
  double G0[S * S], G1[S * S], M[(NP + 1) * L];
  for (int i = 0; i < S * S; i++) {
    G0[i] = sin(1.0 + i) * 0.7;
    G1[i] = cos(0.3 * i) / 3.0;
  }
  const double *Gs[L] = {G0, G1};
  KD_TEST_OK(kd_ctt_labelled_stats(Gs, L, S, SM, 31, NP, M));
  int same = 0;
  unsigned char lb[S];
  for (int b = 0; b <= NP; b++) {
    if (b < NP)
      kd_ctt_permute_labels(S, SM, 31, b, lb);
    else
      for (int i = 0; i < S; i++) lb[i] = (unsigned char)(i >= SM);
    for (int j = 0; j < L; j++) same += M[b * L + j] == kd_ctt_labelled_mmd2(Gs[j], S, lb);
  }
  KD_TEST(same == (NP + 1) * L, "labelled_stats equals labelled_mmd2 bit for bit (%d of %d)", same,
          (NP + 1) * L);
}

/* Brute-force w^T K w for pooled Z (N x d) with labels (0 = X weight 1/m, 1 = Y weight -1/n). */
static double brute_mmd2(kd_kernel *k, const double *Z, int64_t N, int d, const unsigned char *lab,
                         int64_t m) {
  const double wx = 1.0 / m, wy = -1.0 / (double)(N - m);
  double acc = 0.0;
  for (int64_t i = 0; i < N; i++)
    for (int64_t j = 0; j < N; j++)
      acc += (lab[i] ? wy : wx) * (lab[j] ? wy : wx) * kd_kernel_eval(k, Z + i * d, Z + j * d);
  return acc;
}

static void test_exactness(MPI_Comm comm, kd_kernel_type kt) {
  const int d = 2;
  const int64_t m = 128, n = 128, N = m + n;
  const double shift[2] = {0.3, 0.0};
  kd_kernel_params kp = kd_kernel_params_default(kt);
  kd_kernel *k = NULL;
  kd_pointset *X = NULL, *Y = NULL;
  kd_result rc = KD_RESULT_INIT, re = KD_RESULT_INIT;
  double *Z = malloc(sizeof(double) * N * d);
  unsigned char *lab = malloc((size_t)N);
  KD_TEST_OK(kd_kernel_create(&kp, d, &k));
  KD_TEST_OK(ctt_test_gauss(comm, m, d, NULL, 11, &X));
  KD_TEST_OK(ctt_test_gauss(comm, n, d, shift, 12, &Y));
  KD_TEST_OK(kd_pointset_allgather(X, Z));
  KD_TEST_OK(kd_pointset_allgather(Y, Z + m * d));
  /* s = 4 bins of 64 points, g = 3: 2^3 sqrt(64) = 64, no compression */
  const char *sc[] = {"s=4", "g=3", "B=40", NULL};
  KD_TEST_OK(ctt_test_run(comm, "ctt", k, X, Y, 5, sc, &rc));
  const char *se[] = {"B=40", "tile=48", NULL};
  KD_TEST_OK(ctt_test_run(comm, "ctt_exact", k, X, Y, 5, se, &re));
  for (int64_t i = 0; i < N; i++) lab[i] = i >= m;
  const double full = brute_mmd2(k, Z, N, d, lab, m);
  const double sc2 = ctt_test_f64(&rc, "/test/statistic_squared");
  const double se2 = ctt_test_f64(&re, "/test/statistic_squared");
  KD_TEST_REL(sc2, full, 1e-11, "uncompressed CTT statistic = full-sample MMD^2");
  KD_TEST_REL(se2, full, 1e-11, "exact statistic = full-sample MMD^2");
  KD_TEST(full > 1e-3, "shifted samples have a visible MMD^2 (%g)", full);
  {
    /* s = 2 (one bin per sample; ranks beyond the second own no bin): same statistic */
    kd_result r2 = KD_RESULT_INIT;
    const char *s2[] = {"s=2", "g=3", "B=10", NULL};
    KD_TEST_OK(ctt_test_run(comm, "ctt", k, X, Y, 5, s2, &r2));
    KD_TEST_REL(ctt_test_f64(&r2, "/test/statistic_squared"), full, 1e-11, "s = 2 statistic");
    kd_result_free(&r2);
  }
  KD_TEST_REL(rc.mmd, sqrt(full), 1e-11, "result mmd = statistic");
  /* permuted statistic 0 of the exact test by brute force */
  kd_ctt_permute_labels(N, m, 5, 0, lab);
  const kd_result_dataset *ps = kd_result_find(&re, "/test/permutation_statistics");
  KD_TEST(ps && ps->dims[0] == 40, "40 permutation statistics");
  if (ps) KD_TEST_REL(ps->f64[0], sqrt(brute_mmd2(k, Z, N, d, lab, m)), 1e-10, "permutation 0");
  /* CTT permuted statistic 0 by brute force over the coresets (= bins here) */
  const kd_result_dataset *pc = kd_result_find(&rc, "/test/permutation_statistics");
  unsigned char cl[4];
  kd_ctt_permute_labels(4, 2, 5, 0, cl);
  for (int64_t i = 0; i < N; i++) lab[i] = cl[i / 64];
  if (pc) KD_TEST_REL(pc->f64[0], sqrt(brute_mmd2(k, Z, N, d, lab, m)), 1e-10, "CTT perm 0");
  /* no compression: coreset = all rows, in bin order, weights 1/(s * 64) */
  KD_TEST(rc.n == N, "uncompressed coreset has all %lld rows (got %lld)", (long long)N,
          (long long)rc.n);
  int same = 1;
  for (int64_t i = 0; i < rc.n && i < N; i++) {
    same &= rc.indices[i] == i;
    same &= rc.points[i * d] == Z[i * d] && rc.points[i * d + 1] == Z[i * d + 1];
    same &= fabs(rc.weights[i] - 1.0 / 256.0) < 1e-15;
  }
  KD_TEST(same, "coreset rows, indices and weights of the uncompressed test");
  kd_result_free(&rc);
  kd_result_free(&re);
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_kernel_destroy(&k);
  free(Z);
  free(lab);
}

/* Compressed CTT on comm and on a one-rank communicator: identical outcome. Also the coreset
 * bookkeeping with compression. */
static void test_ranks(MPI_Comm comm, MPI_Comm self) {
  const int d = 2;
  const int64_t m = 2048, n = 2048;
  const double shift[2] = {0.08, 0.0};
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_LAPLACE);
  kd_kernel *k = NULL;
  kd_pointset *X = NULL, *Y = NULL, *X1 = NULL, *Y1 = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, d, &k));
  KD_TEST_OK(ctt_test_gauss(comm, m, d, NULL, 21, &X));
  KD_TEST_OK(ctt_test_gauss(comm, n, d, shift, 22, &Y));
  KD_TEST_OK(ctt_test_gauss(self, m, d, NULL, 21, &X1));
  KD_TEST_OK(ctt_test_gauss(self, n, d, shift, 22, &Y1));
  const char *algos[2] = {"ctt", "ctt_exact"};
  for (int a = 0; a < 2; a++) {
    kd_result r = KD_RESULT_INIT, r1 = KD_RESULT_INIT;
    const char *sc[] = {"s=16", "g=1", "B=60", NULL};
    const char *se[] = {"B=60", NULL};
    const char *const *st = a ? se : sc;
    KD_TEST_OK(ctt_test_run(comm, algos[a], k, X, Y, 99, st, &r));
    KD_TEST_OK(ctt_test_run(self, algos[a], k, X1, Y1, 99, st, &r1));
    KD_TEST(ctt_test_same_outputs(&r, &r1, 60),
            "%s: statistic %.17g at %d ranks vs %.17g at 1, or the p-value, decision, rank or "
            "permutation statistics differ",
            algos[a], ctt_test_f64(&r, "/test/statistic"), kd_dist_size(comm),
            ctt_test_f64(&r1, "/test/statistic"));
    if (a == 0) {
      /* n_in = 4096/16 = 256 = 4^4, g = 1: coresets of 2 * 16 = 32 points */
      const kd_result_dataset *cs = kd_result_find(&r, "/test/coreset_sizes");
      int ok = cs && cs->dims[0] == 16;
      for (int b = 0; ok && b < 16; b++) ok &= cs->i64[b] == 32;
      KD_TEST(ok, "coreset sizes 2^g sqrt(n_in) = 32");
      KD_TEST(r.n == 16 * 32, "coreset total %lld", (long long)r.n);
      KD_TEST(r.n == r1.n && memcmp(r.points, r1.points, sizeof(double) * r.n * d) == 0,
              "same coresets at any rank count");
      /* every coreset row is a row of its own bin */
      const kd_result_dataset *cb = kd_result_find(&r, "/test/coreset_bin");
      double *Z = malloc(sizeof(double) * (m + n) * d);
      kd_pointset_allgather(X, Z);
      kd_pointset_allgather(Y, Z + m * d);
      int rows_ok = cb != NULL;
      double wsum = 0.0;
      for (int64_t i = 0; rows_ok && i < r.n; i++) {
        int64_t g = r.indices[i], b = cb->i64[i];
        rows_ok &= g >= b * 256 && g < (b + 1) * 256;
        rows_ok &= r.points[i * d] == Z[g * d] && r.points[i * d + 1] == Z[g * d + 1];
        wsum += r.weights[i];
      }
      KD_TEST(rows_ok, "coreset rows come from their bins");
      KD_TEST_NEAR(wsum, 1.0, 1e-12, "coreset weights sum to 1");
      free(Z);
      const kd_result_dataset *G = kd_result_find(&r, "/test/coreset_kernel_means");
      int sym = G && G->dims[0] == 16;
      for (int i = 0; sym && i < 16; i++)
        for (int j = 0; j < 16; j++) sym &= G->f64[i * 16 + j] == G->f64[j * 16 + i];
      KD_TEST(sym, "coreset kernel-mean matrix symmetric");
    }
    kd_result_free(&r);
    kd_result_free(&r1);
  }
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_pointset_destroy(&X1);
  kd_pointset_destroy(&Y1);
  kd_kernel_destroy(&k);
}

/* kd_ctt_test / kd_ctt_exact_test with a kd_ctt_params filled from the table defaults, then set
 * as the "key=value" run: bitwise the same /test outputs and coreset. */
static void test_typed(MPI_Comm comm) {
  const int d = 2;
  const double shift[2] = {0.1, 0.0};
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kd_kernel *k = NULL;
  kd_pointset *X = NULL, *Y = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, d, &k));
  KD_TEST_OK(ctt_test_gauss(comm, 1024, d, NULL, 31, &X));
  KD_TEST_OK(ctt_test_gauss(comm, 1024, d, shift, 32, &Y));
  static const char *const paths[] = {"/test/statistic", "/test/p_value", "/test/p_reject",
                                      "/test/permutation_statistics"};
  for (int a = 0; a < 2; a++) {
    const char *name = a ? "ctt_exact" : "ctt";
    const char *sc[] = {"s=8", "g=1", "B=40", "alpha=0.1", NULL};
    const char *se[] = {"B=40", "alpha=0.1", "tile=100", NULL};
    const kd_algo_desc *desc = ctt_test_desc(name);
    kd_params prm = {0};
    kd_ctt_params cp;
    kd_result r = KD_RESULT_INIT, r2 = KD_RESULT_INIT;
    memset(&cp, 0, sizeof cp);
    KD_TEST_OK(kd_params_defaults(desc->params, desc->n_params, &prm));
    KD_TEST_OK(kd_params_fill(&prm, &cp));
    KD_TEST(cp.B == 100 && cp.alpha == 0.05 && (a ? cp.tile == 256 : cp.s == 16 && cp.g == 0),
            "%s: the table defaults land in kd_ctt_params", name);
    cp.B = 40;
    cp.alpha = 0.1;
    if (a) {
      cp.tile = 100;
    } else {
      cp.s = 8;
      cp.g = 1;
    }
    KD_TEST_OK(ctt_test_run(comm, name, k, X, Y, 5, a ? se : sc, &r));
    kd_ctt_in ti = {.y = Y};
    kd_algo_in in;
    memset(&in, 0, sizeof in);
    in.comm = comm;
    in.kernel = k;
    in.points = X;
    in.seed = 5;
    in.task_in = &ti;
    KD_TEST_OK(a ? kd_ctt_exact_test(&in, &cp, &r2) : kd_ctt_test(&in, &cp, &r2));
    for (int q = 0; q < 4; q++) {
      const kd_result_dataset *x = kd_result_find(&r, paths[q]), *y = kd_result_find(&r2, paths[q]);
      const int64_t len = x && x->rank ? x->dims[0] : 1;
      KD_TEST(x && y && x->rank == y->rank && (!x->rank || x->dims[0] == y->dims[0]) &&
                  memcmp(x->f64, y->f64, sizeof(double) * (size_t)len) == 0,
              "%s: %s identical through the typed entry point", name, paths[q]);
    }
    KD_TEST(r.n == r2.n && (r.n == 0 || memcmp(r.points, r2.points, sizeof(double) * r.n * d) == 0),
            "%s: same coreset through the typed entry point", name);
    kd_result_free(&r);
    kd_result_free(&r2);
    kd_params_free(&prm);
  }
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_kernel_destroy(&k);
}

/* A small study on comm and on a one-rank communicator: identical tables (wall times aside). */
static void test_study_ranks(MPI_Comm comm, MPI_Comm self) {
  kd_measure gx, gy;
  double gv[6];
  ctt_test_shifted_pair(0.3, gv, &gx, &gy);
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_IMQ);
  const int64_t gl[2] = {0, 1};
  kd_ctt_study_spec sp;
  memset(&sp, 0, sizeof sp);
  sp.mx = &gx;
  sp.my = &gy;
  sp.m = 512;
  sp.n = 256;
  sp.T = 7;
  sp.seed = 3;
  sp.kp = &kp;
  sp.s = 6; /* 4 bins of X, 2 of Y, 128 points each */
  sp.B = 30;
  sp.delta = 0.5;
  sp.alpha = 0.1;
  sp.g_list = gl;
  sp.n_g = 2;
  sp.exact = 1;
  kd_ctt_study_out a, b;
  KD_TEST_OK(kd_ctt_study_run(comm, &sp, NULL, &a));
  KD_TEST_OK(kd_ctt_study_run(self, &sp, NULL, &b));
  KD_TEST(a.n_conf == 3 && b.n_conf == 3 && a.g[2] == -1, "three configurations");
  if (a.n_conf == 3 && b.n_conf == 3) {
    KD_TEST(memcmp(a.reject, b.reject, sizeof(int64_t) * 21) == 0 &&
                memcmp(a.p_value, b.p_value, sizeof(double) * 21) == 0 &&
                memcmp(a.statistic, b.statistic, sizeof(double) * 21) == 0,
            "study table identical on %d ranks and on 1", kd_dist_size(comm));
    int64_t rj = 0;
    for (int t = 0; t < 7; t++) rj += a.reject[t * 3 + 2];
    KD_TEST(rj == a.rejections[2], "rejection count consistent");
    KD_TEST_NEAR(a.rate[2], rj / 7.0, 1e-15, "rate = rejections / T");
    KD_TEST_NEAR(a.se[2], sqrt(a.rate[2] * (1 - a.rate[2]) / 7.0), 1e-15, "binomial SE");
    KD_TEST(a.statistic[0] > 0 && a.statistic[2] > 0, "positive statistics");
  }
  kd_ctt_study_free(&a);
  kd_ctt_study_free(&b);
}

static void expect_error(MPI_Comm comm, const char *algo, kd_kernel *k, const kd_pointset *X,
                         const kd_pointset *Y, const char *const *st, kd_err want,
                         const char *needle, const char *what) {
  kd_result r = KD_RESULT_INIT;
  kd_err_clear();
  kd_err e = ctt_test_run(comm, algo, k, X, Y, 1, st, &r);
  e = kd_dist_agreed(comm, e);
  KD_TEST(e == want, "%s: got code %d (%s), want %d", what, (int)e, kd_err_message(), (int)want);
  KD_TEST(strstr(kd_err_message(), needle) != NULL, "%s: message '%s' names '%s'", what,
          kd_err_message(), needle);
  kd_result_free(&r);
}

static void test_bad_input(MPI_Comm comm) {
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kd_kernel *k = NULL;
  kd_pointset *X = NULL, *Y = NULL, *E = NULL, *Y3 = NULL, *T = NULL, *T3 = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, 2, &k));
  KD_TEST_OK(ctt_test_gauss(comm, 64, 2, NULL, 1, &X));
  KD_TEST_OK(ctt_test_gauss(comm, 64, 2, NULL, 2, &Y));
  KD_TEST_OK(ctt_test_gauss(comm, 6, 2, NULL, 2, &T));
  KD_TEST_OK(ctt_test_gauss(comm, 3, 2, NULL, 3, &T3));
  KD_TEST_OK(ctt_test_gauss(comm, 64, 3, NULL, 2, &Y3));
  KD_TEST_OK(kd_pointset_create(comm, 0, 2, &E));
  {
    /* s = 1 is below the declared range: the parameter layer refuses it ... */
    kd_params prm = {0};
    const kd_algo_desc *desc = ctt_test_desc("ctt");
    KD_TEST(desc != NULL, "ctt registered");
    if (desc) {
      KD_TEST_OK(kd_params_defaults(desc->params, desc->n_params, &prm));
      KD_TEST(kd_params_set_text(&prm, "s", "1", "algorithm.s") == KD_ERR_CONFIG, "s=1 refused");
      KD_TEST(kd_params_set_text(&prm, "B", "0", "algorithm.B") == KD_ERR_CONFIG, "B=0 refused");
      /* ... and so does run() if handed such a value directly */
      kd_params_free(&prm);
      KD_TEST_OK(kd_params_defaults(desc->params, desc->n_params, &prm));
      prm.v[0].i = 1;
      kd_err_clear();
      kd_ctt_in ti = {.y = Y};
      kd_algo_in in = {
          .comm = comm, .kernel = k, .points = X, .params = &prm, .seed = 1, .task_in = &ti};
      kd_result r = KD_RESULT_INIT;
      KD_TEST(desc->run(&in, &r) == KD_ERR_CONFIG && strstr(kd_err_message(), "algorithm.s"),
              "run() refuses s = 1: %s", kd_err_message());
      kd_result_free(&r);
      kd_params_free(&prm);
    }
  }
  const char *s16[] = {"s=16", NULL};
  expect_error(comm, "ctt", k, T, T, s16, KD_ERR_CONFIG, "algorithm.s", "s > m + n");
  const char *s4[] = {"s=4", NULL};
  /* 6 + 3 rows: no bin count in [2, 8] gives bins of 4 rows */
  expect_error(comm, "ctt", k, T, T3, s4, KD_ERR_CONFIG, "at least 4 points", "bins of 3 points");
  {
    /* s = 3 with m = n = 64 has no even split (Alg. 3): the nearest count that leaves no row
     * unused is 2, one bin each; 3000 + 2000 at s = 16: 12 + 8 bins of 250 */
    int64_t bx = 0, by = 0, br = 0;
    kd_ctt_params cp = {.s = 3, .g = 0, .delta = 0.5};
    KD_TEST_OK(kd_ctt_check_sizes(&cp, 64, 64, &bx, &by, &br));
    KD_TEST(bx == 1 && by == 1 && br == 64, "s = 3, 64 + 64: %lld + %lld bins of %lld",
            (long long)bx, (long long)by, (long long)br);
    cp.s = 16;
    KD_TEST_OK(kd_ctt_check_sizes(&cp, 3000, 2000, &bx, &by, &br));
    KD_TEST(bx == 12 && by == 8 && br == 250, "s = 16, 3000 + 2000: %lld + %lld bins of %lld",
            (long long)bx, (long long)by, (long long)br);
    KD_TEST_OK(kd_ctt_check_sizes(&cp, 1000, 999, &bx, &by, &br));
    KD_TEST(bx == 9 && by == 9 && br == 111, "s = 16, 1000 + 999: %lld + %lld bins of %lld",
            (long long)bx, (long long)by, (long long)br);
    KD_TEST_OK(kd_ctt_check_sizes(&cp, 4096, 4096, &bx, &by, &br));
    KD_TEST(bx == 8 && by == 8 && br == 512, "s = 16, 4096 + 4096: Alg. 3's own split");
  }
  expect_error(comm, "ctt", k, E, Y, s4, KD_ERR_INPUT, "m = 0", "empty X");
  expect_error(comm, "ctt", k, X, E, s4, KD_ERR_INPUT, "n = 0", "empty Y");
  expect_error(comm, "ctt_exact", k, X, E, NULL, KD_ERR_INPUT, "n = 0", "exact: empty Y");
  expect_error(comm, "ctt", k, X, Y3, s4, KD_ERR_INPUT, "dimension", "mismatched d");
  expect_error(comm, "ctt_exact", k, X, Y3, NULL, KD_ERR_INPUT, "dimension", "exact: mismatched d");
  const char *a0[] = {"alpha=0", NULL}, *a1[] = {"alpha=1", NULL};
  expect_error(comm, "ctt", k, X, Y, a0, KD_ERR_CONFIG, "algorithm.alpha", "alpha = 0");
  expect_error(comm, "ctt_exact", k, X, Y, a1, KD_ERR_CONFIG, "algorithm.alpha", "alpha = 1");
  {
    /* a NaN planted in the last X row, which only the last rank holds: agreed error everywhere */
    double *rows = NULL;
    kd_pointset_get_rows(X, &rows);
    const int last = kd_dist_rank(comm) == kd_dist_size(comm) - 1;
    if (last) rows[(kd_pointset_n_local(X) - 1) * 2] = NAN;
    kd_pointset_restore_rows(X, &rows);
    const char *sg[] = {"s=4", "g=1", NULL};
    expect_error(comm, "ctt", k, X, Y, sg, KD_ERR_INPUT, "non-finite", "NaN in X (compressed)");
    const char *su[] = {"s=4", "g=3", NULL};
    expect_error(comm, "ctt", k, X, Y, su, KD_ERR_NUMERIC, "not finite", "NaN in X (whole bins)");
    expect_error(comm, "ctt_exact", k, X, Y, NULL, KD_ERR_NUMERIC, "not finite", "exact: NaN");
  }
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_pointset_destroy(&T);
  kd_pointset_destroy(&T3);
  kd_pointset_destroy(&E);
  kd_pointset_destroy(&Y3);
  kd_kernel_destroy(&k);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm self = MPI_COMM_NULL;
  KD_TEST_OK(kd_dist_split(MPI_COMM_WORLD, kd_test_rank(), &self));
  test_decide();
  test_exactness(MPI_COMM_WORLD, KD_KERNEL_GAUSSIAN);
  test_exactness(MPI_COMM_WORLD, KD_KERNEL_MATERN32);
  test_exactness(MPI_COMM_WORLD, KD_KERNEL_IMQ);
  test_ranks(MPI_COMM_WORLD, self);
  test_typed(MPI_COMM_WORLD);
  test_study_ranks(MPI_COMM_WORLD, self);
  test_bad_input(MPI_COMM_WORLD);
  kd_dist_comm_free(&self);
  return kd_test_finish();
}
