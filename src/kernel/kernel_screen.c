/* kernel_screen.c - the screening mat-vec: y[i] = sum_j w_j k(A_i, B_j) in single precision, with
 * for every row a proven bound on its distance to what kd_kernel_matvec returns. A caller that
 * only compares y with a threshold decides from the cheap value whenever the bound settles the
 * comparison, and asks kd_kernel_matvec for the rows where it does not: its decisions are then
 * those of kd_kernel_matvec alone, bit for bit, while most kernel values cost single-precision
 * arithmetic (twice the lanes per instruction, a polynomial of degree 7 instead of 13).
 *
 * Gaussian kernel only. The columns are kept in panels of P, each centred on the middle c of its
 * own bounding box, scaled by sigma = sqrt(|c0|) (c0 = -1 / (2 ls^2)) and rounded to float; a row
 * is put in each panel's frame the same way, so that x = -|a~ - b~|^2 is the exponential's
 * argument directly. With rho = the panel's largest |sigma (b_k - c_k)|, D = sigma (a - b),
 * S = |D|^2 the exact argument's size and u = 2^-24: the rounded points differ from the exact
 * ones by at most u |sigma (a_k - c_k)| <= u (|D_k| + rho) and u rho, the difference by u of
 * itself, so |t~_k - D_k| <= u (2 |D_k| + 2 rho), and with the d roundings of the sum of squares
 *   |x + S| <= u (1 + 2^-20) (4 S + 4 rho sqrt(d S) + d S) + 8 u^2 d rho^2 (+ 8 u^2 S),
 * where 4 rho sqrt(d S) <= 2 rho (d S + 1). Per value, with kf = exp(x) (relative error below
 * KD_SCR_EXP_ERR) and kd kd_kernel_matvec's value:
 *   |kf - kd| <= kf (A0 + A1 |x|),  A0, A1 of kd_screen_coef_ (which adds the margins),
 * and a value clamped at x = -80 is off by at most KD_SCR_TINY. A panel of nearby points (the
 * halving's k-d order) has a small rho whatever the spread of the whole set. Screening is offered
 * only while the argument's error stays below 1e-3 at x = -80 in every panel. The sums over
 * columns add their own rounding: 4 float terms per lane before each flush to double here,
 * (nb/8 + 4) 2^-53 S0 in kd_kernel_matvec. */
#include <stdlib.h>

#include "kernel/kernel_screen_impl.h"

/* Array form for the unit test (x[j] in [-80, 0]). */
KD_KCLONES void kd_kernel_vfexp_neg_(kd_lidx n, const float *x, float *y) {
  for (kd_lidx j = 0; j < n; j++) y[j] = kd_fexp_neg_(x[j]);
}

/* One row against the first npad columns (a multiple of 16) of one packed float panel
 * (coordinate kk at Bp + kk ld), in the panel's frame: y into acc[0..16) and the row's bound
 * terms c0 sum |w| kf + c1 sum |w| kf |x| into acc[16..32), double lanes. y is summed in float
 * over KD_SCR_BLOCK columns (4 terms per lane) between flushes, the bound sums over the panel
 * (at most P/16 terms per lane). Portable version: one simple loop per step (a loop mixing double
 * and float, or with a conditional conversion, does not vectorise). */
KD_KCLONES static void kd_screen_panel_(int d, const float *restrict a, const float *restrict Bp,
                                        kd_lidx ld, kd_lidx npad, const float *restrict w,
                                        const float *restrict wa, float c0, float c1,
                                        float *restrict x, float *restrict kv,
                                        double *restrict acc) {
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
  for (int l = 0; l < 16; l++) acc[16 + l] += (double)fmaf(c1, f1[l], c0 * f0[l]);
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
    const float *restrict w, const float *restrict wa, float c0, float c1, double *restrict acc) {
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
  kd_screen_flush_(_mm512_fmadd_ps(_mm512_set1_ps(c1), f1, _mm512_mul_ps(_mm512_set1_ps(c0), f0)),
                   acc + 16);
}

/* the body with d = 2 a constant (the coordinate loop unrolled), else general */
__attribute__((target("avx512f"))) static void kd_screen_panel_avx512_(
    int d, const float *restrict a, const float *restrict Bp, kd_lidx ld, kd_lidx npad,
    const float *restrict w, const float *restrict wa, float c0, float c1, double *restrict acc) {
  if (d == 2)
    kd_screen_panel_avx512_body_(2, a, Bp, ld, npad, w, wa, c0, c1, acc);
  else
    kd_screen_panel_avx512_body_(d, a, Bp, ld, npad, w, wa, c0, c1, acc);
}
#endif

/* The per-value coefficients of the header's bound, |kf - kd| <= kf (A0 + A1 |x|), for a panel of
 * radius rho in dimension d; returns 0 when the argument's error could exceed 1e-3 (then
 * screening would rarely settle anything). D = a0 + a1 S bounds |x + S| (S <= |x| + 1e-3 folded
 * into a0); then |e^D - 1| <= 1.002 D, exp(-S) <= 1.0011 kf, and kd_kernel_matvec's value is
 * within 3e-16 + (d + 2) 1.2e-16 S of exp(-S) relatively (its exponential, its argument's
 * roundings). */
static int kd_screen_coef_(double rho, int d, double *A0, double *A1) {
  const double u = 0x1p-24 * (1.0 + 0x1p-20);
  const double a1 = u * (2.0 * rho * d + 4.0 + d) * 1.001;
  const double a0 = u * 2.0 * rho + 8.0 * u * u * d * rho * rho + 1e-3 * a1;
  if (!(a0 + 80.0 * a1 <= 1e-3)) return 0; /* NaN too */
  *A0 = 1.0011 * (1.0021 * a0 + KD_SCR_EXP_ERR + 3e-16);
  *A1 = 1.0011 * (1.0021 * a1 + (d + 2.0) * 1.2e-16);
  return 1;
}

int kd_kernel_screen_available(const kd_kernel *k) {
  return k && !k->screen_off && !k->ls_pending && k->p.type == KD_KERNEL_GAUSSIAN;
}

void kd_kernel_set_screening(kd_kernel *k, int on) {
  if (!k) return;
  k->screen_off = !on;
  k->screen_fgt = on == 2 ? 1 : (on == 3 ? 2 : 0);
}

int kd_kernel_screen_fgt(const kd_kernel *k) {
  if (!kd_kernel_screen_available(k)) return 0;
  return k->screen_fgt == 0 ? 1 : (k->screen_fgt == 1 ? 2 : 0);
}

void kd_kernel_screen_free(kd_kernel_screen **S) {
  if (!S || !*S) return;
  free((*S)->X);
  free((*S)->cen);
  free((*S)->A0);
  free((*S)->A1);
  free((*S)->rho);
  free((*S)->Bp);
  free((*S)->wf);
  free((*S)->wa);
  free((*S)->x);
  free((*S)->kv);
  free((*S)->xd);
  free((*S)->em);
  free((*S)->af);
  free((*S)->c0);
  free((*S)->c1);
  free((*S)->Xg);
  free((*S)->gn);
  free((*S)->gn2);
  free((*S)->gq);
  free((*S)->gbmax);
  free((*S)->G);
  free((*S)->gx);
  free((*S)->gkv);
  free((*S)->gacc);
  if ((*S)->pf) kd_kernel_prefix_free_((*S)->pf);
  free((*S)->pf);
  free(*S);
  *S = NULL;
}

/* centre c (the middle of the bounding box of rows X[0..n)) and the radius of the rows scaled by
 * sigma around it (with room for the roundings of c and of the scaling); NaN when a coordinate
 * is not finite */
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
  KD_CHECK(out != NULL && n >= 0 && (n == 0 || X), KD_ERR_ARG,
           "kernel: screening needs points and a handle");
  *out = NULL;
  if (!kd_kernel_screen_available(k) || n == 0) goto cleanup;
  const int d = k->d;
  KD_ALLOC(S, 1);
  S->d = d;
  S->n = n;
  S->P = kd_kernel_panel_(d);
  S->npan = (n + S->P - 1) / S->P;
  S->sigma = sqrt(fabs(k->c[0]));
  const kd_lidx P = S->P, nbp = kd_kernel_packed_size_(n, P);
  KD_ALLOC(S->X, (size_t)d * (size_t)n);
  KD_ALLOC(S->cen, (size_t)d * (size_t)S->npan);
  KD_ALLOC(S->A0, S->npan);
  KD_ALLOC(S->A1, S->npan);
  KD_ALLOC(S->rho, S->npan);
  KD_ALLOC(S->wf, nbp);
  KD_ALLOC(S->wa, nbp);
  KD_ALLOC(S->c0, S->npan);
  KD_ALLOC(S->c1, S->npan);
  memcpy(S->X, X, sizeof(double) * (size_t)d * (size_t)n);
  KD_ALLOC(S->pf, 1);
  KD_TRY(kd_kernel_prefix_pack_(k, S->X, n, S->pf));
  if (kd_screen_gemm_wanted_(k)) { /* the sgemm form (kernel_screen_gemm.c): no panels */
    int formed = 0;
    KD_TRY(kd_screen_gemm_prepare_(S, X, &formed));
    if (!formed) goto noform;
    *out = S;
    S = NULL;
    goto cleanup;
  }
  KD_ALLOC(S->Bp, (size_t)d * (size_t)nbp);
  KD_ALLOC(S->x, P);
  KD_ALLOC(S->kv, P);
  KD_ALLOC(S->xd, P);
  KD_ALLOC(S->em, P);
  KD_ALLOC(S->af, 3 * d);
  for (kd_lidx pj = 0; pj < S->npan; pj++) { /* panels: coordinate kk at kk npad, zero padding */
    const kd_lidx j0 = pj * P, nc = n - j0 < P ? n - j0 : P, npad = (nc + 15) / 16 * 16;
    double *c = S->cen + (size_t)d * (size_t)pj;
    const double rho = kd_screen_frame_(d, X + (size_t)d * (size_t)j0, nc, S->sigma, c);
    if (!kd_screen_coef_(rho, d, &S->A0[pj], &S->A1[pj])) goto noform;
    S->rho[pj] = rho;
    S->rmax = rho > S->rmax ? rho : S->rmax;
    float *pan = S->Bp + (size_t)d * (size_t)j0;
    for (int kk = 0; kk < d; kk++)
      for (kd_lidx j = 0; j < npad; j++)
        pan[(size_t)kk * (size_t)npad + j] =
            j < nc ? (float)(S->sigma * (X[(j0 + j) * d + kk] - c[kk])) : 0.0f;
  }
  *out = S;
  S = NULL;
noform: /* *out stays NULL: no screening form */
cleanup:
  kd_kernel_screen_free(&S);
  return err;
}

double kd_screen_setup_(const kd_kernel_screen *S, kd_lidx nb, const double *w) {
  const kd_lidx P = S->P, npan = (nb + P - 1) / P, nbr = (nb + 15) / 16 * 16;
  double wmax = 0.0;
  for (kd_lidx j = 0; j < nbr; j++) {
    const double wj = j < nb ? (w ? w[j] : 1.0) : 0.0; /* past nb: 0 */
    S->wf[j] = (float)wj;
    S->wa[j] = (float)fabs(wj);
    wmax = fabs(wj) > wmax ? fabs(wj) : wmax;
  }
  /* per value besides the panel's A0: y's float partial sums (KD_SCR_YTERMS terms per lane, then
   * exact into double), w rounded to float (u |w|), both double sums (nb/8 + 4) 2^-53 */
  const double sums =
      (KD_SCR_YTERMS + 1.0) * 0x1p-24 * (1.0 + 0x1p-20) + 2.0 * ((double)nb / 8.0 + 4.0) * 0x1p-53;
  for (kd_lidx pj = 0; pj < npan; pj++) { /* rounded up: never below the double coefficients */
    S->c0[pj] = (float)(S->A0[pj] + sums) * (1.0f + 0x1p-22f);
    S->c1[pj] = (float)S->A1[pj] * (1.0f + 0x1p-22f);
  }
  return wmax;
}

void kd_screen_row_(const kd_kernel *k, const kd_kernel_screen *S, kd_lidx i, kd_lidx nb,
                    double wmax, double *y, double *bound) {
  const int d = S->d;
  const kd_lidx npan = (nb + S->P - 1) / S->P;
  double acc[32] = {0};
  const double *a = S->X + i * d;
  for (kd_lidx pj = 0; pj < npan; pj++) {
    kd_lidx j0, npad, ld;
    kd_screen_panel_at_(S, nb, pj, &j0, &npad, &ld);
    const float *pan = S->Bp + (size_t)d * (size_t)j0;
    const double *c = S->cen + (size_t)d * (size_t)pj;
    float *af = S->af;
    for (int kk = 0; kk < d; kk++) af[kk] = (float)(S->sigma * (a[kk] - c[kk]));
#ifdef KD_SCR_X86
    if (k->isa == 2)
      kd_screen_panel_avx512_(d, af, pan, ld, npad, S->wf + j0, S->wa + j0, S->c0[pj], S->c1[pj],
                              acc);
    else
#endif
      kd_screen_panel_(d, af, pan, ld, npad, S->wf + j0, S->wa + j0, S->c0[pj], S->c1[pj], S->x,
                       S->kv, acc);
  }
  double sum = 0.0, e = 0.0;
  for (int l = 0; l < 16; l++) {
    sum += acc[l];
    e += acc[16 + l];
  }
  *y = sum;
  /* 1% for the roundings of the bound's own sums (float, at most P/16 terms per lane) */
  *bound = 1.01 * e + (double)nb * KD_SCR_TINY * wmax;
}

kd_err kd_kernel_screen_matvec(kd_kernel *k, const kd_kernel_screen *S, kd_lidx i0, kd_lidx na,
                               kd_lidx nb, const double *w, double *y, double *bound) {
  kd_err err = KD_OK;
  KD_CHECK(k && S && S->d == k->d, KD_ERR_ARG, "kernel: screening set of another kernel");
  KD_CHECK(
      i0 >= 0 && na >= 0 && i0 + na <= S->n && nb >= 0 && nb <= S->n && (na == 0 || (y && bound)),
      KD_ERR_ARG, "kernel: screening mat-vec rows [%lld, %lld) or columns %lld out of %lld",
      (long long)i0, (long long)(i0 + na), (long long)nb, (long long)S->n);
  const double wmax = kd_screen_setup_(S, nb, w);
  if (S->gemm)
    kd_screen_gemm_rows_(S, i0, na, nb, wmax, y, bound);
  else
    for (kd_lidx i = 0; i < na; i++) kd_screen_row_(k, S, i0 + i, nb, wmax, y + i, bound + i);
  k->evals += (uint64_t)na * (uint64_t)nb;
  k->evals_screened += (uint64_t)na * (uint64_t)nb;
cleanup:
  return err;
}

kd_err kd_kernel_screen_exact(kd_kernel *k, const kd_kernel_screen *S, kd_lidx i0, kd_lidx na,
                              kd_lidx nb, const double *w, double *y) {
  kd_err err = KD_OK;
  KD_CHECK(S && i0 >= 0 && na >= 0 && i0 + na <= S->n && nb >= 0 && nb <= S->n, KD_ERR_ARG,
           "kernel: exact rows [%lld, %lld) or columns %lld out of %lld", (long long)i0,
           (long long)(i0 + na), (long long)nb, (long long)(S ? S->n : 0));
  KD_TRY(kd_kernel_prefix_matvec_(k, S->pf, S->X + (size_t)i0 * (size_t)S->d, na, nb, w, y));
cleanup:
  return err;
}
