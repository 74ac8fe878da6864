/* matern.c - Matern kernels with a = sqrt(2 nu) |x-y| / ls:
 *   nu = 1/2: exp(-a);  nu = 3/2: (1 + a) exp(-a);  nu = 5/2: (1 + a + a^2/3) exp(-a). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-math-errno") /* lets sqrt vectorise; sqrt of s >= 0 never sets errno */
#endif
#include "kernel/kernel_impl.h"

static void kd_matern12_setup_(kd_kernel *k) { k->c[0] = 1.0 / k->p.ls; }
static void kd_matern32_setup_(kd_kernel *k) { k->c[0] = sqrt(3.0) / k->p.ls; }
static void kd_matern52_setup_(kd_kernel *k) { k->c[0] = sqrt(5.0) / k->p.ls; }

KD_KCLONES static void kd_matern12_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                           const double *restrict s2, double *restrict out) {
  (void)s2;
  const double g = k->c[0];
  for (kd_lidx j = 0; j < n; j++) out[j] = kd_kexp_neg_(-(sqrt(s[j]) * g));
}

KD_KCLONES static void kd_matern32_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                           const double *restrict s2, double *restrict out) {
  (void)s2;
  const double g = k->c[0];
  for (kd_lidx j = 0; j < n; j++) {
    double a = sqrt(s[j]) * g;
    out[j] = (1.0 + a) * kd_kexp_neg_(-a);
  }
}

KD_KCLONES static void kd_matern52_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                           const double *restrict s2, double *restrict out) {
  (void)s2;
  const double g = k->c[0], third = 1.0 / 3.0;
  for (kd_lidx j = 0; j < n; j++) {
    double a = sqrt(s[j]) * g;
    out[j] = ((1.0 + a) + (a * a) * third) * kd_kexp_neg_(-a);
  }
}

const kd_kernel_family kd_kfam_matern12 = {KD_KERNEL_MATERN12, KD_KACC_SQDIST, kd_matern12_setup_,
                                           kd_matern12_finish_};
const kd_kernel_family kd_kfam_matern32 = {KD_KERNEL_MATERN32, KD_KACC_SQDIST, kd_matern32_setup_,
                                           kd_matern32_finish_};
const kd_kernel_family kd_kfam_matern52 = {KD_KERNEL_MATERN52, KD_KACC_SQDIST, kd_matern52_setup_,
                                           kd_matern52_finish_};
