/* attention.c - attention kernel (Low-Rank Thinning, Alg. 1): a point is (key[dk], value[d-dk]),
 *   k(x, y) = exp(<k_x, k_y> / ls^2) <v_x, v_y>
 * (ls = 1 gives the paper's exp(<k,k'>) <v,v'>; ls^2 = sqrt(dk) gives softmax scaling). The
 * exponent can be positive, so this family uses libm exp. */
#include "kernel/kernel_impl.h"

static void kd_attention_setup_(kd_kernel *k) { k->c[0] = 1.0 / (k->p.ls * k->p.ls); }

static void kd_attention_finish_(const kd_kernel *k, kd_lidx n, const double *restrict s,
                                 const double *restrict s2, double *restrict out) {
  const double g = k->c[0];
  for (kd_lidx j = 0; j < n; j++) out[j] = exp(s[j] * g) * s2[j];
}

const kd_kernel_family kd_kfam_attention = {KD_KERNEL_ATTENTION,
                                            KD_KACC_ATTN,
                                            kd_attention_setup_,
                                            kd_attention_finish_,
                                            NULL,
                                            "1",
                                            NULL,
                                            0,
                                            KD_KCAP_LS,
                                            kd_attention_read_keys_};
