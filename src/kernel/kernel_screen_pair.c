/* kernel_screen_pair.c - the screening mat-vec of pairs' differences: for rows a = X_{i0+2p},
 * a' = X_{i0+2p+1}, D = sum_j w_j (k(a, X_j) - k(a', X_j)) in single precision, with a proven bound
 * on its distance to y - y' for the two rows kd_kernel_matvec returns. The row screening
 * (kernel_screen.c) bounds each row by single precision times the row's kernel mass sum |w| k;
 * for a close pair that bound dwarfs D itself and a halving's coin needs the exact rows more and
 * more often as its set grows. Here the error scales with the pair's distance instead.
 *
 * In a panel's frame (kernel_screen.c), with D0 = sigma (a - b), D1 = sigma (a' - b), delta =
 * sigma (a - a') = D0 - D1, S0 = |D0|^2, S1 = |D1|^2 and Delta = S0 - S1 = sum_k delta_k (D0_k +
 * D1_k): k(a', b) = k(a, b) e^Delta, so with h the side of the larger value (h = a when Delta <= 0)
 *   k(a, b) - k(a', b) = -/+ k(h, b) expm1(-|Delta|)   (- for h = a).
 * Both factors are computed in single precision: k(h, b) = exp(x_h) with the row screening's
 * relative bound A0 + A1 |x_h| (per panel), expm1 on [-80, 0] with relative error below
 * KD_SCR_EM1_ERR, and Delta from delta rounded once (from double precision) and the frame's
 * differences: with u = 2^-24 and rho the panel's radius,
 *   |Delta~ - Delta| <= u' |delta| ((4 + d)(2 sqrt(S_h) + |delta|) + 4 rho sqrt(d))
 *                    <= u' |delta| ((4 + d)(1 + |delta| + S_h) + 4 rho sqrt(d)) =: E(x_h)
 * (S_h <= 1.001 |x_h| + 1e-3; each coordinate's sum D0_k + D1_k within u (3 |D0_k| + 3 |D1_k| +
 * 4 rho), d fma roundings, Cauchy-Schwarz, |D_other| <= |D_h| + |delta|, 2 sqrt(S) <= S + 1),
 * whichever side the rounded sign picks. A pair is screened this way when that error stays below
 * 1e-3 at S_h = 80 (then e^error <= 1.001), else its two rows are screened by rows. Per column,
 * with k~ = exp(x_h) and e~ = |expm1~|:
 *   |value~ - value| <= k~ e~ (A0 + A1 |x_h| + 1.0011 KD_SCR_EM1_ERR + u) + 1.003 k~ E(x_h)
 * and kd_kernel_matvec's two values are within 1.02 k~ (6e-16 + (d + 2) 1.2e-16 (2 |x_h| + 1))
 * of the exact ones, its two sums within (nb/8 + 4) 2^-53 sum |w| k~ each. The bound is kept as
 * four sums per lane, sum |w| k~ e~ (1, |x_h|) and sum |w| k~ (1, |x_h|), weighted per panel.
 * A value clamped at x_h = -80 is off by at most KD_SCR_TINY, as in the row screening. */
#include <stdlib.h>

#include "kernel/kernel_screen_impl.h"

/* Relative error bound of kd_fexpm1_neg_ on [-80, 0]: k = 0 (x >= -0.35): r = x exactly, the
 * Taylor remainder of degree 8 (0.02 u of |r|), the Horner steps (u (1 + 0.2 + 0.04 + ...)) and
 * the product q r (u): 2.3 u; k <= -1: the result lies below -0.29 and 2^k expm1(r) + 2^k - 1 adds
 * r's rounding (0.9 u relative), 2^k times the first case's error (1.7 u) and the fma (u): 3.6 u.
 * Bounded by 5 u; measured in the unit test. */
#define KD_SCR_EM1_ERR (5.0 * 0x1p-24)

/* expm1(x) for -80 <= x <= 0 in single precision: kd_fexp_reduce_, expm1(r) by
 * Taylor-Horner of degree 8 (q = expm1(r) / r, then q r), 2^k expm1(r) + (2^k - 1) in one fma
 * (k = 0: expm1(r) itself, no cancellation). NaN stays NaN. */
static inline float kd_fexpm1_neg_(float x) {
  uint32_t tb;
  const float r = kd_fexp_reduce_(x, &tb);
  const float q = kd_fexp_horner_(fmaf(1.0f / 40320.0f, r, 1.0f / 5040.0f), r);
  const float s = kd_fexp_scale_(1.0f, tb); /* 2^k */
  return fmaf(s, q * r, s - 1.0f);
}

/* Array form for the unit test (x[j] in [-80, 0]). */
KD_KCLONES void kd_kernel_vfexpm1_neg_(kd_lidx n, const float *x, float *y) {
  for (kd_lidx j = 0; j < n; j++) y[j] = kd_fexpm1_neg_(x[j]);
}

/* One pair against the first npad columns of one packed float panel: a0, a1 the two rows and dl
 * their difference in the panel's frame; the difference of the values into acc[0..16), the bound
 * terms cf[0] sum |w| k e + cf[1] sum |w| k e |x| + cf[2] sum |w| k + cf[3] sum |w| k |x| into
 * acc[16..32). Portable: one simple loop per step, as kd_screen_panel_. */
KD_KCLONES static void kd_screen_pair_panel_(int d, const float *restrict a0,
                                             const float *restrict a1, const float *restrict dl,
                                             const float *restrict Bp, kd_lidx ld, kd_lidx npad,
                                             const float *restrict w, const float *restrict wa,
                                             const float *restrict cf, float *restrict x,
                                             float *restrict xd, float *restrict kv,
                                             float *restrict em, double *restrict acc) {
  for (kd_lidx j = 0; j < npad; j++) {
    x[j] = 0.0f;
    em[j] = 0.0f;
    xd[j] = 0.0f;
  }
  for (int kk = 0; kk < d; kk++) {
    const float b0 = a0[kk], b1 = a1[kk], dk = dl[kk];
    const float *b = Bp + (size_t)kk * (size_t)ld;
    for (kd_lidx j = 0; j < npad; j++) {
      const float t0 = b0 - b[j], t1 = b1 - b[j];
      x[j] = fmaf(t0, t0, x[j]);
      em[j] = fmaf(t1, t1, em[j]);
      xd[j] = fmaf(dk, t0 + t1, xd[j]);
    }
  }
  /* x: the larger value's argument (clamped at -80, NaN kept); em: -|Delta| (clamped, NaN kept);
   * xd keeps Delta's sign */
  for (kd_lidx j = 0; j < npad; j++) {
    const float s = xd[j] <= 0.0f ? x[j] : em[j];
    const float ad = xd[j] <= 0.0f ? xd[j] : -xd[j];
    x[j] = s > -KD_SCR_ARG_MIN ? KD_SCR_ARG_MIN : -s;
    em[j] = ad < KD_SCR_ARG_MIN ? KD_SCR_ARG_MIN : ad;
  }
  for (kd_lidx j = 0; j < npad; j++) kv[j] = kd_fexp_neg_(x[j]);
  for (kd_lidx j = 0; j < npad; j++) em[j] = kd_fexpm1_neg_(em[j]);
  float f0[16] = {0}, f1[16] = {0}, f2[16] = {0}, f3[16] = {0};
  for (kd_lidx j0 = 0; j0 < npad; j0 += KD_SCR_BLOCK) {
    const kd_lidx j1 = npad - j0 < KD_SCR_BLOCK ? npad : j0 + KD_SCR_BLOCK;
    float fy[16] = {0};
    for (kd_lidx j = j0; j < j1; j += 16)
      for (int l = 0; l < 16; l++) {
        const float v = kv[j + l] * em[j + l]; /* <= 0 */
        const float dv = xd[j + l] <= 0.0f ? -v : v;
        const float vw = kv[j + l] * wa[j + l], ve = -(v * wa[j + l]);
        fy[l] = fmaf(dv, w[j + l], fy[l]);
        f0[l] += ve;
        f1[l] = fmaf(-ve, x[j + l], f1[l]);
        f2[l] += vw;
        f3[l] = fmaf(-vw, x[j + l], f3[l]);
      }
    for (int l = 0; l < 16; l++) acc[l] += (double)fy[l];
  }
  for (int l = 0; l < 16; l++)
    acc[16 + l] +=
        (double)fmaf(cf[3], f3[l], fmaf(cf[2], f2[l], fmaf(cf[1], f1[l], cf[0] * f0[l])));
}

/* The bound coefficients of pair-panel (|delta| = nd, radius rho, nb columns), rounded up. */
static void kd_screen_pair_coef_(const kd_kernel_screen *S, kd_lidx pj, double nd, kd_lidx nb,
                                 float *cf) {
  const double u = 0x1p-24 * (1.0 + 0x1p-20), dd = (double)S->d;
  const double ysum = (KD_SCR_YTERMS + 1.0) * u + ((double)nb / 8.0 + 4.0) * 0x1p-53;
  const double ep = u * nd * ((4.0 + dd) * (1.001 + nd) + 4.0 * S->rho[pj] * sqrt(dd));
  const double eq = u * nd * (4.0 + dd) * 1.001;
  const double dbl0 =
      1.02 * (6e-16 + (dd + 2.0) * 1.22e-16) + 2.01 * ((double)nb / 8.0 + 4.0) * 0x1p-53;
  const double dbl1 = 1.02 * (dd + 2.0) * 2.44e-16;
  cf[0] = (float)(S->A0[pj] + 1.0011 * KD_SCR_EM1_ERR + u + ysum) * (1.0f + 0x1p-22f);
  cf[1] = (float)S->A1[pj] * (1.0f + 0x1p-22f);
  cf[2] = (float)(1.003 * ep + dbl0) * (1.0f + 0x1p-22f);
  cf[3] = (float)(1.003 * eq + dbl1) * (1.0f + 0x1p-22f);
}

/* Pair (r, r + 1) against the first nb columns (after kd_screen_setup_): D and its bound, or 0
 * when Delta's error could exceed 1e-3 (the caller screens the rows instead). */
static int kd_screen_pair_(const kd_kernel_screen *S, kd_lidx r, kd_lidx nb, double wmax, double *y,
                           double *bound) {
  const int d = S->d;
  const double *a = S->X + r * d, *b = a + d;
  double n2 = 0.0;
  float *a0 = S->af, *a1 = a0 + d, *dl = a1 + d;
  for (int kk = 0; kk < d; kk++) {
    const double dk = S->sigma * (a[kk] - b[kk]);
    n2 += dk * dk;
    dl[kk] = (float)dk;
  }
  const double nd = sqrt(n2) * (1.0 + 1e-12), dd = (double)d;
  const double worst = 0x1p-24 * nd * ((4.0 + dd) * (82.0 + nd) + 4.0 * S->rmax * sqrt(dd)) * 1.001;
  if (!(worst <= 1e-3)) return 0; /* NaN too */
  const kd_lidx npan = (nb + S->P - 1) / S->P;
  double acc[32] = {0};
  float cf[4];
  for (kd_lidx pj = 0; pj < npan; pj++) {
    kd_lidx j0, npad, ld;
    kd_screen_panel_at_(S, nb, pj, &j0, &npad, &ld);
    const double *c = S->cen + (size_t)d * (size_t)pj;
    for (int kk = 0; kk < d; kk++) {
      a0[kk] = (float)(S->sigma * (a[kk] - c[kk]));
      a1[kk] = (float)(S->sigma * (b[kk] - c[kk]));
    }
    kd_screen_pair_coef_(S, pj, nd, nb, cf);
    kd_screen_pair_panel_(d, a0, a1, dl, S->Bp + (size_t)d * (size_t)j0, ld, npad, S->wf + j0,
                          S->wa + j0, cf, S->x, S->xd, S->kv, S->em, acc);
  }
  double sum = 0.0, e = 0.0;
  for (int l = 0; l < 16; l++) {
    sum += acc[l];
    e += acc[16 + l];
  }
  *y = sum;
  *bound = 1.01 * e + 2.0 * (double)nb * KD_SCR_TINY * wmax;
  return 1;
}

kd_err kd_kernel_screen_pairs(kd_kernel *k, const kd_kernel_screen *S, kd_lidx i0, kd_lidx np,
                              kd_lidx nb, const double *w, double *y, double *bound) {
  kd_err err = KD_OK;
  KD_CHECK(k && S && S->d == k->d, KD_ERR_ARG, "kernel: screening set of another kernel");
  KD_CHECK(i0 >= 0 && np >= 0 && i0 + 2 * np <= S->n && nb >= 0 && nb <= S->n &&
               (np == 0 || (y && bound)),
           KD_ERR_ARG,
           "kernel: screening pairs from row %lld (%lld pairs) or columns %lld out of %lld",
           (long long)i0, (long long)np, (long long)nb, (long long)S->n);
  const double wmax = kd_screen_setup_(S, nb, w);
  if (S->gemm) /* the sgemm form: the rows' difference */
    KD_TRY(kd_screen_gemm_pairs_(S, i0, np, nb, wmax, y, bound));
  for (kd_lidx p = 0; p < (S->gemm ? 0 : np); p++) {
    const kd_lidx r = i0 + 2 * p;
    if (kd_screen_pair_(S, r, nb, wmax, y + p, bound + p)) continue;
    double y0, y1, b0, b1; /* a far pair: its rows, screened one by one */
    kd_screen_row_(k, S, r, nb, wmax, &y0, &b0);
    kd_screen_row_(k, S, r + 1, nb, wmax, &y1, &b1);
    y[p] = y0 - y1;
    bound[p] = b0 + b1 + 0x1p-52 * fabs(y[p]);
  }
  k->evals += 2 * (uint64_t)np * (uint64_t)nb;
  k->evals_screened += 2 * (uint64_t)np * (uint64_t)nb;
cleanup:
  return err;
}
