/* imq.c - inverse multiquadric k(x, y) = (1 + |x-y|^2 / ls^2)^(-beta). beta = 1/2, 1 and 3/2 use
 * sqrt / division (vectorised, correctly rounded steps); other beta use pow. */
#include "kernel/kernel_impl.h"

static const kd_param_spec kd_imq_keys_[] = {
    {"beta", KD_PARAM_F64, 0.5, NULL, 1e-12, 1e6, NULL, "IMQ exponent",
     KD_PARAM_AT(kd_kernel_params, beta)},
};

static void kd_imq_setup_(kd_kernel *k) {
  k->c[0] = 1.0 / (k->p.ls * k->p.ls);
  k->c[1] = k->p.beta == 0.5 ? 1.0 : k->p.beta == 1.0 ? 2.0 : k->p.beta == 1.5 ? 3.0 : 0.0;
}

KD_KCLONES static void kd_imq_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                      const double *restrict s2, double *restrict out) {
  (void)s2;
  const double g = k->c[0], beta = k->p.beta;
  const int mode = (int)k->c[1];
  switch (mode) {
    case 1:
      for (kd_lidx j = 0; j < n; j++) out[j] = 1.0 / sqrt(fma(s[j], g, 1.0));
      break;
    case 2:
      for (kd_lidx j = 0; j < n; j++) out[j] = 1.0 / fma(s[j], g, 1.0);
      break;
    case 3:
      for (kd_lidx j = 0; j < n; j++) {
        double u = fma(s[j], g, 1.0);
        out[j] = 1.0 / (u * sqrt(u));
      }
      break;
    default:
      for (kd_lidx j = 0; j < n; j++) out[j] = pow(fma(s[j], g, 1.0), -beta);
  }
}

const kd_kernel_family kd_kfam_imq = {KD_KERNEL_IMQ,
                                      KD_KACC_SQDIST,
                                      kd_imq_setup_,
                                      kd_imq_finish_,
                                      NULL,
                                      "median",
                                      kd_imq_keys_,
                                      1,
                                      KD_KCAP_LS | KD_KCAP_RADIAL,
                                      NULL};
