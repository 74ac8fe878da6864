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
#include "dist/dist_impl.h"

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

kd_err kd_stein_resample(const kd_pointset *ps, const double *w_local, kd_gidx m, uint64_t seed,
                         kd_pointset **out, kd_gidx **map) {
  kd_err err = KD_OK;
  const kd_gidx n = kd_pointset_n_global(ps);
  const int d = kd_pointset_dim(ps);
  double *w = NULL, *all = NULL, *rows = NULL;
  kd_gidx *mp = NULL;
  *out = NULL;
  *map = NULL;
  KD_ALLOC(w, n);
  KD_ALLOC(all, (size_t)n * d);
  KD_ALLOC(rows, (size_t)m * d);
  KD_ALLOC(mp, m);
  KD_TRY(kd_dist_allgatherv(kd_pointset_comm(ps), w_local, kd_pointset_n_local(ps), w));
  KD_TRY(kd_pointset_allgather(ps, all));
  double tot = 0.0;
  for (kd_gidx i = 0; i < n; i++) tot += w[i];
  KD_CHECK(tot > 0 && isfinite(tot), KD_ERR_NUMERIC, "resampling: weights sum to %g", tot);
  const double u = kd_rng_uniform(seed, 0x5e5a, 0);
  double c = 0.0;
  kd_gidx prev = 0, r = 0;
  for (kd_gidx i = 0; i < n && r < m; i++) {
    c += w[i];
    kd_gidx upto = (kd_gidx)floor(c / tot * (double)m + u);
    upto = upto > m ? m : upto;
    for (; prev < upto; prev++, r++) {
      mp[r] = i;
      memcpy(rows + (size_t)r * d, all + (size_t)i * d, sizeof(double) * d);
    }
  }
  for (; r < m; r++) { /* round-off left the last slot(s): the last row with weight */
    kd_gidx i = n - 1;
    while (i > 0 && !(w[i] > 0)) i--;
    mp[r] = i;
    memcpy(rows + (size_t)r * d, all + (size_t)i * d, sizeof(double) * d);
  }
  KD_TRY(kd_pointset_from_replicated(kd_pointset_comm(ps), m, d, rows, NULL, out));
  *map = mp;
  mp = NULL;
cleanup:
  free(w), free(all), free(rows), free(mp);
  return err;
}
