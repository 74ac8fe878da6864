/* sobolev.c - periodic Sobolev kernel of order r in {1,2,3} on [0,1)^d (Hayakawa et al. sec. 3.1):
 *   k(x, y) = prod_i (1 + (-1)^{r-1} (2 pi)^{2r} / (2r)! B_{2r}({x_i - y_i}))
 *           = prod_i (1 + 2 sum_{m>=1} cos(2 pi m (x_i - y_i)) / m^{2r}).
 * The product is formed during the accumulation (KD_KACC_SOBOLEV); finish copies it. The
 * Bernoulli polynomials are written in u = t(t-1): B2 = u + 1/6, B4 = u^2 - 1/30,
 * B6 = u^2 (u - 1/2) + 1/42, with t = frac(|x_i - y_i|) (symmetric in x, y bit for bit). */
#include "kernel/kernel_impl.h"

static const kd_param_spec kd_sobolev_keys_[] = {
    {"order", KD_PARAM_INT, 1, NULL, 1, 3, NULL, "Sobolev order r",
     KD_PARAM_AT_INT(kd_kernel_params, order)},
};

static void kd_sobolev_setup_(kd_kernel *k) {
  const double twopi = 2.0 * 3.14159265358979323846;
  double f = 1.0;
  for (int i = 2; i <= 2 * k->p.order; i++) f *= i;
  k->sob_coef = ((k->p.order % 2) ? 1.0 : -1.0) * pow(twopi, 2 * k->p.order) / f;
  k->c[0] = k->sob_coef;
}

static void kd_sobolev_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                               const double *restrict s2, double *restrict out) {
  (void)k;
  (void)s2;
  memcpy(out, s, sizeof(double) * (size_t)n);
}

const kd_kernel_family kd_kfam_sobolev = {KD_KERNEL_SOBOLEV,
                                          KD_KACC_SOBOLEV,
                                          kd_sobolev_setup_,
                                          kd_sobolev_finish_,
                                          NULL,
                                          NULL,
                                          kd_sobolev_keys_,
                                          1,
                                          KD_KCAP_CLOSED | KD_KCAP_MERCER,
                                          NULL};
