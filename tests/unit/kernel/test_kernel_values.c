/* test_kernel_values.c - every kernel family at hand-computed values, the periodic Sobolev kernel
 * against its Fourier series, the vectorised exp against libm, parameter checks and eval counts.
 * Serial. */
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"
#include "kernel/kernel_impl.h"

static kd_kernel *mk(kd_kernel_type t, int d, double ls) {
  kd_kernel_params p = kd_kernel_params_default(t);
  p.ls = ls;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, d, &k));
  return k;
}

/* k(x, y) through the three paths: one pair, a 1 x 1 tile, a 1 x 1 mat-vec. All must agree
 * bitwise; returns the pair value. */
static double val3(kd_kernel *k, const double *x, const double *y, const char *what) {
  double v = kd_kernel_eval(k, x, y), t = NAN, m = NAN;
  KD_TEST_OK(kd_kernel_eval_block(k, x, 1, y, 1, &t, 1));
  KD_TEST_OK(kd_kernel_matvec(k, x, 1, y, 1, NULL, 0.0, &m));
  KD_TEST(memcmp(&v, &t, sizeof v) == 0 && memcmp(&v, &m, sizeof v) == 0,
          "%s: pair %.17g tile %.17g matvec %.17g", what, v, t, m);
  return v;
}

/* The bounding-box path (finish_normal where the panel's box proves every argument in the
 * exponential's normal range): tiles and mat-vecs over panels that are all near (normal form),
 * mixed with far columns (subnormal and zero results), holding a NaN column, and rows far away or
 * NaN, each bitwise the pair path; the mat-vec against its lane transcription of the tile.
 * d = 2 (one row at a time) and d = 5 (four-row groups). ls puts the exponential's argument at
 * distance r = 38.1 at about -725.8 (subnormal results) for every family: Gaussian ls = 1
 * (x = -r^2 / 2), Matern ls = sqrt(2 nu) r / 725.8 (x = -sqrt(2 nu) r / ls). Returns the
 * failures. */
static int box_case(kd_kernel_type ty, int d) {
  enum { NA = 14, NB = 2 * KD_KERNEL_PANEL + 21, NBM = 2 * KD_KERNEL_PANEL + 7 };
  static double A[NA * 5], B[NB * 5], K[NA * NB], w[NB], y[NA];
  int bad = 0;
  const double nu2 = ty == KD_KERNEL_MATERN32 ? 3.0 : ty == KD_KERNEL_MATERN52 ? 5.0 : 1.0;
  kd_kernel *k = mk(ty, d, ty == KD_KERNEL_GAUSSIAN ? 1.0 : sqrt(nu2) * 38.1 / 725.8);
  for (int i = 0; i < NA * d; i++) A[i] = kd_rng_uniform(21, 0, (uint64_t)i);
  for (int i = 0; i < NB * d; i++) B[i] = kd_rng_uniform(22, 0, (uint64_t)i);
  for (int j = 0; j < NB; j++) w[j] = 0.5 + kd_rng_uniform(23, 0, (uint64_t)j);
  for (int c = 0; c < d; c++) {
    A[1 * d + c] = 0.5;
    B[(KD_KERNEL_PANEL + 3) * d + c] = c ? 0.5 : 38.6;   /* row 1: x = -725.8, subnormal */
    B[(KD_KERNEL_PANEL + 100) * d + c] = c ? 0.5 : 60.0; /* ... x = -1770: zero */
  }
  /* a far row: r = 37.6 .. 38.6 from the unit box, arguments -707 .. -745 (Gaussian), just past
   * the normal range: its panels take the tested path, and a bound a few % too loose fails */
  A[5 * d] = 38.6;
  for (int c = 1; c < d; c++) A[5 * d + c] = 0.5;
  A[9 * d + 1] = NAN;                         /* a NaN row */
  B[(2 * KD_KERNEL_PANEL + 7) * d + 1] = NAN; /* panel 2: a NaN column (tile only) */
  KD_TEST_OK(kd_kernel_eval_block(k, A, NA, B, NB, K, NB));
  KD_TEST_OK(kd_kernel_matvec(k, A, NA, B, NBM, w, 0.0, y)); /* up to the NaN column */
  for (int i = 0; i < NA; i++) {
    double l[8] = {0};
    for (int j = 0; j < NB; j++) {
      const double v = kd_kernel_eval(k, A + i * d, B + j * d), t = K[i * NB + j];
      bad += !(isnan(v) ? isnan(t) : memcmp(&v, &t, sizeof v) == 0);
      if (j < NBM) l[j % 8] = fma(t, w[j], l[j % 8]);
    }
    const double r = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    bad += !(isnan(r) ? isnan(y[i]) : memcmp(&r, &y[i], sizeof r) == 0);
  }
  bad += !(K[1 * NB + KD_KERNEL_PANEL + 3] > 0.0 && K[1 * NB + KD_KERNEL_PANEL + 3] < 0x1p-1022 &&
           K[1 * NB + KD_KERNEL_PANEL + 100] == 0.0 && K[5 * NB] < 0x1p-1022 && isnan(y[9]) &&
           !isnan(y[0]) && isnan(K[2 * KD_KERNEL_PANEL + 7]));
  kd_kernel_destroy(&k);
  return bad;
}

/* per-coordinate Sobolev factor by its Fourier series 1 + 2 sum_{m=1}^{M} cos(2 pi m t)/m^{2r} */
static double sob_series(int r, double t, long M) {
  const double pi = 3.14159265358979323846;
  double s = 0.0;
  for (long m = M; m >= 1; m--) s += cos(2 * pi * m * t) / pow((double)m, 2.0 * r);
  if (t == 0.0) { /* Euler-Maclaurin tail of sum_{m>M} m^{-2r} (the only slowly converging case) */
    double q = 2.0 * r - 1.0, Mf = (double)M;
    s += 1.0 / (q * pow(Mf, q)) - 0.5 / pow(Mf, q + 1.0) + (q + 1.0) / 12.0 / pow(Mf, q + 2.0);
  }
  return 1.0 + 2.0 * s;
}

/* gaussian_sum at 4000 random pairs (d = 2, |x - y| from 0 to 12 ls) against the same mean with
 * one exponential per scale (Gaussian kernels at each ls_j, summed from 0.0 in the order of the
 * scales, times 1 / L): bit for bit without squaring (ratio 3), within (24 + L) units of 2^-52
 * relative on a ratio-2 grid (one exponential per three scales, the others by squaring:
 * docs/kernels.md); and against (1/L) sum_j expl(-r^2 / (2 ls_j^2)) in long double within
 * 1e-15 + 4 |x| 2^-52 (x the widest scale's argument: the rounding of r^2 that every path
 * shares). `groups` is the expected gsq layout (sizes at each group's narrowest scale). Returns
 * the largest difference from the one-exponential mean, in units of 2^-52. */
static double gsum_bound_case(int L, double ratio, const signed char *groups) {
  enum { N = 4000 };
  static double X[2 * N], Y[2 * N], K[N], G[N];
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN_SUM);
  p.ls = 0.7;
  p.n_ls = L;
  p.ls_ratio = ratio;
  kd_kernel *k = NULL, *kg[8] = {NULL};
  KD_TEST_OK(kd_kernel_create(&p, 2, &k));
  for (int l = 0; l < L; l++) {
    KD_TEST(k->gsq[l] == groups[l], "gaussian_sum L %d ratio %g: group %d at scale %d, not %d", L,
            ratio, k->gsq[l], l, groups[l]);
    kd_kernel_params pg = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
    pg.ls = p.ls * pow(ratio, (double)l - 0.5 * (double)(L - 1)); /* gaussian_sum's ls_j */
    KD_TEST_OK(kd_kernel_create(&pg, 2, &kg[l]));
  }
  for (int i = 0; i < N; i++) {
    const double r = 12.0 * p.ls * kd_rng_uniform(31, 0, (uint64_t)i);
    const double a = 6.283185307179586 * kd_rng_uniform(32, 0, (uint64_t)i);
    X[2 * i] = kd_rng_uniform(33, 0, (uint64_t)i);
    X[2 * i + 1] = kd_rng_uniform(34, 0, (uint64_t)i);
    Y[2 * i] = X[2 * i] + r * cos(a);
    Y[2 * i + 1] = X[2 * i + 1] + r * sin(a);
  }
  for (int i = 0; i < N; i++) {
    KD_TEST_OK(kd_kernel_eval_block(k, X + 2 * i, 1, Y + 2 * i, 1, K + i, 1));
    double sum = 0.0;
    for (int l = 0; l < L; l++) sum += kd_kernel_eval(kg[l], X + 2 * i, Y + 2 * i);
    G[i] = sum * (1.0 / (double)L);
  }
  double worst = 0.0, worst_exact = 0.0;
  int same = 1;
  const double lim = 24.0 + L, wide = -0.5 / (p.ls * p.ls * pow(ratio, (double)(L - 1)));
  for (int i = 0; i < N; i++) {
    same &= K[i] == G[i];
    const double e = fabs(K[i] - G[i]) / G[i] / 0x1p-52;
    worst = e > worst ? e : worst;
    const long double dx = (long double)X[2 * i] - Y[2 * i];
    const long double dy = (long double)X[2 * i + 1] - Y[2 * i + 1];
    long double ref = 0.0L;
    for (int l = 0; l < L; l++) {
      const long double ls = (long double)p.ls * powl((long double)ratio, l - 0.5L * (L - 1));
      ref += expl(-(dx * dx + dy * dy) / (2.0L * ls * ls));
    }
    ref /= L;
    const double x = fabs(wide * (double)(dx * dx + dy * dy));
    const double ex = (double)(fabsl((long double)K[i] - ref) / ref);
    worst_exact = ex / (1e-15 + 4.0 * x * 0x1p-52) > worst_exact ? ex / (1e-15 + 4.0 * x * 0x1p-52)
                                                                 : worst_exact;
  }
  if (ratio == 2.0)
    KD_TEST(worst <= lim,
            "gaussian_sum L %d ratio 2: %.1f units of 2^-52 from one exponential "
            "per scale (bound %.0f)",
            L, worst, lim);
  else
    KD_TEST(same, "gaussian_sum L %d ratio %g: not the one-exponential mean bit for bit", L, ratio);
  KD_TEST(worst_exact <= 1.0, "gaussian_sum L %d ratio %g: %.2f of the bound against expl", L,
          ratio, worst_exact);
  for (int l = 0; l < L; l++) kd_kernel_destroy(&kg[l]);
  kd_kernel_destroy(&k);
  return worst;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const double pi = 3.14159265358979323846;
  const double tol = 4e-16;
  kd_kernel *k = NULL;

  /* ---- names and defaults ---- */
  for (int t = 0; t < KD_KERNEL_COUNT_; t++)
    KD_TEST((int)kd_kernel_from_name(kd_kernel_name((kd_kernel_type)t)) == t, "name round trip %d",
            t);
  KD_TEST(kd_kernel_from_name("gauss") == KD_KERNEL_COUNT_ &&
              kd_kernel_from_name(NULL) == KD_KERNEL_COUNT_,
          "unknown name");
  /* capabilities: a length scale exactly where the family has the key, the radial families are
   * the distance kernels ACTT grids, and the Gaussian alone has the FGT and Fourier features */
  unsigned seen = 0;
  for (int t = 0; t < KD_KERNEL_COUNT_; t++) {
    const kd_kernel_type ty = (kd_kernel_type)t;
    const char *nm = kd_kernel_name(ty);
    KD_TEST(kd_kernel_type_has(ty, KD_KCAP_LS) == kd_kernel_has_ls(nm), "%s: LS cap = has_ls", nm);
    KD_TEST(!kd_kernel_type_has(ty, KD_KCAP_RADIAL) || kd_kernel_type_has(ty, KD_KCAP_LS),
            "%s: radial implies a length scale", nm);
    KD_TEST(kd_kernel_type_has(ty, KD_KCAP_FGT) == (ty == KD_KERNEL_GAUSSIAN) &&
                kd_kernel_type_has(ty, KD_KCAP_FOURIER) == (ty == KD_KERNEL_GAUSSIAN),
            "%s: FGT and Fourier features: the gaussian only", nm);
    KD_TEST(kd_kernel_type_has(ty, KD_KCAP_STEIN) == (ty == KD_KERNEL_STEIN), "%s: stein", nm);
    KD_TEST(kd_kernel_type_has(ty, 0), "%s: the empty set of capabilities", nm);
    if (kd_kernel_type_has(ty, KD_KCAP_RADIAL)) seen |= 1u << t;
  }
  KD_TEST(seen == ((1u << KD_KERNEL_GAUSSIAN) | (1u << KD_KERNEL_LAPLACE) | (1u << KD_KERNEL_IMQ) |
                   (1u << KD_KERNEL_MATERN12) | (1u << KD_KERNEL_MATERN32) |
                   (1u << KD_KERNEL_MATERN52)),
          "the radial families: %#x", seen);
  KD_TEST(!kd_kernel_type_has(KD_KERNEL_COUNT_, 0) && !kd_kernel_has(NULL, 0), "unknown: nothing");
  kd_kernel_params def = kd_kernel_params_default(KD_KERNEL_IMQ);
  KD_TEST(def.ls == 1.0 && def.beta == 0.5 && def.c == 1.0 && def.degree == 2 && def.order == 1,
          "defaults");

  /* ---- distance kernels at |x-y| = 1 (x, y in R^3 with a 3-4-5 style offset) ---- */
  double x3[3] = {0.3, -1.2, 2.0}, y3[3] = {0.3 + 0.6, -1.2 - 0.8, 2.0}; /* distance exactly ~1 */
  double r2 = (0.3 - y3[0]) * (0.3 - y3[0]) + (-1.2 - y3[1]) * (-1.2 - y3[1]);
  double r = sqrt(r2);
  k = mk(KD_KERNEL_GAUSSIAN, 3, 2.0);
  KD_TEST_REL(val3(k, x3, y3, "gaussian"), exp(-r2 / 8.0), tol, "gaussian ls=2");
  KD_TEST_REL(exp(-r2 / 8.0), exp(-1.0 / 8.0), 1e-15, "test points at distance 1");
  KD_TEST(val3(k, x3, x3, "gaussian diag") == 1.0, "gaussian k(x,x) = 1 exactly");
  kd_kernel_destroy(&k);
  KD_TEST(k == NULL, "destroy sets NULL");
  kd_kernel_destroy(&k); /* NULL is fine */

  double x1[1] = {0.25}, y1[1] = {1.25}; /* distance 1 in d = 1 */
  k = mk(KD_KERNEL_GAUSSIAN, 1, 2.0);
  KD_TEST_REL(val3(k, x1, y1, "gaussian d1"), exp(-1.0 / 8.0), tol, "gaussian(1; ls 2) = e^-1/8");
  kd_kernel_destroy(&k);
  k = mk(KD_KERNEL_LAPLACE, 3, 2.0);
  KD_TEST_REL(val3(k, x3, y3, "laplace"), exp(-r / 2.0), tol, "laplace ls=2");
  kd_kernel_destroy(&k);
  k = mk(KD_KERNEL_MATERN12, 1, 0.5);
  KD_TEST_REL(val3(k, x1, y1, "matern12"), exp(-2.0), tol, "matern12(1; ls 0.5) = e^-2");
  kd_kernel_destroy(&k);
  k = mk(KD_KERNEL_MATERN32, 1, 1.0);
  KD_TEST_REL(val3(k, x1, y1, "matern32"), (1 + sqrt(3.0)) * exp(-sqrt(3.0)), tol, "matern32");
  kd_kernel_destroy(&k);
  k = mk(KD_KERNEL_MATERN52, 1, 1.0);
  KD_TEST_REL(val3(k, x1, y1, "matern52"), (1 + sqrt(5.0) + 5.0 / 3.0) * exp(-sqrt(5.0)), tol,
              "matern52");
  kd_kernel_destroy(&k);
  k = mk(KD_KERNEL_ENERGY, 1, 1.0);
  KD_TEST_REL(val3(k, x1, y1, "energy"), 5.0 / 3.0, tol, "energy = 8/3 - 1");
  KD_TEST(val3(k, x1, x1, "energy diag") == 8.0 / 3.0, "energy k(x,x) = 8/3");
  kd_kernel_destroy(&k);
  {
    const double betas[4] = {0.5, 1.0, 1.5, 0.7};
    for (int b = 0; b < 4; b++) {
      kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_IMQ);
      p.ls = 2.0;
      p.beta = betas[b];
      KD_TEST_OK(kd_kernel_create(&p, 1, &k));
      KD_TEST_REL(val3(k, x1, y1, "imq"), pow(1.25, -betas[b]), tol, "imq (1 + 1/4)^-beta");
      kd_kernel_destroy(&k);
    }
  }
  /* ---- dot-product kernels ---- */
  double a2[2] = {1, 2}, b2[2] = {3, 4};
  k = mk(KD_KERNEL_LINEAR, 2, 1.0);
  KD_TEST(val3(k, a2, b2, "linear") == 12.0, "linear <(1,2),(3,4)> + 1 = 12");
  kd_kernel_destroy(&k);
  {
    kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_POLYNOMIAL);
    p.degree = 3;
    KD_TEST_OK(kd_kernel_create(&p, 2, &k));
    KD_TEST(val3(k, a2, b2, "poly") == 1728.0, "polynomial (11 + 1)^3 = 1728");
    kd_kernel_destroy(&k);
    p.ls = 2.0;
    p.degree = 5;
    p.c = 0.5;
    KD_TEST_OK(kd_kernel_create(&p, 2, &k));
    KD_TEST_REL(val3(k, a2, b2, "poly"), pow(11.0 / 4.0 + 0.5, 5), 1e-15, "polynomial ls 2 deg 5");
    kd_kernel_destroy(&k);
  }
  {
    kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_ATTENTION);
    p.dk = 1;
    double xa[3] = {0.5, 2, 1}, ya[3] = {0.4, 3, -1};
    KD_TEST_OK(kd_kernel_create(&p, 3, &k));
    KD_TEST_REL(val3(k, xa, ya, "attention"), 5.0 * exp(0.2), 1e-15, "attention e^0.2 (6 - 1)");
    kd_kernel_destroy(&k);
    p.ls = 2.0;
    KD_TEST_OK(kd_kernel_create(&p, 3, &k));
    KD_TEST_REL(val3(k, xa, ya, "attention"), 5.0 * exp(0.05), 1e-15, "attention ls 2");
    kd_kernel_destroy(&k);
  }
  {
    /* gaussian_sum: |x - y|^2 = 25 at ls = 5, ratio 2, 3 scales (2.5, 5, 10):
     * (e^-2 + e^-1/2 + e^-1/8) / 3; one scale is the Gaussian bit for bit */
    kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN_SUM);
    p.ls = 5.0;
    double xs[3] = {0, 0, 1}, ys[3] = {3, 4, 1};
    KD_TEST_OK(kd_kernel_create(&p, 3, &k));
    KD_TEST_REL(val3(k, xs, ys, "gaussian_sum"), (exp(-2.0) + exp(-0.5) + exp(-0.125)) / 3.0, 1e-15,
                "gaussian_sum (e^-2 + e^-1/2 + e^-1/8) / 3");
    KD_TEST(val3(k, xs, xs, "gaussian_sum") == 1.0, "gaussian_sum k(x, x) = 1");
    KD_TEST(strcmp(kd_kernel_describe(k), "gaussian_sum(ls=5,n_ls=3,ls_ratio=2)") == 0,
            "gaussian_sum describe: %s", kd_kernel_describe(k));
    kd_kernel_destroy(&k);
    p.n_ls = 1;
    kd_kernel_params pg = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
    pg.ls = 5.0;
    kd_kernel *kg = NULL;
    KD_TEST_OK(kd_kernel_create(&p, 3, &k));
    KD_TEST_OK(kd_kernel_create(&pg, 3, &kg));
    KD_TEST(val3(k, xs, ys, "gaussian_sum") == val3(kg, xs, ys, "gaussian"),
            "gaussian_sum with one scale is the Gaussian bit for bit");
    kd_kernel_destroy(&kg);
    kd_kernel_destroy(&k);
    {
      const signed char g3[3] = {3, 0, 0}, g5[5] = {2, 0, 3, 0, 0},
                        g8[8] = {2, 0, 3, 0, 0, 3, 0, 0}, g5r[5] = {1, 1, 1, 1, 1},
                        g4[4] = {1, 3, 0, 0};
      const double e3 = gsum_bound_case(3, 2.0, g3), e5 = gsum_bound_case(5, 2.0, g5),
                   e8 = gsum_bound_case(8, 2.0, g8), e5r = gsum_bound_case(5, 3.0, g5r),
                   e4 = gsum_bound_case(4, 2.0, g4);
      printf(
          "gaussian_sum: largest error %.1f / %.1f / %.1f / %.1f units of 2^-52 at L = 3 / 4 / 5 / "
          "8 (ratio 2), %.1f at L = 5 (ratio 3)\n",
          e3, e4, e5, e8, e5r);
    }
    p.n_ls = 65;
    KD_TEST(kd_kernel_create(&p, 3, &k) == KD_ERR_CONFIG && strstr(kd_err_message(), "kernel.n_ls"),
            "gaussian_sum n_ls 65 rejected: %s", kd_err_message());
    kd_err_clear();
    p.n_ls = 3;
    p.ls_ratio = 1.0;
    KD_TEST(
        kd_kernel_create(&p, 3, &k) == KD_ERR_CONFIG && strstr(kd_err_message(), "kernel.ls_ratio"),
        "gaussian_sum ratio 1 with 3 scales rejected: %s", kd_err_message());
    kd_err_clear();
  }
  {
    /* deep: x = (0, 0) vs (3, 4) (|dx|^2 = 25), u = (1) vs (3) (|du|^2 = 4); ls = 5, ls_phi = 2,
     * eps = 0.25: [(0.75 e^-1/2) + 0.25] e^-1/2 */
    kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_DEEP);
    p.dx = 2;
    p.ls = 5.0;
    p.ls_phi = 2.0;
    p.eps = 0.25;
    double xd[3] = {0, 0, 1}, yd[3] = {3, 4, 3};
    KD_TEST_OK(kd_kernel_create(&p, 3, &k));
    KD_TEST_REL(val3(k, xd, yd, "deep"), (0.75 * exp(-0.5) + 0.25) * exp(-0.5), 1e-15,
                "deep [(1-eps) e^-1/2 + eps] e^-1/2");
    KD_TEST(val3(k, xd, xd, "deep") == 1.0, "deep k(x, x) = 1");
    KD_TEST(strcmp(kd_kernel_describe(k), "deep(ls=5,ls_phi=2,eps=0.25,dx=2)") == 0,
            "deep describe: %s", kd_kernel_describe(k));
    KD_TEST(kd_kernel_length_scale_phi(k) == 2.0 && kd_kernel_length_scale(k) == 5.0,
            "deep: both length scales");
    kd_kernel_destroy(&k);
    /* eps = 1: the Gaussian on x alone, whatever the embedding */
    p.eps = 1.0;
    KD_TEST_OK(kd_kernel_create(&p, 3, &k));
    KD_TEST_REL(val3(k, xd, yd, "deep"), exp(-0.5), 1e-15, "deep eps = 1 is the Gaussian on x");
    kd_kernel_destroy(&k);
    /* ls_phi: median pending: the kernel refuses to evaluate */
    p.ls_phi_median = 1;
    KD_TEST_OK(kd_kernel_create(&p, 3, &k));
    KD_TEST(kd_kernel_median_pending(k) && isnan(kd_kernel_eval(k, xd, yd)) &&
                strstr(kd_kernel_describe(k), "ls_phi=median"),
            "deep: ls_phi median pending: %s", kd_kernel_describe(k));
    double kv = 0;
    KD_TEST(kd_kernel_eval_block(k, xd, 1, yd, 1, &kv, 1) == KD_ERR_ARG &&
                strstr(kd_err_message(), "kernel.ls_phi"),
            "deep: pending ls_phi: block refused: %s", kd_err_message());
    kd_err_clear();
    kd_kernel_destroy(&k);
  }

  /* ---- periodic Sobolev: closed form at t = 1/4 and the Fourier series ---- */
  {
    kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_SOBOLEV);
    double xs[1] = {0.1}, ys[1] = {0.35};
    KD_TEST_OK(kd_kernel_create(&p, 1, &k));
    KD_TEST_REL(val3(k, xs, ys, "sobolev"), 1.0 - pi * pi / 24.0, 1e-15,
                "sobolev r=1 at t=1/4: 1 + 2 pi^2 B2(1/4)");
    KD_TEST_REL(val3(k, xs, xs, "sobolev"), 1.0 + pi * pi / 3.0, 1e-15, "sobolev r=1 at 0");
    kd_kernel_destroy(&k);
    const double ts[5] = {0.0, 0.125, 0.3, 0.5, 0.9};
    const long M[4] = {0, 200000, 20000, 2000};
    const double stol[4] = {0, 1e-9, 1e-12, 1e-13};
    for (int order = 1; order <= 3; order++) {
      p.order = order;
      KD_TEST_OK(kd_kernel_create(&p, 1, &k));
      for (int i = 0; i < 5; i++) {
        /* shifts by integers (and the sign of x - y) must not matter */
        double xa[1] = {0.7 + ts[i] - 3.0}, ya[1] = {0.7};
        double ser = sob_series(order, ts[i], M[order]);
        KD_TEST_REL(val3(k, xa, ya, "sobolev"), ser, stol[order], "sobolev vs Fourier series");
        KD_TEST(kd_kernel_eval(k, xa, ya) == kd_kernel_eval(k, ya, xa), "sobolev symmetric");
      }
      kd_kernel_destroy(&k);
    }
    /* d = 3 is the product of the coordinate factors */
    p.order = 2;
    KD_TEST_OK(kd_kernel_create(&p, 3, &k));
    double xs3[3] = {0.1, 0.9, 0.5}, ys3[3] = {0.2, 0.05, 2.75};
    double prod =
        sob_series(2, 0.1, 20000) * sob_series(2, 0.85, 20000) * sob_series(2, 0.75, 20000);
    KD_TEST_REL(val3(k, xs3, ys3, "sobolev d3"), prod, 1e-12, "sobolev d=3 product");
    kd_kernel_destroy(&k);
  }

  /* ---- the vectorised exp against libm ---- */
  {
    const kd_lidx n = 400000;
    double *xe = malloc(sizeof(double) * n), *ye = malloc(sizeof(double) * n);
    for (kd_lidx i = 0; i < n; i++)
      xe[i] = i < n / 2 ? -708.0 * (double)i / (double)(n / 2)
                        : -40.0 * kd_rng_uniform(3, 0, (uint64_t)i); /* the range kernels use */
    kd_kernel_vexp_neg_(n, xe, ye);
    double maxrel = 0.0;
    int same = 1;
    for (kd_lidx i = 0; i < n; i++) {
      double e = exp(xe[i]);
      double rel = fabs(ye[i] - e) / e;
      if (rel > maxrel) maxrel = rel;
      same &= ye[i] == kd_kexp_neg_(xe[i]); /* vector and scalar code agree bitwise */
    }
    KD_TEST(maxrel <= 2 * 0x1p-52, "exp max relative error %.3g (<= 2 eps)", maxrel);
    KD_TEST(same, "vectorised exp == scalar exp bitwise");
    /* the normal form (2^k added to the exponent field) against the general one, bitwise, on a
     * dense sweep of its range [-707, 0] that includes both ends and the points where k steps */
    same = 1;
    for (kd_lidx i = 0; i < n; i++) {
      double xs = i == 0 ? -0.0 : -707.0 * (double)i / (double)(n - 1);
      const double ln2 = 0x1.62e42fefa39efp-1;
      double xk = -0.5 * ln2 - ln2 * (double)(i % 1020); /* k = round(x / ln 2) steps here */
      same &= kd_kexp_neg_normal_(xs) == kd_kexp_neg_(xs);
      same &= kd_kexp_neg_normal_(xk) == kd_kexp_neg_(xk);
      same &= kd_kexp_neg_normal_(nextafter(xk, 0.0)) == kd_kexp_neg_(nextafter(xk, 0.0));
    }
    KD_TEST(same, "exp normal form == general form bitwise on [-707, 0]");
    KD_TEST(KD_KEXP_OUTSIDE(-707.0) == 0 && KD_KEXP_OUTSIDE(nextafter(-707.0, -1e9)) == 1 &&
                KD_KEXP_OUTSIDE(NAN) == 1 && KD_KEXP_OUTSIDE(-INFINITY) == 1,
            "the normal form's range test");
    /* a panel with arguments outside that range among normal ones (NaN, -inf, subnormal
     * results) is computed by the general form throughout; panels without them by the normal
     * form; both bitwise the scalar exp */
    {
      const kd_lidx m = 3 * KD_KERNEL_PANEL + 5;
      double *xa = malloc(sizeof(double) * m), *ya = malloc(sizeof(double) * m);
      for (kd_lidx i = 0; i < m; i++) xa[i] = -30.0 * kd_rng_uniform(5, 0, (uint64_t)i);
      xa[KD_KERNEL_PANEL + 7] = NAN;
      xa[KD_KERNEL_PANEL + 8] = -INFINITY;
      xa[KD_KERNEL_PANEL + 9] = -740.0;
      xa[3 * KD_KERNEL_PANEL + 4] = -720.0;
      kd_kernel_vexp_neg_(m, xa, ya);
      int ok = 1;
      for (kd_lidx i = 0; i < m; i++) {
        double e = kd_kexp_neg_(xa[i]);
        ok &= isnan(e) ? isnan(ya[i]) : ya[i] == e;
      }
      KD_TEST(ok && isnan(ya[KD_KERNEL_PANEL + 7]) && ya[KD_KERNEL_PANEL + 8] == 0.0 &&
                  ya[KD_KERNEL_PANEL + 9] > 0.0 && ya[KD_KERNEL_PANEL + 9] < 0x1p-1022,
              "panels with NaN / -inf / subnormal results bitwise the scalar exp");
      free(xa);
      free(ya);
    }
    /* the subnormal range: once rounded */
    double maxabs = 0.0;
    for (int i = 0; i <= 1000; i++) {
      double xs = -708.0 - 38.0 * i / 1000.0;
      double diff = fabs(kd_kexp_neg_(xs) - exp(xs));
      if (diff > maxabs) maxabs = diff;
    }
    KD_TEST(maxabs <= 5e-324, "exp subnormal range abs error %.3g", maxabs);
    KD_TEST(kd_kexp_neg_(0.0) == 1.0 && kd_kexp_neg_(-0.0) == 1.0, "exp(0) = 1");
    KD_TEST(kd_kexp_neg_(-INFINITY) == 0.0 && kd_kexp_neg_(-1e300) == 0.0, "exp(-inf) = 0");
    KD_TEST(isnan(kd_kexp_neg_(NAN)), "exp(NaN) = NaN");
    KD_TEST(kd_kexp_neg_(-1.0) == exp(-1.0) || fabs(kd_kexp_neg_(-1.0) / exp(-1.0) - 1) < 2.3e-16,
            "exp(-1)");
    free(xe);
    free(ye);
  }

  /* ---- parameter checks name the key ---- */
  {
    kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
    p.ls = -1;
    KD_TEST(kd_kernel_create(&p, 2, &k) == KD_ERR_CONFIG && k == NULL &&
                strstr(kd_err_message(), "kernel.ls"),
            "ls < 0 rejected: %s", kd_err_message());
    kd_err_clear();
    p = kd_kernel_params_default(KD_KERNEL_SOBOLEV);
    p.order = 4;
    KD_TEST(
        kd_kernel_create(&p, 2, &k) == KD_ERR_CONFIG && strstr(kd_err_message(), "kernel.order"),
        "order 4 rejected: %s", kd_err_message());
    kd_err_clear();
    p = kd_kernel_params_default(KD_KERNEL_ATTENTION);
    p.dk = 2;
    KD_TEST(kd_kernel_create(&p, 2, &k) == KD_ERR_CONFIG && strstr(kd_err_message(), "kernel.dk"),
            "dk = d rejected: %s", kd_err_message());
    kd_err_clear();
    p = kd_kernel_params_default(KD_KERNEL_DEEP);
    KD_TEST(kd_kernel_create(&p, 3, &k) == KD_ERR_CONFIG && strstr(kd_err_message(), "kernel.dx"),
            "deep without dx rejected: %s", kd_err_message());
    kd_err_clear();
    p.dx = 1;
    p.eps = -0.1;
    KD_TEST(kd_kernel_create(&p, 3, &k) == KD_ERR_CONFIG && strstr(kd_err_message(), "kernel.eps"),
            "deep eps < 0 rejected: %s", kd_err_message());
    kd_err_clear();
    p.eps = 0.5;
    p.ls_phi = 0;
    KD_TEST(
        kd_kernel_create(&p, 3, &k) == KD_ERR_CONFIG && strstr(kd_err_message(), "kernel.ls_phi"),
        "deep ls_phi 0 rejected: %s", kd_err_message());
    kd_err_clear();
    p = kd_kernel_params_default(KD_KERNEL_IMQ);
    p.beta = 0;
    KD_TEST(kd_kernel_create(&p, 2, &k) == KD_ERR_CONFIG && strstr(kd_err_message(), "kernel.beta"),
            "beta 0 rejected: %s", kd_err_message());
    kd_err_clear();
    p = kd_kernel_params_default(KD_KERNEL_POLYNOMIAL);
    p.degree = 0;
    KD_TEST(
        kd_kernel_create(&p, 2, &k) == KD_ERR_CONFIG && strstr(kd_err_message(), "kernel.degree"),
        "degree 0 rejected: %s", kd_err_message());
    kd_err_clear();
    p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
    p.ls = 0;
    p.ls_median = 1;
    KD_TEST_OK(kd_kernel_create(&p, 2, &k));
    /* until the median is computed the kernel refuses to evaluate */
    double z2[2] = {0, 0}, kv = 0;
    KD_TEST(strcmp(kd_kernel_describe(k), "gaussian(ls=median)") == 0, "pending describe: %s",
            kd_kernel_describe(k));
    KD_TEST(isnan(kd_kernel_eval(k, z2, z2)), "pending median: eval is NaN");
    KD_TEST(kd_kernel_eval_block(k, z2, 1, z2, 1, &kv, 1) == KD_ERR_ARG &&
                strstr(kd_err_message(), "kernel.ls"),
            "pending median: block refused: %s", kd_err_message());
    kd_err_clear();
    kd_kernel_destroy(&k);
    p = kd_kernel_params_default(KD_KERNEL_SOBOLEV);
    p.ls_median = 1; /* families without ls ignore it */
    KD_TEST_OK(kd_kernel_create(&p, 1, &k));
    KD_TEST(kd_kernel_eval(k, z2, z2) > 1.0, "sobolev ignores ls: median");
    kd_kernel_destroy(&k);
  }

  {
    const kd_kernel_type bt[5] = {KD_KERNEL_GAUSSIAN, KD_KERNEL_LAPLACE, KD_KERNEL_MATERN12,
                                  KD_KERNEL_MATERN32, KD_KERNEL_MATERN52};
    for (int i = 0; i < 5; i++)
      KD_TEST(box_case(bt[i], 2) == 0 && box_case(bt[i], 5) == 0,
              "%s: bounding-box path: tiles and mat-vecs bitwise the pair path (near, far, NaN)",
              kd_kernel_name(bt[i]));
  }

  /* ---- rows packed once (kd_kernel_pack): the tiles of kd_kernel_eval_block bit for bit, on
   * every path (one row against many, many rows against fewer than 4 columns, several panels) ----
   */
  {
    enum { NA = 20, NB = 1100 };
    static double A[NA * 7], B[NB * 7], K1[NA * NB], K2[NA * NB];
    for (int i = 0; i < NA * 7; i++) A[i] = 0.5 + 0.3 * kd_rng_normal(11, 1, (uint64_t)i);
    for (int i = 0; i < NB * 7; i++) B[i] = 0.5 + 0.3 * kd_rng_normal(12, 1, (uint64_t)i);
    const int dims[3] = {2, 3, 7};
    const kd_lidx nas[2] = {1, NA}, nbs[4] = {1, 3, 50, NB};
    int cases = 0;
    for (int t = 0; t < KD_KERNEL_COUNT_; t++) {
      if (t == KD_KERNEL_STEIN) continue; /* packs nothing: forwards to kd_kernel_eval_block */
      for (int di = 0; di < 3; di++) {
        kd_kernel_params kp = kd_kernel_params_default((kd_kernel_type)t);
        kp.ls = 0.7;
        if (t == KD_KERNEL_ATTENTION) kp.dk = 1; /* keys: the first coordinate */
        if (t == KD_KERNEL_DEEP) kp.dx = 1;      /* inputs: the first coordinate */
        KD_TEST_OK(kd_kernel_create(&kp, dims[di], &k));
        for (int bi = 0; bi < 4; bi++) {
          kd_kernel_packed *pk = NULL;
          KD_TEST_OK(kd_kernel_pack(k, B, nbs[bi], &pk));
          for (int ai = 0; ai < 2; ai++) {
            const kd_lidx na = nas[ai], nb = nbs[bi];
            memset(K1, 0, sizeof K1);
            memset(K2, 0xff, sizeof K2);
            KD_TEST_OK(kd_kernel_eval_block(k, A, na, B, nb, K1, nb));
            const uint64_t e0 = kd_kernel_evals(k);
            KD_TEST_OK(kd_kernel_eval_block_packed(k, A, na, pk, K2, nb));
            KD_TEST(kd_kernel_evals(k) - e0 == (uint64_t)(na * nb), "packed: counts na*nb");
            KD_TEST(memcmp(K1, K2, sizeof(double) * (size_t)(na * nb)) == 0,
                    "%s d=%d %lld x %lld: packed tile = tile bit for bit",
                    kd_kernel_name((kd_kernel_type)t), dims[di], (long long)na, (long long)nb);
            cases++;
          }
          kd_kernel_packed_free(&pk);
          KD_TEST(pk == NULL, "packed free sets NULL");
        }
        kd_kernel_destroy(&k);
      }
    }
    KD_TEST(cases == (KD_KERNEL_COUNT_ - 1) * 3 * 4 * 2, "packed cases run: %d", cases);
    k = mk(KD_KERNEL_GAUSSIAN, 3, 1.0);
    kd_kernel_packed *pk = NULL;
    KD_TEST_OK(kd_kernel_pack(k, B, 10, &pk));
    kd_kernel_destroy(&k);
    k = mk(KD_KERNEL_GAUSSIAN, 2, 1.0);
    KD_TEST(kd_kernel_eval_block_packed(k, A, 1, pk, K1, 10) == KD_ERR_ARG &&
                strstr(kd_err_message(), "dimension 3"),
            "packed rows of another dimension refused: %s", kd_err_message());
    kd_err_clear();
    kd_kernel_packed_free(&pk);
    kd_kernel_destroy(&k);
  }

  /* ---- kd_kernel_matvec_multi: each kernel's own mat-vec, bit for bit ---- */
  {
    const int dims[3] = {1, 2, 5};
    const kd_lidx shapes[3][2] = {{70, 300}, {20, 3}, {5, 40}}; /* panels, the small path */
    for (int di = 0; di < 3; di++) {
      const int d = dims[di];
      kd_kernel *ks[4] = {mk(KD_KERNEL_GAUSSIAN, d, 0.3), mk(KD_KERNEL_GAUSSIAN, d, 1.0),
                          mk(KD_KERNEL_LAPLACE, d, 2.0), mk(KD_KERNEL_GAUSSIAN, d, 4.0)};
      double A[70 * 5], B[300 * 5], w[300], ys[70], ym[4][70];
      for (int i = 0; i < 70 * d; i++) /* some rows far out: the range test picks both forms */
        A[i] = kd_rng_normal(17, 1, (uint64_t)i) * (i % 7 == 0 ? 12.0 : 1.0);
      for (int i = 0; i < 300 * d; i++) B[i] = kd_rng_normal(18, 1, (uint64_t)i);
      for (int i = 0; i < 300; i++) w[i] = 0.5 + kd_rng_uniform(19, 0, (uint64_t)i);
      double *yp[4] = {ym[0], ym[1], ym[2], ym[3]};
      for (int sh = 0; sh < 3; sh++) {
        const kd_lidx na = shapes[sh][0], nb = shapes[sh][1];
        KD_TEST_OK(kd_kernel_matvec_multi(ks, 4, A, na, B, nb, sh ? w : NULL, yp));
        int same = 1;
        for (int l = 0; l < 4; l++) {
          KD_TEST_OK(kd_kernel_matvec(ks[l], A, na, B, nb, sh ? w : NULL, 0.0, ys));
          same &= !memcmp(ys, ym[l], sizeof(double) * (size_t)na);
        }
        KD_TEST(same, "matvec_multi d=%d %lldx%lld: each kernel's mat-vec bit for bit", d,
                (long long)na, (long long)nb);
      }
      KD_TEST(kd_kernel_evals(ks[2]) == 2 * (70 * 300 + 20 * 3 + 5 * 40),
              "matvec_multi counts na nb per kernel (%llu)",
              (unsigned long long)kd_kernel_evals(ks[2]));
      for (int l = 0; l < 4; l++) kd_kernel_destroy(&ks[l]);
    }
    kd_kernel *k2[2] = {mk(KD_KERNEL_GAUSSIAN, 2, 1.0), mk(KD_KERNEL_GAUSSIAN, 3, 1.0)};
    double A[6] = {0}, ya[2], yb[2], *yp[2] = {ya, yb};
    KD_TEST(kd_kernel_matvec_multi(k2, 2, A, 2, A, 2, NULL, yp) == KD_ERR_ARG,
            "matvec_multi refuses kernels of different dimensions");
    kd_err_clear();
    kd_kernel_destroy(&k2[0]);
    kd_kernel_destroy(&k2[1]);
  }

  /* ---- descriptions and evaluation counts ---- */
  {
    k = mk(KD_KERNEL_GAUSSIAN, 2, 0.5);
    KD_TEST(strcmp(kd_kernel_describe(k), "gaussian(ls=0.5)") == 0, "describe: %s",
            kd_kernel_describe(k));
    KD_TEST(kd_kernel_dim(k) == 2 && kd_kernel_get_params(k)->ls == 0.5, "accessors");
    double A[2 * 300], w[300], yv[300], K[300 * 301];
    for (int i = 0; i < 600; i++) A[i] = kd_rng_normal(5, 1, (uint64_t)i);
    for (int i = 0; i < 300; i++) w[i] = 1.0;
    KD_TEST(kd_kernel_evals(k) == 0, "fresh count 0");
    KD_TEST_OK(kd_kernel_eval_block(k, A, 300, A, 299, K, 301));
    KD_TEST(kd_kernel_evals(k) == 300 * 299, "tile counts na*nb");
    KD_TEST_OK(kd_kernel_matvec(k, A, 7, A, 300, w, 0.0, yv));
    KD_TEST(kd_kernel_evals(k) == 300 * 299 + 7 * 300, "matvec counts na*nb");
    KD_TEST_OK(kd_kernel_diag(k, A, 300, yv));
    (void)kd_kernel_eval(k, A, A + 2);
    KD_TEST(kd_kernel_evals(k) == 300 * 299 + 7 * 300 + 300 + 1, "diag na, eval 1");
    KD_TEST_OK(kd_kernel_eval_block(k, A, 0, A, 5, K, 5));
    KD_TEST_OK(kd_kernel_matvec(k, A, 3, A, 0, NULL, 0.0, yv));
    KD_TEST(yv[0] == 0.0 && yv[2] == 0.0, "empty B gives y = 0");
    KD_TEST(kd_kernel_eval_block(k, A, 3, A, 5, K, 4) == KD_ERR_ARG, "ldk < nb rejected");
    kd_err_clear();
    kd_kernel_reset_evals(k);
    KD_TEST(kd_kernel_evals(k) == 0, "reset");
    kd_kernel_destroy(&k);
  }
  return kd_test_finish();
}
