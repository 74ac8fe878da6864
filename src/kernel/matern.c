/* matern.c - Matern kernels with a = sqrt(2 nu) |x-y| / ls:
 *   nu = 1/2: exp(-a);  nu = 3/2: (1 + a) exp(-a);  nu = 5/2: (1 + a + a^2/3) exp(-a). */
#include "kernel/kernel_impl.h"

/* s_normal: s <= (700 / c0)^2 gives a = sqrt(s) c0 <= 700 (1 + 2 eps) after rounding, so -a stays
 * above KD_KEXP_NORMAL_MIN (the bounding-box path of the mat-vec, as for the Gaussian) */
static void kd_matern_set_(kd_kernel *k, double c0) {
  k->c[0] = c0;
  k->s_normal = (700.0 / c0) * (700.0 / c0);
}

void kd_matern12_setup_(kd_kernel *k) { kd_matern_set_(k, 1.0 / k->p.ls); }
static void kd_matern32_setup_(kd_kernel *k) { kd_matern_set_(k, sqrt(3.0) / k->p.ls); }
static void kd_matern52_setup_(kd_kernel *k) { kd_matern_set_(k, sqrt(5.0) / k->p.ls); }

/* out[j] = poly(a) exp(-a), a = sqrt(s[j]) g, with poly = 1 (nu = 1/2), 1 + a (3/2) or
 * 1 + a + a^2/3 (5/2) by `order` 0 / 1 / 2 (kd_kexp_neg_sel_); returns the count of arguments
 * outside the normal form's range */
static inline kd_lidx kd_matern_loop_(kd_lidx n, double g, const double *restrict s,
                                      double *restrict out, int order, int general) {
  const double third = 1.0 / 3.0;
  kd_lidx outside = 0;
  for (kd_lidx j = 0; j < n; j++) {
    const double a = sqrt(s[j]) * g;
    outside += KD_KEXP_OUTSIDE(-a);
    const double e = kd_kexp_neg_sel_(-a, general);
    if (order == 0)
      out[j] = e;
    else if (order == 1)
      out[j] = (1.0 + a) * e;
    else
      out[j] = ((1.0 + a) + (a * a) * third) * e;
  }
  return outside;
}

KD_KCLONES void kd_matern12_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                    const double *restrict s2, double *restrict out) {
  (void)s2;
  if (kd_matern_loop_(n, k->c[0], s, out, 0, 0)) kd_matern_loop_(n, k->c[0], s, out, 0, 1);
}

KD_KCLONES static void kd_matern32_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                           const double *restrict s2, double *restrict out) {
  (void)s2;
  if (kd_matern_loop_(n, k->c[0], s, out, 1, 0)) kd_matern_loop_(n, k->c[0], s, out, 1, 1);
}

KD_KCLONES static void kd_matern52_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                           const double *restrict s2, double *restrict out) {
  (void)s2;
  if (kd_matern_loop_(n, k->c[0], s, out, 2, 0)) kd_matern_loop_(n, k->c[0], s, out, 2, 1);
}

/* every s[j] <= k->s_normal: the normal form throughout, no range test */
KD_KCLONES void kd_matern12_finish_normal_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                           const double *restrict s2, double *restrict out) {
  (void)s2;
  (void)kd_matern_loop_(n, k->c[0], s, out, 0, 0);
}

KD_KCLONES static void kd_matern32_finish_normal_(const kd_kernel *k, kd_lidx n,
                                                  const double *restrict s,
                                                  const double *restrict s2, double *restrict out) {
  (void)s2;
  (void)kd_matern_loop_(n, k->c[0], s, out, 1, 0);
}

KD_KCLONES static void kd_matern52_finish_normal_(const kd_kernel *k, kd_lidx n,
                                                  const double *restrict s,
                                                  const double *restrict s2, double *restrict out) {
  (void)s2;
  (void)kd_matern_loop_(n, k->c[0], s, out, 2, 0);
}

const kd_kernel_family kd_kfam_matern12 = {KD_KERNEL_MATERN12,
                                           KD_KACC_SQDIST,
                                           kd_matern12_setup_,
                                           kd_matern12_finish_,
                                           kd_matern12_finish_normal_,
                                           "median",
                                           NULL,
                                           0,
                                           KD_KCAP_LS | KD_KCAP_RADIAL,
                                           NULL};
const kd_kernel_family kd_kfam_matern32 = {KD_KERNEL_MATERN32,
                                           KD_KACC_SQDIST,
                                           kd_matern32_setup_,
                                           kd_matern32_finish_,
                                           kd_matern32_finish_normal_,
                                           "median",
                                           NULL,
                                           0,
                                           KD_KCAP_LS | KD_KCAP_RADIAL,
                                           NULL};
const kd_kernel_family kd_kfam_matern52 = {KD_KERNEL_MATERN52,
                                           KD_KACC_SQDIST,
                                           kd_matern52_setup_,
                                           kd_matern52_finish_,
                                           kd_matern52_finish_normal_,
                                           "median",
                                           NULL,
                                           0,
                                           KD_KCAP_LS | KD_KCAP_RADIAL,
                                           NULL};
