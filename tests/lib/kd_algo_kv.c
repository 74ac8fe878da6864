/* kd_algo_kv.c - see kd_algo_kv.h. */
#include "kd_algo_kv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

kd_err kd_algo_params_kv(const kd_algo_desc *desc, const char *const *kv, kd_params *p) {
  kd_err err = KD_OK;
  memset(p, 0, sizeof *p);
  KD_TRY(kd_params_defaults(desc->params, desc->n_params, p));
  for (int i = 0; kv && kv[i]; i++) {
    char key[64], ctx[96];
    const char *eq = strchr(kv[i], '=');
    KD_CHECK(eq && eq > kv[i] && eq - kv[i] < (long)sizeof key, KD_ERR_ARG,
             "test setting \"%s\" is not key=value", kv[i]);
    memcpy(key, kv[i], (size_t)(eq - kv[i]));
    key[eq - kv[i]] = '\0';
    snprintf(ctx, sizeof ctx, "algorithm.%s", key);
    KD_TRY(kd_params_set_text(p, key, eq + 1, ctx));
  }
cleanup:
  if (err != KD_OK) kd_params_free(p);
  return err;
}

kd_err kd_algo_run_kv(MPI_Comm comm, const char *task, const char *name, const char *const *kv,
                      kd_kernel *k, kd_pointset *points, kd_target *t, uint64_t seed,
                      const kd_algo_kv_opts *opt, kd_result *res) {
  kd_err err = KD_OK;
  kd_params p;
  kd_algo_in in;
  memset(&p, 0, sizeof p);
  memset(&in, 0, sizeof in);
  kd_result_free(res);
  const kd_algo_desc *desc = kd_algo_find(task, name);
  KD_CHECK(desc, KD_ERR_CONFIG, "no algorithm %s of task %s is registered", name,
           task ? task : "(any)");
  KD_TRY(kd_algo_params_kv(desc, kv, &p));
  in.comm = comm;
  in.kernel = k;
  in.points = points;
  in.target = t;
  in.params = &p;
  in.seed = seed;
  if (opt) {
    in.task_in = opt->task_in;
    in.ckpt = opt->ckpt;
  }
  res->mmd = NAN;
  KD_TRY(kd_algo_run(desc, &in, res));
  if (opt && opt->fill_mmd && t && isnan(res->mmd))
    KD_TRY(kd_mmd(t, res->points, res->weights, (kd_lidx)res->n, &res->mmd, NULL));
cleanup:
  kd_params_free(&p);
  return err;
}
