/* kernel_block.c - blocked kernel evaluation: one pair, tiles K(A,B), the fused mat-vec
 * y = beta y + K(A,B) w (K never materialised) and the diagonal.
 *
 * B is packed in panels of KD_KERNEL_PANEL columns (fewer for d > 128), transposed
 * (coordinate-major) and padded with zero columns to a multiple of 16, so the per-row loops run
 * over contiguous columns and vectorise lane-wise. Per pair the operations are fixed
 * (kernel_impl.h), hence
 *   - k(a, b) is bitwise identical in any tile, at any position, for any na, nb, and equal to
 *     kd_kernel_eval(a, b);
 *   - the mat-vec sums row i in 8 interleaved partial sums (column j goes to lane j mod 8, in
 *     increasing j) that are then added as ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)): y[i] depends on
 *     A_i, B, w and nb only, not on the other rows of A (nor on how rows are split over ranks).
 * Direct differences (x_j - y_j)^2 are accumulated rather than |x|^2 + |y|^2 - 2<x,y> via dgemm:
 * no cancellation (k(a,a) is exact, squared distances are never negative) and, with AVX-512 / AVX2
 * FMA on the sub and FMA ports, no slower than the dgemm route on this machine (see
 * bench/results/kernel.md for the measurement). */
#include <stdlib.h>

#include "kernel/kernel_impl.h"

/* s[j] (and s2[j]) for j < n: the accumulation of kernel_impl.h between the row a and the columns
 * of the packed panel Bp (coordinate kk of column j at Bp[kk*ldb + j]). */
KD_KCLONES static void kd_kernel_acc_(const kd_kernel *k, const double *restrict a,
                                      const double *restrict Bp, kd_lidx ldb, kd_lidx n,
                                      double *restrict s, double *restrict s2) {
  const int d = k->d;
  switch (k->fam->acc) {
    case KD_KACC_SQDIST:
      if (d == 1) {
        const double a0 = a[0];
        for (kd_lidx j = 0; j < n; j++) {
          double t0 = a0 - Bp[j];
          s[j] = fma(t0, t0, 0.0);
        }
      } else if (d == 2) {
        const double a0 = a[0], a1 = a[1];
        const double *b0 = Bp, *b1 = Bp + ldb;
        for (kd_lidx j = 0; j < n; j++) {
          double t0 = a0 - b0[j], t1 = a1 - b1[j];
          s[j] = fma(t1, t1, fma(t0, t0, 0.0));
        }
      } else if (d == 3) {
        const double a0 = a[0], a1 = a[1], a2 = a[2];
        const double *b0 = Bp, *b1 = Bp + ldb, *b2 = Bp + 2 * ldb;
        for (kd_lidx j = 0; j < n; j++) {
          double t0 = a0 - b0[j], t1 = a1 - b1[j], t2 = a2 - b2[j];
          s[j] = fma(t2, t2, fma(t1, t1, fma(t0, t0, 0.0)));
        }
      } else {
        /* four coordinates per sweep over s: same operation order as one at a time */
        for (kd_lidx j = 0; j < n; j++) s[j] = 0.0;
        int kk = 0;
        for (; kk + 4 <= d; kk += 4) {
          const double a0 = a[kk], a1 = a[kk + 1], a2 = a[kk + 2], a3 = a[kk + 3];
          const double *b0 = Bp + kk * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
          for (kd_lidx j = 0; j < n; j++) {
            double t0 = a0 - b0[j], t1 = a1 - b1[j], t2 = a2 - b2[j], t3 = a3 - b3[j];
            s[j] = fma(t3, t3, fma(t2, t2, fma(t1, t1, fma(t0, t0, s[j]))));
          }
        }
        for (; kk < d; kk++) {
          const double a0 = a[kk];
          const double *b0 = Bp + kk * ldb;
          for (kd_lidx j = 0; j < n; j++) {
            double t0 = a0 - b0[j];
            s[j] = fma(t0, t0, s[j]);
          }
        }
      }
      break;
    case KD_KACC_DOT:
      for (kd_lidx j = 0; j < n; j++) s[j] = 0.0;
      for (int kk = 0; kk < d; kk++) {
        const double a0 = a[kk];
        const double *b0 = Bp + kk * ldb;
        for (kd_lidx j = 0; j < n; j++) s[j] = fma(a0, b0[j], s[j]);
      }
      break;
    case KD_KACC_ATTN:
      for (kd_lidx j = 0; j < n; j++) s[j] = s2[j] = 0.0;
      for (int kk = 0; kk < d; kk++) {
        const double a0 = a[kk];
        const double *b0 = Bp + kk * ldb;
        double *acc = kk < k->p.dk ? s : s2;
        for (kd_lidx j = 0; j < n; j++) acc[j] = fma(a0, b0[j], acc[j]);
      }
      break;
    case KD_KACC_SQDIST2:
      for (kd_lidx j = 0; j < n; j++) s[j] = s2[j] = 0.0;
      for (int kk = 0; kk < d; kk++) {
        const double a0 = a[kk];
        const double *b0 = Bp + kk * ldb;
        double *acc = kk < k->p.dx ? s : s2;
        for (kd_lidx j = 0; j < n; j++) {
          double t0 = a0 - b0[j];
          acc[j] = fma(t0, t0, acc[j]);
        }
      }
      break;
    case KD_KACC_SOBOLEV: {
      const double coef = k->sob_coef;
      const int r = k->p.order;
      for (kd_lidx j = 0; j < n; j++) s[j] = 1.0;
      for (int kk = 0; kk < d; kk++) {
        const double a0 = a[kk];
        const double *b0 = Bp + kk * ldb;
        for (kd_lidx j = 0; j < n; j++) {
          double t = fabs(a0 - b0[j]);
          t = t - floor(t);
          double u = (t - 1.0) * t, bern;
          if (r == 1)
            bern = u + 1.0 / 6.0;
          else if (r == 2)
            bern = fma(u, u, -1.0 / 30.0);
          else
            bern = fma(u * u, u - 0.5, 1.0 / 42.0);
          s[j] = s[j] * fma(coef, bern, 1.0);
        }
      }
      break;
    }
  }
}

/* Squared distances of 4 rows (a0..a3, row stride d) against n packed columns (n a multiple of
 * 16): register-blocked versions of the SQDIST case for larger d, whose 4 x 16 accumulators stay
 * in registers across all coordinates. Per pair they perform exactly the operations of
 * kd_kernel_acc_ (t = a - b; s = fma(t, t, s) for coordinates in increasing order, s from 0), so
 * every path gives the same bits. The intrinsics versions are picked at run time. */
#define KD_KB_MR KD_KERNEL_MR
#define KD_KB_ROWS 64 /* rows of A per block (their accumulators stay in L1) */
#define KD_KB_MIND 4  /* used from this dimension on (measured: bench/results/kernel.md) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#include <immintrin.h>
#define KD_KB_X86 1
__attribute__((target("avx512f"))) static void kd_kernel_sqdist4_avx512_(int d,
                                                                         const double *restrict a,
                                                                         const double *restrict Bp,
                                                                         kd_lidx ldb, kd_lidx n,
                                                                         double *restrict s) {
  for (kd_lidx j0 = 0; j0 < n; j0 += 16) {
    __m512d c00 = _mm512_setzero_pd(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
            c30 = c00, c31 = c00;
    for (int kk = 0; kk < d; kk++) {
      const double *b = Bp + kk * ldb + j0;
      const __m512d b0 = _mm512_loadu_pd(b), b1 = _mm512_loadu_pd(b + 8);
      __m512d x = _mm512_set1_pd(a[kk]), t0 = _mm512_sub_pd(x, b0), t1 = _mm512_sub_pd(x, b1);
      c00 = _mm512_fmadd_pd(t0, t0, c00);
      c01 = _mm512_fmadd_pd(t1, t1, c01);
      x = _mm512_set1_pd(a[d + kk]);
      t0 = _mm512_sub_pd(x, b0);
      t1 = _mm512_sub_pd(x, b1);
      c10 = _mm512_fmadd_pd(t0, t0, c10);
      c11 = _mm512_fmadd_pd(t1, t1, c11);
      x = _mm512_set1_pd(a[2 * d + kk]);
      t0 = _mm512_sub_pd(x, b0);
      t1 = _mm512_sub_pd(x, b1);
      c20 = _mm512_fmadd_pd(t0, t0, c20);
      c21 = _mm512_fmadd_pd(t1, t1, c21);
      x = _mm512_set1_pd(a[3 * d + kk]);
      t0 = _mm512_sub_pd(x, b0);
      t1 = _mm512_sub_pd(x, b1);
      c30 = _mm512_fmadd_pd(t0, t0, c30);
      c31 = _mm512_fmadd_pd(t1, t1, c31);
    }
    _mm512_storeu_pd(s + j0, c00);
    _mm512_storeu_pd(s + j0 + 8, c01);
    _mm512_storeu_pd(s + ldb + j0, c10);
    _mm512_storeu_pd(s + ldb + j0 + 8, c11);
    _mm512_storeu_pd(s + 2 * ldb + j0, c20);
    _mm512_storeu_pd(s + 2 * ldb + j0 + 8, c21);
    _mm512_storeu_pd(s + 3 * ldb + j0, c30);
    _mm512_storeu_pd(s + 3 * ldb + j0 + 8, c31);
  }
}

__attribute__((target("avx2,fma"))) static void kd_kernel_sqdist4_avx2_(int d,
                                                                        const double *restrict a,
                                                                        const double *restrict Bp,
                                                                        kd_lidx ldb, kd_lidx n,
                                                                        double *restrict s) {
  for (kd_lidx j0 = 0; j0 < n; j0 += 8) {
    __m256d c00 = _mm256_setzero_pd(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00,
            c30 = c00, c31 = c00;
    for (int kk = 0; kk < d; kk++) {
      const double *b = Bp + kk * ldb + j0;
      const __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
      __m256d x = _mm256_set1_pd(a[kk]), t0 = _mm256_sub_pd(x, b0), t1 = _mm256_sub_pd(x, b1);
      c00 = _mm256_fmadd_pd(t0, t0, c00);
      c01 = _mm256_fmadd_pd(t1, t1, c01);
      x = _mm256_set1_pd(a[d + kk]);
      t0 = _mm256_sub_pd(x, b0);
      t1 = _mm256_sub_pd(x, b1);
      c10 = _mm256_fmadd_pd(t0, t0, c10);
      c11 = _mm256_fmadd_pd(t1, t1, c11);
      x = _mm256_set1_pd(a[2 * d + kk]);
      t0 = _mm256_sub_pd(x, b0);
      t1 = _mm256_sub_pd(x, b1);
      c20 = _mm256_fmadd_pd(t0, t0, c20);
      c21 = _mm256_fmadd_pd(t1, t1, c21);
      x = _mm256_set1_pd(a[3 * d + kk]);
      t0 = _mm256_sub_pd(x, b0);
      t1 = _mm256_sub_pd(x, b1);
      c30 = _mm256_fmadd_pd(t0, t0, c30);
      c31 = _mm256_fmadd_pd(t1, t1, c31);
    }
    _mm256_storeu_pd(s + j0, c00);
    _mm256_storeu_pd(s + j0 + 4, c01);
    _mm256_storeu_pd(s + ldb + j0, c10);
    _mm256_storeu_pd(s + ldb + j0 + 4, c11);
    _mm256_storeu_pd(s + 2 * ldb + j0, c20);
    _mm256_storeu_pd(s + 2 * ldb + j0 + 4, c21);
    _mm256_storeu_pd(s + 3 * ldb + j0, c30);
    _mm256_storeu_pd(s + 3 * ldb + j0 + 4, c31);
  }
}

#endif

/* 0: portable loops only, 1: AVX2+FMA, 2: AVX-512F (the best this CPU and OS support). */
int kd_kernel_isa_(void) {
#ifdef KD_KB_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 2;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
#endif
  return 0;
}

/* p[l] += sum over j = l mod 8 of v[j] w[j], j < n (n a multiple of 8), in increasing j. */
KD_KCLONES static void kd_kernel_lanes_(kd_lidx n, const double *restrict v,
                                        const double *restrict w, double *restrict p) {
  double q[8];
  for (int l = 0; l < 8; l++) q[l] = p[l];
  for (kd_lidx j = 0; j < n; j += 8)
    for (int l = 0; l < 8; l++) q[l] = fma(v[j + l], w[j + l], q[l]);
  for (int l = 0; l < 8; l++) p[l] = q[l];
}

/* kd_kernel_lanes_ for nr rows v + r n into p + 8 r (r < nr). Four rows run interleaved: one
 * row's 8 lane sums form one chain of dependent fma's, which alone waits on the fma latency;
 * four independent chains keep the pipes busy. Each row's lanes are summed in the same order as
 * by kd_kernel_lanes_: the same bits. */
KD_KCLONES void kd_kernel_lanes_rows_(int nr, kd_lidx n, const double *restrict v,
                                      const double *restrict w, double *restrict p) {
  if (nr != 4) {
    for (int r = 0; r < nr; r++) kd_kernel_lanes_(n, v + r * n, w, p + r * 8);
    return;
  }
  double q0[8], q1[8], q2[8], q3[8];
  const double *v0 = v, *v1 = v + n, *v2 = v + 2 * n, *v3 = v + 3 * n;
  for (int l = 0; l < 8; l++) {
    q0[l] = p[l];
    q1[l] = p[8 + l];
    q2[l] = p[16 + l];
    q3[l] = p[24 + l];
  }
  for (kd_lidx j = 0; j < n; j += 8)
    for (int l = 0; l < 8; l++) {
      q0[l] = fma(v0[j + l], w[j + l], q0[l]);
      q1[l] = fma(v1[j + l], w[j + l], q1[l]);
      q2[l] = fma(v2[j + l], w[j + l], q2[l]);
      q3[l] = fma(v3[j + l], w[j + l], q3[l]);
    }
  for (int l = 0; l < 8; l++) {
    p[l] = q0[l];
    p[8 + l] = q1[l];
    p[16 + l] = q2[l];
    p[24 + l] = q3[l];
  }
}

/* y[j] = exp(x[j]) by kd_kexp_neg_sel_; returns the count of arguments outside the normal form's
 * range */
static inline kd_lidx kd_kernel_vexp_loop_(kd_lidx n, const double *restrict x, double *restrict y,
                                           int general) {
  kd_lidx outside = 0;
  for (kd_lidx j = 0; j < n; j++) {
    outside += KD_KEXP_OUTSIDE(x[j]);
    y[j] = kd_kexp_neg_sel_(x[j], general);
  }
  return outside;
}

/* panel by panel, as the finishes see their arrays */
KD_KCLONES void kd_kernel_vexp_neg_(kd_lidx n, const double *x, double *y) {
  for (kd_lidx j0 = 0; j0 < n; j0 += KD_KERNEL_PANEL) {
    const kd_lidx m = n - j0 < KD_KERNEL_PANEL ? n - j0 : KD_KERNEL_PANEL;
    if (kd_kernel_vexp_loop_(m, x + j0, y + j0, 0)) kd_kernel_vexp_loop_(m, x + j0, y + j0, 1);
  }
}

/* One pair: the same accumulation as kd_kernel_acc_ written as scalar loops (cheaper per call). */
static inline void kd_kernel_pair_acc_(const kd_kernel *k, const double *x, const double *y,
                                       double *ps, double *ps2) {
  double s = 0.0, s2 = 0.0;
  const int d = k->d;
  switch (k->fam->acc) {
    case KD_KACC_SQDIST:
      for (int kk = 0; kk < d; kk++) {
        double t = x[kk] - y[kk];
        s = fma(t, t, s);
      }
      break;
    case KD_KACC_DOT:
      for (int kk = 0; kk < d; kk++) s = fma(x[kk], y[kk], s);
      break;
    case KD_KACC_ATTN:
      for (int kk = 0; kk < k->p.dk; kk++) s = fma(x[kk], y[kk], s);
      for (int kk = k->p.dk; kk < d; kk++) s2 = fma(x[kk], y[kk], s2);
      break;
    case KD_KACC_SQDIST2:
      for (int kk = 0; kk < k->p.dx; kk++) {
        double t = x[kk] - y[kk];
        s = fma(t, t, s);
      }
      for (int kk = k->p.dx; kk < d; kk++) {
        double t = x[kk] - y[kk];
        s2 = fma(t, t, s2);
      }
      break;
    default: /* one column: the packed layout is the row itself */
      kd_kernel_acc_(k, x, y, 1, 1, &s, &s2);
  }
  *ps = s;
  *ps2 = s2;
}

KD_KCLONES double kd_kernel_pair_(const kd_kernel *k, const double *x, const double *y) {
  double s, s2, out = 0.0;
  if (k->p.type == KD_KERNEL_STEIN) return kd_stein_pair_(k, x, y);
  kd_kernel_pair_acc_(k, x, y, &s, &s2);
  k->fam->finish(k, 1, &s, &s2, &out);
  return out;
}

/* Accumulators of the rows A_0..A_{n-1} (row-major) against one point b, pair by pair. */
KD_KCLONES static void kd_kernel_acc_rows_(const kd_kernel *k, const double *A, kd_lidx n,
                                           const double *b, double *s, double *s2) {
  const int d = k->d;
  kd_lidx i = 0;
  if (k->fam->acc == KD_KACC_SQDIST) /* four independent chains in flight */
    for (; i + 4 <= n; i += 4) {
      const double *a0 = A + i * d, *a1 = a0 + d, *a2 = a1 + d, *a3 = a2 + d;
      double c0 = 0.0, c1 = 0.0, c2 = 0.0, c3 = 0.0;
      for (int kk = 0; kk < d; kk++) {
        const double bk = b[kk];
        double t0 = a0[kk] - bk, t1 = a1[kk] - bk, t2 = a2[kk] - bk, t3 = a3[kk] - bk;
        c0 = fma(t0, t0, c0);
        c1 = fma(t1, t1, c1);
        c2 = fma(t2, t2, c2);
        c3 = fma(t3, t3, c3);
      }
      s[i] = c0;
      s[i + 1] = c1;
      s[i + 2] = c2;
      s[i + 3] = c3;
    }
  for (; i < n; i++) kd_kernel_pair_acc_(k, A + i * d, b, &s[i], &s2[i]);
}

double kd_kernel_eval(kd_kernel *k, const double *x, const double *y) {
  k->evals++;
  /* ls (or ls_phi): median not computed yet: make the misuse visible */
  if (k->ls_pending || k->ls_phi_pending) return NAN;
  return kd_kernel_pair_(k, x, y);
}

/* Columns per panel: KD_KERNEL_PANEL, fewer for large d so that a panel (d x P doubles) stays
 * within ~256 KB of cache; a multiple of 16. Only speed depends on it: a pair's value never does,
 * and the mat-vec lanes are j mod 8 whatever P is. */
kd_lidx kd_kernel_panel_(int d) {
  kd_lidx P = (kd_lidx)KD_KERNEL_PANEL * 128 / (d > 128 ? d : 128) / 16 * 16;
  return P < 16 ? 16 : P;
}

/* B (nb x d, row-major) packed panel by panel: panel p holds columns [p P, p P + nc) transposed
 * (coordinate kk of column j at Bp[d p P + kk npad + j - p P]) with npad = nc rounded up to 16,
 * zero-padded. Total size d * kd_kernel_packed_size_(nb). */
kd_lidx kd_kernel_packed_size_(kd_lidx nb, kd_lidx P) {
  const kd_lidx full = nb / P * P, rest = nb - full;
  return full + (rest + 15) / 16 * 16;
}

void kd_kernel_pack_panels(int d, const double *B, kd_lidx nb, kd_lidx P, double *Bp) {
  for (kd_lidx j0 = 0; j0 < nb; j0 += P) {
    const kd_lidx nc = nb - j0 < P ? nb - j0 : P, npad = (nc + 15) / 16 * 16;
    double *pan = Bp + (size_t)d * (size_t)j0;
    for (int kk = 0; kk < d; kk++) {
      double *dst = pan + (size_t)kk * (size_t)npad;
      for (kd_lidx j = 0; j < nc; j++) dst[j] = B[(j0 + j) * d + kk];
      for (kd_lidx j = nc; j < npad; j++) dst[j] = 0.0;
    }
  }
}

/* The bounding box of each packed panel of kd_kernel_pack_panels (padding columns included):
 * box[2 d p + kk] = lo, box[2 d p + d + kk] = hi of coordinate kk in panel p; a panel holding a
 * non-finite coordinate gets lo = hi = NaN (no bound). */
KD_KCLONES void kd_kernel_panel_boxes_(int d, const double *Bp, kd_lidx nb, kd_lidx P,
                                       double *box) {
  for (kd_lidx j0 = 0, pj = 0; j0 < nb; j0 += P, pj++) {
    const kd_lidx nc = nb - j0 < P ? nb - j0 : P, npad = (nc + 15) / 16 * 16;
    const double *pan = Bp + (size_t)d * (size_t)j0;
    double *lo = box + 2 * d * pj, *hi = lo + d;
    int finite = 1;
    for (int kk = 0; kk < d; kk++) {
      const double *c = pan + (size_t)kk * (size_t)npad;
      double l = c[0], h = c[0];
      for (kd_lidx j = 0; j < npad; j++) {
        l = c[j] < l ? c[j] : l;
        h = c[j] > h ? c[j] : h;
        finite &= isfinite(c[j]);
      }
      lo[kk] = l;
      hi[kk] = h;
    }
    if (!finite)
      for (int kk = 0; kk < 2 * d; kk++) lo[kk] = NAN;
  }
}

/* 1 when every squared distance between the rows A_i..A_{i+nr-1} and the points of the box
 * (lo[d], hi[d]) is at most smax: sum_kk max(a - lo, hi - a)^2 <= smax (a 1% margin in smax
 * covers the rounding of this bound). NaN anywhere gives 0. */
KD_KCLONES static int kd_kernel_rows_in_box_(int d, const double *A, kd_lidx i, int nr,
                                             const double *lo, double smax) {
  const double *hi = lo + d;
  for (int r = 0; r < nr; r++) {
    const double *a = A + (i + r) * d;
    double b8[8] = {0}, b = 0.0; /* 8 independent chains (any order: the margin covers it) */
    int kk = 0;
    for (; kk + 8 <= d; kk += 8)
      for (int l = 0; l < 8; l++) {
        const double e1 = a[kk + l] - lo[kk + l], e2 = hi[kk + l] - a[kk + l];
        const double m = e1 > e2 ? e1 : e2;
        b8[l] = fma(m, m, b8[l]);
      }
    for (; kk < d; kk++) {
      const double e1 = a[kk] - lo[kk], e2 = hi[kk] - a[kk], m = e1 > e2 ? e1 : e2;
      b = fma(m, m, b);
    }
    for (int l = 0; l < 8; l++) b += b8[l];
    if (!(b <= smax)) return 0;
  }
  return 1;
}

/* 1 when the panels' boxes pay for a call of na rows: they let a row block take the family's
 * normal-range finish, which saves its range count (a compare and an add per value, same bits),
 * but cost about 3 d operations per column to compute, against about na of those savings. So only
 * for rows >= 2 d + 4 (measured on ctt and kt_compress at d = 2 and 64, bench/results/kernel.md);
 * otherwise every value goes through the general finish. */
static int kd_kernel_boxes_pay_(const kd_kernel *k, kd_lidx na) {
  return k->fam->finish_normal != NULL && na >= 2 * (kd_lidx)k->d + 4;
}

/* Accumulators of row i (or rows i..i+3 with the register-blocked path) of A against the packed
 * panel; returns the number of rows done. s holds row r at s + r*npad. */
static int kd_kernel_rows_(const kd_kernel *k, const double *A, kd_lidx na, kd_lidx i,
                           const double *Bp, kd_lidx npad, double *s, double *s2) {
  const int d = k->d;
  (void)na;
#ifdef KD_KB_X86
  const int isa = k->isa;
  if (isa > 0 && k->fam->acc == KD_KACC_SQDIST && d >= KD_KB_MIND && i + KD_KB_MR <= na) {
    if (isa == 2)
      kd_kernel_sqdist4_avx512_(d, A + i * d, Bp, npad, npad, s);
    else
      kd_kernel_sqdist4_avx2_(d, A + i * d, Bp, npad, npad, s);
    return KD_KB_MR;
  }
#endif
  kd_kernel_acc_(k, A + i * d, Bp, npad, npad, s, s2);
  return 1;
}

static kd_err kd_kernel_check_args_(const kd_kernel *k, const double *A, kd_lidx na,
                                    const double *B, kd_lidx nb) {
  kd_err err = KD_OK;
  KD_CHECK(k != NULL, KD_ERR_ARG, "kernel: NULL kernel");
  KD_CHECK(na >= 0 && nb >= 0, KD_ERR_ARG, "kernel: negative block size (%lld x %lld)",
           (long long)na, (long long)nb);
  KD_CHECK((na == 0 || A) && (nb == 0 || B), KD_ERR_ARG, "kernel: NULL point block");
  KD_CHECK(!k->ls_pending, KD_ERR_ARG,
           "kernel.ls: 'median' was requested but kd_kernel_set_median_ls has not run");
  KD_CHECK(!k->ls_phi_pending, KD_ERR_ARG,
           "kernel.ls_phi: 'median' was requested but kd_kernel_set_median_ls has not run");
cleanup:
  return err;
}

/* y[i] = beta y[i] + ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) for the n rows of lanes. */
void kd_kernel_lanes_sum_(kd_lidx n, const double *lanes, double beta, double *y) {
  for (kd_lidx i = 0; i < n; i++) {
    const double *l = lanes + i * 8;
    double sum = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    y[i] = beta == 0.0 ? sum : beta * y[i] + sum;
  }
}

/* At least n doubles of the kernel's scratch (k->ws): allocated zeroed when it grows, then reused
 * by every block call, so a mat-vec or a tile in a loop allocates nothing. The callers carve it
 * into their buffers and write every entry they read (the accumulator s2 only the attention
 * family fills and reads; the others ignore what it holds). Local. */
kd_err kd_kernel_ws_(kd_kernel *k, size_t n, double **ws) {
  kd_err err = KD_OK;
  if (n > k->ws_n) {
    double *p = NULL;
    KD_ALLOC(p, n);
    free(k->ws);
    k->ws = p;
    k->ws_n = n;
  }
  *ws = k->ws;
cleanup:
  return err;
}

/* Few columns (nb < KD_KB_SMALL, e.g. one new atom against all candidates) and many rows: the
 * general path's per-row overheads and padding to 16 columns dominate, so go down the rows of A
 * instead (A row-major as given, no
 * packing), one column b_j at a time in increasing j. Each pair gets the scalar accumulation of
 * kd_kernel_pair_ (the same bits as every other path) and the finish runs vectorised over the
 * rows. Writes K (if not NULL) or, with y, the mat-vec: w_j k(a_i, b_j) goes to lane j mod 8 of
 * row i in increasing j and the lanes are summed exactly as in the general path. */
#define KD_KB_SMALL 4 /* measured: 2-5x faster for nb = 1, break-even near nb = 4 */
#define KD_KB_SMALL_ROWS 16
static kd_err kd_kernel_small_nb_(kd_kernel *k, const double *A, kd_lidx na, const double *B,
                                  kd_lidx nb, double *K, kd_lidx ldk, const double *w, double beta,
                                  double *y) {
  kd_err err = KD_OK;
  double *s, *s2 = NULL, *out, *lanes = NULL;
  const int d = k->d;
  const kd_lidx P = KD_KERNEL_PANEL;
  KD_TRY(kd_kernel_ws_(k, (size_t)P * (y ? 11 : 3), &s2));
  s = s2 + P;
  out = s + P;
  if (y) lanes = out + P;
  for (kd_lidx i0 = 0; i0 < na; i0 += P) {
    const kd_lidx nc = na - i0 < P ? na - i0 : P;
    if (lanes) memset(lanes, 0, sizeof(double) * (size_t)P * 8);
    for (kd_lidx j = 0; j < nb; j++) {
      kd_kernel_acc_rows_(k, A + i0 * d, nc, B + j * d, s, s2);
      k->fam->finish(k, nc, s, s2, out);
      if (K)
        for (kd_lidx i = 0; i < nc; i++) K[(i0 + i) * ldk + j] = out[i];
      if (lanes) {
        const double wj = w ? w[j] : 1.0;
        double *p = lanes + j % 8;
        for (kd_lidx i = 0; i < nc; i++) p[i * 8] = fma(out[i], wj, p[i * 8]);
      }
    }
    if (lanes) kd_kernel_lanes_sum_(nc, lanes, beta, y + i0);
  }
cleanup:
  return err;
}

/* The scratch of kd_kernel_eval_panels_ (s2, s, out) for panels of P columns, in doubles. */
static size_t kd_kernel_panels_ws_(kd_lidx P, int d, kd_lidx nb) {
  return (size_t)(KD_KB_MR + 2) * (size_t)P + (size_t)(2 * d) * (size_t)((nb + P - 1) / P);
}

/* The tile loop of kd_kernel_eval_block over B already packed (Bp, d * kd_kernel_packed_size_);
 * ws: kd_kernel_panels_ws_ doubles of the kernel's scratch. */
static void kd_kernel_eval_panels_(kd_kernel *k, const double *A, kd_lidx na, const double *Bp,
                                   const double *pbox, kd_lidx nb, double *K, kd_lidx ldk,
                                   double *ws) {
  const int d = k->d;
  const kd_lidx P = kd_kernel_panel_(d), npan = (nb + P - 1) / P;
  double *s2 = ws, *s = s2 + P, *out = s + KD_KB_MR * P;
  const kd_kernel_finish_fn fnormal = k->fam->finish_normal;
  /* the boxes kd_kernel_pack kept (the same values), else computed into the scratch where they
   * pay for themselves */
  const double *box = pbox ? pbox : kd_kernel_boxes_pay_(k, na) ? out + P : NULL;
  if (!pbox && box) kd_kernel_panel_boxes_(d, Bp, nb, P, out + P);
  for (kd_lidx i0 = 0; i0 < na; i0 += KD_KB_ROWS) {
    const kd_lidx i1 = na - i0 < KD_KB_ROWS ? na : i0 + KD_KB_ROWS;
    for (kd_lidx pj = 0; pj < npan; pj++) {
      const kd_lidx j0 = pj * P, nc = nb - j0 < P ? nb - j0 : P, npad = (nc + 15) / 16 * 16;
      const double *Bpj = Bp + (size_t)d * (size_t)j0;
      for (kd_lidx i = i0; i < i1;) {
        const int rows = kd_kernel_rows_(k, A, i1, i, Bpj, npad, s, s2);
        const kd_kernel_finish_fn fin =
            fnormal && box && kd_kernel_rows_in_box_(d, A, i, rows, box + 2 * d * pj, k->s_normal)
                ? fnormal
                : k->fam->finish;
        for (int r = 0; r < rows; r++) {
          if (npad == nc) { /* no padding: straight into K */
            fin(k, nc, s + r * npad, s2, K + (i + r) * ldk + j0);
          } else {
            fin(k, npad, s + r * npad, s2, out);
            memcpy(K + (i + r) * ldk + j0, out, sizeof(double) * (size_t)nc);
          }
        }
        i += rows;
      }
    }
  }
  k->evals += (uint64_t)na * (uint64_t)nb;
}

/* The paths that do not pack B: the Stein kernel, and few columns against many rows. */
static int kd_kernel_unpacked_(const kd_kernel *k, kd_lidx na, kd_lidx nb) {
  return k->p.type == KD_KERNEL_STEIN || (nb < KD_KB_SMALL && na >= KD_KB_SMALL_ROWS);
}

static kd_err kd_kernel_eval_unpacked_(kd_kernel *k, const double *A, kd_lidx na, const double *B,
                                       kd_lidx nb, double *K, kd_lidx ldk) {
  kd_err err = KD_OK;
  if (k->p.type == KD_KERNEL_STEIN)
    KD_TRY(kd_stein_block_(k, A, na, B, nb, K, ldk, NULL, 0.0, NULL));
  else
    KD_TRY(kd_kernel_small_nb_(k, A, na, B, nb, K, ldk, NULL, 0.0, NULL));
  k->evals += (uint64_t)na * (uint64_t)nb;
cleanup:
  return err;
}

kd_err kd_kernel_eval_block(kd_kernel *k, const double *A, kd_lidx na, const double *B, kd_lidx nb,
                            double *K, kd_lidx ldk) {
  kd_err err = KD_OK;
  double *ws = NULL;
  KD_TRY(kd_kernel_check_args_(k, A, na, B, nb));
  KD_CHECK(ldk >= nb && (K || na == 0 || nb == 0), KD_ERR_ARG,
           "kernel: tile needs ldk >= nb (ldk %lld, nb %lld)", (long long)ldk, (long long)nb);
  if (na == 0 || nb == 0) goto cleanup;
  if (kd_kernel_unpacked_(k, na, nb)) {
    KD_TRY(kd_kernel_eval_unpacked_(k, A, na, B, nb, K, ldk));
    goto cleanup;
  }
  const kd_lidx P = kd_kernel_panel_(k->d);
  const size_t nbp = (size_t)k->d * (size_t)kd_kernel_packed_size_(nb, P);
  const size_t nws = kd_kernel_panels_ws_(P, k->d, nb);
  KD_TRY(kd_kernel_ws_(k, nws + nbp, &ws));
  kd_kernel_pack_panels(k->d, B, nb, P, ws + nws);
  kd_kernel_eval_panels_(k, A, na, ws + nws, NULL, nb, K, ldk, ws);
cleanup:
  return err;
}

struct kd_kernel_packed {
  const double *B; /* the rows (borrowed): the unpacked paths read them */
  kd_lidx nb;
  int d;
  double *Bp;  /* the panels, NULL for the Stein kernel */
  double *box; /* the panels' boxes (kd_kernel_panel_boxes_) where the family has a normal-range
                * finish, else NULL: computed once here, not on every call (a call of one row
                * spent as long on them as on its kernel values) */
};

kd_err kd_kernel_pack(const kd_kernel *k, const double *B, kd_lidx nb, kd_kernel_packed **out) {
  kd_err err = KD_OK;
  kd_kernel_packed *p = NULL;
  KD_CHECK(k && out && nb >= 0 && (nb == 0 || B), KD_ERR_ARG,
           "kernel: pack needs a kernel, rows and a handle");
  KD_ALLOC(p, 1);
  p->B = B;
  p->nb = nb;
  p->d = k->d;
  if (k->p.type != KD_KERNEL_STEIN && nb > 0) {
    const kd_lidx P = kd_kernel_panel_(k->d);
    KD_ALLOC(p->Bp, (size_t)k->d * (size_t)kd_kernel_packed_size_(nb, P));
    kd_kernel_pack_panels(k->d, B, nb, P, p->Bp);
    if (k->fam->finish_normal) {
      KD_ALLOC(p->box, (size_t)(2 * k->d) * (size_t)((nb + P - 1) / P));
      kd_kernel_panel_boxes_(k->d, p->Bp, nb, P, p->box);
    }
  }
  *out = p;
  p = NULL;
cleanup:
  kd_kernel_packed_free(&p);
  return err;
}

void kd_kernel_packed_free(kd_kernel_packed **p) {
  if (!p || !*p) return;
  free((*p)->Bp);
  free((*p)->box);
  free(*p);
  *p = NULL;
}

kd_err kd_kernel_eval_block_packed(kd_kernel *k, const double *A, kd_lidx na,
                                   const kd_kernel_packed *B, double *K, kd_lidx ldk) {
  kd_err err = KD_OK;
  KD_CHECK(B != NULL, KD_ERR_ARG, "kernel: NULL packed rows");
  KD_CHECK(B->d == kd_kernel_dim(k), KD_ERR_ARG,
           "kernel: rows packed in dimension %d, kernel of dimension %d", B->d, kd_kernel_dim(k));
  KD_TRY(kd_kernel_check_args_(k, A, na, B->B, B->nb));
  KD_CHECK(ldk >= B->nb && (K || na == 0 || B->nb == 0), KD_ERR_ARG,
           "kernel: tile needs ldk >= nb (ldk %lld, nb %lld)", (long long)ldk, (long long)B->nb);
  if (na == 0 || B->nb == 0) goto cleanup;
  if (kd_kernel_unpacked_(k, na, B->nb) || !B->Bp) {
    KD_TRY(kd_kernel_eval_unpacked_(k, A, na, B->B, B->nb, K, ldk));
  } else {
    double *ws = NULL;
    KD_TRY(kd_kernel_ws_(k, kd_kernel_panels_ws_(kd_kernel_panel_(k->d), k->d, B->nb), &ws));
    kd_kernel_eval_panels_(k, A, na, B->Bp, B->box, B->nb, K, ldk, ws);
  }
cleanup:
  return err;
}

/* Up to KD_KB_MR rows of accumulators from row i (rows < i1) against the packed panel Bpj, row r at
 * s + r npad (kd_kernel_rows_ gives KD_KB_MR rows at once only when none are done yet); returns
 * how many. */
static inline int kd_kernel_rows_mr_(const kd_kernel *k, const double *A, kd_lidx i1, kd_lidx i,
                                     const double *Bpj, kd_lidx npad, double *s, double *s2) {
  int nr = 0;
  while (nr < KD_KB_MR && i + nr < i1)
    nr += kd_kernel_rows_(k, A, i1, i + nr, Bpj, npad, s + nr * npad, s2 + nr * npad);
  return nr;
}

/* The kernel values of those nr rows into out: the family's normal-range finish when the rows lie
 * in the panel's box bx (NULL: no box), else its general finish (the same bits either way). */
static inline void kd_kernel_finish_rows_(const kd_kernel *k, const double *A, kd_lidx i, int nr,
                                          const double *bx, kd_lidx npad, const double *s,
                                          const double *s2, double *out) {
  const kd_kernel_finish_fn fnormal = k->fam->finish_normal;
  if (fnormal && bx && kd_kernel_rows_in_box_(k->d, A, i, nr, bx, k->s_normal))
    fnormal(k, nr * npad, s, s2, out);
  else
    k->fam->finish(k, nr * npad, s, s2, out);
}

/* The panel loop of kd_kernel_matvec over columns packed by kd_kernel_pack_panels (panel pj at
 * Bp + d pj P, its box at box + 2 d pj) except the last panel, which is at Blast / boxlast, for
 * the L kernels ks (same dimension and accumulation; the accumulators are ks[0]'s, computed once
 * and finished by each): y[l][i] = beta y[l][i] + sum_j k_l(A_i, B_j) wp[j], for each kernel the
 * bits of its own call. ws: s2, s, out (KD_KB_MR * P each) then L lane blocks (KD_KB_ROWS * 8
 * each). Local. */
static void kd_kernel_matvec_panels_(kd_kernel *const *ks, int L, const double *A, kd_lidx na,
                                     const double *Bp, const double *box, const double *Blast,
                                     const double *boxlast, kd_lidx nb, const double *wp,
                                     double beta, double *const *y, double *ws) {
  const kd_kernel *k = ks[0];
  const int d = k->d;
  const kd_lidx P = kd_kernel_panel_(d), npan = (nb + P - 1) / P;
  double *s2 = ws, *s = s2 + KD_KB_MR * P, *out = s + KD_KB_MR * P, *lanes = out + KD_KB_MR * P;
  for (kd_lidx i0 = 0; i0 < na; i0 += KD_KB_ROWS) {
    const kd_lidx i1 = na - i0 < KD_KB_ROWS ? na : i0 + KD_KB_ROWS;
    memset(lanes, 0, sizeof(double) * KD_KB_ROWS * 8 * (size_t)L);
    for (kd_lidx pj = 0; pj < npan; pj++) {
      const kd_lidx j0 = pj * P, nc = nb - j0 < P ? nb - j0 : P, npad = (nc + 15) / 16 * 16;
      const double *Bpj = pj == npan - 1 ? Blast : Bp + (size_t)d * (size_t)j0;
      const double *bx = pj == npan - 1 ? boxlast : box ? box + 2 * d * pj : NULL;
      for (kd_lidx i = i0; i < i1;) {
        /* up to KD_KB_MR rows of accumulators, their kernel values in one finish per kernel,
         * then their lanes together */
        const int nr = kd_kernel_rows_mr_(k, A, i1, i, Bpj, npad, s, s2);
        for (int l = 0; l < L; l++) {
          kd_kernel_finish_rows_(ks[l], A, i, nr, bx, npad, s, s2, out);
          kd_kernel_lanes_rows_(nr, npad, out, wp + j0,
                                lanes + (size_t)l * KD_KB_ROWS * 8 + (i - i0) * 8);
        }
        i += nr;
      }
    }
    for (int l = 0; l < L; l++)
      kd_kernel_lanes_sum_(i1 - i0, lanes + (size_t)l * KD_KB_ROWS * 8, beta, y[l] + i0);
  }
}

/* kd_kernel_matvec takes its small-nb or Stein path (not the panels) */
static int kd_kernel_matvec_direct_(const kd_kernel *k, kd_lidx na, kd_lidx nb) {
  return k->p.type == KD_KERNEL_STEIN || (nb < KD_KB_SMALL && na >= KD_KB_SMALL_ROWS);
}

/* kd_kernel_matvec for the L kernels ks (checked by the callers: same dimension and
 * accumulation, no Stein kernel), the columns packed once; beta = 0 unless given. */
static kd_err kd_kernel_matvec_ks_(kd_kernel *const *ks, int L, const double *A, kd_lidx na,
                                   const double *B, kd_lidx nb, const double *w, double beta,
                                   double *const *y) {
  kd_err err = KD_OK;
  double *Bp, *ws = NULL, *wp, *box;
  kd_kernel *k = ks[0];
  const int d = k->d;
  const kd_lidx P = kd_kernel_panel_(d);
  const kd_lidx npan = (nb + P - 1) / P, nbp = kd_kernel_packed_size_(nb, P);
  /* one row block of lanes per kernel: memory does not grow with na; s2, s and out hold
   * KD_KB_MR rows */
  const size_t sc = (size_t)3 * KD_KB_MR * (size_t)P + (size_t)L * KD_KB_ROWS * 8;
  KD_TRY(
      kd_kernel_ws_(k, sc + (size_t)(d + 1) * (size_t)nbp + (size_t)(2 * d) * (size_t)npan, &ws));
  Bp = ws + sc;
  wp = Bp + (size_t)d * (size_t)nbp;
  box = wp + nbp;
  kd_kernel_pack_panels(d, B, nb, P, Bp);
  int pay = 0;
  for (int l = 0; l < L; l++) pay |= kd_kernel_boxes_pay_(ks[l], na);
  if (pay) kd_kernel_panel_boxes_(d, Bp, nb, P, box);
  for (kd_lidx j = 0; j < nbp; j++) wp[j] = j < nb ? (w ? w[j] : 1.0) : 0.0; /* padding: 0 */
  kd_kernel_matvec_panels_(ks, L, A, na, Bp, pay ? box : NULL,
                           Bp + (size_t)d * (size_t)((npan - 1) * P),
                           pay ? box + 2 * d * (npan - 1) : NULL, nb, wp, beta, y, ws);
  for (int l = 0; l < L; l++) ks[l]->evals += (uint64_t)na * (uint64_t)nb;
cleanup:
  return err;
}

kd_err kd_kernel_matvec(kd_kernel *k, const double *A, kd_lidx na, const double *B, kd_lidx nb,
                        const double *w, double beta, double *y) {
  kd_err err = KD_OK;
  KD_TRY(kd_kernel_check_args_(k, A, na, B, nb));
  KD_CHECK(y || na == 0, KD_ERR_ARG, "kernel: NULL output vector");
  if (na == 0) goto cleanup;
  if (kd_kernel_matvec_direct_(k, na, nb)) {
    if (k->p.type == KD_KERNEL_STEIN)
      KD_TRY(kd_stein_block_(k, A, na, B, nb, NULL, 0, w, beta, y));
    else
      KD_TRY(kd_kernel_small_nb_(k, A, na, B, nb, NULL, 0, w, beta, y));
    k->evals += (uint64_t)na * (uint64_t)nb;
    goto cleanup;
  }
  KD_TRY(kd_kernel_matvec_ks_(&k, 1, A, na, B, nb, w, beta, &y));
cleanup:
  return err;
}

kd_err kd_kernel_matvec_multi(kd_kernel *const *ks, int L, const double *A, kd_lidx na,
                              const double *B, kd_lidx nb, const double *w, double *const *y) {
  kd_err err = KD_OK;
  KD_CHECK(ks && y && L >= 1, KD_ERR_ARG, "kernel: matvec_multi needs kernels and outputs");
  for (int l = 0; l < L; l++) {
    KD_TRY(kd_kernel_check_args_(ks[l], A, na, B, nb));
    KD_CHECK(y[l] || na == 0, KD_ERR_ARG, "kernel: NULL output vector");
    KD_CHECK(ks[l]->d == ks[0]->d && ks[l]->fam->acc == ks[0]->fam->acc &&
                 ks[l]->p.type != KD_KERNEL_STEIN,
             KD_ERR_ARG, "kernel: matvec_multi needs kernels of one dimension and accumulation");
  }
  if (na == 0) goto cleanup;
  if (kd_kernel_matvec_direct_(ks[0], na, nb)) {
    for (int l = 0; l < L; l++) KD_TRY(kd_kernel_matvec(ks[l], A, na, B, nb, w, 0.0, y[l]));
    goto cleanup;
  }
  KD_TRY(kd_kernel_matvec_ks_(ks, L, A, na, B, nb, w, 0.0, y));
cleanup:
  return err;
}

kd_err kd_kernel_prefix_pack_(kd_kernel *k, const double *X, kd_lidx n, kd_kernel_prefix_ *pf) {
  kd_err err = KD_OK;
  const int d = k->d;
  const kd_lidx P = kd_kernel_panel_(d), npan = (n + P - 1) / P;
  memset(pf, 0, sizeof *pf);
  pf->X = X;
  pf->n = n;
  KD_ALLOC(pf->Bp, (size_t)d * (size_t)kd_kernel_packed_size_(n, P));
  KD_ALLOC(pf->box, (size_t)(2 * d) * (size_t)(npan > 0 ? npan : 1));
cleanup:
  return err;
}

void kd_kernel_prefix_free_(kd_kernel_prefix_ *pf) {
  free(pf->Bp);
  free(pf->box);
  pf->Bp = pf->box = NULL;
}

/* The full panels [pf->npan_done, npan) packed with their boxes, as kd_kernel_pack_panels and
 * kd_kernel_panel_boxes_ lay them out for all n columns at once. */
static void kd_kernel_prefix_extend_(const kd_kernel *k, kd_kernel_prefix_ *pf, kd_lidx npan) {
  const int d = k->d;
  const kd_lidx P = kd_kernel_panel_(d);
  for (kd_lidx p = pf->npan_done; p < npan; p++) {
    double *pan = pf->Bp + (size_t)d * (size_t)(p * P);
    kd_kernel_pack_panels(d, pf->X + (size_t)(p * P) * (size_t)d, P, P, pan);
    if (k->fam->finish_normal) kd_kernel_panel_boxes_(d, pan, P, P, pf->box + 2 * d * p);
  }
  if (npan > pf->npan_done) pf->npan_done = npan;
}

kd_err kd_kernel_prefix_matvec_(kd_kernel *k, kd_kernel_prefix_ *pf, const double *A, kd_lidx na,
                                kd_lidx nb, const double *w, double *y) {
  kd_err err = KD_OK;
  double *ws = NULL, *wp, *last, *lbox;
  const int d = k->d;
  KD_CHECK(nb >= 0 && nb <= pf->n, KD_ERR_ARG, "kernel: prefix of %lld columns out of %lld",
           (long long)nb, (long long)pf->n);
  if (na == 0) goto cleanup;
  if (nb == 0 || kd_kernel_matvec_direct_(k, na, nb)) {
    KD_TRY(kd_kernel_matvec(k, A, na, pf->X, nb, w, 0.0, y));
    goto cleanup;
  }
  const kd_lidx P = kd_kernel_panel_(d), npan = (nb + P - 1) / P, j0 = (npan - 1) * P;
  const kd_lidx nbp = kd_kernel_packed_size_(nb, P);
  const size_t sc = (size_t)3 * KD_KB_MR * (size_t)P + KD_KB_ROWS * 8;
  KD_TRY(kd_kernel_ws_(k, sc + (size_t)nbp + (size_t)(d + 2) * (size_t)P + (size_t)(2 * d), &ws));
  wp = ws + sc;
  last = wp + nbp;
  lbox = last + (size_t)d * (size_t)P;
  for (kd_lidx j = 0; j < nbp; j++) wp[j] = j < nb ? (w ? w[j] : 1.0) : 0.0; /* padding: 0 */
  kd_kernel_prefix_extend_(k, pf, npan - 1); /* the full panels before the last */
  /* the last panel as kd_kernel_matvec packs it for nb columns (narrower when partial) */
  kd_kernel_pack_panels(d, pf->X + (size_t)j0 * (size_t)d, nb - j0, P, last);
  const int pay = kd_kernel_boxes_pay_(k, na);
  if (pay) kd_kernel_panel_boxes_(d, last, nb - j0, P, lbox);
  kd_kernel_matvec_panels_(&k, 1, A, na, pf->Bp, pf->box, last, pay ? lbox : NULL, nb, wp, 0.0, &y,
                           ws);
  k->evals += (uint64_t)na * (uint64_t)nb;
cleanup:
  return err;
}

kd_err kd_kernel_diag(kd_kernel *k, const double *A, kd_lidx na, double *diag) {
  kd_err err = KD_OK;
  KD_TRY(kd_kernel_check_args_(k, A, na, A, na));
  KD_CHECK(diag || na == 0, KD_ERR_ARG, "kernel: NULL diagonal");
  for (kd_lidx i = 0; i < na; i++) diag[i] = kd_kernel_pair_(k, A + i * k->d, A + i * k->d);
  k->evals += (uint64_t)na;
cleanup:
  return err;
}

/* For kernel_sym.c: the kernel values of up to KD_KB_MR rows of A from row i (rows < i1) against
 * the packed panel Bpj (npad columns; its box bx, or NULL where the family has no normal-range
 * finish) exactly as kd_kernel_matvec_panels_ computes them, into out[r npad + j]; returns the
 * rows done. ws: 2 KD_KB_MR npad doubles. */
int kd_kernel_panel_values_(const kd_kernel *k, const double *A, kd_lidx i1, kd_lidx i,
                            const double *Bpj, const double *bx, kd_lidx npad, double *ws,
                            double *out) {
  double *s2 = ws, *s = ws + KD_KB_MR * npad;
  const int nr = kd_kernel_rows_mr_(k, A, i1, i, Bpj, npad, s, s2);
  kd_kernel_finish_rows_(k, A, i, nr, bx, npad, s, s2, out);
  return nr;
}
