/* ctt_test_util.c - see ctt_test_util.h. */
#include "ctt_test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Referenced directly (not through kd_algo_find) so the tests link without the whole registry. */
extern const kd_algo_desc kd_algo_ctt, kd_algo_ctt_exact;

const kd_algo_desc *ctt_test_desc(const char *name) {
  if (strcmp(name, "ctt") == 0) return &kd_algo_ctt;
  if (strcmp(name, "ctt_exact") == 0) return &kd_algo_ctt_exact;
  return NULL;
}

kd_err ctt_test_run(MPI_Comm comm, const char *name, kd_kernel *k, const kd_pointset *X,
                    const kd_pointset *Y, uint64_t seed, const char *const *settings,
                    kd_result *out) {
  kd_err err = KD_OK;
  kd_params prm = {0};
  const kd_algo_desc *desc = ctt_test_desc(name);
  KD_CHECK(desc, KD_ERR_CONFIG, "no algorithm %s", name);
  KD_TRY(kd_params_defaults(desc->params, desc->n_params, &prm));
  for (int i = 0; settings && settings[i]; i++) {
    char key[64];
    const char *eq = strchr(settings[i], '=');
    KD_CHECK(eq && eq - settings[i] < 63, KD_ERR_ARG, "bad setting %s", settings[i]);
    memcpy(key, settings[i], (size_t)(eq - settings[i]));
    key[eq - settings[i]] = 0;
    KD_TRY(kd_params_set_text(&prm, key, eq + 1, "test"));
  }
  kd_ctt_in ti = {Y};
  kd_algo_in in;
  memset(&in, 0, sizeof in);
  in.comm = comm;
  in.kernel = k;
  in.points = (kd_pointset *)X;
  in.params = &prm;
  in.seed = seed;
  in.task_in = &ti;
  KD_TRY(desc->run(&in, out));
cleanup:
  kd_params_free(&prm);
  return err;
}

kd_err ctt_test_gauss(MPI_Comm comm, int64_t n, int d, const double *mean, uint64_t seed,
                      kd_pointset **out) {
  kd_err err = KD_OK;
  kd_measure ms;
  memset(&ms, 0, sizeof ms);
  ms.type = KD_MEASURE_GAUSSIAN;
  ms.d = d;
  KD_ALLOC(ms.mean, d);
  KD_ALLOC(ms.sd, d);
  for (int j = 0; j < d; j++) {
    ms.mean[j] = mean ? mean[j] : 0.0;
    ms.sd[j] = 1.0;
  }
  KD_TRY(kd_pointset_generate(comm, &ms, n, seed, out));
cleanup:
  kd_measure_free(&ms);
  return err;
}

double ctt_test_f64(const kd_result *r, const char *path) {
  const kd_result_dataset *ds = kd_result_find(r, path);
  return (ds && !ds->is_int) ? ds->f64[0] : NAN;
}

int64_t ctt_test_i64(const kd_result *r, const char *path) {
  const kd_result_dataset *ds = kd_result_find(r, path);
  return (ds && ds->is_int) ? ds->i64[0] : -1;
}
