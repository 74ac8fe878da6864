/* linear.c - dot-product kernels: linear <x,y> + c and polynomial (<x,y>/ls^2 + c)^degree (the
 * power by repeated squaring, so every path computes the same bits). */
#include "kernel/kernel_impl.h"

static const kd_param_spec kd_linear_keys_[] = {
    {"c", KD_PARAM_F64, 1.0, NULL, 0.0, INFINITY, NULL, "offset c",
     KD_PARAM_AT(kd_kernel_params, c)},
    {"degree", KD_PARAM_INT, 2, NULL, 1, 64, NULL, "polynomial degree",
     KD_PARAM_AT_INT(kd_kernel_params, degree)},
};

static void kd_linear_setup_(kd_kernel *k) { k->c[0] = k->p.c; }
static void kd_polynomial_setup_(kd_kernel *k) {
  k->c[0] = 1.0 / (k->p.ls * k->p.ls);
  k->c[1] = k->p.c;
}

KD_KCLONES static void kd_linear_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                         const double *restrict s2, double *restrict out) {
  (void)s2;
  const double c = k->c[0];
  for (kd_lidx j = 0; j < n; j++) out[j] = s[j] + c;
}

KD_KCLONES static void kd_polynomial_finish_(const kd_kernel *k, kd_lidx n,
                                             const double *restrict s, const double *restrict s2,
                                             double *restrict out) {
  (void)s2;
  const double g = k->c[0], c = k->c[1];
  const int deg = k->p.degree;
  for (kd_lidx j = 0; j < n; j++) {
    double b = fma(s[j], g, c), r = 1.0;
    for (int e = deg; e > 0; e >>= 1) {
      if (e & 1) r *= b;
      b *= b;
    }
    out[j] = r;
  }
}

const kd_kernel_family kd_kfam_linear = {KD_KERNEL_LINEAR,
                                         KD_KACC_DOT,
                                         kd_linear_setup_,
                                         kd_linear_finish_,
                                         NULL,
                                         NULL,
                                         kd_linear_keys_,
                                         1,
                                         0,
                                         NULL};
const kd_kernel_family kd_kfam_polynomial = {KD_KERNEL_POLYNOMIAL,
                                             KD_KACC_DOT,
                                             kd_polynomial_setup_,
                                             kd_polynomial_finish_,
                                             NULL,
                                             "1",
                                             kd_linear_keys_,
                                             2,
                                             KD_KCAP_LS,
                                             NULL};
