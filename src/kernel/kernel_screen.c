/* kernel_screen.c - the screening mat-vec: y[i] = sum_j w_j k(A_i, B_j) in single precision, with
 * for every row a proven bound on its distance to what kd_kernel_matvec returns. A caller that
 * only compares y with a threshold decides from the cheap value whenever the bound settles the
 * comparison, and asks kd_kernel_matvec for the rows where it does not: its decisions are then
 * those of kd_kernel_matvec alone, bit for bit, while most kernel values cost single-precision
 * arithmetic (twice the lanes per instruction, a polynomial of degree 7 instead of 13).
 *
 * Gaussian kernel only. The points are centred (c: the middle of the rows' bounding box), scaled
 * by sigma = sqrt(|c0|) (c0 = -1 / (2 ls^2)) and rounded to float, so that x = -|a~ - b~|^2 is the
 * exponential's argument directly. With rho = the largest |sigma (p_k - c_k)| over all points and
 * coordinates, S = |c0| |a - b|^2 the exact argument's size and u = 2^-24, the float argument
 * obeys (rounding of both points, the differences and d sums of squares)
 *   |x + S| <= u (1 + 2^-20) (4 rho sqrt(d S) + (2 + d) S) + 2^-45 d rho^2
 * and 4 rho sqrt(d S) <= 2 rho (d S + 1), so per value, with kf = exp(x) (relative error below
 * KD_SCR_EXP_ERR) and kd kd_kernel_matvec's value:
 *   |kf - kd| <= kf (A0 + A1 |x|),  A0, A1 of kd_screen_coef_ (which adds the margins),
 * and a value clamped at x = -80 is off by at most KD_SCR_TINY. Screening is offered only while
 * the argument's error stays below 1e-3 at x = -80 (rho not huge against ls). The sums over
 * columns add their own rounding: 8 float terms per lane before each flush to double here,
 * (nb/8 + 4) 2^-53 S0 in kd_kernel_matvec. */
#include <stdlib.h>

#include "kernel/kernel_impl.h"

/* Relative error bound of kd_fexp_neg_ on [-80, 0]: Taylor remainder of degree 7 on
 * |r| <= ln2/2 (5.2e-9), the reduction (~2^-25) and 7 Horner roundings (each <= 2^-24 of a term
 * below the result); the unit test measures it (below 2.5 2^-24). */
#define KD_SCR_EXP_ERR (8.0 * 0x1p-24)
#define KD_SCR_ARG_MIN (-80.0f) /* exp(-80) = 1.8e-35: far above float's normal minimum */
#define KD_SCR_TINY 4e-35       /* the error of a value clamped at -80 (both sides below 2e-35) */
#define KD_SCR_BLOCK 128        /* columns per float partial sum of y (8 per lane) */

/* exp(x) for -80 <= x <= 0 in single precision: k = round(x / ln2) through the shifter, r by
 * two-part Cody-Waite reduction, exp(r) by Taylor-Horner of degree 7, 2^k added to the exponent
 * field (k >= -116: the result stays normal). */
static inline float kd_fexp_neg_(float x) {
  const float shifter = 0x1.8p23f, log2e = 0x1.715476p0f;
  const float ln2hi = 0x1.63p-1f, ln2lo = -0x1.bd0106p-13f;
  const float t = fmaf(x, log2e, shifter);
  const float kf = t - shifter;
  float r = fmaf(-kf, ln2hi, x);
  r = fmaf(-kf, ln2lo, r);
  float q = 1.0f / 5040.0f;
  q = fmaf(q, r, 1.0f / 720.0f);
  q = fmaf(q, r, 1.0f / 120.0f);
  q = fmaf(q, r, 1.0f / 24.0f);
  q = fmaf(q, r, 1.0f / 6.0f);
  q = fmaf(q, r, 0.5f);
  q = fmaf(q, r, 1.0f);
  q = fmaf(q, r, 1.0f);
  uint32_t tb, qb;
  memcpy(&tb, &t, sizeof tb);
  memcpy(&qb, &q, sizeof qb);
  qb += tb << 23; /* the low bits of t hold k (mod 2^9): k added to q's exponent */
  memcpy(&q, &qb, sizeof q);
  return q;
}

/* Array form for the unit test (x[j] in [-80, 0]). */
KD_KCLONES void kd_kernel_vfexp_neg_(kd_lidx n, const float *x, float *y) {
  for (kd_lidx j = 0; j < n; j++) y[j] = kd_fexp_neg_(x[j]);
}

/* The row sums of one row against the first npad columns (a multiple of 16) of one packed float
 * panel (coordinate kk at Bp + kk ld) go to
 * acc[0..16) (y), acc[16..32) (sum |w| kf) and acc[32..48) (sum |w| kf |x|), double lanes; y is
 * summed in float over at most KD_SCR_BLOCK columns (8 terms per lane) between flushes, the two
 * bound sums over the panel. Portable version: one simple loop per step (a loop mixing double and
 * float, or with a conditional conversion, does not vectorise). */
KD_KCLONES static void kd_screen_panel_(int d, const float *restrict a, const float *restrict Bp,
                                        kd_lidx ld, kd_lidx npad, const float *restrict w,
                                        const float *restrict wa, float *restrict x,
                                        float *restrict kv, double *restrict acc) {
  for (kd_lidx j = 0; j < npad; j++) x[j] = 0.0f;
  for (int kk = 0; kk < d; kk++) {
    const float ak = a[kk];
    const float *b = Bp + (size_t)kk * (size_t)ld;
    for (kd_lidx j = 0; j < npad; j++) {
      const float t = ak - b[j];
      x[j] = fmaf(t, t, x[j]);
    }
  }
  for (kd_lidx j = 0; j < npad; j++) x[j] = x[j] > -KD_SCR_ARG_MIN ? KD_SCR_ARG_MIN : -x[j];
  for (kd_lidx j = 0; j < npad; j++) kv[j] = kd_fexp_neg_(x[j]);
  float f0[16] = {0}, f1[16] = {0};
  for (kd_lidx j0 = 0; j0 < npad; j0 += KD_SCR_BLOCK) {
    const kd_lidx j1 = npad - j0 < KD_SCR_BLOCK ? npad : j0 + KD_SCR_BLOCK;
    float fy[16] = {0};
    for (kd_lidx j = j0; j < j1; j += 16)
      for (int l = 0; l < 16; l++) {
        const float v = kv[j + l], vw = v * wa[j + l];
        fy[l] = fmaf(v, w[j + l], fy[l]);
        f0[l] += vw;
        f1[l] = fmaf(-vw, x[j + l], f1[l]);
      }
    for (int l = 0; l < 16; l++) acc[l] += (double)fy[l];
  }
  for (int l = 0; l < 16; l++) {
    acc[16 + l] += (double)f0[l];
    acc[32 + l] += (double)f1[l];
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#include <immintrin.h>
#define KD_SCR_X86 1
static inline __attribute__((target("avx512f"), always_inline)) void kd_screen_flush_(__m512 f,
                                                                                      double *acc) {
  const __m512d g = _mm512_castps_pd(f);
  const __m512d lo = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_castpd512_pd256(g)));
  const __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(g, 1)));
  _mm512_storeu_pd(acc, _mm512_add_pd(_mm512_loadu_pd(acc), lo));
  _mm512_storeu_pd(acc + 8, _mm512_add_pd(_mm512_loadu_pd(acc + 8), hi));
}

/* kd_screen_panel_ in one pass with AVX-512F: the same operations per value, nothing stored
 * between the steps, the same flushes (lane order aside: the bound covers any order). */
static inline __attribute__((target("avx512f"), always_inline)) void kd_screen_panel_avx512_body_(
    int d, const float *restrict a, const float *restrict Bp, kd_lidx ld, kd_lidx npad,
    const float *restrict w, const float *restrict wa, double *restrict acc) {
  const __m512 shifter = _mm512_set1_ps(0x1.8p23f), log2e = _mm512_set1_ps(0x1.715476p0f);
  const __m512 ln2hi = _mm512_set1_ps(0x1.63p-1f), ln2lo = _mm512_set1_ps(-0x1.bd0106p-13f);
  const __m512 xmin = _mm512_set1_ps(KD_SCR_ARG_MIN);
  __m512 f0 = _mm512_setzero_ps(), f1 = f0;
  for (kd_lidx j0 = 0; j0 < npad; j0 += KD_SCR_BLOCK) {
    const kd_lidx j1 = npad - j0 < KD_SCR_BLOCK ? npad : j0 + KD_SCR_BLOCK;
    __m512 fy = _mm512_setzero_ps();
    for (kd_lidx j = j0; j < j1; j += 16) {
      __m512 s = _mm512_setzero_ps();
      for (int kk = 0; kk < d; kk++) {
        const __m512 t =
            _mm512_sub_ps(_mm512_set1_ps(a[kk]), _mm512_loadu_ps(Bp + (size_t)kk * ld + j));
        s = _mm512_fmadd_ps(t, t, s);
      }
      /* x = -s, below -80: -80, NaN stays NaN (vmaxps returns its second operand on NaN) */
      const __m512 x = _mm512_max_ps(xmin, _mm512_sub_ps(_mm512_setzero_ps(), s));
      const __m512 t = _mm512_fmadd_ps(x, log2e, shifter);
      const __m512 kf = _mm512_sub_ps(t, shifter);
      __m512 r = _mm512_fnmadd_ps(kf, ln2hi, x);
      r = _mm512_fnmadd_ps(kf, ln2lo, r);
      __m512 q = _mm512_set1_ps(1.0f / 5040.0f);
      q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f / 720.0f));
      q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f / 120.0f));
      q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f / 24.0f));
      q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f / 6.0f));
      q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.5f));
      q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f));
      q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.0f));
      const __m512 kv = _mm512_castsi512_ps(
          _mm512_add_epi32(_mm512_castps_si512(q), _mm512_slli_epi32(_mm512_castps_si512(t), 23)));
      const __m512 vw = _mm512_mul_ps(kv, _mm512_loadu_ps(wa + j));
      fy = _mm512_fmadd_ps(kv, _mm512_loadu_ps(w + j), fy);
      f0 = _mm512_add_ps(f0, vw);
      f1 = _mm512_fnmadd_ps(vw, x, f1); /* += |w| kf |x| */
    }
    kd_screen_flush_(fy, acc);
  }
  kd_screen_flush_(f0, acc + 16);
  kd_screen_flush_(f1, acc + 32);
}

/* the body with d = 2 a constant (the coordinate loop unrolled), else general */
__attribute__((target("avx512f"))) static void kd_screen_panel_avx512_(
    int d, const float *restrict a, const float *restrict Bp, kd_lidx ld, kd_lidx npad,
    const float *restrict w, const float *restrict wa, double *restrict acc) {
  if (d == 2)
    kd_screen_panel_avx512_body_(2, a, Bp, ld, npad, w, wa, acc);
  else
    kd_screen_panel_avx512_body_(d, a, Bp, ld, npad, w, wa, acc);
}
#endif

/* The per-value coefficients of the header's bound, |kf - kd| <= kf (A0 + A1 |x|), for radius rho
 * in dimension d; returns 0 when the argument's error could exceed 1e-3 (then screening would
 * rarely settle anything). D = a0 + a1 S bounds |x + S| (S <= |x| + 1e-3 folded into a0); then
 * |e^D - 1| <= 1.002 D, exp(-S) <= 1.0011 kf, and kd_kernel_matvec's value is within
 * 3e-16 + (d + 2) 1.2e-16 S of exp(-S) relatively (its exponential, its argument's roundings). */
static int kd_screen_coef_(double rho, int d, double *A0, double *A1) {
  const double u = 0x1p-24 * (1.0 + 0x1p-20);
  const double a1 = u * (2.0 * rho * d + 2.0 + d) * 1.001;
  const double a0 = u * 2.0 * rho + 0x1p-45 * d * rho * rho + 1e-3 * a1;
  if (!(a0 + 80.0 * a1 <= 1e-3)) return 0; /* NaN too */
  *A0 = 1.0011 * (1.0021 * a0 + KD_SCR_EXP_ERR + 3e-16);
  *A1 = 1.0011 * (1.0021 * a1 + (d + 2.0) * 1.2e-16);
  return 1;
}

int kd_kernel_screen_available(const kd_kernel *k) {
  return k && !k->screen_off && !k->ls_pending && k->p.type == KD_KERNEL_GAUSSIAN;
}

void kd_kernel_set_screening(kd_kernel *k, int on) {
  if (k) k->screen_off = !on;
}

struct kd_kernel_screen {
  int d;
  kd_lidx n, P;
  double A0, A1;  /* kd_screen_coef_ */
  float *Bp;      /* the points as packed panels (coordinate kk of panel p at d p P + kk npad) */
  float *R;       /* the same points row-major (the rows of the mat-vec) */
  float *wf, *wa; /* scratch: w and |w| in float, n rounded up to 16 */
  float *x, *kv;  /* scratch of the portable panel (P each) */
};

void kd_kernel_screen_free(kd_kernel_screen **S) {
  if (!S || !*S) return;
  free((*S)->Bp);
  free((*S)->R);
  free((*S)->wf);
  free((*S)->wa);
  free((*S)->x);
  free((*S)->kv);
  free(*S);
  *S = NULL;
}

/* centre c (the middle of the bounding box), and the radius rho of the points scaled by sigma
 * (with room for the roundings of c and of the scaling); NaN when a coordinate is not finite */
static double kd_screen_frame_(int d, const double *X, kd_lidx n, double sigma, double *c) {
  double rho = 0.0;
  int finite = 1;
  for (int kk = 0; kk < d; kk++) {
    double lo = X[kk], hi = X[kk];
    for (kd_lidx i = 0; i < n; i++) {
      const double v = X[i * d + kk];
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
      finite &= isfinite(v);
    }
    c[kk] = 0.5 * lo + 0.5 * hi;
    const double r = sigma * (0.5 * hi - 0.5 * lo) * (1.0 + 1e-12) + 1e-300;
    rho = r > rho ? r : rho;
  }
  return finite ? rho : NAN;
}

kd_err kd_kernel_screen_prepare(kd_kernel *k, const double *X, kd_lidx n, kd_kernel_screen **out) {
  kd_err err = KD_OK;
  kd_kernel_screen *S = NULL;
  double *c = NULL;
  KD_CHECK(out != NULL && n >= 0 && (n == 0 || X), KD_ERR_ARG,
           "kernel: screening needs points and a handle");
  *out = NULL;
  if (!kd_kernel_screen_available(k) || n == 0) goto cleanup;
  const int d = k->d;
  const double sigma = sqrt(fabs(k->c[0]));
  double A0, A1;
  KD_ALLOC(c, d);
  if (!kd_screen_coef_(kd_screen_frame_(d, X, n, sigma, c), d, &A0, &A1)) goto cleanup;
  KD_ALLOC(S, 1);
  S->d = d;
  S->n = n;
  S->P = kd_kernel_panel_(d);
  S->A0 = A0;
  S->A1 = A1;
  const kd_lidx P = S->P, nbp = kd_kernel_packed_size_(n, P);
  KD_ALLOC(S->Bp, (size_t)d * (size_t)nbp);
  KD_ALLOC(S->R, (size_t)d * (size_t)n);
  KD_ALLOC(S->wf, nbp);
  KD_ALLOC(S->wa, nbp);
  KD_ALLOC(S->x, P);
  KD_ALLOC(S->kv, P);
  for (kd_lidx i = 0; i < n * d; i++) S->R[i] = (float)(sigma * (X[i] - c[i % d]));
  for (kd_lidx j0 = 0; j0 < n; j0 += P) { /* panels: coordinate kk at kk npad, zero padding */
    const kd_lidx nc = n - j0 < P ? n - j0 : P, npad = (nc + 15) / 16 * 16;
    float *pan = S->Bp + (size_t)d * (size_t)j0;
    for (int kk = 0; kk < d; kk++)
      for (kd_lidx j = 0; j < npad; j++)
        pan[(size_t)kk * (size_t)npad + j] = j < nc ? S->R[(j0 + j) * d + kk] : 0.0f;
  }
  *out = S;
  S = NULL;
cleanup:
  kd_kernel_screen_free(&S);
  free(c);
  return err;
}

kd_err kd_kernel_screen_matvec(kd_kernel *k, const kd_kernel_screen *S, kd_lidx i0, kd_lidx na,
                               kd_lidx nb, const double *w, double *y, double *bound) {
  kd_err err = KD_OK;
  KD_CHECK(k && S && S->d == k->d, KD_ERR_ARG, "kernel: screening set of another kernel");
  KD_CHECK(
      i0 >= 0 && na >= 0 && i0 + na <= S->n && nb >= 0 && nb <= S->n && (na == 0 || (y && bound)),
      KD_ERR_ARG, "kernel: screening mat-vec rows [%lld, %lld) or columns %lld out of %lld",
      (long long)i0, (long long)(i0 + na), (long long)nb, (long long)S->n);
  const int d = S->d;
  const kd_lidx P = S->P, npan = (nb + P - 1) / P, nbr = (nb + 15) / 16 * 16;
  double wmax = 0.0;
  for (kd_lidx j = 0; j < nbr; j++) {
    const double wj = j < nb ? (w ? w[j] : 1.0) : 0.0; /* past nb: 0 */
    S->wf[j] = (float)wj;
    S->wa[j] = (float)fabs(wj);
    wmax = fabs(wj) > wmax ? fabs(wj) : wmax;
  }
  /* y's float partial sums (8 terms per lane, then exact into double), w rounded to float
   * (2^-24 |w|), both double sums (nb/8 + 4) 2^-53 */
  const double sums = 9.0 * 0x1p-24 * (1.0 + 0x1p-20) + 2.0 * ((double)nb / 8.0 + 4.0) * 0x1p-53;
  for (kd_lidx i = 0; i < na; i++) {
    double acc[48] = {0};
    const float *af = S->R + (i0 + i) * d;
    for (kd_lidx pj = 0; pj < npan; pj++) {
      const kd_lidx j0 = pj * P, nc = nb - j0 < P ? nb - j0 : P, npad = (nc + 15) / 16 * 16;
      /* the panel's stored width: P when full, else its own rounding up to 16 */
      const kd_lidx ld = S->n - j0 < P ? (S->n - j0 + 15) / 16 * 16 : P;
      const float *pan = S->Bp + (size_t)d * (size_t)j0;
#ifdef KD_SCR_X86
      if (k->isa == 2)
        kd_screen_panel_avx512_(d, af, pan, ld, npad, S->wf + j0, S->wa + j0, acc);
      else
#endif
        kd_screen_panel_(d, af, pan, ld, npad, S->wf + j0, S->wa + j0, S->x, S->kv, acc);
    }
    double sum = 0.0, S0 = 0.0, S1 = 0.0;
    for (int l = 0; l < 16; l++) {
      sum += acc[l];
      S0 += acc[16 + l];
      S1 += acc[32 + l];
    }
    y[i] = sum;
    /* 1% for the rounding of S0 and S1 themselves (at most P/16 float terms per lane) */
    bound[i] = 1.01 * (S->A0 * S0 + S->A1 * S1 + sums * S0) + (double)nb * KD_SCR_TINY * wmax;
  }
  k->evals += (uint64_t)na * (uint64_t)nb;
cleanup:
  return err;
}
