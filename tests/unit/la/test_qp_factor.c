/* test_qp_factor.c - kd_simplex_qp_fac (the face Hessian's Cholesky factor kept between solves):
 * on a fully-corrective herding run (Gaussian kernel, 30 x 30 grid target and candidates) every
 * solve matches kd_simplex_qp's objective and KKT conditions, the factor is updated (appends,
 * deletes), not rebuilt, and it survives save / load bit for bit; malformed saved factors are
 * rejected. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"
#include "la/la_impl.h"

#define G 30
#define M (G * G)
#define NIT 150

static double kern(const double *x, const double *y) {
  const double dx = x[0] - y[0], dy = x[1] - y[1];
  return exp(-(dx * dx + dy * dy) / (2 * 0.3 * 0.3));
}

static double obj(int n, const double *Q, const double *c, const double *w) {
  double f = 0;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += Q[i * n + j] * w[j];
    f += 0.5 * w[i] * s - c[i] * w[i];
  }
  return f;
}

/* simplex KKT gap w^T g - min g */
static double kkt(int n, const double *Q, const double *c, const double *w) {
  double wg = 0, gmin = INFINITY;
  for (int i = 0; i < n; i++) {
    double g = -c[i];
    for (int j = 0; j < n; j++) g += Q[i * n + j] * w[j];
    wg += w[i] * g;
    gmin = fmin(gmin, g);
  }
  return wg - gmin;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  static double P[M][2], z[M], Q[NIT * NIT], w[NIT], wd[NIT], zs[NIT];
  static int S[NIT];
  for (int i = 0; i < M; i++) {
    P[i][0] = -1 + (2.0 * (i % G) + 1) / G;
    P[i][1] = -1 + (2.0 * (i / G) + 1) / G;
  }
  for (int i = 0; i < M; i++) {
    double s = 0;
    for (int j = 0; j < M; j++) s += kern(P[i], P[j]);
    z[i] = s / M;
  }
  kd_qp_fac f;
  memset(&f, 0, sizeof f);
  f.piv = -1;
  int n = 1, worst_it = 0;
  double worst_df = 0, worst_kkt = 0, worst_dw = 0;
  S[0] = 0;
  for (int i = 1; i < M; i++)
    if (z[i] > z[S[0]]) S[0] = i;
  w[0] = 1;
  for (int it = 0; it < NIT - 1; it++) {
    /* LMO over the grid: argmin_c (K w)(c) - z(c) */
    int best = -1;
    double gbest = INFINITY;
    for (int c = 0; c < M; c++) {
      double g = -z[c];
      for (int a = 0; a < n; a++) g += w[a] * kern(P[c], P[S[a]]);
      if (g < gbest) gbest = g, best = c;
    }
    int dup = 0;
    for (int a = 0; a < n; a++) dup |= S[a] == best;
    if (dup) break;
    S[n] = best;
    w[n++] = 0;
    for (int a = 0; a < n; a++) {
      zs[a] = z[S[a]];
      for (int b = 0; b < n; b++) Q[a * n + b] = kern(P[S[a]], P[S[b]]);
    }
    memcpy(wd, w, sizeof(double) * n);
    KD_TEST_OK(kd_simplex_qp(n, Q, zs, 1e-12, 20 * n + 100, wd));
    KD_TEST_OK(kd_simplex_qp_fac(n, Q, zs, 1e-12, 20 * n + 100, w, &f));
    const double df = fabs(obj(n, Q, zs, w) - obj(n, Q, zs, wd)), gap = kkt(n, Q, zs, w);
    double dw = 0, sum = 0, wmin = INFINITY;
    for (int a = 0; a < n; a++) {
      dw = fmax(dw, fabs(w[a] - wd[a]));
      sum += w[a];
      wmin = fmin(wmin, w[a]);
    }
    KD_TEST(wmin >= 0 && fabs(sum - 1) <= 1e-14,
            "it %d: weights on the simplex (min %g, sum %.17g)", it, wmin, sum);
    if (df > worst_df) worst_df = df, worst_it = it;
    worst_kkt = fmax(worst_kkt, gap);
    worst_dw = fmax(worst_dw, dw);
    /* drop zero weights, as herding does */
    kd_qp_fac_compact(&f, n, w);
    int k = 0;
    for (int a = 0; a < n; a++)
      if (w[a] > 0) {
        S[k] = S[a];
        w[k++] = w[a];
      }
    n = k;
  }
  printf(
      "atoms %d; factor: %lld starts, %lld appends, %lld deletes, %lld fallbacks; worst "
      "|f - f_dense| %.3g (iteration %d), KKT gap %.3g, |w - w_dense| %.3g\n",
      n, (long long)f.starts, (long long)f.appends, (long long)f.deletes, (long long)f.fallbacks,
      worst_df, worst_it, worst_kkt, worst_dw);
  KD_TEST(worst_df <= 1e-14, "objective as the dense solve's: worst difference %.3g", worst_df);
  KD_TEST(worst_kkt <= 1e-13, "KKT gap <= 1e-13: %.3g", worst_kkt);
  KD_TEST(worst_dw <= 1e-9, "weights as the dense solve's: worst difference %.3g", worst_dw);
  KD_TEST(n >= 60, "the run keeps many atoms: %d", n);
  KD_TEST(f.appends >= NIT - 1 && f.deletes >= 1,
          "the factor is updated: %lld appends, %lld deletes", (long long)f.appends,
          (long long)f.deletes);
  KD_TEST(f.starts <= 3 && f.fallbacks == 0,
          "and not rebuilt: %lld starts, %lld steps by the dense solve", (long long)f.starts,
          (long long)f.fallbacks);
  KD_TEST(f.m == n - 1 && f.piv >= 0 && f.piv < n, "factor covers the atoms: m %d, pivot %d", f.m,
          f.piv);

  /* save / load: the same factor, bit for bit; malformed vectors are rejected */
  {
    const int64_t len = kd_qp_fac_size(&f);
    double *v = malloc(sizeof(double) * len), *v2 = malloc(sizeof(double) * len);
    kd_qp_fac g;
    memset(&g, 0, sizeof g);
    kd_qp_fac_save(&f, v);
    KD_TEST_OK(kd_qp_fac_load(&g, v, len, "test"));
    kd_qp_fac_save(&g, v2);
    KD_TEST(memcmp(v, v2, sizeof(double) * len) == 0, "save / load round trip (%lld values)",
            (long long)len);
    KD_TEST(kd_qp_fac_load(&g, v, len - 1, "test") == KD_ERR_FILE, "short vector rejected");
    kd_err_clear();
    v[0] = 1e300;
    KD_TEST(kd_qp_fac_load(&g, v, len, "test") == KD_ERR_FILE, "huge pivot rejected");
    kd_err_clear();
    v[0] = v2[0];
    v[3] = -2;
    KD_TEST(kd_qp_fac_load(&g, v, len, "test") == KD_ERR_FILE, "negative index rejected");
    kd_err_clear();
    KD_TEST(g.m == 0 && g.piv == -1, "a rejected load leaves an empty factor");
    /* a saved factor whose indices repeat passes the range checks; the next solve sees it
     * does not describe a face, starts the factor anew and solves as the dense path does */
    memcpy(v, v2, sizeof(double) * len);
    v[4] = v[3];
    KD_TEST_OK(kd_qp_fac_load(&g, v, len, "test"));
    for (int a = 0; a < n; a++) {
      zs[a] = z[S[a]];
      for (int b = 0; b < n; b++) Q[a * n + b] = kern(P[S[a]], P[S[b]]);
      w[a] = wd[a] = 1.0 / n;
    }
    KD_TEST_OK(kd_simplex_qp(n, Q, zs, 1e-12, 20 * n + 100, wd));
    KD_TEST_OK(kd_simplex_qp_fac(n, Q, zs, 1e-12, 20 * n + 100, w, &g));
    KD_TEST(g.starts == 1 && g.fallbacks == 0,
            "a factor with a repeated index is started anew (%lld starts, %lld fallbacks)",
            (long long)g.starts, (long long)g.fallbacks);
    KD_TEST(fabs(obj(n, Q, zs, w) - obj(n, Q, zs, wd)) <= 1e-14,
            "and the solve is the dense one's");
    kd_qp_fac_free(&g);
    free(v);
    free(v2);
  }
  kd_qp_fac_free(&f);
  return kd_test_finish();
}
