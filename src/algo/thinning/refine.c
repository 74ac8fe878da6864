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

/* The kernel values the pass needs: columns k(., x_j) of the candidates' Gram matrix, for the
 * coreset's points and the candidates swapped in. When the matrix is small they are kept once
 * computed (column j at K + j nc, marked in `have`: the pass needs m columns plus one per swap,
 * far fewer than all nc); otherwise each is evaluated when needed, so the memory is O(nc) and not
 * O(nc^2) (2^g sqrt(n) candidates: the dense matrix would be 8 * 4^g * n bytes). Both give the
 * same bits: a kernel value does not depend on the block it is computed in, and k(a, b) =
 * k(b, a) bit for bit (docs/kernels.md). */
enum { KD_RF_DENSE_MAX = 2048 }; /* 32 MiB at most, of which only the columns used are touched */

typedef struct {
  kd_kernel *k;
  const double *C;
  kd_lidx nc;
  int d;
  double *K;  /* nc x nc (column j at K + j nc, valid where have[j]) or NULL */
  char *have; /* nc flags, with K */
} kd_rf_;

/* *col[c] = k(x_c, x_j) for every candidate c: the kept column (computed on first use), else
 * evaluated into buf */
static kd_err kd_rf_col_(kd_rf_ *r, kd_lidx j, double *buf, const double **col) {
  kd_err err = KD_OK;
  double *dst = r->K ? r->K + (size_t)j * r->nc : buf;
  *col = dst;
  if (r->K && r->have[j]) goto cleanup;
  KD_TRY(kd_kernel_eval_block(r->k, r->C, r->nc, r->C + (size_t)j * r->d, 1, dst, 1));
  if (r->K) r->have[j] = 1;
cleanup:
  return err;
}

/* x / q, by the exact reciprocal when q is a power of two (the same bits: x / q and x * (1 / q)
 * are the same real number rounded once); divisions are most of the pass otherwise */
static inline double kd_rf_div_(double x, double q, double rq, int exact) {
  return exact ? x * rq : x / q;
}

/* diag[c] = k(x_c, x_c); gs[c] = sum_j k(x_c, x_sel[j]) in the order j = 0..m-1; with kept
 * columns, the columns of the coreset's points are kept on the way */
static kd_err kd_rf_init_(kd_rf_ *r, const kd_lidx *sel, kd_lidx m, double *diag, double *gs) {
  kd_err err = KD_OK;
  double *S = NULL, *blk = NULL;
  const kd_lidx nc = r->nc, R = 256;
  KD_ALLOC(S, (size_t)m * r->d);
  KD_ALLOC(blk, (size_t)R * m);
  for (kd_lidx j = 0; j < m; j++) memcpy(S + j * r->d, r->C + sel[j] * r->d, sizeof(double) * r->d);
  for (kd_lidx c0 = 0; c0 < nc; c0 += R) {
    const kd_lidx nr = nc - c0 < R ? nc - c0 : R;
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

kd_err kd_thin_refine(kd_kernel *k, const double *C, kd_lidx nc, int d, const double *zc,
                      kd_lidx *sel, kd_lidx m, int passes, kd_lidx *n_swaps) {
  kd_err err = KD_OK;
  double *gs = NULL, *diag = NULL, *csi = NULL, *cbc = NULL;
  char *in = NULL;
  kd_lidx swaps = 0;
  kd_rf_ r = {k, C, nc, d, NULL, NULL};
  if (m == 0) goto cleanup;
  if (nc <= KD_RF_DENSE_MAX) {
    KD_ALLOC(r.K, nc * nc);
    KD_ALLOC(r.have, nc);
  }
  KD_ALLOC(gs, nc);
  KD_ALLOC(diag, nc);
  KD_ALLOC(csi, nc);
  KD_ALLOC(cbc, nc);
  KD_ALLOC(in, nc);
  for (kd_lidx j = 0; j < m; j++) {
    KD_CHECK(sel[j] >= 0 && sel[j] < nc && !in[sel[j]], KD_ERR_INTERNAL,
             "refine: coreset indices must be distinct candidates");
    in[sel[j]] = 1;
  }
  KD_TRY(kd_rf_init_(&r, sel, m, diag, gs));
  const double fm = (double)m, fm2 = fm * fm, rm = 1.0 / fm, rm2 = 1.0 / fm2;
  const int p2 = (m & (m - 1)) == 0; /* m a power of two: exact reciprocals */
  kd_lidx last_swap = -1; /* sweep index of the last replacement: stop after a quiet sweep */
  for (kd_lidx it = 0; it < (kd_lidx)passes * m; it++) {
    kd_lidx i = it % m;
    if (i == 0 && it > 0 && last_swap < it - m) break;
    const kd_lidx si = sel[i];
    double best = 0.0, scale = 0.0;
    kd_lidx bc = si;
    const double *ci, *cb;
    KD_TRY(kd_rf_col_(&r, si, csi, &ci));
    for (kd_lidx c = 0; c < nc; c++) {
      if (in[c]) continue;
      double dt = 2.0 * (gs[c] - ci[c]) + diag[c] - 2.0 * gs[si] + diag[si];
      double delta = -2.0 / fm * (zc[c] - zc[si]) + kd_rf_div_(dt, fm2, rm2, p2);
      if (delta < best) {
        best = delta;
        bc = c;
      }
      /* fmax(scale, v) for v >= 0 (or NaN, which fmax skips too), without the libm call */
      const double v =
          kd_rf_div_(fabs(zc[c]), fm, rm, p2) + kd_rf_div_(fabs(diag[c]), fm2, rm2, p2);
      if (v > scale) scale = v;
    }
    /* only strict improvements beyond round-off are taken, so the MMD never increases */
    if (bc != si && best < -1e-13 * scale) {
      KD_TRY(kd_rf_col_(&r, bc, cbc, &cb));
      for (kd_lidx c = 0; c < nc; c++) gs[c] += cb[c] - ci[c];
      in[si] = 0;
      in[bc] = 1;
      sel[i] = bc;
      swaps++;
      last_swap = it;
    }
  }
cleanup:
  if (n_swaps) *n_swaps = swaps;
  free(r.K);
  free(r.have);
  free(gs), free(diag), free(csi), free(cbc);
  free(in);
  return err;
}
