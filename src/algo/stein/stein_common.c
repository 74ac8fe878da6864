/* stein_common.c - the distributed simplex QP by pairwise Frank-Wolfe and the systematic
 * resampling of the score-based family (stein_impl.h).
 *
 * Pairwise Frank-Wolfe (Lacoste-Julien & Jaggi 2015) on f(w) = 1/2 w^T K w - z^T w over the simplex
 * of all n rows, gradient g = K w - z: the step moves weight gamma from the away atom
 * a = argmax_{w_i > 0} g_i to the vertex v = argmin_i g_i, with the exact line search
 *   gamma = min(w_a, (g_a - g_v) / (K_vv + K_aa - 2 K_va)),
 * and every row updates (K w)_i += gamma (k(x_i, x_v) - k(x_i, x_a)). Each step costs two
 * reductions (argmin, argmax: ties to the lowest index), one sum (w_a), the gather of two rows and
 * 2 n kernel evaluations; every per-row value follows the same recurrence on any rank, so the
 * weights are bitwise independent of the rank count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/stein/stein_impl.h"
#include "comm/dist_impl.h"

kd_err kd_stein_column(kd_kernel *k, const double *X, kd_lidx nl, const double *row, double *col) {
  if (nl == 0) return KD_OK;
  return kd_kernel_eval_block(k, X, nl, row, 1, col, 1);
}

typedef struct {
  const kd_algo_in *in;
  kd_lidx nl;
  kd_gidx off;
  const double *X;
  double *z, *kw, *cv, *ca, *row2;
} kd_pfw_state_;

static void kd_pfw_free_(kd_pfw_state_ *s) {
  free(s->z), free(s->kw), free(s->cv), free(s->ca), free(s->row2);
}

/* the first vertex: argmin_i k(x_i, x_i) / 2 - z_i; w = e_v, K w = k(., x_v) */
static kd_err kd_pfw_start_(kd_pfw_state_ *s, double *w) {
  kd_err err = KD_OK;
  double best = INFINITY, vmin;
  kd_gidx bi = -1, v = -1;
  KD_TRY(kd_dist_agreed(s->in->comm, kd_kernel_diag(s->in->kernel, s->X, s->nl, s->cv)));
  for (kd_lidx i = 0; i < s->nl; i++) {
    const double f = 0.5 * s->cv[i] - s->z[i];
    if (f < best) best = f, bi = s->off + i;
  }
  KD_TRY(kd_dist_argmin(s->in->comm, best, bi, KD_OK, &vmin, &v));
  KD_CHECK(v >= 0, KD_ERR_INPUT, "simplex reweighting: no rows");
  KD_TRY(kd_pointset_gather_rows(s->in->points, &v, 1, s->row2));
  KD_TRY(kd_dist_agreed(s->in->comm, kd_stein_column(s->in->kernel, s->X, s->nl, s->row2, s->kw)));
  for (kd_lidx i = 0; i < s->nl; i++) w[i] = s->off + i == v ? 1.0 : 0.0;
cleanup:
  return err;
}

/* one pairwise step; *done = 1 when no pair improves */
static kd_err kd_pfw_step_(kd_pfw_state_ *s, double *w, int *done) {
  kd_err err = KD_OK;
  const int d = kd_pointset_dim(s->in->points);
  double gmin = INFINITY, gmax = -INFINITY, gv, ga, wa = 0.0;
  kd_gidx iv = -1, ia = -1, pair[2];
  for (kd_lidx i = 0; i < s->nl; i++) {
    const double g = s->kw[i] - s->z[i];
    if (g < gmin) gmin = g, iv = s->off + i;
    if (w[i] > 0.0 && g > gmax) gmax = g, ia = s->off + i;
  }
  KD_TRY(kd_dist_argmin(s->in->comm, gmin, iv, KD_OK, &gv, &pair[0]));
  KD_TRY(kd_dist_argmax(s->in->comm, gmax, ia, KD_OK, &ga, &pair[1]));
  *done = pair[0] < 0 || pair[1] < 0 || !(ga > gv) || pair[0] == pair[1];
  if (*done) goto cleanup;
  if (pair[1] >= s->off && pair[1] < s->off + s->nl) wa = w[pair[1] - s->off];
  KD_TRY(kd_dist_sum(s->in->comm, &wa, 1)); /* one non-zero term: exact */
  KD_TRY(kd_pointset_gather_rows(s->in->points, pair, 2, s->row2));
  const double kvv = kd_kernel_eval(s->in->kernel, s->row2, s->row2);
  const double kaa = kd_kernel_eval(s->in->kernel, s->row2 + d, s->row2 + d);
  const double kva = kd_kernel_eval(s->in->kernel, s->row2, s->row2 + d);
  const double den = (kvv + kaa) - 2.0 * kva;
  double gamma = den > 0.0 ? (ga - gv) / den : wa;
  gamma = gamma < wa ? gamma : wa;
  kd_err lerr = kd_stein_column(s->in->kernel, s->X, s->nl, s->row2, s->cv);
  if (!lerr) lerr = kd_stein_column(s->in->kernel, s->X, s->nl, s->row2 + d, s->ca);
  KD_TRY(kd_dist_agreed(s->in->comm, lerr));
  for (kd_lidx i = 0; i < s->nl; i++) s->kw[i] = fma(gamma, s->cv[i] - s->ca[i], s->kw[i]);
  if (pair[0] >= s->off && pair[0] < s->off + s->nl) w[pair[0] - s->off] += gamma;
  if (pair[1] >= s->off && pair[1] < s->off + s->nl)
    w[pair[1] - s->off] = gamma == wa ? 0.0 : w[pair[1] - s->off] - gamma;
cleanup:
  return err;
}

kd_err kd_stein_pfw(const kd_algo_in *in, int64_t iters, double *w, int64_t *steps) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_pfw_state_ s;
  memset(&s, 0, sizeof s);
  s.in = in;
  s.nl = kd_pointset_n_local(in->points);
  s.off = kd_pointset_offset(in->points);
  s.X = kd_pointset_rows_const(in->points);
  const size_t nn = (size_t)(s.nl > 0 ? s.nl : 1), d = (size_t)kd_pointset_dim(in->points);
  s.z = calloc(nn, sizeof(double)), s.kw = calloc(nn, sizeof(double));
  s.cv = calloc(nn, sizeof(double)), s.ca = calloc(nn, sizeof(double));
  s.row2 = calloc(2 * d, sizeof(double));
  if (!s.z || !s.kw || !s.cv || !s.ca || !s.row2)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "simplex reweighting: out of memory");
  KD_TRY(kd_dist_agreed(in->comm, lerr));
  KD_TRY(kd_target_embed(in->target, in->points, s.z));
  KD_TRY(kd_pfw_start_(&s, w));
  *steps = 0;
  kd_log_set_total(iters);
  for (int64_t t = 0; t < iters; t++) {
    int done = 0;
    KD_TRY(kd_pfw_step_(&s, w, &done));
    if (done) break;
    *steps = t + 1;
    kd_log_progress("simplex reweighting", t + 1, NAN, 0, 0);
  }
cleanup:
  kd_pfw_free_(&s);
  return err;
}

/* the output position after inclusive quantised prefix P of total Q: floor(P / Q m + u) */
static kd_gidx kd_rs_pos_(int64_t P, int64_t Q, kd_gidx m, double u) {
  const kd_gidx k = (kd_gidx)floor((double)P / (double)Q * (double)m + u);
  return k < m ? k : m;
}

/* the rows this rank's weights draw, in output order: row then its source index (d + 1 values) */
static void kd_rs_local_(const kd_pointset *ps, const int64_t *q, int64_t before, int64_t Q,
                         kd_gidx m, double u, double *buf) {
  const kd_lidx nl = kd_pointset_n_local(ps);
  const int d = kd_pointset_dim(ps);
  const kd_gidx off = kd_pointset_offset(ps);
  const double *X = kd_pointset_rows_const(ps);
  int64_t P = before;
  kd_gidx prev = kd_rs_pos_(P, Q, m, u), k = 0;
  for (kd_lidx i = 0; i < nl; i++) {
    P += q[i];
    for (const kd_gidx up = kd_rs_pos_(P, Q, m, u); prev < up; prev++, k++) {
      memcpy(buf + k * (d + 1), X + (size_t)i * d, sizeof(double) * d);
      buf[k * (d + 1) + d] = (double)(off + i);
    }
  }
}

/* scount / rcount of the exchange from the ranks' output ranges AB[2 p] to the block layout of out
 */
static void kd_rs_counts_(const kd_pointset *out, const int64_t *AB, int me, int w, int64_t *scount,
                          int64_t *rcount) {
  const int p = kd_dist_size(kd_pointset_comm(out));
  const kd_gidx oA = kd_pointset_rank_offset(out, me), oB = kd_pointset_rank_offset(out, me + 1);
  for (int r = 0; r < p; r++) {
    const kd_gidx bA = kd_pointset_rank_offset(out, r), bB = kd_pointset_rank_offset(out, r + 1);
    const kd_gidx s0 = AB[2 * me] > bA ? AB[2 * me] : bA,
                  s1 = AB[2 * me + 1] < bB ? AB[2 * me + 1] : bB;
    const kd_gidx r0 = AB[2 * r] > oA ? AB[2 * r] : oA,
                  r1 = AB[2 * r + 1] < oB ? AB[2 * r + 1] : oB;
    scount[r] = s1 > s0 ? (s1 - s0) * w : 0;
    rcount[r] = r1 > r0 ? (r1 - r0) * w : 0;
  }
}

kd_err kd_stein_resample(const kd_pointset *ps, const double *w_local, kd_gidx m, uint64_t seed,
                         kd_pointset **out, kd_pointset **src) {
  kd_err err = KD_OK, lerr = KD_OK;
  const MPI_Comm comm = kd_pointset_comm(ps);
  const kd_lidx nl = kd_pointset_n_local(ps);
  const int d = kd_pointset_dim(ps), p = kd_dist_size(comm), me = kd_dist_rank(comm);
  int64_t *q = NULL, *AB = NULL, *cnt = NULL, before = 0, mine = 0, Q = 0;
  double *buf = NULL, *recv = NULL, wmax = 0.0, *rows = NULL, *sv = NULL;
  *out = NULL;
  *src = NULL;
  for (kd_lidx i = 0; i < nl; i++) {
    if (!(w_local[i] >= 0.0) || !isfinite(w_local[i])) wmax = INFINITY;
    wmax = w_local[i] > wmax ? w_local[i] : wmax;
  }
  KD_TRY(kd_dist_max(comm, &wmax, 1));
  KD_CHECK(wmax > 0.0 && isfinite(wmax), KD_ERR_NUMERIC,
           "resampling: the weights are not finite, non-negative and non-zero (max %g)", wmax);
  /* weights as integers on one scale: their prefix sums are exact, hence rank-count independent */
  int ex = 0;
  frexp((double)kd_pointset_n_global(ps) * wmax, &ex);
  KD_CHECK(ex > -900, KD_ERR_NUMERIC, "resampling: the weights are all below 1e-270");
  const double sc = ldexp(1.0, 62 - ex);
  KD_ALLOC_AGREED(comm, q, nl);
  for (kd_lidx i = 0; i < nl; i++) mine += q[i] = (int64_t)(w_local[i] * sc);
  KD_TRY(kd_dist_exscan_i64(comm, mine, &before));
  Q = mine;
  KD_TRY(kd_dist_sum_i64(comm, &Q, 1));
  KD_CHECK(Q > 0, KD_ERR_NUMERIC, "resampling: the weights sum to 0");
  const double u = kd_rng_uniform(seed, 0x5e5a, 0);
  int64_t ab[2] = {kd_rs_pos_(before, Q, m, u), kd_rs_pos_(before + mine, Q, m, u)};
  KD_ALLOC_AGREED(comm, AB, 2 * (size_t)p);
  KD_ALLOC_AGREED(comm, cnt, 2 * (size_t)p);
  KD_ALLOC_AGREED(comm, buf, (size_t)(ab[1] - ab[0]) * (d + 1));
  kd_rs_local_(ps, q, before, Q, m, u, buf);
  KD_TRY(kd_dist_allgatherv_i64(comm, ab, 2, AB));
  KD_TRY(kd_pointset_create(comm, m, d, out));
  KD_TRY(kd_pointset_create(comm, m, 1, src));
  kd_rs_counts_(*out, AB, me, d + 1, cnt, cnt + p);
  const kd_lidx ml = kd_pointset_n_local(*out);
  recv = calloc((size_t)(ml > 0 ? ml : 1) * (d + 1), sizeof *recv);
  if (!recv) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "resampling: out of memory");
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_alltoallv(comm, buf, cnt, recv, cnt + p));
  kd_pointset_get_rows(*out, &rows);
  kd_pointset_get_rows(*src, &sv);
  for (kd_lidx i = 0; i < ml; i++) {
    memcpy(rows + (size_t)i * d, recv + (size_t)i * (d + 1), sizeof(double) * d);
    sv[i] = recv[(size_t)i * (d + 1) + d];
  }
  kd_pointset_restore_rows(*out, &rows);
  kd_pointset_restore_rows(*src, &sv);
cleanup:
  if (err) kd_pointset_destroy(out), kd_pointset_destroy(src);
  free(q), free(AB), free(cnt), free(buf), free(recv);
  return err;
}
