/* gaussian.c - Gaussian kernel k(x, y) = exp(-|x-y|^2 / (2 ls^2)), evaluated with the vectorised
 * exp of kernel_impl.h on the squared distance accumulated coordinate by coordinate. */
#include "kernel/kernel_impl.h"

/* s_normal: s <= 700 / |c0| gives c0 s >= -700 (1 + 2 eps) > KD_KEXP_NORMAL_MIN after rounding */
static void kd_gaussian_setup_(kd_kernel *k) {
  k->c[0] = -0.5 / (k->p.ls * k->p.ls);
  k->s_normal = 700.0 / fabs(k->c[0]);
}

/* out[j] = exp(g s[j]) (kd_kexp_neg_sel_); returns how many arguments lie outside the normal form's
 * range */
static inline kd_lidx kd_gaussian_loop_(kd_lidx n, double g, const double *restrict s,
                                        double *restrict out, int general) {
  kd_lidx outside = 0;
  for (kd_lidx j = 0; j < n; j++) {
    const double x = g * s[j];
    outside += KD_KEXP_OUTSIDE(x);
    out[j] = kd_kexp_neg_sel_(x, general);
  }
  return outside;
}

KD_KCLONES static void kd_gaussian_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                           const double *restrict s2, double *restrict out) {
  (void)s2;
  if (kd_gaussian_loop_(n, k->c[0], s, out, 0)) kd_gaussian_loop_(n, k->c[0], s, out, 1);
}

/* every s[j] <= k->s_normal: the normal form throughout, no range test */
KD_KCLONES static void kd_gaussian_finish_normal_(const kd_kernel *k, kd_lidx n,
                                                  const double *restrict s,
                                                  const double *restrict s2, double *restrict out) {
  (void)s2;
  (void)kd_gaussian_loop_(n, k->c[0], s, out, 0);
}

const kd_kernel_family kd_kfam_gaussian = {
    KD_KERNEL_GAUSSIAN,
    KD_KACC_SQDIST,
    kd_gaussian_setup_,
    kd_gaussian_finish_,
    kd_gaussian_finish_normal_,
    "median",
    NULL,
    0,
    KD_KCAP_LS | KD_KCAP_RADIAL | KD_KCAP_FGT | KD_KCAP_FOURIER | KD_KCAP_CLOSED,
    NULL};
