/* kernel_impl.h - the kernel struct, private to src/kernel/. */
#ifndef KDISTILL_KERNEL_IMPL_H
#define KDISTILL_KERNEL_IMPL_H

#include "kdistill/kd_kernel.h"

struct kd_kernel {
  kd_kernel_params p;
  int d;
  double sob_coef; /* Sobolev: (-1)^{r-1} (2 pi)^{2r} / (2r)! */
  uint64_t evals;
  char desc[160];
};

/** k(x, y) by the direct formula (no counting). */
double kd_kernel_pair_(const kd_kernel *k, const double *x, const double *y);
/** Refresh the description after a parameter change (median heuristic). */
void kd_kernel_update_desc_(kd_kernel *k);

#endif
