/* actt.c - Aggregated Compress Then Test (ACTT; Domingo-Enrich, Dwivedi & Mackey 2023, the
 * `actt` of goodpoints, with the aggregation of MMDAgg, Schrab et al. 2023): one test over L
 * length scales ls_j = ls ratio^(j - (L-1)/2), j = 0 .. L-1 (ls = kernel.ls, the median heuristic
 * by default), or the task's list of length scales (kd_ctt_in.ls_list), with weights w_j = 1/L or
 * the task's weights normalised to sum 1 (kd_ctt_in.weights).
 *   - statistics: for each ls_j, CTT's s x s matrix G_j of mean kernel values between coresets
 *     (ctt.c, KT-Compress with the kernel of ls_j: goodpoints' same_compression = False; the bins
 *     of length scale j use the seed kd_rng_u64(seed, KD_CTT_STREAM_ACTT, j); with
 *     compression: middle, the coresets of the middle length scale L / 2 serve every j; with
 *     compression: sum, those of one KT-Compress with the mean of the L gaussian kernels,
 *     goodpoints' default same_compression = True), and
 *     M_j = w^T G_j w for B2 + B label permutations (the same labellings for every j) and the
 *     observed labelling.
 *   - decision: with the B permuted values and the observed one sorted per j, the threshold of
 *     ls_j at u is the ceil((B+1)(1 - u w_j))-th smallest; u_alpha is the largest u in
 *     [0, 1/max w] (B3 bisection steps) at which at most alpha of the B2 calibration labellings
 *     exceed some threshold; the test rejects when the observed M_j exceeds its threshold at
 *     u_alpha for some j. Level alpha (as Schrab et al. 2023 show for MMDAgg: the calibration
 *     labellings are drawn independently of the others); ties count as no exceedance.
 * Output rows: the coresets of the middle length scale j = L / 2 (compression: sum, of the mean
 * kernel) (as ctt's, with its
 * /test/coreset_* datasets). The labellings and the decision are replicated; the G_j are the
 * same bits at any rank count, so the test is too. ACTT decides and has no p-value (p_value NaN;
 * goodpoints' `actt` returns a decision too). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/twosample/ctt_impl.h"
#include "comm/dist_impl.h"

static const kd_param_spec kd_actt_params_[] = {
    {"s", KD_PARAM_INT, 16, NULL, 2, 1048576, NULL,
     "number of coresets (bins) s >= 2, split as in ctt", KD_PARAM_AT(kd_ctt_params, s)},
    KD_PARAM_G(kd_ctt_params, g, 0, 0,
               "compression level: each bin of n_in points is thinned to 2^g sqrt(n_in) points"),
    KD_CTT_PARAM_DELTA,
    {"B", KD_PARAM_INT, 299, NULL, 1, 1e8, NULL,
     "label permutations of the quantiles (the observed labelling makes B + 1)",
     KD_PARAM_AT(kd_ctt_params, B)},
    {"B2", KD_PARAM_INT, 200, NULL, 1, 1e8, NULL,
     "label permutations that calibrate the aggregation level u_alpha",
     KD_PARAM_AT(kd_ctt_params, B2)},
    {"B3", KD_PARAM_INT, 20, NULL, 1, 60, NULL, "bisection steps for u_alpha",
     KD_PARAM_AT(kd_ctt_params, B3)},
    {"n_ls", KD_PARAM_INT, 5, NULL, 1, KD_KERNEL_MAX_LS, NULL,
     "length scales L: kernel.ls ls_ratio^(j - (L-1)/2), j = 0 .. L-1",
     KD_PARAM_AT(kd_ctt_params, n_ls)},
    {"ls_ratio", KD_PARAM_F64, 2.0, NULL, 1.0, 1e3, NULL,
     "ratio of neighbouring length scales (> 1 unless n_ls = 1)",
     KD_PARAM_AT(kd_ctt_params, ls_ratio)},
    {"compression", KD_PARAM_STR, 0, "each", 0, 0, "each|middle|sum",
     "each: KT-Compress with every length scale's kernel; middle: once, with the middle one's; "
     "sum: once, with the mean of the gaussian kernels of the grid (goodpoints' default)",
     KD_PARAM_AT_INDEX(kd_ctt_params, compression)},
    KD_CTT_PARAM_ALPHA,
};

int kd_actt_scalable(kd_kernel_type t) { return kd_kernel_type_has(t, KD_KCAP_RADIAL); }

static kd_err kd_actt_check_params_(const kd_ctt_params *p) {
  kd_err err = KD_OK;
  KD_CHECK_KEY(p->n_ls == 1 || p->ls_ratio > 1.0, KD_ERR_CONFIG, "algorithm.ls_ratio",
               "algorithm.ls_ratio = %g: the length scales must differ (ratio > 1) when n_ls = "
               "%lld",
               p->ls_ratio, (long long)p->n_ls);
cleanup:
  return err;
}

/* validate: the grid, then ctt's split of m and n into bins */
static kd_err kd_actt_sizes_(const kd_ctt_params *p, kd_gidx m, kd_gidx n) {
  kd_err err = KD_OK;
  int64_t s_m, s_n, n_in;
  KD_TRY(kd_actt_check_params_(p));
  KD_TRY(kd_ctt_check_sizes(p, m, n, &s_m, &s_n, &n_in));
cleanup:
  return err;
}

static kd_err kd_actt_check_(const kd_params *params, const kd_algo_shape *sh) {
  return kd_ctt_check_with(params, sh, kd_actt_sizes_);
}

/* The run's kernel family at length scale ls (its other parameters kept); sum != NULL: instead
 * the mean of the gaussian kernels of the grid around ls (gaussian_sum with p's n_ls and
 * ls_ratio). Collective: the error is agreed. */
static kd_err kd_actt_kernel_(const kd_algo_in *in, double ls, const kd_ctt_params *sum,
                              kd_kernel **k) {
  kd_kernel_params kp = *kd_kernel_get_params(in->kernel);
  kp.ls = ls;
  kp.ls_median = 0;
  kp.ls_phi_median = 0;
  if (sum) {
    kp.type = KD_KERNEL_GAUSSIAN_SUM;
    kp.n_ls = (int)sum->n_ls;
    kp.ls_ratio = sum->ls_ratio;
  }
  return kd_dist_agreed(in->comm, kd_kernel_create(&kp, kd_kernel_dim(in->kernel), k));
}

/* Copy the coreset rows of a CTT result r and the datasets that describe them into out (the
 * coreset kernel means only when r has them: not from a coresets_only run). Local. */
static kd_err kd_actt_keep_rows_(const kd_result *r, kd_result *out) {
  kd_err err = KD_OK;
  static const char *const paths[4] = {"/test/coreset_kernel_means", "/test/coreset_sizes",
                                       "/test/coreset_bin", "/test/bins"};
  KD_TRY(kd_result_alloc(out, r->n, r->d));
  memcpy(out->points, r->points, sizeof(double) * (size_t)(r->n * r->d));
  memcpy(out->indices, r->indices, sizeof(kd_gidx) * (size_t)r->n);
  memcpy(out->weights, r->weights, sizeof(double) * (size_t)r->n);
  for (int i = kd_result_find(r, paths[0]) ? 0 : 1; i < 4; i++) {
    const kd_result_dataset *ds = kd_result_find(r, paths[i]);
    KD_CHECK(ds, KD_ERR_INTERNAL, "actt: ctt returned no %s", paths[i]);
    if (ds->is_int)
      KD_TRY(kd_result_add_i64(out, paths[i], ds->rank, ds->dims, ds->i64));
    else
      KD_TRY(kd_result_add_f64(out, paths[i], ds->rank, ds->dims, ds->f64));
  }
cleanup:
  return err;
}

/* One CTT run at length scale ls (sum != 0: the coresets only, with the mean kernel of the grid
 * around ls) with the run seed `seed`: G (s x s, allocated here; sum: left NULL), s and the bins
 * of X; its kernel evaluations are added to *evals. keep != NULL: its coreset rows go there
 * (kd_actt_keep_rows_). Collective. */
static kd_err kd_actt_means_(const kd_algo_in *in, const kd_ctt_params *p, double ls, int sum,
                             uint64_t seed, double **G, int64_t *s, int64_t *s_m, uint64_t *evals,
                             kd_result *keep) {
  kd_err err = KD_OK;
  kd_kernel *k = NULL;
  kd_result r = KD_RESULT_INIT;
  KD_TRY(kd_actt_kernel_(in, ls, sum ? p : NULL, &k));
  kd_algo_in in1 = *in;
  in1.kernel = k;
  in1.seed = seed;
  kd_ctt_params p1 = *p;
  p1.B = 1;               /* the permutations are ACTT's own */
  p1.coresets_only = sum; /* the mean kernel's G is not used: every G_j is evaluated after */
  KD_TRY(kd_ctt_test(&in1, &p1, &r));
  const kd_result_dataset *g = kd_result_find(&r, "/test/coreset_kernel_means"),
                          *bins = kd_result_find(&r, "/test/bins"),
                          *sz = kd_result_find(&r, "/test/coreset_sizes");
  KD_CHECK((g || sum) && bins && sz, KD_ERR_INTERNAL, "actt: ctt returned no coreset datasets");
  *s = sz->dims[0];
  *s_m = bins->i64[0];
  if (!sum) {
    KD_ALLOC_AGREED(in->comm, *G, *s * *s);
    memcpy(*G, g->f64, sizeof(double) * (size_t)(*s * *s));
  }
  *evals += r.kernel_evals;
  if (keep) KD_TRY(kd_dist_agreed(in->comm, kd_actt_keep_rows_(&r, keep)));
cleanup:
  kd_result_free(&r);
  kd_kernel_destroy(&k);
  return err;
}

/* For every j < L with G[j] == NULL: G[j] (s x s, allocated here) of the kernel at length scale
 * ls[j] between the coresets kept in out (rows coff[b] .. coff[b+1] of out->points; coff from
 * /test/coreset_sizes), all by one kd_ctt_coreset_means_multi; their kernel evaluations (summed
 * over ranks) are added to *evals. Collective. */
static kd_err kd_actt_means_kept_(const kd_algo_in *in, const kd_result *out, const double *ls,
                                  int64_t L, double **G, uint64_t *evals) {
  kd_err err = KD_OK;
  kd_kernel *ks[KD_KERNEL_MAX_LS] = {NULL};
  double *Gn[KD_KERNEL_MAX_LS];
  int64_t *coff = NULL;
  int n = 0;
  const kd_result_dataset *sz = kd_result_find(out, "/test/coreset_sizes");
  KD_CHECK(sz, KD_ERR_INTERNAL, "actt: no coreset sizes kept");
  const int64_t s = sz->dims[0];
  for (int64_t j = 0; j < L; j++) {
    if (G[j]) continue;
    KD_ALLOC_AGREED(in->comm, G[j], s * s);
    Gn[n] = G[j];
    KD_TRY(kd_actt_kernel_(in, ls[j], NULL, &ks[n++]));
  }
  if (n == 0) goto cleanup; /* one length scale, compression: middle: its G is the run's */
  KD_ALLOC_AGREED(in->comm, coff, s + 1);
  for (int64_t b = 0; b < s; b++) coff[b + 1] = coff[b] + sz->i64[b];
  KD_TRY(kd_ctt_coreset_means_multi(in->comm, ks, n, out->points, coff, s, out->d, Gn));
  uint64_t ev = 0;
  for (int l = 0; l < n; l++) ev += kd_kernel_evals(ks[l]);
  KD_TRY(kd_dist_sum_u64(in->comm, &ev, 1));
  *evals += ev;
cleanup:
  free(coff);
  for (int l = 0; l < n; l++) kd_kernel_destroy(&ks[l]);
  return err;
}

/* compression: sum: /test/coreset_kernel_means = the mean of the L matrices G_j (s x s), the mean
 * kernel's coreset means (up to rounding: each G_j is summed first). Local. */
static kd_err kd_actt_mean_means_(double *const *G, int64_t L, int64_t s, kd_result *out) {
  kd_err err = KD_OK;
  double *Gm = NULL;
  const int64_t dims[2] = {s, s};
  KD_ALLOC(Gm, s * s);
  for (int64_t j = 0; j < L; j++)
    for (int64_t q = 0; q < s * s; q++) Gm[q] += G[j][q];
  for (int64_t q = 0; q < s * s; q++) Gm[q] /= (double)L;
  KD_TRY(kd_result_add_f64(out, "/test/coreset_kernel_means", 2, dims, Gm));
cleanup:
  free(Gm);
  return err;
}

static int kd_actt_cmp_(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The threshold index (0-based, into the B + 1 sorted values) of weight w at u. */
static int64_t kd_actt_q_(int64_t B, double u, double w) {
  int64_t q = (int64_t)ceil((double)(B + 1) * (1.0 - u * w));
  q = q < 1 ? 1 : q > B + 1 ? B + 1 : q;
  return q - 1;
}

/* Fraction of the B2 calibration labellings (rows 0 .. B2-1 of M, L columns) that exceed the
 * threshold of some length scale at u (sorted: L rows of B + 1 sorted values). Local. */
static double kd_actt_exceed_(const double *M, int64_t B2, int64_t L, const double *sorted,
                              int64_t B, double u, const double *w) {
  int64_t cnt = 0;
  double thr[KD_KERNEL_MAX_LS];
  for (int64_t j = 0; j < L; j++) thr[j] = sorted[j * (B + 1) + kd_actt_q_(B, u, w[j])];
  for (int64_t b = 0; b < B2; b++)
    for (int64_t j = 0; j < L; j++)
      if (M[b * L + j] > thr[j]) {
        cnt++;
        break;
      }
  return (double)cnt / (double)B2;
}

/* The decision: u_alpha by bisection over [0, 1 / max w], the thresholds (squared) and reject.
 * M: (B2 + B + 1) x L, row B2 + B the observed labelling; w[L] the weights. Local (replicated). */
static kd_err kd_actt_decide_(const double *M, const kd_ctt_params *p, int64_t L, const double *w,
                              double *thr, double *u_alpha, double *cal_rate, int *reject) {
  kd_err err = KD_OK;
  const int64_t B = p->B, B2 = p->B2;
  double *sorted = NULL, lo = 0.0, wmax = 0.0;
  for (int64_t j = 0; j < L; j++) wmax = fmax(wmax, w[j]);
  double hi = 1.0 / wmax;
  KD_ALLOC(sorted, L * (B + 1));
  for (int64_t j = 0; j < L; j++) {
    for (int64_t b = 0; b <= B; b++) sorted[j * (B + 1) + b] = M[(B2 + b) * L + j];
    qsort(sorted + j * (B + 1), (size_t)(B + 1), sizeof(double), kd_actt_cmp_);
  }
  for (int64_t t = 0; t < p->B3; t++) {
    const double u = 0.5 * (lo + hi);
    if (kd_actt_exceed_(M, B2, L, sorted, B, u, w) <= p->alpha)
      lo = u;
    else
      hi = u;
  }
  *u_alpha = lo;
  *cal_rate = kd_actt_exceed_(M, B2, L, sorted, B, lo, w);
  *reject = 0;
  for (int64_t j = 0; j < L; j++) {
    thr[j] = sorted[j * (B + 1) + kd_actt_q_(B, lo, w[j])];
    if (M[(B2 + B) * L + j] > thr[j]) *reject = 1;
  }
cleanup:
  free(sorted);
  return err;
}

/* The /test outputs and metrics: per length scale, the scale, its weight, the observed MMD and
 * the threshold (as MMDs); u_alpha, the calibration rate at it, the decision; at the middle length
 * scale L / 2 (whose coresets are the output rows) the statistic and the B permuted MMDs (rows
 * perm[b * L + j] of the quantile labellings). Local. */
static kd_err kd_actt_outputs_(kd_result *out, const double *ls, const double *w,
                               const double *perm, int64_t B, const double *obs2,
                               const double *thr2, int64_t L, double u_alpha, double cal_rate,
                               int reject) {
  kd_err err = KD_OK;
  double *stat = NULL, *thr = NULL, *pm = NULL;
  KD_ALLOC(stat, L);
  KD_ALLOC(thr, L);
  KD_ALLOC(pm, B);
  for (int64_t b = 0; b < B; b++) pm[b] = sqrt(fmax(perm[b * L + L / 2], 0.0));
  for (int64_t j = 0; j < L; j++) {
    stat[j] = sqrt(fmax(obs2[j], 0.0));
    thr[j] = sqrt(fmax(thr2[j], 0.0));
  }
  const int64_t dims[1] = {L}, dimb[1] = {B}, rej = reject, mid = L / 2;
  const double nan = NAN;
  KD_TRY(kd_result_add_f64(out, "/test/ls", 1, dims, ls));
  KD_TRY(kd_result_add_f64(out, "/test/weights", 1, dims, w));
  KD_TRY(kd_result_add_f64(out, "/test/statistics", 1, dims, stat));
  KD_TRY(kd_result_add_f64(out, "/test/thresholds", 1, dims, thr));
  KD_TRY(kd_result_add_f64(out, "/test/u_alpha", 0, NULL, &u_alpha));
  KD_TRY(kd_result_add_f64(out, "/test/calibration_rate", 0, NULL, &cal_rate));
  KD_TRY(kd_result_add_i64(out, "/test/reject", 0, NULL, &rej));
  KD_TRY(kd_result_add_f64(out, "/test/statistic", 0, NULL, &stat[mid]));
  KD_TRY(kd_result_add_f64(out, "/test/statistic_squared", 0, NULL, &obs2[mid]));
  KD_TRY(kd_result_add_f64(out, "/test/p_value", 0, NULL, &nan));
  KD_TRY(kd_result_add_f64(out, "/test/permutation_statistics", 1, dimb, pm));
  KD_TRY(kd_result_set_metric(out, "statistic", stat[mid]));
  KD_TRY(kd_result_set_metric(out, "p_value", nan));
  KD_TRY(kd_result_set_metric(out, "u_alpha", u_alpha));
  KD_TRY(kd_result_set_count(out, "reject", rej));
  KD_TRY(kd_result_set_count(out, "n_ls", L));
  out->mmd = stat[mid];
cleanup:
  free(stat);
  free(thr);
  free(pm);
  return err;
}

/* The B2 + B + 1 labelled statistics of the L matrices G[j] (s x s; the first s_m bins are X's),
 * the decision and the /test outputs (ls[L] the length scales, w[L] their weights). Local
 * (replicated). */
static kd_err kd_actt_test_(const kd_ctt_params *p, int64_t L, const double *const *G, int64_t s,
                            int64_t s_m, uint64_t seed, const double *ls, const double *w,
                            kd_result *out) {
  kd_err err = KD_OK;
  const int64_t B = p->B, B2 = p->B2, nl = B2 + B + 1;
  double *M = NULL, *thr = NULL;
  KD_ALLOC(M, nl * L);
  KD_TRY(kd_ctt_labelled_stats(G, L, s, s_m, seed, nl - 1, M));
  for (int64_t q = 0; q < nl * L; q++) /* replicated: every rank takes the same branch */
    KD_CHECK(isfinite(M[q]), KD_ERR_NUMERIC,
             "actt: the MMD statistic is not finite (NaN or Inf in the data?)");
  KD_ALLOC(thr, L);
  double u_alpha = 0.0, cal = 0.0;
  int reject = 0;
  KD_TRY(kd_actt_decide_(M, p, L, w, thr, &u_alpha, &cal, &reject));
  KD_TRY(
      kd_actt_outputs_(out, ls, w, M + B2 * L, B, M + (nl - 1) * L, thr, L, u_alpha, cal, reject));
cleanup:
  free(M);
  free(thr);
  return err;
}

kd_err kd_ctt_actt_test(const kd_algo_in *in, const kd_ctt_params *pp, kd_result *out) {
  kd_err err = KD_OK;
  const kd_ctt_params p = *pp;
  const kd_pointset *Y = NULL;
  const kd_ctt_in *ti = in->task_in;
  double **G = NULL, *ls = NULL, *w = NULL;
  uint64_t evals = 0;
  int64_t L = 0;
  KD_TRY(kd_actt_check_params_(&p));
  KD_TRY(kd_ctt_check_common(in, &p, &Y));
  const double t0 = kd_dist_wtime(), ls0 = kd_kernel_length_scale(in->kernel);
  const kd_kernel_params *kp = kd_kernel_get_params(in->kernel);
  KD_CHECK_KEY(kd_actt_scalable(kp->type) && (ls0 > 0.0 || ti->n_ls_list > 0), KD_ERR_CONFIG,
               "kernel.name",
               "kernel.name: actt's length-scale grid needs a gaussian, laplace, imq or matern "
               "kernel (kernel %s)",
               kd_kernel_describe(in->kernel));
  L = ti->n_ls_list > 0 ? ti->n_ls_list : p.n_ls;
  KD_CHECK(L >= 1 && L <= KD_KERNEL_MAX_LS, KD_ERR_ARG, "actt: %lld length scales (1 to %d)",
           (long long)L, KD_KERNEL_MAX_LS);
  KD_CHECK(ti->n_weights == 0 || ti->n_weights == L, KD_ERR_ARG,
           "actt: %d weights for %lld length scales", ti->n_weights, (long long)L);
  int64_t s = 0, s_m = 0;
  KD_ALLOC_AGREED(in->comm, G, L);
  KD_ALLOC_AGREED(in->comm, ls, L);
  KD_ALLOC_AGREED(in->comm, w, L);
  double wsum = 0.0;
  for (int64_t j = 0; j < L; j++) {
    ls[j] = ti->n_ls_list > 0 ? ti->ls_list[j]
                              : ls0 * pow(p.ls_ratio, (double)j - 0.5 * (double)(L - 1));
    wsum += ti->n_weights > 0 ? ti->weights[j] : 0.0;
  }
  for (int64_t j = 0; j < L; j++)
    w[j] = ti->n_weights > 0 ? ti->weights[j] / wsum : 1.0 / (double)L;
  /* the middle length scale first: its coresets are the output rows (and, compression: middle,
   * the coresets of every length scale); compression: sum compresses once with the mean kernel
   * of the grid (the seed of the middle scale) and evaluates every G_j on those coresets */
  const uint64_t seed_mid = kd_rng_u64(in->seed, KD_CTT_STREAM_ACTT, (uint64_t)(L / 2));
  if (p.compression == 2) {
    KD_CHECK_KEY(kp->type == KD_KERNEL_GAUSSIAN && ti->n_ls_list == 0, KD_ERR_CONFIG,
                 "algorithm.compression",
                 "algorithm.compression: sum compresses with the mean of the gaussian kernels of "
                 "the grid (n_ls, ls_ratio); it needs kernel.name: gaussian and no ls_list "
                 "(kernel %s%s)",
                 kd_kernel_describe(in->kernel), ti->n_ls_list ? ", ls_list given" : "");
    double *Gs = NULL;
    KD_TRY(kd_actt_means_(in, &p, ls0, 1, seed_mid, &Gs, &s, &s_m, &evals, out));
  } else {
    KD_TRY(kd_actt_means_(in, &p, ls[L / 2], 0, seed_mid, &G[L / 2], &s, &s_m, &evals, out));
  }
  if (p.compression != 0) /* every other G_j on the kept coresets, in one pass */
    KD_TRY(kd_actt_means_kept_(in, out, ls, L, G, &evals));
  else
    for (int64_t j = 0; j < L; j++) {
      if (G[j]) continue; /* the middle scale's, above */
      KD_TRY(kd_actt_means_(in, &p, ls[j], 0, kd_rng_u64(in->seed, KD_CTT_STREAM_ACTT, (uint64_t)j),
                            &G[j], &s, &s_m, &evals, NULL));
    }
  if (p.compression == 2) KD_TRY(kd_dist_agreed(in->comm, kd_actt_mean_means_(G, L, s, out)));
  /* the labellings and the decision are local (replicated); a failure there is agreed */
  KD_TRY(kd_dist_agreed(
      in->comm, kd_actt_test_(&p, L, (const double *const *)G, s, s_m, in->seed, ls, w, out)));
  double tt = kd_dist_wtime() - t0;
  KD_TRY(kd_dist_max(in->comm, &tt, 1));
  out->seconds = tt;
  out->kernel_evals = evals; /* each ctt run's count is already summed over ranks */
cleanup:
  for (int64_t j = 0; G && j < L; j++) free(G[j]);
  free(G);
  free(ls);
  free(w);
  return err;
}

static kd_err kd_actt_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_ctt_params p;
  memset(&p, 0, sizeof p);
  KD_TRY(kd_params_fill(in->params, &p));
  KD_TRY(kd_ctt_actt_test(in, &p, out));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_actt = {
    "actt",
    "ctt",
    "Aggregated CTT: CTT at n_ls length scales, one test at level alpha (MMDAgg's aggregation)",
    kd_actt_params_,
    (int)(sizeof kd_actt_params_ / sizeof kd_actt_params_[0]),
    kd_actt_run_,
    0,
    kd_actt_check_,
    NULL};
