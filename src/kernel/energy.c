/* energy.c - energy kernel k(x, y) = 8/3 - |x-y| (Tsuji & Tanaka's sphere experiment: PSD on the
 * unit sphere S^2, where |x-y| <= 2; conditionally PSD elsewhere). */
#include "kernel/kernel_impl.h"

static void kd_energy_setup_(kd_kernel *k) { k->c[0] = 8.0 / 3.0; }

KD_KCLONES static void kd_energy_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                         const double *restrict s2, double *restrict out) {
  (void)s2;
  const double c = k->c[0];
  for (kd_lidx j = 0; j < n; j++) out[j] = c - sqrt(s[j]);
}

const kd_kernel_family kd_kfam_energy = {
    KD_KERNEL_ENERGY, KD_KACC_SQDIST,      kd_energy_setup_, kd_energy_finish_, NULL, NULL, NULL, 0,
    KD_KCAP_CLOSED,   kd_energy_read_keys_};
