/* kernel_sym.c - mat-vecs that use k(a, b) = k(b, a): each pair is evaluated once and feeds both
 * of its sums.
 *
 * kd_kernel_matvec sums row i in 8 lanes (column j to lane j mod 8, by fma, in increasing j) and
 * adds the lanes as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) (kernel_block.c). The
 * squared-distance families give k(a, b) and k(b, a) the same bits ((a - b)^2 = (b - a)^2
 * exactly), so the value of the pair (a_i, b_j) can go to row i's lane j mod 8 and to row j's lane
 * i mod 8 of the transposed product. Done in increasing order on both sides, the lanes and hence
 * both results are bit for bit those of the two kd_kernel_matvec calls, from half the
 * evaluations:
 *   - kd_kernel_matvec_pair: ya = K(A, B) wb and yb = K(B, A) wa, the row lanes as
 *     kd_kernel_matvec keeps them, the column lanes lane-major ([8][nb]: contiguous columns);
 *   - kd_kernel_matvec_sym: y = K(A, A) w over the panels on and above the diagonal. Rows are
 *     taken in blocks of one panel's width: the rows of block b first receive, as column lanes,
 *     what every earlier block sent them (columns j below the block, in increasing j), then run
 *     their own row lanes from the block's first column on, sending column lanes to the panels
 *     after it. One lane state per row ([8][n], lane-major) serves both. */
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel_impl.h"

int kd_kernel_matvec_pair_ok(const kd_kernel *k) {
  return k && k->p.type != KD_KERNEL_STEIN && k->fam->acc == KD_KACC_SQDIST && !k->ls_pending;
}

/* c[j] = fma(v[j], w, c[j]), j < n: one row's values into its columns' lane (i mod 8). */
KD_KCLONES static void kd_ksym_col_lanes_(kd_lidx n, const double *restrict v, double w,
                                          double *restrict c) {
  for (kd_lidx j = 0; j < n; j++) c[j] = fma(v[j], w, c[j]);
}

/* y[j] = ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7)) of the lane-major lanes c[l ld + j]. */
static void kd_ksym_cols_sum_(kd_lidx n, const double *c, kd_lidx ld, double *y) {
  for (kd_lidx j = 0; j < n; j++) {
    const double *l = c + j;
    y[j] = ((l[0] + l[ld]) + (l[2 * ld] + l[3 * ld])) +
           ((l[4 * ld] + l[5 * ld]) + (l[6 * ld] + l[7 * ld]));
  }
}

/* The columns B (nb x d) packed as kd_kernel_matvec packs them, their boxes and their weights
 * (w == NULL: 1; padding 0), in the kernel's scratch after `before` doubles, followed by `after`
 * more doubles; *Bp, *box, *wp and *rest point into it. */
typedef struct {
  double *ws, *Bp, *box, *wp, *rest;
  kd_lidx P, npan;
} kd_ksym_set_;

static kd_err kd_ksym_pack_(kd_kernel *k, const double *B, kd_lidx nb, const double *w,
                            size_t after, kd_ksym_set_ *pk) {
  kd_err err = KD_OK;
  const int d = k->d;
  const kd_lidx P = kd_kernel_panel_(d), npan = (nb + P - 1) / P;
  const kd_lidx nbp = kd_kernel_packed_size_(nb, P);
  const size_t sc = (size_t)3 * KD_KERNEL_MR * (size_t)P; /* values ws (2 MR P), out (MR P) */
  KD_TRY(kd_kernel_ws_(
      k, sc + (size_t)(d + 1) * (size_t)nbp + (size_t)(2 * d) * (size_t)npan + after, &pk->ws));
  pk->P = P;
  pk->npan = npan;
  pk->Bp = pk->ws + sc;
  pk->wp = pk->Bp + (size_t)d * (size_t)nbp;
  pk->box = pk->wp + nbp;
  pk->rest = pk->box + (size_t)(2 * d) * (size_t)npan;
  kd_kernel_pack_panels(d, B, nb, P, pk->Bp);
  if (k->fam->finish_normal) kd_kernel_panel_boxes_(d, pk->Bp, nb, P, pk->box);
  for (kd_lidx j = 0; j < nbp; j++) pk->wp[j] = j < nb ? (w ? w[j] : 1.0) : 0.0;
cleanup:
  return err;
}

/* Rows [i0, i1) of A against panel pj of the packed set: their row lanes (p + 8 (i - i0), the
 * layout of kd_kernel_lanes_rows_) and, when cl is not NULL, their values into the column
 * lanes cl[(i mod 8) ld + j] of the panel's columns j, with the rows' weights wa (NULL: 1). */
static void kd_ksym_panel_(const kd_kernel *k, const double *A, kd_lidx i0, kd_lidx i1,
                           const kd_ksym_set_ *pk, kd_lidx pj, kd_lidx nb, double *p,
                           const double *wa, double *cl, kd_lidx ld) {
  const int d = k->d;
  const kd_lidx P = pk->P, j0 = pj * P, nc = nb - j0 < P ? nb - j0 : P, npad = (nc + 15) / 16 * 16;
  const double *Bpj = pk->Bp + (size_t)d * (size_t)j0;
  const double *bx = k->fam->finish_normal ? pk->box + 2 * d * pj : NULL;
  double *vws = pk->ws, *out = pk->ws + 2 * KD_KERNEL_MR * P;
  for (kd_lidx i = i0; i < i1;) {
    const int nr = kd_kernel_panel_values_(k, A, i1, i, Bpj, bx, npad, vws, out);
    kd_kernel_lanes_rows_(nr, npad, out, pk->wp + j0, p + (i - i0) * 8);
    if (cl)
      for (int r = 0; r < nr; r++)
        kd_ksym_col_lanes_(nc, out + r * npad, wa ? wa[i + r] : 1.0, cl + ((i + r) % 8) * ld + j0);
    i += nr;
  }
}

enum { KD_KSYM_ROWS = 64 }; /* rows of A per block of the pair form (their lanes stay in L1) */

kd_err kd_kernel_matvec_pair(kd_kernel *k, const double *A, kd_lidx na, const double *B, kd_lidx nb,
                             const double *wa, const double *wb, double *ya, double *yb) {
  kd_err err = KD_OK;
  kd_ksym_set_ pk;
  KD_CHECK(kd_kernel_matvec_pair_ok(k), KD_ERR_ARG,
           "kernel: the symmetric mat-vec needs a squared-distance kernel (not Stein)");
  KD_CHECK(na >= 0 && nb >= 0 && (na == 0 || (A && ya)) && (nb == 0 || (B && yb)), KD_ERR_ARG,
           "kernel: bad blocks for the symmetric mat-vec");
  if (na == 0 || nb == 0) {
    if (na) memset(ya, 0, sizeof(double) * (size_t)na);
    if (nb) memset(yb, 0, sizeof(double) * (size_t)nb);
    goto cleanup;
  }
  KD_TRY(kd_ksym_pack_(k, B, nb, wb, (size_t)KD_KSYM_ROWS * 8 + (size_t)8 * (size_t)nb, &pk));
  double *lanes = pk.rest, *cl = lanes + KD_KSYM_ROWS * 8;
  memset(cl, 0, sizeof(double) * 8 * (size_t)nb);
  for (kd_lidx i0 = 0; i0 < na; i0 += KD_KSYM_ROWS) {
    const kd_lidx i1 = na - i0 < KD_KSYM_ROWS ? na : i0 + KD_KSYM_ROWS;
    memset(lanes, 0, sizeof(double) * KD_KSYM_ROWS * 8);
    for (kd_lidx pj = 0; pj < pk.npan; pj++)
      kd_ksym_panel_(k, A, i0, i1, &pk, pj, nb, lanes, wa, cl, nb);
    kd_kernel_lanes_sum_(i1 - i0, lanes, 0.0, ya + i0);
  }
  kd_ksym_cols_sum_(nb, cl, nb, yb);
  k->evals += (uint64_t)na * (uint64_t)nb;
cleanup:
  return err;
}

kd_err kd_kernel_matvec_sym(kd_kernel *k, const double *A, kd_lidx n, const double *w, double *y) {
  kd_err err = KD_OK;
  kd_ksym_set_ pk;
  KD_CHECK(kd_kernel_matvec_pair_ok(k), KD_ERR_ARG,
           "kernel: the symmetric mat-vec needs a squared-distance kernel (not Stein)");
  KD_CHECK(n >= 0 && (n == 0 || (A && y)), KD_ERR_ARG,
           "kernel: bad block for the symmetric mat-vec");
  if (n == 0) goto cleanup;
  KD_TRY(
      kd_ksym_pack_(k, A, n, w, (size_t)8 * (size_t)n + (size_t)kd_kernel_panel_(k->d) * 8, &pk));
  const kd_lidx P = pk.P;
  double *cl = pk.rest, *lanes = cl + (size_t)8 * (size_t)n;
  memset(cl, 0, sizeof(double) * 8 * (size_t)n);
  uint64_t evals = 0;
  for (kd_lidx b = 0; b < pk.npan; b++) {
    const kd_lidx r0 = b * P, r1 = n - r0 < P ? n : r0 + P;
    /* the lanes the earlier blocks sent these rows, as their row lanes continue from them */
    for (kd_lidx i = r0; i < r1; i++)
      for (int l = 0; l < 8; l++) lanes[(i - r0) * 8 + l] = cl[(size_t)l * (size_t)n + i];
    kd_ksym_panel_(k, A, r0, r1, &pk, b, n, lanes, NULL, NULL, 0);
    for (kd_lidx pj = b + 1; pj < pk.npan; pj++)
      kd_ksym_panel_(k, A, r0, r1, &pk, pj, n, lanes, w, cl, n);
    kd_kernel_lanes_sum_(r1 - r0, lanes, 0.0, y + r0);
    evals += (uint64_t)(r1 - r0) * (uint64_t)(n - r0);
  }
  k->evals += evals;
cleanup:
  return err;
}
