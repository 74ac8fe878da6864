/* self_estimate.c - the MMD of a rule (X, w) against a large empirical target (y_j, v_j), j < N,
 * without the N^2 double sum zz = sum_ij v_i v_j k(y_i, y_j).
 * Rows I_1..I_R are drawn independently with probabilities v (seeded). With the target's
 * embedding z_P(y) = sum_j v_j k(y, y_j) (exact, N kernel evaluations per sampled row) and the
 * rule's z_Q(y) = sum_i w_i k(y, x_i):
 *   E[z_P(y_I)] = zz   and   E[z_Q(y_I)] = w^T z_P(X)   (exact, computed anyway),
 * so  MMD^2_hat = mean_s (z_P - z_Q)(y_I_s) - w^T z_P(X) + w^T K w  is unbiased for MMD^2. The
 * summand is the witness function mu_P - mu_Q at y, whose spread is of the order of the MMD
 * itself (|f(y)| <= sqrt(k(y, y)) MMD): subtracting z_Q is a control variate that makes the
 * standard error sd_s / sqrt(R) small when the rule is good, where estimating zz alone would
 * carry the kernel's own O(1) spread. The sample, z_P (chunked, kd_target_embed_rows) and all
 * sums are the same bits at any rank count.
 * The exact cross term w^T z_P(X) costs n N evaluations: at 2^26 rows and 2^13 atoms more than
 * thinning itself. When it is sampled (kd_target_emp_cross_sampled_), atoms I'_1..I'_R' are drawn
 * independently with probabilities |w_i| / S, S = sum |w|, and with the rule's embedding at its
 * own atoms z_Q(x_i) = (K w)_i (exact, computed for w^T K w anyway)
 *   g_s = S sgn(w_I') (z_P - z_Q)(x_I'),   E[g] = w^T z_P(X) - w^T K w,
 * so  MMD^2_hat = mean_s f(y_I_s) - mean_s g_s  is unbiased, with the witness on both sides:
 * standard error sqrt(var_f / R + var_g / R'). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "embed/target_impl.h"

/* the rows of target.self_rows = 0 for a rule of n atoms: n, at least 256, and at most a budget
 * of ~2^28 kernel evaluations (~0.1 s on 2 cores at d = 5); the sample then costs about what the
 * exact cross term w^T z_P(X) costs (n N evaluations), a fraction of the thinning run that made
 * the rule. A count, not a time: the same rows on every machine. */
enum { KD_EST_MIN_ROWS = 256 };
static const double KD_EST_BUDGET = 268435456.0;
static const uint64_t KD_EST_STREAM = 0x53454c46u;   /* "SELF" */
static const uint64_t KD_CROSS_STREAM = 0x43524f53u; /* "CROS" */

static int64_t kd_est_rows_(const kd_target *t, kd_lidx n) {
  const kd_gidx N = kd_pointset_n_global(t->pts);
  if (t->self_rows > 0) return t->self_rows;
  int64_t r = (int64_t)(KD_EST_BUDGET / (double)N);
  if ((int64_t)n < r) r = n;
  return r < KD_EST_MIN_ROWS ? KD_EST_MIN_ROWS : r;
}

int kd_target_emp_cross_sampled_(const kd_target *t, kd_lidx n) {
  if (t->cross_mode != KD_CROSS_AUTO) return t->cross_mode == KD_CROSS_ESTIMATE;
  const double nN = (double)n * (double)kd_pointset_n_global(t->pts);
  return nN > KD_CROSS_EXACT_MAX && (int64_t)n > kd_est_rows_(t, n);
}

/* Global row index of each of R draws, identical on every rank. Uniform weights: floor(u N).
 * Weighted: the cumulative weights over the global 2048-row chunks of the target (chunk sums in
 * chunk order, so the same bits at any rank count); the chunk's owner finds the row. */
static kd_err kd_est_draw_(kd_target *t, int64_t R, int64_t *idx) {
  kd_err err = KD_OK;
  MPI_Comm comm = t->comm;
  const kd_pointset *pts = t->pts;
  const kd_gidx N = kd_pointset_n_global(pts);
  const int rank = kd_dist_rank(comm);
  double *cs = NULL, *pre = NULL;
  kd_rng rng = kd_rng_make(t->self_seed, KD_EST_STREAM);
  if (!kd_pointset_weights_const(pts)) {
    for (int64_t s = 0; s < R; s++) idx[s] = (int64_t)kd_rng_next_below(&rng, (uint64_t)N);
    return KD_OK;
  }
  const int64_t C = 2048, nc = (N + C - 1) / C;
  const kd_lidx own_n = t->own_n, own_c = (kd_lidx)((own_n + C - 1) / C);
  KD_ALLOC_AGREED(comm, cs, own_c + 1);
  KD_ALLOC_AGREED(comm, pre, nc + 1);
  for (kd_lidx c = 0; c < own_c; c++) {
    const double *X, *wc;
    const kd_lidx m = kd_target_emp_chunk_(t, c * C, &X, &wc);
    double a = 0.0;
    for (kd_lidx j = 0; j < m; j++) a += wc[j];
    cs[c] = a;
  }
  KD_TRY(kd_dist_allgatherv(comm, cs, own_c, pre + 1));
  pre[0] = 0.0;
  for (int64_t c = 0; c < nc; c++) pre[c + 1] += pre[c];
  kd_gidx S = kd_pointset_rank_offset(pts, rank) / C * C;
  const int64_t c0 = S / C;
  for (int64_t s = 0; s < R; s++) {
    const double u = kd_rng_next_uniform(&rng) * pre[nc];
    int64_t lo = 0, hi = nc - 1; /* the chunk c with pre[c] <= u < pre[c + 1] */
    while (lo < hi) {
      int64_t mid = (lo + hi + 1) / 2;
      if (pre[mid] <= u)
        lo = mid;
      else
        hi = mid - 1;
    }
    idx[s] = 0;
    if (lo < c0 || lo >= c0 + own_c) continue;
    const double *X, *wc;
    const kd_lidx m = kd_target_emp_chunk_(t, (kd_lidx)((lo - c0) * C), &X, &wc);
    kd_lidx j = 0;
    double a = pre[lo];
    for (; j + 1 < m; j++) {
      a += wc[j];
      if (u < a) break;
    }
    idx[s] = lo * C + j;
  }
  KD_TRY(kd_dist_sum_i64(comm, idx, (int)R));
cleanup:
  free(cs);
  free(pre);
  return err;
}

/* The rows idx[R] (global indices) gathered on every rank: each owner copies its rows, the rest
 * are zero, and a sum replicates them exactly. */
static kd_err kd_est_rows_of_(const kd_target *t, const int64_t *idx, int64_t R, double *Y) {
  const kd_pointset *pts = t->pts;
  const int d = kd_pointset_dim(pts);
  const kd_gidx o = kd_pointset_offset(pts);
  const kd_lidx nl = kd_pointset_n_local(pts);
  const double *L = kd_pointset_rows_const(pts);
  memset(Y, 0, sizeof(double) * (size_t)R * (size_t)d);
  for (int64_t s = 0; s < R; s++)
    if (idx[s] >= o && idx[s] < o + nl)
      memcpy(Y + s * d, L + (idx[s] - o) * d, sizeof(double) * (size_t)d);
  return kd_dist_sum(t->comm, Y, (int)(R * d));
}

/* The rule's side of a sampled cross term: R atoms drawn with probabilities |w_i| / S (inverse
 * CDF over the prefix sums of |w| in atom order; X and w are replicated, so every rank draws the
 * same atoms without communication) and g[s] = S sgn(w_I) (z_P(x_I) - zq[I]). Collective. */
static kd_err kd_est_cross_(kd_target *t, const double *X, const double *w, kd_lidx n,
                            const double *zq, int64_t R, double *g) {
  kd_err err = KD_OK, lerr = KD_OK;
  const int d = kd_pointset_dim(t->pts);
  double *pre = NULL, *Xs = NULL, *zp = NULL;
  int64_t *idx = NULL;
  kd_rng rng = kd_rng_make(t->self_seed, KD_CROSS_STREAM);
  pre = calloc((size_t)n + 1, sizeof *pre);
  Xs = calloc((size_t)R * d, sizeof *Xs);
  zp = calloc((size_t)R, sizeof *zp);
  idx = calloc((size_t)R, sizeof *idx);
  if (!pre || !Xs || !zp || !idx)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                      "mmd estimate: cannot allocate %lld sampled atoms", (long long)R);
  KD_TRY(kd_dist_agreed(t->comm, lerr));
  for (kd_lidx i = 0; i < n; i++) pre[i + 1] = pre[i] + fabs(w[i]);
  const double S = pre[n];
  KD_CHECK(S > 0.0 && isfinite(S), KD_ERR_ARG,
           "mmd estimate: the rule's weights sum to %g in "
           "absolute value",
           S);
  for (int64_t s = 0; s < R; s++) {
    const double u = kd_rng_next_uniform(&rng) * S;
    kd_lidx lo = 0, hi = n - 1; /* the atom i with pre[i] <= u < pre[i + 1] */
    while (lo < hi) {
      kd_lidx mid = lo + (hi - lo + 1) / 2;
      if (pre[mid] <= u)
        lo = mid;
      else
        hi = mid - 1;
    }
    while (lo > 0 && w[lo] == 0.0) lo--; /* u on a boundary below zero-weight atoms */
    idx[s] = lo;
    memcpy(Xs + s * d, X + (size_t)lo * d, sizeof(double) * (size_t)d);
  }
  KD_TRY(kd_target_emp_embed_rows_(t, Xs, (kd_lidx)R, zp));
  for (int64_t s = 0; s < R; s++) {
    const kd_lidx i = (kd_lidx)idx[s];
    g[s] = (w[i] < 0.0 ? -S : S) * (zp[s] - zq[i]);
  }
cleanup:
  free(pre);
  free(Xs);
  free(zp);
  free(idx);
  return err;
}

/* Sample mean and unbiased variance of the mean of x[R] (NaN variance for R = 1). */
static void kd_est_moments_(const double *x, int64_t R, double *mean, double *var_of_mean) {
  double m = 0.0, v = 0.0;
  for (int64_t s = 0; s < R; s++) m += x[s];
  m /= (double)R;
  for (int64_t s = 0; s < R; s++) v += (x[s] - m) * (x[s] - m);
  *mean = m;
  *var_of_mean = R > 1 ? v / (double)(R - 1) / (double)R : NAN;
}

kd_err kd_target_emp_estimate_(kd_target *t, const double *X, const double *w, kd_lidx n,
                               const double *zq_atoms, double wz, double wkw, kd_mmd_info *info) {
  kd_err err = KD_OK, lerr = KD_OK;
  const int d = kd_pointset_dim(t->pts);
  const int64_t R = kd_est_rows_(t, n);
  int64_t *idx = NULL;
  double *Y = NULL, *zp = NULL, *zq = NULL, *g = NULL;
  KD_CHECK(R * d < ((int64_t)1 << 31), KD_ERR_CONFIG,
           "target.self_rows = %lld: too many sampled rows for one pass", (long long)R);
  const double t0 = kd_dist_wtime();
  idx = calloc((size_t)R, sizeof *idx);
  Y = calloc((size_t)R * d, sizeof *Y);
  zp = calloc((size_t)R, sizeof *zp);
  zq = calloc((size_t)R, sizeof *zq);
  g = zq_atoms ? calloc((size_t)R, sizeof *g) : NULL;
  if (!idx || !Y || !zp || !zq || (zq_atoms && !g))
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                      "mmd estimate: cannot allocate %lld sampled rows", (long long)R);
  KD_TRY(kd_dist_agreed(t->comm, lerr));
  KD_TRY(kd_target_emp_own_(t));
  KD_TRY(kd_est_draw_(t, R, idx));
  KD_TRY(kd_est_rows_of_(t, idx, R, Y));
  KD_TRY(kd_target_emp_embed_rows_(t, Y, (kd_lidx)R, zp));
  /* z_Q at the sampled rows: the same computation on every rank */
  lerr = kd_kernel_matvec(t->k, Y, (kd_lidx)R, X, n, w, 0.0, zq);
  KD_TRY(kd_dist_agreed(t->comm, lerr));
  for (int64_t s = 0; s < R; s++) zp[s] -= zq[s]; /* the witness at the sampled target rows */
  double mean = 0.0, var = 0.0, mg = 0.0, vg = 0.0;
  kd_est_moments_(zp, R, &mean, &var);
  const double N = (double)kd_pointset_n_global(t->pts);
  info->method = KD_MMD_ESTIMATE;
  info->rows = R;
  if (zq_atoms) {
    KD_TRY(kd_est_cross_(t, X, w, n, zq_atoms, R, g));
    kd_est_moments_(g, R, &mg, &vg);
    info->cross_rows = R;
    info->mmd2 = mean - mg;
  } else {
    info->mmd2 = (mean - wz) + wkw;
  }
  info->mmd2_se = sqrt(var + vg);
  info->mmd = sqrt(info->mmd2 > 0.0 ? info->mmd2 : 0.0);
  info->mmd_se = sqrt((info->mmd2 > 0.0 ? info->mmd2 : 0.0) + info->mmd2_se) - info->mmd;
  if (zq_atoms)
    kd_log_info(
        "estimated MMD from %lld sampled target rows of %.0f and %lld sampled atoms of %lld: "
        "%.6e +- %.2e (%.3f s; target.self: exact computes the %.3g-pair double sum, "
        "target.cross: exact the %.3g-pair cross term)",
        (long long)R, N, (long long)R, (long long)n, info->mmd, info->mmd_se, kd_dist_wtime() - t0,
        0.5 * N * N, N * (double)n);
  else
    kd_log_info(
        "estimated MMD from %lld sampled target rows of %.0f: %.6e +- %.2e (%.3f s; "
        "target.self: exact computes the %.3g-pair double sum)",
        (long long)R, N, info->mmd, info->mmd_se, kd_dist_wtime() - t0, 0.5 * N * N);
cleanup:
  free(idx);
  free(Y);
  free(zp);
  free(zq);
  free(g);
  return err;
}
