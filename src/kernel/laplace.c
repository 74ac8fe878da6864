/* laplace.c - Laplace kernel k(x, y) = exp(-|x-y| / ls): the same function as Matern nu = 1/2,
 * registered under its own name with matern.c's setup and finishes. */
#include "kernel/kernel_impl.h"

const kd_kernel_family kd_kfam_laplace = {KD_KERNEL_LAPLACE,
                                          KD_KACC_SQDIST,
                                          kd_matern12_setup_,
                                          kd_matern12_finish_,
                                          kd_matern12_finish_normal_,
                                          "median",
                                          NULL,
                                          0,
                                          KD_KCAP_LS | KD_KCAP_RADIAL,
                                          NULL};
