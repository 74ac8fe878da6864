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
  double *K;      /* nc x nc (column j at K + j nc, valid where have[j]) or NULL */
  char *have;     /* nc flags, with K */
  kd_lidx lo, hi; /* the candidates this rank evaluates (all of them on one rank) */
} kd_rf_;

/* *col[c] = k(x_c, x_j) for the candidates c in [lo, hi): the kept column (computed on first
 * use), else evaluated into buf */
static kd_err kd_rf_col_(kd_rf_ *r, kd_lidx j, double *buf, const double **col) {
  kd_err err = KD_OK;
  double *dst = r->K ? r->K + (size_t)j * r->nc : buf;
  *col = dst;
  if (r->K && r->have[j]) goto cleanup;
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

/* One step's agreement over a team: each rank sends [error, best, bc, scale] over its candidates
 * and, from the owner of the next point to replace (nx), its gs and diag (0 elsewhere); on return
 * the lowest best (the first rank on ties: the lowest candidate, as one scan picks it), the
 * largest scale, nxv = {gs, diag} of nx. A rank's error is agreed. Collective. */
static kd_err kd_rf_team_step_(const kd_thin_team *t, const kd_rf_ *r, kd_err lerr, kd_lidx nx,
                               const double *gs, const double *diag, double *best, kd_lidx *bc,
                               double *scale, double *nxv, double *buf) {
  kd_err err = KD_OK;
  const int own = nx >= r->lo && nx < r->hi;
  const double mine[6] = {(double)lerr,      *best, (double)*bc, *scale, own ? gs[nx] : 0,
                          own ? diag[nx] : 0};
  int bad = 0;
  KD_TRY(kd_dist_allgather(t->comm, mine, 6, buf));
  /* from the first rank's: a later rank wins only with a strictly lower value, so that exact
   * ties (duplicate candidates) go to the lowest candidate on every rank, as one scan does */
  *best = buf[1];
  *bc = (kd_lidx)buf[2];
  for (int q = 0; q < t->size; q++) {
    const double *v = buf + 6 * q;
    kd_lidx lo, hi;
    kd_thin_row_share(r->nc, q, t->size, &lo, &hi);
    bad |= v[0] != 0.0;
    if (v[1] < *best) {
      *best = v[1];
      *bc = (kd_lidx)v[2];
    }
    if (v[3] > *scale) *scale = v[3];
    if (nx >= lo && nx < hi) {
      nxv[0] = v[4];
      nxv[1] = v[5];
    }
  }
  if (bad) KD_TRY(kd_dist_agreed(t->comm, lerr));
cleanup:
  return err;
}

static kd_err kd_rf_run_(kd_kernel *k, const double *C, kd_lidx nc, int d, const double *zc,
                         kd_lidx *sel, kd_lidx m, int passes, kd_thin_team *team,
                         kd_lidx *n_swaps) {
  kd_err err = KD_OK, lerr = KD_OK;
  double *gs = NULL, *diag = NULL, *csi = NULL, *cbc = NULL, *buf = NULL, *dl = NULL, *vv = NULL;
  char *in = NULL;
  kd_lidx swaps = 0;
  kd_rf_ r = {k, C, nc, d, NULL, NULL, 0, nc};
  if (team && (team->size <= 1 || m < 2)) team = NULL; /* (m = 1: the next point is the swap) */
  if (m == 0) goto cleanup;
  if (team) kd_thin_row_share(nc, team->rank, team->size, &r.lo, &r.hi);
  for (kd_lidx j = 0; j < m; j++) /* the same on every rank */
    KD_CHECK(sel[j] >= 0 && sel[j] < nc, KD_ERR_INTERNAL,
             "refine: coreset indices must be candidates");
  if (nc <= KD_RF_DENSE_MAX) {
    r.K = malloc(sizeof(double) * (size_t)(nc * nc));
    r.have = calloc((size_t)nc, 1);
  }
  /* one block: gs, diag, the two columns' buffers, the step's changes, the scale terms */
  gs = calloc((size_t)(6 * nc), sizeof(double));
  if (gs) {
    diag = gs + nc;
    csi = gs + 2 * nc;
    cbc = gs + 3 * nc;
    dl = gs + 4 * nc;
    vv = gs + 5 * nc;
  }
  in = calloc((size_t)nc, 1);
  buf = calloc((size_t)(6 * (team ? team->size : 1)), sizeof(double));
  if ((nc <= KD_RF_DENSE_MAX && (!r.K || !r.have)) || !gs || !in || !buf)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "refine: cannot allocate for %lld candidates",
                      (long long)nc);
  for (kd_lidx j = 0; j < m && lerr == KD_OK; j++) {
    if (in[sel[j]])
      lerr = kd_err_set(KD_ERR_INTERNAL, __FILE__, __LINE__,
                        "refine: coreset indices must be distinct candidates");
    in[sel[j]] = 1;
  }
  if (lerr == KD_OK) lerr = kd_rf_init_(&r, sel, m, diag, gs);
  /* xs = {gs, diag} of the point to replace: on a team only its owner has them; each step's
   * agreement brings those of the next point (sel[i + 1] does not change in step i when m > 1),
   * and every rank applies the step's swap to them as the owner does (k(a, b) = k(b, a) and a
   * kernel value does not depend on the call that computes it: the same bits) */
  double xs[2] = {0.0, 0.0}, one = 0.0;
  kd_lidx nb0 = 0;
  if (team) {
    KD_TRY(kd_rf_team_step_(team, &r, lerr, sel[0], gs, diag, &one, &nb0, &one, xs, buf));
  } else {
    KD_TRY(lerr);
  }
  const double fm = (double)m, fm2 = fm * fm, rm = 1.0 / fm, rm2 = 1.0 / fm2;
  const int p2 = (m & (m - 1)) == 0; /* m a power of two: exact reciprocals */
  /* each candidate's scale term |z_c| / m + |K_cc| / m^2 (fixed during the pass) */
  for (kd_lidx c = r.lo; c < r.hi; c++)
    vv[c] = kd_rf_div_(fabs(zc[c]), fm, rm, p2) + kd_rf_div_(fabs(diag[c]), fm2, rm2, p2);
  kd_lidx last_swap = -1; /* sweep index of the last replacement: stop after a quiet sweep */
  for (kd_lidx it = 0; it < (kd_lidx)passes * m; it++) {
    kd_lidx i = it % m;
    if (i == 0 && it > 0 && last_swap < it - m) break;
    const kd_lidx si = sel[i], nx = sel[(i + 1) % m];
    if (!team) {
      xs[0] = gs[si];
      xs[1] = diag[si];
    }
    double best = 0.0, scale = 0.0, nxv[2] = {0.0, 0.0};
    kd_lidx bc = si;
    const double *ci = csi, *cb = cbc;
    lerr = kd_rf_col_(&r, si, csi, &ci);
    if (lerr == KD_OK)
      kd_rf_deltas_(r.lo, r.hi, gs, ci, diag, zc, zc[si], xs[0], xs[1], fm, fm2, rm2, p2, dl);
    /* the first strict minimum over the candidates not in the coreset, and the largest scale
     * term (NaN never taken, as fmax skips it), in locals that stay in registers (best and scale
     * have their address taken) */
    double lb = best, lsc = scale;
    kd_lidx lbc = bc;
    for (kd_lidx c = r.lo; c < r.hi && lerr == KD_OK; c++) {
      const int out = !in[c], better = out & (dl[c] < lb);
      lb = better ? dl[c] : lb;
      lbc = better ? c : lbc;
      lsc = out & (vv[c] > lsc) ? vv[c] : lsc;
    }
    best = lb;
    bc = lbc;
    scale = lsc;
    if (team)
      KD_TRY(kd_rf_team_step_(team, &r, lerr, nx, gs, diag, &best, &bc, &scale, nxv, buf));
    else
      KD_TRY(lerr);
    /* only strict improvements beyond round-off are taken, so the MMD never increases */
    const int swap = bc != si && best < -1e-13 * scale;
    if (swap) {
      lerr = kd_rf_col_(&r, bc, cbc, &cb);
      for (kd_lidx c = r.lo; c < r.hi && lerr == KD_OK; c++) gs[c] += cb[c] - ci[c];
      if (!team) KD_TRY(lerr); /* a team agrees it at the next step (or below) */
      in[si] = 0;
      in[bc] = 1;
      sel[i] = bc;
      swaps++;
      last_swap = it;
    }
    if (team) { /* the next point's gs, updated as its owner updates it */
      const double *xn = C + (size_t)nx * (size_t)d;
      xs[0] = nxv[0];
      if (swap)
        xs[0] += kd_kernel_eval(k, xn, C + (size_t)bc * (size_t)d) -
                 kd_kernel_eval(k, xn, C + (size_t)si * (size_t)d);
      xs[1] = nxv[1];
    }
  }
  if (team) KD_TRY(kd_dist_agreed(team->comm, lerr));
cleanup:
  if (n_swaps) *n_swaps = swaps;
  free(r.K);
  free(r.have);
  free(gs), free(buf);
  free(in);
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
  if (team->rank >= q) team->skip += kd_kernel_evals(k) - e0;
  KD_TRY(kd_dist_agreed(team->comm, lerr));
cleanup:
  kd_dist_comm_free(&sub.comm);
  return err;
}

kd_err kd_thin_refine(kd_kernel *k, const double *C, kd_lidx nc, int d, const double *zc,
                      kd_lidx *sel, kd_lidx m, int passes, kd_lidx *n_swaps) {
  return kd_thin_refine_team(k, C, nc, d, zc, sel, m, passes, NULL, n_swaps);
}
