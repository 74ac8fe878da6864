/* test_target_closed.c - closed-form mean embeddings z and double integrals zz against tensor
 * Gauss-Legendre quadrature written here (independent of src/embed), Monte Carlo for the sphere,
 * the exact Sobolev worst-case error of a uniform grid (pi^2/(3 n^2)), the 1/sqrt(n) rate of iid
 * samples, and KD_ERR_UNSUPPORTED for pairs without a closed form. */
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"

#define PI 3.14159265358979323846
enum { NG = 16 };
static double gx_[NG], gw_[NG];

/* Gauss-Legendre nodes on [-1,1]: Newton iteration on P_16 from Chebyshev guesses. */
static void gl_init(void) {
  for (int i = 0; i < NG; i++) {
    double x = -cos(PI * (i + 0.75) / (NG + 0.5)), dp = 1.0;
    for (int it = 0; it < 60; it++) {
      double a = 1.0, b = x;
      for (int k = 2; k <= NG; k++) {
        double c = ((2 * k - 1) * x * b - (k - 1) * a) / k;
        a = b;
        b = c;
      }
      dp = NG * (a - x * b) / (1 - x * x);
      x -= b / dp;
    }
    gx_[i] = x;
    gw_[i] = 2.0 / ((1 - x * x) * dp * dp);
  }
}

/* Composite rule on [a,b] with np panels: nodes x[np*NG], weights w[np*NG]. */
static void rule(double a, double b, int np, double *x, double *w) {
  double h = (b - a) / np;
  for (int p = 0; p < np; p++)
    for (int i = 0; i < NG; i++) {
      x[p * NG + i] = a + (p + 0.5) * h + 0.5 * h * gx_[i];
      w[p * NG + i] = 0.5 * h * gw_[i];
    }
}

static double kg(double x, double y, double l) { return exp(-(x - y) * (x - y) / (2 * l * l)); }
static double npdf(double x, double m, double s) {
  return exp(-0.5 * (x - m) * (x - m) / (s * s)) / (s * sqrt(2 * PI));
}

/* A 1-D probability rule for one coordinate of a measure: nodes and density-weights. */
typedef struct {
  int n;
  double *x, *w;
} qr1;

static qr1 qr_gauss(double m, double s, int np) {
  qr1 q = {np * NG, malloc(sizeof(double) * np * NG), malloc(sizeof(double) * np * NG)};
  rule(m - 12 * s, m + 12 * s, np, q.x, q.w);
  for (int i = 0; i < q.n; i++) q.w[i] *= npdf(q.x[i], m, s);
  return q;
}
static qr1 qr_unif(double a, double b, int np) {
  qr1 q = {np * NG, malloc(sizeof(double) * np * NG), malloc(sizeof(double) * np * NG)};
  rule(a, b, np, q.x, q.w);
  for (int i = 0; i < q.n; i++) q.w[i] /= (b - a);
  return q;
}
static qr1 qr_trunc(double m, double s, double a, double b, int np) {
  qr1 q = {np * NG, malloc(sizeof(double) * np * NG), malloc(sizeof(double) * np * NG)};
  rule(a, b, np, q.x, q.w);
  double Z = 0;
  for (int i = 0; i < q.n; i++) Z += (q.w[i] *= npdf(q.x[i], m, s));
  for (int i = 0; i < q.n; i++) q.w[i] /= Z;
  return q;
}
static void qr_free(qr1 *q) {
  free(q->x);
  free(q->w);
}

/* int k(x, y) dmu(y) for a 2-D product rule (tensor double loop over both axes). */
static double z_quad2(const double *x, const qr1 *q0, const qr1 *q1, double l) {
  double s = 0;
  for (int i = 0; i < q0->n; i++) {
    double a = q0->w[i] * kg(x[0], q0->x[i], l), t = 0;
    for (int j = 0; j < q1->n; j++) t += q1->w[j] * kg(x[1], q1->x[j], l);
    s += a * t;
  }
  return s;
}
/* Same, literally as a 2-D double loop (no factoring), for a few points. */
static double z_quad2_full(const double *x, const qr1 *q0, const qr1 *q1, double l) {
  double s = 0;
  for (int i = 0; i < q0->n; i++)
    for (int j = 0; j < q1->n; j++) {
      double dx = x[0] - q0->x[i], dy = x[1] - q1->x[j];
      s += q0->w[i] * q1->w[j] * exp(-(dx * dx + dy * dy) / (2 * l * l));
    }
  return s;
}
/* int z dmu over a 2-D product rule, with z from the library (embed_rows on the tensor nodes). */
static double zz_via_z(kd_target *t, const qr1 *q0, const qr1 *q1) {
  int n = q0->n * q1->n;
  double *X = malloc(sizeof(double) * 2 * n), *z = malloc(sizeof(double) * n), s = 0;
  for (int i = 0; i < q0->n; i++)
    for (int j = 0; j < q1->n; j++) {
      X[2 * (i * q1->n + j)] = q0->x[i];
      X[2 * (i * q1->n + j) + 1] = q1->x[j];
    }
  KD_TEST_OK(kd_target_embed_rows(t, X, n, z));
  for (int i = 0; i < q0->n; i++)
    for (int j = 0; j < q1->n; j++) s += q0->w[i] * q1->w[j] * z[i * q1->n + j];
  free(X);
  free(z);
  return s;
}
/* 1-D double integral int int k dmu dmu on a rule (independent of the library's z). */
static double zz_quad1(const qr1 *q, double l) {
  double s = 0;
  for (int i = 0; i < q->n; i++) { /* row sums first: keeps the rounding of 10^6 terms small */
    double r = 0;
    for (int j = 0; j < q->n; j++) r += q->w[j] * kg(q->x[i], q->x[j], l);
    s += q->w[i] * r;
  }
  return s;
}

static kd_kernel *mk_kernel(kd_kernel_type ty, double ls, int d, int order) {
  kd_kernel_params p = kd_kernel_params_default(ty);
  p.ls = ls;
  p.order = order;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, d, &k));
  return k;
}

static double zclosed(kd_target *t, const double *x) {
  double z = NAN;
  KD_TEST_OK(kd_target_embed_rows(t, x, 1, &z));
  return z;
}
static double zzclosed(kd_target *t) {
  double zz = NAN;
  int av = 0;
  KD_TEST_OK(kd_target_self(t, &zz, &av));
  KD_TEST(av == 1, "closed zz available");
  return zz;
}

static const double pts2[4][2] = {{0, 0}, {0.3, -1}, {2.5, 3}, {-1.7, 0.4}};

static void test_gaussian(MPI_Comm c) {
  double mean[2] = {0.3, -1}, sd[2] = {0.5, 2}, l = 0.8;
  kd_measure mu = {0};
  mu.type = KD_MEASURE_GAUSSIAN;
  mu.d = 2;
  mu.mean = mean;
  mu.sd = sd;
  kd_kernel *k = mk_kernel(KD_KERNEL_GAUSSIAN, l, 2, 1);
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_closed(c, k, &mu, &t));
  KD_TEST(kd_target_is_closed(t) && kd_target_measure(t) && !kd_target_points(t), "accessors");
  qr1 q0 = qr_gauss(mean[0], sd[0], 40), q1 = qr_gauss(mean[1], sd[1], 40);
  for (int i = 0; i < 4; i++)
    KD_TEST_REL(zclosed(t, pts2[i]), z_quad2_full(pts2[i], &q0, &q1, l), 1e-12, "gauss x gauss z");
  KD_TEST_REL(zzclosed(t), zz_via_z(t, &q0, &q1), 1e-12, "gauss x gauss zz = int z dmu");
  /* the double integral itself, 1-D: l / sqrt(l^2 + 2 s^2) */
  double zz1 = zz_quad1(&q0, l);
  KD_TEST_REL(zz1, l / sqrt(l * l + 2 * sd[0] * sd[0]), 1e-12, "1-D gauss zz by quadrature");
  qr_free(&q0);
  qr_free(&q1);
  /* a later change of ls (median heuristic) is seen by z and by the cached zz */
  kd_pointset *ps = NULL;
  KD_TEST_OK(kd_pointset_generate(c, &mu, 300, 4, &ps));
  KD_TEST_OK(kd_kernel_set_median_ls(k, ps, 1, 300));
  double l2 = kd_kernel_get_params(k)->ls, ref = 1, x0[2] = {0.1, 0.2};
  KD_TEST(l2 != l, "median ls %g differs from %g", l2, l);
  for (int j = 0; j < 2; j++) ref *= l2 / sqrt(l2 * l2 + 2 * sd[j] * sd[j]);
  KD_TEST_REL(zzclosed(t), ref, 1e-14, "zz recomputed for the new ls");
  ref = 1;
  for (int j = 0; j < 2; j++)
    ref *= l2 / sqrt(l2 * l2 + sd[j] * sd[j]) *
           exp(-(x0[j] - mean[j]) * (x0[j] - mean[j]) / (2 * (l2 * l2 + sd[j] * sd[j])));
  KD_TEST_REL(zclosed(t, x0), ref, 1e-14, "z with the new ls");
  kd_pointset_destroy(&ps);
  kd_target_destroy(&t);
  KD_TEST(t == NULL, "destroy sets NULL");
  kd_kernel_destroy(&k);
}

static void test_uniform(MPI_Comm c) {
  double lo[2] = {-1, 0}, hi[2] = {0.5, 3}, l = 0.7;
  kd_measure mu = {0};
  mu.type = KD_MEASURE_UNIFORM_BOX;
  mu.d = 2;
  mu.lo = lo;
  mu.hi = hi;
  kd_kernel *k = mk_kernel(KD_KERNEL_GAUSSIAN, l, 2, 1);
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_closed(c, k, &mu, &t));
  qr1 q0 = qr_unif(lo[0], hi[0], 20), q1 = qr_unif(lo[1], hi[1], 40);
  for (int i = 0; i < 4; i++)
    KD_TEST_REL(zclosed(t, pts2[i]), z_quad2_full(pts2[i], &q0, &q1, l), 1e-12, "gauss x box z");
  double far[2] = {-6, 9}; /* far outside: erfc branches */
  KD_TEST_REL(zclosed(t, far), z_quad2(far, &q0, &q1, l), 1e-9, "gauss x box z far outside");
  KD_TEST_REL(zzclosed(t), zz_via_z(t, &q0, &q1), 1e-12, "gauss x box zz = int z dmu");
  qr_free(&q0);
  qr_free(&q1);
  kd_target_destroy(&t);
  kd_kernel_destroy(&k);
  /* 1-D zz across the series / closed branch (r = L/l = 0.3, 0.99, 1.01, 5, 40) vs double quad */
  const double L[5] = {0.3, 0.99, 1.01, 5, 40};
  kd_kernel *k1 = mk_kernel(KD_KERNEL_GAUSSIAN, 1.0, 1, 1);
  for (int i = 0; i < 5; i++) {
    double a = 0.25, b = 0.25 + L[i];
    mu.d = 1;
    mu.lo = &a;
    mu.hi = &b;
    KD_TEST_OK(kd_target_create_closed(c, k1, &mu, &t));
    qr1 q = qr_unif(a, b, L[i] > 2 ? (int)(4 * L[i]) : 8);
    KD_TEST_REL(zzclosed(t), zz_quad1(&q, 1.0), 1e-13, "1-D box zz");
    qr_free(&q);
    kd_target_destroy(&t);
  }
  kd_kernel_destroy(&k1);
}

static void test_mixture(MPI_Comm c) {
  double means[6] = {0, 0, 2, -1, -1.5, 1}, sds[6] = {0.5, 0.7, 1, 0.3, 0.4, 0.4},
         w[3] = {0.5, 0.3, 0.2}, l = 0.6;
  kd_measure mu = {0};
  mu.type = KD_MEASURE_GAUSSIAN_MIXTURE;
  mu.d = 2;
  mu.n_comp = 3;
  mu.means = means;
  mu.sds = sds;
  mu.mix_w = w;
  kd_kernel *k = mk_kernel(KD_KERNEL_GAUSSIAN, l, 2, 1);
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_closed(c, k, &mu, &t));
  double zq[4] = {0}, zzq = 0;
  for (int cpt = 0; cpt < 3; cpt++) {
    qr1 q0 = qr_gauss(means[2 * cpt], sds[2 * cpt], 30),
        q1 = qr_gauss(means[2 * cpt + 1], sds[2 * cpt + 1], 30);
    for (int i = 0; i < 4; i++) zq[i] += w[cpt] * z_quad2_full(pts2[i], &q0, &q1, l);
    zzq += w[cpt] * zz_via_z(t, &q0, &q1);
    qr_free(&q0);
    qr_free(&q1);
  }
  for (int i = 0; i < 4; i++) KD_TEST_REL(zclosed(t, pts2[i]), zq[i], 1e-12, "gauss x mixture z");
  KD_TEST_REL(zzclosed(t), zzq, 1e-12, "gauss x mixture zz = int z dmu");
  kd_target_destroy(&t);
  kd_kernel_destroy(&k);
}

static void test_trunc(MPI_Comm c) {
  /* axis 0: box around the mean; axis 1: box in the upper tail (alpha = 0.67) */
  double mean[2] = {0.2, 0.0}, sd[2] = {0.6, 1.5}, lo[2] = {-0.5, 1}, hi[2] = {2, 4}, l = 0.5;
  kd_measure mu = {0};
  mu.type = KD_MEASURE_TRUNC_GAUSSIAN;
  mu.d = 2;
  mu.mean = mean;
  mu.sd = sd;
  mu.lo = lo;
  mu.hi = hi;
  kd_kernel *k = mk_kernel(KD_KERNEL_GAUSSIAN, l, 2, 1);
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_closed(c, k, &mu, &t));
  qr1 q0 = qr_trunc(mean[0], sd[0], lo[0], hi[0], 30),
      q1 = qr_trunc(mean[1], sd[1], lo[1], hi[1], 30);
  for (int i = 0; i < 4; i++)
    KD_TEST_REL(zclosed(t, pts2[i]), z_quad2_full(pts2[i], &q0, &q1, l), 1e-12, "gauss x trunc z");
  KD_TEST_REL(zzclosed(t), zz_via_z(t, &q0, &q1), 1e-12, "gauss x trunc zz = int z dmu");
  kd_target_destroy(&t);
  kd_kernel_destroy(&k);
  /* 1-D: the double integral directly (independent of the library's z and its quadrature) */
  kd_kernel *k1 = mk_kernel(KD_KERNEL_GAUSSIAN, 0.3, 1, 1);
  for (int ax = 0; ax < 2; ax++) {
    mu.d = 1;
    mu.mean = mean + ax;
    mu.sd = sd + ax;
    mu.lo = lo + ax;
    mu.hi = hi + ax;
    KD_TEST_OK(kd_target_create_closed(c, k1, &mu, &t));
    qr1 q = qr_trunc(mean[ax], sd[ax], lo[ax], hi[ax], 30);
    KD_TEST_REL(zzclosed(t), zz_quad1(&q, 0.3), 1e-12, "1-D trunc zz by double quadrature");
    qr_free(&q);
    kd_target_destroy(&t);
  }
  kd_kernel_destroy(&k1);
  qr_free(&q0);
  qr_free(&q1);
}

static void test_sobolev(MPI_Comm c) {
  kd_measure mu = {0};
  mu.type = KD_MEASURE_TORUS;
  mu.d = 1;
  kd_target *t = NULL;
  /* z = int_0^1 k(x, y) dy = 1 for r = 1, 2, 3: quadrature split at the kink y = x */
  for (int r = 1; r <= 3; r++) {
    kd_kernel *k = mk_kernel(KD_KERNEL_SOBOLEV, 1, 1, r);
    double x = 0.37, xs[2 * 4 * NG], ws[2 * 4 * NG], s = 0;
    rule(0, x, 4, xs, ws);
    rule(x, 1, 4, xs + 4 * NG, ws + 4 * NG);
    for (int i = 0; i < 8 * NG; i++) s += ws[i] * kd_kernel_eval(k, &x, xs + i);
    KD_TEST_OK(kd_target_create_closed(c, k, &mu, &t));
    KD_TEST_NEAR(zclosed(t, &x), s, 1e-13, "sobolev z by quadrature");
    KD_TEST_NEAR(zzclosed(t), 1.0, 0, "sobolev zz");
    kd_target_destroy(&t);
    kd_kernel_destroy(&k);
  }
  /* uniform grid of n points on [0,1): worst-case error^2 = 2 zeta(2) / n^2 = pi^2 / (3 n^2) */
  kd_kernel *k = mk_kernel(KD_KERNEL_SOBOLEV, 1, 1, 1);
  KD_TEST_OK(kd_target_create_closed(c, k, &mu, &t));
  const int ns[2] = {8, 64};
  for (int a = 0; a < 2; a++) {
    int n = ns[a];
    double X[64], w[64], mmd, mmd2;
    for (int i = 0; i < n; i++) {
      X[i] = (double)i / n;
      w[i] = 1.0 / n;
    }
    KD_TEST_OK(kd_mmd(t, X, w, n, &mmd, &mmd2));
    KD_TEST_NEAR(mmd2, PI * PI / (3.0 * n * n), 1e-12, "sobolev grid wce^2 = pi^2/(3n^2)");
    KD_TEST_REL(mmd, PI / (sqrt(3.0) * n), 1e-9, "sobolev grid wce");
  }
  kd_target_destroy(&t);
  kd_kernel_destroy(&k);
  /* 2-D tensor grid n x n: (1 + pi^2/(3 n^2))^2 - 1 */
  k = mk_kernel(KD_KERNEL_SOBOLEV, 1, 2, 1);
  mu.d = 2;
  KD_TEST_OK(kd_target_create_closed(c, k, &mu, &t));
  {
    int n = 8;
    double X[128], w[64], mmd, mmd2, e = PI * PI / (3.0 * n * n);
    for (int i = 0; i < n * n; i++) {
      X[2 * i] = (double)(i / n) / n + 0.01;
      X[2 * i + 1] = (double)(i % n) / n + 0.02;
      w[i] = 1.0 / (n * n);
    }
    KD_TEST_OK(kd_mmd(t, X, w, n * n, &mmd, &mmd2));
    KD_TEST_NEAR(mmd2, (1 + e) * (1 + e) - 1, 1e-12, "2-D sobolev tensor grid wce^2");
  }
  kd_target_destroy(&t);
  kd_kernel_destroy(&k);
}

static void test_energy(MPI_Comm c) {
  kd_measure mu = {0};
  mu.type = KD_MEASURE_SPHERE;
  mu.d = 3;
  kd_kernel *k = mk_kernel(KD_KERNEL_ENERGY, 1, 3, 1);
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_closed(c, k, &mu, &t));
  /* z at the north pole: (1/2) int_{-1}^{1} (8/3 - sqrt(2 - 2u)) du, quadrature in v = sqrt(2-2u)
   * (u = 1 - v^2/2, du = -v dv): (1/2) int_0^2 (8/3 - v) v dv, smooth */
  double pole[3] = {0, 0, 1}, xs[4 * NG], ws[4 * NG], s = 0;
  rule(0, 2, 4, xs, ws);
  for (int i = 0; i < 4 * NG; i++) s += 0.5 * ws[i] * (8.0 / 3.0 - xs[i]) * xs[i];
  KD_TEST_NEAR(zclosed(t, pole), s, 1e-13, "energy z at the pole by quadrature");
  /* Monte Carlo: N sphere samples, sd(|x-y|) = sqrt(2 - 16/9) = sqrt(2)/3; tolerance 5 SE */
  const int N = 1 << 17;
  double *Y = malloc(sizeof(double) * 3 * N), *Y2 = malloc(sizeof(double) * 3 * N);
  KD_TEST_OK(kd_measure_sample(&mu, 7, 0, N, Y));
  KD_TEST_OK(kd_measure_sample(&mu, 8, 0, N, Y2));
  const double tol = 5 * sqrt(2.0) / 3.0 / sqrt((double)N);
  for (int p = 0; p < 3; p++) {
    const double *x = Y2 + 3 * (N - 1 - p); /* an arbitrary point of S^2 */
    double m = 0;
    for (int i = 0; i < N; i++) m += kd_kernel_eval(k, x, Y + 3 * i);
    KD_TEST_NEAR(zclosed(t, x), m / N, tol, "energy z by Monte Carlo");
  }
  double m = 0;
  for (int i = 0; i < N; i++) m += kd_kernel_eval(k, Y + 3 * i, Y2 + 3 * i);
  KD_TEST_NEAR(zzclosed(t), m / N, tol, "energy zz by Monte Carlo (independent pairs)");
  /* MMD of n iid sphere points: E MMD^2 = (k(x,x) - zz)/n = (8/3 - 4/3)/n */
  double mm = 0, mmd, mmd2;
  const int n = 1024, R = 4;
  double *w = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) w[i] = 1.0 / n;
  for (int r = 0; r < R; r++) {
    KD_TEST_OK(kd_mmd(t, Y + 3 * n * r, w, n, &mmd, &mmd2));
    KD_TEST(mmd >= 0 && fabs(mmd * mmd - mmd2) < 1e-14, "mmd = sqrt(mmd2)");
    mm += mmd2 / R;
  }
  KD_TEST(mm * n > 0.5 * 4.0 / 3.0 && mm * n < 2 * 4.0 / 3.0, "energy iid n MMD^2 = %g ~ 4/3",
          mm * n);
  free(w);
  free(Y);
  free(Y2);
  kd_target_destroy(&t);
  kd_kernel_destroy(&k);
}

/* MMD of iid samples of the measure itself: E MMD^2 = (1 - zz)/n, so MMD ~ 1/sqrt(n); also the
 * MMD formula against a brute-force double loop. */
static void test_rate(MPI_Comm c) {
  double mean[2] = {0.5, -0.5}, sd[2] = {1, 0.5};
  kd_measure mu = {0};
  mu.type = KD_MEASURE_GAUSSIAN;
  mu.d = 2;
  mu.mean = mean;
  mu.sd = sd;
  kd_kernel *k = mk_kernel(KD_KERNEL_GAUSSIAN, 0.7, 2, 1);
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_closed(c, k, &mu, &t));
  double zz = zzclosed(t);
  const int ns[4] = {32, 128, 512, 2048}, R = 4;
  double *X = malloc(sizeof(double) * 2 * 2048), *w = malloc(sizeof(double) * 2048), lm[4];
  for (int a = 0; a < 4; a++) {
    int n = ns[a];
    double mean2 = 0, mmd, mmd2;
    for (int i = 0; i < n; i++) w[i] = 1.0 / n;
    for (int r = 0; r < R; r++) {
      KD_TEST_OK(kd_measure_sample(&mu, 100 + r, 0, n, X));
      KD_TEST_OK(kd_mmd(t, X, w, n, &mmd, &mmd2));
      mean2 += mmd2 / R;
      if (a == 2 && r == 0) { /* the same on one rank alone: bitwise equal (rows of w'Kw are
                                 computed independently and summed in row order) */
        kd_target *t1 = NULL;
        double m1 = NAN, m2 = NAN;
        KD_TEST_OK(kd_target_create_closed(MPI_COMM_SELF, k, &mu, &t1));
        KD_TEST_OK(kd_mmd(t1, X, w, n, &m1, &m2));
        KD_TEST(m1 == mmd && m2 == mmd2, "closed mmd at p ranks == at 1 rank: %.17g vs %.17g", mmd2,
                m2);
        kd_target_destroy(&t1);
      }
      if (a == 0 && r == 0) { /* brute force */
        double z[32], s1 = 0, s2 = 0;
        KD_TEST_OK(kd_target_embed_rows(t, X, n, z));
        for (int i = 0; i < n; i++) {
          s1 += w[i] * z[i];
          for (int j = 0; j < n; j++) s2 += w[i] * w[j] * kd_kernel_eval(k, X + 2 * i, X + 2 * j);
        }
        KD_TEST_REL(mmd2, zz - 2 * s1 + s2, 1e-12, "mmd2 = zz - 2 w'z + w'Kw");
      }
    }
    KD_TEST(mean2 * n > 0.5 * (1 - zz) && mean2 * n < 2 * (1 - zz),
            "iid n = %d: n E MMD^2 = %g vs 1 - zz = %g", n, mean2 * n, 1 - zz);
    lm[a] = 0.5 * log(mean2);
  }
  double slope = (lm[3] - lm[0]) / (log(2048.0) - log(32.0));
  KD_TEST(slope > -0.65 && slope < -0.35, "MMD ~ n^-1/2: slope %g", slope);
  free(X);
  free(w);
  kd_target_destroy(&t);
  kd_kernel_destroy(&k);
}

static void test_unsupported(MPI_Comm c) {
  double mean[3] = {0, 0, 0}, sd[3] = {1, 1, 1};
  kd_measure mu = {0};
  mu.type = KD_MEASURE_GAUSSIAN;
  mu.d = 3;
  mu.mean = mean;
  mu.sd = sd;
  kd_target *t = NULL;
  kd_kernel *k = mk_kernel(KD_KERNEL_LAPLACE, 1, 3, 1);
  KD_TEST(kd_target_create_closed(c, k, &mu, &t) == KD_ERR_UNSUPPORTED && !t, "laplace x gaussian");
  KD_TEST(strstr(kd_err_message(), "laplace") && strstr(kd_err_message(), "gaussian"),
          "message names both: %s", kd_err_message());
  kd_err_clear();
  kd_kernel_destroy(&k);
  k = mk_kernel(KD_KERNEL_GAUSSIAN, 1, 3, 1);
  mu.type = KD_MEASURE_TORUS;
  KD_TEST(kd_target_create_closed(c, k, &mu, &t) == KD_ERR_UNSUPPORTED, "gaussian x torus");
  KD_TEST(strstr(kd_err_message(), "torus") != NULL, "names torus: %s", kd_err_message());
  kd_err_clear();
  mu.type = KD_MEASURE_SPHERE;
  KD_TEST(kd_target_create_closed(c, k, &mu, &t) == KD_ERR_UNSUPPORTED, "gaussian x sphere");
  kd_err_clear();
  kd_kernel_destroy(&k);
  k = mk_kernel(KD_KERNEL_ENERGY, 1, 2, 1);
  mu.d = 2;
  KD_TEST(kd_target_create_closed(c, k, &mu, &t) == KD_ERR_UNSUPPORTED, "energy x S^1");
  KD_TEST(strstr(kd_err_message(), "d = 3") != NULL, "names d = 3: %s", kd_err_message());
  kd_err_clear();
  kd_kernel_destroy(&k);
  k = mk_kernel(KD_KERNEL_SOBOLEV, 1, 2, 1);
  double lo[2] = {0, 0}, hi[2] = {1, 1};
  mu.type = KD_MEASURE_GRID;
  mu.lo = lo;
  mu.hi = hi;
  mu.grid_n = 4;
  KD_TEST(kd_target_create_closed(c, k, &mu, &t) == KD_ERR_UNSUPPORTED, "sobolev x grid");
  kd_err_clear();
  mu.type = KD_MEASURE_TORUS;
  mu.d = 3;
  KD_TEST(kd_target_create_closed(c, k, &mu, &t) == KD_ERR_ARG, "dimension mismatch");
  kd_err_clear();
  kd_kernel_destroy(&k);
}

/* The dimension a configuration gives a Gaussian: without d, the longest list's length (a
 * one-element list included), a number broadcasting. A herd run through the entry point on
 * `mean: [0.0], sd: [1.0]` (candidates and target) is 1-D and reports the MMD of the 1-D closed
 * form, sum_ij w_i w_j k(x_i, x_j) - 2 sum_i w_i z(x_i) + zz with z(x) = l / sqrt(l^2 + s^2)
 * exp(-(x - m)^2 / (2 (l^2 + s^2))) and zz = l / sqrt(l^2 + 2 s^2); `mean: [0, 0], sd: [1]` is
 * 2-D (z and zz the products over the coordinates). */
static void test_config_d(void) {
  static const char *const kCfg[2] = {
      "task: herd\n"
      "candidates: {type: gaussian, n: 400, mean: [0.0], sd: [1.0]}\n"
      "target: {type: gaussian, mean: [0.0], sd: [1.0]}\n"
      "kernel: {name: gaussian, ls: 0.8}\n"
      "algorithm: {name: bpcg, max_iter: 20}\n"
      "run: {seed: 3}\n",
      "task: herd\n"
      "candidates: {type: gaussian, n: 400, mean: [0, 0], sd: [1]}\n"
      "target: {type: gaussian, mean: [0, 0], sd: [1]}\n"
      "kernel: {name: gaussian, ls: 0.8}\n"
      "algorithm: {name: bpcg, max_iter: 20}\n"
      "run: {seed: 3}\n"};
  const double l = 0.8, s = 1.0;
  for (int c = 0; c < 2; c++) {
    const int d = c + 1;
    kd_job_opts o;
    memset(&o, 0, sizeof o);
    o.config = c ? "gauss_2d.yaml" : "gauss_1d.yaml";
    o.config_text = kCfg[c];
    o.no_output = 1;
    kd_result r = KD_RESULT_INIT;
    kd_err e = kd_job_run(kd_test_ctx(), &o, NULL, &r);
    KD_TEST(e == KD_OK, "%s: %s", o.config, kd_ctx_message(kd_test_ctx()));
    if (e != KD_OK) continue;
    KD_TEST(r.d == d && r.n > 1, "%s: d = %d (want %d), %lld atoms", o.config, r.d, d,
            (long long)r.n);
    if (r.d != d) {
      kd_result_free(&r);
      continue;
    }
    double kk = 0, kz = 0, zz = pow(l / sqrt(l * l + 2 * s * s), d);
    for (int64_t i = 0; i < r.n; i++) {
      const double *xi = r.points + i * d;
      double z = 1;
      for (int j = 0; j < d; j++)
        z *= l / sqrt(l * l + s * s) * exp(-xi[j] * xi[j] / (2 * (l * l + s * s)));
      kz += r.weights[i] * z;
      for (int64_t k = 0; k < r.n; k++) {
        double q = 0;
        for (int j = 0; j < d; j++)
          q += (xi[j] - r.points[k * d + j]) * (xi[j] - r.points[k * d + j]);
        kk += r.weights[i] * r.weights[k] * exp(-q / (2 * l * l));
      }
    }
    char what[96];
    snprintf(what, sizeof what, "%s: MMD = the %d-D closed form", o.config, d);
    KD_TEST_NEAR(r.mmd, sqrt(fmax(kk - 2 * kz + zz, 0)), 1e-9, what);
    kd_result_free(&r);
  }
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  gl_init();
  test_gaussian(c);
  test_uniform(c);
  test_mixture(c);
  test_trunc(c);
  test_sobolev(c);
  test_energy(c);
  test_rate(c);
  test_unsupported(c);
  test_config_d();
  return kd_test_finish();
}
