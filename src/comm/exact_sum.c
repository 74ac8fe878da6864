/* exact_sum.c - a sum of non-negative doubles over all ranks that does not depend on how the
 * values are split between ranks (or ordered): every value is added exactly into a fixed-point
 * integer with 32-bit digits spanning the whole double range, the integers are summed over the
 * ranks, and the exact total is rounded to a double by one fixed procedure. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/clones.h"
#include "comm/dist_impl.h"

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

/* ---- signed sums that do not depend on the rank count: two fixed-point int64 digits ---- */

/* acc[0] += the integer parts, acc[1] += the next 32 bits of the terms v_i x_i s1 s2 */
KD_KCLONES static void kd_fx_acc_(int64_t nl, const double *v, const double *x, double s1,
                                  double s2, int64_t *acc) {
  int64_t hi = 0, lo = 0;
  for (int64_t i = 0; i < nl; i++) {
    const double t = (x ? v[i] * x[i] : v[i]) * s1 * s2;
    const int64_t h = (int64_t)t; /* truncation toward 0 */
    hi += h;
    lo += (int64_t)((t - (double)h) * 4294967296.0); /* |.| < 2^32, n < 2^30 terms */
  }
  acc[0] = hi, acc[1] = lo;
}

kd_err kd_dist_dot_fixed(MPI_Comm comm, int m, int64_t nl, const double *V, const double *x,
                         kd_gidx n_global, const double *bound, double *out) {
  kd_err err = KD_OK;
  double *mx = NULL;
  int64_t *acc = NULL;
  KD_ALLOC_AGREED(comm, mx, m);
  KD_ALLOC_AGREED(comm, acc, 2 * (size_t)m);
  if (bound) {
    memcpy(mx, bound, sizeof(double) * (size_t)m);
  } else {
    for (int j = 0; j < m; j++) {
      const double *v = V + (size_t)j * (size_t)nl;
      double a = 0.0;
      for (int64_t i = 0; i < nl; i++) {
        const double t = fabs(x ? v[i] * x[i] : v[i]);
        a = t > a ? t : a;
      }
      mx[j] = a;
    }
    KD_TRY(kd_dist_max(comm, mx, m)); /* exact, hence the same scale at any rank count */
  }
  for (int j = 0; j < m; j++) {
    int ex = 0;
    /* |sum of all terms| <= n_global max|term| < 2^ex: scaled terms sum below 2^62 */
    frexp((double)n_global * mx[j], &ex);
    mx[j] = (double)ex;
    /* 2^(62 - ex) as two factors (no overflow for tiny columns); the same operations on every
     * term wherever it lives, so the digits do not depend on the split between ranks */
    const int e1 = 62 - ex > 1000 ? 1000 : 62 - ex;
    const double s1 = ldexp(1.0, e1), s2 = ldexp(1.0, 62 - ex - e1);
    kd_fx_acc_(nl, V + (size_t)j * (size_t)nl, x, s1, s2, acc + 2 * j);
  }
  KD_TRY(kd_dist_sum_i64(comm, acc, 2 * m)); /* integers: exact in any order */
  for (int j = 0; j < m; j++)
    out[j] = ldexp((double)acc[2 * j] + ldexp((double)acc[2 * j + 1], -32), (int)mx[j] - 62);
cleanup:
  free(mx);
  free(acc);
  return err;
}
