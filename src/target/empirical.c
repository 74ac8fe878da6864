/* empirical.c - an empirical target: the weighted point set (y_j, v_j), j < N, with rows split in
 * contiguous blocks over the ranks (weights v from the point set, or 1/N when uniform):
 *   z(x) = sum_j v_j k(x, y_j),   zz = sum_i sum_j v_i v_j k(y_i, y_j).
 * z at a distributed X: every rank keeps its X rows and the target blocks travel around the ring
 * (p - 1 shifts of one block of rows and weights), so each rank does N n_local kernel evaluations
 * and holds at most two target blocks: O(N m / p) work and O(N d / p) memory per rank.
 * zz: the same ring over half of the block pairs (steps 0 .. p/2), using symmetry: block pairs at
 * ring distance s and p - s are the same pair, the diagonal block uses its upper tile triangle, and
 * at distance p/2 (p even) the two ranks of a pair split it by rows. Work N^2 / (2p) per rank.
 * Contributions of the blocks are added with Neumaier compensation so the result depends on the
 * rank count only at the level of round-off inside one kernel mat-vec. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist_impl.h"
#include "target/target_impl.h"

enum { KD_EMP_TILE = 1024 }; /* rows per tile of the diagonal block in zz */

static void kd_neu_add_(double *s, double *c, double v) {
  double t = *s + v;
  if (fabs(*s) >= fabs(v))
    *c += (*s - t) + v;
  else
    *c += (v - t) + *s;
  *s = t;
}

/* Largest block of the target over all ranks (no traffic: offsets are known everywhere). */
static kd_lidx kd_emp_max_block_(const kd_pointset *pts) {
  int p = kd_dist_size(kd_pointset_comm(pts));
  kd_lidx mx = 0;
  for (int r = 0; r < p; r++) {
    kd_lidx nb = (kd_lidx)(kd_pointset_rank_offset(pts, r + 1) - kd_pointset_rank_offset(pts, r));
    if (nb > mx) mx = nb;
  }
  return mx;
}

/* Ring buffers: cur = [rows (nl*d) | weights (nl)] of the local block, nxt of the same capacity. */
static kd_err kd_emp_buffers_(const kd_target *t, double **cur, double **nxt, int64_t *cap,
                              int64_t *ncur) {
  kd_err err = KD_OK;
  const kd_pointset *pts = t->pts;
  const int d = kd_pointset_dim(pts);
  const kd_lidx nl = kd_pointset_n_local(pts);
  const double *w = kd_pointset_weights_const(pts);
  *cap = (int64_t)kd_emp_max_block_(pts) * (d + 1);
  KD_ALLOC(*cur, *cap);
  KD_ALLOC(*nxt, *cap);
  if (nl) memcpy(*cur, kd_pointset_rows_const(pts), (size_t)nl * d * sizeof(double));
  for (kd_lidx i = 0; i < nl; i++)
    (*cur)[nl * d + i] = w ? w[i] : 1.0 / (double)kd_pointset_n_global(pts);
  *ncur = (int64_t)nl * (d + 1);
cleanup:
  return err;
}

kd_err kd_target_emp_embed_(kd_target *t, const double *Xl, kd_lidx nl, double *z) {
  kd_err err = KD_OK, lerr = KD_OK;
  MPI_Comm comm = t->comm;
  const int p = kd_dist_size(comm), d = kd_pointset_dim(t->pts);
  double *cur = NULL, *nxt = NULL, *tmp = NULL, *comp = NULL;
  int64_t cap = 0, ncur = 0, nr = 0;
  lerr = kd_emp_buffers_(t, &cur, &nxt, &cap, &ncur);
  if (!lerr) {
    tmp = calloc((size_t)nl + 1, sizeof(double));
    comp = calloc((size_t)nl + 1, sizeof(double));
    if (!tmp || !comp)
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "target: cannot allocate %lld doubles",
                        (long long)nl);
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  for (kd_lidx i = 0; i < nl; i++) z[i] = 0.0;
  for (int s = 0; s < p; s++) {
    const kd_lidx nb = (kd_lidx)(ncur / (d + 1));
    if (!lerr && nl > 0 && nb > 0) {
      lerr = kd_kernel_matvec(t->k, Xl, nl, cur, nb, cur + nb * d, 0.0, tmp);
      if (!lerr)
        for (kd_lidx i = 0; i < nl; i++) kd_neu_add_(&z[i], &comp[i], tmp[i]);
    }
    if (s + 1 < p) {
      KD_TRY(kd_dist_ring_shift(comm, cur, ncur, nxt, cap, &nr));
      double *sw = cur;
      cur = nxt;
      nxt = sw;
      ncur = nr;
    }
  }
  for (kd_lidx i = 0; i < nl; i++) z[i] += comp[i];
  KD_TRY(kd_dist_agreed(comm, lerr));
cleanup:
  free(cur);
  free(nxt);
  free(tmp);
  free(comp);
  return err;
}

kd_err kd_target_emp_embed_rows_(kd_target *t, const double *X, kd_lidx n, double *z) {
  kd_err err = KD_OK, lerr = KD_OK;
  MPI_Comm comm = t->comm;
  const kd_pointset *pts = t->pts;
  const kd_lidx nl = kd_pointset_n_local(pts);
  const double *wp = kd_pointset_weights_const(pts);
  double *wu = NULL;
  if (!wp) {
    wu = malloc(((size_t)nl + 1) * sizeof(double));
    if (!wu)
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "target: cannot allocate weights");
    else
      for (kd_lidx i = 0; i < nl; i++) wu[i] = 1.0 / (double)kd_pointset_n_global(pts);
  }
  for (kd_lidx i = 0; i < n; i++) z[i] = 0.0;
  if (!lerr && nl > 0 && n > 0)
    lerr = kd_kernel_matvec(t->k, X, n, kd_pointset_rows_const(pts), nl, wp ? wp : wu, 0.0, z);
  KD_TRY(kd_dist_agreed(comm, lerr));
  for (kd_lidx off = 0; off < n; off += (kd_lidx)1 << 28) {
    kd_lidx len = n - off < ((kd_lidx)1 << 28) ? n - off : ((kd_lidx)1 << 28);
    KD_TRY(kd_dist_sum(comm, z + off, (int)len));
  }
cleanup:
  free(wu);
  return err;
}

/* Add c * sum_i wa_i (K(A, B) wb)_i to (*acc, *comp); y is scratch of na doubles. */
static kd_err kd_emp_quad_(kd_kernel *k, const double *A, const double *wa, kd_lidx na,
                           const double *B, const double *wb, kd_lidx nb, double c, double *y,
                           double *acc, double *comp) {
  kd_err err = KD_OK;
  if (na <= 0 || nb <= 0) return KD_OK;
  KD_TRY(kd_kernel_matvec(k, A, na, B, nb, wb, 0.0, y));
  double s = 0.0;
  for (kd_lidx i = 0; i < na; i++) s += wa[i] * y[i];
  kd_neu_add_(acc, comp, c * s);
cleanup:
  return err;
}

kd_err kd_target_emp_self_(kd_target *t, double *zz) {
  kd_err err = KD_OK, lerr = KD_OK;
  MPI_Comm comm = t->comm;
  const int p = kd_dist_size(comm), rank = kd_dist_rank(comm), d = kd_pointset_dim(t->pts);
  double *loc = NULL, *cur = NULL, *nxt = NULL, *y = NULL;
  int64_t cap = 0, nloc = 0, ncur = 0, nr = 0;
  double acc = 0.0, comp = 0.0;
  lerr = kd_emp_buffers_(t, &loc, &cur, &cap, &nloc);
  if (!lerr) {
    memcpy(cur, loc, (size_t)nloc * sizeof(double));
    ncur = nloc;
    y = calloc((size_t)(cap / (d + 1)) + 1, sizeof(double));
    if (!y) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "target: cannot allocate scratch");
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  const kd_lidx nl = (kd_lidx)(nloc / (d + 1));
  const double *R = loc, *W = loc + nl * d;
  /* step 0: the diagonal block, upper tile triangle */
  for (kd_lidx i0 = 0; i0 < nl && !lerr; i0 += KD_EMP_TILE) {
    kd_lidx ni = nl - i0 < KD_EMP_TILE ? nl - i0 : KD_EMP_TILE, i1 = i0 + ni;
    lerr = kd_emp_quad_(t->k, R + i0 * d, W + i0, ni, R + i0 * d, W + i0, ni, 1.0, y, &acc, &comp);
    if (!lerr)
      lerr = kd_emp_quad_(t->k, R + i0 * d, W + i0, ni, R + i1 * d, W + i1, nl - i1, 2.0, y, &acc,
                          &comp);
  }
  nxt = malloc((size_t)cap * sizeof(double) + 8);
  if (!nxt && !lerr) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "target: cannot allocate");
  KD_TRY(kd_dist_agreed(comm, lerr));
  /* steps 1 .. p/2: the block of rank (rank - s) mod p */
  for (int s = 1; 2 * s <= p; s++) {
    KD_TRY(kd_dist_ring_shift(comm, cur, ncur, nxt, cap, &nr));
    double *sw = cur;
    cur = nxt;
    nxt = sw;
    ncur = nr;
    const kd_lidx nb = (kd_lidx)(ncur / (d + 1));
    const double *B = cur, *WB = cur + nb * d;
    if (lerr) continue;
    if (2 * s < p) {
      lerr = kd_emp_quad_(t->k, R, W, nl, B, WB, nb, 2.0, y, &acc, &comp);
    } else if (rank < p / 2) { /* pair (rank, rank + p/2): first half of my rows */
      lerr = kd_emp_quad_(t->k, R, W, nl / 2, B, WB, nb, 2.0, y, &acc, &comp);
    } else { /* pair (rank - p/2, rank): second half of the partner's rows */
      kd_lidx h = nb / 2;
      lerr = kd_emp_quad_(t->k, B + h * d, WB + h, nb - h, R, W, nl, 2.0, y, &acc, &comp);
    }
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  double v[2] = {acc, comp};
  KD_TRY(kd_dist_sum(comm, v, 2));
  double res = v[0] + v[1];
  KD_TRY(kd_dist_bcast(comm, &res, (int64_t)sizeof res, 0)); /* identical bits on every rank */
  *zz = res;
cleanup:
  free(loc);
  free(cur);
  free(nxt);
  free(y);
  return err;
}
