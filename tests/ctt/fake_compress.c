/* fake_compress.c - TEMPORARY development stand-in for kd_thin_kt_compress_local (thinning branch
 * not merged yet): a seeded uniform subsample of 2^g sqrt(n) rows. Removed once thinning lands. */
#include <math.h>
#include <stdlib.h>

#include "algo/thinning/compress_impl.h"

kd_err kd_thin_kt_compress_local(kd_kernel *k, const double *X, kd_lidx n, int d, int g,
                                 double delta, uint64_t seed, uint64_t stream, kd_lidx *idx,
                                 kd_lidx *n_out) {
  (void)k;
  (void)X;
  (void)d;
  (void)delta;
  kd_lidx r = (kd_lidx)floor(sqrt((double)n) + 1e-9);
  kd_lidx want = r << g;
  if (want > n) want = n;
  for (kd_lidx i = 0; i < n; i++) idx[i] = i;
  kd_rng rr = kd_rng_make(seed, stream);
  for (kd_lidx i = 0; i < want; i++) {
    kd_lidx j = i + (kd_lidx)kd_rng_next_below(&rr, (uint64_t)(n - i));
    kd_lidx t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
  *n_out = want;
  return KD_OK;
}
