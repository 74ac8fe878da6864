/* laplace.c - Laplace kernel k(x, y) = exp(-|x-y| / ls): the same function as Matern nu = 1/2,
 * registered under its own name with matern.c's finish. */
#include "kernel/kernel_impl.h"

static void kd_laplace_setup_(kd_kernel *k) { k->c[0] = 1.0 / k->p.ls; }

const kd_kernel_family kd_kfam_laplace = {KD_KERNEL_LAPLACE, KD_KACC_SQDIST, kd_laplace_setup_,
                                          kd_matern12_finish_, NULL};
