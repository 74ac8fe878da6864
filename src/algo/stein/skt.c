/* skt.c - Stein kernel thinning (Li, Dwivedi, Mackey et al. 2024, "Debiased distribution
 * compression", SKT): a biased sample (MCMC with burn-in, a tempered or approximate chain) is
 *   1. debiased: simplex weights w over all n input rows minimising KSD(w)^2 = w^T K_p w
 *      (kd_stein_pfw: pairwise Frank-Wolfe, at most reweight_iter steps), then
 *   2. resampled: n rows drawn by systematic resampling from w (one uniform keyed by the seed), and
 *   3. compressed: KT-Compress (Compress++ with KH-Refine, kt_compress) of the resampled rows to
 *      n_out equal-weight points.
 * With any other kernel/target pair the same steps debias towards that target. The paper's SKT
 * uses Stein kernel thinning with its own debiasing solver and KT-Compress++; docs/stein.md says
 * where this transcription simplifies (the QP solver, the resampling rule). Output indices are
 * rows of the input. lskt (LSKT) is the same with the low-rank debiasing (low_rank_debias.c) in
 * step 1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/stein/stein_impl.h"
#include "comm/dist_impl.h"

extern const kd_algo_desc kd_algo_kt_compress;

typedef struct {
  int64_t n_out, g, iters;
  double delta;
  kd_stein_ld_opts ld;
} kd_skt_params_;

/* the rows SKT and LSKT share: output size and the compression step */
#define KD_SKT_COMPRESS_SPEC                                                                  \
  KD_PARAM_N_OUT(kd_skt_params_, n_out, 1, 1e15, "number of output points"),                  \
      KD_PARAM_G(kd_skt_params_, g, 4, 0,                                                     \
                 "KT-Compress oversampling of the compression step (needs 4^(g+1) <= n_in)"), \
  {                                                                                           \
    "delta", KD_PARAM_F64, 0.5, NULL, 0, 1, NULL, "failure probability of the KH halvings",   \
        KD_PARAM_AT(kd_skt_params_, delta)                                                    \
  }

static const kd_param_spec kd_skt_spec_[] = {
    KD_SKT_COMPRESS_SPEC,
    {"reweight_iter", KD_PARAM_INT, 2000, NULL, 1, 1e9, NULL,
     "pairwise Frank-Wolfe steps of the simplex reweighting (stops earlier at the optimum)",
     KD_PARAM_AT(kd_skt_params_, iters)},
};

/* LSKT: the same without reweight_iter, with the low-rank debiasing's options */
static const kd_param_spec kd_lskt_spec_[] = {
    KD_SKT_COMPRESS_SPEC,
    KD_STEIN_LD_SPEC(kd_skt_params_),
};

/* kt_compress's parameters: its defaults with n_out, g and delta set */
static kd_err kd_skt_kt_params_(const kd_skt_params_ *p, kd_params *kp) {
  kd_err err = KD_OK;
  KD_TRY(kd_params_defaults(kd_algo_kt_compress.params, kd_algo_kt_compress.n_params, kp));
  KD_TRY(kd_params_set_i64(kp, "n_out", p->n_out, "algorithm.n_out"));
  KD_TRY(kd_params_set_i64(kp, "g", p->g, "algorithm.g"));
  KD_TRY(kd_params_set_f64(kp, "delta", p->delta, "algorithm.delta"));
cleanup:
  return err;
}

static kd_err kd_skt_common_(const kd_algo_in *in, int low_rank, kd_result *out) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_skt_params_ p = {0};
  kd_params kp = {0};
  kd_pointset *rs = NULL, *src = NULL;
  kd_gidx *idx = NULL;
  double *w = NULL, *sv = NULL;
  int64_t steps = 0;
  KD_TRY(kd_params_fill(in->params, &p));
  const kd_gidx n = kd_pointset_n_global(in->points);
  KD_TRY(kd_skt_kt_params_(&p, &kp));
  const kd_lidx nl = kd_pointset_n_local(in->points);
  w = calloc((size_t)(nl > 0 ? nl : 1), sizeof *w);
  if (!w) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "skt: out of memory");
  KD_TRY(kd_dist_agreed(in->comm, lerr));
  double obj = NAN;
  if (low_rank) {
    KD_TRY(kd_stein_ld(in, &p.ld, w, &obj));
  } else {
    KD_TRY(kd_stein_pfw(in, p.iters, w, &steps));
    kd_log_info("skt: simplex reweighting took %lld pairwise Frank-Wolfe steps", (long long)steps);
  }
  KD_TRY(kd_stein_resample(in->points, w, n, in->seed, &rs, &src));
  kd_algo_in in2 = *in;
  in2.points = rs;
  in2.params = &kp;
  in2.ckpt = NULL;
  KD_TRY(kd_algo_run(&kd_algo_kt_compress, &in2, out));
  /* resampled positions -> input rows */
  KD_ALLOC_AGREED(in->comm, idx, out->n);
  KD_ALLOC_AGREED(in->comm, sv, out->n);
  for (kd_gidx i = 0; i < out->n; i++) idx[i] = out->indices[i] >= 0 ? out->indices[i] : 0;
  KD_TRY(kd_pointset_gather_rows(src, idx, (kd_lidx)out->n, sv));
  for (kd_gidx i = 0; i < out->n; i++) out->indices[i] = out->indices[i] >= 0 ? (int64_t)sv[i] : -1;
  if (low_rank)
    KD_TRY(kd_result_set_metric(out, "debias_model_objective", obj));
  else
    KD_TRY(kd_result_set_count(out, "reweight_steps", (int64_t)steps));
cleanup:
  kd_params_free(&kp);
  kd_pointset_destroy(&rs);
  kd_pointset_destroy(&src);
  free(idx), free(sv);
  free(w);
  return err;
}

static kd_err kd_skt_run_(const kd_algo_in *in, kd_result *out) {
  return kd_skt_common_(in, 0, out);
}

static kd_err kd_lskt_run_(const kd_algo_in *in, kd_result *out) {
  return kd_skt_common_(in, 1, out);
}

const kd_algo_desc kd_algo_skt = {
    "skt",
    "thin",
    "Stein kernel thinning (Li et al. 2024): simplex reweighting of all rows against the target "
    "(KSD), resampling, KT-Compress to n_out points",
    kd_skt_spec_,
    (int)(sizeof kd_skt_spec_ / sizeof kd_skt_spec_[0]),
    kd_skt_run_,
    KD_ALGO_SCORE | KD_ALGO_N_OUT,
    NULL,
    NULL};

const kd_algo_desc kd_algo_lskt = {
    "lskt",
    "thin",
    "low-rank Stein kernel thinning (Li et al. 2024): low-rank debiasing of all rows against the "
    "target (KSD) in O(n rank) per step, resampling, KT-Compress to n_out points",
    kd_lskt_spec_,
    (int)(sizeof kd_lskt_spec_ / sizeof kd_lskt_spec_[0]),
    kd_lskt_run_,
    KD_ALGO_SCORE | KD_ALGO_N_OUT,
    NULL,
    NULL};
