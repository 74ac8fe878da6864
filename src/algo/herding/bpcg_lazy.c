/* bpcg_lazy.c - lazified BPCG for kernel herding (Tsuji, Tanaka & Pokutta, Alg. 2 / Alg. 4) with
 * the relaxed criterion K_sc of App. C. The FW-gap estimate Phi starts at half the first FW gap; a
 * pairwise step is taken while K_sc <grad, a - s> >= Phi (no global LMO call); otherwise the LMO is
 * called and a FW step taken if its gap is >= Phi / J, else Phi is halved (gap step). */
#include <math.h>

#include "algo/herding/herding_impl.h"

static const kd_param_spec kd_bpcg_lazy_params_[] = {
    KD_HERD_COMMON_PARAMS,
    {"J", KD_PARAM_F64, 1.0, NULL, 1.0, 1e6, NULL,
     "accuracy J >= 1 of the lazified FW test (Alg. 2 line 19; the paper's herding runs use 1)",
     KD_PARAM_AT(kd_herd_params, J)},
    {"K_sc", KD_PARAM_F64, 1.0, NULL, 1.0, 1e6, NULL,
     "relaxed step-selection factor K_sc >= 1 (App. C)", KD_PARAM_AT(kd_herd_params, K_sc)},
};

typedef struct {
  double J, ksc, phi;
  int have_phi;
} kd_bpcg_lazy_ctx_;

static kd_err kd_bpcg_lazy_iter_(kd_herd *h, void *vctx, int64_t it, double *gap) {
  kd_err err = KD_OK;
  kd_bpcg_lazy_ctx_ *c = vctx;
  double val;
  kd_gidx g;
  int v, a, s, dropped;
  (void)it;
  if (!c->have_phi) { /* line 1: Phi_0 = max_x <grad, x_0 - delta_x> / 2 */
    KD_TRY(kd_herd_lmo(h, &val, &g));
    *gap = kd_herd_wgrad(h) - val;
    c->phi = *gap / 2.0;
    c->have_phi = 1;
    if (*gap <= h->tol_gap) {
      h->done = 1;
      goto cleanup;
    }
  }
  kd_herd_away_local(h, &a, &s);
  if (c->ksc * (kd_herd_grad(h, a) - kd_herd_grad(h, s)) >= c->phi) {
    KD_TRY(kd_herd_step_pair(h, a, s, &dropped));
    goto cleanup;
  }
  KD_TRY(kd_herd_lmo_gap(h, gap, &g));
  if (h->done) goto cleanup;
  if (*gap >= c->phi / c->J) {
    KD_TRY(kd_herd_ensure_atom(h, g, h->col, NULL, &v));
    KD_TRY(kd_herd_step_fw(h, v, -1.0, NULL));
  } else {
    c->phi /= 2.0; /* gap step */
  }
cleanup:
  return err;
}

/* checkpoint / restart of Phi (the only state carried between iterations besides the shared one) */
static kd_err kd_bpcg_lazy_save_(void *vctx, kd_ckpt *ck) {
  const kd_bpcg_lazy_ctx_ *c = vctx;
  const double v[2] = {c->phi, (double)c->have_phi};
  const int64_t dims[1] = {2};
  return kd_ckpt_put_f64(ck, "/state/algo/phi", 1, dims, v);
}

static kd_err kd_bpcg_lazy_load_(void *vctx, const kd_ckpt *ck) {
  kd_err err = KD_OK;
  kd_bpcg_lazy_ctx_ *c = vctx;
  const double *x;
  int64_t dims[1] = {2};
  KD_TRY(kd_ckpt_get_f64(ck, "/state/algo/phi", 1, dims, &x));
  c->phi = x[0];
  c->have_phi = x[1] != 0.0;
cleanup:
  return err;
}

static kd_err kd_bpcg_lazy_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_herd_params hp;
  KD_TRY(kd_herd_params_read(in->params, &hp));
  kd_bpcg_lazy_ctx_ c = {hp.J, hp.K_sc, 0, 0};
  KD_CHECK_KEY(c.J >= 1.0, KD_ERR_CONFIG, "algorithm.J",
               "algorithm.J must be >= 1 (Alg. 2), got %g", c.J);
  KD_CHECK_KEY(c.ksc >= 1.0, KD_ERR_CONFIG, "algorithm.K_sc",
               "algorithm.K_sc must be >= 1 (App. C), got %g", c.ksc);
  const kd_herd_ctx_io io = {kd_bpcg_lazy_save_, kd_bpcg_lazy_load_};
  KD_TRY(kd_herd_drive(in, out, kd_bpcg_lazy_iter_, &c, &io));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_bpcg_lazy = {
    "bpcg_lazy",
    "herd",
    "lazified BPCG herding (BPCG Alg. 4, accuracy J, K_sc of App. C)",
    kd_bpcg_lazy_params_,
    KD_HERD_N_COMMON + 2,
    kd_bpcg_lazy_run_,
    KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
    NULL,
    NULL};
