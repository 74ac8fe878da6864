/* stein_thin.c - greedy Stein thinning (Riabiz et al. 2022, Alg. 1): point t + 1 is the input row
 *   x = argmin_i  k(x_i, x_i) / 2 + sum_{j <= t} k(x_{pi(j)}, x_i) - (t + 1) z(x_i),
 * the row that minimises the MMD of the uniform measure on the chosen multiset against the target
 * (z = 0 for the Stein target, so this is KSD minimisation). With replacement (the paper's rule) a
 * row can be chosen again and the output lists it again; replacement: false keeps the rows
 * distinct. Ties go to the lowest global index. Cost n_out n kernel evaluations. */
#include <math.h>
#include <stdlib.h>

#include "algo/stein/stein_impl.h"
#include "comm/dist_impl.h"

typedef struct {
  int64_t n_out;
  int replacement;
} kd_stein_thin_params_;

static const kd_param_spec kd_stein_thin_spec_[] = {
    KD_PARAM_N_OUT(kd_stein_thin_params_, n_out, 1, 1e15, "number of output points"),
    {"replacement", KD_PARAM_BOOL, 1, NULL, 0, 1, NULL,
     "allow a row to be chosen again (Riabiz et al.; the output then repeats it)",
     KD_PARAM_AT(kd_stein_thin_params_, replacement)},
};

/* Without replacement the rows are distinct: n_out <= n. Used by run() and by validate. */
static kd_err kd_stein_thin_sizes_(const kd_stein_thin_params_ *p, kd_gidx n) {
  kd_err err = KD_OK;
  KD_CHECK_KEY(p->replacement || p->n_out <= n, KD_ERR_CONFIG, "algorithm.n_out",
               "algorithm.n_out = %lld exceeds the %lld input points (replacement: false)",
               (long long)p->n_out, (long long)n);
cleanup:
  return err;
}

static kd_err kd_stein_thin_check_(const kd_params *params, const kd_algo_shape *s) {
  kd_err err = KD_OK;
  kd_stein_thin_params_ p = {0};
  KD_TRY(kd_params_fill(params, &p));
  KD_TRY(kd_stein_thin_sizes_(&p, s->n_in));
cleanup:
  return err;
}

static kd_err kd_stein_thin_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_stein_thin_params_ p = {0};
  double *z = NULL, *dg = NULL, *acc = NULL, *col = NULL, *row = NULL;
  char *used = NULL;
  KD_TRY(kd_params_fill(in->params, &p));
  const kd_pointset *ps = in->points;
  const kd_gidx n = kd_pointset_n_global(ps), off = kd_pointset_offset(ps);
  const kd_lidx nl = kd_pointset_n_local(ps);
  const int d = kd_pointset_dim(ps);
  const double *X = kd_pointset_rows_const(ps);
  KD_TRY(kd_stein_thin_sizes_(&p, n));
  const size_t nn = (size_t)(nl > 0 ? nl : 1);
  z = calloc(nn, sizeof *z), dg = calloc(nn, sizeof *dg), acc = calloc(nn, sizeof *acc);
  col = calloc(nn, sizeof *col), used = calloc(nn, 1), row = calloc((size_t)d, sizeof *row);
  if (!z || !dg || !acc || !col || !used || !row)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "stein_thin: out of memory (%lld rows)",
                      (long long)nl);
  KD_TRY(kd_dist_agreed(in->comm, lerr));
  KD_TRY(kd_target_embed(in->target, ps, z));
  KD_TRY(kd_dist_agreed(in->comm, kd_kernel_diag(in->kernel, X, nl, dg)));
  KD_TRY(kd_result_alloc(out, p.n_out, d));
  kd_interrupt_anywhere(1); /* no safe point: a signal stops the run where it is (exit 3) */
  for (int64_t t = 0; t < p.n_out; t++) {
    double best = INFINITY, vmin = 0.0;
    kd_gidx bi = -1, g = -1;
    for (kd_lidx i = 0; i < nl; i++) {
      if (used[i]) continue;
      const double f = fma(-(double)(t + 1), z[i], 0.5 * dg[i] + acc[i]);
      if (f < best) best = f, bi = off + i;
    }
    /* polled once per step, agreed in the argmin this step does anyway */
    KD_TRY(kd_dist_argmin(in->comm, best, bi, kd_interrupt_check("stein_thin (no checkpoint)"),
                          &vmin, &g));
    KD_CHECK(g >= 0, KD_ERR_NUMERIC, "stein_thin: no admissible row at step %lld", (long long)t);
    KD_TRY(kd_pointset_gather_rows(ps, &g, 1, row));
    lerr = kd_stein_column(in->kernel, X, nl, row, col);
    KD_TRY(kd_dist_agreed(in->comm, lerr));
    for (kd_lidx i = 0; i < nl; i++) acc[i] += col[i];
    if (!p.replacement && g >= off && g < off + nl) used[g - off] = 1;
    for (int j = 0; j < d; j++) out->points[t * d + j] = row[j];
    out->indices[t] = g;
    out->weights[t] = 1.0 / (double)p.n_out;
    kd_log_progress("stein_thin", t + 1, NAN, t + 1, t + 1 == p.n_out);
  }
  out->mmd = NAN;
cleanup:
  kd_interrupt_anywhere(0);
  free(z), free(dg), free(acc), free(col), free(used), free(row);
  return err;
}

const kd_algo_desc kd_algo_stein_thin = {
    "stein_thin",
    "thin",
    "greedy Stein thinning (Riabiz et al. 2022): each step adds the row that minimises the KSD "
    "(any kernel: the MMD) of the chosen multiset",
    kd_stein_thin_spec_,
    (int)(sizeof kd_stein_thin_spec_ / sizeof kd_stein_thin_spec_[0]),
    kd_stein_thin_run_,
    KD_ALGO_SCORE,
    kd_stein_thin_check_,
    NULL};
