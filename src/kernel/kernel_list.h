/* kernel_list.h - the kernel families: one KD_KFAM(symbol) line per family file, where symbol is
 * the kd_kernel_family that file exports (its .type says which KD_KERNEL_* it implements).
 * Adding a kernel: a KD_KERNEL_LIST entry in kd_kernel.h, one file here, one line below. */
KD_KFAM(kd_kfam_gaussian)
KD_KFAM(kd_kfam_laplace)
KD_KFAM(kd_kfam_imq)
KD_KFAM(kd_kfam_matern12)
KD_KFAM(kd_kfam_matern32)
KD_KFAM(kd_kfam_matern52)
KD_KFAM(kd_kfam_linear)
KD_KFAM(kd_kfam_polynomial)
KD_KFAM(kd_kfam_sobolev)
KD_KFAM(kd_kfam_energy)
KD_KFAM(kd_kfam_attention)
KD_KFAM(kd_kfam_stein)
KD_KFAM(kd_kfam_deep)
KD_KFAM(kd_kfam_gaussian_sum)
