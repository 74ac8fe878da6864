/* fgt.c - the MMD of a rule (x_i, w_i) against a large empirical target (y_j, v_j) under the
 * Gaussian kernel, exact to an a priori bound, in O(N) work at low dimension (target.self: fgt).
 * With the signed measure q (v on the target rows, -w on the rule's atoms), MMD^2 = q^T K q. In
 * scaled coordinates u = x / (sqrt(2) ls) the kernel is exp(-|u - u'|^2). The box around all
 * rows is cut into cells of side s; with a = u - c_A and b = u' - c_B the offsets from the cell
 * centres and D = c_A - c_B, Taylor's series of exp(-|D + a - b|^2) in the offsets gives, with
 * multi-indices and the Hermite functions h_n(t) = (-1)^n d^n/dt^n exp(-t^2) = H_n(t) exp(-t^2),
 * h_g(t) = prod_k h_{g_k}(t_k):
 *   sum_{i in A, j in B} q_i q_j k(u_i, u_j)
 *     = sum_{alpha, beta} (-1)^|alpha| M_A[alpha] M_B[beta] h_{alpha + beta}(D),
 *   M_A[alpha] = sum_{i in A} q_i a_i^alpha / alpha!,
 * cut at |alpha + beta| < P. The moments cost O(N C(P - 1 + d, d)) and the cell pairs depend on
 * the cells, not on N: the double sum in linear time.
 * The bound on |MMD^2_computed - MMD^2| is the sum of
 *   truncation: with |b_k - a_k| <= s the remainder of a pair's series cut at order Po is at most
 *     Q_A Q_B sum_{|g| >= Po} s^g / g! |h_g(D)| (Q_A = sum_{i in A} |q_i|), computed from the
 *     Hermite values themselves up to order KD_FGT_NF and from Cramer's inequality
 *     |h_n(t)| <= K 2^(n/2) sqrt(n!) exp(-t^2 / 2), K = 1.086435, beyond (kd_fgt_offset_);
 *     each pair takes the lowest order whose remainder is at most tol / 2 Q_A Q_B;
 *   cutoff: pairs of cells whose closest points are dcut or more apart are left out, at most
 *     exp(-dcut^2) Qtot^2 = tol / 4 Qtot^2 in all;
 *   rounding (worst case, unit roundoff u): every moment within gamma_m = m u / (1 - m u)
 *     (m = block + 2 P + 8: naive sums over blocks of KD_FGT_BLOCK rows, compensated between
 *     blocks and ranks) of the magnitudes it sums, sum_A |q| |a^alpha| / alpha!
 *     <= Q_A (s/2)^|alpha| / alpha!; the Hermite recurrence and products within (2 P d + d) u;
 *     the pair sums compensated (4 u); all relative to the terms' magnitudes, which sum to at
 *     most Q_A Q_B sum_{|g| < Po} s^g / g! |h_g(D)|; and the scaled coordinates' own rounding
 *     (at most 4 u (W + s) per coordinate, W the box width), which moves each kernel value by
 *     at most 2 sqrt(2 / e) sqrt(d) times that.
 * The plan: the cell side s minimises a flop model over a fixed list of sides, with the order
 *   from Cramer's inequality alone (K^d T_d(P) <= tol / 2, T_d(P) = sum_{|g| >= P} prod_k
 *   rho^{g_k} / sqrt(g_k!), rho = sqrt(2) s, an upper bound of the actual orders); the moments
 *   are then kept to the highest order any pair within reach needs.
 * Bitwise rank independence: the moments are accumulated over the fixed 2048-row chunks of the
 * target (empirical.c's chunk-aligned sets), compensated, and combined in rank order as
 * empirical.c combines z; the rule's moments are added on every rank identically; the cell
 * pairs are split over ranks by first cell, and the per-cell values gathered and summed in cell
 * order. Plans, cells and bounds depend only on global quantities. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "core/clones.h"
#include "embed/target_impl.h"

enum {
  KD_FGT_BLOCK = 32,  /* rows per naive block sum of a cell's moments */
  KD_FGT_PMAX = 48,   /* highest total order */
  KD_FGT_TAIL = 64,   /* terms of the tail series past P */
  KD_FGT_NSIDES = 10, /* candidate cell sides */
  KD_FGT_CHUNK = 2048 /* empirical.c's chunk */
};
static const double KD_FGT_K = 1.086435;          /* Cramer's constant, rounded up */
static const double KD_FGT_MEM = 8388608.0;       /* most doubles per moment array (64 MiB) */
static const double KD_FGT_MAX_TERMS = 4194304.0; /* most (alpha, beta) terms of a cell pair */
static const double KD_FGT_U = 1.1102230246251565e-16;

/* A plan: total order P over d dimensions, nm moments (plus one slot for sum |q|), cells of side
 * s in scaled units over a grid of nc[k] cells from lo (original units), scale h = sqrt(2) ls. */
typedef struct {
  int d, P, nm, r;
  int top[KD_FGT_DMAX]; /* the largest |offset| per dimension: min(r, nc[k] - 1) */
  double s, h, dcut, tail, flops, tol;
  double lo[KD_FGT_DMAX], W[KD_FGT_DMAX];
  int64_t nc[KD_FGT_DMAX], ncell;
} kd_fgt_plan_;

static double kd_fgt_binom_(int n, int k) {
  double r = 1.0;
  for (int i = 1; i <= k; i++) r = r * (double)(n - k + i) / (double)i;
  return r;
}

enum { KD_FGT_NF = KD_FGT_PMAX + KD_FGT_TAIL }; /* terms of the series below */

/* g <- the product of the power series f and g, cut after KD_FGT_NF terms (h: scratch). */
static void kd_fgt_series_mul_(const double *f, double *g, double *h) {
  for (int m = 0; m < KD_FGT_NF; m++) {
    double c = 0.0;
    for (int j = 0; j <= m; j++) c += f[j] * g[m - j];
    h[m] = c;
  }
  memcpy(g, h, sizeof(double) * KD_FGT_NF);
}

/* T_d(P) for rho: the d-fold convolution g of 1 / sqrt(n!) weighted by
 * rho^m, the tail summed from m = P directly (no cancellation), times (1 + 1e-12) for the
 * rounding of the sums. */
static void kd_fgt_series_(int d, int P, double rho, double *tail) {
  double a[KD_FGT_NF], g[KD_FGT_NF], h[KD_FGT_NF];
  for (int n = 0; n < KD_FGT_NF; n++)
    a[n] = exp(n * log(rho > 0 ? rho : 1e-300) - 0.5 * lgamma(n + 1.0));
  memcpy(g, a, sizeof g);
  for (int k = 1; k < d; k++) kd_fgt_series_mul_(a, g, h);
  double t = 0.0;
  for (int m = KD_FGT_NF - 1; m >= P; m--) t += g[m];
  *tail = t * (1.0 + 1e-12);
}

/* The plan for N + n rows in d dimensions within the box [lo, hi], or flops = INFINITY when none
 * fits the memory caps. Local, from global quantities only. */
static void kd_fgt_plan_make_(int d, double ls, const double *lo, const double *hi, double rows,
                              double tol, kd_fgt_plan_ *pl) {
  static const double sides[KD_FGT_NSIDES] = {1.0,  0.75,  0.5,  0.35,   0.25,
                                              0.18, 0.125, 0.09, 0.0625, 0.045};
  memset(pl, 0, sizeof *pl);
  pl->flops = INFINITY;
  const double h = sqrt(2.0) * ls, Kd = pow(KD_FGT_K, d);
  const double dcut = sqrt(log(4.0 / tol));
  for (int c = 0; c < KD_FGT_NSIDES; c++) {
    kd_fgt_plan_ q;
    memset(&q, 0, sizeof q);
    q.d = d;
    q.s = sides[c];
    q.h = h;
    q.dcut = dcut;
    const double rho = sqrt(2.0) * q.s * (1.0 + 1e-9);
    int P = 1;
    for (; P <= KD_FGT_PMAX; P++) {
      kd_fgt_series_(d, P, rho, &q.tail);
      if (Kd * q.tail <= 0.5 * tol) break;
    }
    if (P > KD_FGT_PMAX) continue;
    q.P = P;
    q.tol = tol;
    const double nm = kd_fgt_binom_(P - 1 + d, d), terms = kd_fgt_binom_(P - 1 + 2 * d, 2 * d);
    double ncell = 1.0, nbr = 1.0;
    q.r = (int)ceil(dcut / q.s) + 1;
    for (int k = 0; k < d; k++) {
      q.lo[k] = lo[k];
      q.W[k] = (hi[k] - lo[k]) / h;
      const double nck = floor(q.W[k] / q.s) + 1.0;
      q.nc[k] = nck < 1e9 ? (int64_t)nck : (int64_t)1e9;
      q.top[k] = q.nc[k] - 1 < q.r ? (int)(q.nc[k] - 1) : q.r;
      ncell *= nck;
      nbr *= fmin(2.0 * q.r + 1.0, 2.0 * nck - 1.0);
    }
    if (ncell * (nm + 1.0) > KD_FGT_MEM || terms > KD_FGT_MAX_TERMS || nm > 65535.0) continue;
    q.ncell = (int64_t)ncell;
    q.nm = (int)nm;
    /* rows: a multiply-add per moment and a compensated flush per block; pairs: a compensated
     * term each (about 8 flops) for half the neighbours of every cell, divided by 16: the lower
     * orders of distant pairs and the cells outside the data make the pairs 20 - 100 times
     * cheaper than this count in the measurements of bench/results/fgt.md */
    q.flops = rows * (2.0 * nm + 8.0 * nm / KD_FGT_BLOCK) +
              fmin(ncell, rows) * 0.5 * nbr * terms * 8.0 / 16.0;
    if (q.flops < pl->flops) *pl = q;
  }
}

/* Multi-indices |alpha| < P in nested order (the last coordinate innermost), their degrees, the
 * prefixes over the first d - 1 coordinates, and for each alpha the (beta, alpha + beta) pairs
 * with |alpha + beta| < P. */
typedef struct {
  int nm, npre;
  unsigned char *alpha; /* nm * d */
  int *deg;             /* nm */
  int *pre_deg;         /* npre: degree of each prefix; the moments of prefix i are contiguous */
  unsigned char *pre;   /* npre * d */
  int64_t *off;         /* nm + 1 */
  int64_t *offd;        /* nm * (P + 1): where alpha's betas of degree dg start (dg <= P - deg) */
  int P;
  int *pb, *pg; /* beta and alpha + beta indices of the pairs */
} kd_fgt_idx_;

static void kd_fgt_idx_free_(kd_fgt_idx_ *ix) {
  free(ix->alpha);
  free(ix->deg);
  free(ix->pre_deg);
  free(ix->pre);
  free(ix->off);
  free(ix->offd);
  free(ix->pb);
  free(ix->pg);
  memset(ix, 0, sizeof *ix);
}

/* Enumerate the tuples of dimension dd with total < P in nested order into out (count only when
 * out is NULL). */
static int kd_fgt_enum_(int dd, int P, unsigned char *out, int *deg) {
  unsigned char cur[KD_FGT_DMAX] = {0};
  int n = 0;
  if (dd == 0) {
    if (deg) deg[0] = 0;
    return 1;
  }
  for (;;) {
    int t = 0;
    for (int k = 0; k < dd; k++) t += cur[k];
    if (t < P) {
      if (out) memcpy(out + (size_t)n * dd, cur, (size_t)dd);
      if (deg) deg[n] = t;
      n++;
    }
    int k = dd - 1; /* odometer, last coordinate fastest, reset when the total reaches P */
    for (; k >= 0; k--) {
      cur[k]++;
      int s = 0;
      for (int j = 0; j <= k; j++) s += cur[j];
      if (s < P) break;
      cur[k] = 0;
    }
    if (k < 0) return n;
  }
}

static int64_t kd_fgt_key_(const unsigned char *a, int d) {
  int64_t key = 0;
  for (int k = 0; k < d; k++) key = key * 64 + a[k];
  return key;
}

typedef struct {
  int64_t key;
  int idx;
} kd_fgt_kv_;

static int kd_fgt_kv_cmp_(const void *a, const void *b) {
  const int64_t x = ((const kd_fgt_kv_ *)a)->key, y = ((const kd_fgt_kv_ *)b)->key;
  return (x > y) - (x < y);
}

static kd_err kd_fgt_idx_make_(int d, int P, kd_fgt_idx_ *ix) {
  kd_err err = KD_OK;
  kd_fgt_kv_ *kv = NULL;
  memset(ix, 0, sizeof *ix);
  const int nm = kd_fgt_enum_(d, P, NULL, NULL), npre = kd_fgt_enum_(d - 1, P, NULL, NULL);
  ix->nm = nm;
  ix->npre = npre;
  KD_ALLOC(ix->alpha, (size_t)nm * d);
  KD_ALLOC(ix->deg, nm);
  KD_ALLOC(ix->pre_deg, npre);
  KD_ALLOC(ix->pre, (size_t)npre * (d > 1 ? d - 1 : 1));
  KD_ALLOC(ix->off, nm + 1);
  KD_ALLOC(kv, nm);
  kd_fgt_enum_(d, P, ix->alpha, ix->deg);
  kd_fgt_enum_(d - 1, P, ix->pre, ix->pre_deg);
  for (int i = 0; i < nm; i++) {
    kv[i].key = kd_fgt_key_(ix->alpha + (size_t)i * d, d);
    kv[i].idx = i;
  }
  qsort(kv, (size_t)nm, sizeof *kv, kd_fgt_kv_cmp_);
  int64_t np = 0;
  for (int i = 0; i < nm; i++) {
    ix->off[i] = np;
    for (int j = 0; j < nm; j++) np += ix->deg[i] + ix->deg[j] < P;
  }
  ix->off[nm] = np;
  KD_ALLOC(ix->pb, np);
  KD_ALLOC(ix->pg, np);
  KD_ALLOC(ix->offd, (size_t)nm * (P + 1));
  ix->P = P;
  np = 0; /* each alpha's betas by degree, so a pair of a lower order stops early */
  for (int i = 0; i < nm; i++)
    for (int dg = 0; dg <= P - ix->deg[i]; dg++) {
      ix->offd[(size_t)i * (P + 1) + dg] = np;
      if (dg == P - ix->deg[i]) break;
      for (int j = 0; j < nm; j++) {
        if (ix->deg[j] != dg) continue;
        unsigned char g[KD_FGT_DMAX];
        for (int k = 0; k < d; k++)
          g[k] = (unsigned char)(ix->alpha[i * d + k] + ix->alpha[j * d + k]);
        kd_fgt_kv_ key = {kd_fgt_key_(g, d), 0};
        const kd_fgt_kv_ *f = bsearch(&key, kv, (size_t)nm, sizeof *kv, kd_fgt_kv_cmp_);
        ix->pb[np] = j;
        ix->pg[np] = f ? f->idx : 0;
        np++;
      }
    }
cleanup:
  free(kv);
  return err;
}

/* Moment accumulation: naive block sums per cell (blk, cnt), flushed into the compensated sums
 * (S, C) after KD_FGT_BLOCK rows of the cell and at the end of every chunk of rows. */
typedef struct {
  const kd_fgt_plan_ *pl;
  const kd_fgt_idx_ *ix;
  double *S, *C, *blk;
  int *cnt;
  int64_t *touched;
  int64_t ntouched;
  double pw[KD_FGT_DMAX][KD_FGT_PMAX];
} kd_fgt_acc_;

static void kd_fgt_flush_(kd_fgt_acc_ *A, int64_t c) {
  const int L = A->ix->nm + 1;
  double *b = A->blk + c * L, *S = A->S + c * L, *C = A->C + c * L;
  for (int j = 0; j < L; j++) {
    kd_neu_add_(&S[j], &C[j], b[j]);
    b[j] = 0.0;
  }
  A->cnt[c] = 0;
}

static void kd_fgt_flush_all_(kd_fgt_acc_ *A) {
  for (int64_t t = 0; t < A->ntouched; t++)
    if (A->cnt[A->touched[t]] > 0) kd_fgt_flush_(A, A->touched[t]);
  A->ntouched = 0;
}

/* The cell of row x and its offsets a[d] from the cell's centre (scaled units). */
static int64_t kd_fgt_cell_(const kd_fgt_plan_ *pl, const double *x, double *a) {
  int64_t c = 0;
  for (int k = 0; k < pl->d; k++) {
    const double u = (x[k] - pl->lo[k]) / pl->h;
    double f = floor(u / pl->s);
    if (f < 0.0) f = 0.0;
    if (f > (double)(pl->nc[k] - 1)) f = (double)(pl->nc[k] - 1);
    a[k] = u - (f + 0.5) * pl->s;
    c = c * pl->nc[k] + (int64_t)f;
  }
  return c;
}

/* Add q x^alpha / alpha! (and |q| in the last slot) of the row x to its cell's block. pp is
 * scratch of npre doubles. */
static inline void kd_fgt_row_(kd_fgt_acc_ *A, const double *x, double q, double *pp) {
  const kd_fgt_plan_ *pl = A->pl;
  const kd_fgt_idx_ *ix = A->ix;
  const int d = pl->d, P = pl->P, L = ix->nm + 1;
  double a[KD_FGT_DMAX];
  const int64_t c = kd_fgt_cell_(pl, x, a);
  for (int k = 0; k < d; k++) {
    double *p = A->pw[k];
    p[0] = k == 0 ? q : 1.0;
    for (int n = 1; n < P; n++) p[n] = p[n - 1] * a[k] / (double)n;
  }
  for (int i = 0; i < ix->npre; i++) {
    double v = 1.0;
    for (int k = 0; k < d - 1; k++) v *= A->pw[k][ix->pre[i * (d - 1) + k]];
    pp[i] = v;
  }
  if (d == 1) pp[0] = 1.0;
  double *b = A->blk + c * L;
  const double *last = A->pw[d - 1];
  if (d == 1) last = A->pw[0];
  int64_t m = 0;
  for (int i = 0; i < ix->npre; i++) {
    const double v = pp[i];
    const int top = P - ix->pre_deg[i];
    for (int j = 0; j < top; j++) b[m + j] += v * last[j];
    m += top;
  }
  b[ix->nm] += fabs(q);
  if (A->cnt[c] == 0) A->touched[A->ntouched++] = c;
  if (++A->cnt[c] == KD_FGT_BLOCK) kd_fgt_flush_(A, c);
}

/* kd_fgt_row_ for the m rows Y[m*d] with weights sgn v[j], then every block flushed. */
KD_KCLONES static void kd_fgt_rows_(kd_fgt_acc_ *A, const double *Y, const double *v, kd_lidx m,
                                    double sgn, double *pp) {
  const int d = A->pl->d;
  for (kd_lidx j = 0; j < m; j++) kd_fgt_row_(A, Y + (size_t)j * d, sgn * v[j], pp);
  kd_fgt_flush_all_(A);
}

/* 1-D Hermite functions h_n(t), n < P */
static void kd_fgt_hermite_(double t, int P, double *hn) {
  hn[0] = exp(-t * t);
  if (P > 1) hn[1] = 2.0 * t * hn[0];
  for (int n = 1; n + 1 < P; n++) hn[n + 1] = 2.0 * t * hn[n] - 2.0 * (double)n * hn[n - 1];
}

/* The truncation of a pair of cells at offset del (D = -del s), with the Hermite functions' actual
 * values: f_k[n] = s^n |h_n(D_k)| / n! (n < NF, by the scaled recurrence
 * f_{n+1} = s (2 D_k f_n - 2 s f_{n-1}) / (n + 1)), Cramer's inequality beyond NF, and their
 * d-fold convolution g: the remainder of the pair's series cut at order Po is at most
 * Q_A Q_B sum_{m >= Po} g[m], and its terms' magnitudes sum to at most Q_A Q_B sum_{m < Po} g[m].
 * Po is the lowest order with remainder <= tol / 2 (at most P). */
typedef struct {
  int Po;
  double tail, mag;
} kd_fgt_off_;

static kd_fgt_off_ kd_fgt_offset_(int d, double s, const int *del, int P, double tol) {
  double g[KD_FGT_NF], f[KD_FGT_NF], h[KD_FGT_NF], full = 1.0;
  const double rho = sqrt(2.0) * s;
  for (int k = 0; k < d; k++) {
    const double t = fabs((double)del[k]) * s;
    f[0] = exp(-t * t);
    f[1] = s * 2.0 * t * f[0];
    for (int n = 1; n + 1 < KD_FGT_NF; n++)
      f[n + 1] = s * (2.0 * t * f[n] - 2.0 * s * f[n - 1]) / (double)(n + 1);
    double sum = 0.0, rest = 0.0;
    for (int n = 0; n < KD_FGT_NF; n++) sum += (f[n] = fabs(f[n]));
    for (int n = KD_FGT_NF; n < KD_FGT_NF + 200; n++)
      rest += exp(n * log(rho) - 0.5 * lgamma(n + 1.0));
    full *= sum + KD_FGT_K * exp(-0.5 * t * t) * rest;
    if (k == 0) {
      memcpy(g, f, sizeof g);
      continue;
    }
    kd_fgt_series_mul_(f, g, h);
  }
  /* the terms past NF: the full product minus the kept part, with a margin for its rounding */
  double kept = 0.0;
  for (int m = 0; m < KD_FGT_NF; m++) kept += g[m];
  const double beyond = fmax(0.0, full - kept) + 8.0 * d * KD_FGT_U * full;
  kd_fgt_off_ o = {P, 0.0, 0.0};
  double tail = beyond;
  for (int m = KD_FGT_NF - 1; m >= P; m--) tail += g[m];
  for (int po = P; po >= 1; po--) { /* lower the order while the remainder stays within tol / 2 */
    if (tail > 0.5 * tol) break;
    o.Po = po;
    o.tail = tail;
    tail += g[po - 1];
  }
  if (o.tail == 0.0 && tail > 0.5 * tol) { /* not even P meets tol / 2: keep P, bound as it is */
    o.tail = beyond;
    for (int m = P; m < KD_FGT_NF; m++) o.tail += g[m];
  }
  for (int m = 0; m < o.Po; m++) o.mag += g[m];
  o.tail *= 1.0 + 1e-9;
  o.mag *= 1.0 + 1e-9;
  return o;
}

/* The index of the offset |del| in the table of prod_k (top[k] + 1) offsets: at most the number
 * of cells, where (r + 1)^d offsets (a fine side in d = 5) could be 10^10 for a grid of one cell.
 */
static int64_t kd_fgt_off_index_(const kd_fgt_plan_ *pl, const int *del) {
  int64_t i = 0;
  for (int k = pl->d - 1; k >= 0; k--) i = i * (pl->top[k] + 1) + (del[k] < 0 ? -del[k] : del[k]);
  return i;
}

/* The table over every offset within reach of the grid and the cutoff; returns the highest order
 * any of them needs. */
static int kd_fgt_off_table_(const kd_fgt_plan_ *pl, kd_fgt_off_ *off) {
  const int d = pl->d;
  const int *top = pl->top;
  int del[KD_FGT_DMAX] = {0}, P = 1;
  for (;;) {
    double dm2 = 0.0;
    for (int k = 0; k < d; k++) {
      const double m = fmax(0.0, del[k] - 1.0) * pl->s;
      dm2 += m * m;
    }
    if (dm2 < pl->dcut * pl->dcut) {
      kd_fgt_off_ *o = off + kd_fgt_off_index_(pl, del);
      *o = kd_fgt_offset_(d, pl->s, del, pl->P, pl->tol);
      if (o->Po > P) P = o->Po;
    }
    int k = d - 1;
    for (; k >= 0; k--) {
      if (++del[k] <= top[k]) break;
      del[k] = 0;
    }
    if (k < 0) return P;
  }
}

/* TwoSum and TwoProduct accumulation: (s, c) += x y */
static inline void kd_fgt_dot_add_(double *s, double *c, double x, double y) {
  const double p = x * y, e = fma(x, y, -p);
  const double t = *s + p, z = t - *s;
  *c += ((*s - (t - z)) + (p - z)) + e;
  *s = t;
}

typedef struct {
  const kd_fgt_plan_ *pl;
  const kd_fgt_idx_ *ix;
  const double *M;       /* ncell * (nm + 1) global moments */
  double *G, *hk, *sgnA; /* nm; d * (2 r + 1) * P Hermite tables; nm */
  kd_fgt_off_ *off;      /* per offset |del| (kd_fgt_off_index_) */
} kd_fgt_pairs_;

/* The pair (A, B) of cells at integer offset del[d] (B - A), to total order Po <= P: the sum of
 * its terms (compensated, two interleaved accumulators added at the end). */
KD_KCLONES static double kd_fgt_pair_(kd_fgt_pairs_ *Z, int64_t cA, int64_t cB, const int *del,
                                      int Po) {
  const kd_fgt_plan_ *pl = Z->pl;
  const kd_fgt_idx_ *ix = Z->ix;
  const int d = pl->d, P = pl->P, L = ix->nm + 1, W = 2 * pl->r + 1;
  const double *MA = Z->M + cA * L, *MB = Z->M + cB * L;
  for (int g = 0; g < ix->nm; g++) {
    double v = 1.0;
    for (int k = 0; k < d; k++)
      v *= Z->hk[((size_t)k * W + (size_t)(pl->r + del[k])) * P + ix->alpha[g * d + k]];
    Z->G[g] = v;
  }
  double s0 = 0.0, c0 = 0.0, s1 = 0.0, c1 = 0.0;
  for (int i = 0; i < ix->nm; i++) {
    if (ix->deg[i] >= Po) continue;
    const double a = Z->sgnA[i] * MA[i];
    if (a == 0.0) continue;
    const int64_t t0 = ix->off[i], t1 = ix->offd[(size_t)i * (P + 1) + (Po - ix->deg[i])];
    int64_t t = t0;
    for (; t + 1 < t1; t += 2) {
      kd_fgt_dot_add_(&s0, &c0, a * MB[ix->pb[t]], Z->G[ix->pg[t]]);
      kd_fgt_dot_add_(&s1, &c1, a * MB[ix->pb[t + 1]], Z->G[ix->pg[t + 1]]);
    }
    if (t < t1) kd_fgt_dot_add_(&s0, &c0, a * MB[ix->pb[t]], Z->G[ix->pg[t]]);
  }
  kd_neu_add_(&s0, &c0, s1);
  return s0 + (c0 + c1);
}

/* Sum over the kept pairs (A <= B) of the occupied cells occ[0..no) whose first cell is in
 * [i0, i1): per first cell, the value (compensated, in offset order) and its bound. */
static void kd_fgt_pairs_run_(kd_fgt_pairs_ *Z, const int64_t *occ, int64_t i0, int64_t i1,
                              double *val, double *bnd, double *count) {
  const kd_fgt_plan_ *pl = Z->pl;
  const int d = pl->d, L = Z->ix->nm + 1, r = pl->r;
  const double rel = 2.0 * ((KD_FGT_BLOCK + 2.0 * pl->P + 8.0) * KD_FGT_U) /
                         (1.0 - (KD_FGT_BLOCK + 2.0 * pl->P + 8.0) * KD_FGT_U) +
                     (4.0 + 2.0 * pl->P * d + d) * KD_FGT_U;
  for (int64_t i = i0; i < i1; i++) {
    const int64_t cA = occ[i];
    int64_t ia[KD_FGT_DMAX], rem = cA;
    for (int k = d - 1; k >= 0; k--) {
      ia[k] = rem % pl->nc[k];
      rem /= pl->nc[k];
    }
    double s = 0.0, c = 0.0, b = 0.0;
    int del[KD_FGT_DMAX], dlo[KD_FGT_DMAX], dhi[KD_FGT_DMAX];
    for (int k = 0; k < d; k++) { /* offsets within reach and inside the grid */
      dlo[k] = ia[k] < r ? (int)-ia[k] : -r;
      dhi[k] = pl->nc[k] - 1 - ia[k] < r ? (int)(pl->nc[k] - 1 - ia[k]) : r;
      del[k] = dlo[k];
    }
    for (;;) {
      double dm2 = 0.0;
      int64_t cB = 0;
      for (int k = 0; k < d; k++) {
        cB = cB * pl->nc[k] + ia[k] + del[k];
        const double m = fmax(0.0, fabs((double)del[k]) - 1.0) * pl->s;
        dm2 += m * m;
      }
      if (cB >= cA && dm2 < pl->dcut * pl->dcut && Z->M[cB * L + L - 1] > 0.0) {
        const kd_fgt_off_ *o = Z->off + kd_fgt_off_index_(pl, del);
        if (count) { /* only count the work: the terms and the Hermite table of the pair */
          *count += kd_fgt_binom_(o->Po - 1 + 2 * d, 2 * d) + Z->ix->nm;
          goto next;
        }
        const double mult = cB == cA ? 1.0 : 2.0;
        const double v = kd_fgt_pair_(Z, cA, cB, del, o->Po);
        kd_neu_add_(&s, &c, mult * v);
        const double QQ = Z->M[cA * L + L - 1] * Z->M[cB * L + L - 1];
        b += mult * QQ * (o->tail + o->mag * rel);
      }
    next:;
      int k = d - 1;
      for (; k >= 0; k--) {
        if (++del[k] <= dhi[k]) break;
        del[k] = dlo[k];
      }
      if (k < 0) break;
    }
    if (count) continue;
    val[i - i0] = s + c;
    bnd[i - i0] = b;
  }
}

/* Rows of this rank's chunk-aligned target set and then (on every rank) the rule's atoms into
 * the global moments M[ncell * (nm + 1)] (sum, compensation per rank; ranks in rank order).
 * Collective. */
static kd_err kd_fgt_moments_(kd_target *t, const kd_fgt_plan_ *pl, const kd_fgt_idx_ *ix,
                              const double *X, const double *w, kd_lidx n, double *M) {
  kd_err err = KD_OK, lerr = KD_OK;
  MPI_Comm comm = t->comm;
  const int d = pl->d;
  const int64_t L = ix->nm + 1, len = pl->ncell * L;
  kd_fgt_acc_ A;
  double *pp = NULL;
  memset(&A, 0, sizeof A);
  A.pl = pl;
  A.ix = ix;
  A.S = calloc((size_t)len, sizeof(double));
  A.C = calloc((size_t)len, sizeof(double));
  A.blk = calloc((size_t)len, sizeof(double));
  A.cnt = calloc((size_t)pl->ncell, sizeof(int));
  A.touched =
      calloc((size_t)(pl->ncell > KD_FGT_CHUNK ? pl->ncell : KD_FGT_CHUNK), sizeof(int64_t));
  pp = calloc((size_t)ix->npre + 1, sizeof(double));
  if (!A.S || !A.C || !A.blk || !A.cnt || !A.touched || !pp)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                      "mmd (target.self: fgt): cannot allocate %lld cells of %d moments",
                      (long long)pl->ncell, ix->nm);
  KD_TRY(kd_dist_agreed(comm, lerr));
  for (kd_lidx j0 = 0; j0 < t->own_n; j0 += KD_FGT_CHUNK) {
    const double *Y, *v;
    const kd_lidx m = kd_target_emp_chunk_(t, j0, &Y, &v);
    kd_fgt_rows_(&A, Y, v, m, 1.0, pp);
  }
  /* the (sum, compensation) pairs of all ranks, in rank order, compensated again */
  KD_TRY(kd_target_sum_pairs_(comm, A.S, A.C, len, A.S));
  /* the rule's atoms with weights -w, the same on every rank */
  memset(A.C, 0, (size_t)len * sizeof(double));
  for (kd_lidx i0 = 0; i0 < n; i0 += KD_FGT_CHUNK) {
    const kd_lidx i1 = n - i0 < KD_FGT_CHUNK ? n : i0 + KD_FGT_CHUNK;
    kd_fgt_rows_(&A, X + (size_t)i0 * d, w + i0, i1 - i0, -1.0, pp);
  }
  for (int64_t i = 0; i < len; i++) M[i] = A.S[i] + A.C[i];
cleanup:
  free(A.S);
  free(A.C);
  free(A.blk);
  free(A.cnt);
  free(A.touched);
  free(pp);
  return err;
}

/* The box [lo, hi] around the target's rows and the rule's atoms (replicated on every rank).
 * Collective. */
static kd_err kd_fgt_box_(kd_target *t, const double *X, kd_lidx n, double *lo, double *hi) {
  kd_err err = KD_OK, lerr = KD_OK;
  const int d = kd_pointset_dim(t->pts);
  const kd_lidx nl = kd_pointset_n_local(t->pts);
  const double *Y = kd_pointset_rows_const(t->pts);
  double mm[2 * KD_FGT_DMAX]; /* -min, max */
  int bad = 0;
  for (int k = 0; k < 2 * d; k++) mm[k] = -INFINITY;
  for (int pass = 0; pass < 2; pass++) {
    const double *R = pass ? X : Y;
    const kd_lidx m = pass ? n : nl;
    for (kd_lidx i = 0; i < m; i++)
      for (int k = 0; k < d; k++) {
        const double x = R[(size_t)i * d + k];
        bad |= !isfinite(x);
        mm[k] = fmax(mm[k], -x);
        mm[d + k] = fmax(mm[d + k], x);
      }
  }
  if (bad)
    lerr = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__,
                      "mmd (target.self: fgt): a coordinate is not finite");
  KD_TRY(kd_dist_agreed(t->comm, lerr));
  KD_TRY(kd_dist_max(t->comm, mm, 2 * d));
  for (int k = 0; k < d; k++) {
    lo[k] = -mm[k];
    hi[k] = mm[d + k];
  }
cleanup:
  return err;
}

int kd_target_fgt_kernel_ok_(const kd_target *t) {
  return !t->closed && !t->stein && kd_kernel_has(t->k, KD_KCAP_FGT) &&
         kd_kernel_dim(t->k) <= KD_FGT_DMAX;
}

/* One evaluation's state: the plan, the multi-indices, the pair tables, the moments. */
typedef struct {
  kd_fgt_plan_ pl;
  kd_fgt_idx_ ix;
  kd_fgt_pairs_ Z;
  double *M;
  int64_t *occ, no;
  double Qtot;
} kd_fgt_run_;

static void kd_fgt_run_free_(kd_fgt_run_ *R) {
  kd_fgt_idx_free_(&R->ix);
  free(R->M);
  free(R->occ);
  free(R->Z.G);
  free(R->Z.hk);
  free(R->Z.sgnA);
  free(R->Z.off);
}

/* The plan, its offset table and multi-indices, and the tables of R; *go = 0 when (auto) no plan
 * is worth it. Collective. */
static kd_err kd_fgt_setup_(kd_target *t, const double *X, kd_lidx n, int force, kd_fgt_run_ *R,
                            int *go) {
  kd_err err = KD_OK, lerr = KD_OK;
  MPI_Comm comm = t->comm;
  const int d = kd_pointset_dim(t->pts);
  const double N = (double)kd_pointset_n_global(t->pts), ls = kd_kernel_length_scale(t->k);
  const double tol = t->fgt_tol > 0.0 ? t->fgt_tol : KD_FGT_TOL_DEFAULT;
  kd_fgt_plan_ *pl = &R->pl;
  double lo[KD_FGT_DMAX], hi[KD_FGT_DMAX];
  *go = 0;
  KD_TRY(kd_target_emp_own_(t));
  KD_TRY(kd_fgt_box_(t, X, n, lo, hi));
  kd_fgt_plan_make_(d, ls, lo, hi, N + (double)n, tol, pl);
  /* the flop model overstates the pairs 20 - 100 times: only hopeless plans stop here */
  const double budget = fmax(3.0 * KD_SELF_EXACT_EVALS, (N + (double)n) * 1024.0) * 64.0;
  if (!isfinite(pl->flops) || (!force && pl->flops > budget)) {
    double wide = 0.0;
    for (int k = 0; k < d; k++) wide = fmax(wide, (hi[k] - lo[k]) / ls);
    KD_CHECK(!force, KD_ERR_CONFIG,
             "target.self: fgt: no cell grid fits (gaussian(ls=%g) over a box %g length scales "
             "wide in d = %d needs more than %.0f moments); use target.self: exact or estimate",
             ls, wide, d, KD_FGT_MEM);
    return KD_OK;
  }
  int64_t noff = 1;
  for (int k = 0; k < d; k++) noff *= pl->top[k] + 1; /* <= the number of cells */
  R->Z.off = calloc((size_t)noff, sizeof *R->Z.off);
  if (!R->Z.off)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                      "mmd (target.self: fgt): cannot allocate %lld offsets", (long long)noff);
  KD_TRY(kd_dist_agreed(comm, lerr));
  pl->P = kd_fgt_off_table_(pl, R->Z.off); /* the order the actual Hermite values need */
  lerr = kd_fgt_idx_make_(d, pl->P, &R->ix);
  KD_TRY(kd_dist_agreed(comm, lerr));
  const int64_t L = R->ix.nm + 1, W = 2 * pl->r + 1;
  R->M = calloc((size_t)(pl->ncell * L), sizeof(double));
  R->occ = calloc((size_t)pl->ncell, sizeof(int64_t));
  R->Z.G = calloc((size_t)R->ix.nm, sizeof(double));
  R->Z.hk = calloc((size_t)(d * W * pl->P), sizeof(double));
  R->Z.sgnA = calloc((size_t)R->ix.nm, sizeof(double));
  if (!R->M || !R->occ || !R->Z.G || !R->Z.hk || !R->Z.sgnA)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                      "mmd (target.self: fgt): cannot allocate %lld cells", (long long)pl->ncell);
  KD_TRY(kd_dist_agreed(comm, lerr));
  for (int k = 0; k < d; k++)
    for (int del = -pl->r; del <= pl->r; del++)
      kd_fgt_hermite_(-del * pl->s, pl->P,
                      R->Z.hk + ((size_t)k * W + (size_t)(pl->r + del)) * pl->P);
  for (int i = 0; i < R->ix.nm; i++) R->Z.sgnA[i] = R->ix.deg[i] % 2 ? -1.0 : 1.0;
  R->Z.pl = pl;
  R->Z.ix = &R->ix;
  R->Z.M = R->M;
  *go = 1;
cleanup:
  return err;
}

/* The pairs of occupied cells: MMD^2 (s + c) and the bound's pair terms b; *go = 0 when (auto)
 * they would cost more than the pass over the rows and than the exact double sum auto allows
 * (KD_SELF_EXACT_EVALS; a kernel evaluation costs about what three terms do). Collective. */
static kd_err kd_fgt_pairs_sum_(MPI_Comm comm, kd_fgt_run_ *R, int force, double rows, double *mmd2,
                                double *b, int *go) {
  kd_err err = KD_OK, lerr = KD_OK;
  const int p = kd_dist_size(comm), rank = kd_dist_rank(comm);
  double *val = NULL, *bnd = NULL, *gv = NULL, *gb = NULL;
  const int64_t L = R->ix.nm + 1;
  *go = 0;
  for (int64_t c = 0; c < R->pl.ncell; c++)
    if (R->M[c * L + L - 1] > 0.0) {
      R->occ[R->no++] = c;
      R->Qtot += R->M[c * L + L - 1];
    }
  /* first cells split evenly over the ranks; per-cell values gathered in cell order */
  const int64_t n_occ = R->no, i0 = n_occ * rank / p, i1 = n_occ * (rank + 1) / p;
  val = calloc((size_t)(i1 - i0) + 1, sizeof(double));
  bnd = calloc((size_t)(i1 - i0) + 1, sizeof(double));
  gv = calloc((size_t)n_occ + 1, sizeof(double));
  gb = calloc((size_t)n_occ + 1, sizeof(double));
  if (!val || !bnd || !gv || !gb)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "mmd (target.self: fgt): cannot allocate");
  KD_TRY(kd_dist_agreed(comm, lerr));
  if (!force) {
    double work = 0.0;
    kd_fgt_pairs_run_(&R->Z, R->occ, i0, i1, NULL, NULL, &work);
    KD_TRY(kd_dist_sum(comm, &work, 1));
    if (work > fmax(3.0 * KD_SELF_EXACT_EVALS, rows * R->ix.nm)) {
      kd_log_info(
          "fast Gauss transform: %.3g pair terms would cost more than its budget; estimating "
          "instead (target.self: fgt forces it)",
          work);
      goto cleanup;
    }
  }
  kd_fgt_pairs_run_(&R->Z, R->occ, i0, i1, val, bnd, NULL);
  KD_TRY(kd_dist_allgatherv(comm, val, i1 - i0, gv));
  KD_TRY(kd_dist_allgatherv(comm, bnd, i1 - i0, gb));
  double s = 0.0, c = 0.0, bb = 0.0;
  for (int64_t i = 0; i < n_occ; i++) {
    kd_neu_add_(&s, &c, gv[i]);
    bb += gb[i];
  }
  *mmd2 = s + c;
  *b = bb;
  *go = 1;
cleanup:
  free(val);
  free(bnd);
  free(gv);
  free(gb);
  return err;
}

kd_err kd_target_emp_fgt_(kd_target *t, const double *X, const double *w, kd_lidx n, int force,
                          kd_mmd_info *info, int *applied) {
  kd_err err = KD_OK;
  const int d = kd_pointset_dim(t->pts);
  const double N = (double)kd_pointset_n_global(t->pts);
  kd_fgt_run_ R;
  int go = 0;
  double mmd2 = 0.0, b = 0.0;
  memset(&R, 0, sizeof R);
  *applied = 0;
  const double t0 = kd_dist_wtime();
  if (!kd_target_fgt_kernel_ok_(t)) {
    KD_CHECK(!force, KD_ERR_CONFIG,
             "target.self: fgt needs the gaussian kernel on at most %d coordinates (kernel %s, "
             "d = %d)",
             KD_FGT_DMAX, kd_kernel_describe(t->k), d);
    return KD_OK;
  }
  /* auto: d <= 2 only (at d = 3 the cut-off sphere holds too many cells: bench/results/fgt.md) */
  if (!force && d > 2) return KD_OK;
  KD_TRY(kd_fgt_setup_(t, X, n, force, &R, &go));
  if (!go) goto cleanup;
  KD_TRY(kd_fgt_moments_(t, &R.pl, &R.ix, X, w, n, R.M));
  KD_TRY(kd_fgt_pairs_sum_(t->comm, &R, force, N + (double)n, &mmd2, &b, &go));
  if (!go) goto cleanup;
  const kd_fgt_plan_ *pl = &R.pl;
  double wmax = 0.0;
  for (int k = 0; k < d; k++) wmax = fmax(wmax, pl->W[k]);
  b += exp(-pl->dcut * pl->dcut) * R.Qtot * R.Qtot; /* cutoff */
  b += R.Qtot * R.Qtot * 2.0 * sqrt(2.0 * exp(-1.0)) * sqrt((double)d) * 4.0 * KD_FGT_U *
       (wmax + pl->s); /* the scaled coordinates' rounding */
  b *= 1.0 + 1e-9;
  memset(info, 0, sizeof *info);
  info->method = KD_MMD_BOUNDED;
  info->mmd2 = mmd2;
  info->mmd2_bound = b;
  info->mmd = sqrt(mmd2 > 0.0 ? mmd2 : 0.0);
  info->mmd_bound =
      fmax(sqrt(fmax(mmd2 + b, 0.0)) - info->mmd, info->mmd - sqrt(fmax(mmd2 - b, 0.0)));
  info->mmd2_minus_self = NAN;
  info->fgt_order = pl->P;
  info->fgt_cells = R.no;
  *applied = 1;
  kd_log_info(
      "MMD by the fast Gauss transform: %.6e, MMD^2 = %.6e exact to +- %.2e (order %d, "
      "%lld cells of side %.3g ls, %.3f s)",
      info->mmd, mmd2, b, pl->P, (long long)R.no, pl->s * sqrt(2.0), kd_dist_wtime() - t0);
cleanup:
  kd_fgt_run_free_(&R);
  return err;
}
