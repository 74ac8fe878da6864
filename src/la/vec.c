/* vec.c - element-wise vector loops shared by the algorithms, multi-versioned (core/clones.h) so
 * that they run as AVX2/AVX-512 code where the CPU has it, with the same bits as the baseline. */
#include <math.h>
#include <stdint.h>

#include "core/clones.h"
#include "la/la_impl.h"

KD_KCLONES void kd_vec_fma(int64_t n, double a, const double *x, double *y) {
  for (int64_t i = 0; i < n; i++) y[i] = fma(x[i], a, y[i]);
}
