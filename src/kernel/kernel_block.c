/* kernel_block.c - blocked kernel evaluation: one pair, tiles K(A,B), the fused mat-vec
 * y = beta y + K(A,B) w (K never materialised) and the diagonal.
 *
 * B is packed in panels of KD_KERNEL_PANEL columns, transposed (coordinate-major) and padded with
 * zero columns to a multiple of 8, so the per-row loops run over contiguous columns and vectorise
 * lane-wise. Per pair the operations are fixed (kernel_impl.h), hence
 *   - k(a, b) is bitwise identical in any tile, at any position, for any na, nb, and equal to
 *     kd_kernel_eval(a, b);
 *   - the mat-vec sums row i in 8 interleaved partial sums (column j goes to lane j mod 8, in
 *     increasing j) that are then added as ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)): y[i] depends on
 *     A_i, B, w and nb only, not on the other rows of A (nor on how rows are split over ranks).
 * Direct differences (x_j - y_j)^2 are accumulated rather than |x|^2 + |y|^2 - 2<x,y> via dgemm:
 * no cancellation (k(a,a) is exact, squared distances are never negative) and, with AVX-512 / AVX2
 * FMA on the sub and FMA ports, no slower than the dgemm route on this machine (see
 * bench/RESULTS_kernel.md for the measurement). */
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

/* p[l] += sum over j = l mod 8 of v[j] w[j], j < n (n a multiple of 8), in increasing j. */
KD_KCLONES static void kd_kernel_lanes_(kd_lidx n, const double *restrict v,
                                        const double *restrict w, double *restrict p) {
  double q[8];
  for (int l = 0; l < 8; l++) q[l] = p[l];
  for (kd_lidx j = 0; j < n; j += 8)
    for (int l = 0; l < 8; l++) q[l] = fma(v[j + l], w[j + l], q[l]);
  for (int l = 0; l < 8; l++) p[l] = q[l];
}

void kd_kernel_vexp_neg_(kd_lidx n, const double *x, double *y) {
  for (kd_lidx j = 0; j < n; j++) y[j] = kd_kexp_neg_(x[j]);
}

double kd_kernel_pair_(const kd_kernel *k, const double *x, const double *y) {
  double s = 0.0, s2 = 0.0, out = 0.0;
  kd_kernel_acc_(k, x, y, 1, 1, &s, &s2); /* one column: packed layout = the row itself */
  k->fam->finish(k, 1, &s, &s2, &out);
  return out;
}

double kd_kernel_eval(kd_kernel *k, const double *x, const double *y) {
  k->evals++;
  return kd_kernel_pair_(k, x, y);
}

/* Pack columns j0 .. j0+nc-1 of B (row-major, d columns) into Bp[kk*npad + j], zero-padded. */
static void kd_kernel_pack_(int d, const double *B, kd_lidx j0, kd_lidx nc, kd_lidx npad,
                            double *Bp) {
  for (int kk = 0; kk < d; kk++) {
    double *dst = Bp + (size_t)kk * (size_t)npad;
    for (kd_lidx j = 0; j < nc; j++) dst[j] = B[(j0 + j) * d + kk];
    for (kd_lidx j = nc; j < npad; j++) dst[j] = 0.0;
  }
}

static kd_err kd_kernel_check_args_(const kd_kernel *k, const double *A, kd_lidx na, const double *B,
                                    kd_lidx nb) {
  kd_err err = KD_OK;
  KD_CHECK(k != NULL, KD_ERR_ARG, "kernel: NULL kernel");
  KD_CHECK(na >= 0 && nb >= 0, KD_ERR_ARG, "kernel: negative block size (%lld x %lld)",
           (long long)na, (long long)nb);
  KD_CHECK((na == 0 || A) && (nb == 0 || B), KD_ERR_ARG, "kernel: NULL point block");
cleanup:
  return err;
}

kd_err kd_kernel_eval_block(kd_kernel *k, const double *A, kd_lidx na, const double *B, kd_lidx nb,
                            double *K, kd_lidx ldk) {
  kd_err err = KD_OK;
  double *Bp = NULL, *s = NULL, *s2 = NULL, *out = NULL;
  KD_TRY(kd_kernel_check_args_(k, A, na, B, nb));
  KD_CHECK(ldk >= nb && (K || na == 0 || nb == 0), KD_ERR_ARG,
           "kernel: tile needs ldk >= nb (ldk %lld, nb %lld)", (long long)ldk, (long long)nb);
  if (na == 0 || nb == 0) goto cleanup;
  const int d = k->d;
  const kd_lidx P = KD_KERNEL_PANEL;
  KD_ALLOC(Bp, (size_t)d * P);
  KD_ALLOC(s, P);
  KD_ALLOC(s2, P);
  KD_ALLOC(out, P);
  for (kd_lidx j0 = 0; j0 < nb; j0 += P) {
    const kd_lidx nc = nb - j0 < P ? nb - j0 : P, npad = (nc + 7) / 8 * 8;
    kd_kernel_pack_(d, B, j0, nc, npad, Bp);
    for (kd_lidx i = 0; i < na; i++) {
      kd_kernel_acc_(k, A + i * d, Bp, npad, npad, s, s2);
      k->fam->finish(k, npad, s, s2, out);
      memcpy(K + i * ldk + j0, out, sizeof(double) * (size_t)nc);
    }
  }
  k->evals += (uint64_t)na * (uint64_t)nb;
cleanup:
  free(Bp);
  free(s);
  free(s2);
  free(out);
  return err;
}

kd_err kd_kernel_matvec(kd_kernel *k, const double *A, kd_lidx na, const double *B, kd_lidx nb,
                        const double *w, double beta, double *y) {
  kd_err err = KD_OK;
  double *Bp = NULL, *s = NULL, *s2 = NULL, *out = NULL, *wp = NULL, *lanes = NULL;
  KD_TRY(kd_kernel_check_args_(k, A, na, B, nb));
  KD_CHECK(y || na == 0, KD_ERR_ARG, "kernel: NULL output vector");
  if (na == 0) goto cleanup;
  const int d = k->d;
  const kd_lidx P = KD_KERNEL_PANEL;
  KD_ALLOC(Bp, (size_t)d * P);
  KD_ALLOC(s, P);
  KD_ALLOC(s2, P);
  KD_ALLOC(out, P);
  KD_ALLOC(wp, P);
  KD_ALLOC(lanes, (size_t)na * 8);
  for (kd_lidx j0 = 0; j0 < nb; j0 += P) {
    const kd_lidx nc = nb - j0 < P ? nb - j0 : P, npad = (nc + 7) / 8 * 8;
    kd_kernel_pack_(d, B, j0, nc, npad, Bp);
    for (kd_lidx j = 0; j < nc; j++) wp[j] = w ? w[j0 + j] : 1.0;
    for (kd_lidx j = nc; j < npad; j++) wp[j] = 0.0;
    for (kd_lidx i = 0; i < na; i++) {
      kd_kernel_acc_(k, A + i * d, Bp, npad, npad, s, s2);
      k->fam->finish(k, npad, s, s2, out);
      kd_kernel_lanes_(npad, out, wp, lanes + i * 8);
    }
  }
  for (kd_lidx i = 0; i < na; i++) {
    const double *l = lanes + i * 8;
    double sum = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
    y[i] = beta == 0.0 ? sum : beta * y[i] + sum;
  }
  k->evals += (uint64_t)na * (uint64_t)nb;
cleanup:
  free(Bp);
  free(s);
  free(s2);
  free(out);
  free(wp);
  free(lanes);
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
