/* monte_carlo.c - baseline quadrature: n iid points from the target's generator, weights 1/n. */
#include <math.h>

#include "kdistill/author/kd_algo.h"

typedef struct {
  int64_t n;
} kd_mc_params_t_;

static const kd_param_spec kd_mc_params_[] = {
    {"n", KD_PARAM_INT, 64, NULL, 1, 1e9, NULL, "number of quadrature points",
     KD_PARAM_AT(kd_mc_params_t_, n)},
};

static kd_err kd_mc_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  const kd_measure *m = kd_target_measure(in->target);
  kd_mc_params_t_ mp = {0};
  KD_TRY(kd_params_fill(in->params, &mp));
  const kd_gidx n = mp.n;
  KD_CHECK(m != NULL, KD_ERR_UNSUPPORTED,
           "monte_carlo needs a generator target (target.type uniform_box, gaussian, ...)");
  KD_TRY(kd_result_alloc(out, n, m->d));
  /* every rank draws the same rows: the rule is replicated */
  KD_TRY(kd_measure_sample(m, in->seed, 0, n, out->points));
  out->mmd = NAN;
cleanup:
  return err;
}

const kd_algo_desc kd_algo_monte_carlo = {"monte_carlo",
                                          "quad",
                                          "iid sample from the target measure, uniform weights",
                                          kd_mc_params_,
                                          1,
                                          kd_mc_run_,
                                          0,
                                          NULL,
                                          NULL};
