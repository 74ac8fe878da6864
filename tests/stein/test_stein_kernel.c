/* test_stein_kernel.c - the Langevin Stein kernel (src/kernel/stein.c) against its definition
 *   k_p(x, y) = div_x div_y k + grad_x k . s(y) + grad_y k . s(x) + k s(x) . s(y)
 * with every derivative of the base kernel k taken by central finite differences of the base
 * kernel's own values (kernels imq with beta 1/2 and 0.7, gaussian, matern52; d_x = 1, 3, 7;
 * central differences have a truncation error O(h^2) ~ 1e-6, so the bound is 1e-5 of the size of
 * the summed terms), bitwise symmetry, the closed-form diagonal k_p(x, x) = -2 d phi'(0) + |s|^2,
 * and Stein's identity E_{Y~p} k_p(x, Y) = 0 for p = N(0, 1) by quadrature (the zero mean embedding
 * the Stein target relies on); and the preconditioned kernel (check_preconditioned). Serial. */
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"

/* L^-1 of M = L L^T (test's own Cholesky and substitution), dx <= 4 */
static void chol_inv(int dx, const double *M, double *Li) {
  double L[16] = {0};
  for (int j = 0; j < dx; j++) {
    double s = M[j * dx + j];
    for (int c = 0; c < j; c++) s -= L[j * 4 + c] * L[j * 4 + c];
    L[j * 4 + j] = sqrt(s);
    for (int i = j + 1; i < dx; i++) {
      double v = M[i * dx + j];
      for (int c = 0; c < j; c++) v -= L[i * 4 + c] * L[j * 4 + c];
      L[i * 4 + j] = v / L[j * 4 + j];
    }
  }
  for (int c = 0; c < dx; c++)
    for (int i = 0; i < dx; i++) {
      double v = i == c ? 1.0 : 0.0;
      for (int j = c; j < i; j++) v -= L[i * 4 + j] * Li[j * dx + c];
      Li[i * dx + c] = i < c ? 0.0 : v / L[i * 4 + i];
    }
}

/* The base kernel kb, on the Mahalanobis distance when Li is given: kb at (L^-1 x, L^-1 y) */
static double base_pre(kd_kernel *kb, int dx, const double *Li, const double *x, const double *y) {
  double a[16], b[16];
  if (!Li) return kd_kernel_eval(kb, x, y);
  for (int i = 0; i < dx; i++) {
    a[i] = b[i] = 0.0;
    for (int j = 0; j < dx; j++) a[i] += Li[i * dx + j] * x[j], b[i] += Li[i * dx + j] * y[j];
  }
  return kd_kernel_eval(kb, a, b);
}

/* The FD value of k_p at (x, s(x)), (y, s(y)) from the base kernel kb (dimension dx <= 16; on
 * the Mahalanobis distance when Li is given); h2 the step of the mixed second difference. */
static double stein_fd(kd_kernel *kb, int dx, const double *Li, const double *x, const double *sx,
                       const double *y, const double *sy, double h2) {
  const double h = 1e-4;
  double xp[16], yp[16], out = 0.0;
  const double v = base_pre(kb, dx, Li, x, y);
  for (int j = 0; j < dx; j++) out += v * sx[j] * sy[j];
  for (int i = 0; i < dx; i++) {
    memcpy(xp, x, sizeof(double) * dx);
    memcpy(yp, y, sizeof(double) * dx);
    xp[i] = x[i] + h;
    double a = base_pre(kb, dx, Li, xp, y);
    xp[i] = x[i] - h;
    out += (a - base_pre(kb, dx, Li, xp, y)) / (2 * h) * sy[i];
    xp[i] = x[i];
    yp[i] = y[i] + h;
    a = base_pre(kb, dx, Li, x, yp);
    yp[i] = y[i] - h;
    out += (a - base_pre(kb, dx, Li, x, yp)) / (2 * h) * sx[i];
    double m[4];
    for (int c = 0; c < 4; c++) {
      xp[i] = x[i] + (c & 1 ? -h2 : h2);
      yp[i] = y[i] + (c & 2 ? -h2 : h2);
      m[c] = base_pre(kb, dx, Li, xp, yp);
    }
    out += (m[0] - m[1] - m[2] + m[3]) / (4 * h2 * h2);
    xp[i] = x[i];
    yp[i] = y[i];
  }
  return out;
}

/* precondition: diag|matrix (src/kernel/stein_precond.c): the finite-difference Stein operator of
 * the base kernel on the Mahalanobis distance, bitwise symmetry, pair == block tile bitwise, the
 * diagonal -2 phi'(0) tr(M^-1) + |s|^2, M = I bitwise equal to the plain kernel, a singular M
 * refused. d_x = 3. */
static void check_preconditioned(const kd_kernel_type *bases, const double *betas) {
  const int dx = 3;
  const double Mfull[9] = {2.0, 0.6, -0.3, 0.6, 1.0, 0.2, -0.3, 0.2, 0.5};
  const double Mdiag[9] = {2.0, 0, 0, 0, 0.7, 0, 0, 0, 0.3}, I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const double *Ms[2] = {Mfull, Mdiag};
  for (int b = 0; b < 4; b++)
    for (int mi = 0; mi < 2; mi++) {
      kd_kernel_params pb = kd_kernel_params_default(bases[b]), ps;
      pb.ls = 1.1;
      pb.beta = betas[b];
      ps = pb;
      ps.type = KD_KERNEL_STEIN;
      ps.base = bases[b];
      kd_kernel *kb = NULL, *kp = NULL, *k0 = NULL, *ki = NULL;
      KD_TEST_OK(kd_kernel_create(&pb, dx, &kb));
      KD_TEST_OK(kd_kernel_create(&ps, 2 * dx, &kp));
      KD_TEST_OK(kd_kernel_create(&ps, 2 * dx, &k0));
      KD_TEST_OK(kd_kernel_create(&ps, 2 * dx, &ki));
      KD_TEST_OK(kd_kernel_set_stein_precond(kp, Ms[mi]));
      KD_TEST_OK(kd_kernel_set_stein_precond(ki, I3));
      KD_TEST(kd_kernel_stein_preconditioned(kp) && !kd_kernel_stein_preconditioned(k0),
              "preconditioned flag");
      KD_TEST(strstr(kd_kernel_describe(kp), mi ? "precondition=diag" : "precondition=matrix"),
              "description '%s'", kd_kernel_describe(kp));
      double Li[9], maxrel = 0.0, P[6 * 40], K[40 * 40];
      chol_inv(dx, Ms[mi], Li);
      for (int i = 0; i < 6 * 40; i++)
        P[i] = (i % 6 < 3 ? 0.7 : 1.0) * kd_rng_normal(31, (uint64_t)mi, (uint64_t)i);
      KD_TEST_OK(kd_kernel_eval_block(kp, P, 40, P, 40, K, 40));
      int sym = 1, tile = 1, ident = 1;
      for (int i = 0; i < 40; i++)
        for (int j = 0; j < 40; j++) {
          const double v = kd_kernel_eval(kp, P + 6 * i, P + 6 * j);
          const double vt = kd_kernel_eval(kp, P + 6 * j, P + 6 * i);
          const double w0 = kd_kernel_eval(k0, P + 6 * i, P + 6 * j);
          const double wi = kd_kernel_eval(ki, P + 6 * i, P + 6 * j);
          sym &= memcmp(&v, &vt, sizeof v) == 0;
          tile &= memcmp(&v, &K[i * 40 + j], sizeof v) == 0;
          ident &= memcmp(&w0, &wi, sizeof v) == 0;
          if (j > i + 4 || j == i) continue; /* FD on pairs of nearby, distinct rows */
          const double *x = P + 6 * i, *y = P + 6 * j;
          const double fd = stein_fd(kb, dx, Li, x, x + dx, y, y + dx, 3e-4); /* M^-1 up to ~3.3 */
          double scale = 0.0;
          for (int c = 0; c < dx; c++) scale += fabs(x[dx + c] * y[dx + c]) + fabs(x[dx + c]) + 1;
          const double rel = fabs(v - fd) / scale;
          maxrel = rel > maxrel ? rel : maxrel;
        }
      KD_TEST(maxrel < 1e-5, "precondition %s base %s: k_p == FD Stein operator (max rel %.2e)",
              mi ? "diag" : "matrix", kd_kernel_name(bases[b]), maxrel);
      KD_TEST(sym, "preconditioned k_p(x,y) == k_p(y,x) bitwise");
      KD_TEST(tile, "preconditioned pair == block tile bitwise");
      KD_TEST(ident, "M = I: bitwise the plain Stein kernel");
      /* diagonal: -2 phi'(0) tr(M^-1) + |s|^2 with tr(M^-1) from the test's own inverse */
      double tr = 0.0, s2 = 0.0;
      for (int i = 0; i < dx; i++)
        for (int m = 0; m < dx; m++) tr += Li[m * dx + i] * Li[m * dx + i];
      for (int j = 0; j < dx; j++) s2 += P[dx + j] * P[dx + j];
      const double c = bases[b] == KD_KERNEL_IMQ        ? 2 * betas[b]
                       : bases[b] == KD_KERNEL_GAUSSIAN ? 1.0
                                                        : 5.0 / 3.0;
      KD_TEST_REL(kd_kernel_eval(kp, P, P), c * tr / (1.1 * 1.1) + s2, 1e-13,
                  "preconditioned k_p(x, x)");
      kd_kernel_destroy(&kb);
      kd_kernel_destroy(&kp);
      kd_kernel_destroy(&k0);
      kd_kernel_destroy(&ki);
    }
  kd_kernel_params ps = kd_kernel_params_default(KD_KERNEL_STEIN);
  kd_kernel *k = NULL;
  const double sing[9] = {1, 1, 0, 1, 1, 0, 0, 0, 1};
  KD_TEST_OK(kd_kernel_create(&ps, 6, &k));
  KD_TEST(kd_kernel_set_stein_precond(k, sing) == KD_ERR_INPUT &&
              strstr(kd_err_message(), "not positive definite"),
          "singular M refused: '%s'", kd_err_message());
  kd_err_clear();
  kd_kernel_destroy(&k);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const kd_kernel_type bases[4] = {KD_KERNEL_IMQ, KD_KERNEL_IMQ, KD_KERNEL_GAUSSIAN,
                                   KD_KERNEL_MATERN52};
  const double betas[4] = {0.5, 0.7, 0.5, 0.5};
  const int dxs[3] = {1, 3, 7};
  for (int b = 0; b < 4; b++)
    for (int di = 0; di < 3; di++) {
      const int dx = dxs[di];
      kd_kernel_params pb = kd_kernel_params_default(bases[b]), ps;
      pb.ls = 1.3;
      pb.beta = betas[b];
      ps = pb;
      ps.type = KD_KERNEL_STEIN;
      ps.base = bases[b];
      kd_kernel *kb = NULL, *kp = NULL;
      KD_TEST_OK(kd_kernel_create(&pb, dx, &kb));
      KD_TEST_OK(kd_kernel_create(&ps, 2 * dx, &kp));
      double maxrel = 0.0;
      for (int trial = 0; trial < 20; trial++) {
        double X[32], Y[32];
        for (int j = 0; j < 2 * dx; j++) {
          X[j] = kd_rng_normal(11, (uint64_t)trial, (uint64_t)j);
          Y[j] = (j < dx ? 0.4 : 1.0) * kd_rng_normal(12, (uint64_t)trial, (uint64_t)j) +
                 (j < dx ? X[j] : 0.0); /* y near x: the derivatives matter */
        }
        const double v = kd_kernel_eval(kp, X, Y), vt = kd_kernel_eval(kp, Y, X);
        const double fd = stein_fd(kb, dx, NULL, X, X + dx, Y, Y + dx, 1e-3);
        KD_TEST(memcmp(&v, &vt, sizeof v) == 0, "base %s dx=%d: k_p(x,y) == k_p(y,x) bitwise",
                kd_kernel_name(bases[b]), dx);
        double scale = 0.0; /* the size of the terms that are summed */
        for (int j = 0; j < dx; j++) scale += fabs(X[dx + j] * Y[dx + j]) + fabs(X[dx + j]) + 1;
        const double rel = fabs(v - fd) / scale;
        maxrel = rel > maxrel ? rel : maxrel;
      }
      KD_TEST(maxrel < 1e-5,
              "base %s beta %g dx=%d: k_p == finite-difference Stein operator (max "
              "rel %.2e)",
              kd_kernel_name(bases[b]), betas[b], dx, maxrel);
      /* k_p(x, x) = -2 d phi'(0) + |s|^2: imq 2 d beta / ls^2, gaussian d / ls^2, matern52
       * 5 d / (3 ls^2) */
      double xx[2 * 7];
      double s2 = 0.0;
      for (int j = 0; j < 2 * dx; j++) xx[j] = 0.3 * j - 1.0;
      for (int j = 0; j < dx; j++) s2 += xx[dx + j] * xx[dx + j];
      const double c = bases[b] == KD_KERNEL_IMQ        ? 2 * betas[b]
                       : bases[b] == KD_KERNEL_GAUSSIAN ? 1.0
                                                        : 5.0 / 3.0;
      KD_TEST_REL(kd_kernel_eval(kp, xx, xx), c * dx / (1.3 * 1.3) + s2, 1e-14, "k_p(x, x)");
      kd_kernel_destroy(&kb);
      kd_kernel_destroy(&kp);
    }

  /* Stein's identity: int k_p(x, y) N(y; 0, 1) dy = 0 for the N(0,1) score s(y) = -y (d_x = 1),
   * trapezoid rule on [-14, 14] (spectrally accurate for these smooth, decaying integrands) */
  for (int b = 0; b < 4; b++) {
    kd_kernel_params ps = kd_kernel_params_default(KD_KERNEL_STEIN);
    ps.base = bases[b];
    ps.beta = betas[b];
    ps.ls = 0.9;
    kd_kernel *kp = NULL;
    KD_TEST_OK(kd_kernel_create(&ps, 2, &kp));
    const int m = 20001;
    double worst = 0.0, size = 0.0;
    for (int q = 0; q < 5; q++) {
      const double x[2] = {-2.0 + q, 2.0 - q}; /* arbitrary (x, s(x)): the identity is in y */
      double sum = 0.0, sabs = 0.0;
      for (int i = 0; i < m; i++) {
        const double yv = -14.0 + 28.0 * i / (m - 1), y[2] = {yv, -yv};
        const double wq = (i == 0 || i == m - 1 ? 0.5 : 1.0) * 28.0 / (m - 1);
        const double f =
            kd_kernel_eval(kp, x, y) * exp(-0.5 * yv * yv) / sqrt(2 * 3.14159265358979323846);
        sum += wq * f;
        sabs += wq * fabs(f);
      }
      worst = fabs(sum) > worst ? fabs(sum) : worst;
      size = sabs > size ? sabs : size;
    }
    KD_TEST(worst < 1e-9 * size,
            "base %s: E_{N(0,1)} k_p(x, Y) = 0 (max |integral| %.2e, integral of |.| %.2e)",
            kd_kernel_name(bases[b]), worst, size);
    kd_kernel_destroy(&kp);
  }
  check_preconditioned(bases, betas);
  return kd_test_finish();
}
