/* uniform.c - baseline thinning: n_out distinct input rows chosen uniformly without replacement.
 * Row g gets the key kd_rng_u64(seed, 7, g); the n_out smallest keys win (ties: lowest index), so
 * the choice does not depend on the rank count. */
#include <math.h>
#include <stdlib.h>

#include "comm/dist_impl.h"
#include "kdistill/author/kd_algo.h"

typedef struct {
  int64_t n_out;
} kd_uniform_params_t_;

static const kd_param_spec kd_uniform_params_[] = {
    KD_PARAM_N_OUT(kd_uniform_params_t_, n_out, 1, 1e15, "number of output points"),
};

static kd_err kd_uniform_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_gidx *pick = NULL;
  const kd_pointset *ps = in->points;
  const int d = kd_pointset_dim(ps);
  kd_uniform_params_t_ up = {0};
  KD_TRY(kd_params_fill(in->params, &up));
  const kd_gidx n_out = up.n_out;
  KD_ALLOC(pick, n_out);
  KD_TRY(kd_pointset_choose_keyed(ps, in->seed, 7, n_out, pick));
  KD_TRY(kd_result_alloc(out, n_out, d));
  KD_TRY(kd_pointset_gather_rows(ps, pick, n_out, out->points));
  for (kd_gidx i = 0; i < n_out; i++) out->indices[i] = pick[i];
  out->mmd = NAN;
cleanup:
  free(pick);
  return err;
}

const kd_algo_desc kd_algo_uniform = {
    "uniform",          "thin", "uniform random subsample without replacement (seeded)",
    kd_uniform_params_, 1,      kd_uniform_run_,
    KD_ALGO_N_OUT,      NULL,   NULL};
