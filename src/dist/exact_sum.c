/* exact_sum.c - a sum of non-negative doubles over all ranks that does not depend on how the
 * values are split between ranks (or ordered): every value is added exactly into a fixed-point
 * integer with 32-bit digits spanning the whole double range, the integers are summed over the
 * ranks, and the exact total is rounded to a double by one fixed procedure. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dist/dist_impl.h"

/* bit 0 of the integer is 2^-1074 (the smallest subnormal); 2^1024 * 2^64 terms fit below bit
 * 1074 + 1024 + 64 = 2162, i.e. 68 digits of 32 bits */
enum { KD_XS_DIGITS = 69 };

/* carry every digit above 32 bits into the next one, so each holds < 2^32 */
static void kd_xs_carry_(uint64_t *dg) {
  for (int i = 0; i + 1 < KD_XS_DIGITS; i++) {
    dg[i + 1] += dg[i] >> 32;
    dg[i] &= 0xffffffffu;
  }
}

/* add x >= 0 (finite) exactly: x = m 2^(e - 1074) with m < 2^53 */
static void kd_xs_add_(uint64_t *dg, double x) {
  int ex = 0;
  if (x == 0.0) return;
  const double fr = frexp(x, &ex); /* x = fr 2^ex, fr in [0.5, 1) */
  int64_t e = (int64_t)ex - 53 + 1074;
  uint64_t m = (uint64_t)ldexp(fr, 53);
  if (e < 0) { /* subnormal: m has trailing zero bits to drop */
    m >>= -e;
    e = 0;
  }
  const int pos = (int)(e / 32), sh = (int)(e % 32);
  /* m << sh spans up to 85 bits: three digits */
  dg[pos] += (m << sh) & 0xffffffffu;
  dg[pos + 1] += (sh ? (m >> (32 - sh)) : (m >> 32)) & 0xffffffffu;
  if (pos + 2 < KD_XS_DIGITS) dg[pos + 2] += sh ? (m >> (64 - sh)) : 0;
}

kd_err kd_dist_sum_exact(MPI_Comm comm, const double *x, int64_t n, double *out) {
  kd_err err = KD_OK;
  uint64_t dg[KD_XS_DIGITS];
  memset(dg, 0, sizeof dg);
  for (int64_t i = 0; i < n; i++) {
    kd_xs_add_(dg, x[i]);
    if ((i & ((1 << 28) - 1)) == (1 << 28) - 1) kd_xs_carry_(dg); /* digits stay < 2^61 */
  }
  kd_xs_carry_(dg);
  KD_TRY(kd_dist_sum_u64(comm, dg, KD_XS_DIGITS)); /* < 2^32 ranks: no overflow */
  kd_xs_carry_(dg);
  int top = KD_XS_DIGITS - 1;
  while (top > 0 && dg[top] == 0) top--;
  /* the top three digits (96 bits) hold every bit a double keeps; fixed order of operations */
  double v = (double)dg[top];
  if (top >= 1) v = v * 4294967296.0 + (double)dg[top - 1];
  if (top >= 2) v = v * 4294967296.0 + (double)dg[top - 2];
  const int low = top >= 2 ? top - 2 : 0;
  *out = ldexp(v, 32 * low - 1074);
cleanup:
  return err;
}
