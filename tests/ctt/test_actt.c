/* test_actt.c - aggregated CTT (algorithm actt of task ctt):
 *  - conformance: m = 600, n = 400, s = 10, g = 3 (bins of 100 rows are not compressed): for each
 *    of the 5 length scales (the grid 2^(j-2) with equal weights, and the task's ls_list 0.3, 0.7,
 *    1, 2.5, 6 with weights 0.5, 0.2, 0.1, 0.1, 0.1) the mean-kernel matrix of the bins is
 * recomputed here by direct double sums, the B2 + B + 1 labelled statistics from it, and u_alpha
 * (B3 bisection steps), the thresholds and the decision by a plain implementation of the rule; the
 *    statistics and thresholds agree to 1e-12, u_alpha and the decision exactly; the reported
 *    length scales are ls ratio^(j - (L-1)/2) or the list, the weights the normalised ones;
 *  - the same statistics, thresholds, u_alpha and decision on the job's communicator as on one
 *    rank (m = 3000, n = 2100, g = 1: compressed bins);
 *  - level: 200 null replicates (50 under ASan) at m = n = 1024 and at m = 1000, n = 700:
 *    rejection rate <= 0.05 + 3 SE and at least one rejection; u_alpha within (0, 1/w] and the
 *    calibration rate at it <= alpha in every replicate;
 *  - power: m = n = 4096, Y shifted by 0.3 on one axis, g = 1, 100 replicates (20 under ASan):
 *    rejection rate >= 0.9;
 *  - the grid, the same values as ls_list and equal weights as a list give the same bits; weights
 *    of the wrong length are refused; level also with the ls_list and the weights above;
 *  - compression: sum: the coresets are ctt's with the gaussian_sum kernel of the grid, the same
 *    at p ranks as on one, equal to compression: each with uncompressed bins; level (200 null
 *    replicates); a laplace kernel and an ls_list refused;
 *  - n_ls = 1: the statistic is CTT's at kernel.ls (same bins, seed of length scale 0);
 *  - errors: ls_ratio = 1 with n_ls = 3 names algorithm.ls_ratio; a linear kernel names
 *    kernel.name. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "ctt_test_util.h"
#include "kd_test.h"

static const kd_result_dataset *ds(const kd_result *r, const char *path) {
  const kd_result_dataset *d = kd_result_find(r, path);
  KD_TEST(d != NULL, "dataset %s missing", path);
  return d;
}

static int cmp_d(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* the reference decision: q(u) = ceil((B+1)(1 - u w)) clamped to [1, B+1] */
static int64_t ref_q(int64_t B, double u, double w) {
  int64_t q = (int64_t)ceil((double)(B + 1) * (1.0 - u * w));
  return (q < 1 ? 1 : q > B + 1 ? B + 1 : q) - 1;
}

static double ref_rate(const double *M, int64_t B2, int64_t B, int64_t L, const double *srt,
                       double u, const double *w) {
  int cnt = 0;
  for (int64_t b = 0; b < B2; b++) {
    int any = 0;
    for (int64_t j = 0; j < L; j++) any |= M[b * L + j] > srt[j * (B + 1) + ref_q(B, u, w[j])];
    cnt += any;
  }
  return cnt / (double)B2;
}

/* The conformance case at length scales lsv[5] with weights wv[5] (NULL: 1/5 each); lsv NULL:
 * actt's default grid 2^(j-2) (kernel.ls = 1, ratio 2), else passed as the task's ls_list. */
static void conformance_case(MPI_Comm comm, const double *lsv, const double *wv) {
  enum { L = 5, S = 10, SM = 6, NIN = 100, B = 49, B2 = 40, B3 = 12 };
  const int64_t m = 600, n = 400;
  const double shift[2] = {0.2, 0.0};
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kd_kernel *k = NULL;
  kd_pointset *X = NULL, *Y = NULL, *X1 = NULL, *Y1 = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, 2, &k));
  KD_TEST_OK(ctt_test_gauss(comm, m, 2, NULL, 11, &X));
  KD_TEST_OK(ctt_test_gauss(comm, n, 2, shift, 12, &Y));
  KD_TEST_OK(ctt_test_gauss(MPI_COMM_SELF, m, 2, NULL, 11, &X1));
  KD_TEST_OK(ctt_test_gauss(MPI_COMM_SELF, n, 2, shift, 12, &Y1));
  const char *st[] = {"s=10", "g=3", "B=49", "B2=40", "B3=12", NULL};
  double lsj[L], w[L], wsum = 0.0, wmax = 0.0;
  for (int j = 0; j < L; j++) {
    lsj[j] = lsv ? lsv[j] : pow(2.0, j - 2);
    wsum += wv ? wv[j] : 0.0;
  }
  for (int j = 0; j < L; j++) {
    w[j] = wv ? wv[j] / wsum : 1.0 / L;
    wmax = fmax(wmax, w[j]);
  }
  const kd_ctt_in ti = {
      .y = Y, .ls_list = lsv, .n_ls_list = lsv ? L : 0, .weights = wv, .n_weights = wv ? L : 0};
  kd_result r = KD_RESULT_INIT;
  KD_TEST_OK(ctt_test_run_in(comm, "actt", k, X, &ti, 77, st, &r));
  /* the bins: rows 100 b .. 100 b + 99 of X (b < 6), then of Y */
  const double *x = kd_pointset_rows_const(X1), *y = kd_pointset_rows_const(Y1);
  static double G[L][S * S], M[B2 + B + 1][L], srt[L * (B + 1)];
  for (int j = 0; j < L; j++) {
    const double ls = lsj[j];
    for (int a = 0; a < S; a++)
      for (int b = 0; b < S; b++) {
        const double *pa = a < SM ? x + 2 * NIN * a : y + 2 * NIN * (a - SM);
        const double *pb = b < SM ? x + 2 * NIN * b : y + 2 * NIN * (b - SM);
        double acc = 0.0;
        for (int i = 0; i < NIN; i++)
          for (int t = 0; t < NIN; t++) {
            const double d0 = pa[2 * i] - pb[2 * t], d1 = pa[2 * i + 1] - pb[2 * t + 1];
            acc += exp(-(d0 * d0 + d1 * d1) / (2 * ls * ls));
          }
        G[j][a * S + b] = acc / (NIN * NIN);
      }
  }
  unsigned char lab[S];
  for (int b = 0; b <= B2 + B; b++) {
    if (b < B2 + B)
      kd_ctt_permute_labels(S, SM, 77, b, lab);
    else
      for (int i = 0; i < S; i++) lab[i] = i >= SM;
    for (int j = 0; j < L; j++) {
      double acc = 0.0;
      for (int a = 0; a < S; a++)
        for (int c = 0; c < S; c++)
          acc += (lab[a] ? -1.0 / (S - SM) : 1.0 / SM) * (lab[c] ? -1.0 / (S - SM) : 1.0 / SM) *
                 G[j][a * S + c];
      M[b][j] = acc;
    }
  }
  for (int j = 0; j < L; j++) {
    for (int b = 0; b <= B; b++) srt[j * (B + 1) + b] = M[B2 + b][j];
    qsort(srt + j * (B + 1), B + 1, sizeof(double), cmp_d);
  }
  double lo = 0.0, hi = 1.0 / wmax;
  for (int t = 0; t < B3; t++) {
    const double u = 0.5 * (lo + hi);
    if (ref_rate(&M[0][0], B2, B, L, srt, u, w) <= 0.05)
      lo = u;
    else
      hi = u;
  }
  int rej = 0;
  const kd_result_dataset *ls = ds(&r, "/test/ls"), *sv = ds(&r, "/test/statistics"),
                          *th = ds(&r, "/test/thresholds"), *wt = ds(&r, "/test/weights");
  for (int j = 0; j < L && ls && sv && th && wt; j++) {
    const double thr = srt[j * (B + 1) + ref_q(B, lo, w[j])];
    rej |= M[B2 + B][j] > thr;
    KD_TEST(ls->f64[j] == lsj[j] && wt->f64[j] == w[j], "length scale %d: %.17g, weight %.17g", j,
            ls->f64[j], wt->f64[j]);
    KD_TEST(fabs(sv->f64[j] * sv->f64[j] - M[B2 + B][j]) <= 1e-12 * M[B2 + B][j],
            "statistic^2 at length scale %d: %.17g, reference %.17g", j, sv->f64[j] * sv->f64[j],
            M[B2 + B][j]);
    KD_TEST(fabs(th->f64[j] * th->f64[j] - fmax(thr, 0.0)) <= 1e-12 * fabs(thr) + 1e-300,
            "threshold^2 at length scale %d: %.17g, reference %.17g", j, th->f64[j] * th->f64[j],
            thr);
  }
  KD_TEST(ctt_test_f64(&r, "/test/u_alpha") == lo, "u_alpha %.17g, reference %.17g",
          ctt_test_f64(&r, "/test/u_alpha"), lo);
  KD_TEST(ctt_test_i64(&r, "/test/reject") == rej, "decision %lld, reference %d",
          (long long)ctt_test_i64(&r, "/test/reject"), rej);
  KD_TEST(lo > 0.0 && lo < 1.0 / wmax, "u_alpha %.6g inside (0, 1 / max w)", lo);
  if (kd_test_rank() == 0)
    printf("conformance (%s, %s): u_alpha %.6f, reject %d, statistic(ls=%g) %.6g\n",
           lsv ? "ls_list" : "grid", wv ? "weights" : "equal weights", lo, rej, lsj[2],
           sqrt(M[B2 + B][2]));
  kd_result_free(&r);
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_pointset_destroy(&X1);
  kd_pointset_destroy(&Y1);
  kd_kernel_destroy(&k);
}

static int same_f64(const kd_result *a, const kd_result *b, const char *path) {
  const kd_result_dataset *p = kd_result_find(a, path), *q = kd_result_find(b, path);
  const int64_t n = p && p->rank >= 1 ? p->dims[0] * (p->rank == 2 ? p->dims[1] : 1) : 1;
  return p && q && p->rank == q->rank && (p->rank == 0 || p->dims[0] == q->dims[0]) &&
         !memcmp(p->f64, q->f64, sizeof(double) * (size_t)n);
}

/* The grid, the same length scales as ls_list, and equal weights given as a list (3 each) give
 * the same bits: statistics, thresholds, u_alpha, decision. */
static void test_lists_same(MPI_Comm comm) {
  const double shift[2] = {0.15, 0.0};
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kd_kernel *k = NULL;
  kd_pointset *X = NULL, *Y = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, 2, &k));
  KD_TEST_OK(ctt_test_gauss(comm, 1200, 2, NULL, 31, &X));
  KD_TEST_OK(ctt_test_gauss(comm, 1000, 2, shift, 32, &Y));
  const char *st[] = {"s=10", "g=1", "B=59", "B2=50", NULL};
  double grid[5], three[5] = {3, 3, 3, 3, 3};
  for (int j = 0; j < 5; j++) grid[j] = pow(2.0, j - 2.0);
  const kd_ctt_in a = {.y = Y},
                  b = {.y = Y, .ls_list = grid, .n_ls_list = 5, .weights = three, .n_weights = 5};
  kd_result ra = KD_RESULT_INIT, rb = KD_RESULT_INIT;
  KD_TEST_OK(ctt_test_run_in(comm, "actt", k, X, &a, 9, st, &ra));
  KD_TEST_OK(ctt_test_run_in(comm, "actt", k, X, &b, 9, st, &rb));
  KD_TEST(same_f64(&ra, &rb, "/test/statistics") && same_f64(&ra, &rb, "/test/thresholds") &&
              same_f64(&ra, &rb, "/test/ls") && same_f64(&ra, &rb, "/test/weights") &&
              same_f64(&ra, &rb, "/test/u_alpha") &&
              ctt_test_i64(&ra, "/test/reject") == ctt_test_i64(&rb, "/test/reject"),
          "actt: the grid and the same ls_list with weights 3 each differ");
  /* weights of the wrong length: refused */
  const kd_ctt_in c = {.y = Y, .weights = three, .n_weights = 4};
  kd_result rc = KD_RESULT_INIT;
  KD_TEST(ctt_test_run_in(comm, "actt", k, X, &c, 9, st, &rc) == KD_ERR_ARG,
          "actt: 4 weights for 5 length scales accepted");
  kd_err_clear();
  kd_result_free(&rc);
  kd_result_free(&ra);
  kd_result_free(&rb);
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_kernel_destroy(&k);
}

static void test_ranks(MPI_Comm comm) {
  const double shift[2] = {0.1, 0.0};
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kd_kernel *k = NULL;
  kd_pointset *X = NULL, *Y = NULL, *X1 = NULL, *Y1 = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, 2, &k));
  KD_TEST_OK(ctt_test_gauss(comm, 3000, 2, NULL, 41, &X));
  KD_TEST_OK(ctt_test_gauss(comm, 2100, 2, shift, 42, &Y));
  KD_TEST_OK(ctt_test_gauss(MPI_COMM_SELF, 3000, 2, NULL, 41, &X1));
  KD_TEST_OK(ctt_test_gauss(MPI_COMM_SELF, 2100, 2, shift, 42, &Y1));
  const char *st[] = {"g=1", "n_ls=4", "ls_ratio=3", "B=99", "B2=60", NULL};
  kd_result r = KD_RESULT_INIT, r1 = KD_RESULT_INIT;
  KD_TEST_OK(ctt_test_run(comm, "actt", k, X, Y, 5, st, &r));
  KD_TEST_OK(ctt_test_run(MPI_COMM_SELF, "actt", k, X1, Y1, 5, st, &r1));
  KD_TEST(same_f64(&r, &r1, "/test/statistics") && same_f64(&r, &r1, "/test/thresholds") &&
              same_f64(&r, &r1, "/test/ls") && same_f64(&r, &r1, "/test/u_alpha") &&
              ctt_test_i64(&r, "/test/reject") == ctt_test_i64(&r1, "/test/reject"),
          "actt: the outputs at %d ranks differ from those on one", kd_dist_size(comm));
  /* n_ls = 1: the statistic is CTT's at kernel.ls, with the same bins and seed stream */
  const char *one[] = {"g=1", "n_ls=1", "B=20", "B2=20", NULL}, *c[] = {"g=1", "B=20", NULL};
  kd_result a1 = KD_RESULT_INIT, c1 = KD_RESULT_INIT;
  KD_TEST_OK(ctt_test_run(comm, "actt", k, X, Y, 5, one, &a1));
  KD_TEST_OK(ctt_test_run(comm, "ctt", k, X, Y, kd_rng_u64(5, KD_CTT_STREAM_ACTT, 0), c, &c1));
  KD_TEST(ctt_test_f64(&a1, "/test/statistic") == ctt_test_f64(&c1, "/test/statistic"),
          "actt with one length scale: statistic %.17g, ctt's %.17g",
          ctt_test_f64(&a1, "/test/statistic"), ctt_test_f64(&c1, "/test/statistic"));
  /* and so with compression: middle and sum (the mean of one gaussian is that gaussian) */
  for (int cm = 0; cm < 2; cm++) {
    const char *onec[] = {
        "g=1", "n_ls=1", "B=20", "B2=20", cm ? "compression=sum" : "compression=middle", NULL};
    kd_result am = KD_RESULT_INIT;
    KD_TEST_OK(ctt_test_run(comm, "actt", k, X, Y, 5, onec, &am));
    KD_TEST(ctt_test_f64(&am, "/test/statistic") == ctt_test_f64(&c1, "/test/statistic"),
            "actt with one length scale, %s: statistic %.17g, ctt's %.17g", onec[4],
            ctt_test_f64(&am, "/test/statistic"), ctt_test_f64(&c1, "/test/statistic"));
    kd_result_free(&am);
  }
  kd_result_free(&a1);
  kd_result_free(&c1);
  kd_result_free(&r);
  kd_result_free(&r1);
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_pointset_destroy(&X1);
  kd_pointset_destroy(&Y1);
  kd_kernel_destroy(&k);
}

/* compression: sum - the output coresets are those of ctt with the mean gaussian kernel of the
 * grid (gaussian_sum, the seed of the middle scale), the same at p ranks as on one; with
 * uncompressed bins (g = 3, bins of 100 rows) the statistics equal compression: each's; a laplace
 * kernel or an ls_list is refused naming algorithm.compression. */
static void test_sum(MPI_Comm comm) {
  const double shift[2] = {0.2, 0.0};
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kp.ls = 0.9;
  kd_kernel *k = NULL, *ks = NULL;
  kd_pointset *X = NULL, *Y = NULL, *X1 = NULL, *Y1 = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, 2, &k));
  kd_kernel_params sp = kp;
  sp.type = KD_KERNEL_GAUSSIAN_SUM;
  sp.n_ls = 4;
  sp.ls_ratio = 3.0;
  KD_TEST_OK(kd_kernel_create(&sp, 2, &ks));
  KD_TEST_OK(ctt_test_gauss(comm, 2400, 2, NULL, 51, &X));
  KD_TEST_OK(ctt_test_gauss(comm, 1600, 2, shift, 52, &Y));
  KD_TEST_OK(ctt_test_gauss(MPI_COMM_SELF, 2400, 2, NULL, 51, &X1));
  KD_TEST_OK(ctt_test_gauss(MPI_COMM_SELF, 1600, 2, shift, 52, &Y1));
  const char *st[] = {"s=10", "g=1",   "n_ls=4",          "ls_ratio=3",
                      "B=59", "B2=50", "compression=sum", NULL};
  const char *c[] = {"s=10", "g=1", "B=1", NULL};
  kd_result r = KD_RESULT_INIT, r1 = KD_RESULT_INIT, rc = KD_RESULT_INIT;
  KD_TEST_OK(ctt_test_run(comm, "actt", k, X, Y, 21, st, &r));
  KD_TEST_OK(ctt_test_run(MPI_COMM_SELF, "actt", k, X1, Y1, 21, st, &r1));
  KD_TEST_OK(ctt_test_run(comm, "ctt", ks, X, Y, kd_rng_u64(21, KD_CTT_STREAM_ACTT, 2), c, &rc));
  KD_TEST(
      r.n == rc.n && r.n > 0 && !memcmp(r.points, rc.points, sizeof(double) * (size_t)(r.n * r.d)),
      "actt compression: sum: %lld coreset rows, ctt with gaussian_sum gives %lld (or other "
      "rows)",
      (long long)r.n, (long long)rc.n);
  KD_TEST(same_f64(&r, &r1, "/test/statistics") && same_f64(&r, &r1, "/test/thresholds") &&
              same_f64(&r, &r1, "/test/u_alpha") &&
              ctt_test_i64(&r, "/test/reject") == ctt_test_i64(&r1, "/test/reject"),
          "actt compression: sum: the outputs at %d ranks differ from those on one",
          kd_dist_size(comm));
  /* its coreset kernel means (the mean of the five G_j) are ctt's with the mean kernel */
  const kd_result_dataset *gs = kd_result_find(&r, "/test/coreset_kernel_means"),
                          *gc = kd_result_find(&rc, "/test/coreset_kernel_means");
  double gdiff = gs && gc && gs->dims[0] == gc->dims[0] ? 0.0 : INFINITY;
  for (int64_t q = 0; isfinite(gdiff) && q < gs->dims[0] * gs->dims[0]; q++)
    gdiff = fmax(gdiff, fabs(gs->f64[q] - gc->f64[q]));
  KD_TEST(gdiff <= 1e-14 && same_f64(&r, &r1, "/test/coreset_kernel_means"),
          "actt compression: sum: coreset kernel means differ from ctt's with gaussian_sum by %g "
          "(or across ranks)",
          gdiff);
  kd_result_free(&r);
  kd_result_free(&r1);
  kd_result_free(&rc);
  /* uncompressed bins: the kernel of the compression does not matter */
  const char *u_sum[] = {"s=10", "g=3", "B=49", "B2=40", "compression=sum", NULL},
             *u_each[] = {"s=10", "g=3", "B=49", "B2=40", NULL};
  kd_pointset *Xs = NULL, *Ys = NULL;
  KD_TEST_OK(ctt_test_gauss(comm, 600, 2, NULL, 11, &Xs));
  KD_TEST_OK(ctt_test_gauss(comm, 400, 2, shift, 12, &Ys));
  KD_TEST_OK(ctt_test_run(comm, "actt", k, Xs, Ys, 7, u_sum, &r));
  KD_TEST_OK(ctt_test_run(comm, "actt", k, Xs, Ys, 7, u_each, &r1));
  KD_TEST(same_f64(&r, &r1, "/test/statistics") && same_f64(&r, &r1, "/test/thresholds"),
          "actt with uncompressed bins: compression sum and each differ");
  kd_result_free(&r);
  kd_result_free(&r1);
  const double lsl[3] = {0.5, 1.0, 3.0};
  const kd_ctt_in ti = {.y = Ys, .ls_list = lsl, .n_ls_list = 3};
  const kd_err esum = ctt_test_run_in(comm, "actt", k, Xs, &ti, 7, u_sum, &r);
  KD_TEST(esum == KD_ERR_CONFIG && strstr(kd_err_message(), "algorithm.compression"),
          "actt compression: sum with an ls_list: refused naming algorithm.compression (got %d, "
          "'%s')",
          (int)esum, kd_err_message());
  kd_err_clear();
  kd_result_free(&r);
  const char *lap[] = {"s=8", "compression=sum", NULL};
  KD_TEST(ctt_test_config_error(comm, "actt", lap, "algorithm.compression", KD_KERNEL_LAPLACE),
          "actt compression: sum with a laplace kernel: KD_ERR_CONFIG naming "
          "algorithm.compression (got '%s')",
          kd_err_message());
  kd_pointset_destroy(&Xs);
  kd_pointset_destroy(&Ys);
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_pointset_destroy(&X1);
  kd_pointset_destroy(&Y1);
  kd_kernel_destroy(&k);
  kd_kernel_destroy(&ks);
}

/* T replicates, replicate t on rank t mod p alone; rejections counted on every rank. Each
 * replicate checks u_alpha in [0, umax] and its calibration rate <= alpha (u_alpha > 0). lists:
 * actt's ls_list and weights (its y unused; NULL: the grid, equal weights, umax = 5). */
static int replicates(MPI_Comm comm, const char *const *st, int64_t m, int64_t n, double shift,
                      int T, uint64_t seed, const kd_ctt_in *lists, double umax) {
  const int rank = kd_dist_rank(comm), p = kd_dist_size(comm);
  const double mx[2] = {shift, 0.0};
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, 2, &k));
  int nrej = 0;
  for (int t = rank; t < T; t += p) {
    kd_pointset *X = NULL, *Y = NULL;
    kd_result r = KD_RESULT_INIT;
    KD_TEST_OK(ctt_test_gauss(MPI_COMM_SELF, m, 2, NULL, seed + 3 * (uint64_t)t, &X));
    KD_TEST_OK(ctt_test_gauss(MPI_COMM_SELF, n, 2, mx, seed + 3 * (uint64_t)t + 1, &Y));
    kd_ctt_in ti = {.y = Y};
    if (lists) {
      ti = *lists;
      ti.y = Y;
    }
    KD_TEST_OK(
        ctt_test_run_in(MPI_COMM_SELF, "actt", k, X, &ti, seed + 3 * (uint64_t)t + 2, st, &r));
    nrej += (int)ctt_test_i64(&r, "/test/reject");
    const double u = ctt_test_f64(&r, "/test/u_alpha"),
                 c = ctt_test_f64(&r, "/test/calibration_rate");
    /* u = 0 (thresholds at the maxima: no rejection) is the floor, whatever its rate */
    KD_TEST(u >= 0.0 && u <= umax && (c <= 0.05 || u == 0.0),
            "replicate %d: u_alpha %.6g, calibration rate %.4f", t, u, c);
    kd_result_free(&r);
    kd_pointset_destroy(&X);
    kd_pointset_destroy(&Y);
  }
  MPI_Allreduce(MPI_IN_PLACE, &nrej, 1, MPI_INT, MPI_SUM, comm);
  kd_kernel_destroy(&k);
  return nrej;
}

static void test_level(MPI_Comm comm, int64_t m, int64_t n, const kd_ctt_in *lists, double umax) {
  const int T = KD_TEST_SANITIZED ? 50 : 200;
  const char *st[] = {"g=0", NULL}; /* B = 299, B2 = 200, B3 = 20, n_ls = 5 */
  const double t0 = MPI_Wtime();
  const int nrej = replicates(comm, st, m, n, 0.0, T, 5000, lists, umax);
  const double rate = nrej / (double)T, se0 = sqrt(0.05 * 0.95 / T);
  if (kd_test_rank() == 0)
    printf("level actt (m=%lld, n=%lld%s): rejection %.4f (%d/%d), %.1f s\n", (long long)m,
           (long long)n, lists ? ", ls_list and weights" : "", rate, nrej, T, MPI_Wtime() - t0);
  KD_TEST(rate <= 0.05 + 3 * se0, "actt: null rejection rate %.4f > 0.05 + 3 SE = %.4f", rate,
          0.05 + 3 * se0);
  if (!KD_TEST_SANITIZED) KD_TEST(nrej >= 1, "actt: never rejected in %d null replicates", T);
}

/* level at m = n = 1024 with settings st (the grid, equal weights) */
static void test_level_st(MPI_Comm comm, const char *const *st, const char *what) {
  const int T = KD_TEST_SANITIZED ? 50 : 200;
  const int nrej = replicates(comm, st, 1024, 1024, 0.0, T, 6000, NULL, 5.0);
  const double rate = nrej / (double)T, se0 = sqrt(0.05 * 0.95 / T);
  if (kd_test_rank() == 0)
    printf("level actt (m=n=1024, %s): rejection %.4f (%d/%d)\n", what, rate, nrej, T);
  KD_TEST(rate <= 0.05 + 3 * se0, "actt %s: null rejection rate %.4f > 0.05 + 3 SE", what, rate);
}

static void test_power(MPI_Comm comm) {
  const int T = KD_TEST_SANITIZED ? 20 : 100;
  const char *st[] = {"g=1", NULL};
  const double t0 = MPI_Wtime();
  const int nrej = replicates(comm, st, 4096, 4096, 0.3, T, 9000, NULL, 5.0);
  if (kd_test_rank() == 0)
    printf("power actt (g=1): rejection %.3f (%d/%d), %.1f s\n", nrej / (double)T, nrej, T,
           MPI_Wtime() - t0);
  KD_TEST(nrej >= 0.9 * T, "actt: power %.2f < 0.9 at a 0.3 shift, m = n = 4096", nrej / (double)T);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  conformance_case(comm, NULL, NULL);
  const double lsl[5] = {0.3, 0.7, 1.0, 2.5, 6.0}, wl[5] = {0.5, 0.2, 0.1, 0.1, 0.1};
  conformance_case(comm, lsl, wl);
  test_lists_same(comm);
  test_ranks(comm);
  test_level(comm, 1024, 1024, NULL, 5.0);
  test_level(comm, 1000, 700, NULL, 5.0);
  const kd_ctt_in lists = {.ls_list = lsl, .n_ls_list = 5, .weights = wl, .n_weights = 5};
  test_level(comm, 1024, 1024, &lists, 2.0);
  test_sum(comm);
  const char *sum_st[] = {"g=0", "compression=sum", NULL};
  test_level_st(comm, sum_st, "compression: sum");
  test_power(comm);
  const char *bad[] = {"n_ls=3", "ls_ratio=1", "s=8", NULL}, *lin[] = {"s=8", NULL};
  KD_TEST(ctt_test_config_error(comm, "actt", bad, "algorithm.ls_ratio", KD_KERNEL_GAUSSIAN),
          "actt, ls_ratio = 1: KD_ERR_CONFIG naming algorithm.ls_ratio (got '%s')",
          kd_err_message());
  KD_TEST(ctt_test_config_error(comm, "actt", lin, "kernel.name", KD_KERNEL_LINEAR),
          "actt, linear kernel: KD_ERR_CONFIG naming kernel.name (got '%s')", kd_err_message());
  return kd_test_finish();
}
