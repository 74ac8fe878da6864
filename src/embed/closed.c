/* closed.c - closed-form kernel mean embeddings z(x) = int k(x,y) dmu(y) and double integrals
 * zz = int int k dmu dmu. With the Gaussian kernel k(x,y) = prod_i exp(-(x_i-y_i)^2 / (2 l^2))
 * and a product measure, both factor over coordinates; per coordinate (l = ls):
 *   gaussian N(m, s^2):   z = l/sqrt(l^2+s^2) exp(-(x-m)^2 / (2(l^2+s^2))),  zz = l/sqrt(l^2+2 s^2)
 *   uniform [a, b], L = b-a, r = L/l:
 *                         z = l sqrt(pi/2)/L [erf((b-x)/(sqrt2 l)) - erf((a-x)/(sqrt2 l))]
 *                         zz = (2/r^2) [r sqrt(pi/2) erf(r/sqrt2) - (1 - exp(-r^2/2))]
 *                         (the difference x-y has the triangular density (L-|u|)/L^2)
 *   truncated N(m, s^2) on [a, b], Z = Phi(beta) - Phi(alpha):
 *                         z = l/sqrt(l^2+s^2) exp(-(x-m)^2/(2(l^2+s^2)))
 *                             [Phi((b-c)/tau) - Phi((a-c)/tau)] / Z,
 *                         c = (x s^2 + m l^2)/(l^2+s^2), tau = l s / sqrt(l^2+s^2);
 *                         zz = int_a^b z(x) p(x) dx by composite 20-point Gauss-Legendre (the
 *                         double integral needs the bivariate normal CDF: no erf-only form).
 *   mixture sum_k w_k N(m_k, S_k): z = sum_k w_k z_k,
 *                         zz = sum_{k,l} w_k w_l prod_i l/sqrt(l^2+s_ki^2+s_li^2)
 *                              exp(-(m_ki-m_li)^2 / (2(l^2+s_ki^2+s_li^2))).
 * Periodic Sobolev x uniform torus: z = 1, zz = 1 (int_0^1 B_2r = 0).
 * Energy kernel 8/3 - |x-y| x uniform S^2: int |x-y| dsigma(y) = 4/3, so z = 4/3, zz = 4/3. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "embed/target_impl.h"

#define KD_SQRT2_ 1.41421356237309504880
#define KD_SQRT_PI_2_ 1.25331413731550025121 /* sqrt(pi/2) */
#define KD_PI_ 3.14159265358979323846

/* erf(v) - erf(u) for u <= v, without cancellation in the tails. */
static double kd_erf_diff_(double u, double v) {
  if (u >= 0) return erfc(u) - erfc(v);
  if (v <= 0) return erfc(-v) - erfc(-u);
  return erf(v) - erf(u);
}

/* Phi(v) - Phi(u), standard normal CDF. */
static double kd_phi_diff_(double u, double v) {
  return 0.5 * kd_erf_diff_(u / KD_SQRT2_, v / KD_SQRT2_);
}

/* The Gaussian closed forms below are written with q = l^2 + S^2 (S^2 a sum of variances). For
 * length scales and spreads in [1e-150, 1e150] that form is exact to rounding and is kept as it is
 * (results stay bitwise identical); outside it l*l overflows or underflows (ls = 1e300 gave
 * l/sqrt(q) = 0, ls = 1e-300 gave 0/0), so the ratios are formed from (S/l)^2 or (l/S)^2 instead.
 */
static int kd_ls_plain_(double l, double S) { return l > 1e-150 && l < 1e150 && S < 1e150; }

/* wl = l^2/q, ws = S^2/q and tq = t^2/q without forming l^2 or q. */
static void kd_gauss_split_(double l, double S, double t, double *wl, double *ws, double *tq) {
  if (l >= S) {
    const double r = (S / l) * (S / l);
    *wl = 1.0 / (1.0 + r);
    *ws = r / (1.0 + r);
    *tq = (t / l) * (t / l) * *wl;
  } else {
    const double u = (l / S) * (l / S);
    *ws = 1.0 / (1.0 + u);
    *wl = u / (1.0 + u);
    *tq = (t / S) * (t / S) * *ws;
  }
}

/* l / sqrt(l^2 + S^2) * exp(-t^2 / (2 (l^2 + S^2))). */
static double kd_gauss_fac_(double l, double S, double t) {
  double wl, ws, tq;
  if (kd_ls_plain_(l, S)) {
    const double q = l * l + S * S;
    return l / sqrt(q) * exp(-t * t / (2 * q));
  }
  kd_gauss_split_(l, S, t, &wl, &ws, &tq);
  return sqrt(wl) * exp(-tq / 2);
}

static double kd_gauss_z1_(double x, double m, double s, double l) {
  if (kd_ls_plain_(l, s)) {
    double q = l * l + s * s, t = x - m;
    return l / sqrt(q) * exp(-t * t / (2 * q));
  }
  return kd_gauss_fac_(l, s, x - m);
}

/* int int over N(m1, s1^2) x N(m2, s2^2) of the 1-D Gaussian kernel. */
static double kd_gauss_cross1_(double m1, double s1, double m2, double s2, double l) {
  if (kd_ls_plain_(l, fmax(s1, s2))) {
    double q = l * l + s1 * s1 + s2 * s2, t = m1 - m2;
    return l / sqrt(q) * exp(-t * t / (2 * q));
  }
  return kd_gauss_fac_(l, hypot(s1, s2), m1 - m2);
}

static double kd_unif_z1_(double x, double a, double b, double l) {
  double c = KD_SQRT2_ * l;
  return l * KD_SQRT_PI_2_ / (b - a) * kd_erf_diff_((a - x) / c, (b - x) / c);
}

static double kd_unif_zz1_(double a, double b, double l) {
  double r = (b - a) / l;
  if (r < 1.0) {
    /* 2 sum_k (-1)^k r^{2k} / (2^k k! (2k+1)(2k+2)): alternating, terms fall fast for r < 1 */
    double s = 0.0, p = 1.0; /* p = (-r^2/2)^k / k! */
    for (int k = 0; k < 40; k++) {
      double term = p / ((2.0 * k + 1) * (2.0 * k + 2));
      s += term;
      if (fabs(term) < 1e-18 * fabs(s)) break;
      p *= -r * r / 2 / (k + 1);
    }
    return 2 * s;
  }
  return 2 / (r * r) * (r * KD_SQRT_PI_2_ * erf(r / KD_SQRT2_) + expm1(-r * r / 2));
}

static double kd_trunc_z1_(double x, double m, double s, double a, double b, double l, double Z) {
  if (kd_ls_plain_(l, s)) {
    double q = l * l + s * s, t = x - m;
    double c = (x * s * s + m * l * l) / q, tau = l * s / sqrt(q);
    return l / sqrt(q) * exp(-t * t / (2 * q)) * kd_phi_diff_((a - c) / tau, (b - c) / tau) / Z;
  }
  double wl, ws, tq;
  kd_gauss_split_(l, s, x - m, &wl, &ws, &tq);
  const double c = x * ws + m * wl, tau = sqrt(wl) * s;
  return sqrt(wl) * exp(-tq / 2) * kd_phi_diff_((a - c) / tau, (b - c) / tau) / Z;
}

void kd_target_gauss_legendre_(int n, double *x, double *w) {
  for (int i = 0; i < (n + 1) / 2; i++) {
    double z = cos(KD_PI_ * (i + 0.75) / (n + 0.5)), pp = 1.0;
    for (int it = 0; it < 100; it++) {
      double p0 = 1.0, p1 = z;
      for (int j = 2; j <= n; j++) {
        double p2 = ((2.0 * j - 1) * z * p1 - (j - 1.0) * p0) / j;
        p0 = p1;
        p1 = p2;
      }
      pp = n * (z * p1 - p0) / (z * z - 1.0);
      double dz = p1 / pp;
      z -= dz;
      if (fabs(dz) < 1e-16) break;
    }
    x[i] = -z;
    x[n - 1 - i] = z;
    w[i] = w[n - 1 - i] = 2.0 / ((1.0 - z * z) * pp * pp);
  }
}

/* zz for one coordinate of the truncated Gaussian: int_a^b z1(x) p(x) dx by composite
 * 20-point Gauss-Legendre on panels no wider than half the smallest length scale. */
static double kd_trunc_zz1_(double m, double s, double a, double b, double l, double Z) {
  enum { NG = 20 };
  double gx[NG], gw[NG];
  kd_target_gauss_legendre_(NG, gx, gw);
  double lo = fmax(a, m - 40 * s), hi = fmin(b, m + 40 * s);
  if (!(hi > lo)) return 0.0;
  double g = (a <= m && m <= b) ? 0.0 : fmin(fabs(a - m), fabs(b - m)) / s;
  double h = 0.5 * fmin(s / (1.0 + g), l);
  long np = (long)ceil((hi - lo) / h);
  if (np < 1) np = 1;
  if (np > 200000) np = 200000;
  h = (hi - lo) / (double)np;
  const double cn = 1.0 / (s * sqrt(2 * KD_PI_) * Z);
  double tot = 0.0;
  for (long p = 0; p < np; p++) {
    double c0 = lo + (p + 0.5) * h, part = 0.0;
    for (int i = 0; i < NG; i++) {
      double x = c0 + 0.5 * h * gx[i], t = (x - m) / s;
      part += gw[i] * kd_trunc_z1_(x, m, s, a, b, l, Z) * exp(-0.5 * t * t);
    }
    tot += 0.5 * h * part;
  }
  return tot * cn;
}

int kd_target_closed_supported_(const kd_kernel *k, const kd_measure *m, char *why, int nwhy) {
  const kd_kernel_params *p = kd_kernel_get_params(k);
  int ok = 0;
  switch (p->type) {
    case KD_KERNEL_GAUSSIAN:
      ok = m->type == KD_MEASURE_GAUSSIAN || m->type == KD_MEASURE_UNIFORM_BOX ||
           m->type == KD_MEASURE_GAUSSIAN_MIXTURE || m->type == KD_MEASURE_TRUNC_GAUSSIAN;
      break;
    case KD_KERNEL_SOBOLEV:
      ok = m->type == KD_MEASURE_TORUS;
      break;
    case KD_KERNEL_ENERGY:
      ok = m->type == KD_MEASURE_SPHERE;
      if (ok && m->d != 3) {
        snprintf(why, (size_t)nwhy,
                 "target: the closed form of kernel 'energy' with measure 'sphere' needs d = 3 "
                 "(S^2), got d = %d; use an empirical target",
                 m->d);
        return 0;
      }
      break;
    default:
      break;
  }
  if (!ok)
    snprintf(why, (size_t)nwhy,
             "target: no closed-form mean embedding for kernel '%s' with measure '%s' (supported: "
             "gaussian x {gaussian, uniform_box, gaussian_mixture, trunc_gaussian}, sobolev x "
             "torus, energy x sphere with d = 3); use an empirical target",
             kd_kernel_name(p->type), kd_measure_name(m->type));
  return ok;
}

/* Gaussian length scale, checked (the median heuristic must have been applied). */
static kd_err kd_target_ls_(const kd_target *t, double *l) {
  kd_err err = KD_OK;
  *l = kd_kernel_get_params(t->k)->ls;
  KD_CHECK(*l > 0 && isfinite(*l), KD_ERR_ARG,
           "target: kernel.ls is %g (median heuristic not applied?)", *l);
cleanup:
  return err;
}

/* Normalising masses Z_i of the truncated Gaussian, checked > 0. */
static kd_err kd_trunc_mass_(const kd_measure *m, double *Z) {
  kd_err err = KD_OK;
  for (int i = 0; i < m->d; i++) {
    Z[i] = kd_phi_diff_((m->lo[i] - m->mean[i]) / m->sd[i], (m->hi[i] - m->mean[i]) / m->sd[i]);
    KD_CHECK(Z[i] > 0 && isfinite(Z[i]), KD_ERR_NUMERIC,
             "target: trunc_gaussian box carries no mass in double precision on axis %d", i);
  }
cleanup:
  return err;
}

kd_err kd_target_closed_embed_(const kd_target *t, const double *X, kd_lidx n, double *z) {
  kd_err err = KD_OK;
  const kd_measure *m = &t->m;
  const int d = m->d;
  double l = 0.0, *Z = NULL;
  switch (m->type) {
    case KD_MEASURE_TORUS:
      for (kd_lidx i = 0; i < n; i++) z[i] = 1.0;
      break;
    case KD_MEASURE_SPHERE:
      for (kd_lidx i = 0; i < n; i++) z[i] = 4.0 / 3.0;
      break;
    case KD_MEASURE_GAUSSIAN:
      KD_TRY(kd_target_ls_(t, &l));
      for (kd_lidx i = 0; i < n; i++) {
        double v = 1.0;
        for (int j = 0; j < d; j++) v *= kd_gauss_z1_(X[i * d + j], m->mean[j], m->sd[j], l);
        z[i] = v;
      }
      break;
    case KD_MEASURE_UNIFORM_BOX:
      KD_TRY(kd_target_ls_(t, &l));
      for (kd_lidx i = 0; i < n; i++) {
        double v = 1.0;
        for (int j = 0; j < d; j++) v *= kd_unif_z1_(X[i * d + j], m->lo[j], m->hi[j], l);
        z[i] = v;
      }
      break;
    case KD_MEASURE_TRUNC_GAUSSIAN:
      KD_TRY(kd_target_ls_(t, &l));
      KD_ALLOC(Z, d);
      KD_TRY(kd_trunc_mass_(m, Z));
      for (kd_lidx i = 0; i < n; i++) {
        double v = 1.0;
        for (int j = 0; j < d; j++)
          v *= kd_trunc_z1_(X[i * d + j], m->mean[j], m->sd[j], m->lo[j], m->hi[j], l, Z[j]);
        z[i] = v;
      }
      break;
    case KD_MEASURE_GAUSSIAN_MIXTURE:
      KD_TRY(kd_target_ls_(t, &l));
      for (kd_lidx i = 0; i < n; i++) {
        double v = 0.0;
        for (int c = 0; c < m->n_comp; c++) {
          double f = m->mix_w[c];
          for (int j = 0; j < d && f != 0.0; j++)
            f *= kd_gauss_z1_(X[i * d + j], m->means[c * d + j], m->sds[c * d + j], l);
          v += f;
        }
        z[i] = v;
      }
      break;
    default:
      KD_FAIL(KD_ERR_INTERNAL, "target: closed form for measure '%s' missing",
              kd_measure_name(m->type));
  }
cleanup:
  free(Z);
  return err;
}

kd_err kd_target_closed_self_(const kd_target *t, double *zz) {
  kd_err err = KD_OK;
  const kd_measure *m = &t->m;
  const int d = m->d;
  double l = 0.0, v = 1.0, *Z = NULL;
  switch (m->type) {
    case KD_MEASURE_TORUS:
      break;
    case KD_MEASURE_SPHERE:
      v = 4.0 / 3.0;
      break;
    case KD_MEASURE_GAUSSIAN:
      KD_TRY(kd_target_ls_(t, &l));
      for (int j = 0; j < d; j++)
        v *= kd_ls_plain_(l, m->sd[j]) ? l / sqrt(l * l + 2 * m->sd[j] * m->sd[j])
                                       : kd_gauss_fac_(l, KD_SQRT2_ * m->sd[j], 0.0);
      break;
    case KD_MEASURE_UNIFORM_BOX:
      KD_TRY(kd_target_ls_(t, &l));
      for (int j = 0; j < d; j++) v *= kd_unif_zz1_(m->lo[j], m->hi[j], l);
      break;
    case KD_MEASURE_TRUNC_GAUSSIAN:
      KD_TRY(kd_target_ls_(t, &l));
      KD_ALLOC(Z, d);
      KD_TRY(kd_trunc_mass_(m, Z));
      for (int j = 0; j < d; j++)
        v *= kd_trunc_zz1_(m->mean[j], m->sd[j], m->lo[j], m->hi[j], l, Z[j]);
      break;
    case KD_MEASURE_GAUSSIAN_MIXTURE:
      KD_TRY(kd_target_ls_(t, &l));
      v = 0.0;
      for (int a = 0; a < m->n_comp; a++)
        for (int b = 0; b < m->n_comp; b++) {
          double f = m->mix_w[a] * m->mix_w[b];
          for (int j = 0; j < d && f != 0.0; j++)
            f *= kd_gauss_cross1_(m->means[a * d + j], m->sds[a * d + j], m->means[b * d + j],
                                  m->sds[b * d + j], l);
          v += f;
        }
      break;
    default:
      KD_FAIL(KD_ERR_INTERNAL, "target: closed form for measure '%s' missing",
              kd_measure_name(m->type));
  }
  *zz = v;
cleanup:
  free(Z);
  return err;
}
