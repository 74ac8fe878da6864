/* laplace.c - Laplace kernel k(x, y) = exp(-|x-y| / ls) (the same function as Matern nu = 1/2,
 * which matern.c registers under its own name). */
#include "kernel/kernel_impl.h"

static void kd_laplace_setup_(kd_kernel *k) { k->c[0] = 1.0 / k->p.ls; }

/* out[j] = exp(-sqrt(s[j]) g) (kd_kexp_neg_sel_); returns the count of arguments outside the
 * normal form's range */
static inline kd_lidx kd_laplace_loop_(kd_lidx n, double g, const double *restrict s,
                                       double *restrict out, int general) {
  kd_lidx outside = 0;
  for (kd_lidx j = 0; j < n; j++) {
    const double x = -(sqrt(s[j]) * g);
    outside += KD_KEXP_OUTSIDE(x);
    out[j] = kd_kexp_neg_sel_(x, general);
  }
  return outside;
}

KD_KCLONES static void kd_laplace_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                          const double *restrict s2, double *restrict out) {
  (void)s2;
  if (kd_laplace_loop_(n, k->c[0], s, out, 0)) kd_laplace_loop_(n, k->c[0], s, out, 1);
}

const kd_kernel_family kd_kfam_laplace = {KD_KERNEL_LAPLACE, KD_KACC_SQDIST, kd_laplace_setup_,
                                          kd_laplace_finish_};
