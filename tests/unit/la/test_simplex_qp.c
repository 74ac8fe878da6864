/* test_simplex_qp.c - kd_simplex_qp / kd_nonneg_qp: closed-form solutions (2-D, n-D projection,
 * vertex, interior), KKT residuals, singular and near-singular PSD matrices, determinism. */
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"
#include "la/la_impl.h"

static double obj(int n, const double *Q, const double *c, const double *w) {
  double f = 0;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += Q[i * n + j] * w[j];
    f += 0.5 * w[i] * s - c[i] * w[i];
  }
  return f;
}

/* simplex KKT gap w^T g - min g, plus feasibility */
static double kkt(int n, const double *Q, const double *c, const double *w, double *sum,
                  double *wmin) {
  double wg = 0, gmin = INFINITY;
  *sum = 0;
  *wmin = INFINITY;
  for (int i = 0; i < n; i++) {
    double g = -c[i];
    for (int j = 0; j < n; j++) g += Q[i * n + j] * w[j];
    wg += w[i] * g;
    gmin = fmin(gmin, g);
    *sum += w[i];
    *wmin = fmin(*wmin, w[i]);
  }
  return wg - gmin;
}

/* Euclidean projection of v onto the simplex (sort-based; the closed form of Q = I). */
static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}
static void proj_simplex(int n, const double *v, double *out) {
  double *u = malloc(sizeof(double) * n);
  memcpy(u, v, sizeof(double) * n);
  qsort(u, n, sizeof(double), cmp_desc);
  double cs = 0, theta = 0;
  for (int i = 0; i < n; i++) {
    cs += u[i];
    double t = (cs - 1) / (i + 1);
    if (u[i] - t > 0) theta = t;
  }
  for (int i = 0; i < n; i++) out[i] = fmax(v[i] - theta, 0);
  free(u);
}

static void check_feasible(int n, const double *Q, const double *c, const double *w,
                           const char *what) {
  double s, wmin;
  double g = kkt(n, Q, c, w, &s, &wmin);
  KD_TEST(wmin >= 0, "%s: weights >= 0 (min %g)", what, wmin);
  KD_TEST_NEAR(s, 1.0, 1e-14, what);
  KD_TEST(g <= 1e-10, "%s: KKT gap %.3g", what, g);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  uint64_t seed = 42;
  /* 1. 2-D interior: Q = diag(a, b), c = 0 -> w = (b, a)/(a+b) */
  {
    double Q[4] = {3, 0, 0, 1}, c[2] = {0, 0}, w[2] = {0, 0};
    KD_TEST_OK(kd_simplex_qp(2, Q, c, 1e-14, 100, w));
    KD_TEST_NEAR(w[0], 0.25, 1e-15, "2-D w0");
    KD_TEST_NEAR(w[1], 0.75, 1e-15, "2-D w1");
  }
  /* 2. n-D interior: Q = diag(q), c = 0 -> w_i = (1/q_i) / sum 1/q_j */
  {
    enum { N = 7 };
    double Q[N * N] = {0}, c[N] = {0}, w[N] = {0}, s = 0;
    for (int i = 0; i < N; i++) {
      Q[i * N + i] = 1.0 + i;
      s += 1.0 / (1.0 + i);
    }
    KD_TEST_OK(kd_simplex_qp(N, Q, c, 1e-14, 100, w));
    for (int i = 0; i < N; i++) KD_TEST_NEAR(w[i], 1.0 / (1.0 + i) / s, 1e-14, "diag interior");
    check_feasible(N, Q, c, w, "diag interior");
  }
  /* 3. Q = I: the solution is the Euclidean projection of c onto the simplex (many at 0) */
  {
    enum { N = 25 };
    double Q[N * N] = {0}, c[N], w[N] = {0}, ref[N];
    for (int i = 0; i < N; i++) {
      Q[i * N + i] = 1;
      c[i] = 2 * kd_rng_normal(seed, 1, i);
    }
    proj_simplex(N, c, ref);
    KD_TEST_OK(kd_simplex_qp(N, Q, c, 1e-14, 200, w));
    int zeros = 0;
    for (int i = 0; i < N; i++) {
      KD_TEST_NEAR(w[i], ref[i], 1e-13, "projection");
      zeros += ref[i] == 0;
    }
    KD_TEST(zeros > 5 && zeros < N - 1, "projection case has an active face (%d zeros)", zeros);
    check_feasible(N, Q, c, w, "projection");
  }
  /* 4. vertex solution: c strongly favours coordinate 2 */
  {
    double Q[9] = {1, 0.2, 0, 0.2, 1, 0.1, 0, 0.1, 1}, c[3] = {0, 0, 10},
           w[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3};
    KD_TEST_OK(kd_simplex_qp(3, Q, c, 1e-14, 100, w));
    KD_TEST(w[0] == 0 && w[1] == 0 && w[2] == 1, "vertex: %g %g %g", w[0], w[1], w[2]);
  }
  /* 5. singular Q = 1 1^T: f = 1/2 - c^T w -> vertex of the largest c */
  {
    double Q[9], c[3] = {0, 1, 2}, w[3] = {0};
    for (int i = 0; i < 9; i++) Q[i] = 1;
    KD_TEST_OK(kd_simplex_qp(3, Q, c, 1e-14, 100, w));
    KD_TEST(w[2] == 1, "rank-one Q: vertex 2 (w = %g %g %g)", w[0], w[1], w[2]);
    /* Q = 0 too */
    double Z[9] = {0};
    double w2[3] = {0.2, 0.3, 0.5};
    KD_TEST_OK(kd_simplex_qp(3, Z, c, 1e-14, 100, w2));
    KD_TEST(w2[2] == 1, "Q = 0: vertex 2");
  }
  /* 6. duplicate points (singular Gram): the optimum value is the reduced problem's */
  {
    double Q[9] = {1, 1, 0.5, 1, 1, 0.5, 0.5, 0.5, 1}, c[3] = {0.7, 0.7, 0.6}, w[3] = {0};
    KD_TEST_OK(kd_simplex_qp(3, Q, c, 1e-14, 100, w));
    /* reduced 2-D problem over (u = w0 + w1, w2): Q' = [[1, .5], [.5, 1]], c' = (.7, .6):
     * f(u) = 1/2(u^2 + (1-u)^2 + u(1-u)) - .7u - .6(1-u); f' = u - 1/2 - .1 = 0 -> u = 0.6 */
    KD_TEST_NEAR(w[0] + w[1], 0.6, 1e-13, "duplicates: merged weight");
    KD_TEST_NEAR(w[2], 0.4, 1e-13, "duplicates: other weight");
    check_feasible(3, Q, c, w, "duplicates");
  }
  /* 7. random low-rank PSD (n = 40, rank 6) from several starts: KKT and equal optimum values */
  {
    enum { N = 40, R = 6 };
    double A[N * R], Q[N * N], c[N], w[N], f0 = 0;
    for (int i = 0; i < N * R; i++) A[i] = kd_rng_normal(seed, 2, i);
    for (int i = 0; i < N; i++) {
      c[i] = kd_rng_normal(seed, 3, i);
      for (int j = 0; j < N; j++) {
        double s = 0;
        for (int r = 0; r < R; r++) s += A[i * R + r] * A[j * R + r];
        Q[i * N + j] = s;
      }
    }
    for (int start = 0; start < 3; start++) {
      for (int i = 0; i < N; i++) w[i] = start == 0 ? 0 : (start == 1 ? 1.0 : (i % 3 == 0));
      KD_TEST_OK(kd_simplex_qp(N, Q, c, 1e-13, 1000, w));
      check_feasible(N, Q, c, w, "low rank");
      double f = obj(N, Q, c, w);
      if (start == 0) f0 = f;
      KD_TEST_NEAR(f, f0, 1e-10 * fmax(1, fabs(f0)), "low rank: same optimum from any start");
    }
    /* determinism: same input, same bits */
    double w1[N] = {0}, w2[N] = {0};
    KD_TEST_OK(kd_simplex_qp(N, Q, c, 1e-13, 1000, w1));
    KD_TEST_OK(kd_simplex_qp(N, Q, c, 1e-13, 1000, w2));
    KD_TEST(memcmp(w1, w2, sizeof w1) == 0, "deterministic");
  }
  /* 7b. full-rank non-diagonal PSD (n = 80, Cholesky path), several starts: KKT and equal optima */
  {
    enum { N = 80, R = 100 };
    static double A[N * R], Q[N * N];
    double c[N], w[N], f0 = 0;
    for (int i = 0; i < N * R; i++) A[i] = kd_rng_normal(seed, 5, i) / 10;
    for (int i = 0; i < N; i++) {
      c[i] = kd_rng_normal(seed, 6, i);
      for (int j = 0; j < N; j++) {
        double s = i == j ? 0.1 : 0.0;
        for (int r = 0; r < R; r++) s += A[i * R + r] * A[j * R + r];
        Q[i * N + j] = s;
      }
    }
    for (int start = 0; start < 3; start++) {
      for (int i = 0; i < N; i++) w[i] = start == 0 ? 0 : (start == 1 ? 1.0 : (i % 7 == 0));
      KD_TEST_OK(kd_simplex_qp(N, Q, c, 1e-13, 2000, w));
      check_feasible(N, Q, c, w, "full rank");
      double f = obj(N, Q, c, w);
      if (start == 0) f0 = f;
      KD_TEST_NEAR(f, f0, 1e-11 * fmax(1, fabs(f0)), "full rank: same optimum from any start");
    }
  }
  /* 8. near-singular Gaussian Gram of 60 close 1-D points (condition ~1e17), closed-form-free:
   * compare against a long projected-gradient run (optimal value) */
  {
    enum { N = 60 };
    double Q[N * N], c[N], w[N] = {0}, v[N], y[N];
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        double dx = (i - j) * 0.05;
        Q[i * N + j] = exp(-0.5 * dx * dx);
      }
    for (int i = 0; i < N; i++) {
      double x = i * 0.05 - 1.5;
      c[i] = sqrt(0.5) * exp(-x * x / 4); /* z of N(0,1) under the ls = 1 Gaussian kernel */
    }
    KD_TEST_OK(kd_simplex_qp(N, Q, c, 1e-13, 2000, w));
    check_feasible(N, Q, c, w, "near-singular");
    for (int i = 0; i < N; i++) v[i] = 1.0 / N;
    double L = 0;
    for (int i = 0; i < N; i++) {
      double s = 0;
      for (int j = 0; j < N; j++) s += fabs(Q[i * N + j]);
      L = fmax(L, s);
    }
    for (int it = 0; it < 20000; it++) {
      for (int i = 0; i < N; i++) {
        double g = -c[i];
        for (int j = 0; j < N; j++) g += Q[i * N + j] * v[j];
        y[i] = v[i] - g / L;
      }
      proj_simplex(N, y, v);
    }
    KD_TEST(obj(N, Q, c, w) <= obj(N, Q, c, v) + 1e-12, "near-singular: %.17g vs PG %.17g",
            obj(N, Q, c, w), obj(N, Q, c, v));
  }
  /* 9. nonnegative QP: Q = I -> w = max(c, 0); and Q = diag with cross terms */
  {
    enum { N = 9 };
    double Q[N * N] = {0}, c[N], w[N] = {0};
    for (int i = 0; i < N; i++) {
      Q[i * N + i] = 1;
      c[i] = kd_rng_normal(seed, 4, i);
    }
    KD_TEST_OK(kd_nonneg_qp(N, Q, c, 1e-14, 100, w));
    for (int i = 0; i < N; i++) KD_TEST_NEAR(w[i], fmax(c[i], 0), 1e-15, "nnls identity");
    double Q2[4] = {2, 1, 1, 2}, c2[2] = {1, -1}, w2[2] = {0};
    KD_TEST_OK(kd_nonneg_qp(2, Q2, c2, 1e-14, 100, w2));
    KD_TEST(w2[1] == 0, "nnls: second coordinate bound");
    KD_TEST_NEAR(w2[0], 0.5, 1e-15, "nnls: first coordinate");
    double Qs[4] = {0, 0, 0, 1}, cs[2] = {1, 0}, ws[2] = {0};
    KD_TEST(kd_nonneg_qp(2, Qs, cs, 1e-14, 100, ws) == KD_ERR_NUMERIC, "nnls unbounded detected");
    kd_err_clear();
  }
  /* 10. bad input */
  {
    double Q[1] = {NAN}, c[1] = {0}, w[1] = {1};
    KD_TEST(kd_simplex_qp(1, Q, c, 1e-12, 10, w) == KD_ERR_NUMERIC, "NaN rejected");
    kd_err_clear();
    KD_TEST(kd_simplex_qp(0, Q, c, 1e-12, 10, w) == KD_ERR_ARG, "n = 0 rejected");
    kd_err_clear();
  }
  return kd_test_finish();
}
