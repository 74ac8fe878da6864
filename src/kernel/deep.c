/* deep.c - the deep kernel of Liu et al. (2020) as Low-Rank Thinning (Eq. 43) tests with it: a
 * point is a row (x[dx], u) that carries an input x and its embedding u = phi(x) by the user's
 * network, and
 *   k(a, b) = [(1 - eps) exp(-|u_a - u_b|^2 / (2 ls_phi^2)) + eps] exp(-|x_a - x_b|^2 / (2 ls^2)).
 * Both factors are PSD (eps in [0, 1]), so their product is. The two squared distances are
 * accumulated in one pass (KD_KACC_SQDIST2) and finished with the vectorised exp of
 * kernel_impl.h. */
#include "kernel/kernel_impl.h"

static const kd_param_spec kd_deep_keys_[] = {
    {"eps", KD_PARAM_F64, 0.1, NULL, 0.0, 1.0, NULL,
     "weight of the plain Gaussian on x in [(1-eps) k_phi + eps] q",
     KD_PARAM_AT(kd_kernel_params, eps)},
};

static void kd_deep_setup_(kd_kernel *k) {
  const double lp = k->p.ls_phi > 0 && isfinite(k->p.ls_phi) ? k->p.ls_phi : 1.0;
  k->c[0] = -0.5 / (k->p.ls * k->p.ls);
  k->c[1] = -0.5 / (lp * lp);
  k->c[2] = 1.0 - k->p.eps;
}

/* out[j] = fma(1 - eps, exp(c1 s2[j]), eps) exp(c0 s[j]); returns the count of arguments outside
 * the normal form's range (kd_kexp_neg_sel_) */
static inline kd_lidx kd_deep_loop_(kd_lidx n, const double *c, double eps,
                                    const double *restrict s, const double *restrict s2,
                                    double *restrict out, int general) {
  kd_lidx outside = 0;
  for (kd_lidx j = 0; j < n; j++) {
    const double xq = c[0] * s[j], xp = c[1] * s2[j];
    outside += KD_KEXP_OUTSIDE(xq) + KD_KEXP_OUTSIDE(xp);
    out[j] = fma(c[2], kd_kexp_neg_sel_(xp, general), eps) * kd_kexp_neg_sel_(xq, general);
  }
  return outside;
}

KD_KCLONES static void kd_deep_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                       const double *restrict s2, double *restrict out) {
  if (kd_deep_loop_(n, k->c, k->p.eps, s, s2, out, 0))
    kd_deep_loop_(n, k->c, k->p.eps, s, s2, out, 1);
}

const kd_kernel_family kd_kfam_deep = {
    KD_KERNEL_DEEP, KD_KACC_SQDIST2,   kd_deep_setup_, kd_deep_finish_,
    NULL,           "median",          kd_deep_keys_,  1,
    KD_KCAP_LS,     kd_deep_read_keys_};
