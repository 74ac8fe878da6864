/* kernel_screen_gemm.c - the screening mat-vec of kernel_screen.c with its squared distances from
 * single-precision GEMM: |a~ - b~|^2 = |a~|^2 + |b~|^2 - 2 a~.b~, the products of a block of rows
 * and a block of columns in one sgemm call (OpenBLAS: twice the coordinates per second of the
 * direct difference loop at moderate and high d, bench/results/kernel.md). The caller's
 * guarantee is the direct form's: y and a proven bound on |y - y'|, y' what kd_kernel_matvec
 * returns, so that the decisions taken from them are kd_kernel_matvec's, bit for bit.
 *
 * The frame: every point scaled by sigma = sqrt(|c0|) around the points' mean m and rounded to
 * float, x~ = fl(sigma (x - m)); A = |a~| and B = |b~| are the norms of the stored floats. With
 * u = 2^-24, u1 = u (1 + 2^-20) (the two double roundings before the float one) and S the exact
 * argument's size |sigma (a - b)|^2, the computed s~ = fma(-2, g, fl(q_a + q_b)) (g the sgemm
 * product, q the norms squared rounded to float) is within
 *   E = 8.01 u1 (A^2 + B^2) + 2 gamma_d A B,   gamma_d = d u / (1 - d u),
 * of S: the stored points differ from the exact ones by at most u1 |x~| each, so the floats'
 * distance squared is within (2 (A + B) + eta) eta of S (eta = u1 (A + B)), i.e. 4 u1 (A^2 + B^2)
 * and a margin; q_a, q_b are within u1 A^2, u1 B^2 (a double sum of exact squares, then one float
 * rounding), their sum within u (A^2 + B^2), the final fma within u |s~| <= 2 u (A^2 + B^2); and
 * any order of the d products' additions in sgemm (blocked, fused or not) keeps g within
 * gamma_d sum |a~_k b~_k| <= gamma_d A B of a~.b~ (Higham, Accuracy and Stability, 3.1). The
 * argument x~ = -s~ clamped to [-80, 0] is then within E of -S (clamping moves it toward the
 * exact value; a value clamped at -80 is off by at most KD_SCR_TINY). With kf = the single
 * precision exponential of x~ (relative error KD_SCR_EXP_ERR) and E <= 1e-3 (e^E - 1 <= 1.0006 E):
 *   |kf - kd| <= kf (1.0001 (KD_SCR_EXP_ERR + 1.0006 E) + 1.0011 (3e-16 + (d + 2) 1.21e-16 S)),
 * the last term kd_kernel_matvec's own distance to exp(-S) (as in kernel_screen.c), with
 * S <= 2.01 (A^2 + B^2). Per row a this is r0 + r1 B + r2 B^2 times kf, so the row keeps three
 * sums per lane, sum |w| kf, sum |w| kf B and sum |w| kf B^2 (B, B^2 rounded up), flushed to
 * double every KD_SCR_BLOCK columns like y. E <= 1e-3 is checked per row and block of columns
 * with the block's largest B; a row that fails it gets an infinite bound (its comparisons go to
 * the exact rows). The sums' roundings are kd_screen_setup_'s. */
#include <cblas.h>
#include <stdlib.h>

#include "kernel/kernel_screen_impl.h"

#define KD_SCRG_ROWS 128 /* rows per sgemm product */
#define KD_SCRG_COLS 512 /* columns per sgemm product */
/* The sgemm form from this dimension on (measured: bench/results/kernel.md, the halving's
 * screening at d = 8 .. 784) */
#define KD_SCR_GEMM_MIND 16

int kd_kernel_screen_is_gemm(const kd_kernel_screen *S) { return S && S->gemm; }

int kd_screen_gemm_wanted_(const kd_kernel *k) {
  if (k->screen_gemm) return k->screen_gemm == 1;
  return k->d >= KD_SCR_GEMM_MIND;
}

void kd_kernel_set_screen_gemm_(kd_kernel *k, int mode) {
  if (k) k->screen_gemm = mode;
}

/* The frame's mean of X (n x d) into m; 0 when a coordinate is not finite. */
static int kd_scrg_mean_(int d, const double *X, kd_lidx n, double *m) {
  int finite = 1;
  for (int kk = 0; kk < d; kk++) m[kk] = 0.0;
  for (kd_lidx i = 0; i < n; i++)
    for (int kk = 0; kk < d; kk++) {
      m[kk] += X[i * d + kk];
      finite &= isfinite(X[i * d + kk]);
    }
  for (int kk = 0; kk < d; kk++) m[kk] /= (double)n;
  return finite;
}

kd_err kd_screen_gemm_prepare_(kd_kernel_screen *S, const double *X, int *formed) {
  kd_err err = KD_OK;
  double *m = NULL;
  const int d = S->d;
  const kd_lidx n = S->n, nr = (n + 15) / 16 * 16, nblk = (n + KD_SCRG_COLS - 1) / KD_SCRG_COLS;
  *formed = 0;
  KD_ALLOC(m, d);
  if (!kd_scrg_mean_(d, X, n, m)) goto cleanup;
  KD_ALLOC(S->Xg, (size_t)d * (size_t)n);
  KD_ALLOC(S->gn, nr);
  KD_ALLOC(S->gn2, nr);
  KD_ALLOC(S->gq, nr);
  KD_ALLOC(S->gbmax, nblk);
  KD_ALLOC(S->G, (size_t)KD_SCRG_ROWS * KD_SCRG_COLS);
  KD_ALLOC(S->gx, KD_SCRG_COLS);
  KD_ALLOC(S->gkv, KD_SCRG_COLS);
  KD_ALLOC(S->gacc, (size_t)KD_SCRG_ROWS * 64);
  for (kd_lidx i = 0; i < n; i++) {
    float *x = S->Xg + (size_t)i * (size_t)d;
    double q = 0.0;
    for (int kk = 0; kk < d; kk++) {
      x[kk] = (float)(S->sigma * (X[i * d + kk] - m[kk]));
      q += (double)x[kk] * (double)x[kk]; /* exact squares; the sum within d 2^-53 q */
    }
    const double qu = q * (1.0 + 0x1p-40), nu = sqrt(qu) * (1.0 + 0x1p-40); /* rounded up */
    S->gq[i] = (float)q;
    S->gn2[i] = (float)qu * (1.0f + 0x1p-22f);
    S->gn[i] = (float)nu * (1.0f + 0x1p-22f);
    const kd_lidx b = i / KD_SCRG_COLS;
    S->gbmax[b] = nu > S->gbmax[b] ? nu : S->gbmax[b];
  }
  S->gemm = 1;
  *formed = 1;
cleanup:
  free(m);
  return err;
}

/* One row against npad columns (a multiple of 16) of a product row g: the argument, the
 * exponential, then per KD_SCR_BLOCK columns the float sums of y and of the bound's three terms,
 * flushed into acc[0..16) (y) and acc[16..64) (sum |w| kf, sum |w| kf B, sum |w| kf B^2). Simple
 * loops, so that each vectorises; the values past the columns carry w = 0. */
KD_KCLONES static void kd_scrg_row_(kd_lidx npad, const float *restrict g, float qa,
                                    const float *restrict q, const float *restrict bn,
                                    const float *restrict bn2, const float *restrict w,
                                    const float *restrict wa, float *restrict x, float *restrict kv,
                                    double *restrict acc) {
  for (kd_lidx j = 0; j < npad; j++) {
    const float xs = -fmaf(-2.0f, g[j], qa + q[j]);
    x[j] = xs > 0.0f ? 0.0f : (xs < KD_SCR_ARG_MIN ? KD_SCR_ARG_MIN : xs);
  }
  for (kd_lidx j = 0; j < npad; j++) kv[j] = kd_fexp_neg_(x[j]);
  for (kd_lidx j0 = 0; j0 < npad; j0 += KD_SCR_BLOCK) {
    const kd_lidx j1 = npad - j0 < KD_SCR_BLOCK ? npad : j0 + KD_SCR_BLOCK;
    float fy[16] = {0}, f0[16] = {0}, f1[16] = {0}, f2[16] = {0};
    for (kd_lidx j = j0; j < j1; j += 16)
      for (int l = 0; l < 16; l++) {
        const float v = kv[j + l], vw = v * wa[j + l];
        fy[l] = fmaf(v, w[j + l], fy[l]);
        f0[l] += vw;
        f1[l] = fmaf(vw, bn[j + l], f1[l]);
        f2[l] = fmaf(vw, bn2[j + l], f2[l]);
      }
    for (int l = 0; l < 16; l++) {
      acc[l] += (double)fy[l];
      acc[16 + l] += (double)f0[l];
      acc[32 + l] += (double)f1[l];
      acc[48 + l] += (double)f2[l];
    }
  }
}

/* E's largest value for a row of norm A against columns of norms up to B (see the header) */
static double kd_scrg_err_(double A, double B, double gam) {
  const double u1 = 0x1p-24 * (1.0 + 0x1p-20);
  return 8.01 * u1 * (A * A + B * B) + 2.0 * gam * A * B;
}

/* The finished rows r0 .. r0 + rb - 1 of a product: y and the bound from the lane sums, or an
 * infinite bound where E may exceed 1e-3 (ok[r] = 0). */
static void kd_scrg_finish_(const kd_kernel_screen *S, kd_lidx i0, kd_lidx rb, kd_lidx nb,
                            double wmax, const int *ok, double *y, double *bound) {
  const double u1 = 0x1p-24 * (1.0 + 0x1p-20), dd = (double)S->d;
  const double gam = dd * 0x1p-24 / (1.0 - dd * 0x1p-24);
  const double sums = (KD_SCR_YTERMS + 1.0) * u1 + 2.0 * ((double)nb / 8.0 + 4.0) * 0x1p-53;
  const double dbl = 1.0011 * (dd + 2.0) * 1.21e-16 * 2.01;
  for (kd_lidx r = 0; r < rb; r++) {
    const double *acc = S->gacc + r * 64, A = (double)S->gn[i0 + r];
    double s = 0.0, f0 = 0.0, f1 = 0.0, f2 = 0.0;
    for (int l = 0; l < 16; l++) {
      s += acc[l];
      f0 += acc[16 + l];
      f1 += acc[32 + l];
      f2 += acc[48 + l];
    }
    const double r0 =
        1.0001 * KD_SCR_EXP_ERR + 1.0008 * 8.01 * u1 * A * A + 1.0011 * 3e-16 + dbl * A * A + sums;
    const double r1 = 1.0008 * 2.0 * gam * A, r2 = 1.0008 * 8.01 * u1 + dbl;
    y[r] = s;
    bound[r] =
        ok[r] ? 1.01 * (r0 * f0 + r1 * f1 + r2 * f2) + (double)nb * KD_SCR_TINY * wmax : INFINITY;
  }
}

void kd_screen_gemm_rows_(const kd_kernel_screen *S, kd_lidx i0, kd_lidx na, kd_lidx nb,
                          double wmax, double *y, double *bound) {
  const int d = S->d;
  const double dd = (double)d, gam = dd * 0x1p-24 / (1.0 - dd * 0x1p-24);
  int ok[KD_SCRG_ROWS];
  for (kd_lidx r0 = 0; r0 < na; r0 += KD_SCRG_ROWS) {
    const kd_lidx rb = na - r0 < KD_SCRG_ROWS ? na - r0 : KD_SCRG_ROWS, ia = i0 + r0;
    for (kd_lidx t = 0; t < rb * 64; t++) S->gacc[t] = 0.0;
    for (kd_lidx r = 0; r < rb; r++) ok[r] = 1;
    for (kd_lidx j0 = 0; j0 < nb; j0 += KD_SCRG_COLS) {
      const kd_lidx cb = nb - j0 < KD_SCRG_COLS ? nb - j0 : KD_SCRG_COLS,
                    npad = (cb + 15) / 16 * 16;
      const double B = S->gbmax[j0 / KD_SCRG_COLS];
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rb, (int)cb, d, 1.0f,
                  S->Xg + (size_t)ia * (size_t)d, d, S->Xg + (size_t)j0 * (size_t)d, d, 0.0f, S->G,
                  KD_SCRG_COLS);
      for (kd_lidx r = 0; r < rb; r++) {
        /* the columns past nb (up to npad) have w = 0 and finite products (G is zeroed at
         * allocation and only ever holds finite products): they add nothing */
        kd_scrg_row_(npad, S->G + r * KD_SCRG_COLS, S->gq[ia + r], S->gq + j0, S->gn + j0,
                     S->gn2 + j0, S->wf + j0, S->wa + j0, S->gx, S->gkv, S->gacc + r * 64);
        ok[r] &= kd_scrg_err_((double)S->gn[ia + r], B, gam) <= 1e-3;
      }
    }
    kd_scrg_finish_(S, ia, rb, nb, wmax, ok, y + r0, bound + r0);
  }
}

kd_err kd_screen_gemm_pairs_(const kd_kernel_screen *S, kd_lidx i0, kd_lidx np, kd_lidx nb,
                             double wmax, double *y, double *bound) {
  kd_err err = KD_OK;
  double *yr = NULL, *br = NULL;
  KD_ALLOC(yr, 2 * np);
  KD_ALLOC(br, 2 * np);
  kd_screen_gemm_rows_(S, i0, 2 * np, nb, wmax, yr, br);
  for (kd_lidx p = 0; p < np; p++) { /* the rows' difference: both bounds and its rounding */
    y[p] = yr[2 * p] - yr[2 * p + 1];
    bound[p] = br[2 * p] + br[2 * p + 1] + 0x1p-52 * fabs(y[p]);
  }
cleanup:
  free(yr);
  free(br);
  return err;
}
