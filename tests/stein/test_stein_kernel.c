/* test_stein_kernel.c - the Langevin Stein kernel (src/kernel/stein.c) against its definition
 *   k_p(x, y) = div_x div_y k + grad_x k . s(y) + grad_y k . s(x) + k s(x) . s(y)
 * with every derivative of the base kernel k taken by central finite differences of the base
 * kernel's own values (kernels imq with beta 1/2 and 0.7, gaussian, matern52; d_x = 1, 3, 7;
 * central differences have a truncation error O(h^2) ~ 1e-6, so the bound is 1e-5 of the size of
 * the summed terms), bitwise symmetry, the closed-form diagonal k_p(x, x) = -2 d phi'(0) + |s|^2,
 * and Stein's identity E_{Y~p} k_p(x, Y) = 0 for p = N(0, 1) by quadrature (the zero mean embedding
 * the Stein target relies on). Serial. */
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"

/* the FD value of k_p at (x, s(x)), (y, s(y)) from the base kernel kb (dimension dx) */
static double stein_fd(kd_kernel *kb, int dx, const double *x, const double *sx, const double *y,
                       const double *sy) {
  const double h = 1e-4, h2 = 1e-3;
  double xp[16], yp[16], v = kd_kernel_eval(kb, x, y);
  double out = 0.0;
  for (int j = 0; j < dx; j++) out += v * sx[j] * sy[j];
  for (int i = 0; i < dx; i++) {
    memcpy(xp, x, sizeof(double) * dx);
    memcpy(yp, y, sizeof(double) * dx);
    xp[i] = x[i] + h;
    double a = kd_kernel_eval(kb, xp, y);
    xp[i] = x[i] - h;
    double b = kd_kernel_eval(kb, xp, y);
    out += (a - b) / (2 * h) * sy[i]; /* d/dx_i k . s(y)_i */
    xp[i] = x[i];
    yp[i] = y[i] + h;
    a = kd_kernel_eval(kb, x, yp);
    yp[i] = y[i] - h;
    b = kd_kernel_eval(kb, x, yp);
    out += (a - b) / (2 * h) * sx[i]; /* d/dy_i k . s(x)_i */
    double m[4];
    for (int c = 0; c < 4; c++) { /* d^2 k / dx_i dy_i by the mixed central difference */
      xp[i] = x[i] + (c & 1 ? -h2 : h2);
      yp[i] = y[i] + (c & 2 ? -h2 : h2);
      m[c] = kd_kernel_eval(kb, xp, yp);
    }
    out += (m[0] - m[1] - m[2] + m[3]) / (4 * h2 * h2);
  }
  return out;
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
        const double fd = stein_fd(kb, dx, X, X + dx, Y, Y + dx);
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
  return kd_test_finish();
}
