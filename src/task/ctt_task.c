/* ctt_task.c - the tasks of the testing family (paper 003, Sec. 6):
 *   task: ctt        one two-sample test of X (section `x:`) against Y (section `y:`) by the
 *                    algorithm of `algorithm.name` (ctt = Compress Then Test, Alg. 3; ctt_exact =
 *                    the quadratic permutation MMD test); outputs /test/... and the coresets.
 *   task: ctt_study  rejection rate +- SE and mean time per test over `study.replicates` seeded
 *                    replicates of generator samples (`x:`, `y:` measure sections) for every g of
 *                    `study.g` and the exact test; /study/... datasets and a CSV table.
 * Tasks read config and write the CSV; the algorithms in ctt.c / ctt_exact.c / ctt_study.c do not.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/twosample/ctt_impl.h"
#include "core/mem.h"
#include "comm/dist_impl.h"
#include "io/io_impl.h"
#include "io/publish.h"
#include "kdistill/author/kd_ckpt.h"
#include "task/task_impl.h"

/* ------------------------------------------------------------------ shared */
/* Median heuristic on the pooled sample: up to `per` seeded rows of each of X and Y (replicated
 * on every rank), handed to kd_task_kernel_finish (which subsamples by kernel.median_sample). */
static kd_err kd_ctt_pooled_median_(const kd_task_ctx *ctx, kd_kernel *k, const double *rows,
                                    kd_gidx nrows, int d) {
  kd_err err = KD_OK;
  kd_pointset *pool = NULL;
  KD_TRY(kd_pointset_from_replicated(ctx->comm, nrows, d, rows, NULL, &pool));
  KD_TRY(kd_task_kernel_finish(ctx, k, pool));
cleanup:
  kd_pointset_destroy(&pool);
  return err;
}

/* Seeded stratified choice of r of the n global rows (r <= n): row i is drawn uniformly from
 * stratum [i n / r, (i+1) n / r), so the rows are distinct and spread over the whole set (also
 * for sorted files), with O(r) memory. */
static void kd_ctt_pick_rows_(uint64_t seed, uint64_t stream, kd_gidx n, kd_lidx r, kd_gidx *idx) {
  kd_rng g = kd_rng_make(seed, stream);
  for (kd_lidx i = 0; i < r; i++) {
    const kd_gidx lo = (kd_gidx)((double)i * (double)n / (double)r);
    kd_gidx hi = (kd_gidx)((double)(i + 1) * (double)n / (double)r);
    if (hi > n) hi = n;
    if (hi <= lo) hi = lo + 1;
    idx[i] = lo + (kd_gidx)kd_rng_next_below(&g, (uint64_t)(hi - lo));
  }
}

/* ------------------------------------------------------------------ task: ctt */
typedef struct {
  kd_pointset *x, *y;
  kd_kernel *k;
  const kd_algo_desc *desc;
  kd_params params;
  double *ls_list, *weights; /* actt: algorithm.ls_list, algorithm.weights (NULL: not given) */
  int n_ls_list, n_weights;
} kd_ctt_state;

static void kd_ctt_destroy_(void **state) {
  kd_ctt_state *s = state ? *state : NULL;
  if (!s) return;
  kd_pointset_destroy(&s->x);
  kd_pointset_destroy(&s->y);
  kd_kernel_destroy(&s->k);
  kd_params_free(&s->params);
  free(s->ls_list);
  free(s->weights);
  free(s);
  *state = NULL;
}

/* actt's optional lists (docs/ctt.md): algorithm.ls_list, strictly increasing positive length
 * scales in place of the grid (algorithm.n_ls, if the user set it, must equal their count and is
 * recorded as that count, so the resolved configuration runs again; algorithm.ls_ratio must keep
 * its default), and algorithm.weights, one positive weight per length scale (normalised by actt).
 * Read only for actt, so another algorithm names them as unknown keys. n_ls_set: algorithm.n_ls
 * was in the configuration before the defaults were filled in. Local. */
/* actt's list of length scales (1 to KD_KERNEL_MAX_LS, positive, strictly increasing) read from key
 * into *ls / *L. Local. */
static kd_err kd_actt_read_ls_list_(kd_config *cfg, const char *key, double **ls, int *L) {
  kd_err err = KD_OK;
  char where[512];
  KD_TRY(kd_config_get_f64_list(cfg, key, 1, L, ls));
  kd_config_where(cfg, key, where, sizeof where);
  KD_CHECK(*L >= 1 && *L <= KD_KERNEL_MAX_LS, KD_ERR_CONFIG, "%s: %s: %d length scales (1 to %d)",
           where, key, *L, KD_KERNEL_MAX_LS);
  for (int j = 0; j < *L; j++)
    KD_CHECK(isfinite((*ls)[j]) && (*ls)[j] > 0.0 && (j == 0 || (*ls)[j] > (*ls)[j - 1]),
             KD_ERR_CONFIG,
             "%s: %s: entry %d is %g; the length scales must be positive and strictly "
             "increasing",
             where, key, j, (*ls)[j]);
cleanup:
  return err;
}

/* actt's weights, one per length scale (L of them, positive), read from key into *w / *nw.
 * Local. */
static kd_err kd_actt_read_weights_(kd_config *cfg, const char *key, int L, double **w, int *nw) {
  kd_err err = KD_OK;
  char where[512];
  KD_TRY(kd_config_get_f64_list(cfg, key, 1, nw, w));
  kd_config_where(cfg, key, where, sizeof where);
  KD_CHECK(*nw == L, KD_ERR_CONFIG, "%s: %s: %d weights for %d length scales", where, key, *nw, L);
  for (int j = 0; j < L; j++)
    KD_CHECK(isfinite((*w)[j]) && (*w)[j] > 0.0 && (*w)[j] < 1e300, KD_ERR_CONFIG,
             "%s: %s: entry %d is %g; weights must be positive", where, key, j, (*w)[j]);
cleanup:
  return err;
}

/* A list of L length scales (list_key) replaces actt's grid: the count key (n_key, value n_ls,
 * n_set when the configuration gave it) must equal L and the ratio key (value ratio) keep its
 * default; the count is then set to L and marked read, so the resolved configuration runs
 * again. Local. */
static kd_err kd_actt_list_replaces_grid_(kd_config *cfg, const char *list_key, int L,
                                          const char *n_key, int64_t n_ls, int n_set,
                                          const char *ratio_key, double ratio, double ratio_def) {
  kd_err err = KD_OK;
  char where[512];
  KD_CHECK(!n_set || n_ls == L, KD_ERR_CONFIG, "%s: %s = %lld but %s has %d length scales",
           kd_config_where(cfg, n_key, where, sizeof where), n_key, (long long)n_ls, list_key, L);
  KD_CHECK(ratio == ratio_def, KD_ERR_CONFIG,
           "%s: %s is not used with %s (the list replaces the grid)",
           kd_config_where(cfg, ratio_key, where, sizeof where), ratio_key, list_key);
  KD_TRY(kd_config_set_int(cfg, n_key, L));
  KD_TRY(kd_config_mark_read(cfg, n_key));
cleanup:
  return err;
}

static kd_err kd_ctt_actt_lists_(const kd_task_ctx *ctx, kd_ctt_state *s, int n_ls_set) {
  kd_err err = KD_OK;
  kd_config *cfg = ctx->cfg;
  if (strcmp(s->desc->name, "actt") != 0) return KD_OK;
  if (kd_config_has(cfg, "algorithm.ls_list")) {
    KD_TRY(kd_actt_read_ls_list_(cfg, "algorithm.ls_list", &s->ls_list, &s->n_ls_list));
    double ratio_def = 0.0;
    for (int j = 0; j < s->desc->n_params; j++)
      if (!strcmp(s->desc->params[j].key, "ls_ratio")) ratio_def = s->desc->params[j].def;
    KD_TRY(kd_actt_list_replaces_grid_(
        cfg, "algorithm.ls_list", s->n_ls_list, "algorithm.n_ls", kd_params_int(&s->params, "n_ls"),
        n_ls_set, "algorithm.ls_ratio", kd_params_f64(&s->params, "ls_ratio"), ratio_def));
  }
  if (kd_config_has(cfg, "algorithm.weights")) {
    const int L = s->n_ls_list > 0 ? s->n_ls_list : (int)kd_params_int(&s->params, "n_ls");
    KD_TRY(kd_actt_read_weights_(cfg, "algorithm.weights", L, &s->weights, &s->n_weights));
  }
cleanup:
  return err;
}

static kd_err kd_ctt_setup_(const kd_task_ctx *ctx, void **state) {
  kd_err err = KD_OK;
  kd_ctt_state *s = NULL;
  double *rows = NULL;
  kd_gidx *idx = NULL;
  KD_ALLOC(s, 1);
  kd_gidx m = 0, n = 0;
  int dx = 0;
  KD_TRY(kd_task_read_pointset(ctx, "x", &s->x, &m, &dx));
  KD_TRY(kd_task_read_pointset(ctx, "y", &s->y, &n, NULL));
  if (s->x && s->y)
    KD_CHECK(kd_pointset_dim(s->x) == kd_pointset_dim(s->y), KD_ERR_INPUT,
             "x has dimension %d but y has dimension %d", kd_pointset_dim(s->x),
             kd_pointset_dim(s->y));
  /* validate_only: no point sets; the dimension read from the section when it states one */
  const int d = s->x ? kd_pointset_dim(s->x) : dx > 0 ? dx : 2;
  KD_TRY(kd_task_read_kernel(ctx, "kernel", d, &s->k));
  const int n_ls_set = kd_config_has(ctx->cfg, "algorithm.n_ls"); /* before the defaults */
  KD_TRY(kd_task_read_algo(ctx, "algorithm", "ctt", &s->desc, &s->params));
  KD_TRY(kd_ctt_actt_lists_(ctx, s, n_ls_set));
  if (!ctx->evaluate_only) { /* the algorithm's checks against m and n, validate included */
    const kd_algo_shape sh = {m, 0, dx, kd_dist_size(ctx->comm), n};
    KD_TRY(kd_task_check_algo(ctx, s->desc, &s->params, &sh));
  }
  if (!ctx->validate_only && kd_kernel_median_pending(s->k)) {
    const kd_lidx rx = m < 2000 ? (kd_lidx)m : 2000, ry = n < 2000 ? (kd_lidx)n : 2000;
    KD_ALLOC(rows, (rx + ry) * d);
    KD_ALLOC(idx, rx > ry ? rx : ry);
    kd_ctt_pick_rows_(ctx->seed, 0x6d656478ULL, m, rx, idx);
    KD_TRY(kd_pointset_gather_rows(s->x, idx, rx, rows));
    kd_ctt_pick_rows_(ctx->seed, 0x6d656479ULL, n, ry, idx);
    KD_TRY(kd_pointset_gather_rows(s->y, idx, ry, rows + (size_t)rx * d));
    KD_TRY(kd_ctt_pooled_median_(ctx, s->k, rows, rx + ry, d));
  }
  *state = s;
  s = NULL;
cleanup:
  free(rows);
  free(idx);
  if (s) {
    void *v = s;
    kd_ctt_destroy_(&v);
  }
  return err;
}

static kd_err kd_ctt_run_task_(const kd_task_ctx *ctx, void *state, kd_result *res,
                               kd_task_info *info) {
  kd_err err = KD_OK;
  kd_ctt_state *s = state;
  kd_ctt_in ti = {.y = s->y,
                  .ls_list = s->ls_list,
                  .n_ls_list = s->n_ls_list,
                  .weights = s->weights,
                  .n_weights = s->n_weights};
  kd_algo_in in;
  memset(&in, 0, sizeof in);
  in.comm = ctx->comm;
  in.kernel = s->k;
  in.points = s->x;
  in.params = &s->params;
  in.seed = ctx->seed;
  in.task_in = &ti;
  snprintf(info->algorithm, sizeof info->algorithm, "%s", s->desc->name);
  kd_log_info("running %s on m = %lld, n = %lld points", s->desc->name,
              (long long)kd_pointset_n_global(s->x), (long long)kd_pointset_n_global(s->y));
  kd_interrupt_anywhere(1); /* no checkpoint: a signal stops the test where it is (exit 3) */
  err = kd_algo_run(s->desc, &in, res);
  kd_interrupt_anywhere(0);
  KD_TRY(kd_dist_agreed(ctx->comm, err));
  KD_TRY(kd_task_record_kernel(s->k, info, res));
  KD_TRY(kd_result_set_count(res, "stop_reason", KD_STOP_COMPLETE));
  {
    double st = NAN, pv = NAN, rj = NAN;
    kd_result_get_metric(res, "statistic", &st);
    kd_result_get_metric(res, "p_value", &pv);
    kd_result_get_metric(res, "reject", &rj);
    if (isnan(pv)) /* actt: a decision at level alpha, no p-value */
      kd_log_info("%s: statistic %.6g, %s at level alpha (%.3f s)", s->desc->name, st,
                  rj > 0.5 ? "reject" : "do not reject", res->seconds);
    else
      kd_log_info("%s: statistic %.6g, p-value %.4f, %s (%.3f s)", s->desc->name, st, pv,
                  rj > 0.5 ? "reject" : "do not reject", res->seconds);
  }
cleanup:
  return err;
}

/* designated initialisers: later optional fields of kd_task_desc stay zero (NULL) */
const kd_task_desc kd_task_ctt = {
    .name = "ctt",
    .summary =
        "two-sample test of x against y: Compress Then Test or the exact permutation MMD test",
    .setup = kd_ctt_setup_,
    .run = kd_ctt_run_task_,
    .destroy = kd_ctt_destroy_};

/* ------------------------------------------------------------- task: ctt_study */
typedef struct {
  kd_measure mx, my;
  kd_kernel *k;
  kd_ctt_study_spec sp;
  kd_kernel_params kp; /* the kernel's parameters with `median` resolved (sp.kp points here) */
  int64_t *g_list;
  int64_t *sub_list, *wb_list; /* study.subsample (n_out values), study.wblock (block sizes) */
  int64_t *lr_list;            /* study.lrctt (feature counts r) */
  int64_t *actt_list;          /* study.actt (actt's g values) */
  double *actt_ls, *actt_w;    /* study.actt_ls_list, study.actt_weights (NULL: none) */
  char *csv;                   /* study.csv ("" = none), owned */
  /* checkpointing (run.checkpoint_every in rounds of p replicates, run.checkpoint_path,
   * run.checkpoint_keep; docs/checkpoint.md) */
  int64_t ckpt_every;
  char *ckpt_path;
  int ckpt_keep;
} kd_study_state;

/* The scalar keys of the `study:` section in reading order, defaults stated here only (study.n
 * defaults to study.m: kd_study_read_keys_ sets that default); study.g is a list (default
 * kd_study_g_def_, not written into the resolved configuration). */
static const kd_param_spec kd_study_keys_[] = {
    {.key = "m", .type = KD_PARAM_INT, .def = 4096, .min = 1, .max = 1e12, .doc = "x sample size"},
    {.key = "n", .type = KD_PARAM_INT, .def = 0, .min = 1, .max = 1e12, .doc = "y sample size (m)"},
    {.key = "replicates",
     .type = KD_PARAM_INT,
     .def = 100,
     .min = 1,
     .max = 1e8,
     .doc = "seeded replicates per configuration"},
    {.key = "s", .type = KD_PARAM_INT, .def = 16, .min = 2, .max = 1048576, .doc = "bins (Alg. 3)"},
    {.key = "B", .type = KD_PARAM_INT, .def = 100, .min = 1, .max = 1e8, .doc = "permutations"},
    {.key = "alpha", .type = KD_PARAM_F64, .def = 0.05, .min = 0, .max = 1, .doc = "level, (0,1)"},
    {.key = "delta",
     .type = KD_PARAM_F64,
     .def = 0.5,
     .min = 0,
     .max = 1,
     .doc = "KT-Compress failure probability, (0,1)"},
    {.key = "exact", .type = KD_PARAM_BOOL, .def = 1, .doc = "also run the exact test"},
    {.key = "exact_tile",
     .type = KD_PARAM_INT,
     .def = 256,
     .min = 8,
     .max = 8192,
     .doc = "tile of the exact test's kernel matrix"},
    {.key = "csv", .type = KD_PARAM_STR, .def_str = "", .doc = "CSV table path (\"\": none)"},
};
static const double kd_study_g_def_[] = {0, 1, 2};

/* Read kd_study_keys_ into sp (the csv path into *csv, malloc'ed). study.n's default is
 * the value of study.m, so m is read first. Local. */
static kd_err kd_study_read_keys_(const kd_task_ctx *ctx, kd_ctt_study_spec *sp, char **csv) {
  kd_err err = KD_OK;
  enum { N = (int)(sizeof kd_study_keys_ / sizeof kd_study_keys_[0]) };
  kd_param_spec keys[N];
  kd_params p = {0};
  char where[512];
  memcpy(keys, kd_study_keys_, sizeof keys);
  KD_TRY(kd_config_get_params(ctx->cfg, "study", keys, 1, &p)); /* m alone */
  keys[1].def = (double)kd_params_int(&p, "m");
  kd_params_free(&p);
  KD_TRY(kd_config_get_params(ctx->cfg, "study", keys, N, &p));
  sp->m = kd_params_int(&p, "m");
  sp->n = kd_params_int(&p, "n");
  sp->T = kd_params_int(&p, "replicates");
  sp->s = kd_params_int(&p, "s");
  sp->B = kd_params_int(&p, "B");
  sp->alpha = kd_params_f64(&p, "alpha");
  sp->delta = kd_params_f64(&p, "delta");
  sp->exact = kd_params_bool(&p, "exact");
  sp->exact_tile = kd_params_int(&p, "exact_tile");
  KD_CHECK(sp->alpha > 0 && sp->alpha < 1, KD_ERR_CONFIG, "%s: study.alpha must be in (0,1)",
           kd_config_where(ctx->cfg, "study.alpha", where, sizeof where));
  KD_CHECK(sp->delta > 0 && sp->delta < 1, KD_ERR_CONFIG, "%s: study.delta must be in (0,1)",
           kd_config_where(ctx->cfg, "study.delta", where, sizeof where));
  const char *c = kd_params_str(&p, "csv");
  const size_t len = strlen(c) + 1;
  KD_ALLOC(*csv, len);
  memcpy(*csv, c, len);
cleanup:
  kd_params_free(&p);
  return err;
}

/* Up-front memory estimate of a ctt_study rank (docs/reliability.md): every replicate runs on one
 * rank, which holds both samples (m + n rows of d, with their bin and permutation bookkeeping,
 * about d + 8 values per row), one permutation statistic per B per bin pair, the results of
 * every replicate of every configuration, and actt's matrices and statistics per length scale.
 * Agreed. Collective. */
static kd_err kd_study_mem_check_(const kd_task_ctx *ctx, const kd_ctt_study_spec *sp, int d,
                                  int n_conf) {
  const double rows = (double)sp->m + (double)sp->n;
  double doubles =
      rows * (d + 8) + (double)sp->B * ((double)sp->s + 1) * 2 + 4.0 * (double)sp->T * n_conf;
  if (sp->n_actt > 0) /* actt: one s x s matrix and B2 + B + 1 statistics per length scale */
    doubles += (double)sp->actt_n_ls *
               ((double)sp->s * (double)sp->s + (double)sp->actt_B2 + (double)sp->B + 1.0);
  const double bytes = 8.0 * doubles;
  char what[128];
  snprintf(what, sizeof what, "ctt_study replicates of m = %lld, n = %lld rows", (long long)sp->m,
           (long long)sp->n);
  const kd_err local = kd_mem_require(bytes < 1.8e19 ? (uint64_t)bytes : UINT64_MAX, what,
                                      "study.m or study.n (a replicate runs on one rank)");
  return kd_dist_agreed(ctx->comm, local);
}

static void kd_study_destroy_(void **state) {
  kd_study_state *s = state ? *state : NULL;
  if (!s) return;
  kd_measure_free(&s->mx);
  kd_measure_free(&s->my);
  kd_kernel_destroy(&s->k);
  free(s->g_list);
  free(s->sub_list);
  free(s->wb_list);
  free(s->lr_list);
  free(s->actt_list);
  free(s->actt_ls);
  free(s->actt_w);
  free(s->csv);
  free(s->ckpt_path);
  free(s);
  *state = NULL;
}

/* The optional integer list study.<key> (subsample: n_out values in [2, min(m, n)], wblock: block
 * sizes, lrctt: feature counts, actt: g values in [0, 30]) into *out (*n entries; none when the
 * key is absent): integers in [lo, hi]. Local. */
static kd_err kd_study_sizes_(const kd_task_ctx *ctx, const char *key, int64_t lo, int64_t hi,
                              int64_t **out, int *n) {
  kd_err err = KD_OK;
  double *v = NULL;
  char where[512];
  *n = 0;
  if (!kd_config_has(ctx->cfg, key)) return KD_OK;
  KD_TRY(kd_config_get_f64_list(ctx->cfg, key, 0, n, &v));
  KD_ALLOC(*out, *n ? *n : 1);
  for (int i = 0; i < *n; i++) {
    KD_CHECK(v[i] == floor(v[i]) && v[i] >= (double)lo && v[i] <= (double)hi, KD_ERR_CONFIG,
             "%s: %s: entries must be integers in [%lld, %lld], got %g",
             kd_config_where(ctx->cfg, key, where, sizeof where), key, (long long)lo, (long long)hi,
             v[i]);
    (*out)[i] = (int64_t)v[i];
  }
cleanup:
  free(v);
  return err;
}

/* study.lrctt (a list of even feature counts r) into *out and sp->r_list; study.lrctt_g (default
 * 1, read only with study.lrctt) into sp->lr_g. Local. */
static kd_err kd_study_lrctt_(const kd_task_ctx *ctx, kd_ctt_study_spec *sp, int64_t **out) {
  kd_err err = KD_OK;
  char where[512];
  KD_TRY(kd_study_sizes_(ctx, "study.lrctt", 2, 1048576, out, &sp->n_lr));
  for (int i = 0; i < sp->n_lr; i++)
    KD_CHECK((*out)[i] % 2 == 0, KD_ERR_CONFIG, "%s: study.lrctt: entries must be even, got %lld",
             kd_config_where(ctx->cfg, "study.lrctt", where, sizeof where), (long long)(*out)[i]);
  sp->r_list = *out;
  sp->lr_g = 1;
  if (sp->n_lr > 0) /* read (and resolved) only for a study that runs lrctt */
    KD_TRY(kd_config_get_int(ctx->cfg, "study.lrctt_g", 1, 0, 30, &sp->lr_g));
cleanup:
  return err;
}

extern const kd_algo_desc kd_algo_actt;

/* study.actt (a list of g values) into *out and sp->actt_g_list; with it (and only then: read and
 * resolved) study.actt_n_ls, actt_ls_ratio, actt_B2, actt_B3, actt_compression with actt's own
 * defaults, ranges and choices (its spec table, algorithm.n_ls ...), and the kernel family checked
 * for the length-scale grid (and, compression: sum, for the mean of gaussians). Local. */
/* study.actt_ls_list and study.actt_weights (read only with study.actt) into *ls / *w and sp:
 * actt's algorithm.ls_list and algorithm.weights for the study. With the list, study.actt_n_ls
 * (when given: n_ls_set) must equal its length and is set to it, so that the resolved
 * configuration runs again, and study.actt_ls_ratio must keep its default. Local. */
static kd_err kd_study_actt_lists_(const kd_task_ctx *ctx, kd_ctt_study_spec *sp, int n_ls_set,
                                   double ratio_def, double **ls, double **w) {
  kd_err err = KD_OK;
  kd_config *cfg = ctx->cfg;
  char where[512];
  if (kd_config_has(cfg, "study.actt_ls_list")) {
    KD_TRY(kd_actt_read_ls_list_(cfg, "study.actt_ls_list", ls, &sp->n_actt_ls_list));
    sp->actt_ls_list = *ls;
    const int L = sp->n_actt_ls_list;
    KD_CHECK(sp->actt_compression != 2, KD_ERR_CONFIG,
             "%s: study.actt_compression: sum compresses with the mean of the gaussian kernels of "
             "the grid; it does not take study.actt_ls_list",
             kd_config_where(cfg, "study.actt_compression", where, sizeof where));
    KD_TRY(kd_actt_list_replaces_grid_(cfg, "study.actt_ls_list", L, "study.actt_n_ls",
                                       sp->actt_n_ls, n_ls_set, "study.actt_ls_ratio",
                                       sp->actt_ls_ratio, ratio_def));
    sp->actt_n_ls = L;
  }
  if (kd_config_has(cfg, "study.actt_weights")) {
    KD_TRY(kd_actt_read_weights_(cfg, "study.actt_weights", (int)sp->actt_n_ls, w,
                                 &sp->n_actt_weights));
    sp->actt_weights = *w;
  }
cleanup:
  return err;
}

static kd_err kd_study_actt_(const kd_task_ctx *ctx, const kd_kernel *k, kd_ctt_study_spec *sp,
                             int64_t **out, double **ls, double **w) {
  kd_err err = KD_OK;
  enum { NK = 5 };
  static const char *const grid[NK] = {"n_ls", "ls_ratio", "B2", "B3", "compression"};
  kd_param_spec keys[NK];
  char names[NK][32], where[512];
  kd_params p = {0};
  KD_TRY(kd_study_sizes_(ctx, "study.actt", 0, 30, out, &sp->n_actt));
  sp->actt_g_list = *out;
  if (sp->n_actt == 0) return KD_OK;
  for (int i = 0; i < NK; i++) {
    const kd_param_spec *row = NULL;
    for (int j = 0; j < kd_algo_actt.n_params && !row; j++)
      if (!strcmp(kd_algo_actt.params[j].key, grid[i])) row = &kd_algo_actt.params[j];
    KD_CHECK(row, KD_ERR_INTERNAL, "actt has no parameter %s", grid[i]);
    keys[i] = *row;
    snprintf(names[i], sizeof names[i], "actt_%s", grid[i]);
    keys[i].key = names[i];
    keys[i].offset = 0;
  }
  const int n_ls_set = kd_config_has(ctx->cfg, "study.actt_n_ls");
  KD_TRY(kd_config_get_params(ctx->cfg, "study", keys, NK, &p));
  sp->actt_n_ls = kd_params_int(&p, "actt_n_ls");
  sp->actt_ls_ratio = kd_params_f64(&p, "actt_ls_ratio");
  sp->actt_B2 = kd_params_int(&p, "actt_B2");
  sp->actt_B3 = kd_params_int(&p, "actt_B3");
  const char *comp = kd_params_str(&p, "actt_compression");
  sp->actt_compression = !strcmp(comp, "middle") ? 1 : !strcmp(comp, "sum") ? 2 : 0;
  KD_CHECK(sp->actt_n_ls == 1 || sp->actt_ls_ratio > 1.0, KD_ERR_CONFIG,
           "%s: study.actt_ls_ratio = %g: the length scales must differ (ratio > 1) when "
           "actt_n_ls = %lld",
           kd_config_where(ctx->cfg, "study.actt_ls_ratio", where, sizeof where), sp->actt_ls_ratio,
           (long long)sp->actt_n_ls);
  KD_CHECK(kd_actt_scalable(kd_kernel_get_params(k)->type), KD_ERR_CONFIG,
           "%s: study.actt: actt's length-scale grid needs a gaussian, laplace, imq or matern "
           "kernel (kernel %s)",
           kd_config_where(ctx->cfg, "kernel.name", where, sizeof where), kd_kernel_describe(k));
  KD_CHECK(sp->actt_compression != 2 || kd_kernel_get_params(k)->type == KD_KERNEL_GAUSSIAN,
           KD_ERR_CONFIG,
           "%s: study.actt_compression: sum compresses with the mean of the gaussian kernels of "
           "the grid; it needs kernel.name: gaussian (kernel %s)",
           kd_config_where(ctx->cfg, "study.actt_compression", where, sizeof where),
           kd_kernel_describe(k));
  KD_TRY(kd_study_actt_lists_(ctx, sp, n_ls_set, keys[1].def, ls, w));
cleanup:
  kd_params_free(&p);
  return err;
}

static kd_err kd_study_setup_(const kd_task_ctx *ctx, void **state) {
  kd_err err = KD_OK;
  kd_study_state *s = NULL;
  kd_config *cfg = ctx->cfg;
  double *gl = NULL, *rows = NULL;
  int ng = 0, exact = 1;
  char where[512];
  KD_ALLOC(s, 1);
  KD_TRY(kd_task_read_measure(ctx, "x", &s->mx));
  KD_TRY(kd_task_read_measure(ctx, "y", &s->my));
  KD_CHECK(s->mx.d == s->my.d, KD_ERR_CONFIG, "%s: y: dimension %d differs from x's %d",
           kd_config_where(cfg, "y", where, sizeof where), s->my.d, s->mx.d);
  const int d = s->mx.d;
  KD_TRY(kd_task_read_kernel(ctx, "kernel", d, &s->k));
  kd_ctt_study_spec *sp = &s->sp;
  KD_TRY(kd_study_read_keys_(ctx, sp, &s->csv));
  if (s->csv[0]) KD_TRY(kd_task_check_output(ctx, "study.csv", s->csv));
  exact = sp->exact;
  if (kd_config_has(cfg, "study.g")) {
    KD_TRY(kd_config_get_f64_list(cfg, "study.g", 0, &ng, &gl));
  } else {
    ng = (int)(sizeof kd_study_g_def_ / sizeof kd_study_g_def_[0]);
    KD_ALLOC(gl, ng);
    memcpy(gl, kd_study_g_def_, sizeof kd_study_g_def_);
  }
  KD_ALLOC(s->g_list, ng ? ng : 1);
  for (int i = 0; i < ng; i++) {
    KD_CHECK(gl[i] == floor(gl[i]) && gl[i] >= 0 && gl[i] <= 30, KD_ERR_CONFIG,
             "%s: study.g: entries must be integers in [0,30], got %g",
             kd_config_where(cfg, "study.g", where, sizeof where), gl[i]);
    s->g_list[i] = (int64_t)gl[i];
  }
  const int64_t lim = sp->m < sp->n ? sp->m : sp->n;
  KD_TRY(kd_study_sizes_(ctx, "study.subsample", 2, lim, &s->sub_list, &sp->n_sub));
  KD_TRY(kd_study_sizes_(ctx, "study.wblock", 2, lim, &s->wb_list, &sp->n_wb));
  KD_TRY(kd_study_lrctt_(ctx, sp, &s->lr_list));
  KD_TRY(kd_study_actt_(ctx, s->k, sp, &s->actt_list, &s->actt_ls, &s->actt_w));
  sp->n_out_list = s->sub_list;
  sp->block_list = s->wb_list;
  const int n_conf = ng + exact + sp->n_sub + sp->n_wb + sp->n_lr + sp->n_actt;
  KD_CHECK(n_conf >= 1, KD_ERR_CONFIG, "%s: study: empty g list, exact: false and no baselines",
           kd_config_where(cfg, "study", where, sizeof where));
  KD_TRY(kd_task_read_checkpoint(ctx, &s->ckpt_every, &s->ckpt_keep, &s->ckpt_path));
  sp->mx = &s->mx;
  sp->my = &s->my;
  sp->g_list = s->g_list;
  sp->n_g = ng;
  sp->seed = ctx->seed;
  /* the bins (the ctt split, kd_ctt_check_sizes): checked here so a bad grid fails before any
   * replicate runs */
  kd_ctt_params cp = {.s = sp->s, .g = 0, .delta = 0.5};
  int64_t bx = 0, by = 0, br = 0;
  KD_CHECK(sp->s >= 2 && kd_ctt_check_sizes(&cp, sp->m, sp->n, &bx, &by, &br) == KD_OK,
           KD_ERR_CONFIG,
           "%s: study.s = %lld does not split m = %lld and n = %lld into equal bins "
           "of at least 4 points",
           kd_config_where(cfg, "study.s", where, sizeof where), (long long)sp->s, (long long)sp->m,
           (long long)sp->n);
  KD_TRY(kd_study_mem_check_(ctx, sp, d, n_conf));
  if (!ctx->validate_only && kd_kernel_median_pending(s->k)) {
    /* one pilot draw of each sample (not a replicate's data) fixes ls for the whole study */
    const kd_lidx rx = sp->m < 2000 ? (kd_lidx)sp->m : 2000;
    const kd_lidx ry = sp->n < 2000 ? (kd_lidx)sp->n : 2000;
    KD_ALLOC(rows, (rx + ry) * d);
    KD_TRY(kd_measure_sample(&s->mx, kd_rng_u64(ctx->seed, 0x70696c6fULL, 0), 0, rx, rows));
    KD_TRY(kd_measure_sample(&s->my, kd_rng_u64(ctx->seed, 0x70696c6fULL, 1), 0, ry,
                             rows + (size_t)rx * d));
    KD_TRY(kd_ctt_pooled_median_(ctx, s->k, rows, rx + ry, d));
  }
  *state = s;
  s = NULL;
cleanup:
  free(gl);
  free(rows);
  if (s) {
    void *p = s;
    kd_study_destroy_(&p);
  }
  return err;
}

/* The name of a study configuration's test (the CSV's method column and the log). */
static const char *kd_study_method_name_(int64_t method) {
  static const char *const names[] = {"ctt", "exact", "subsample_test", "wblock", "lrctt", "actt"};
  return method >= 0 && method < 6 ? names[method] : "?";
}

/* Rank 0 writes the table; it is published atomically (io/publish.h). Collective. */
static kd_err kd_study_write_csv_(const kd_task_ctx *ctx, const kd_study_state *s,
                                  const kd_ctt_study_out *st) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_publish pub;
  if (!s->csv[0]) return KD_OK;
  KD_TRY(kd_dist_agreed(ctx->comm, kd_publish_begin(ctx->comm, s->csv, &pub)));
  if (pub.root) {
    FILE *fp = kd_publish_fopen(&pub);
    if (!fp) {
      lerr = kd_err_set(KD_ERR_IO, __FILE__, __LINE__, "study.csv: cannot open %s: %s", pub.tmp,
                        strerror(errno));
    } else {
      const kd_ctt_study_spec *sp = &s->sp;
      errno = 0;
      int bad = fprintf(fp,
                        "method,g,s,m,n,d,B,alpha,replicates,rejections,rejection_rate,se,"
                        "mean_seconds,size\n") < 0;
      for (int c = 0; c < st->n_conf && !bad; c++)
        bad = fprintf(fp, "%s,%lld,%lld,%lld,%lld,%d,%lld,%.17g,%lld,%lld,%.17g,%.17g,%.17g,%lld\n",
                      kd_study_method_name_(st->method[c]), (long long)st->g[c], (long long)sp->s,
                      (long long)sp->m, (long long)sp->n, s->mx.d, (long long)sp->B, sp->alpha,
                      (long long)st->T, (long long)st->rejections[c], st->rate[c], st->se[c],
                      st->mean_seconds[c], (long long)st->size[c]) < 0;
      bad |= fflush(fp) != 0;
      const int why = errno; /* e.g. ENOSPC: a full disk is named */
      bad |= fclose(fp) != 0;
      if (bad)
        lerr = kd_err_set(KD_ERR_IO, __FILE__, __LINE__, "study.csv: cannot write %s: %s", pub.tmp,
                          strerror(why ? why : errno));
    }
  }
  KD_TRY(kd_publish_commit(&pub, lerr));
cleanup:
  return err;
}

typedef struct {
  const kd_task_ctx *ctx;
  const kd_study_state *s;
  int64_t done; /* replicates in the last checkpoint written (or skipped: written = 0) */
  int written;
} kd_study_ckpt_ctx;

/* The study's checkpoint hook: state = the finished replicates (ctt_study.c). Collective. */
static kd_err kd_study_ckpt_hook_(void *vctx, const kd_result *state) {
  kd_err err = KD_OK;
  kd_study_ckpt_ctx *c = vctx;
  const char *reason = "";
  KD_TRY(kd_task_checkpoint_write(c->ctx, "ctt_study", "ctt_study", c->s->ckpt_path, state,
                                  &c->done, &reason));
  c->written = strcmp(reason, "not written") != 0;
  if (c->written)
    kd_log_info("checkpoint written after %lld of %lld replicates (%s): %s", (long long)c->done,
                (long long)c->s->sp.T, reason, c->s->ckpt_path);
cleanup:
  return err;
}

static kd_err kd_study_run_(const kd_task_ctx *ctx, void *state, kd_result *res,
                            kd_task_info *info) {
  kd_err err = KD_OK;
  kd_study_state *s = state;
  kd_ctt_study_out st;
  kd_ckpt *ck = NULL;
  const kd_result *resume = NULL;
  kd_study_ckpt_ctx cc = {ctx, s, -1, 0};
  memset(&st, 0, sizeof st);
  /* the study builds its kernels from fixed parameters: ls as resolved by the median pilot */
  s->kp = *kd_kernel_get_params(s->k);
  s->kp.ls_median = 0;
  s->kp.ls_phi_median = 0;
  s->sp.kp = &s->kp;
  snprintf(info->algorithm, sizeof info->algorithm, "ctt_study");
  kd_log_info(
      "ctt_study: %lld replicates of m = %lld, n = %lld; %d g values%s, %d subsample and "
      "%d wblock sizes, %d lrctt and %d actt configurations",
      (long long)s->sp.T, (long long)s->sp.m, (long long)s->sp.n, s->sp.n_g,
      s->sp.exact ? " and the exact test" : "", s->sp.n_sub, s->sp.n_wb, s->sp.n_lr, s->sp.n_actt);
  const double t0 = kd_dist_wtime();
  KD_TRY(kd_task_ckpt_open(ctx, s->ckpt_every, s->ckpt_path, s->ckpt_keep, kd_study_ckpt_hook_, &cc,
                           &ck, &resume));
  if (resume) {
    const kd_checkpoint_session *ss = kd_checkpoint_session_get();
    kd_log_info("ctt_study: resuming from %s (%lld replicates finished)", ss->resume_path,
                (long long)ss->resume_iteration);
  }
  err = kd_ctt_study_run(ctx->comm, &s->sp, ck, &st);
  if (err == KD_ERR_INTERRUPTED) {
    /* every rank takes this branch (the run's error is agreed): one message naming the file */
    kd_err_clear();
    KD_CHECK(cc.written, KD_ERR_INTERRUPTED,
             "interrupted after %lld of %lld replicates; no checkpoint written "
             "(run.checkpoint_on_interrupt: false)",
             (long long)cc.done, (long long)s->sp.T);
    KD_FAIL(KD_ERR_INTERRUPTED,
            "interrupted after %lld of %lld replicates; checkpoint written to %s (resume with "
            "--resume %s)",
            (long long)cc.done, (long long)s->sp.T, s->ckpt_path, s->ckpt_path);
  }
  KD_TRY(err);
  KD_TRY(kd_result_alloc(res, 0, s->mx.d));
  KD_TRY(kd_ctt_study_add_outputs(&st, res));
  res->seconds = kd_dist_wtime() - t0;
  KD_TRY(kd_dist_max(ctx->comm, &res->seconds, 1));
  if (resume) { /* cumulative over the interrupted runs; /metrics seconds_resumed: their part */
    res->seconds += resume->seconds;
    KD_TRY(kd_result_set_metric(res, "seconds_resumed", resume->seconds));
  }
  res->mmd = NAN;
  KD_TRY(kd_task_record_kernel(s->k, info, res));
  KD_TRY(kd_result_set_metric(res, "alpha", s->sp.alpha));
  for (int c = 0; c < st.n_conf; c++)
    kd_log_info("%-14s %s=%-5lld rejection rate %.4f +- %.4f, %.5f s per test",
                kd_study_method_name_(st.method[c]),
                st.method[c] == KD_STUDY_SUBSAMPLE ? "n_out"
                : st.method[c] == KD_STUDY_WBLOCK  ? "block"
                : st.method[c] == KD_STUDY_LRCTT   ? "r"
                                                   : "g",
                (long long)st.size[c], st.rate[c], st.se[c], st.mean_seconds[c]);
  KD_TRY(kd_study_write_csv_(ctx, s, &st));
cleanup:
  kd_ckpt_destroy(&ck);
  kd_ctt_study_free(&st);
  return err;
}

const kd_task_desc kd_task_ctt_study = {
    .name = "ctt_study",
    .summary =
        "rejection rate and time per test of CTT (grid of g) and the exact test over seeded "
        "replicates",
    .setup = kd_study_setup_,
    .run = kd_study_run_,
    .destroy = kd_study_destroy_,
    .can_resume = 1};
