/* herding_steps.c - the step primitives of the Frank-Wolfe family on the distributed herding state
 * (herding_impl.h). F is quadratic, so every line search is exact: along a direction d with
 * slope s = <grad F(nu), d> and curvature q = ||d||^2 the minimiser is -s/q, clipped to the
 * feasible interval (BPCG paper Alg. 3 lines 8 and 16; Tsuji & Tanaka Alg. 1 line search). */
#include <math.h>
#include <stdlib.h>

#include "algo/herding/herding_impl.h"

/* relative curvature below which a direction is treated as zero-length (duplicate atoms) */
#define KD_HERD_TINY 1e-14

/* Fused update of the gradient g = nu - z and the local LMO minimum: g[c] = EXPR (which may use
 * g_[c] and z_[c]), then track min g[c]. */
#define KD_HERD_UPDATE_G_(h, EXPR)                 \
  do {                                             \
    double best_ = INFINITY;                       \
    kd_lidx bi_ = -1;                              \
    int nan_ = 0;                                  \
    double *g_ = (h)->g;                           \
    const double *z_ = (h)->z;                     \
    (void)z_;                                      \
    for (kd_lidx c = 0; c < (h)->nl; c++) {        \
      const double s_ = (EXPR);                    \
      g_[c] = s_;                                  \
      if (s_ < best_) {                            \
        best_ = s_;                                \
        bi_ = c;                                   \
      } else if (s_ != s_) {                       \
        nan_ = 1;                                  \
      }                                            \
    }                                              \
    (h)->lmin_val = best_;                         \
    (h)->lmin_idx = bi_ < 0 ? -1 : (h)->off + bi_; \
    (h)->lmin_nan = nan_;                          \
    (h)->lmin_valid = 1;                           \
  } while (0)

kd_err kd_herd_start(kd_herd *h) {
  kd_err err = KD_OK;
  double val;
  kd_gidx g;
  int pos;
  const double *col;
  KD_TRY(kd_herd_lmo(h, &val, &g));
  KD_CHECK(g >= 0, KD_ERR_INTERNAL, "herd: empty LMO");
  KD_TRY(kd_herd_ensure_atom(h, g, h->col, &col, &pos));
  h->w[pos] = 1.0;
  KD_HERD_UPDATE_G_(h, col[c] - z_[c]);
  kd_herd_refresh(h);
cleanup:
  return err;
}

double kd_herd_grad(const kd_herd *h, int i) { return h->kw[i] - h->zs[i]; }

void kd_herd_away_local(const kd_herd *h, int *a, int *s) {
  int ia = -1, is = -1;
  for (int i = 0; i < h->n; i++) {
    double g = kd_herd_grad(h, i);
    if (h->w[i] > 0 && (ia < 0 || g > kd_herd_grad(h, ia))) ia = i;
    if (is < 0 || g < kd_herd_grad(h, is)) is = i;
  }
  *a = ia;
  *s = is;
}

double kd_herd_wgrad(const kd_herd *h) { return h->wkw - h->wz; }

static double kd_herd_ls_(double slope, double curv, double lo, double hi) {
  if (!(slope < 0)) return lo;
  if (curv <= KD_HERD_TINY * fabs(slope) || curv <= 0) return hi;
  double t = -slope / curv;
  return t < lo ? lo : (t > hi ? hi : t);
}

kd_err kd_herd_step_fw(kd_herd *h, int v, double gamma, double *gamma_out) {
  kd_err err = KD_OK;
  const double *col;
  /* d = k(., x_v) - nu: slope = grad_v - w^T grad, curvature = K_vv - 2 nu(x_v) + w^T K w */
  if (gamma < 0) {
    double slope = kd_herd_grad(h, v) - kd_herd_wgrad(h);
    double curv = h->K[(size_t)v * h->cap + v] - 2.0 * h->kw[v] + h->wkw;
    gamma = kd_herd_ls_(slope, curv, 0.0, 1.0);
  }
  if (gamma_out) *gamma_out = gamma;
  if (gamma > 0) {
    KD_TRY(kd_herd_atom_column(h, v, h->col, &col));
    const double om = 1.0 - gamma;
    /* nu' = (1-gamma) nu + gamma k  =>  g' = (1-gamma) g + gamma (k - z) */
    KD_HERD_UPDATE_G_(h, om * g_[c] + gamma * (col[c] - z_[c]));
    for (int i = 0; i < h->n; i++) h->w[i] *= om;
    h->w[v] += gamma;
    h->n_fw_steps++;
  }
  kd_herd_prune(h);
  kd_herd_refresh(h);
cleanup:
  return err;
}

kd_err kd_herd_step_pair(kd_herd *h, int a, int s, int *dropped) {
  kd_err err = KD_OK;
  const double *ca, *cs;
  *dropped = 0;
  if (a == s) goto cleanup;
  /* d = k(., x_s) - k(., x_a) */
  double slope = kd_herd_grad(h, s) - kd_herd_grad(h, a);
  double curv = h->K[(size_t)a * h->cap + a] + h->K[(size_t)s * h->cap + s] -
                2.0 * h->K[(size_t)a * h->cap + s];
  double wa = h->w[a];
  double gamma = kd_herd_ls_(slope, curv, 0.0, wa);
  if (gamma <= 0) goto cleanup;
  KD_TRY(kd_herd_atom_column(h, a, h->col, &ca));
  KD_TRY(kd_herd_atom_column(h, s, h->col2, &cs));
  KD_HERD_UPDATE_G_(h, g_[c] + gamma * (cs[c] - ca[c])); /* z not needed */
  h->n_pair_steps++;
  if (gamma >= wa) {
    h->w[s] += wa;
    h->w[a] = 0.0;
    *dropped = 1;
    h->n_drop_steps++;
  } else {
    h->w[a] -= gamma;
    h->w[s] += gamma;
  }
  kd_herd_prune(h);
  kd_herd_refresh(h);
cleanup:
  return err;
}

kd_err kd_herd_step_away(kd_herd *h, int a, int *dropped) {
  kd_err err = KD_OK;
  const double *ca;
  *dropped = 0;
  double wa = h->w[a];
  if (wa >= 1.0) goto cleanup;
  /* d = nu - k(., x_a): slope = w^T grad - grad_a, curvature = wKw - 2 nu(x_a) + K_aa */
  double slope = kd_herd_wgrad(h) - kd_herd_grad(h, a);
  double curv = h->wkw - 2.0 * h->kw[a] + h->K[(size_t)a * h->cap + a];
  double gmax = wa / (1.0 - wa);
  double gamma = kd_herd_ls_(slope, curv, 0.0, gmax);
  if (gamma <= 0) goto cleanup;
  KD_TRY(kd_herd_atom_column(h, a, h->col, &ca));
  const double op = 1.0 + gamma;
  /* nu' = (1+gamma) nu - gamma k_a  =>  g' = (1+gamma) g + gamma (z - k_a) */
  KD_HERD_UPDATE_G_(h, op * g_[c] + gamma * (z_[c] - ca[c]));
  for (int i = 0; i < h->n; i++) h->w[i] *= op;
  h->n_away_steps++;
  if (gamma >= gmax) {
    h->w[a] = 0.0;
    *dropped = 1;
    h->n_drop_steps++;
  } else {
    h->w[a] -= gamma;
  }
  kd_herd_prune(h);
  kd_herd_refresh(h);
cleanup:
  return err;
}
