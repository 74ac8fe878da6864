/* gaussian_sum.c - the mean of L Gaussian kernels over a geometric grid of length scales,
 *   k(x, y) = (1/L) sum_j exp(-|x-y|^2 / (2 ls_j^2)),  ls_j = ls ls_ratio^(j - (L-1)/2), L = n_ls:
 * the multi-bandwidth Gaussian that goodpoints' aggregated test compresses with (there a plain
 * sum; here the mean, so k(x, x) = 1). A mean of PSD kernels is PSD. The grid is actt's (the same
 * ls_j bits), one squared-distance accumulation, then the L values per pair with the vectorised
 * exp of kernel_impl.h, summed in the order j = 0 .. L-1.
 * On a ratio-2 grid (-1 / (2 ls_j^2) exactly 4 times its wider neighbour's) a value is its wider
 * neighbour's to the 4th power: one exponential gives up to three neighbouring scales' values,
 * e, e^4 and e^16, by two and four squarings. e carries the exponential's error (about 1 ulp);
 * e^16 carries 16 times it plus the squarings' roundings (15/2 ulp): each value is within
 * 24 ulp (5.4e-15 relative) of exp, and the mean within (24 + L) ulp. Chains stop at e^16 because
 * the error grows with the power (e^256 would be 2.8e-14 from one exponential). */
#include "kernel/kernel_impl.h"

static const kd_param_spec kd_gsum_keys_[] = {
    {"n_ls", KD_PARAM_INT, 3, NULL, 1, KD_KERNEL_MAX_LS, NULL, "number of length scales L",
     KD_PARAM_AT_INT(kd_kernel_params, n_ls)},
    {"ls_ratio", KD_PARAM_F64, 2.0, NULL, 1.0, 1e3, NULL,
     "ratio of neighbouring length scales (> 1 unless n_ls = 1)",
     KD_PARAM_AT(kd_kernel_params, ls_ratio)},
};

/* s_normal: the smallest length scale has the most negative cl[0]; s <= 700 / |cl[0]| keeps every
 * cl[l] s >= -700 (1 + 2 eps) > KD_KEXP_NORMAL_MIN after rounding (as gaussian.c) */
static void kd_gsum_setup_(kd_kernel *k) {
  const int L = k->p.n_ls >= 1 && k->p.n_ls <= KD_KERNEL_MAX_LS ? k->p.n_ls : 1;
  double cmin = 0.0;
  for (int j = 0; j < L; j++) {
    const double l = k->p.ls * pow(k->p.ls_ratio, (double)j - 0.5 * (double)(L - 1));
    k->cl[j] = -0.5 / (l * l);
    cmin = fmin(cmin, k->cl[j]);
  }
  k->c[0] = 1.0 / (double)L;
  k->s_normal = 700.0 / fabs(cmin);
  /* groups of up to three scales from the widest down, each from one exponential at its widest
   * scale: gsq[lo] = the group's size at its narrowest scale lo, 0 at its other scales */
  for (int j = 0; j < KD_KERNEL_MAX_LS; j++) k->gsq[j] = 0;
  for (int top = L - 1; top >= 0;) {
    int n = 1;
    while (n < 3 && top - n >= 0 && k->cl[top - n] == 4.0 * k->cl[top - n + 1]) n++;
    k->gsq[top - n + 1] = (signed char)n;
    top -= n;
  }
}

/* out[j] = (sum_l exp(cl[l] s[j])) / L, summed from 0.0 in the order l = 0 .. L-1, a group of
 * scales (setup) per pass over j so that the loop over j vectorises as gaussian.c's does: the
 * exponential at the group's widest scale, the narrower ones by squaring; returns the count of
 * exponential arguments outside the normal form's range (kd_kexp_neg_sel_) */
static inline __attribute__((always_inline)) kd_lidx kd_gsum_loop_(kd_lidx n, const kd_kernel *k,
                                                                   const double *restrict s,
                                                                   double *restrict out,
                                                                   int general) {
  kd_lidx outside = 0;
  const int L = k->p.n_ls;
  for (kd_lidx j = 0; j < n; j++) out[j] = 0.0;
  for (int l = 0; l < L;) {
    const int g = k->gsq[l]; /* 1 to 3, set at every group's first scale by setup */
    const double c = k->cl[l + g - 1];
    if (g == 3)
      for (kd_lidx j = 0; j < n; j++) {
        const double x = c * s[j];
        outside += KD_KEXP_OUTSIDE(x);
        const double e = kd_kexp_neg_sel_(x, general), e2 = e * e, e4 = e2 * e2, e8 = e4 * e4;
        out[j] += e8 * e8;
        out[j] += e4;
        out[j] += e;
      }
    else if (g == 2)
      for (kd_lidx j = 0; j < n; j++) {
        const double x = c * s[j];
        outside += KD_KEXP_OUTSIDE(x);
        const double e = kd_kexp_neg_sel_(x, general), e2 = e * e;
        out[j] += e2 * e2;
        out[j] += e;
      }
    else
      for (kd_lidx j = 0; j < n; j++) {
        const double x = c * s[j];
        outside += KD_KEXP_OUTSIDE(x);
        out[j] += kd_kexp_neg_sel_(x, general);
      }
    l += g;
  }
  const double w = k->c[0];
  for (kd_lidx j = 0; j < n; j++) out[j] *= w;
  return outside;
}

KD_KCLONES static void kd_gsum_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                       const double *restrict s2, double *restrict out) {
  (void)s2;
  if (kd_gsum_loop_(n, k, s, out, 0)) kd_gsum_loop_(n, k, s, out, 1);
}

/* every s[j] <= k->s_normal: the normal form throughout, no range test */
KD_KCLONES static void kd_gsum_finish_normal_(const kd_kernel *k, kd_lidx n,
                                              const double *restrict s, const double *restrict s2,
                                              double *restrict out) {
  (void)s2;
  (void)kd_gsum_loop_(n, k, s, out, 0);
}

const kd_kernel_family kd_kfam_gaussian_sum = {KD_KERNEL_GAUSSIAN_SUM,
                                               KD_KACC_SQDIST,
                                               kd_gsum_setup_,
                                               kd_gsum_finish_,
                                               kd_gsum_finish_normal_,
                                               "median",
                                               kd_gsum_keys_,
                                               2,
                                               KD_KCAP_LS,
                                               NULL};
