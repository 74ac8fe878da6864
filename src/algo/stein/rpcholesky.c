/* rpcholesky.c - randomly pivoted Cholesky (Chen, Epperly, Tropp & Webber 2023; as a quadrature
 * rule: Epperly & Moreno 2023): n_out pivots s_1, s_2, ... of the kernel matrix of the input rows,
 * pivot j drawn with probability proportional to the diagonal of the residual
 *   r_i = k(x_i, x_i) - sum_{l < j} F_il^2,  F_ij = (k(x_i, x_s) - sum_{l < j} F_il F_sl) /
 * sqrt(r_s). The draw is an exponential race keyed by (seed, step, global row): row i gets E_i /
 * r_i with E_i = -log U(seed, step, i) and the smallest wins (P(i wins) = r_i / sum r), so the
 * pivots do not depend on the rank count. The weights of the pivots are then the simplex QP min_w
 * 1/2 w^T K(S, S) w - z(S)^T w  over {w >= 0, sum w = 1} (weights: simplex; the MMD-optimal convex
 * rule on the pivots: with the Stein kernel and target this is the Stein Cholesky coreset of
 * docs/stein.md) or 1/n_out (weights: uniform). Cost n n_out kernel evaluations and n n_out^2 / 2
 * flops; memory n_out doubles per local row. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/stein/stein_impl.h"
#include "comm/dist_impl.h"
#include "la/la_impl.h"

typedef struct {
  int64_t n_out;
  int weights; /* index in simplex|uniform */
} kd_rpc_params_;

static const kd_param_spec kd_rpc_spec_[] = {
    KD_PARAM_N_OUT(kd_rpc_params_, n_out, 1, 1e7, "number of pivots (output points)"),
    {"weights", KD_PARAM_STR, 0, "simplex", 0, 0, "simplex|uniform",
     "simplex: MMD-optimal convex weights on the pivots; uniform: 1/n_out",
     KD_PARAM_AT_INDEX(kd_rpc_params_, weights)},
};

typedef struct {
  const kd_algo_in *in;
  kd_lidx nl;
  kd_gidx off;
  int d;
  const double *X;
  double *F;  /* [n_out][nl]: column j of the factor, local rows */
  double *r;  /* [nl] residual diagonal */
  double *fs; /* [n_out + 1 + d]: row s of F, r_s, then x_s */
  double *col;
  const double *w; /* [nl] pivot weights (NULL: all 1) */
  int64_t m;       /* n_out */
} kd_rpc_state_;

/* pivot j: the exponential race, then its factor row, residual and point on every rank */
static kd_err kd_rpc_pivot_(kd_rpc_state_ *s, int64_t j, kd_gidx *piv) {
  kd_err err = KD_OK;
  double best = INFINITY, vmin;
  kd_gidx bi = -1;
  const int64_t m = s->m;
  for (kd_lidx i = 0; i < s->nl; i++) {
    const double ri = s->w ? s->w[i] * s->r[i] : s->r[i];
    if (!(ri > 0.0)) continue;
    const double e = -log(
        kd_rng_uniform_open(s->in->seed, 0x7270630000ULL + (uint64_t)j, (uint64_t)(s->off + i)));
    const double key = e / ri;
    if (key < best) best = key, bi = s->off + i;
  }
  /* polled once per pivot, agreed in the argmin the pivot does anyway */
  KD_TRY(kd_dist_argmin(s->in->comm, best, bi, kd_interrupt_check("rpcholesky (no checkpoint)"),
                        &vmin, piv));
  if (*piv < 0) goto cleanup; /* the residual vanished: the kernel matrix has rank < n_out */
  const size_t len = (size_t)m + 1 + (size_t)s->d;
  memset(s->fs, 0, sizeof(double) * len);
  if (*piv >= s->off && *piv < s->off + s->nl) {
    const kd_lidx i = *piv - s->off;
    for (int64_t l = 0; l < j; l++) s->fs[l] = s->F[l * s->nl + i];
    s->fs[m] = s->r[i];
    memcpy(s->fs + m + 1, s->X + i * s->d, sizeof(double) * s->d);
  }
  KD_TRY(kd_dist_sum(s->in->comm, s->fs, (int)len)); /* one non-zero contribution: exact */
cleanup:
  return err;
}

/* column j of F and the residual update, local rows */
static kd_err kd_rpc_update_(kd_rpc_state_ *s, int64_t j, int64_t m, kd_gidx piv) {
  kd_err err = KD_OK;
  KD_TRY(kd_stein_column(s->in->kernel, s->X, s->nl, s->fs + m + 1, s->col));
  const double inv = 1.0 / sqrt(s->fs[m]);
  double *Fj = s->F + j * s->nl;
  for (kd_lidx i = 0; i < s->nl; i++) Fj[i] = s->col[i];
  for (int64_t l = 0; l < j; l++) /* fma(F_il, -f_sl, .) = fma(-F_il, f_sl, .) bit for bit */
    kd_vec_fma(s->nl, -s->fs[l], s->F + l * s->nl, Fj);
  for (kd_lidx i = 0; i < s->nl; i++) {
    Fj[i] *= inv;
    const double ri = fma(-Fj[i], Fj[i], s->r[i]);
    s->r[i] = s->off + i == piv ? 0.0 : (ri > 0.0 ? ri : 0.0);
  }
cleanup:
  return err;
}

kd_err kd_stein_simplex_weights(const kd_algo_in *in, int uniform, const char *before,
                                kd_result *out) {
  kd_err err = KD_OK;
  const kd_lidx m = (kd_lidx)out->n;
  double *Q = NULL, *z = NULL, mmd = NAN;
  if (before || uniform) {
    KD_TRY(kd_mmd(in->target, out->points, out->weights, m, &mmd, NULL));
    if (before) KD_TRY(kd_result_set_metric(out, before, mmd));
    out->mmd = mmd;
  }
  if (uniform) goto cleanup;
  KD_ALLOC(Q, (size_t)m * m);
  KD_ALLOC(z, m);
  KD_TRY(kd_kernel_eval_block(in->kernel, out->points, m, out->points, m, Q, m));
  KD_TRY(kd_target_embed_rows(in->target, out->points, m, z));
  KD_TRY(kd_simplex_qp((int)m, Q, z, 1e-12, 10000, out->weights));
  double sum = 0.0;
  for (kd_lidx i = 0; i < m; i++) sum += out->weights[i] > 0 ? out->weights[i] : 0.0;
  KD_CHECK(sum > 0, KD_ERR_NUMERIC, "the simplex QP returned zero weights");
  for (kd_lidx i = 0; i < m; i++)
    out->weights[i] = (out->weights[i] > 0 ? out->weights[i] : 0.0) / sum;
  KD_TRY(kd_mmd(in->target, out->points, out->weights, m, &mmd, NULL));
  KD_TRY(kd_result_set_metric(out, "mmd_convex_weights", mmd));
  out->mmd = mmd;
cleanup:
  free(Q);
  free(z);
  return err;
}

kd_err kd_stein_rpc_factor(const kd_algo_in *in, int64_t m_max, const double *w, double **F,
                           kd_gidx *piv, int64_t *m_done, double *resid) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_rpc_state_ s;
  memset(&s, 0, sizeof s);
  *F = NULL;
  *m_done = 0;
  s.in = in;
  s.nl = kd_pointset_n_local(in->points);
  s.off = kd_pointset_offset(in->points);
  s.d = kd_pointset_dim(in->points);
  s.X = kd_pointset_rows_const(in->points);
  s.m = m_max;
  s.w = w;
  const size_t nn = (size_t)(s.nl > 0 ? s.nl : 1);
  s.F = malloc(sizeof(double) * nn * (size_t)(m_max > 0 ? m_max : 1));
  s.r = malloc(sizeof(double) * nn), s.col = malloc(sizeof(double) * nn);
  s.fs = malloc(sizeof(double) * ((size_t)m_max + 1 + (size_t)s.d));
  if (!s.F || !s.r || !s.col || !s.fs)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                      "rpcholesky: cannot allocate the %lld x %lld factor (lower n_out)",
                      (long long)s.nl, (long long)m_max);
  KD_TRY(kd_dist_agreed(in->comm, lerr));
  KD_TRY(kd_dist_agreed(in->comm, kd_kernel_diag(in->kernel, s.X, s.nl, s.r)));
  int64_t m = 0;
  kd_interrupt_anywhere(1); /* no safe point: a signal stops the run where it is (exit 3) */
  for (; m < m_max; m++) {
    KD_TRY(kd_rpc_pivot_(&s, m, &piv[m]));
    if (piv[m] < 0) break;
    KD_TRY(kd_dist_agreed(in->comm, kd_rpc_update_(&s, m, m_max, piv[m])));
    kd_log_progress("rpcholesky", m + 1, NAN, m + 1, m + 1 == m_max);
  }
  *m_done = m;
  if (resid && s.nl > 0) memcpy(resid, s.r, sizeof(double) * (size_t)s.nl);
  *F = s.F;
  s.F = NULL;
cleanup:
  free(s.F), free(s.r), free(s.col), free(s.fs);
  return err;
}

static kd_err kd_rpc_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_rpc_params_ p = {0};
  kd_gidx *piv = NULL;
  double *F = NULL;
  int64_t m = 0;
  KD_TRY(kd_params_fill(in->params, &p));
  KD_ALLOC(piv, p.n_out);
  KD_TRY(kd_stein_rpc_factor(in, p.n_out, NULL, &F, piv, &m, NULL));
  KD_CHECK(m >= 1, KD_ERR_NUMERIC, "rpcholesky: the kernel matrix is zero");
  KD_TRY(kd_result_alloc(out, m, kd_pointset_dim(in->points)));
  KD_TRY(kd_pointset_gather_rows(in->points, piv, m, out->points));
  for (int64_t i = 0; i < m; i++) out->indices[i] = piv[i];
  KD_TRY(kd_stein_simplex_weights(in, p.weights == 1, "mmd_uniform_weights", out));
cleanup:
  kd_interrupt_anywhere(0);
  free(F);
  free(piv);
  return err;
}

const kd_algo_desc kd_algo_rpcholesky = {
    "rpcholesky",
    "thin",
    "randomly pivoted Cholesky pivots (Chen et al.; Epperly & Moreno 2023) with MMD-optimal "
    "simplex weights (with a Stein kernel: Stein Cholesky)",
    kd_rpc_spec_,
    (int)(sizeof kd_rpc_spec_ / sizeof kd_rpc_spec_[0]),
    kd_rpc_run_,
    KD_ALGO_WEIGHTED | KD_ALGO_N_OUT,
    NULL,
    NULL};
