/* fcfw.c - fully-corrective Frank-Wolfe kernel herding (Tsuji & Tanaka Alg. 3, "FC"): add the LMO
 * vertex, then re-optimise all weights over the simplex on the active set (kd_simplex_qp_fac).
 * The Cholesky factor of the QP's face Hessian is carried from one iteration to the next (the new
 * atom appends a column, dropped atoms delete theirs), so an iteration costs O(|S|^2), not
 * O(|S|^3); it is part of the checkpointed state, so a resumed run takes the same steps. */
#include <stdlib.h>
#include <string.h>

#include "algo/herding/herding_impl.h"

static const kd_param_spec kd_fcfw_params_[] = {KD_HERD_COMMON_PARAMS};

static kd_err kd_fcfw_iter_(kd_herd *h, void *ctx, int64_t it, double *gap) {
  kd_err err = KD_OK;
  kd_gidx g;
  int v;
  (void)it;
  KD_TRY(kd_herd_lmo_gap(h, gap, &g));
  if (h->done) goto cleanup;
  KD_TRY(kd_herd_ensure_atom(h, g, h->col, NULL, &v));
  KD_TRY(kd_herd_fc_weights(h, ctx));
cleanup:
  return err;
}

/* checkpoint / restart of the face factor (one vector, kd_qp_fac_save's layout) */
static kd_err kd_fcfw_save_(void *ctx, kd_ckpt *ck) {
  kd_err err = KD_OK;
  const kd_qp_fac *f = ctx;
  const int64_t dims[1] = {kd_qp_fac_size(f)};
  double *v = malloc(sizeof(double) * (size_t)dims[0]);
  KD_CHECK(v, KD_ERR_MEM, "checkpoint: cannot allocate the QP factor (%lld values)",
           (long long)dims[0]);
  kd_qp_fac_save(f, v);
  KD_TRY(kd_ckpt_put_f64(ck, "/state/algo/qp_factor", 1, dims, v));
cleanup:
  free(v);
  return err;
}

static kd_err kd_fcfw_load_(void *ctx, const kd_ckpt *ck) {
  kd_err err = KD_OK;
  int64_t dims[1] = {-1};
  const double *v;
  KD_TRY(kd_ckpt_get_f64(ck, "/state/algo/qp_factor", 1, dims, &v));
  KD_TRY(kd_qp_fac_load(ctx, v, dims[0], "checkpoint: /state/algo/qp_factor"));
cleanup:
  return err;
}

static kd_err kd_fcfw_run_(const kd_algo_in *in, kd_result *out) {
  kd_qp_fac fac;
  memset(&fac, 0, sizeof fac);
  fac.piv = -1;
  const kd_herd_ctx_io io = {kd_fcfw_save_, kd_fcfw_load_};
  kd_err err = kd_herd_drive(in, out, kd_fcfw_iter_, &fac, &io);
  kd_qp_fac_free(&fac);
  return err;
}

const kd_algo_desc kd_algo_fcfw = {
    "fcfw",
    "herd",
    "fully-corrective Frank-Wolfe herding (weights re-optimised every step)",
    kd_fcfw_params_,
    KD_HERD_N_COMMON,
    kd_fcfw_run_,
    KD_ALGO_WEIGHTED | KD_ALGO_RESUMABLE,
    NULL,
    NULL};
