/* test_gs_halve.c - GS-Halve-Cubic (Alg. B.7, rank-one inverse downdates, src/algo/thinning/
 * halve.c) against a direct implementation of the GS walk of Alg. B.6 that solves the step
 * problem u = argmin u^T Q u (u_p = 1, u_i = 0 off the active set) from scratch every iteration
 * with the same random draws. Prop. B.8: both produce the same assignments. Also checks that
 * GS-Halve keeps one point of every pair and beats a fair coin on average. Also: KH(delta) with
 * threshold: adaptive (KD_HALVE_KHA, halve.c's blocked loop) against a direct transcription of
 * Alg. B.1 with the get_swap_params thresholds of Alg. B.2 (alpha_i by the formula of Alg. B.1,
 * sigma_i by eq. (70)), same random draws: identical assignments. Serial. */
#include "algo/thinning/thin_impl.h"
#include "thin_test_util.h"

extern void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda,
                   double *b, const int *ldb, int *info);

/* Alg. B.6 with direct solves; same ridge and same order of random draws as halve.c */
static void gs_naive(kd_kernel *k, const double *X, int n, int d, uint64_t seed, uint64_t stream,
                     kd_lidx *keep) {
  const int h = n / 2;
  double *Q = calloc((size_t)h * h, sizeof(double)), *z = calloc(h, sizeof(double)),
         *u = calloc(h, sizeof(double)), *M = calloc((size_t)h * h, sizeof(double)),
         *b = calloc(h, sizeof(double));
  int *inA = calloc(h, sizeof(int)), *fr = calloc(h, sizeof(int)), *act = calloc(h, sizeof(int));
  for (int i = 0; i < h; i++)
    for (int j = 0; j < h; j++) {
      const double *ai = X + 2 * i * d, *bi = ai + d, *aj = X + 2 * j * d, *bj = aj + d;
      Q[i * h + j] = kd_kernel_eval(k, ai, aj) + kd_kernel_eval(k, bi, bj) -
                     kd_kernel_eval(k, ai, bj) - kd_kernel_eval(k, bi, aj);
    }
  double tr = 0;
  for (int i = 0; i < h; i++) tr += Q[i * h + i];
  for (int i = 0; i < h; i++) Q[i * h + i] += 1e-10 * tr / h;
  kd_rng r = kd_rng_make(seed, stream);
  int p = (int)kd_rng_next_below(&r, (uint64_t)h), nfr = 0;
  for (int i = 0; i < h; i++) inA[i] = 1;
  for (int it = 0; nfr < h && it < 4 * h + 8; it++) {
    int rem = -1;
    for (int i = 0; i < h; i++)
      if (inA[i] && fr[i]) {
        rem = i;
        break;
      }
    if (rem >= 0) {
      inA[rem] = 0;
      if (rem == p) {
        int cnt = 0;
        for (int i = 0; i < h; i++) cnt += inA[i];
        if (cnt == 0) break;
        int pick = (int)kd_rng_next_below(&r, (uint64_t)cnt);
        for (int i = 0; i < h; i++)
          if (inA[i] && pick-- == 0) {
            p = i;
            break;
          }
      }
    }
    int na = 0;
    for (int i = 0; i < h; i++)
      if (inA[i] && i != p) act[na++] = i;
    for (int i = 0; i < h; i++) u[i] = 0;
    u[p] = 1;
    if (na > 0) {
      for (int a = 0; a < na; a++) {
        for (int c = 0; c < na; c++) M[a * na + c] = Q[act[a] * h + act[c]];
        b[a] = -Q[act[a] * h + p];
      }
      int one = 1, info = 0;
      dposv_("L", &na, &one, M, &na, b, &na, &info);
      for (int a = 0; a < na; a++) u[act[a]] = b[a];
    }
    double dp = INFINITY, dm = INFINITY;
    for (int i = 0; i < h; i++) {
      if (!inA[i] || u[i] == 0.0) continue;
      double up = ((u[i] > 0 ? 1.0 : -1.0) - z[i]) / u[i];
      double dn = ((u[i] > 0 ? -1.0 : 1.0) - z[i]) / u[i];
      if (up < dp) dp = up;
      if (-dn < dm) dm = -dn;
    }
    if (dp < 0) dp = 0;
    if (dm < 0) dm = 0;
    double step = 0;
    if (dp + dm > 0 && isfinite(dp + dm))
      step = (kd_rng_next_uniform(&r) < dm / (dp + dm)) ? dp : -dm;
    for (int i = 0; i < h; i++) {
      if (!inA[i] || fr[i]) continue;
      z[i] += step * u[i];
      if (fabs(z[i]) >= 1.0 - 1e-9) {
        z[i] = z[i] > 0 ? 1.0 : -1.0;
        fr[i] = 1;
        nfr++;
      }
    }
  }
  for (int i = 0; i < h; i++) keep[i] = 2 * i + (z[i] >= 0 ? 0 : 1);
  free(Q);
  free(z);
  free(u);
  free(M);
  free(b);
  free(inA);
  free(fr);
  free(act);
}

/* Alg. B.1 with a_i, sigma_i from get_swap_params(sigma_{i-1}, b_i, delta_i), delta_i = delta /
 * (2 i (log(n/2) + 1)) (i 1-based, Alg. B.2); alpha_i = sum_{j < 2i-1} (k(x_j,x) - k(x_j,x')) -
 * 2 sum_{z in S1} (k(z,x) - k(z,x')); swap with probability min(1, (1 - alpha_i / a_i)_+ / 2). */
static void kha_naive(kd_kernel *k, const double *X, int n, int d, double delta, uint64_t seed,
                      uint64_t stream, kd_lidx *keep) {
  double sig2 = 0.0;
  for (int i = 0; i < n / 2; i++) {
    const double *x = X + 2 * i * d, *xp = x + d;
    double b2 = kd_kernel_eval(k, x, x) + kd_kernel_eval(k, xp, xp) - 2 * kd_kernel_eval(k, x, xp);
    double b = sqrt(fmax(b2, 0.0));
    b2 = b * b;
    double di = delta / (2.0 * (i + 1) * (log(n / 2.0) + 1.0));
    double a = fmax(b * sqrt(sig2) * sqrt(2.0 * log(2.0 / di)), b2);
    if (a > 0) sig2 += b2 * fmax(1.0 + (b2 - 2.0 * a) * sig2 / (a * a), 0.0);
    double alpha = 0.0;
    for (int j = 0; j < 2 * i; j++)
      alpha += kd_kernel_eval(k, X + j * d, x) - kd_kernel_eval(k, X + j * d, xp);
    for (int j = 0; j < i; j++)
      alpha -=
          2.0 * (kd_kernel_eval(k, X + keep[j] * d, x) - kd_kernel_eval(k, X + keep[j] * d, xp));
    double prob = a > 0 ? fmin(1.0, 0.5 * fmax(1.0 - alpha / a, 0.0)) : 0.0;
    keep[i] = 2 * i + (kd_rng_uniform(seed, stream, (uint64_t)i) < prob ? 1 : 0);
  }
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const int d = 2, n = 96;
  kd_measure mu = thin_test_mixture(d);
  double *X = malloc(sizeof(double) * 1024 * d);
  KD_TEST_OK(kd_measure_sample(&mu, 3, 0, 1024, X));
  kd_kernel *k = thin_test_gauss(d);
  kd_lidx a[512], b[512];
  int same = 0;
  for (int s = 0; s < 10; s++) {
    KD_TEST_OK(kd_thin_halve(k, KD_HALVE_GS, X + s * n * d, n, d, 0.5, 50 + s, 7, a));
    gs_naive(k, X + s * n * d, n, d, 50 + s, 7, b);
    same += memcmp(a, b, sizeof(kd_lidx) * (n / 2)) == 0;
    int pairs = 1;
    for (int i = 0; i < n / 2; i++) pairs &= a[i] / 2 == i;
    KD_TEST(pairs, "one point of every pair");
  }
  KD_TEST(same == 10, "cubic GS-Halve = direct GS walk (Prop. B.8) on %d of 10 inputs", same);
  /* quality on 1024 points: GS halving vs a fair coin per pair, 5 seeds each */
  const int N = 1024;
  double xx = thin_test_self(k, X, N, d), mg = 0, mc = 0;
  int64_t idx[512];
  kd_lidx kk[512];
  for (int s = 0; s < 5; s++) {
    KD_TEST_OK(kd_thin_halve(k, KD_HALVE_GS, X, N, d, 0.5, s, 1, kk));
    for (int i = 0; i < N / 2; i++) idx[i] = kk[i];
    mg += thin_test_mmd_idx(k, X, N, d, xx, idx, NULL, N / 2) / 5;
    for (int i = 0; i < N / 2; i++) idx[i] = 2 * i + (int64_t)(kd_rng_u64(s, 99, i) & 1);
    mc += thin_test_mmd_idx(k, X, N, d, xx, idx, NULL, N / 2) / 5;
  }
  if (kd_test_rank() == 0) printf("GS-Halve 1024 -> 512: MMD %.3e, fair coin %.3e\n", mg, mc);
  KD_TEST(mg < 0.25 * mc, "GS-Halve MMD %.3e < 1/4 of the fair coin's %.3e", mg, mc);
  /* adaptive KH: blocked implementation = direct transcription (600 points: 300 pairs, 5 chunks) */
  int same_a = 0, diff_kh = 0;
  for (int s = 0; s < 3; s++) {
    const int na = 600;
    const double *Xs = X + s * 128 * d;
    KD_TEST_OK(kd_thin_halve(k, KD_HALVE_KHA, Xs, na, d, 0.5, 70 + s, 3, kk));
    kd_lidx ref[300], kh[300];
    kha_naive(k, Xs, na, d, 0.5, 70 + s, 3, ref);
    same_a += memcmp(kk, ref, sizeof(kd_lidx) * (na / 2)) == 0;
    KD_TEST_OK(kd_thin_halve(k, KD_HALVE_KH, Xs, na, d, 0.5, 70 + s, 3, kh));
    diff_kh += memcmp(kk, kh, sizeof(kd_lidx) * (na / 2)) != 0;
  }
  KD_TEST(same_a == 3, "adaptive KH = direct Alg. B.1 + get_swap_params on %d of 3 inputs", same_a);
  KD_TEST(diff_kh == 3, "adaptive thresholds change the assignment vs Alg. B.1 (%d of 3)", diff_kh);
  free(X);
  kd_kernel_destroy(&k);
  kd_measure_free(&mu);
  return kd_test_finish();
}
