/* ctt_common.c - the permutation machinery shared by `ctt` and `ctt_exact`: random relabelling of
 * the s coresets, the labelled squared MMD from the coreset mean-kernel matrix (eq. 37), and the
 * randomised threshold of Alg. 3 (paper 003). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/twosample/ctt_impl.h"
#include "comm/dist_impl.h"
#include "core/clones.h"

kd_err kd_ctt_decide(const double *stat2, int64_t B, double alpha, uint64_t seed,
                     kd_ctt_decision *out) {
  kd_err err = KD_OK;
  KD_CHECK_KEY(B >= 1, KD_ERR_ARG, "algorithm.B", "algorithm.B must be >= 1, got %lld",
               (long long)B);
  KD_CHECK_KEY(alpha > 0.0 && alpha < 1.0, KD_ERR_ARG, "algorithm.alpha",
               "algorithm.alpha must be in (0,1), got %g", alpha);
  const double obs = stat2[B];
  int64_t less = 0, ties = 0, greater = 0;
  for (int64_t b = 0; b < B; b++) {
    if (stat2[b] < obs)
      less++;
    else if (stat2[b] == obs)
      ties++;
    else
      greater++;
  }
  /* position among the B+1 values: 1 + less + (how many of the ties fall below it), uniform */
  kd_rng r = kd_rng_make(seed, KD_CTT_STREAM_DECIDE);
  int64_t below = (int64_t)kd_rng_next_below(&r, (uint64_t)ties + 1);
  double u = kd_rng_uniform(seed, KD_CTT_STREAM_DECIDE, 1);
  out->n_less = less;
  out->n_ties = ties;
  out->rank = 1 + less + below;
  double pr = (double)out->rank - (1.0 - alpha) * (double)(B + 1);
  out->p_reject = pr < 0.0 ? 0.0 : (pr > 1.0 ? 1.0 : pr);
  out->reject = u < out->p_reject;
  out->p_value = (double)(1 + ties + greater) / (double)(B + 1);
cleanup:
  return err;
}

void kd_ctt_permute_labels(int64_t s, int64_t s_m, uint64_t seed, int64_t b,
                           unsigned char *labels) {
  for (int64_t i = 0; i < s; i++) labels[i] = (unsigned char)(i < s_m ? 0 : 1);
  kd_rng r = kd_rng_make(seed, KD_CTT_STREAM_PERM + (uint64_t)b);
  for (int64_t i = s - 1; i > 0; i--) {
    int64_t j = (int64_t)kd_rng_next_below(&r, (uint64_t)i + 1);
    unsigned char t = labels[i];
    labels[i] = labels[j];
    labels[j] = t;
  }
}

void kd_ctt_wild_labels(int64_t npair, int64_t pair0, int64_t nb, uint64_t seed,
                        unsigned char *lab) {
  for (int64_t b = 0; b < nb; b++)
    for (int64_t i = 0; i < npair; i++) {
      const int swap = b + 1 < nb && kd_rng_uniform(seed, KD_CTT_STREAM_WILD + (uint64_t)b,
                                                    (uint64_t)(pair0 + i)) < 0.5;
      lab[i * nb + b] = (unsigned char)swap;
      lab[(npair + i) * nb + b] = (unsigned char)!swap;
    }
}

double kd_ctt_labelled_mmd2(const double *G, int64_t s, const unsigned char *labels) {
  int64_t s_m = 0;
  for (int64_t i = 0; i < s; i++) s_m += labels[i] == 0;
  const double wx = 1.0 / (double)s_m, wy = -1.0 / (double)(s - s_m);
  double total = 0.0;
  for (int64_t i = 0; i < s; i++) {
    const double wi = labels[i] ? wy : wx;
    double row = 0.0;
    for (int64_t j = 0; j < s; j++) row += (labels[j] ? wy : wx) * G[i * s + j];
    total += wi * row;
  }
  return total;
}

static void kd_ctt_label_weights_(int64_t s, int64_t nb, const unsigned char *labels, double *W) {
  for (int64_t b = 0; b < KD_CTT_LANES; b++) {
    int64_t s_m = 0;
    if (b < nb)
      for (int64_t i = 0; i < s; i++) s_m += labels[b * s + i] == 0;
    const double wx = b < nb ? 1.0 / (double)s_m : 0.0,
                 wy = b < nb ? -1.0 / (double)(s - s_m) : 0.0;
    for (int64_t i = 0; i < s; i++) W[i * KD_CTT_LANES + b] = b < nb && labels[b * s + i] ? wy : wx;
  }
}

/* KD_CTT_LANES doubles as one vector (GCC's vector extension: zmm, 2 ymm or 4 xmm registers,
 * lane-wise IEEE operations); kd_ctt_lanes_u_ reads one at any double's alignment */
typedef double kd_ctt_lanes_ __attribute__((vector_size(8 * KD_CTT_LANES)));
typedef double kd_ctt_lanes_u_
    __attribute__((vector_size(8 * KD_CTT_LANES), aligned(8), may_alias));
#define KD_CTT_LANES_AT_(p) (*(const kd_ctt_lanes_u_ *)(p))

/* lane b's products and sums are those of kd_ctt_labelled_mmd2 in the same order (ISO C: no
 * contraction into fma), so each lane's value has its bits; the lanes run side by side, and four
 * rows at a time keep four independent sums in flight (each row's own order unchanged) */
KD_KCLONES static void kd_ctt_labelled_mmd2_lanes_(const double *G, int64_t s, const double *W,
                                                   double *out) {
  const int NL = KD_CTT_LANES;
  kd_ctt_lanes_ total = {0.0};
  int64_t i = 0;
  for (; i + 4 <= s; i += 4) {
    kd_ctt_lanes_ r0 = {0.0}, r1 = r0, r2 = r0, r3 = r0;
    const double *g = G + i * s;
    for (int64_t j = 0; j < s; j++) {
      const kd_ctt_lanes_ w = KD_CTT_LANES_AT_(W + j * NL);
      r0 += w * g[j];
      r1 += w * g[s + j];
      r2 += w * g[2 * s + j];
      r3 += w * g[3 * s + j];
    }
    total += KD_CTT_LANES_AT_(W + i * NL) * r0;
    total += KD_CTT_LANES_AT_(W + (i + 1) * NL) * r1;
    total += KD_CTT_LANES_AT_(W + (i + 2) * NL) * r2;
    total += KD_CTT_LANES_AT_(W + (i + 3) * NL) * r3;
  }
  for (; i < s; i++) {
    kd_ctt_lanes_ r0 = {0.0};
    for (int64_t j = 0; j < s; j++) r0 += KD_CTT_LANES_AT_(W + j * NL) * G[i * s + j];
    total += KD_CTT_LANES_AT_(W + i * NL) * r0;
  }
  memcpy(out, &total, sizeof total);
}

kd_err kd_ctt_labelled_stats(const double *const *G, int64_t L, int64_t s, int64_t s_m,
                             uint64_t seed, int64_t nperm, double *M) {
  kd_err err = KD_OK;
  double *W = NULL, val[KD_CTT_LANES];
  unsigned char *lab = NULL;
  const int64_t nl = nperm + 1;
  KD_ALLOC(lab, s * KD_CTT_LANES);
  KD_ALLOC(W, s * KD_CTT_LANES);
  for (int64_t b0 = 0; b0 < nl; b0 += KD_CTT_LANES) {
    const int64_t nb = nl - b0 < KD_CTT_LANES ? nl - b0 : KD_CTT_LANES;
    for (int64_t b = b0; b < b0 + nb; b++) {
      unsigned char *lb = lab + (b - b0) * s;
      if (b < nperm)
        kd_ctt_permute_labels(s, s_m, seed, b, lb);
      else
        for (int64_t i = 0; i < s; i++) lb[i] = (unsigned char)(i < s_m ? 0 : 1);
    }
    kd_ctt_label_weights_(s, nb, lab, W);
    for (int64_t j = 0; j < L; j++) {
      kd_ctt_labelled_mmd2_lanes_(G[j], s, W, val);
      for (int64_t b = b0; b < b0 + nb; b++) M[b * L + j] = val[b - b0];
    }
  }
cleanup:
  free(W);
  free(lab);
  return err;
}

kd_err kd_ctt_check_common(const kd_algo_in *in, const kd_ctt_params *p, const kd_pointset **y) {
  kd_err err = KD_OK;
  const kd_ctt_in *ti = in->task_in;
  KD_CHECK(in->points, KD_ERR_ARG, "ctt: no first sample X given");
  KD_CHECK(ti && ti->y, KD_ERR_ARG, "ctt: no second sample Y given (task_in)");
  *y = ti->y;
  const int64_t B = p->B;
  const double alpha = p->alpha;
  KD_CHECK_KEY(B >= 1, KD_ERR_CONFIG, "algorithm.B", "algorithm.B must be >= 1, got %lld",
               (long long)B);
  KD_CHECK_KEY(alpha > 0.0 && alpha < 1.0, KD_ERR_CONFIG, "algorithm.alpha",
               "algorithm.alpha must be in (0,1), got %g", alpha);
  const kd_gidx m = kd_pointset_n_global(in->points), n = kd_pointset_n_global(*y);
  KD_CHECK(m >= 1, KD_ERR_INPUT, "ctt: the first sample X is empty (m = 0)");
  KD_CHECK(n >= 1, KD_ERR_INPUT, "ctt: the second sample Y is empty (n = 0)");
  KD_CHECK(kd_pointset_dim(in->points) == kd_pointset_dim(*y), KD_ERR_INPUT,
           "ctt: X has dimension %d but Y has dimension %d", kd_pointset_dim(in->points),
           kd_pointset_dim(*y));
  KD_CHECK(kd_kernel_dim(in->kernel) == kd_pointset_dim(*y), KD_ERR_INPUT,
           "ctt: kernel dimension %d differs from the data dimension %d", kd_kernel_dim(in->kernel),
           kd_pointset_dim(*y));
cleanup:
  return err;
}

kd_err kd_ctt_add_outputs(kd_result *out, const double *stat2, int64_t B,
                          const kd_ctt_decision *dec) {
  kd_err err = KD_OK;
  double *perm = NULL;
  KD_ALLOC(perm, B);
  for (int64_t b = 0; b < B; b++) perm[b] = sqrt(fmax(stat2[b], 0.0));
  const double stat = sqrt(fmax(stat2[B], 0.0));
  const int64_t rej = dec->reject, rank = dec->rank;
  const int64_t dims[1] = {B};
  KD_TRY(kd_result_add_f64(out, "/test/statistic", 0, NULL, &stat));
  KD_TRY(kd_result_add_f64(out, "/test/statistic_squared", 0, NULL, &stat2[B]));
  KD_TRY(kd_result_add_f64(out, "/test/p_value", 0, NULL, &dec->p_value));
  KD_TRY(kd_result_add_i64(out, "/test/reject", 0, NULL, &rej));
  KD_TRY(kd_result_add_i64(out, "/test/rank", 0, NULL, &rank));
  KD_TRY(kd_result_add_f64(out, "/test/p_reject", 0, NULL, &dec->p_reject));
  KD_TRY(kd_result_add_f64(out, "/test/permutation_statistics", 1, dims, perm));
  KD_TRY(kd_result_set_metric(out, "statistic", stat));
  KD_TRY(kd_result_set_metric(out, "p_value", dec->p_value));
  KD_TRY(kd_result_set_count(out, "reject", (int64_t)dec->reject));
cleanup:
  free(perm);
  return err;
}

kd_err kd_ctt_finish(const kd_algo_in *in, const char *name, const double *stat2,
                     const kd_ctt_params *p, int d, double t0, uint64_t evals, kd_result *out) {
  kd_err err = KD_OK;
  const int64_t B = p->B;
  kd_ctt_decision dec;
  for (int64_t b = 0; b <= B; b++) /* replicated: every rank takes the same branch */
    KD_CHECK(isfinite(stat2[b]), KD_ERR_NUMERIC,
             "%s: the MMD statistic is not finite (NaN or Inf in the data?)", name);
  KD_TRY(kd_ctt_decide(stat2, B, p->alpha, in->seed, &dec));
  KD_TRY(kd_result_alloc(out, 0, d));
  KD_TRY(kd_ctt_add_outputs(out, stat2, B, &dec));
  double tt = kd_dist_wtime() - t0;
  KD_TRY(kd_dist_max(in->comm, &tt, 1));
  KD_TRY(kd_dist_sum_u64(in->comm, &evals, 1));
  out->seconds = tt;
  out->kernel_evals = evals;
  out->mmd = sqrt(fmax(stat2[B], 0.0));
cleanup:
  return err;
}

kd_err kd_ctt_check_with(const kd_params *params, const kd_algo_shape *sh,
                         kd_err (*size_check)(const kd_ctt_params *, kd_gidx, kd_gidx)) {
  kd_err err = KD_OK;
  kd_ctt_params p;
  memset(&p, 0, sizeof p);
  KD_TRY(kd_params_fill(params, &p));
  if (sh->n_in >= 1 && sh->n_second >= 1) KD_TRY(size_check(&p, sh->n_in, sh->n_second));
cleanup:
  return err;
}
