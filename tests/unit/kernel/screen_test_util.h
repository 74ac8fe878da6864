/* screen_test_util.h - shared by the screening tests (test_kernel_screen.c,
 * test_kernel_screen_gemm.c): d = 1, each odd row i of X against row i - 1 alone (w = e_{i-1}),
 * screened and exact; every value must lie within its bound (a failed KD_TEST names the row);
 * returns the largest |diff| / bound, the share of the bound the error reaches. */
#ifndef KDISTILL_SCREEN_TEST_UTIL_H
#define KDISTILL_SCREEN_TEST_UTIL_H

#include <math.h>
#include <stdlib.h>

#include "kd_test.h"
#include "kernel/kernel_impl.h"

static inline double screen_neighbour_worst(kd_kernel *k, const kd_kernel_screen *S,
                                            const double *X, kd_lidx n, const char *what) {
  double worst = 0.0, *w = calloc((size_t)n, sizeof(double));
  for (kd_lidx i = 1; S && i < n; i += 2) {
    double ys, yb, yd;
    w[i - 1] = 1.0;
    KD_TEST_OK(kd_kernel_screen_matvec(k, S, i, 1, i, w, &ys, &yb));
    KD_TEST_OK(kd_kernel_matvec(k, X + i, 1, X, i, w, 0.0, &yd));
    w[i - 1] = 0.0;
    if (!(fabs(ys - yd) <= yb))
      KD_TEST(0, "%s, row %lld: |%.17g - %.17g| above the bound %.3g", what, (long long)i, ys, yd,
              yb);
    else if (fabs(ys - yd) / yb > worst)
      worst = fabs(ys - yd) / yb;
  }
  free(w);
  return worst;
}

#endif
