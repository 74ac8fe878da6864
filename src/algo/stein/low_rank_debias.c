/* low_rank_debias.c - low-rank debiasing (Li, Dwivedi, Mackey et al. 2024, "Debiased distribution
 * compression", LD): simplex weights w over all n input rows that approximately minimise
 *   f(w) = 1/2 w^T K w - z^T w       (the Stein target: z = 0, f = KSD(w)^2 / 2)
 * in O(n r) kernel evaluations and O(n r) flops per step instead of the O(n^2) of the exact QP.
 * Each of `rounds` adaptive rounds
 *   1. builds a rank-r approximation K ~ F F^T by weighted randomly pivoted Cholesky: pivots drawn
 *      with probability proportional to w_i times the residual diagonal (kd_stein_rpc_factor), so
 *      the approximation is accurate where the current weights put their mass (round 1: w
 *      uniform, plain RPCholesky);
 *   2. runs `steps` steps of accelerated entropic mirror descent (Tseng 2008; the linear coupling
 *      of Allen-Zhu & Orecchia 2017) from the current weights on the model
 *      f^(w) = 1/2 w^T (F F^T + diag(res)) w - z^T w, res_i = K_ii - |F_i|^2 >= 0
 *      (the residual diagonal keeps K's diagonal, so mass is not drawn to the rows the factor
 *      misses). With tau_t = 2 / (t + 1) and step a_t = t / (2 L), L = max_i K_ii (the model's
 *      smoothness in the l1 norm):
 *        x = (1 - tau) y + tau v,  g = grad f^(x),  v <- v exp(-a_t g) / sum,
 *        y = (1 - tau) y + tau v,
 *      and f^(y_T) - min f^ <= 4 L log(n) / T^2 from the uniform start.
 * The only cross-rank sums are F^T x and the normaliser of v; both are fixed-point sums
 * (kd_dist_dot_fixed) and every per-row value follows the same recurrence on any rank, so the
 * weights are bitwise independent of the rank count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/stein/stein_impl.h"
#include "comm/dist_impl.h"
#include "la/la_impl.h"

typedef struct {
  const kd_algo_in *in;
  kd_lidx nl;
  kd_gidx n;
  int64_t r; /* columns of F */
  double *F, *res, *z, *lv, *v, *x, *g, *u;
  double *fmax, *bound; /* [r]: max_i |F_ij| over all rows; fmax_j max_i x_i */
  double L;
} kd_ld_state_;

/* g = (F F^T + diag(res)) x - z; u = F^T x (fixed-point sums; each term bounded by
 * max_i |F_ij| max_i x_i, x >= 0, which needs one reduction instead of one per column) */
static kd_err kd_ld_grad_(kd_ld_state_ *s) {
  kd_err err = KD_OK;
  double xm = 0.0;
  for (kd_lidx i = 0; i < s->nl; i++) xm = s->x[i] > xm ? s->x[i] : xm;
  KD_TRY(kd_dist_max(s->in->comm, &xm, 1));
  for (int64_t j = 0; j < s->r; j++) s->bound[j] = s->fmax[j] * xm;
  KD_TRY(kd_dist_dot_fixed(s->in->comm, (int)s->r, s->nl, s->F, s->x, s->n, s->bound, s->u));
  for (kd_lidx i = 0; i < s->nl; i++) s->g[i] = s->res[i] * s->x[i] - s->z[i];
  for (int64_t j = 0; j < s->r; j++) kd_vec_fma(s->nl, s->u[j], s->F + j * s->nl, s->g);
cleanup:
  return err;
}

/* v = exp(lv) normalised to sum 1, lv shifted to log v */
static kd_err kd_ld_normalise_(kd_ld_state_ *s) {
  kd_err err = KD_OK;
  double mx = -INFINITY, tot = 0.0;
  for (kd_lidx i = 0; i < s->nl; i++) mx = s->lv[i] > mx ? s->lv[i] : mx;
  KD_TRY(kd_dist_max(s->in->comm, &mx, 1));
  KD_CHECK(isfinite(mx), KD_ERR_NUMERIC, "low-rank debiasing: the weights are not finite");
  for (kd_lidx i = 0; i < s->nl; i++) s->v[i] = exp(s->lv[i] - mx);
  KD_TRY(kd_dist_dot_fixed(s->in->comm, 1, s->nl, s->v, NULL, s->n, NULL, &tot));
  const double lt = log(tot);
  for (kd_lidx i = 0; i < s->nl; i++) {
    s->v[i] /= tot;
    s->lv[i] -= mx + lt;
  }
cleanup:
  return err;
}

/* `steps` steps of accelerated entropic mirror descent from y = v = w; the result in w */
static kd_err kd_ld_amd_(kd_ld_state_ *s, int64_t steps, double *w) {
  kd_err err = KD_OK;
  for (kd_lidx i = 0; i < s->nl; i++) {
    s->v[i] = w[i];
    s->lv[i] = w[i] > 0.0 ? log(w[i]) : -INFINITY;
  }
  for (int64_t t = 1; t <= steps; t++) {
    const double tau = 2.0 / (double)(t + 1), a = (double)t / (2.0 * s->L);
    for (kd_lidx i = 0; i < s->nl; i++) s->x[i] = w[i] + tau * (s->v[i] - w[i]);
    KD_TRY(kd_ld_grad_(s));
    for (kd_lidx i = 0; i < s->nl; i++) s->lv[i] -= a * s->g[i];
    KD_TRY(kd_ld_normalise_(s));
    for (kd_lidx i = 0; i < s->nl; i++) w[i] += tau * (s->v[i] - w[i]);
    KD_TRY(kd_dist_agreed(s->in->comm, kd_interrupt_check("low-rank debiasing (no checkpoint)")));
  }
cleanup:
  return err;
}

/* the model objective 1/2 w^T (F F^T + diag(res)) w - z^T w at w */
static kd_err kd_ld_objective_(kd_ld_state_ *s, const double *w, double *f) {
  kd_err err = KD_OK;
  memcpy(s->x, w, sizeof(double) * (size_t)s->nl);
  KD_TRY(kd_ld_grad_(s)); /* g = A w - z */
  for (kd_lidx i = 0; i < s->nl; i++) s->v[i] = 0.5 * (s->g[i] - s->z[i]);
  KD_TRY(kd_dist_dot_fixed(s->in->comm, 1, s->nl, s->v, w, s->n, NULL, f));
cleanup:
  return err;
}

kd_err kd_stein_ld(const kd_algo_in *in, const kd_stein_ld_opts *o, double *w, double *objective) {
  kd_err err = KD_OK;
  kd_ld_state_ s;
  kd_gidx *piv = NULL;
  memset(&s, 0, sizeof s);
  s.in = in;
  s.nl = kd_pointset_n_local(in->points);
  s.n = kd_pointset_n_global(in->points);
  KD_CHECK(s.n < ((kd_gidx)1 << 30), KD_ERR_CONFIG,
           "low-rank debiasing: %lld rows exceed its 2^30 limit", (long long)s.n);
  int64_t rank = o->rank > 0 ? o->rank : (int64_t)ceil(2.0 * sqrt((double)s.n));
  rank = rank > 256 && o->rank <= 0 ? 256 : rank;
  rank = rank > s.n ? s.n : rank;
  const size_t nn = (size_t)(s.nl > 0 ? s.nl : 1);
  KD_ALLOC_AGREED(in->comm, s.res, nn);
  KD_ALLOC_AGREED(in->comm, s.z, nn);
  KD_ALLOC_AGREED(in->comm, s.lv, nn);
  KD_ALLOC_AGREED(in->comm, s.v, nn);
  KD_ALLOC_AGREED(in->comm, s.x, nn);
  KD_ALLOC_AGREED(in->comm, s.g, nn);
  KD_ALLOC_AGREED(in->comm, s.u, rank);
  KD_ALLOC_AGREED(in->comm, s.fmax, rank);
  KD_ALLOC_AGREED(in->comm, s.bound, rank);
  KD_ALLOC_AGREED(in->comm, piv, rank);
  KD_TRY(kd_target_embed(in->target, in->points, s.z));
  KD_TRY(kd_dist_agreed(
      in->comm, kd_kernel_diag(in->kernel, kd_pointset_rows_const(in->points), s.nl, s.res)));
  s.L = 0.0;
  for (kd_lidx i = 0; i < s.nl; i++) s.L = s.res[i] > s.L ? s.res[i] : s.L;
  KD_TRY(kd_dist_max(in->comm, &s.L, 1));
  KD_CHECK(s.L > 0.0 && isfinite(s.L), KD_ERR_NUMERIC,
           "low-rank debiasing: the kernel diagonal has maximum %g", s.L);
  for (kd_lidx i = 0; i < s.nl; i++) w[i] = 1.0 / (double)s.n;
  for (int64_t q = 0; q < o->rounds; q++) {
    free(s.F);
    s.F = NULL;
    KD_TRY(kd_stein_rpc_factor(in, rank, q ? w : NULL, &s.F, piv, &s.r, s.res));
    for (int64_t j = 0; j < s.r; j++) {
      double a = 0.0;
      for (kd_lidx i = 0; i < s.nl; i++)
        a = fabs(s.F[j * s.nl + i]) > a ? fabs(s.F[j * s.nl + i]) : a;
      s.fmax[j] = a;
    }
    KD_TRY(kd_dist_max(in->comm, s.fmax, (int)s.r));
    KD_TRY(kd_ld_amd_(&s, o->steps, w));
    KD_TRY(kd_ld_objective_(&s, w, objective));
    kd_log_info("low-rank debiasing round %lld of %lld: rank %lld, model objective %.6e",
                (long long)(q + 1), (long long)o->rounds, (long long)s.r, *objective);
  }
cleanup:
  kd_interrupt_anywhere(0);
  free(s.F), free(s.res), free(s.z), free(s.lv), free(s.v), free(s.x), free(s.g), free(s.u);
  free(s.fmax), free(s.bound);
  free(piv);
  return err;
}
