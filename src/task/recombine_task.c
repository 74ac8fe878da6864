/* recombine_task.c - `task: recombine`: Caratheodory recombination (Hayakawa, Oberhauser & Lyons,
 * Remark 1) of any weighted point set against any test-function matrix, reusing recombination.c.
 *
 *   task: recombine
 *   data:           a point-set section (N x d rows; the rule's support is taken from these rows)
 *   test_functions: optional point-set section (N x m matrix, row i = the m test functions at
 *                   data row i); default: the data coordinates themselves (m = d)
 *   recombine:      {leaves: 0}   (0 = auto: min(16, N / (8(m+1))), at least 1)
 *
 * Output: at most m+1 data rows (indices = 0-based data rows) with weights >= 0 summing to 1 whose
 * weighted test-function means equal those of the (weighted) data; /metrics max_mean_error (the
 * largest relative mean error) and test_functions = m. Rows are moved to their leaves one rank
 * block at a time (a broadcast per rank), so the rule does not depend on the rank count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/quadrature/recombination.h"
#include "dist/dist_impl.h"
#include "task/task_impl.h"

/* The keys of the `recombine:` section; defaults stated here only. */
static const kd_param_spec kd_recombine_keys_[] = {
    {.key = "leaves",
     .type = KD_PARAM_INT,
     .def = 0,
     .min = 0,
     .max = 1e6,
     .doc = "leaves of the recombination tree (0: min(16, N / (8(m+1))), at least 1)"},
};

typedef struct {
  kd_pointset *data, *tf;
  int64_t leaves;
} kd_recombine_state_;

static void kd_recombine_destroy_(void **state) {
  kd_recombine_state_ *s = state ? *state : NULL;
  if (!s) return;
  kd_pointset_destroy(&s->data);
  kd_pointset_destroy(&s->tf);
  free(s);
  *state = NULL;
}

static kd_err kd_recombine_setup_(const kd_task_ctx *ctx, void **state) {
  kd_err err = KD_OK;
  kd_recombine_state_ *s = NULL;
  kd_params keys = {0};
  KD_ALLOC(s, 1);
  KD_TRY(kd_task_read_pointset(ctx, "data", &s->data));
  if (kd_config_has(ctx->cfg, "test_functions"))
    KD_TRY(kd_task_read_pointset(ctx, "test_functions", &s->tf));
  KD_TRY(kd_config_get_params(ctx->cfg, "recombine", kd_recombine_keys_,
                              (int)(sizeof kd_recombine_keys_ / sizeof kd_recombine_keys_[0]),
                              &keys));
  s->leaves = kd_params_int(&keys, "leaves");
  if (s->data && s->tf)
    KD_CHECK(kd_pointset_n_global(s->tf) == kd_pointset_n_global(s->data), KD_ERR_INPUT,
             "test_functions: %lld rows but data has %lld", (long long)kd_pointset_n_global(s->tf),
             (long long)kd_pointset_n_global(s->data));
  *state = s;
  s = NULL;
cleanup:
  kd_params_free(&keys);
  kd_recombine_destroy_((void **)&s);
  return err;
}

static kd_err kd_recombine_run_(const kd_task_ctx *ctx, void *state, kd_result *res,
                                kd_task_info *info) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_recombine_state_ *s = state;
  kd_recomb_set *leaves = NULL, rule = {0};
  double *blk = NULL, *sums = NULL, *rsum = NULL;
  int64_t lo = 0, hi = 0;
  KD_CHECK(s && s->data, KD_ERR_INTERNAL, "task run without setup");
  MPI_Comm comm = ctx->comm;
  const int rank = kd_dist_rank(comm), size = kd_dist_size(comm);
  const kd_pointset *F = s->tf ? s->tf : s->data;
  const int m = kd_pointset_dim(F), d = kd_pointset_dim(s->data);
  const int64_t N = kd_pointset_n_global(s->data);
  int64_t T = s->leaves > 0 ? s->leaves : N / (8 * (int64_t)(m + 1));
  if (s->leaves == 0 && T > 16) T = 16;
  if (T < 1) T = 1;
  if (T > N) T = N;
  snprintf(info->algorithm, sizeof info->algorithm, "recombination");
  snprintf(info->kernel, sizeof info->kernel, "none");
  kd_recomb_leaf_range(T, rank, size, &lo, &hi);
  const int64_t row0 = N * lo / T, row1 = N * hi / T;
  KD_ALLOC(leaves, hi - lo > 0 ? hi - lo : 1);
  for (int64_t j = lo; j < hi; j++) {
    KD_TRY(kd_recomb_set_alloc(&leaves[j - lo], N * (j + 1) / T - N * j / T, m));
    leaves[j - lo].n = N * (j + 1) / T - N * j / T;
  }
  /* local weighted sums (for the check) and the packed block [w, F] of this rank */
  const kd_lidx nl = kd_pointset_n_local(F);
  const double *Fl = kd_pointset_rows_const(F), *wl = kd_pointset_weights_const(s->data);
  KD_ALLOC(sums, m + 1);
  KD_ALLOC(rsum, m + 1);
  /* move every rank's block to the owners of its leaves: one broadcast per rank */
  for (int r = 0; r < size; r++) {
    const int64_t a = kd_pointset_rank_offset(F, r), b = kd_pointset_rank_offset(F, r + 1);
    free(blk);
    blk = malloc(sizeof(double) * (size_t)((b - a) * (m + 1) > 0 ? (b - a) * (m + 1) : 1));
    if (!blk)
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "recombine: block of %lld rows",
                        (long long)(b - a));
    KD_TRY(kd_dist_agreed(comm, lerr));
    if (r == rank)
      for (kd_lidx i = 0; i < nl; i++) {
        blk[i * (m + 1)] = wl ? wl[i] : 1.0 / (double)N;
        memcpy(blk + i * (m + 1) + 1, Fl + (size_t)i * m, sizeof(double) * m);
      }
    KD_TRY(kd_dist_bcast(comm, blk, (int64_t)sizeof(double) * (b - a) * (m + 1), r));
    const int64_t c0 = a > row0 ? a : row0, c1 = b < row1 ? b : row1;
    for (int64_t g = c0; g < c1; g++) {
      /* leaf of row g: the j with N*j/T <= g < N*(j+1)/T */
      int64_t j = (g * T) / N;
      while (N * (j + 1) / T <= g) j++;
      while (N * j / T > g) j--;
      kd_recomb_set *ls = &leaves[j - lo];
      const int64_t i = g - N * j / T;
      ls->gid[i] = g;
      ls->w[i] = blk[(g - a) * (m + 1)];
      memcpy(ls->F + i * m, blk + (g - a) * (m + 1) + 1, sizeof(double) * m);
    }
    if (r == rank)
      for (kd_lidx i = 0; i < nl; i++) {
        const double w = blk[i * (m + 1)];
        sums[m] += w;
        for (int q = 0; q < m; q++) sums[q] += w * blk[i * (m + 1) + 1 + q];
      }
  }
  KD_TRY(kd_dist_sum(comm, sums, m + 1));
  KD_TRY(kd_recomb_tree(comm, m, T, leaves, &rule));
  /* the rule: data rows, normalised weights, check of the means */
  KD_TRY(kd_result_alloc(res, rule.n, d));
  double tw = 0;
  for (int64_t i = 0; i < rule.n; i++) tw += rule.w[i];
  for (int64_t i = 0; i < rule.n; i++) {
    res->indices[i] = rule.gid[i];
    res->weights[i] = rule.w[i] / tw;
    rsum[m] += rule.w[i];
    for (int q = 0; q < m; q++) rsum[q] += rule.w[i] * rule.F[i * m + q];
  }
  KD_TRY(kd_pointset_gather_rows(s->data, rule.gid, rule.n, res->points));
  double worst = fabs(rsum[m] - sums[m]) / fabs(sums[m]);
  for (int q = 0; q < m; q++)
    worst = fmax(worst, fabs(rsum[q] - sums[q]) / fmax(fabs(sums[q]), 1e-300));
  res->mmd = NAN;
  KD_TRY(kd_result_set_metric(res, "max_mean_error", worst));
  KD_TRY(kd_result_set_metric(res, "test_functions", (double)m));
  KD_TRY(kd_result_set_metric(res, "leaves", (double)T));
cleanup:
  if (leaves)
    for (int64_t j = 0; j < hi - lo; j++) kd_recomb_set_free(&leaves[j]);
  free(leaves);
  kd_recomb_set_free(&rule);
  free(blk);
  free(sums);
  free(rsum);
  return err;
}

/* designated initialisers: fields added later to kd_task_desc stay zero (NULL) */
const kd_task_desc kd_task_recombine = {
    .name = "recombine",
    .summary =
        "Caratheodory recombination of a weighted point set to <= m+1 rows matching m "
        "test-function means",
    .setup = kd_recombine_setup_,
    .run = kd_recombine_run_,
    .destroy = kd_recombine_destroy_};
