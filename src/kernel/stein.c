/* stein.c - the Langevin Stein kernel of a radial base kernel k(x, y) = phi(|x - y|^2):
 *   k_p(x, y) = div_x div_y k + grad_x k . s(y) + grad_y k . s(x) + k s(x) . s(y),
 * s = grad log p the score of the target p. A point is a row (x, s(x)) of width d = 2 d_x. With
 * u = x - y, r2 = |u|^2, t = u . (s(y) - s(x)), q = s(x) . s(y) and phi', phi'' the derivatives of
 * phi in r2 (grad_x k = 2 phi' u = -grad_y k, div_x div_y k = -2 d_x phi' - 4 phi'' r2):
 *   k_p = -2 d_x phi' - 4 phi'' r2 + 2 phi' t + phi q                               (docs/stein.md)
 * (precondition: diag|matrix in stein_precond.c, through the same finish with w2 and tr(M^-1)).
 *   gaussian  phi = exp(-r2 / (2 ls^2))
 *   imq       phi = (1 + r2 / ls^2)^(-beta)
 *   matern52  phi = (1 + a + a^2/3) exp(-a), a = sqrt(5 r2) / ls.
 * Every path accumulates (r2, t, q) coordinate by coordinate in increasing order with explicit
 * fma() and applies the same finish, so a value is bitwise the same in any tile, row block or
 * rank, and k_p(x, y) == k_p(y, x) bitwise (swapping x and y negates both factors of t's terms). */
#include <stdlib.h>

#include "kernel/kernel_impl.h"

static void kd_stein_setup_(kd_kernel *k) { (void)k; }

KD_KCLONES static void kd_stein_unused_finish_(const kd_kernel *k, kd_lidx n, const double *s,
                                               const double *s2, double *out) {
  (void)k, (void)s, (void)s2;
  for (kd_lidx j = 0; j < n; j++) out[j] = NAN;
}

/* The Gaussian base's k_p: exp(g r2) (q + 2 g t - 4 g^2 w2 - 2 d g), g = -1/(2 ls^2), by
 * kd_kexp_neg_sel_; returns the count of arguments outside the normal form's range. */
static inline kd_lidx kd_stein_gauss_loop_(kd_lidx n, double g, double dx,
                                           const double *restrict r2, const double *w2,
                                           const double *restrict t, const double *restrict q,
                                           double *restrict out, int general) {
  const double g2 = 2.0 * g, g4 = -4.0 * g * g, c0 = -2.0 * dx * g;
  kd_lidx outside = 0;
  for (kd_lidx j = 0; j < n; j++) {
    double v = fma(g2, t[j], q[j]);
    v = fma(g4, w2[j], v) + c0;
    const double x = g * r2[j];
    outside += KD_KEXP_OUTSIDE(x);
    out[j] = kd_kexp_neg_sel_(x, general) * v;
  }
  return outside;
}

/* The Matern 5/2 base's k_p: e [(c^2/3)(1+a)(d - t) - (c^4/3) w2 + (1 + a + a^2/3) q],
 * a = c sqrt(r2), e = exp(-a), by kd_kexp_neg_sel_; returns the outside count as above. */
static inline kd_lidx kd_stein_m52_loop_(kd_lidx n, double c, double dx, const double *restrict r2,
                                         const double *w2, const double *restrict t,
                                         const double *restrict q, double *restrict out,
                                         int general) {
  const double c23 = c * c / 3.0, c43 = -c23 * c * c, third = 1.0 / 3.0;
  kd_lidx outside = 0;
  for (kd_lidx j = 0; j < n; j++) {
    const double a = sqrt(r2[j]) * c;
    outside += KD_KEXP_OUTSIDE(-a);
    const double e = kd_kexp_neg_sel_(-a, general);
    double v = fma(c23 * (1.0 + a), dx - t[j], c43 * w2[j]);
    v = fma((1.0 + a) + (a * a) * third, q[j], v);
    out[j] = e * v;
  }
  return outside;
}

/* out[j] = k_p from the accumulators (r2, w2, t, q)[j], j < n, and T (kernel_impl.h).
 * Constants from the parameters. */
KD_KCLONES void kd_stein_finish4_(const kd_kernel *k, kd_lidx n, const double *restrict r2,
                                  const double *w2, const double *restrict t,
                                  const double *restrict q, double T, double *restrict out) {
  const double ls = k->p.ls, beta = k->p.beta, dx = T;
  switch (k->p.base) {
    case KD_KERNEL_GAUSSIAN: { /* phi (q + 2 g t - 4 g^2 r2 - 2 d g), g = -1/(2 ls^2) */
      const double g = -0.5 / (ls * ls);
      if (kd_stein_gauss_loop_(n, g, dx, r2, w2, t, q, out, 0))
        kd_stein_gauss_loop_(n, g, dx, r2, w2, t, q, out, 1);
      break;
    }
    case KD_KERNEL_MATERN52: { /* e [(c^2/3)(1+a)(d - t) - (c^4/3) r2 + (1 + a + a^2/3) q] */
      const double c = sqrt(5.0) / ls;
      if (kd_stein_m52_loop_(n, c, dx, r2, w2, t, q, out, 0))
        kd_stein_m52_loop_(n, c, dx, r2, w2, t, q, out, 1);
      break;
    }
    default: { /* imq: u^-b q + u^-(b+1) (2 d b - 2 b t)/ls^2 - 4 b (b+1) r2 u^-(b+2) / ls^4 */
      const double il = 1.0 / (ls * ls), a1 = 2.0 * dx * beta * il, a2 = -2.0 * beta * il;
      const double a3 = -4.0 * beta * (beta + 1.0) * il * il;
      const int half = beta == 0.5;
      for (kd_lidx j = 0; j < n; j++) {
        const double u = fma(r2[j], il, 1.0);
        const double phi = half ? 1.0 / sqrt(u) : pow(u, -beta), psi = phi / u, chi = psi / u;
        out[j] = fma(phi, q[j], fma(psi, fma(a2, t[j], a1), chi * (a3 * w2[j])));
      }
    }
  }
}

/* the unpreconditioned finish: w2 = r2, T = d_x */
static void kd_stein_finish_(const kd_kernel *k, kd_lidx n, const double *r2, const double *t,
                             const double *q, double *out) {
  kd_stein_finish4_(k, n, r2, r2, t, q, (double)(k->d / 2), out);
}

double kd_stein_pair_(const kd_kernel *k, const double *x, const double *y) {
  if (k->pre) return kd_stein_pre_pair_(k, x, y);
  const int dx = k->d / 2;
  double r2 = 0.0, t = 0.0, q = 0.0, out = 0.0;
  for (int kk = 0; kk < dx; kk++) {
    const double u = x[kk] - y[kk], sx = x[dx + kk], sy = y[dx + kk];
    r2 = fma(u, u, r2);
    t = fma(u, sy - sx, t);
    q = fma(sx, sy, q);
  }
  kd_stein_finish_(k, 1, &r2, &t, &q, &out);
  return out;
}

/* (r2, t, q)[j] of the row a = (x, s) against the n packed columns of Bp (coordinate kk of column
 * j at Bp[kk*ldb + j], scores from row dx on). */
KD_KCLONES static void kd_stein_acc_(int dx, const double *restrict a, const double *restrict Bp,
                                     kd_lidx ldb, kd_lidx n, double *restrict r2,
                                     double *restrict t, double *restrict q) {
  for (kd_lidx j = 0; j < n; j++) r2[j] = t[j] = q[j] = 0.0;
  for (int kk = 0; kk < dx; kk++) {
    const double ax = a[kk], as = a[dx + kk];
    const double *restrict bx = Bp + (size_t)kk * ldb, *restrict bs = Bp + (size_t)(dx + kk) * ldb;
    for (kd_lidx j = 0; j < n; j++) {
      const double u = ax - bx[j];
      r2[j] = fma(u, u, r2[j]);
      t[j] = fma(u, bs[j] - as, t[j]);
      q[j] = fma(as, bs[j], q[j]);
    }
  }
}

/* p[l] += sum over j = l mod 8 of v[j] w[j], j < n (a multiple of 8), in increasing j: the
 * lanes of kernel_block.c (lane (j0 + j) mod 8 = j mod 8 since 8 divides the panel width). */
KD_KCLONES static void kd_stein_lanes_(kd_lidx n, const double *restrict v,
                                       const double *restrict w, double *restrict p) {
  double q[8];
  for (int l = 0; l < 8; l++) q[l] = p[l];
  for (kd_lidx j = 0; j < n; j += 8)
    for (int l = 0; l < 8; l++) q[l] = fma(v[j + l], w[j + l], q[l]);
  for (int l = 0; l < 8; l++) p[l] = q[l];
}

#define KD_STEIN_ROWS 64 /* rows of A per block: the mat-vec lanes of a block stay in L1 */

/* (r2, t, q)[i] of the rows A_0..A_{n-1} (row-major, width 2 dx) against one point b: the pair
 * accumulation of kd_stein_pair_ row by row (few columns: no packing, no padding). */
KD_KCLONES static void kd_stein_acc_rows_(int dx, const double *restrict A, kd_lidx n,
                                          const double *restrict b, double *restrict r2,
                                          double *restrict t, double *restrict q) {
  for (kd_lidx i = 0; i < n; i++) {
    const double *a = A + i * 2 * dx;
    double sr = 0.0, st = 0.0, sq = 0.0;
    for (int kk = 0; kk < dx; kk++) {
      const double u = a[kk] - b[kk], as = a[dx + kk], bs = b[dx + kk];
      sr = fma(u, u, sr);
      st = fma(u, bs - as, st);
      sq = fma(as, bs, sq);
    }
    r2[i] = sr, t[i] = st, q[i] = sq;
  }
}

/* nb < 4 columns (a new atom against all rows): down the rows, column by column. Matvec lanes: one
 * product per lane from 0, as the padded general path gives. */
static kd_err kd_stein_few_(const kd_kernel *k, const double *A, kd_lidx na, const double *B,
                            kd_lidx nb, double *K, kd_lidx ldk, const double *w, double beta,
                            double *y) {
  kd_err err = KD_OK;
  const int d = k->d;
  const kd_lidx P = KD_KERNEL_PANEL;
  double *acc = NULL, *out = NULL;
  KD_ALLOC(acc, 3 * (size_t)P);
  KD_ALLOC(out, (size_t)P * 4);
  for (kd_lidx i0 = 0; i0 < na; i0 += P) {
    const kd_lidx nc = na - i0 < P ? na - i0 : P;
    for (kd_lidx j = 0; j < nb; j++) {
      kd_stein_acc_rows_(d / 2, A + i0 * d, nc, B + j * d, acc, acc + P, acc + 2 * P);
      kd_stein_finish_(k, nc, acc, acc + P, acc + 2 * P, out + j * P);
      for (kd_lidx i = 0; K && i < nc; i++) K[(i0 + i) * ldk + j] = out[j * P + i];
    }
    for (kd_lidx i = 0; !K && i < nc; i++) {
      double l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (kd_lidx j = 0; j < nb; j++) l[j] = fma(out[j * P + i], w ? w[j] : 1.0, 0.0);
      const double sum = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
      y[i0 + i] = beta == 0.0 ? sum : beta * y[i0 + i] + sum;
    }
  }
cleanup:
  free(acc);
  free(out);
  return err;
}

kd_err kd_stein_block_(const kd_kernel *k, const double *A, kd_lidx na, const double *B, kd_lidx nb,
                       double *K, kd_lidx ldk, const double *w, double beta, double *y) {
  kd_err err = KD_OK;
  const int d = k->d, dx = d / 2;
  kd_lidx P = (kd_lidx)KD_KERNEL_PANEL * 128 / (d > 128 ? d : 128) / 16 * 16;
  double *Bp = NULL, *acc = NULL, *out = NULL, *wp = NULL, lanes[KD_STEIN_ROWS * 8];
  P = P < 16 ? 16 : P;
  if (k->pre) return kd_stein_pre_block_(k, A, na, B, nb, K, ldk, w, beta, y);
  if (nb < 4) return kd_stein_few_(k, A, na, B, nb, K, ldk, w, beta, y);
  const kd_lidx nbp = nb / P * P + (nb % P + 15) / 16 * 16;
  KD_ALLOC(Bp, (size_t)d * (size_t)(nbp > 0 ? nbp : 1));
  KD_ALLOC(acc, 3 * (size_t)P);
  KD_ALLOC(out, P);
  kd_kernel_pack_panels(d, B, nb, P, Bp);
  if (!K) {
    KD_ALLOC(wp, nbp > 0 ? nbp : 1); /* zero beyond nb: the padded columns add exact zeros */
    for (kd_lidx j = 0; j < nb; j++) wp[j] = w ? w[j] : 1.0;
  }
  for (kd_lidx i0 = 0; i0 < na; i0 += KD_STEIN_ROWS) {
    const kd_lidx i1 = na - i0 < KD_STEIN_ROWS ? na : i0 + KD_STEIN_ROWS;
    memset(lanes, 0, sizeof lanes);
    for (kd_lidx j0 = 0; j0 < nb; j0 += P) {
      const kd_lidx nc = nb - j0 < P ? nb - j0 : P, npad = (nc + 15) / 16 * 16;
      const double *pan = Bp + (size_t)d * (size_t)j0;
      for (kd_lidx i = i0; i < i1; i++) {
        kd_stein_acc_(dx, A + i * d, pan, npad, npad, acc, acc + P, acc + 2 * P);
        if (K) {
          kd_stein_finish_(k, nc, acc, acc + P, acc + 2 * P, K + i * ldk + j0);
          continue;
        }
        kd_stein_finish_(k, npad, acc, acc + P, acc + 2 * P, out);
        kd_stein_lanes_(npad, out, wp + j0, lanes + (i - i0) * 8);
      }
    }
    for (kd_lidx i = i0; !K && i < i1; i++) {
      const double *l = lanes + (i - i0) * 8;
      const double sum = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
      y[i] = beta == 0.0 ? sum : beta * y[i] + sum;
    }
  }
cleanup:
  free(Bp);
  free(acc);
  free(out);
  free(wp);
  return err;
}

double kd_stein_ref_(const kd_kernel *k, const double *x, const double *y) {
  const int dx = k->d / 2;
  const double l = k->p.ls, b = k->p.beta;
  double r2 = 0.0, w2 = 0.0, t = 0.0, q = 0.0, T = dx, phi, d1, d2;
  const double *Mi = k->pre ? k->pre + (size_t)dx * dx : NULL;
  for (int j = 0; j < dx; j++) {
    double mu = x[j] - y[j]; /* (M^-1 u)_j */
    if (Mi) {
      mu = 0.0;
      for (int c = 0; c < dx; c++) mu += Mi[j * dx + c] * (x[c] - y[c]);
    }
    r2 += (x[j] - y[j]) * mu;
    w2 += mu * mu;
    t += mu * (y[dx + j] - x[dx + j]);
    q += x[dx + j] * y[dx + j];
  }
  if (Mi) {
    T = 0.0;
    for (int j = 0; j < dx; j++) T += Mi[j * dx + j];
  }
  if (k->p.base == KD_KERNEL_GAUSSIAN) {
    phi = exp(-r2 / (2 * l * l));
    d1 = -phi / (2 * l * l);
    d2 = phi / (4 * l * l * l * l);
  } else if (k->p.base == KD_KERNEL_MATERN52) {
    const double c = sqrt(5.0) / l, a = c * sqrt(r2);
    phi = (1 + a + a * a / 3) * exp(-a);
    d1 = -c * c * (1 + a) * exp(-a) / 6;
    d2 = c * c * c * c * exp(-a) / 12;
  } else {
    const double u = 1 + r2 / (l * l);
    phi = pow(u, -b);
    d1 = -b / (l * l) * pow(u, -b - 1);
    d2 = b * (b + 1) / (l * l * l * l) * pow(u, -b - 2);
  }
  return -2 * T * d1 - 4 * d2 * w2 + 2 * d1 * t + phi * q;
}

const kd_kernel_family kd_kfam_stein = {KD_KERNEL_STEIN,
                                        KD_KACC_SQDIST,
                                        kd_stein_setup_,
                                        kd_stein_unused_finish_,
                                        NULL,
                                        "auto",
                                        NULL,
                                        0,
                                        KD_KCAP_LS | KD_KCAP_STEIN,
                                        kd_stein_read_keys_};
