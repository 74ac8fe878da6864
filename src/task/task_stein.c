/* task_stein.c - scores as data for the Stein kernel (docs/stein.md):
 *   kernel: {name: stein, base: imq|gaussian|matern52, ls (auto), beta,
 *            precondition: auto|none|diag|matrix}
 *   data (or candidates): {..., score: {type: hdf5|csv|npy|npz, path, dataset}} scores from a file,
 * n x d
 *                         {..., score: {type: gaussian|gaussian_mixture|trunc_gaussian, <keys>}}
 *                         the analytic score grad log p of that measure at every row
 *                         {..., score: {type: generator}} the score of the data's own generator
 * The loaded point set is replaced by rows (x, s(x)) of width 2d, which is what the Stein kernel
 * reads; the outputs get the x part as /points and the s part as /coreset/scores. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "io/io_impl.h"
#include "task/task_impl.h"

/* s(x) of measure m at n rows X[n*d] into S; row0 = global index of X's first row (messages). */
static kd_err kd_score_eval_(const kd_measure *m, const char *what, const double *X, kd_lidx n,
                             kd_gidx row0, double *S) {
  kd_err err = KD_OK;
  const int d = m->d;
  for (kd_lidx i = 0; i < n; i++) {
    const double *x = X + i * d;
    double *s = S + i * d;
    if (m->type == KD_MEASURE_GAUSSIAN_MIXTURE) { /* responsibilities by log-sum-exp */
      double lmax = -INFINITY, tot = 0.0;
      for (int j = 0; j < d; j++) s[j] = 0.0;
      for (int pass = 0; pass < 2; pass++)
        for (int c = 0; c < m->n_comp; c++) {
          const double *mu = m->means + (size_t)c * d, *sd = m->sds + (size_t)c * d;
          double l = log(m->mix_w[c]);
          for (int j = 0; j < d; j++)
            l -= 0.5 * ((x[j] - mu[j]) / sd[j]) * ((x[j] - mu[j]) / sd[j]) + log(sd[j]);
          if (pass == 0) {
            lmax = l > lmax ? l : lmax;
            continue;
          }
          const double r = exp(l - lmax);
          tot += r;
          for (int j = 0; j < d; j++) s[j] -= r * (x[j] - mu[j]) / (sd[j] * sd[j]);
        }
      for (int j = 0; j < d; j++) s[j] /= tot;
      continue;
    }
    if (m->type == KD_MEASURE_TRUNC_GAUSSIAN)
      for (int j = 0; j < d; j++)
        KD_CHECK(x[j] >= m->lo[j] && x[j] <= m->hi[j], KD_ERR_INPUT,
                 "%s: row %lld lies outside the trunc_gaussian box (coordinate %d = %g), where "
                 "its score is not defined",
                 what, (long long)(row0 + i + 1), j, x[j]);
    for (int j = 0; j < d; j++) s[j] = -(x[j] - m->mean[j]) / (m->sd[j] * m->sd[j]);
  }
cleanup:
  return err;
}

/* Rows (x, s) of width 2d from X (n x d) and S (n x d, local blocks of the same layout). */
static kd_err kd_score_join_(const kd_pointset *X, const double *S, kd_pointset **out) {
  kd_err err = KD_OK;
  kd_pointset *ps = NULL;
  double *rows = NULL;
  const int d = kd_pointset_dim(X);
  const kd_lidx nl = kd_pointset_n_local(X);
  const double *x = kd_pointset_rows_const(X), *w = kd_pointset_weights_const(X);
  double hw = w != NULL;
  KD_TRY(kd_pointset_create(kd_pointset_comm(X), kd_pointset_n_global(X), 2 * d, &ps));
  kd_pointset_get_rows(ps, &rows);
  for (kd_lidx i = 0; i < nl; i++) {
    memcpy(rows + i * 2 * d, x + i * d, sizeof(double) * (size_t)d);
    memcpy(rows + i * 2 * d + d, S + i * d, sizeof(double) * (size_t)d);
  }
  kd_pointset_restore_rows(ps, &rows);
  KD_TRY(kd_dist_max(kd_pointset_comm(X), &hw, 1));
  if (hw > 0) KD_TRY(kd_pointset_set_weights(ps, w));
  *out = ps;
  ps = NULL;
cleanup:
  kd_pointset_destroy(&ps);
  return err;
}

/* The measure whose score is wanted: the score section's own (its d defaults to the points' d),
 * or (type: generator) the data's. */
static kd_err kd_score_measure_(const kd_task_ctx *ctx, const char *section, const char *sec,
                                const char *type, int d, kd_measure *m) {
  kd_err err = KD_OK;
  char key[300], where[512];
  snprintf(key, sizeof key, "%s.type", sec);
  if (!strcmp(type, "generator")) {
    const char *dt = NULL;
    char dkey[300];
    snprintf(dkey, sizeof dkey, "%s.type", section);
    KD_TRY(kd_config_get_str(ctx->cfg, dkey, NULL, NULL, 1, &dt));
    KD_CHECK(!kd_task_is_file_type(dt), KD_ERR_CONFIG,
             "%s: %s: generator needs a generated point set (%s is a %s file)",
             kd_config_where(ctx->cfg, key, where, sizeof where), key, section, dt);
    KD_TRY(kd_task_read_measure(ctx, section, m));
  } else {
    KD_TRY(kd_task_read_measure_d(ctx, sec, d, m)); /* d defaults to the points' */
  }
  KD_CHECK(m->type == KD_MEASURE_GAUSSIAN || m->type == KD_MEASURE_GAUSSIAN_MIXTURE ||
               m->type == KD_MEASURE_TRUNC_GAUSSIAN,
           KD_ERR_CONFIG,
           "%s: %s: measure %s has no usable score (grad log p is 0 or undefined); use gaussian, "
           "gaussian_mixture, trunc_gaussian, a score file (type: hdf5|csv|npy|npz) or an "
           "in-memory array (type: memory, from Python)",
           kd_config_where(ctx->cfg, key, where, sizeof where), key, kd_measure_name(m->type));
cleanup:
  return err;
}

kd_err kd_task_read_score(const kd_task_ctx *ctx, const char *section, kd_gidx n, kd_pointset **ps,
                          int *d) {
  kd_err err = KD_OK, lerr = KD_OK;
  char sec[256], key[300], where[512], what[300];
  const char *type = NULL;
  kd_pointset *sps = NULL, *joined = NULL;
  kd_measure m;
  double *S = NULL;
  kd_gidx sn = 0;
  int sd = 0;
  memset(&m, 0, sizeof m);
  snprintf(sec, sizeof sec, "%s.score", section);
  if (!kd_config_has(ctx->cfg, sec)) return KD_OK;
  const char *kn = NULL;
  KD_TRY(kd_config_get_str(ctx->cfg, "kernel.name", "gaussian", NULL, 0, &kn));
  KD_CHECK(!strcmp(kn, "stein"), KD_ERR_CONFIG,
           "%s: %s: scores are read for the Stein kernel only (kernel.name is %s; set it to "
           "stein or remove the score)",
           kd_config_where(ctx->cfg, sec, where, sizeof where), sec, kn);
  snprintf(key, sizeof key, "%s.type", sec);
  KD_TRY(kd_config_get_str(ctx->cfg, key, NULL, NULL, 1, &type));
  snprintf(what, sizeof what, "%s (%s)", sec, type);
  if (kd_task_is_file_type(type) || !strcmp(type, "memory")) {
    KD_TRY(kd_task_read_pointset(ctx, sec, &sps, &sn, &sd));
    KD_CHECK(sn == n && sd == *d, KD_ERR_INPUT,
             "%s: %s: the scores are %lld x %d but the points are %lld x %d",
             kd_config_where(ctx->cfg, key, where, sizeof where), sec, (long long)sn, sd,
             (long long)n, *d);
  } else {
    KD_TRY(kd_score_measure_(ctx, section, sec, type, *d, &m));
    KD_CHECK(m.d == *d, KD_ERR_CONFIG, "%s: %s: the score's measure has d = %d, the points %d",
             kd_config_where(ctx->cfg, key, where, sizeof where), sec, m.d, *d);
  }
  if (*ps) {
    const double *sl = sps ? kd_pointset_rows_const(sps) : NULL;
    if (!sps) {
      const kd_lidx nl = kd_pointset_n_local(*ps);
      S = malloc(sizeof(double) * (size_t)(nl > 0 ? nl : 1) * (size_t)*d);
      lerr =
          S ? kd_score_eval_(&m, what, kd_pointset_rows_const(*ps), nl, kd_pointset_offset(*ps), S)
            : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "%s: out of memory", what);
      KD_TRY(kd_dist_agreed(ctx->comm, lerr));
      sl = S;
    }
    KD_TRY(kd_score_join_(*ps, sl, &joined));
    kd_pointset_destroy(ps);
    *ps = joined;
    joined = NULL;
  }
  *d *= 2;
cleanup:
  kd_measure_free(&m);
  kd_pointset_destroy(&sps);
  kd_pointset_destroy(&joined);
  free(S);
  return err;
}

kd_err kd_task_split_scores(kd_kernel *k, const kd_pointset *points, kd_result *res) {
  kd_err err = KD_OK;
  double *x = NULL, *s = NULL;
  if (!kd_kernel_has(k, KD_KCAP_STEIN) || res->d % 2 || !res->points) return KD_OK;
  KD_TRY(kd_task_stein_trust(k, points, res));
  const int dx = res->d / 2;
  const int64_t n = res->n, dims[2] = {n, dx};
  KD_ALLOC(x, (size_t)n * dx);
  KD_ALLOC(s, (size_t)n * dx);
  for (int64_t i = 0; i < n; i++) {
    memcpy(x + i * dx, res->points + i * 2 * dx, sizeof(double) * (size_t)dx);
    memcpy(s + i * dx, res->points + i * 2 * dx + dx, sizeof(double) * (size_t)dx);
  }
  KD_TRY(kd_result_add_f64(res, "/coreset/scores", 2, dims, s));
  free(res->points);
  res->points = x;
  x = NULL;
  res->d = dx;
cleanup:
  free(x);
  free(s);
  return err;
}

/* kernel.ls: auto and kernel.precondition: auto (src/kernel/stein_tune.c): M is the explicit
 * preconditioner already applied, or NULL. Collective. */
static kd_err kd_task_stein_auto_(kd_kernel *k, const kd_pointset *ps, const double *M,
                                  int tune_pre) {
  kd_err err = KD_OK;
  kd_stein_tune t;
  const int tune_ls = kd_kernel_get_params(k)->ls_median == 2;
  if (!tune_ls && !tune_pre) return KD_OK;
  KD_CHECK(ps != NULL, KD_ERR_CONFIG,
           "kernel: 'auto' (ls or precondition) needs the data and its scores; set values");
  KD_TRY(kd_kernel_stein_autotune(k, ps, M, tune_ls, tune_pre, &t));
  if (tune_pre)
    kd_log_info(
        "kernel: precondition auto: %s (the coordinates' mean squared scores differ by "
        "%.3gx over %lld rows)",
        t.precondition ? "diag(1 / mean s_j^2)" : "none", t.anisotropy, (long long)t.rows);
  if (tune_ls && t.ls > 0)
    kd_log_info("kernel: ls auto = %.6g (mean s^T M s = %.6g over %lld rows)", t.ls, t.fisher_trace,
                (long long)t.rows);
  if (tune_ls && !(t.ls > 0))
    kd_log_info(
        "kernel: ls auto: the scores are 0 on the rows looked at; the median heuristic "
        "instead");
cleanup:
  return err;
}

kd_err kd_task_record_stein_kernel(const kd_kernel *k, kd_result *res) {
  kd_err err = KD_OK;
  if (!k || !kd_kernel_has(k, KD_KCAP_STEIN)) return KD_OK;
  const int pre = kd_kernel_stein_precond_kind(k);
  KD_TRY(kd_result_set_metric(res, "kernel_precondition", pre));
  KD_TRY(kd_result_set_metric(res, "kernel_ls_auto", kd_kernel_get_params(k)->ls_median == 2));
cleanup:
  return err;
}

/* kernel.precondition: diag | matrix: M = the sample covariance of the x coordinates (or its
 * diagonal) over at most KD_PRE_SAMPLE rows taken at a fixed stride (rows i n / m), gathered on
 * every rank, so M does not depend on the rank count; auto: stein_tune.c. Collective. */
enum { KD_PRE_SAMPLE = 20000 };

kd_err kd_task_stein_precond(const kd_task_ctx *ctx, kd_kernel *k, const kd_pointset *ps) {
  kd_err err = KD_OK;
  const char *pre = NULL;
  kd_gidx *idx = NULL;
  double *rows = NULL, *M = NULL, *mu = NULL;
  if (!k || !kd_kernel_has(k, KD_KCAP_STEIN)) return KD_OK;
  KD_TRY(
      kd_config_get_str(ctx->cfg, "kernel.precondition", "auto", "auto|none|diag|matrix", 0, &pre));
  if (!strcmp(pre, "none") || !strcmp(pre, "auto"))
    return kd_task_stein_auto_(k, ps, NULL, !strcmp(pre, "auto"));
  KD_CHECK(ps != NULL, KD_ERR_CONFIG,
           "kernel.precondition: %s needs the data to estimate the covariance from", pre);
  const kd_gidx n = kd_pointset_n_global(ps);
  const int d = kd_pointset_dim(ps), dx = d / 2;
  KD_CHECK(n >= 2, KD_ERR_INPUT, "kernel.precondition: needs at least 2 points (got %lld)",
           (long long)n);
  const kd_lidx m = n < KD_PRE_SAMPLE ? (kd_lidx)n : KD_PRE_SAMPLE;
  const MPI_Comm comm = kd_pointset_comm(ps);
  KD_ALLOC_AGREED(comm, idx, m);
  KD_ALLOC_AGREED(comm, rows, (size_t)m * d);
  KD_ALLOC_AGREED(comm, M, (size_t)dx * dx);
  KD_ALLOC_AGREED(comm, mu, dx);
  for (kd_lidx i = 0; i < m; i++) idx[i] = (kd_gidx)((double)i * (double)n / (double)m);
  KD_TRY(kd_pointset_gather_rows(ps, idx, m, rows));
  for (kd_lidx i = 0; i < m; i++)
    for (int j = 0; j < dx; j++) mu[j] += rows[i * d + j];
  for (int j = 0; j < dx; j++) mu[j] /= (double)m;
  for (kd_lidx i = 0; i < m; i++)
    for (int a = 0; a < dx; a++)
      for (int b = 0; b <= a; b++)
        M[a * dx + b] += (rows[i * d + a] - mu[a]) * (rows[i * d + b] - mu[b]);
  for (int a = 0; a < dx; a++)
    for (int b = 0; b <= a; b++) {
      const double v = !strcmp(pre, "diag") && a != b ? 0.0 : M[a * dx + b] / (double)(m - 1);
      M[a * dx + b] = M[b * dx + a] = v;
    }
  KD_TRY(kd_kernel_set_stein_precond(k, M));
  kd_log_info("kernel: preconditioned by the %s of the sample covariance of %lld rows",
              strcmp(pre, "diag") ? "whole matrix" : "diagonal", (long long)m);
  KD_TRY(kd_task_stein_auto_(k, ps, M, 0));
cleanup:
  free(idx);
  free(rows);
  free(M);
  free(mu);
  return err;
}
