/* test_target_estimate.c - the estimated MMD of an empirical target (target.self: estimate,
 * src/embed/self_estimate.c) against a serial transcription and the exact value:
 *  - one estimate equals the serial transcription (same sampled rows, brute-force z_P and z_Q)
 *    to 1e-12 relative, identical bits on every rank, at 1, 2 and 4 ranks;
 *  - unbiased: the mean of 200 seeded estimates of MMD^2 is within 4 standard errors of the
 *    exact MMD^2, and the reported standard error matches the spread of the estimates (ratio in
 *    [0.75, 1.33]); uniform and weighted targets;
 *  - the sampled cross term (target.cross: estimate): equal to its serial transcription (atoms
 *    drawn by |w|, signed weights), bitwise identical on every rank, unbiased and calibrated over
 *    200 seeds (weighted target); mmd2_minus_self NaN; auto samples only above
 *    KD_CROSS_EXACT_MAX;
 *  - the control variate: the target against itself gives MMD^2 = 0 with standard error 0;
 *  - the modes: auto is exact up to KD_SELF_EXACT_EVALS = 2^28 evaluations (23169 rows, not
 *    23170; IMQ kernel, which the fast Gauss transform does not cover) and once zz is known; skip
 * gives NaN and the exact MMD^2 - zz;
 *  - the default sample (self_rows 0): as many rows as the rule has atoms, at least 256. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"

enum { N = 5000, D = 2, M = 40, ROWS = 200, SEEDS = 200 };

static kd_pointset *mk_target(MPI_Comm c, int weighted, double *Y, double *v) {
  return kd_test_mixture_target(c, N, D, 5, weighted ? 5 : 0, Y, v);
}

static void moments(const double *x, int R, double *mean, double *var_of_mean) {
  double m = 0, var = 0;
  for (int s = 0; s < R; s++) m += x[s];
  m /= R;
  for (int s = 0; s < R; s++) var += (x[s] - m) * (x[s] - m);
  *mean = m;
  *var_of_mean = var / (R - 1) / R;
}

/* The serial transcription of the cross term's sample: ROWS atoms drawn with probabilities |w_i|
 * (inverse CDF over the prefix sums in atom order), g = S sgn(w_I) (z_P - z_Q)(x_I). */
static void serial_cross(kd_kernel *k, const double *Y, const double *v, const double *X,
                         const double *w, uint64_t seed, double *mg, double *vg) {
  kd_rng r = kd_rng_make(seed, 0x43524f53u);
  double pre[M + 1], g[ROWS];
  pre[0] = 0;
  for (int i = 0; i < M; i++) pre[i + 1] = pre[i] + fabs(w[i]);
  const double S = pre[M];
  for (int s = 0; s < ROWS; s++) {
    const double u = kd_rng_next_uniform(&r) * S;
    int i = 0;
    while (i + 1 < M && pre[i + 1] <= u) i++;
    double zp = 0, zq = 0;
    for (int j = 0; j < N; j++) zp += v[j] * kd_kernel_eval(k, X + i * D, Y + j * D);
    for (int l = 0; l < M; l++) zq += w[l] * kd_kernel_eval(k, X + i * D, X + l * D);
    g[s] = (w[i] < 0 ? -S : S) * (zp - zq);
  }
  moments(g, ROWS, mg, vg);
}

/* The serial transcription: draw ROWS rows by weight (inverse CDF over 2048-row chunk sums, as
 * documented), z_P and z_Q by brute force, the control-variate mean and its standard error. */
static void serial_estimate(kd_kernel *k, const double *Y, const double *v, int weighted,
                            const double *X, const double *w, uint64_t seed, double wz, double wkw,
                            double *mmd2, double *se) {
  kd_rng r = kd_rng_make(seed, 0x53454c46u);
  double f[ROWS], pre[N / 2048 + 2] = {0};
  const int nc = (N + 2047) / 2048;
  for (int c = 0; c < nc; c++) {
    double a = 0;
    for (int j = c * 2048; j < N && j < (c + 1) * 2048; j++) a += v[j] * (weighted ? 1 : 0);
    pre[c + 1] = a;
  }
  for (int c = 0; c < nc; c++) pre[c + 1] += pre[c];
  for (int s = 0; s < ROWS; s++) {
    int idx = 0;
    if (!weighted) {
      idx = (int)kd_rng_next_below(&r, N);
    } else { /* weights are normalised here; the library sums raw weights: same ratios */
      const double u = kd_rng_next_uniform(&r) * pre[nc];
      int c = 0;
      while (c + 1 < nc && pre[c + 1] <= u) c++;
      double a = pre[c];
      int j = c * 2048, j1 = (c + 1) * 2048 < N ? (c + 1) * 2048 : N;
      for (; j + 1 < j1; j++) {
        a += v[j];
        if (u < a) break;
      }
      idx = j;
    }
    double zp = 0, zq = 0;
    for (int j = 0; j < N; j++) zp += v[j] * kd_kernel_eval(k, Y + idx * D, Y + j * D);
    for (int i = 0; i < M; i++) zq += w[i] * kd_kernel_eval(k, Y + idx * D, X + i * D);
    f[s] = zp - zq;
  }
  double mean = 0, var = 0;
  moments(f, ROWS, &mean, &var);
  if (isnan(wz)) { /* the cross term sampled */
    double mg = 0, vg = 0;
    serial_cross(k, Y, v, X, w, seed, &mg, &vg);
    *mmd2 = mean - mg;
    *se = sqrt(var + vg);
    return;
  }
  *mmd2 = mean - wz + wkw;
  *se = sqrt(var);
}

/* v has the same bits on every rank of c */
static int same_on_ranks(MPI_Comm c, double v) {
  double mx[2] = {v, -v};
  MPI_Allreduce(MPI_IN_PLACE, mx, 2, MPI_DOUBLE, MPI_MAX, c);
  return mx[0] == v && -mx[1] == v;
}

/* SEEDS estimates with seeds seed0 + 1 .. seed0 + SEEDS (the target's mode and cross mode as set):
 * their mean within 4 standard errors of the exact MMD^2, and the mean reported standard error
 * within [0.75, 1.33] of their spread. */
static void check_seeds(kd_target *t, const double *X, const double *w, double exact, int seed0,
                        const char *what) {
  kd_mmd_info es;
  double sum = 0, sum2 = 0, sesum = 0;
  for (int s = 1; s <= SEEDS; s++) {
    KD_TEST_OK(kd_target_set_self(t, KD_SELF_ESTIMATE, ROWS, (uint64_t)(seed0 + s)));
    KD_TEST_OK(kd_mmd_eval(t, X, w, M, &es));
    sum += es.mmd2;
    sum2 += es.mmd2 * es.mmd2;
    sesum += es.mmd2_se;
  }
  const double mean = sum / SEEDS, sd = sqrt((sum2 - SEEDS * mean * mean) / (SEEDS - 1));
  KD_TEST(fabs(mean - exact) <= 4 * sd / sqrt(SEEDS),
          "%s unbiased: mean of %d estimates %.6g vs exact %.6g (sd %.3g)", what, SEEDS, mean,
          exact, sd);
  KD_TEST(sesum / SEEDS >= 0.75 * sd && sesum / SEEDS <= 1.33 * sd,
          "%s standard error %.3g vs spread %.3g", what, sesum / SEEDS, sd);
}

/* The sampled cross term on a rule with unequal and one negative weight: one estimate against the
 * serial transcription, the same bits on every rank, unbiased and calibrated over SEEDS seeds. */
static void cross_case(MPI_Comm c, kd_kernel *k, kd_target *t, const double *Y, const double *v,
                       int weighted, const double *X) {
  double w[M], s = 0, sm = 0, sse = 0;
  for (int i = 0; i < M; i++) s += (w[i] = 1.0 + 0.9 * cos(1.7 * i));
  for (int i = 0; i < M; i++) w[i] /= s;
  w[3] = -0.004;
  w[M - 1] = 0.0; /* never drawn */
  kd_mmd_info ex, es;
  KD_TEST_OK(kd_target_set_self(t, KD_SELF_EXACT, 0, 0));
  KD_TEST_OK(kd_mmd_eval(t, X, w, M, &ex));
  KD_TEST(ex.cross_rows == 0, "exact: no atoms sampled");
  KD_TEST_OK(kd_target_set_cross(t, KD_CROSS_ESTIMATE));
  KD_TEST_OK(kd_target_set_self(t, KD_SELF_ESTIMATE, ROWS, 11));
  KD_TEST_OK(kd_mmd_eval(t, X, w, M, &es));
  serial_estimate(k, Y, v, weighted, X, w, 11, NAN, NAN, &sm, &sse);
  KD_TEST(es.rows == ROWS && es.cross_rows == ROWS, "cross: rows %lld and atoms %lld",
          (long long)es.rows, (long long)es.cross_rows);
  KD_TEST_REL(es.mmd2, sm, 1e-10, "sampled cross term vs serial transcription");
  KD_TEST_REL(es.mmd2_se, sse, 1e-9, "its standard error vs serial transcription");
  KD_TEST(isnan(es.mmd2_minus_self), "sampled cross term: mmd2_minus_self NaN");
  KD_TEST(same_on_ranks(c, es.mmd2), "cross estimate bitwise identical on all ranks");
  check_seeds(t, X, w, ex.mmd2, 1000, "cross");
  /* auto: exact cross term at n N = M N <= KD_CROSS_EXACT_MAX */
  KD_TEST_OK(kd_target_set_cross(t, KD_CROSS_AUTO));
  KD_TEST_OK(kd_mmd_eval(t, X, w, M, &es));
  KD_TEST(es.cross_rows == 0 && !isnan(es.mmd2_minus_self), "auto: exact cross term");
  KD_TEST(kd_target_set_cross(t, (kd_cross_mode)7) == KD_ERR_ARG, "bad cross mode refused");
  kd_err_clear();
}

static void run_case(MPI_Comm c, int weighted) {
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  p.ls = 1.0;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, D, &k));
  double *Y = malloc(sizeof(double) * N * D), *v = malloc(sizeof(double) * N);
  double X[M * D], w[M];
  kd_pointset *tp = mk_target(c, weighted, Y, v);
  kd_target *t = NULL;
  for (int i = 0; i < M; i++) { /* a poor rule: every 125th target row, equal weights */
    memcpy(X + i * D, Y + (size_t)i * 125 * D, sizeof(double) * D);
    w[i] = 1.0 / M;
  }
  KD_TEST_OK(kd_target_create_empirical(k, tp, 0, &t));
  /* exact parts */
  double wz = 0, wkw = 0;
  for (int i = 0; i < M; i++) {
    double z = 0;
    for (int j = 0; j < N; j++) z += v[j] * kd_kernel_eval(k, X + i * D, Y + j * D);
    wz += w[i] * z;
    for (int l = 0; l < M; l++) wkw += w[i] * w[l] * kd_kernel_eval(k, X + i * D, X + l * D);
  }
  kd_mmd_info ex, es;
  KD_TEST(kd_target_mmd_method(t) == KD_MMD_EXACT, "auto with N(N+1)/2 <= 2^28: exact");
  KD_TEST_OK(kd_target_set_self(t, KD_SELF_EXACT, 0, 0));
  KD_TEST_OK(kd_mmd_eval(t, X, w, M, &ex));
  KD_TEST(ex.method == KD_MMD_EXACT && ex.mmd_se == 0 && ex.mmd2_se == 0, "exact: no error");
  KD_TEST_REL(ex.mmd2_minus_self, wkw - 2 * wz, 1e-12, "mmd2_minus_self exact");
  /* one estimate vs the serial transcription */
  double sm = 0, sse = 0;
  KD_TEST_OK(kd_target_set_self(t, KD_SELF_ESTIMATE, ROWS, 7));
  KD_TEST(kd_target_mmd_method(t) == KD_MMD_ESTIMATE, "estimate mode");
  KD_TEST_OK(kd_mmd_eval(t, X, w, M, &es));
  serial_estimate(k, Y, v, weighted, X, w, 7, wz, wkw, &sm, &sse);
  KD_TEST(es.method == KD_MMD_ESTIMATE && es.rows == ROWS, "estimate: method and rows");
  KD_TEST_REL(es.mmd2, sm, 1e-10, "estimate vs serial transcription");
  KD_TEST_REL(es.mmd2_se, sse, 1e-9, "standard error vs serial transcription");
  KD_TEST(es.mmd >= 0 && es.mmd_se >= 0, "mmd and mmd_se >= 0");
  KD_TEST(same_on_ranks(c, es.mmd2), "estimate bitwise identical on all ranks");
  /* unbiased, and the standard error is calibrated */
  check_seeds(t, X, w, ex.mmd2, 0, "estimate");
  if (weighted) cross_case(c, k, t, Y, v, weighted, X); /* once: the atoms do not depend on v */
  /* control variate: the target against itself */
  KD_TEST_OK(kd_target_set_self(t, KD_SELF_ESTIMATE, ROWS, 3));
  KD_TEST_OK(kd_mmd_eval(t, Y, v, N, &es));
  KD_TEST(fabs(es.mmd2) <= 1e-12 && es.mmd2_se <= 1e-12, "P against P: %.3g +- %.3g", es.mmd2,
          es.mmd2_se);
  KD_TEST_OK(kd_target_set_cross(t, KD_CROSS_ESTIMATE));
  KD_TEST_OK(kd_mmd_eval(t, Y, v, N, &es));
  KD_TEST(es.cross_rows == ROWS && fabs(es.mmd2) <= 1e-12 && es.mmd2_se <= 1e-12,
          "P against P, sampled cross term: %.3g +- %.3g", es.mmd2, es.mmd2_se);
  KD_TEST_OK(kd_target_set_cross(t, KD_CROSS_AUTO));
  /* skip; auto once zz is known */
  KD_TEST_OK(kd_target_set_self(t, KD_SELF_SKIP, 0, 0));
  KD_TEST_OK(kd_mmd_eval(t, X, w, M, &es));
  KD_TEST(es.method == KD_MMD_SKIPPED && isnan(es.mmd) && isnan(es.mmd_se), "skip: NaN");
  KD_TEST_REL(es.mmd2_minus_self, wkw - 2 * wz, 1e-12, "skip: mmd2_minus_self");
  KD_TEST_OK(kd_target_set_self(t, KD_SELF_AUTO, 0, 0));
  KD_TEST(kd_target_mmd_method(t) == KD_MMD_EXACT, "auto: exact (small N, zz known)");
  KD_TEST(kd_target_set_self(t, (kd_self_mode)9, 0, 0) == KD_ERR_ARG, "bad mode refused");
  kd_err_clear();
  kd_target_destroy(&t);
  kd_pointset_destroy(&tp);
  kd_kernel_destroy(&k);
  free(Y);
  free(v);
}

/* target.self: auto by evaluation count at the boundary, and the default sample size */
static void auto_policy(MPI_Comm c) {
  enum { NB = 23170, MB = 300 };
  /* the IMQ kernel: for the gaussian in d <= 2, auto evaluates by the fast Gauss transform above
   * the limit (test_target_fgt) */
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_IMQ);
  kd_kernel *k = NULL;
  kd_mmd_info es;
  p.ls = 1.0;
  KD_TEST_OK(kd_kernel_create(&p, D, &k));
  double *Y = malloc(sizeof(double) * NB * D), *v = malloc(sizeof(double) * NB), w[MB];
  for (int i = 0; i < MB; i++) w[i] = 1.0 / MB;
  for (kd_gidx n = NB - 1; n <= NB; n++) {
    kd_pointset *tp = kd_test_mixture_target(c, n, D, 5, 0, Y, v);
    kd_target *t = NULL;
    KD_TEST_OK(kd_target_create_empirical(k, tp, 0, &t));
    KD_TEST(kd_target_mmd_method(t) == (n == NB ? KD_MMD_ESTIMATE : KD_MMD_EXACT),
            "auto at %lld rows: %s", (long long)n, n == NB ? "estimate" : "exact");
    if (n == NB) {
      KD_TEST_OK(kd_mmd_eval(t, Y, w, 40, &es));
      KD_TEST(es.method == KD_MMD_ESTIMATE && es.rows == 256, "40 atoms: 256 rows (%lld)",
              (long long)es.rows);
      KD_TEST_OK(kd_mmd_eval(t, Y, w, MB, &es));
      KD_TEST(es.rows == MB && es.mmd_se > 0, "%d atoms: as many rows (%lld)", MB,
              (long long)es.rows);
    }
    kd_target_destroy(&t);
    kd_pointset_destroy(&tp);
  }
  kd_kernel_destroy(&k);
  free(Y);
  free(v);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  auto_policy(MPI_COMM_WORLD);
  run_case(MPI_COMM_WORLD, 0);
  run_case(MPI_COMM_WORLD, 1);
  return kd_test_finish();
}
