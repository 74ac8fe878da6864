/* gaussian.c - Gaussian kernel k(x, y) = exp(-|x-y|^2 / (2 ls^2)), evaluated with the vectorised
 * exp of kernel_impl.h on the squared distance accumulated coordinate by coordinate. */
#include "kernel/kernel_impl.h"

static void kd_gaussian_setup_(kd_kernel *k) { k->c[0] = -0.5 / (k->p.ls * k->p.ls); }

KD_KCLONES static void kd_gaussian_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                           const double *restrict s2, double *restrict out) {
  (void)s2;
  const double g = k->c[0];
  for (kd_lidx j = 0; j < n; j++) out[j] = kd_kexp_neg_(g * s[j]);
}

const kd_kernel_family kd_kfam_gaussian = {KD_KERNEL_GAUSSIAN, KD_KACC_SQDIST, kd_gaussian_setup_,
                                           kd_gaussian_finish_};
