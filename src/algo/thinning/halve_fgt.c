/* halve_fgt.c - the fast Gauss transform of the KH halving (halve.c): the sum over the points
 * already placed, y(x) = sum_j s_j k(x_j, x) with s_j = +-1, from truncated Hermite expansions
 * kept per cell of a grid, with for every row a proven bound on its distance to what
 * kd_kernel_matvec returns. halve.c decides a coin from it when the bound settles the coin and
 * from the exact rows otherwise (as it does with the single-precision screening), so the halving
 * keeps the rows it keeps without it, bit for bit.
 *
 * Gaussian kernel, d <= 3. In scaled coordinates u = sig (x - lo) (sig = 1 / (sqrt(2) ls), lo
 * the rows' low corner) the kernel is exp(-|u - u'|^2). The box is cut into cells of side s; a
 * point with offset a = u - c from its cell's centre c contributes, at a row with D = u - c,
 *   exp(-|D - a|^2) = sum_alpha a^alpha / alpha! h_alpha(D),
 * h_alpha(D) = prod_k h_{alpha_k}(D_k), h_n(t) = (-1)^n d^n/dt^n exp(-t^2) (h_0 = exp(-t^2),
 * h_1 = 2 t h_0, h_{n+1} = 2 t h_n - 2 n h_{n-1}). A cell keeps the moments
 * M[alpha] = sum_j s_j a_j^alpha / alpha! for |alpha| < P (added as the points are placed); a row
 * sums M[alpha] h_alpha(D) over the cells within R cells of its own in every coordinate.
 * The bound of a row is the sum of
 *   truncation: Cramer's inequality |h_n(t)| <= K 2^(n/2) sqrt(n!) exp(-t^2 / 2) (K = 1.086435)
 *     and |a_k| <= r (r = s/2 and the roundings) give per cell at most
 *     q_c K^d exp(-|D|^2 / 2) T_d(Pc, sqrt(2) r), T_d the tail |g| >= Pc of
 *     sum_g prod_k rho^(g_k) / sqrt(g_k!) (q_c: the cell's points; Pc <= P the lowest order at
 *     which this is at most tol, kd_hf_order_: far cells are summed to lower orders);
 *   cutoff: a cell more than R cells away in some coordinate is at least R s away:
 *     (all earlier points) exp(-(R s)^2);
 *   rounding (u = 2^-53): |M[alpha] h_alpha(D)| <= q_c r^|alpha| / alpha! m_alpha(D), m the
 *     majorant of |h| by the recurrence on absolute values, whose generating function gives
 *     sum_n r^n / n! m_n(t) = exp(2 r^2 - (|t| - r)^2) per coordinate (gm, kd_hf_hermite_);
 *     every moment (q_c naive additions of terms with at most 3 P d + d roundings), every
 *     Hermite value (an argument of at most (R + 1)^2 s^2 rounded, then at most 2.02 u per step
 *     of the recurrence, relative to the majorant) and the sums stay within
 *     (q_c + ms + 8 P d + 64 + (R + 1)^2 s^2 + (4 R + 2)^d) u of those magnitudes (ms the terms
 *     a cell sums, (4 R + 2)^d the cells of a row group's union);
 *   the points' own rounding: the coordinates within 2.01 u W (W the box's scaled width), the
 *     offsets from the centres within u (R + 1) s, the scale sig within 4 u of sqrt(-c0): a
 *     kernel value moves by at most 2 sqrt(2 / e) sqrt(d) (2.01 u W + u (R + 1) s) + 3 u;
 *   the reference's own rounding: kd_kernel_matvec's value is within
 *     (3e-16 + 2 (nb/8 + 4) 2^-53) S0 + (d + 2) 1.2e-16 S1 of the exact sum, S0 = sum_j k and
 *     S1 = sum_j k S (S the scaled squared distance), bounded per cell by
 *     k <= exp(-|D|^2 / 2 + |a|^2) and k S <= 0.74 sqrt(k), and by exp(-(R s)^2) (R s)^2 beyond
 *     the cutoff.
 * Everything here is local and deterministic: every rank of a team keeps the same moments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/thinning/thin_impl.h"
#include "core/clones.h"

enum {
  KD_HF_DMAX = 3,
  KD_HF_PMAX = 48,
  KD_HF_NF = KD_HF_PMAX + 64, /* terms of the series of T_d */
  KD_HF_NSIDES = 6,
  KD_HF_RB = 8,    /* rows per group of kd_kh_fgt_eval */
  KD_HF_L = 8,     /* lanes of d = 2's cell sums */
  KD_HF_WCAP = 128 /* cells per coordinate a group's union spans, at most (2 (2 R + 1)) */
};
static const double KD_HF_K = 1.086435; /* Cramer's constant, rounded up */
static const double KD_HF_U = 0x1p-53;  /* unit roundoff */
/* tol: K^d exp(-|D|^2 / 2) T_d(P, rho) and (rows) exp(-(R s)^2) at most this (a row's bound is
 * about tol times the points near it): at d = 1 the orders are cheap */
static const double KD_HF_TOL[KD_HF_DMAX + 1] = {0.0, 1e-13, 1e-9, 1e-9};
static const double KD_HF_MAXMOM = 4194304.0; /* most moments (doubles) of a grid: 32 MiB */
static const double KD_HF_EVAL_FLOPS = 6.0;   /* an exact evaluation costs about this many of
                                               * the expansion's multiply-adds (bench_halve) */

struct kd_kh_fgt {
  int d, P, nm, R;
  int Pp, ms; /* d = 2: rows of Pp (P rounded up to 4) per first index; moments per cell */
  double sig, s, r, tol, far, round0, roundc, pert, er2, er1;
  double tail[KD_HF_PMAX + 1]; /* K^d T_d(P, sqrt(2) r) by order, times 1.001 */
  double lo[KD_HF_DMAX];
  int64_t nc[KD_HF_DMAX], ncell;
  double *M;    /* ncell x ms moments: d = 2 row a0 at a0 Pp (zero past P - a0), else by
                 * total order's triangle in index order */
  kd_lidx *cnt; /* points per cell */
  double *h;    /* scratch: per row of a group and coordinate wmax x Pp Hermite values */
  double *e0;   /* scratch: per row of a group and coordinate wmax values h_0 */
  double cost;  /* multiply-adds of one row */
  double reach; /* cells within one row's reach (clipped to the grid), at most */
  int wmax;     /* cells per coordinate of a row group's union, at most */
};

/* tail[P] = T_d(P) for rho, P = 0..KD_HF_PMAX, times (1 + 1e-12) for the rounding of its sums:
 * the d-fold convolution of rho^n / sqrt(n!), each tail summed from its far end (no
 * cancellation). */
static void kd_hf_tails_(int d, double rho, double *tail) {
  double a[KD_HF_NF], g[KD_HF_NF], t[KD_HF_NF];
  for (int n = 0; n < KD_HF_NF; n++) a[n] = exp(n * log(rho) - 0.5 * lgamma(n + 1.0));
  memcpy(g, a, sizeof g);
  for (int k = 1; k < d; k++) {
    for (int m = 0; m < KD_HF_NF; m++) {
      double c = 0.0;
      for (int j = 0; j <= m; j++) c += a[j] * g[m - j];
      t[m] = c;
    }
    memcpy(g, t, sizeof g);
  }
  double sum = 0.0;
  for (int m = KD_HF_NF - 1; m >= 0; m--) {
    sum += g[m];
    if (m <= KD_HF_PMAX) tail[m] = sum * (1.0 + 1e-12);
  }
}

static double kd_hf_binom_(int n, int k) {
  double r = 1.0;
  for (int i = 1; i <= k; i++) r = r * (double)(n - k + i) / (double)i;
  return r;
}

/* The lowest order whose truncation bound at a cell of Cramer factor eh = exp(-|D|^2 / 2)
 * (computed) meets tol (at most P). */
static int kd_hf_order_(const kd_kh_fgt *f, double eh) {
  int lo = 1, hi = f->P; /* tail[hi] eh <= tol; find the least such order */
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (f->tail[mid] * eh <= f->tol)
      hi = mid;
    else
      lo = mid + 1;
  }
  return hi;
}

/* The grid's plan for side s and n rows: 0 when it does not fit. cost: the multiply-adds of
 * one row, its cells' orders as the bound chooses them (kd_hf_order_) for cells of nearby
 * centres (the grid's clipping left out). */
static int kd_hf_plan_(kd_kh_fgt *f, int d, double s, const double *W, double maxW, kd_lidx n) {
  const double u = KD_HF_U;
  f->d = d;
  f->s = s;
  /* the offsets' bound: half a side, the roundings of the points' own coordinates and of the
   * offsets (the cell index of a rounded coordinate is that of the rounded point) */
  f->r = 0.5 * s * (1.0 + 4.0 * u) + 2.01 * u * maxW + u * s;
  const double rho = sqrt(2.0) * f->r, Kd = pow(KD_HF_K, d);
  kd_hf_tails_(d, rho, f->tail);
  for (int P = 0; P <= KD_HF_PMAX; P++) f->tail[P] *= Kd * 1.001;
  f->tol = KD_HF_TOL[d];
  if (!(f->tail[KD_HF_PMAX] <= f->tol)) return 0;
  int P = 1;
  while (f->tail[P] > f->tol) P++;
  f->P = P;
  f->nm = (int)kd_hf_binom_(P - 1 + d, d);
  f->Pp = d == 2 ? (P + KD_HF_L - 1) / KD_HF_L * KD_HF_L : P;
  f->ms = d == 2 ? P * f->Pp : f->nm;
  f->R = (int)ceil(sqrt(log((double)n / f->tol)) / s);
  if (2 * (2 * f->R + 1) > KD_HF_WCAP) return 0;
  f->far = exp(-(f->R * s) * (f->R * s)) * 1.01;
  double ncell = 1.0, hcols = 0.0;
  for (int k = 0; k < d; k++) {
    const double nck = floor(W[k] / s) + 1.0;
    if (!(nck < 1e6)) return 0;
    f->nc[k] = (int64_t)nck;
    ncell *= nck;
    hcols += fmin(2.0 * f->R + 1.0, nck);
  }
  if (ncell * f->ms > KD_HF_MAXMOM) return 0;
  f->ncell = (int64_t)ncell;
  double terms = 0.0; /* cells at index offsets t in [-R, R]^d, clipped to the grid's extent */
  const int w = 2 * f->R + 1;
  for (int64_t c = 0; c < (int64_t)pow(w, d); c++) {
    double D2 = 0.0;
    int in = 1;
    for (int k = 0, cc = (int)c; k < d; k++, cc /= w) {
      const int t = cc % w - f->R;
      D2 += (double)t * t * s * s;
      in &= abs(t) < f->nc[k];
    }
    if (in) terms += kd_hf_binom_(kd_hf_order_(f, exp(-0.5 * D2)) - 1 + d, d);
  }
  f->cost = terms + hcols * P * 4.0;
  const double nr = (double)(f->R + 1) * (f->R + 1) * s * s;
  f->round0 = 1.02 * u;
  f->er2 = exp(d * f->r * f->r) * 1.001;
  f->er1 = exp(0.5 * d * f->r * f->r) * 1.001;
  f->roundc = f->ms + 8.0 * P * d + 64.0 + nr + pow(2 * w, d);
  f->pert = 2.0 * sqrt(2.0 / exp(1.0)) * sqrt((double)d) *
                (2.01 * u * maxW + u * (f->R + 1.0) * s) * 1.01 +
            3.0 * u;
  return 1;
}

void kd_kh_fgt_free(kd_kh_fgt **F) {
  if (!F || !*F) return;
  free((*F)->M);
  free((*F)->cnt);
  free((*F)->h);
  free((*F)->e0);
  free(*F);
  *F = NULL;
}

kd_err kd_kh_fgt_prepare(kd_kernel *k, const double *X, kd_lidx n, int d, kd_kh_fgt **out,
                         double *cross) {
  static const double sides[KD_HF_NSIDES] = {0.5, 0.7, 1.0, 1.4, 2.0, 2.8};
  kd_err err = KD_OK;
  kd_kh_fgt *f = NULL, best;
  memset(&best, 0, sizeof best);
  double W[KD_HF_DMAX], lo[KD_HF_DMAX], maxW = 0.0;
  *out = NULL;
  *cross = INFINITY;
  const kd_kernel_params *p = kd_kernel_get_params(k);
  if (d < 1 || d > KD_HF_DMAX || n < 2 || !kd_kernel_has(k, KD_KCAP_FGT) || !(p->ls > 0))
    goto cleanup;
  const double sig = 1.0 / (sqrt(2.0) * p->ls);
  for (int kk = 0; kk < d; kk++) {
    double a = X[kk], b = X[kk];
    for (kd_lidx i = 0; i < n; i++) {
      const double v = X[i * d + kk];
      a = v < a ? v : a;
      b = v > b ? v : b;
    }
    if (!isfinite(a) || !isfinite(b)) goto cleanup;
    lo[kk] = a;
    W[kk] = sig * (b - a) * (1.0 + 4.0 * KD_HF_U);
    maxW = W[kk] > maxW ? W[kk] : maxW;
  }
  best.cost = INFINITY;
  for (int c = 0; c < KD_HF_NSIDES; c++) {
    kd_kh_fgt q;
    memset(&q, 0, sizeof q);
    if (kd_hf_plan_(&q, d, sides[c], W, maxW, n) && q.cost < best.cost) best = q;
  }
  if (!isfinite(best.cost)) goto cleanup;
  KD_ALLOC(f, 1);
  *f = best;
  f->sig = sig;
  memcpy(f->lo, lo, sizeof(double) * (size_t)d);
  const int w = 2 * f->R + 1;
  f->reach = 1.0;
  f->wmax = 1;
  for (int kk = 0; kk < d; kk++) {
    const int64_t wk = f->nc[kk] < 2 * w ? f->nc[kk] : 2 * w;
    f->wmax = (int)wk > f->wmax ? (int)wk : f->wmax;
    f->reach *= (double)(f->nc[kk] < w ? f->nc[kk] : w);
  }
  KD_ALLOC(f->M, (size_t)f->ncell * (size_t)f->ms);
  KD_ALLOC(f->cnt, f->ncell);
  KD_ALLOC(f->h, (size_t)KD_HF_RB * d * f->wmax * f->Pp); /* zero past P */
  KD_ALLOC(f->e0, (size_t)KD_HF_RB * d * f->wmax * 2);
  *cross = f->cost / KD_HF_EVAL_FLOPS;
  *out = f;
  f = NULL;
cleanup:
  kd_kh_fgt_free(&f);
  return err;
}

/* The cell of scaled point u (each coordinate's index clamped to the grid) and its index. */
static int64_t kd_hf_cell_(const kd_kh_fgt *f, const double *x, double *u, int64_t *j) {
  int64_t c = 0;
  for (int k = 0; k < f->d; k++) {
    u[k] = f->sig * (x[k] - f->lo[k]);
    double q = floor(u[k] / f->s);
    q = q < 0 ? 0 : (q > (double)(f->nc[k] - 1) ? (double)(f->nc[k] - 1) : q);
    j[k] = (int64_t)q;
    c = c * f->nc[k] + j[k];
  }
  return c;
}

KD_KCLONES void kd_kh_fgt_add(kd_kh_fgt *f, const double *X, kd_lidx cnt, const double *sgn) {
  const int d = f->d, P = f->P;
  double u[KD_HF_DMAX], pw[KD_HF_DMAX][KD_HF_PMAX], inv[KD_HF_PMAX];
  int64_t j[KD_HF_DMAX];
  for (int m = 1; m < P; m++) inv[m] = 1.0 / (double)m;
  for (kd_lidx i = 0; i < cnt; i++) {
    const int64_t c = kd_hf_cell_(f, X + i * d, u, j);
    for (int k = 0; k < d; k++) {
      const double a = u[k] - ((double)j[k] + 0.5) * f->s;
      pw[k][0] = 1.0;
      for (int m = 1; m < P; m++) pw[k][m] = pw[k][m - 1] * (a * inv[m]);
    }
    double *M = f->M + (size_t)c * (size_t)f->ms;
    const double w = sgn[i];
    if (d == 1) {
      for (int a0 = 0; a0 < P; a0++) M[a0] += w * pw[0][a0];
    } else if (d == 2) {
      for (int a0 = 0; a0 < P; a0++) {
        const double v = w * pw[0][a0];
        double *m = M + a0 * f->Pp;
        for (int a1 = 0; a1 < P - a0; a1++) m[a1] += v * pw[1][a1];
      }
    } else {
      for (int a0 = 0, t = 0; a0 < P; a0++)
        for (int a1 = 0; a1 < P - a0; a1++) {
          const double v = w * pw[0][a0] * pw[1][a1];
          for (int a2 = 0; a2 < P - a0 - a1; a2++) M[t++] += v * pw[2][a2];
        }
    }
    f->cnt[c]++;
  }
}

typedef double kd_hf_v4_ __attribute__((vector_size(8 * KD_HF_L)));
#define KD_HF_LD4(v, p) memcpy(&(v), (p), sizeof(kd_hf_v4_))

/* sum_alpha M[alpha] prod_k hk[alpha_k] over |alpha| < Pc and, at d = 2, some of the terms of
 * orders Pc to P - 1 (the remainder's bound covers any subset of the terms of order Pc and
 * above); M laid out for order P (Pp: d = 2's row length). d = 2 sums the rows scaled by h0 into
 * z (independent lanes: vectorised) and then z against h1. */
static inline double kd_hf_cell_sum_(int d, int P, int Pp, int Pc, const double *M,
                                     const double *h0, const double *h1, const double *h2) {
  double s = 0.0;
  if (d == 1) {
    for (int a0 = 0; a0 < Pc; a0++) s += M[a0] * h0[a0];
  } else if (d == 2) {
    /* four lanes of a1 at a time: z = sum_a0 h0[a0] M[a0][a1..a1+3] over the rows the first lane
     * needs (two chains), then against h1 */
    kd_hf_v4_ s4 = {0.0};
    for (int a1 = 0; a1 < Pc; a1 += KD_HF_L) {
      kd_hf_v4_ z0 = {0.0}, z1 = z0;
      const int na0 = Pc - a1;
      int a0 = 0;
      kd_hf_v4_ m0, m1, hv;
      for (; a0 + 1 < na0; a0 += 2) {
        KD_HF_LD4(m0, M + a0 * Pp + a1);
        KD_HF_LD4(m1, M + (a0 + 1) * Pp + a1);
        z0 += h0[a0] * m0;
        z1 += h0[a0 + 1] * m1;
      }
      if (a0 < na0) {
        KD_HF_LD4(m0, M + a0 * Pp + a1);
        z0 += h0[a0] * m0;
      }
      KD_HF_LD4(hv, h1 + a1);
      s4 += (z0 + z1) * hv;
    }
    for (int l = 0; l < KD_HF_L; l++) s += s4[l];
  } else {
    for (int a0 = 0, t = 0; a0 < Pc; a0++) {
      double v0 = 0.0;
      for (int a1 = 0; a1 < P - a0; a1++) {
        if (a1 < Pc - a0) {
          double v = 0.0;
          for (int a2 = 0; a2 < Pc - a0 - a1; a2++) v += M[t + a2] * h2[a2];
          v0 += h1[a1] * v;
        }
        t += P - a0 - a1;
      }
      s += h0[a0] * v0;
    }
  }
  return s;
}

/* The Hermite values h_0..h_{P-1} at the offsets D of coordinate k's cells [lo, lo + n) from uk,
 * into h (cell t at t Pp; zero past P), their h_0 into e0 and exp(2 r^2 - (|D| - r)^2) into gm:
 * sum_n r^n / n! m_n(D) for the majorant m of the header. */
static inline void kd_hf_hermite_(const kd_kh_fgt *f, double uk, int64_t lo, int n, double *h,
                                  double *e0, double *gm) {
  const int P = f->P, Pp = f->Pp;
  const double r = f->r, r2 = 2.0 * f->r * f->r;
  double D[KD_HF_WCAP];
  for (int t = 0; t < n; t++) {
    D[t] = uk - ((double)(lo + t) + 0.5) * f->s;
    h[t * Pp] = e0[t] = exp(-D[t] * D[t]);
    const double v = fabs(D[t]) - r;
    gm[t] = exp(r2 - v * v) * (1.0 + 1e-12); /* the majorant's factor (header) */
  }
  if (P > 1)
    for (int t = 0; t < n; t++) h[t * Pp + 1] = 2.0 * D[t] * h[t * Pp];
  for (int m = 1; m + 1 < P; m++) /* the cells' recurrences side by side (independent) */
    for (int t = 0; t < n; t++)
      h[t * Pp + m + 1] = 2.0 * D[t] * h[t * Pp + m] - 2.0 * m * h[t * Pp + m - 1];
}

/* The rows of a group (consecutive rows whose cells' reaches together span at most twice the
 * cells of one row's): their cells' union [ulo, ulo + un) in every coordinate is visited once,
 * each cell's moments used for every row of the group while they are in cache. A cell of the
 * union outside a row's own reach only adds terms (and their bound). */
KD_KCLONES void kd_kh_fgt_eval(kd_kh_fgt *f, const double *A, kd_lidx rows, kd_lidx nb, double *y,
                               double *yb) {
  const int d = f->d, P = f->P, Pp = f->Pp, W = f->wmax;
  const double c0 = 3e-16 + 2.0 * ((double)nb / 8.0 + 4.0) * KD_HF_U, c1 = (d + 2.0) * 1.2e-16;
  const double Rs2 = (f->R * f->s) * (f->R * f->s);
  const double fixed =
      (double)nb * (f->far + f->pert) + (double)nb * f->far * (c0 + c1 * (Rs2 > 1.0 ? Rs2 : 1.0));
  double u[KD_HF_RB][KD_HF_DMAX], sum[KD_HF_RB], bnd[KD_HF_RB], s0[KD_HF_RB], s1[KD_HF_RB];
  int64_t j[KD_HF_RB][KD_HF_DMAX], ulo[KD_HF_DMAX], un[KD_HF_DMAX];
  for (kd_lidx i = 0; i < rows;) {
    int g = 0;
    for (; g < KD_HF_RB && i + g < rows; g++) { /* grow the group while its union stays small */
      (void)kd_hf_cell_(f, A + (i + g) * d, u[g], j[g]);
      int64_t lo2[KD_HF_DMAX], n2[KD_HF_DMAX];
      double cells = 1.0;
      int fits = 1;
      for (int k = 0; k < d; k++) {
        int64_t a = j[g][k] - f->R, b = j[g][k] + f->R;
        if (g > 0) {
          a = a < ulo[k] ? a : ulo[k];
          b = b > ulo[k] + un[k] - 1 ? b : ulo[k] + un[k] - 1;
        }
        a = a < 0 ? 0 : a;
        b = b > f->nc[k] - 1 ? f->nc[k] - 1 : b;
        lo2[k] = a;
        n2[k] = b - a + 1;
        fits &= n2[k] <= W;
        cells *= (double)n2[k];
      }
      if (g > 0 && (!fits || cells > 2.0 * f->reach)) break;
      for (int k = 0; k < d; k++) {
        ulo[k] = lo2[k];
        un[k] = n2[k];
      }
    }
    for (int r = 0; r < g; r++) {
      for (int k = 0; k < d; k++) {
        double *e0 = f->e0 + (size_t)(r * d + k) * 2 * W;
        kd_hf_hermite_(f, u[r][k], ulo[k], (int)un[k], f->h + ((size_t)(r * d + k) * W) * Pp, e0,
                       e0 + W);
      }
      sum[r] = bnd[r] = s0[r] = s1[r] = 0.0;
    }
    const int n1 = d > 1 ? (int)un[1] : 1, n2 = d > 2 ? (int)un[2] : 1;
    for (int t0 = 0; t0 < (int)un[0]; t0++)
      for (int t1 = 0; t1 < n1; t1++)
        for (int t2 = 0; t2 < n2; t2++) {
          int64_t c = ulo[0] + t0;
          if (d > 1) c = c * f->nc[1] + ulo[1] + t1;
          if (d > 2) c = c * f->nc[2] + ulo[2] + t2;
          const kd_lidx q = f->cnt[c];
          if (q == 0) continue;
          const double *M = f->M + (size_t)c * (size_t)f->ms;
          for (int r = 0; r < g; r++) {
            const double *hr = f->h + (size_t)r * d * W * Pp, *er = f->e0 + (size_t)r * d * 2 * W;
            double e = er[t0], gm = er[W + t0];
            if (d > 1) e *= er[2 * W + t1], gm *= er[3 * W + t1];
            if (d > 2) e *= er[4 * W + t2], gm *= er[5 * W + t2];
            const double eh = sqrt(e) * 1.001; /* 1.001: the roundings of e */
            const int Pc = kd_hf_order_(f, eh);
            sum[r] += kd_hf_cell_sum_(d, P, Pp, Pc, M, hr + (size_t)t0 * Pp,
                                      hr + ((size_t)W + t1) * Pp, hr + ((size_t)2 * W + t2) * Pp);
            bnd[r] += (double)q * (f->tail[Pc] * eh + f->round0 * gm * (f->roundc + (double)q));
            s0[r] += (double)q * eh;
            s1[r] += (double)q * sqrt(eh);
          }
        }
    for (int r = 0; r < g; r++) {
      y[i + r] = sum[r];
      /* the reference's rounding: sum k <= e^(d r^2) sum q eh, sum k S <= 0.74 sum sqrt(k) */
      const double ref = c0 * f->er2 * s0[r] + c1 * 0.74 * f->er1 * s1[r];
      yb[i + r] = 1.01 * (bnd[r] + ref + fixed);
    }
    i += g;
  }
}
