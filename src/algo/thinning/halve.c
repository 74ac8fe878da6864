/* halve.c - the halving rules of Low-Rank Thinning App. B: KH(delta) (Alg. B.1, simplified
 * swapping threshold, or with `adaptive` the get_swap_params thresholds of Alg. B.2 = the original
 * Kernel Halving of Dwivedi & Mackey 2024, Alg. 2), LKH(delta) (Alg. B.2, linear kernel with
 * get_swap_params) and GS-Halve-Cubic (Alg. B.7, kernelized Gram-Schmidt walk with rank-one inverse
 * downdates). Each keeps one point of every consecutive pair (x_{2i}, x_{2i+1}); the coin of pair i
 * is kd_rng_uniform(seed, stream, i).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/thinning/thin_impl.h"
#include "comm/dist_impl.h"

/* Alg. B.1. psi = sum_{S2} k(x,.) - sum_{S1} k(x,.) is kept as signs s_j (+1: S2, -1: S1) of the
 * points already processed, so alpha_i = <psi, f_i> = sum_j s_j (k(x_j,x) - k(x_j,x')).
 * Blocked: for a chunk of KD_KH_CHUNK pairs the contribution of all earlier points comes from one
 * fused mat-vec (the earlier points are packed once per chunk, not once per pair) and the
 * contribution of the chunk's own earlier pairs from the chunk's small Gram matrix. The pair's
 * coin only compares alpha with a threshold, so for the Gaussian kernel the mat-vec is screened
 * (kd_kernel_screen_matvec, about 2.3x faster): the same decisions, bit for bit. */
#define KD_KH_CHUNK 64
#define KD_KH_STRIP 32     /* rows per strip of the chunk's Gram block (even) */
#define KD_KH_FGT_MIN 8192 /* fewer rows: no fast Gauss transform (it does not pay) */

/* alpha_i of pair t of a chunk from its rows' mat-vec values yr, yr1: the chunk's earlier pairs
 * (signs sg, Gram rows g0, g1) added in order. One function for the screened and the exact
 * values, so that the exact one has the bits it always had. */
static double kd_kh_alpha_(double yr, double yr1, const double *sg, const double *g0,
                           const double *g1, kd_lidx r) {
  double alpha = yr - yr1;
  for (kd_lidx u = 0; u < r; u++) alpha += sg[u] * (g0[u] - g1[u]);
  return alpha;
}

/* The swap probability of Alg. B.1 for alpha and threshold a: non-increasing in alpha (each
 * floating-point step is monotone), which the screening below relies on. */
static double kd_kh_prob_(double alpha, double a) {
  double prob = 0.0;
  if (a > 0) {
    prob = 0.5 * (1.0 - alpha / a);
    prob = prob < 0 ? 0 : (prob > 1 ? 1 : prob);
  }
  return prob;
}

/* Screening (kd_kernel_screen_matvec): ys, ybnd hold the single-precision values of rows r, r+1
 * and their bounds. Returns 1 (swap) or 0 when the coin u settles the decision for every alpha
 * within the bound of the screened one, -1 when only the exact mat-vec can. The margin: both
 * rows' bounds, plus the chain's roundings (r + 2 additions in both chains, each within 2^-53 of
 * a partial sum bounded by m; the Gaussian kernel, the only one screened, is at most 1, so each
 * in-chunk term is at most 2). */
static int kd_kh_screened_(double u, double a, const double *ys, const double *ybnd,
                           const double *sg, const double *g0, const double *g1, kd_lidx r) {
  const double alpha = kd_kh_alpha_(ys[0], ys[1], sg, g0, g1, r);
  const double m = fabs(ys[0]) + fabs(ys[1]) + ybnd[0] + ybnd[1] + 2.0 * (double)r;
  const double e =
      1.001 * ((ybnd[0] + ybnd[1]) + 0x1p-52 * (double)(r + 2) * 1.01 * m) + 0x1p-50 * fabs(alpha);
  if (u < kd_kh_prob_(alpha + e, a)) return 1; /* swaps even at the largest alpha */
  if (u >= kd_kh_prob_(alpha - e, a)) return 0;
  return -1; /* also when a bound is NaN */
}
void kd_thin_row_share(kd_lidx w, int rank, int size, kd_lidx *lo, kd_lidx *hi) {
  const kd_lidx u = (w + 3) / 4, a = 4 * (u * rank / size), b = 4 * (u * (rank + 1) / size);
  *lo = a < w ? a : w;
  *hi = b < w ? b : w;
}

/* A team's scratch for kd_kh_team_gather_: tx, rx of 1 + 2w and size + 2w doubles (w rows, up to
 * 2 cm), cnt and dsp of size counts and offsets (every rank's, known from the shares: one
 * collective, not two). Allocated with the halving's other buffers, so the failure is agreed. */
typedef struct {
  double *tx, *rx;
  int *cnt, *dsp;
} kd_kh_tbuf_;

/* 0 when every buffer is there (none are for one rank) */
static int kd_kh_tbuf_alloc_(kd_kh_tbuf_ *b, const kd_thin_team *t, int multi, kd_lidx cm) {
  if (!multi) return 0;
  b->tx = calloc((size_t)(4 * cm + 1), sizeof(double));
  b->rx = calloc((size_t)(4 * cm + t->size), sizeof(double));
  b->cnt = calloc((size_t)t->size, sizeof(int));
  b->dsp = calloc((size_t)t->size, sizeof(int));
  return !b->tx || !b->rx || !b->cnt || !b->dsp;
}

static void kd_kh_tbuf_free_(kd_kh_tbuf_ *b) {
  free(b->tx);
  free(b->rx);
  free(b->cnt);
  free(b->dsp);
}

/* The team's rows of a chunk to every rank: each rank sends [its error code, y, yb (screened)] for
 * its rows (kd_kh_rows_) through the scratch b. Any rank's error is agreed and returned on every
 * rank. Collective. */
static kd_err kd_kh_team_gather_(const kd_thin_team *t, kd_err lerr, int screened, kd_lidx w,
                                 double *y, double *yb, const kd_kh_tbuf_ *b) {
  double *tx = b->tx, *rx = b->rx;
  kd_err err = KD_OK;
  const kd_lidx per = screened ? 2 : 1;
  kd_lidx lo, hi, off = 0;
  int bad = 0;
  for (int r = 0; r < t->size; r++) { /* at most 1 + 2w values each, 2w + size in all */
    kd_thin_row_share(w, r, t->size, &lo, &hi);
    b->cnt[r] = (int)(1 + per * (hi - lo));
    b->dsp[r] = (int)off;
    off += b->cnt[r];
  }
  kd_thin_row_share(w, t->rank, t->size, &lo, &hi);
  tx[0] = (double)lerr;
  memcpy(tx + 1, y + lo, sizeof(double) * (size_t)(hi - lo));
  if (screened) memcpy(tx + 1 + (hi - lo), yb + lo, sizeof(double) * (size_t)(hi - lo));
  KD_TRY(kd_dist_allgatherv_known(t->comm, tx, b->cnt, b->dsp, rx));
  for (int r = 0; r < t->size; r++) {
    const double *v = rx + b->dsp[r];
    kd_thin_row_share(w, r, t->size, &lo, &hi);
    bad |= v[0] != 0.0;
    memcpy(y + lo, v + 1, sizeof(double) * (size_t)(hi - lo));
    if (screened) memcpy(yb + lo, v + 1 + (hi - lo), sizeof(double) * (size_t)(hi - lo));
  }
  if (bad) KD_TRY(kd_dist_agreed(t->comm, lerr)); /* every rank saw the code: all agree here */
cleanup:
  return err;
}

/* y (and its bounds yb when screened) of a chunk's w rows X + 2 i0 d against the 2 i0 earlier
 * points with signs sgn: exact (mode 0), screened by rows (1), by pairs (2: y[2t] the pair's
 * difference and yb[2t] its bound, y[2t + 1] = yb[2t + 1] = 0) or by the fast Gauss transform
 * (3, fgt), on one rank (team NULL; lerr unused) or shared over a team (kd_kh_team_gather_; lerr
 * carried). */
static kd_err kd_kh_earlier_(kd_kernel *k, const kd_kernel_screen *scr, kd_kh_fgt *fgt, int mode,
                             const kd_thin_team *team, const double *X, kd_lidx i0, kd_lidx w,
                             int d, const double *sgn, kd_err lerr, double *y, double *yb,
                             const kd_kh_tbuf_ *b) {
  kd_lidx lo = 0, hi = w;
  if (team) kd_thin_row_share(w, team->rank, team->size, &lo, &hi);
  if (lerr == KD_OK && hi > lo) {
    if (mode == 3) {
      kd_kh_fgt_eval(fgt, X + (2 * i0 + lo) * d, hi - lo, 2 * i0, y + lo, yb + lo);
    } else if (mode == 2) {
      const kd_lidx q = (hi - lo) / 2; /* lo, hi even: whole groups of four rows */
      lerr = kd_kernel_screen_pairs(k, scr, 2 * i0 + lo, q, 2 * i0, sgn, y + lo, yb + lo);
      for (kd_lidx t = q - 1; t >= 0 && lerr == KD_OK; t--) { /* pair t's values to row 2t */
        y[lo + 2 * t] = y[lo + t];
        yb[lo + 2 * t] = yb[lo + t];
        y[lo + 2 * t + 1] = yb[lo + 2 * t + 1] = 0.0;
      }
    } else if (mode == 1) {
      lerr = kd_kernel_screen_matvec(k, scr, 2 * i0 + lo, hi - lo, 2 * i0, sgn, y + lo, yb + lo);
    } else {
      lerr = kd_kernel_matvec(k, X + (2 * i0 + lo) * d, hi - lo, X, 2 * i0, sgn, 0.0, y + lo);
    }
  }
  return team ? kd_kh_team_gather_(team, lerr, mode != 0, w, y, yb, b) : lerr;
}

/* The screening form of the next chunk (see kd_halve_kh_): the rows while their bounds leave at
 * most 1 coin in 32 nteam open, then the pairs' differences (counts restarted) while those leave
 * at most 1 in 8 nteam, then none (*scr freed). The sgemm form (d >= 16) has no tighter pairs'
 * form, and its values cost a third of the exact ones at d >= 64 (bench/results/kernel.md): it
 * keeps its rows while at most 1 coin in 4 nteam is open (the tight threshold at d = 784 left
 * more than 1 in 8 open and fell back on the exact rows, 1.4x the time). */
static void kd_kh_screen_form_(kd_kernel_screen **scr, int *pairs, kd_lidx *nscreened,
                               kd_lidx *nexact, kd_lidx nteam) {
  if (!*scr || *nscreened < 4 * KD_KH_CHUNK) return;
  if (kd_kernel_screen_is_gemm(*scr)) {
    if (4 * nteam * *nexact > *nscreened) kd_kernel_screen_free(scr);
    return;
  }
  if ((*pairs ? 8 : 32) * nteam * *nexact <= *nscreened) return;
  if (*pairs) {
    kd_kernel_screen_free(scr);
  } else {
    *pairs = 1;
    *nscreened = *nexact = 0;
  }
}

/* The swap threshold a_i of pair i from b2 = |k(x,.) - k(x',.)|^2: b_i b_max,i logterm (Alg. B.1),
 * or with `adaptive` get_swap_params(sigma_{i-1}, b_i, delta_i) of Alg. B.2 on
 * f_i = k(x,.) - k(x',.): a_i = max(b_i sigma_{i-1} sqrt(2 log(2/delta_i)), b_i^2), then sigma_i by
 * eq. (70) (delta_i = delta / (2 (i + 1) lg)). Updates *bmax and *sig2. */
static double kd_kh_threshold_(double b2, kd_lidx i, double logterm, int adaptive, double delta,
                               double lg, double *bmax, double *sig2) {
  double b = sqrt(b2 > 0 ? b2 : 0.0);
  if (b > *bmax) *bmax = b;
  double a = b * *bmax * logterm;
  if (adaptive) {
    const double di = delta / (2.0 * (double)(i + 1) * lg);
    b2 = b * b;
    a = b * sqrt(*sig2) * sqrt(2.0 * log(2.0 / di));
    if (b2 > a) a = b2;
    if (a > 0) {
      double q = 1.0 + (b2 - 2.0 * a) * *sig2 / (a * a);
      *sig2 += b2 * (q > 0 ? q : 0.0);
    }
  }
  return a;
}

/* The fast Gauss transform of a halving of n rows (fgt NULL when the kernel's screening setting
 * or its cost leaves it out): forced (setting 2) from the first chunk on, else from the earlier
 * points' count where it pays (*from), for halvings of KD_KH_FGT_MIN rows or more. */
static kd_err kd_kh_fgt_setup_(kd_kernel *k, const kd_kernel_screen *scr, const double *X,
                               kd_lidx n, int d, kd_kh_fgt **fgt, double *from) {
  kd_err err = KD_OK;
  const int mode = scr ? kd_kernel_screen_fgt(k) : 0;
  *from = INFINITY;
  if (mode == 2 || (mode == 1 && n >= KD_KH_FGT_MIN))
    KD_TRY(kd_kh_fgt_prepare(k, X, n, d, fgt, from));
  if (mode == 2) *from = 0.0;
  if (*fgt && *from > 0.75 * (double)n) kd_kh_fgt_free(fgt); /* it would not pay */
cleanup:
  return err;
}

/* Alg. B.1 (or KHA, `adaptive`) on one rank (team NULL) or split over a team's ranks
 * (kd_thin_halve_team): the same decisions either way. Local errors are carried in lerr to the
 * next agreement so that no rank leaves a collective the others enter. */
static kd_err kd_halve_kh_(kd_kernel *k, const double *X, kd_lidx n, int d, double delta,
                           int adaptive, uint64_t seed, uint64_t stream, kd_thin_team *team,
                           kd_lidx *keep) {
  kd_err err = KD_OK, lerr = KD_OK;
  double *sgn = NULL, *y = NULL, *G = NULL, *yb = NULL;
  kd_kh_tbuf_ tb = {NULL, NULL, NULL, NULL};
  const int multi = team != NULL && team->size > 1;
  /* a team shares the screened rows but each rank computes every exact row: the thresholds below
   * are divided by the team's size */
  const kd_lidx nteam = multi ? team->size : 1;
  uint64_t ev_red = 0; /* evaluations every rank of the team makes (counted once, on rank 0) */
  /* tight (delta < 0): the log factor replaced by 1/2 (a heuristic, see docs/thinning.md) */
  const double logterm = delta < 0 ? 0.5 : 0.5 + log(2.0 * (double)n / delta);
  const kd_lidx np = n / 2, C = KD_KH_CHUNK;
  /* adaptive: delta_i = delta / (2 i (log(n/2) + 1)) as in Alg. B.2 (i 1-based) */
  const double lg = log((double)n / 2.0) + 1.0;
  double bmax = 0.0, sig2 = 0.0;
  /* sized by the largest chunk, not KD_KH_CHUNK: the leaves of Compress halve a few rows, and a
   * zeroed 128 KB tile per call was 17% of a CTT run's time */
  const kd_lidx cm = np < C ? np : C;
  /* screening (Gaussian kernel): the earlier chunks' contribution in single precision with a
   * proven bound, the exact rows only for the pairs whose coin the bound does not settle. The rows'
   * bounds grow with the set (single precision times each row's kernel sum): once more than one
   * pair in 32 (one rank) needs the exact rows, the pairs' differences are screened instead
   * (their bounds grow with the pair's distance, like the threshold; about 1.1x the rows' cost);
   * if even those leave more than one in 8 open, screening is dropped for the rest of the call
   * (kd_kh_screen_form_). The decisions are those of the exact mat-vec either way. */
  kd_kernel_screen *scr = NULL;
  /* the fast Gauss transform (halve_fgt.c, Gaussian kernel, d <= 3): the rows from expansions
   * kept per cell, once the earlier points are many enough (fgt_from) that this costs less than
   * the single-precision rows; decided like the screening, the same decisions */
  kd_kh_fgt *fgt = NULL;
  double fgt_from = INFINITY;
  kd_lidx fscreened = 0, fexact = 0; /* coins by the transform, and those needing exact rows */
  kd_lidx nscreened = 0, nexact = 0;
  int pairs = 0; /* screening by the pairs' differences (kd_kernel_screen_pairs) */
  sgn = calloc((size_t)(n + 1), sizeof(double));
  y = calloc((size_t)(2 * cm + 1), sizeof(double));
  G = calloc((size_t)(4 * cm * cm + 1), sizeof(double));
  yb = calloc((size_t)(2 * cm + 1), sizeof(double));
  if (kd_kh_tbuf_alloc_(&tb, team, multi, cm) || !sgn || !y || !G || !yb)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "halving: cannot allocate for %lld rows",
                      (long long)n);
  if (lerr == KD_OK && np > C) lerr = kd_kernel_screen_prepare(k, X, n, &scr);
  if (lerr == KD_OK) lerr = kd_kh_fgt_setup_(k, scr, X, n, d, &fgt, &fgt_from);
  if (multi) {
    /* the ranks' screening forms agree (the same rows), so every rank takes the same path */
    KD_TRY(kd_dist_agreed(team->comm, lerr));
  } else {
    KD_TRY(lerr);
  }
  for (kd_lidx i0 = 0; i0 < np; i0 += C) {
    const kd_lidx c = np - i0 < C ? np - i0 : C, w = 2 * c;
    const double *A = X + 2 * i0 * d;
    const int by_fgt = fgt && i0 > 0 && (double)(2 * i0) >= fgt_from;
    /* while the transform is kept, the screening keeps its row form (and its set, whose packed
     * copy gives the exact rows) */
    if (!fgt) kd_kh_screen_form_(&scr, &pairs, &nscreened, &nexact, nteam);
    const int screened = i0 > 0 && (scr != NULL || by_fgt);
    if (i0 == 0)
      for (kd_lidx r = 0; r < w; r++) y[r] = 0.0;
    else
      KD_TRY(kd_kh_earlier_(k, scr, fgt, by_fgt ? 3 : (screened ? 1 + pairs : 0),
                            multi ? team : NULL, X, i0, w, d, sgn, lerr, y, yb, &tb));
    /* only G's lower triangle (by pairs) is read below: rows [r0, r0 + KD_KH_STRIP) need the
     * columns before r0 + KD_KH_STRIP (an even strip never splits a pair) */
    uint64_t e0 = kd_kernel_evals(k);
    for (kd_lidx r0 = 0; r0 < w && lerr == KD_OK; r0 += KD_KH_STRIP) {
      const kd_lidx rows = w - r0 < KD_KH_STRIP ? w - r0 : KD_KH_STRIP;
      lerr = kd_kernel_eval_block(k, A + r0 * d, rows, A, r0 + rows, G + r0 * w, w);
    }
    for (kd_lidx t = 0; t < c && lerr == KD_OK; t++) {
      const kd_lidx i = i0 + t, r = 2 * t;
      const double *g0 = G + r * w, *g1 = G + (r + 1) * w;
      const double a = kd_kh_threshold_(g0[r] + g1[r + 1] - 2.0 * g0[r + 1], i, logterm, adaptive,
                                        delta, lg, &bmax, &sig2);
      const double coin = kd_rng_uniform(seed, stream, (uint64_t)i);
      const double *sg = sgn + 2 * i0;
      int swap = -1;
      if (screened) {
        nscreened++;
        swap = kd_kh_screened_(coin, a, y + r, yb + r, sg, g0, g1, r);
        fscreened += by_fgt;
        if (swap < 0) { /* the exact rows: the decision of the unscreened halving */
          nexact++;
          fexact += by_fgt;
          lerr = kd_kernel_screen_exact(k, scr, 2 * (i0 + t), 2, 2 * i0, sgn, y + r);
        }
      }
      if (swap < 0) swap = coin < kd_kh_prob_(kd_kh_alpha_(y[r], y[r + 1], sg, g0, g1, r), a);
      /* S1 (kept) gets x, S2 gets x' unless swapped */
      keep[i] = 2 * i + (swap ? 1 : 0);
      sgn[2 * i] = swap ? 1.0 : -1.0;
      sgn[2 * i + 1] = swap ? -1.0 : 1.0;
    }
    ev_red += kd_kernel_evals(k) - e0;
    if (fgt && lerr == KD_OK) kd_kh_fgt_add(fgt, A, w, sgn + 2 * i0);
    /* thresholds too small for its bounds (tiny pairs: local pairing, the tight heuristic): more
     * than one coin in 8 nteam open, and the transform is dropped for the rest of the call */
    if (fgt && fscreened >= 4 * C && 8 * nteam * fexact > fscreened) kd_kh_fgt_free(&fgt);
    if (!multi) KD_TRY(lerr);
  }
  if (multi) {
    KD_TRY(kd_dist_agreed(team->comm, lerr));
    if (team->rank != 0) team->skip += ev_red;
  }
cleanup:
  free(sgn);
  free(y);
  free(G);
  free(yb);
  kd_kh_tbuf_free_(&tb);
  kd_kernel_screen_free(&scr);
  kd_kh_fgt_free(&fgt);
  return err;
}

/* Alg. B.2: linear kernel, psi in R^d, delta_i = delta / (2 i (log(n/2) + 1)) (i 1-based). */
static kd_err kd_halve_lkh_(const double *X, kd_lidx n, int d, double delta, uint64_t seed,
                            uint64_t stream, kd_lidx *keep) {
  kd_err err = KD_OK;
  double *psi = NULL;
  double sig2 = 0.0;
  const double lg = log((double)n / 2.0) + 1.0;
  KD_ALLOC(psi, d);
  for (kd_lidx i = 0; i < n / 2; i++) {
    const double *x = X + 2 * i * d, *xp = x + d;
    double b2 = 0.0, alpha = 0.0;
    for (int j = 0; j < d; j++) {
      double t = x[j] - xp[j];
      b2 += t * t;
      alpha += psi[j] * t;
    }
    double b = sqrt(b2);
    double di = delta / (2.0 * (double)(i + 1) * lg);
    /* get_swap_params(sigma, b, delta_i) */
    double a = b * sqrt(sig2) * sqrt(2.0 * log(2.0 / di));
    if (b2 > a) a = b2;
    if (a > 0) {
      double t = 1.0 + (b2 - 2.0 * a) * sig2 / (a * a);
      sig2 += b2 * (t > 0 ? t : 0.0);
    }
    double prob = 0.0;
    if (a > 0) {
      prob = 0.5 * (1.0 - alpha / a);
      prob = prob < 0 ? 0 : (prob > 1 ? 1 : prob);
    }
    int swap = kd_rng_uniform(seed, stream, (uint64_t)i) < prob;
    keep[i] = 2 * i + (swap ? 1 : 0);
    /* psi += eta f, f = x - x', eta = +1 if swapped else -1 */
    double eta = swap ? 1.0 : -1.0;
    for (int j = 0; j < d; j++) psi[j] += eta * (x[j] - xp[j]);
  }
cleanup:
  free(psi);
  return err;
}

/* Alg. B.7. Q_ij = k(a_i,a_j) + k(b_i,b_j) - k(a_i,b_j) - k(b_i,a_j) for pairs (a_i, b_i).
 * C = (Q_{A2 x A2})^{-1} over the ordered index list `act` (active set without the pivot).
 * Removing index i from the set uses the Schur downdate C' = C_-i,-i - C_-i,i C_i,-i / C_ii, which
 * equals the inverse of the smaller principal block (the rank-one update of Alg. B.7).
 * A tiny ridge (1e-10 * mean diag) keeps Q numerically positive definite. */
extern void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
extern void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info);

/* The state of one GS walk over the h pairs (Alg. B.7). */
typedef struct {
  kd_lidx h;
  double *Q;     /* [h*h] paired kernel matrix (with ridge) */
  double *C;     /* [na*na] inverse of Q over act */
  double *C2;    /* scratch of the same size */
  double *z;     /* [h] the walk, in [-1,1]^h */
  double *u;     /* [h] update direction */
  kd_lidx *act;  /* [na] A minus the pivot, increasing */
  int *frozen;   /* [h] z_i at +-1 */
  int *inA;      /* [h] still in the active set A */
  kd_lidx na, p; /* |act|, the pivot */
  kd_lidx nfrozen;
  kd_rng r;
} kd_gs_walk_;

static void kd_gs_walk_free_(kd_gs_walk_ *s) {
  free(s->Q);
  free(s->C);
  free(s->C2);
  free(s->z);
  free(s->u);
  free(s->act);
  free(s->frozen);
  free(s->inA);
}

/* Q = K(A,A) + K(B,B) - K(A,B) - K(B,A) over the pairs A_i = X_{2i}, B_i = X_{2i+1}, plus the
 * ridge. Local. */
static kd_err kd_gs_paired_gram_(kd_kernel *k, const double *X, kd_lidx h, int d, double *Q) {
  kd_err err = KD_OK;
  double *A = NULL, *B = NULL, *Kf = NULL;
  KD_ALLOC(A, h * d);
  KD_ALLOC(B, h * d);
  for (kd_lidx i = 0; i < h; i++) {
    memcpy(A + i * d, X + 2 * i * d, sizeof(double) * d);
    memcpy(B + i * d, X + (2 * i + 1) * d, sizeof(double) * d);
  }
  KD_ALLOC(Kf, h * h);
  KD_TRY(kd_kernel_eval_block(k, A, h, A, h, Q, h));
  KD_TRY(kd_kernel_eval_block(k, B, h, B, h, Kf, h));
  for (kd_lidx i = 0; i < h * h; i++) Q[i] += Kf[i];
  KD_TRY(kd_kernel_eval_block(k, A, h, B, h, Kf, h));
  for (kd_lidx i = 0; i < h; i++)
    for (kd_lidx j = 0; j < h; j++) Q[i * h + j] -= Kf[i * h + j] + Kf[j * h + i];
  double tr = 0;
  for (kd_lidx i = 0; i < h; i++) tr += Q[i * h + i];
  double ridge = 1e-10 * (tr > 0 ? tr / (double)h : 1.0);
  for (kd_lidx i = 0; i < h; i++) Q[i * h + i] += ridge;
cleanup:
  free(A);
  free(B);
  free(Kf);
  return err;
}

/* act = A minus the pivot p in increasing order; C = inverse of Q over act (Cholesky). Local. */
static kd_err kd_gs_init_inverse_(kd_gs_walk_ *s) {
  kd_err err = KD_OK;
  const kd_lidx h = s->h;
  for (kd_lidx i = 0; i < h; i++) s->inA[i] = 1;
  s->na = 0;
  for (kd_lidx i = 0; i < h; i++)
    if (i != s->p) s->act[s->na++] = i;
  const kd_lidx na = s->na;
  KD_ALLOC(s->C, na * na);
  KD_ALLOC(s->C2, na * na);
  if (na > 0) {
    for (kd_lidx a = 0; a < na; a++)
      for (kd_lidx b = 0; b < na; b++) s->C[a * na + b] = s->Q[s->act[a] * h + s->act[b]];
    int nn = (int)na, info = 0;
    dpotrf_("L", &nn, s->C, &nn, &info);
    KD_CHECK(info == 0, KD_ERR_NUMERIC,
             "GS-Halve: paired kernel matrix not positive definite "
             "(info %d); are there duplicate rows?",
             info);
    dpotri_("L", &nn, s->C, &nn, &info);
    KD_LA(info);
    /* column-major lower == row-major upper: symmetrise */
    for (kd_lidx a = 0; a < na; a++)
      for (kd_lidx b = a + 1; b < na; b++) s->C[b * na + a] = s->C[a * na + b];
  }
cleanup:
  return err;
}

/* A' = A minus its smallest frozen index; when that was the pivot, a new pivot uniformly from A'
 * (which then leaves the inverse's index set). *drop = the index leaving act (-1: none); *stop = 1
 * when A' is empty. Local. */
static void kd_gs_next_pivot_(kd_gs_walk_ *s, kd_lidx *pnew, kd_lidx *drop, int *stop) {
  const kd_lidx h = s->h;
  kd_lidx rem = -1;
  *pnew = s->p;
  *drop = -1;
  for (kd_lidx i = 0; i < h; i++)
    if (s->inA[i] && s->frozen[i]) {
      rem = i;
      break;
    }
  if (rem < 0) return;
  s->inA[rem] = 0;
  if (rem != s->p) {
    *drop = rem;
    return;
  }
  kd_lidx cnt = 0;
  for (kd_lidx i = 0; i < h; i++) cnt += s->inA[i];
  if (cnt == 0) {
    *stop = 1;
    return;
  }
  kd_lidx pick = (kd_lidx)kd_rng_next_below(&s->r, (uint64_t)cnt);
  for (kd_lidx i = 0; i < h; i++)
    if (s->inA[i] && pick-- == 0) {
      *pnew = i;
      break;
    }
  *drop = *pnew;
}

/* Remove index `drop` from act: C' = C_-i,-i - C_-i,i C_i,-i / C_ii (Schur downdate). Local. */
static kd_err kd_gs_downdate_(kd_gs_walk_ *s, kd_lidx drop) {
  kd_err err = KD_OK;
  const kd_lidx na = s->na;
  const double *C = s->C;
  kd_lidx di = -1;
  for (kd_lidx a = 0; a < na; a++)
    if (s->act[a] == drop) di = a;
  KD_CHECK(di >= 0, KD_ERR_INTERNAL, "GS-Halve: index bookkeeping");
  double cii = C[di * na + di];
  kd_lidx nb = 0;
  for (kd_lidx a = 0; a < na; a++) {
    if (a == di) continue;
    kd_lidx mb = 0;
    for (kd_lidx b = 0; b < na; b++) {
      if (b == di) continue;
      s->C2[nb * (na - 1) + mb] = C[a * na + b] - C[a * na + di] * C[di * na + b] / cii;
      mb++;
    }
    nb++;
  }
  for (kd_lidx a = di; a + 1 < na; a++) s->act[a] = s->act[a + 1];
  s->na--;
  double *t = s->C;
  s->C = s->C2;
  s->C2 = t;
cleanup:
  return err;
}

/* One GS step: u_act = -C Q_act,p, u_p = 1, 0 elsewhere; the random step keeping z in [-1,1]^h
 * (mean zero); coordinates reaching +-1 freeze. Local. */
static void kd_gs_step_(kd_gs_walk_ *s) {
  const kd_lidx h = s->h, na = s->na, p = s->p;
  double *u = s->u, *z = s->z;
  for (kd_lidx i = 0; i < h; i++) u[i] = 0.0;
  u[p] = 1.0;
  for (kd_lidx a = 0; a < na; a++) {
    double sum = 0.0;
    for (kd_lidx b = 0; b < na; b++) sum += s->C[a * na + b] * s->Q[s->act[b] * h + p];
    u[s->act[a]] = -sum;
  }
  double dp = INFINITY, dm = INFINITY;
  for (kd_lidx i = 0; i < h; i++) {
    if (!s->inA[i] || u[i] == 0.0) continue;
    double up = ((u[i] > 0 ? 1.0 : -1.0) - z[i]) / u[i]; /* largest + step */
    double dn = ((u[i] > 0 ? -1.0 : 1.0) - z[i]) / u[i]; /* most negative step */
    if (up < dp) dp = up;
    if (-dn < dm) dm = -dn;
  }
  if (dp < 0) dp = 0;
  if (dm < 0) dm = 0;
  double step = 0.0;
  if (dp + dm > 0 && isfinite(dp + dm))
    step = (kd_rng_next_uniform(&s->r) < dm / (dp + dm)) ? dp : -dm;
  for (kd_lidx i = 0; i < h; i++) {
    if (!s->inA[i] || s->frozen[i]) continue;
    z[i] += step * u[i];
    if (fabs(z[i]) >= 1.0 - 1e-9) {
      z[i] = z[i] > 0 ? 1.0 : -1.0;
      s->frozen[i] = 1;
      s->nfrozen++;
    }
  }
}

static kd_err kd_halve_gs_(kd_kernel *k, const double *X, kd_lidx n, int d, uint64_t seed,
                           uint64_t stream, kd_lidx *keep) {
  kd_err err = KD_OK;
  kd_gs_walk_ s;
  memset(&s, 0, sizeof s);
  const kd_lidx h = n / 2;
  s.h = h;
  KD_ALLOC(s.Q, h * h);
  KD_ALLOC(s.z, h);
  KD_ALLOC(s.u, h);
  KD_ALLOC(s.act, h);
  KD_ALLOC(s.frozen, h);
  KD_ALLOC(s.inA, h);
  KD_TRY(kd_gs_paired_gram_(k, X, h, d, s.Q));
  s.r = kd_rng_make(seed, stream);
  s.p = (kd_lidx)kd_rng_next_below(&s.r, (uint64_t)h);
  KD_TRY(kd_gs_init_inverse_(&s));
  for (int64_t it = 0; s.nfrozen < h && it < 4 * h + 8; it++) {
    kd_lidx pnew, drop;
    int stop = 0;
    kd_gs_next_pivot_(&s, &pnew, &drop, &stop);
    if (stop) break;
    if (drop >= 0) KD_TRY(kd_gs_downdate_(&s, drop));
    s.p = pnew;
    kd_gs_step_(&s);
  }
  /* any coordinate left fractional by round-off: round by sign (never happens in exact arithmetic)
   */
  for (kd_lidx i = 0; i < h; i++) keep[i] = 2 * i + (s.z[i] >= 0 ? 0 : 1);
cleanup:
  kd_gs_walk_free_(&s);
  return err;
}

/* One halving rule on X. KH and KHA split over the team (NULL: one rank); LKH and GS run whole on
 * every rank of it, counted once. Errors agreed over the team. */
static kd_err kd_thin_halve_rule_(kd_kernel *k, kd_halve_kind kind, const double *X, kd_lidx n,
                                  int d, double delta, uint64_t seed, uint64_t stream,
                                  kd_thin_team *team, kd_lidx *keep) {
  kd_err err = KD_OK, lerr = KD_OK;
  const uint64_t e0 = k ? kd_kernel_evals(k) : 0;
  switch (kind) {
    case KD_HALVE_KH:
      return kd_halve_kh_(k, X, n, d, delta, 0, seed, stream, team, keep);
    case KD_HALVE_KHA:
      return kd_halve_kh_(k, X, n, d, delta > 0 ? delta : 0.5, 1, seed, stream, team, keep);
    case KD_HALVE_LKH:
      lerr = kd_halve_lkh_(X, n, d, delta > 0 ? delta : 0.5, seed, stream, keep);
      break;
    case KD_HALVE_GS:
      lerr = kd_halve_gs_(k, X, n, d, seed, stream, keep);
      break;
  }
  if (!team) return lerr;
  KD_TRY(kd_dist_agreed(team->comm, lerr));
  if (team->rank != 0 && k) team->skip += kd_kernel_evals(k) - e0;
cleanup:
  return err;
}

void kd_thin_team_free(kd_thin_team *team) {
  if (team && team->ngroups > 0) kd_dist_comm_free(&team->gcomm);
  if (team) team->ngroups = 0;
}

/* kd_thin_halve_team over a team larger than its group size: the team is split once into groups
 * of consecutive ranks (sizes differing by one at most), each group halves X as a team of its
 * own (the same keep[], bit for bit), and the evaluations of every group but the first are
 * counted as another rank's. Errors agreed over the whole team. Collective. */
static kd_err kd_thin_halve_groups_(kd_kernel *k, kd_halve_kind kind, const double *X, kd_lidx n,
                                    int d, double delta, uint64_t seed, uint64_t stream,
                                    kd_thin_team *team, int gmax, kd_lidx *keep) {
  kd_err err = KD_OK, lerr = KD_OK;
  const int ng = (team->size + gmax - 1) / gmax,
            color = (int)((int64_t)team->rank * ng / team->size);
  if (team->ngroups == 0) {
    lerr = kd_dist_split(team->comm, color, &team->gcomm);
    if (lerr == KD_OK) team->ngroups = ng;
    KD_TRY(kd_dist_agreed(team->comm, lerr));
  }
  kd_thin_team g = {team->gcomm, 0, 1, 0, team->refine_rows, team->size, 0, MPI_COMM_NULL};
  g.rank = kd_dist_rank(g.comm);
  g.size = kd_dist_size(g.comm);
  const uint64_t e0 = k ? kd_kernel_evals(k) : 0;
  lerr = kd_thin_halve_team(k, kind, X, n, d, delta, seed, stream, &g, keep);
  team->skip += color > 0 ? (k ? kd_kernel_evals(k) - e0 : 0) : g.skip;
  KD_TRY(kd_dist_agreed(team->comm, lerr));
cleanup:
  return err;
}

kd_err kd_thin_halve_team(kd_kernel *k, kd_halve_kind kind, const double *X, kd_lidx n, int d,
                          double delta, uint64_t seed, uint64_t stream, kd_thin_team *team,
                          kd_lidx *keep) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_lidx *perm = NULL;
  double *Xp = NULL;
  if (team && team->size <= 1) team = NULL; /* one rank: the plain halving */
  const int gmax = team && team->halve_group > 0 ? team->halve_group : KD_THIN_HALVE_GROUP;
  if (team && team->size > gmax)
    return kd_thin_halve_groups_(k, kind, X, n, d, delta, seed, stream, team, gmax, keep);
  KD_CHECK(n % 2 == 0, KD_ERR_INTERNAL, "halving needs an even count (got %lld)", (long long)n);
  if (n == 0) goto cleanup;
  if (!((int)kind & KD_HALVE_LOCAL) || n <= 2) {
    KD_TRY(kd_thin_halve_rule_(k, KD_HALVE_RULE(kind), X, n, d, delta, seed, stream, team, keep));
    goto cleanup;
  }
  /* pairing: local - halve the reordered sequence, map the kept rows back */
  perm = malloc(sizeof(kd_lidx) * (size_t)n);
  Xp = malloc(sizeof(double) * (size_t)(n * d));
  if (!perm || !Xp)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "halving: cannot allocate for %lld rows",
                      (long long)n);
  else
    lerr = kd_thin_pair_local(X, n, d, perm);
  if (team) KD_TRY(kd_dist_agreed(team->comm, lerr));
  KD_TRY(lerr);
  for (kd_lidx i = 0; i < n; i++) memcpy(Xp + i * d, X + perm[i] * d, sizeof(double) * d);
  KD_TRY(kd_thin_halve_rule_(k, KD_HALVE_RULE(kind), Xp, n, d, delta, seed, stream, team, keep));
  for (kd_lidx i = 0; i < n / 2; i++) keep[i] = perm[keep[i]];
  /* kept rows in input order, like the consecutive pairing: positions stay as random as the
   * input's, which the remainder rule and Compress's partitions rely on (distinct rows: marked in
   * perm, no longer needed, and read back in order) */
  for (kd_lidx j = 0; j < n; j++) perm[j] = 0;
  for (kd_lidx i = 0; i < n / 2; i++) perm[keep[i]] = 1;
  for (kd_lidx j = 0, i = 0; i < n / 2; j++) {
    keep[i] = j;
    i += perm[j];
  }
cleanup:
  free(perm);
  free(Xp);
  return err;
}

kd_err kd_thin_halve(kd_kernel *k, kd_halve_kind kind, const double *X, kd_lidx n, int d,
                     double delta, uint64_t seed, uint64_t stream, kd_lidx *keep) {
  return kd_thin_halve_team(k, kind, X, n, d, delta, seed, stream, NULL, keep);
}
