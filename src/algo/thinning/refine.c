/* refine.c - KH-Refine's swap pass (Low-Rank Thinning App. H, Alg. H.1; the kt-swap step of
 * Dwivedi & Mackey 2024, Alg. 1a). With the coreset S (m points, weights 1/m) and the target
 * embedding z, MMD^2(P_in, S) = zz - (2/m) sum_j z(s_j) + (1/m^2) sum_{j,l} k(s_j, s_l).
 * Replacing s_i by a candidate c changes it by
 *   -(2/m) (z_c - z_{s_i}) + (1/m^2) (2 (g_c - K_{c,s_i}) + K_cc - 2 g_{s_i} + K_{s_i s_i}),
 * g_c = sum_j K_{c, s_j}, which is kept up to date in O(nc) per swap. `passes` sweeps over
 * i = 0..m-1 are made (1 = Alg. H.1 exactly), stopping after a sweep without a replacement. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/thinning/thin_impl.h"
#include "comm/dist_impl.h"
#include "core/clones.h"

/* The kernel values the pass needs: columns k(., x_j) of the candidates' Gram matrix, for the
 * coreset's points and the candidates swapped in. When the matrix is small they are kept once
 * computed (column j at K + j nc, marked in `have`: the pass needs m columns plus one per swap,
 * far fewer than all nc); otherwise each is evaluated when needed, so the memory is O(nc) and not
 * O(nc^2) (2^g sqrt(n) candidates: the dense matrix would be 8 * 4^g * n bytes). Both give the
 * same bits: a kernel value does not depend on the block it is computed in, and k(a, b) =
 * k(b, a) bit for bit (docs/kernels.md). */
enum { KD_RF_DENSE_MAX = 2048 }; /* 32 MiB at most, of which only the columns used are touched */
/* Up to this many candidates (on one rank) the whole Gram matrix is evaluated in one block call:
 * the columns one by one would cost more in calls than in kernel values (a Compress leaf's
 * refine has 16 to 64 candidates). The same bits: a value does not depend on its block. */
enum { KD_RF_FULL_MAX = 64 };
/* On a team, KH-Refine's candidates are split over groups of nc / KD_RF_TEAM_ROWS ranks at most
 * (fewer candidates: every rank runs the pass alone; the thinning key refine_group_rows sets it
 * through kd_thin_team.refine_rows, with this default). A step costs one all-gather over the group
 * and a few nanoseconds per candidate, so with fewer rows per rank the all-gather's latency
 * outweighs what the split saves: at 4096 candidates, 2 ranks of one node sharing them were 5%
 * faster than alone, and 64 simulated ranks alone 40% faster than sharing (bench/sim/README.md). */
enum { KD_RF_TEAM_ROWS = 2048 };

typedef struct {
  kd_kernel *k;
  const double *C;
  kd_lidx nc;
  int d;
  double *K;            /* nc x nc (column j at K + j nc, valid where have[j]) or NULL */
  char *have;           /* nc flags, with K */
  kd_lidx lo, hi;       /* the candidates this rank evaluates (all of them on one rank) */
  kd_kernel_packed *Cp; /* candidates [lo, hi) packed once for the columns, or NULL */
} kd_rf_;

/* *col[c] = k(x_c, x_j) for the candidates c in [lo, hi): the kept column (computed on first
 * use), else evaluated into buf */
static kd_err kd_rf_col_(kd_rf_ *r, kd_lidx j, double *buf, const double **col) {
  kd_err err = KD_OK;
  double *dst = r->K ? r->K + (size_t)j * r->nc : buf;
  *col = dst;
  if (r->K && r->have[j]) goto cleanup;
  if (r->Cp) /* the point against the packed candidates: the same values, k(a, b) = k(b, a) */
    KD_TRY(kd_kernel_eval_block_packed(r->k, r->C + (size_t)j * r->d, 1, r->Cp, dst + r->lo,
                                       r->hi - r->lo));
  else
    KD_TRY(kd_kernel_eval_block(r->k, r->C + (size_t)r->lo * r->d, r->hi - r->lo,
                                r->C + (size_t)j * r->d, 1, dst + r->lo, 1));
  if (r->K) r->have[j] = 1;
cleanup:
  return err;
}

/* x / q, by the exact reciprocal when q is a power of two (the same bits: x / q and x * (1 / q)
 * are the same real number rounded once); divisions are most of the pass otherwise */
static inline double kd_rf_div_(double x, double q, double rq, int exact) {
  return exact ? x * rq : x / q;
}

/* diag[c] = k(x_c, x_c); gs[c] = sum_j k(x_c, x_sel[j]) in the order j = 0..m-1, for c in
 * [lo, hi); with kept columns, the columns of the coreset's points are kept on the way */
static kd_err kd_rf_init_(kd_rf_ *r, const kd_lidx *sel, kd_lidx m, double *diag, double *gs) {
  kd_err err = KD_OK;
  double *S = NULL, *blk = NULL;
  const kd_lidx nc = r->nc, R = 256, rows = r->hi - r->lo < R ? r->hi - r->lo : R;
  if (r->K && r->lo == 0 && r->hi == nc && nc <= KD_RF_FULL_MAX) {
    /* the whole matrix at once (column j at K + j nc; k(a, b) = k(b, a) bit for bit), then the
     * sums and the diagonal from it: the values the blocks below give */
    KD_TRY(kd_kernel_eval_block(r->k, r->C, nc, r->C, nc, r->K, nc));
    memset(r->have, 1, (size_t)nc);
    for (kd_lidx c = 0; c < nc; c++) {
      double sum = 0.0;
      for (kd_lidx j = 0; j < m; j++) sum += r->K[(size_t)sel[j] * nc + c];
      gs[c] = sum;
      diag[c] = r->K[(size_t)c * nc + c];
    }
    goto cleanup;
  }
  KD_ALLOC(S, (size_t)m * r->d);
  KD_ALLOC(blk, (size_t)rows * m); /* a block's rows at most (few for small sets) */
  for (kd_lidx j = 0; j < m; j++) memcpy(S + j * r->d, r->C + sel[j] * r->d, sizeof(double) * r->d);
  for (kd_lidx c0 = r->lo; c0 < r->hi; c0 += R) {
    const kd_lidx nr = r->hi - c0 < R ? r->hi - c0 : R;
    KD_TRY(kd_kernel_eval_block(r->k, r->C + c0 * r->d, nr, S, m, blk, m));
    for (kd_lidx c = 0; c < nr; c++) {
      double s = 0.0;
      for (kd_lidx j = 0; j < m; j++) s += blk[c * m + j];
      gs[c0 + c] = s;
      diag[c0 + c] = kd_kernel_eval(r->k, r->C + (c0 + c) * r->d, r->C + (c0 + c) * r->d);
    }
    if (r->K)
      for (kd_lidx j = 0; j < m; j++)
        for (kd_lidx c = 0; c < nr; c++) r->K[(size_t)sel[j] * nc + c0 + c] = blk[c * m + j];
  }
  if (r->K)
    for (kd_lidx j = 0; j < m; j++) r->have[sel[j]] = 1;
cleanup:
  free(S);
  free(blk);
  return err;
}

/* dl[c] for the candidates c in [lo, hi): the change of MMD^2 when the point with target value
 * zsi, gs xs0 and diagonal xs1 is replaced by c (ci: its kernel column), the expression of the
 * scan in kd_thin_refine_team in the same order (ISO C: no contraction), so the same bits; a
 * loop without branches, vectorised. */
KD_KCLONES static void kd_rf_deltas_(kd_lidx lo, kd_lidx hi, const double *gs, const double *ci,
                                     const double *diag, const double *zc, double zsi, double xs0,
                                     double xs1, double fm, double fm2, double rm2, int p2,
                                     double *dl) {
  const double c2 = -2.0 / fm, x2 = 2.0 * xs0;
  if (p2)
    for (kd_lidx c = lo; c < hi; c++) {
      const double dt = 2.0 * (gs[c] - ci[c]) + diag[c] - x2 + xs1;
      dl[c] = c2 * (zc[c] - zsi) + dt * rm2;
    }
  else
    for (kd_lidx c = lo; c < hi; c++) {
      const double dt = 2.0 * (gs[c] - ci[c]) + diag[c] - x2 + xs1;
      dl[c] = c2 * (zc[c] - zsi) + dt / fm2;
    }
}

/* A team makes up to KD_RF_WIN steps per all-gather (kd_rf_team_): while steps swap nothing the
 * coreset and the candidates' sums do not change, so the steps after one without a swap can be
 * scanned before it is agreed; the first step of a window that swaps ends it, and the steps
 * after it are scanned again from the new state. Each step's scan is the one of a step alone
 * (the same inputs, the same bits). The window doubles after a window without a swap and
 * restarts at one step after a swap. */
enum { KD_RF_WIN = 16 };

/* A pass's state: the candidates' sums gs, diagonal, scale terms vv and changes dl over this
 * rank's candidates, the coreset sel[m] and its marks in[], the column buffers (one per step of
 * a window, nc each) and cbc (the swapped-in point's column), the constants of the changes. */
typedef struct {
  kd_rf_ r;
  const double *zc;
  kd_lidx *sel, m;
  int passes;
  double *gs, *diag, *dl, *vv, *cbc, *cols;
  char *in;
  double fm, fm2, rm2;
  int p2;
  kd_lidx swaps;
} kd_rf_st_;

/* The local part of the step replacing si ({gs, diag} of si in xs): its column (*ci, computed
 * into colbuf unless kept), the changes, and over this rank's candidates outside the coreset the
 * first strict minimum below 0 (best, bc; (0, si) when none) and the largest scale term. */
static kd_err kd_rf_scan_(kd_rf_st_ *S, kd_lidx si, const double *xs, double *colbuf,
                          const double **ci, double *best, kd_lidx *bc, double *scale) {
  kd_err err = KD_OK;
  const kd_rf_ *r = &S->r;
  KD_TRY(kd_rf_col_(&S->r, si, colbuf, ci));
  kd_rf_deltas_(r->lo, r->hi, S->gs, *ci, S->diag, S->zc, S->zc[si], xs[0], xs[1], S->fm, S->fm2,
                S->rm2, S->p2, S->dl);
  /* in locals that stay in registers; NaN never taken, as fmax skips it */
  double lb = 0.0, lsc = 0.0;
  kd_lidx lbc = si;
  const double *dl = S->dl, *vv = S->vv;
  const char *in = S->in;
  for (kd_lidx c = r->lo; c < r->hi; c++) {
    const int out = !in[c], better = out & (dl[c] < lb);
    lb = better ? dl[c] : lb;
    lbc = better ? c : lbc;
    lsc = out & (vv[c] > lsc) ? vv[c] : lsc;
  }
  *best = lb;
  *bc = lbc;
  *scale = lsc;
cleanup:
  return err;
}

/* Step i's swap, when best (over all candidates) beats round-off: bc replaces sel[i] (ci: the
 * column of sel[i]); gs updated over this rank's candidates. Returns 1 if it swapped. Local. */
static int kd_rf_apply_(kd_rf_st_ *S, kd_lidx i, double best, kd_lidx bc, double scale,
                        const double *ci, kd_err *lerr) {
  const kd_lidx si = S->sel[i];
  const double *cb = S->cbc;
  /* only strict improvements beyond round-off are taken, so the MMD never increases */
  if (!(bc != si && best < -1e-13 * scale)) return 0;
  if (*lerr == KD_OK) *lerr = kd_rf_col_(&S->r, bc, S->cbc, &cb);
  for (kd_lidx c = S->r.lo; c < S->r.hi && *lerr == KD_OK; c++) S->gs[c] += cb[c] - ci[c];
  S->in[si] = 0;
  S->in[bc] = 1;
  S->sel[i] = bc;
  S->swaps++;
  return 1;
}

/* The passes on one rank. */
static kd_err kd_rf_alone_(kd_rf_st_ *S) {
  kd_err err = KD_OK;
  const kd_lidx m = S->m;
  kd_lidx last_swap = -1; /* sweep index of the last replacement: stop after a quiet sweep */
  for (kd_lidx it = 0; it < (kd_lidx)S->passes * m; it++) {
    const kd_lidx i = it % m;
    if (i == 0 && it > 0 && last_swap < it - m) break;
    const kd_lidx si = S->sel[i];
    const double xs[2] = {S->gs[si], S->diag[si]};
    double best, scale;
    kd_lidx bc;
    const double *ci = NULL;
    KD_TRY(kd_rf_scan_(S, si, xs, S->cols, &ci, &best, &bc, &scale));
    if (kd_rf_apply_(S, i, best, bc, scale, ci, &err)) last_swap = it;
    KD_TRY(err);
  }
cleanup:
  return err;
}

/* One window's agreement over a team: each rank sends [error, (best, bc, scale) of each of the
 * window's w steps over its candidates, {gs, diag} of the np points after the window's first
 * (from their owners, 0 elsewhere)]; on return, per step, the lowest best (from the first
 * rank's: a later rank wins only with a strictly lower value, so that exact ties go to the
 * lowest candidate on every rank, as one scan does) in res[3t], its candidate and the largest
 * scale, and the points' values in nxv[2u]. A rank's error is agreed. Collective. */
static kd_err kd_rf_team_agree_(const kd_thin_team *t, const kd_rf_st_ *S, kd_err lerr, kd_lidx i,
                                int w, int np, const double *mine3, double *res, double *nxv,
                                double *tx, double *rx) {
  kd_err err = KD_OK;
  const int per = 1 + 3 * w + 2 * np;
  int bad = 0;
  tx[0] = (double)lerr;
  memcpy(tx + 1, mine3, sizeof(double) * (size_t)(3 * w));
  for (int u = 0; u < np; u++) {
    const kd_lidx x = S->sel[(i + 1 + u) % S->m];
    const int own = x >= S->r.lo && x < S->r.hi;
    tx[1 + 3 * w + 2 * u] = own ? S->gs[x] : 0.0;
    tx[2 + 3 * w + 2 * u] = own ? S->diag[x] : 0.0;
  }
  KD_TRY(kd_dist_allgather(t->comm, tx, per, rx));
  memcpy(res, rx + 1, sizeof(double) * (size_t)(3 * w)); /* the first rank's */
  for (int q = 0; q < t->size; q++) {
    const double *v = rx + (size_t)per * (size_t)q;
    kd_lidx lo, hi;
    kd_thin_row_share(S->r.nc, q, t->size, &lo, &hi);
    bad |= v[0] != 0.0;
    for (int s = 0; s < w; s++) {
      if (v[1 + 3 * s] < res[3 * s]) {
        res[3 * s] = v[1 + 3 * s];
        res[3 * s + 1] = v[2 + 3 * s];
      }
      if (v[3 + 3 * s] > res[3 * s + 2]) res[3 * s + 2] = v[3 + 3 * s];
    }
    for (int u = 0; u < np; u++) {
      const kd_lidx x = S->sel[(i + 1 + u) % S->m];
      if (x >= lo && x < hi) {
        nxv[2 * u] = v[1 + 3 * w + 2 * u];
        nxv[2 * u + 1] = v[2 + 3 * w + 2 * u];
      }
    }
  }
  if (bad) KD_TRY(kd_dist_agreed(t->comm, lerr));
cleanup:
  return err;
}

/* The passes on a team, in windows of steps (KD_RF_WIN above). xw holds {gs, diag} of the
 * window's points: only their owners have them, so each agreement brings those of the points
 * the next window may start with, and after a swap every rank applies it to the next point's
 * value as the owner does (k(a, b) = k(b, a) and a kernel value does not depend on the call
 * that computes it: the same bits). Scans made again after a swap (their columns evaluated
 * again when not kept) are counted in team->skip. lerr: a local error so far. Collective. */
static kd_err kd_rf_team_(kd_rf_st_ *S, kd_thin_team *team, kd_err lerr, double *tx, double *rx) {
  kd_err err = KD_OK;
  const kd_lidx m = S->m, total = (kd_lidx)S->passes * m, nc = S->r.nc;
  const int d = S->r.d;
  double xw[2 * KD_RF_WIN], nxv[4 * KD_RF_WIN], res[3 * KD_RF_WIN], mine3[3 * KD_RF_WIN];
  uint64_t ev[KD_RF_WIN];
  const double *cis[KD_RF_WIN];
  int L = 1;
  kd_lidx last_swap = -1; /* sweep index of the last replacement: stop after a quiet sweep */
  KD_TRY(kd_rf_team_agree_(team, S, lerr, m - 1, 0, 1, mine3, res, nxv, tx, rx)); /* sel[0] */
  xw[0] = nxv[0];
  xw[1] = nxv[1];
  for (kd_lidx it = 0; it < total;) {
    const kd_lidx i = it % m;
    if (i == 0 && it > 0 && last_swap < it - m) break;
    kd_lidx wl = L;
    if (wl > m - i) wl = m - i; /* a window ends with its sweep */
    if (wl > total - it) wl = total - it;
    const int w = (int)wl, Ln = 2 * L < KD_RF_WIN ? 2 * L : KD_RF_WIN; /* Ln: the next's most */
    for (int t = 0; t < 3 * w; t++) mine3[t] = 0.0;
    for (int t = 0; t < w && lerr == KD_OK; t++) {
      const uint64_t e0 = kd_kernel_evals(S->r.k);
      kd_lidx bc = 0;
      lerr = kd_rf_scan_(S, S->sel[i + t], xw + 2 * t, S->cols + (size_t)t * (size_t)nc, &cis[t],
                         &mine3[3 * t], &bc, &mine3[3 * t + 2]);
      mine3[3 * t + 1] = (double)bc;
      ev[t] = kd_kernel_evals(S->r.k) - e0;
    }
    KD_TRY(kd_rf_team_agree_(team, S, lerr, i, w, w - 1 + Ln, mine3, res, nxv, tx, rx));
    int t = 0;
    kd_lidx si = -1;
    for (; t < w && si < 0; t++) {
      const kd_lidx before = S->sel[i + t];
      if (kd_rf_apply_(S, i + t, res[3 * t], (kd_lidx)res[3 * t + 1], res[3 * t + 2], cis[t],
                       &lerr))
        si = before;
    }
    if (si < 0) { /* no swap: the next window's points as their owners sent them */
      memcpy(xw, nxv + 2 * (w - 1), sizeof(double) * (size_t)(2 * Ln));
      it += w;
      L = Ln;
      continue;
    }
    /* step t - 1 swapped si for sel[i + t - 1]: the next point's gs as its owner updated it */
    const kd_lidx bc = S->sel[i + t - 1], nx = S->sel[(i + t) % m];
    const double *xn = S->r.C + (size_t)nx * (size_t)d;
    xw[0] = nxv[2 * (t - 1)] + (kd_kernel_eval(S->r.k, xn, S->r.C + (size_t)bc * (size_t)d) -
                                kd_kernel_eval(S->r.k, xn, S->r.C + (size_t)si * (size_t)d));
    xw[1] = nxv[2 * (t - 1) + 1];
    for (int u = t; u < w && !S->r.K; u++) team->skip += ev[u]; /* scanned again */
    last_swap = it + t - 1;
    it += t;
    L = 1;
  }
  KD_TRY(kd_dist_agreed(team->comm, lerr));
cleanup:
  return err;
}

static kd_err kd_rf_run_(kd_kernel *k, const double *C, kd_lidx nc, int d, const double *zc,
                         kd_lidx *sel, kd_lidx m, int passes, kd_thin_team *team,
                         kd_lidx *n_swaps) {
  kd_err err = KD_OK, lerr = KD_OK;
  double *tx = NULL, *rx = NULL;
  kd_rf_st_ S;
  memset(&S, 0, sizeof S);
  S.r = (kd_rf_){k, C, nc, d, NULL, NULL, 0, nc, NULL};
  S.zc = zc;
  S.sel = sel;
  S.m = m;
  S.passes = passes;
  if (team && (team->size <= 1 || m < 2)) team = NULL; /* (m = 1: the next point is the swap) */
  if (m == 0) goto cleanup;
  if (team) kd_thin_row_share(nc, team->rank, team->size, &S.r.lo, &S.r.hi);
  for (kd_lidx j = 0; j < m; j++) /* the same on every rank */
    KD_CHECK(sel[j] >= 0 && sel[j] < nc, KD_ERR_INTERNAL,
             "refine: coreset indices must be candidates");
  if (nc <= KD_RF_DENSE_MAX) {
    S.r.K = malloc(sizeof(double) * (size_t)(nc * nc));
    S.r.have = calloc((size_t)nc, 1);
  }
  /* one block: gs, diag, the swapped-in column, the step's changes, the scale terms, and the
   * columns of a window's steps */
  const kd_lidx nbuf = team ? KD_RF_WIN : 1, per = 1 + 3 * KD_RF_WIN + 4 * KD_RF_WIN;
  S.gs = calloc((size_t)((5 + nbuf) * nc), sizeof(double));
  if (S.gs) {
    S.diag = S.gs + nc;
    S.cbc = S.gs + 2 * nc;
    S.dl = S.gs + 3 * nc;
    S.vv = S.gs + 4 * nc;
    S.cols = S.gs + 5 * nc;
  }
  S.in = calloc((size_t)nc, 1);
  if (team) {
    tx = malloc(sizeof(double) * (size_t)per);
    rx = malloc(sizeof(double) * (size_t)(per * team->size));
  }
  if ((nc <= KD_RF_DENSE_MAX && (!S.r.K || !S.r.have)) || !S.gs || !S.in || (team && (!tx || !rx)))
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "refine: cannot allocate for %lld candidates",
                      (long long)nc);
  for (kd_lidx j = 0; j < m && lerr == KD_OK; j++) {
    if (S.in[sel[j]])
      lerr = kd_err_set(KD_ERR_INTERNAL, __FILE__, __LINE__,
                        "refine: coreset indices must be distinct candidates");
    S.in[sel[j]] = 1;
  }
  /* the candidates packed once for the columns (more than a Compress leaf's few) */
  if (lerr == KD_OK && S.r.hi - S.r.lo > KD_RF_FULL_MAX)
    lerr = kd_kernel_pack(k, C + (size_t)S.r.lo * d, S.r.hi - S.r.lo, &S.r.Cp);
  if (lerr == KD_OK) lerr = kd_rf_init_(&S.r, sel, m, S.diag, S.gs);
  S.fm = (double)m;
  S.fm2 = S.fm * S.fm;
  const double rm = 1.0 / S.fm;
  S.rm2 = 1.0 / S.fm2;
  S.p2 = (m & (m - 1)) == 0; /* m a power of two: exact reciprocals */
  /* each candidate's scale term |z_c| / m + |K_cc| / m^2 (fixed during the pass) */
  for (kd_lidx c = S.r.lo; c < S.r.hi && lerr == KD_OK; c++)
    S.vv[c] =
        kd_rf_div_(fabs(zc[c]), S.fm, rm, S.p2) + kd_rf_div_(fabs(S.diag[c]), S.fm2, S.rm2, S.p2);
  if (team) {
    KD_TRY(kd_rf_team_(&S, team, lerr, tx, rx));
  } else {
    KD_TRY(lerr);
    KD_TRY(kd_rf_alone_(&S));
  }
cleanup:
  if (n_swaps) *n_swaps = S.swaps;
  free(S.r.K);
  free(S.r.have);
  kd_kernel_packed_free(&S.r.Cp);
  free(S.gs);
  free(S.in);
  free(tx);
  free(rx);
  return err;
}

kd_err kd_thin_refine_team(kd_kernel *k, const double *C, kd_lidx nc, int d, const double *zc,
                           kd_lidx *sel, kd_lidx m, int passes, kd_thin_team *team,
                           kd_lidx *n_swaps) {
  kd_err err = KD_OK, lerr = KD_OK;
  if (!team || team->size <= 1) return kd_rf_run_(k, C, nc, d, zc, sel, m, passes, team, n_swaps);
  const kd_lidx rows = team->refine_rows > 0 ? team->refine_rows : KD_RF_TEAM_ROWS;
  const kd_lidx q0 = nc / rows;
  const int q = q0 < 1 ? 1 : (q0 < team->size ? (int)q0 : team->size);
  if (q == team->size) return kd_rf_run_(k, C, nc, d, zc, sel, m, passes, team, n_swaps);
  /* groups of q consecutive ranks (one rank: every rank alone) run the same pass: the same bits,
   * the evaluations of all groups but the first counted as made by another rank */
  kd_thin_team sub = {MPI_COMM_NULL, 0, 1, 0, 0, 0, 0, MPI_COMM_NULL};
  const uint64_t e0 = kd_kernel_evals(k);
  if (q > 1) {
    lerr = kd_dist_split(team->comm, team->rank / q, &sub.comm);
    KD_TRY(kd_dist_agreed(team->comm, lerr));
    sub.rank = kd_dist_rank(sub.comm);
    sub.size = kd_dist_size(sub.comm);
  }
  lerr = kd_rf_run_(k, C, nc, d, zc, sel, m, passes, q > 1 ? &sub : NULL, n_swaps);
  team->skip += team->rank >= q ? kd_kernel_evals(k) - e0 : sub.skip; /* (rescans: sub.skip) */
  KD_TRY(kd_dist_agreed(team->comm, lerr));
cleanup:
  kd_dist_comm_free(&sub.comm);
  return err;
}

kd_err kd_thin_refine(kd_kernel *k, const double *C, kd_lidx nc, int d, const double *zc,
                      kd_lidx *sel, kd_lidx m, int passes, kd_lidx *n_swaps) {
  return kd_thin_refine_team(k, C, nc, d, zc, sel, m, passes, NULL, n_swaps);
}
