/* laplace.c - Laplace kernel k(x, y) = exp(-|x-y| / ls) (the same function as Matern nu = 1/2,
 * which matern.c registers under its own name). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-math-errno") /* lets sqrt vectorise; sqrt of s >= 0 never sets errno */
#endif
#include "kernel/kernel_impl.h"

static void kd_laplace_setup_(kd_kernel *k) { k->c[0] = 1.0 / k->p.ls; }

KD_KCLONES static void kd_laplace_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                          const double *restrict s2, double *restrict out) {
  (void)s2;
  const double g = k->c[0];
  for (kd_lidx j = 0; j < n; j++) out[j] = kd_kexp_neg_(-(sqrt(s[j]) * g));
}

const kd_kernel_family kd_kfam_laplace = {KD_KERNEL_LAPLACE, KD_KACC_SQDIST, kd_laplace_setup_,
                                          kd_laplace_finish_};
