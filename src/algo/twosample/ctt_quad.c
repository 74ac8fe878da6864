/* ctt_quad.c - the quadratic forms of the permutation-type tests: for a pooled sample Z of N rows
 * and nb labellings (label 0: weight wx, 1: weight wy), s_b = w_b^T K w_b, without storing K. The
 * kernel matrix is visited in bt x bt tiles of its upper triangle; tile row ti contributes
 * W_I^T (2 U + D) per labelling (D its diagonal tile times W_I, U its other tiles times W_J, one
 * dgemm each). The caller picks which tile rows a rank computes and adds the rows in tile-row
 * order, so the sums have the same bits whoever computed them. Used by ctt_exact (the full
 * sample), subsample_test (one subsample) and wblock (each block). */
#include <cblas.h>
#include <string.h>

#include "algo/twosample/ctt_impl.h"

/* Rows [j0, j0+bj) of all labellings as weights, row-major bj x nb. */
static void kd_quad_weights_(const kd_ctt_quad *q, int64_t j0, int64_t bj, double *W) {
  const int64_t nb = q->nb;
  for (int64_t j = 0; j < bj; j++)
    for (int64_t b = 0; b < nb; b++) W[j * nb + b] = q->lab[(j0 + j) * nb + b] ? q->wy : q->wx;
}

/* Tile row ti into rowacc[ti * nb ..]; scratch Kt (bt x bt), WI, WJ, U, Dg (bt x nb). Local. */
static kd_err kd_quad_tile_row_(const kd_ctt_quad *q, int64_t ti, double *Kt, double *WI,
                                double *WJ, double *U, double *Dg, double *rowacc) {
  kd_err err = KD_OK;
  const int64_t N = q->N, nb = q->nb, bt = q->tile, nt = (N + bt - 1) / bt;
  const int d = q->d;
  const int64_t i0 = ti * bt, bi = (i0 + bt <= N) ? bt : N - i0;
  kd_quad_weights_(q, i0, bi, WI);
  for (int64_t tj = ti; tj < nt; tj++) {
    const int64_t j0 = tj * bt, bj = (j0 + bt <= N) ? bt : N - j0;
    KD_TRY(
        kd_kernel_eval_block(q->k, q->Z + (size_t)i0 * d, bi, q->Z + (size_t)j0 * d, bj, Kt, bj));
    kd_quad_weights_(q, j0, bj, WJ);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)bi, (int)nb, (int)bj, 1.0, Kt,
                (int)bj, WJ, (int)nb, tj == ti ? 0.0 : (tj == ti + 1 ? 0.0 : 1.0),
                tj == ti ? Dg : U, (int)nb);
  }
  if (ti + 1 >= nt) memset(U, 0, (size_t)bi * nb * sizeof(double)); /* no off-diagonal tile */
  for (int64_t b = 0; b < nb; b++) {
    double acc = 0.0;
    for (int64_t i = 0; i < bi; i++) acc += WI[i * nb + b] * (2.0 * U[i * nb + b] + Dg[i * nb + b]);
    rowacc[ti * nb + b] = acc;
  }
cleanup:
  return err;
}

int64_t kd_ctt_quad_ws_size(const kd_ctt_quad *q) {
  return q->tile * q->tile + 4 * q->tile * q->nb;
}

kd_err kd_ctt_quad_rows(const kd_ctt_quad *q, int rank, int p, const char *what, double *ws,
                        double *rowacc) {
  kd_err err = KD_OK;
  double *own = NULL;
  const int64_t nb = q->nb, bt = q->tile, nt = (q->N + bt - 1) / bt;
  if (!ws) {
    KD_ALLOC(own, kd_ctt_quad_ws_size(q));
    ws = own;
  }
  double *Kt = ws, *WI = Kt + bt * bt, *WJ = WI + bt * nb, *U = WJ + bt * nb, *Dg = U + bt * nb;
  for (int64_t ti = 0; ti < nt; ti++) {
    const int64_t r = ti < nt - 1 - ti ? ti : nt - 1 - ti;
    if (r % p != rank) continue;
    if (what) KD_TRY(kd_interrupt_check(what)); /* polled once per tile row */
    KD_TRY(kd_quad_tile_row_(q, ti, Kt, WI, WJ, U, Dg, rowacc));
  }
cleanup:
  free(own);
  return err;
}

kd_err kd_ctt_quad_local(const kd_ctt_quad *q, double *ws, double *rowacc, double *stat2) {
  kd_err err = KD_OK;
  const int64_t nb = q->nb, nt = (q->N + q->tile - 1) / q->tile;
  KD_TRY(kd_ctt_quad_rows(q, 0, 1, NULL, ws, rowacc));
  for (int64_t b = 0; b < nb; b++) {
    double acc = 0.0;
    for (int64_t ti = 0; ti < nt; ti++) acc += rowacc[ti * nb + b];
    stat2[b] = acc;
  }
cleanup:
  return err;
}
