/* kernel_screen_impl.h - what the two screening mat-vecs share (kernel_screen.c: rows,
 * kernel_screen_pair.c: pairs' differences): the screening set, its single-precision exponential
 * and the row routine the pair routine falls back on. Private to src/kernel. */
#ifndef KDISTILL_KERNEL_SCREEN_IMPL_H
#define KDISTILL_KERNEL_SCREEN_IMPL_H

#include <string.h>

#include "kernel/kernel_impl.h"

/* Relative error bound of kd_fexp_neg_ on [-80, 0], in units u = 2^-24: the reduction's r is
 * x - k ln2hi exactly (k ln2hi has 16 bits, x - k ln2hi is a multiple of ulp(x) below 0.36) minus
 * k ln2lo rounded once (u |r| <= 0.35 u) with ln2lo's own error (116 x 1.3e-11 = 0.03 u); the
 * Taylor remainder of degree 7 on |r| <= 0.35 is 0.12 u; the Horner steps' roundings, each u of
 * its partial value, add u (1 + 0.6 + 0.1 + ...) <= 1.75 u relative to the result (>= 0.7);
 * 2^k is exact. In all 2.25 u; bounded by 3 u, measured 1.27 u (the unit test). */
#define KD_SCR_EXP_ERR (3.0 * 0x1p-24)
#define KD_SCR_ARG_MIN (-80.0f) /* exp(-80) = 1.8e-35: far above float's normal minimum */
#define KD_SCR_TINY 4e-35       /* the error of a value clamped at -80 (both sides below 2e-35) */
#define KD_SCR_BLOCK 64         /* columns per float partial sum of y (4 per lane) */
#define KD_SCR_YTERMS 4.0       /* KD_SCR_BLOCK / 16 */

/* The reduction of the single-precision exponentials (-80 <= x <= 0): k = round(x / ln2) through
 * the shifter (t = 1.5 2^23 + k, whose bits *tb hold k mod 2^9 at the bottom), and r = x - k ln2
 * by two-part Cody-Waite reduction (|r| <= 0.35). */
static inline float kd_fexp_reduce_(float x, uint32_t *tb) {
  const float shifter = 0x1.8p23f, log2e = 0x1.715476p0f;
  const float ln2hi = 0x1.63p-1f, ln2lo = -0x1.bd0106p-13f;
  const float t = fmaf(x, log2e, shifter);
  const float kf = t - shifter;
  const float r = fmaf(-kf, ln2hi, x);
  memcpy(tb, &t, sizeof *tb);
  return fmaf(-kf, ln2lo, r);
}

/* 2^k v for the k of kd_fexp_reduce_: k added to v's exponent field (v and the result normal;
 * k >= -116 keeps the result normal for v near 1) */
static inline float kd_fexp_scale_(float v, uint32_t tb) {
  uint32_t vb;
  memcpy(&vb, &v, sizeof vb);
  vb += tb << 23;
  memcpy(&v, &vb, sizeof v);
  return v;
}

/* The Horner steps shared by the exponentials: from q (the coefficient of r^5 or its chain so
 * far) to 1 + r/2 + r^2/6 + ... = expm1(r) / r truncated. */
static inline float kd_fexp_horner_(float q, float r) {
  q = fmaf(q, r, 1.0f / 720.0f);
  q = fmaf(q, r, 1.0f / 120.0f);
  q = fmaf(q, r, 1.0f / 24.0f);
  q = fmaf(q, r, 1.0f / 6.0f);
  q = fmaf(q, r, 0.5f);
  return fmaf(q, r, 1.0f);
}

/* exp(x) for -80 <= x <= 0 in single precision: kd_fexp_reduce_, exp(r) by Taylor-Horner of
 * degree 7, times 2^k. */
static inline float kd_fexp_neg_(float x) {
  uint32_t tb;
  const float r = kd_fexp_reduce_(x, &tb);
  const float q = kd_fexp_horner_(1.0f / 5040.0f, r);
  return kd_fexp_scale_(fmaf(q, r, 1.0f), tb);
}

struct kd_kernel_screen {
  int d;
  kd_lidx n, P, npan;
  double sigma;
  double rmax;     /* the largest panel radius */
  double *X;       /* the points (a copy): the rows, put in each panel's frame when used */
  double *cen;     /* npan x d: each panel's centre */
  double *A0, *A1; /* npan: each panel's kd_screen_coef_ */
  double *rho;     /* npan: each panel's radius (scaled) */
  float *Bp;       /* the points as panels (coordinate kk of panel p at d p P + kk npad) */
  float *wf, *wa;  /* scratch: w and |w| in float, n rounded up to 16 */
  float *x, *kv;   /* scratch of the portable panels (P each) */
  float *xd, *em;  /* scratch of the portable pair panel (P each) */
  float *af;       /* scratch: a row in a panel's frame (3 d: the pair panel's two and delta) */
  float *c0, *c1;  /* scratch: each panel's bound coefficients of one call (npan each) */
  kd_kernel_prefix_ *pf; /* X packed in double precision for kd_kernel_screen_exact (lazily) */
  /* the sgemm form (kernel_screen_gemm.c; gemm = 1): no panels, one frame for all rows */
  int gemm;
  float *Xg;       /* n x d: sigma (x - mean) in float, row-major */
  float *gn, *gn2; /* n rounded up to 16: |x~| and |x~|^2 rounded up, float (0 past n) */
  float *gq;       /* n rounded up to 16: |x~|^2 rounded to nearest (the argument's) */
  double *gbmax;   /* per block of KD_SCRG_COLS columns: the largest |x~| */
  float *G;        /* scratch: KD_SCRG_ROWS x KD_SCRG_COLS products */
  float *gx, *gkv; /* scratch: KD_SCRG_COLS arguments and values */
  double *gacc;    /* scratch: KD_SCRG_ROWS x 64 lane sums */
};

/* Panel pj of a mat-vec over nb columns: its first column j0, its columns rounded up to 16
 * (npad) and its stored width ld (P when full, else its own rounding up to 16). */
static inline void kd_screen_panel_at_(const kd_kernel_screen *S, kd_lidx nb, kd_lidx pj,
                                       kd_lidx *j0, kd_lidx *npad, kd_lidx *ld) {
  const kd_lidx P = S->P, c = pj * P, nc = nb - c < P ? nb - c : P;
  *j0 = c;
  *npad = (nc + 15) / 16 * 16;
  *ld = S->n - c < P ? (S->n - c + 15) / 16 * 16 : P;
}

/* w (NULL: 1) and |w| of the first nb columns in float (zero up to a multiple of 16), the row
 * coefficients c0, c1 of every panel for nb columns; returns max |w|. */
double kd_screen_setup_(const kd_kernel_screen *S, kd_lidx nb, const double *w);
/* Row i of X against its first nb columns (after kd_screen_setup_): y and its bound, as
 * kd_kernel_screen_matvec. */
void kd_screen_row_(const kd_kernel *k, const kd_kernel_screen *S, kd_lidx i, kd_lidx nb,
                    double wmax, double *y, double *bound);

/* The sgemm form (kernel_screen_gemm.c): wanted for this kernel (its setting, else d >=
 * KD_SCR_GEMM_MIND); set up on S (S->d, n, P, sigma allocated by the caller; returns 0 when X
 * has a non-finite coordinate: no form); the row and pair mat-vecs of that form. */
int kd_screen_gemm_wanted_(const kd_kernel *k);
kd_err kd_screen_gemm_prepare_(kd_kernel_screen *S, const double *X, int *formed);
void kd_screen_gemm_rows_(const kd_kernel_screen *S, kd_lidx i0, kd_lidx na, kd_lidx nb,
                          double wmax, double *y, double *bound);
kd_err kd_screen_gemm_pairs_(const kd_kernel_screen *S, kd_lidx i0, kd_lidx np, kd_lidx nb,
                             double wmax, double *y, double *bound);

#endif
