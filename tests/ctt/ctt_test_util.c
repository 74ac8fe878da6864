/* ctt_test_util.c - see ctt_test_util.h. */
#include "ctt_test_util.h"

#include "comm/dist_impl.h"
#include "kd_algo_kv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const kd_algo_desc *ctt_test_desc(const char *name) { return kd_algo_find("ctt", name); }

kd_err ctt_test_run(MPI_Comm comm, const char *name, kd_kernel *k, const kd_pointset *X,
                    const kd_pointset *Y, uint64_t seed, const char *const *settings,
                    kd_result *out) {
  const kd_ctt_in ti = {.y = Y};
  return ctt_test_run_in(comm, name, k, X, &ti, seed, settings, out);
}

kd_err ctt_test_run_in(MPI_Comm comm, const char *name, kd_kernel *k, const kd_pointset *X,
                       const kd_ctt_in *ti, uint64_t seed, const char *const *settings,
                       kd_result *out) {
  kd_algo_kv_opts opt = {0};
  opt.task_in = ti;
  return kd_algo_run_kv(comm, "ctt", name, settings, k, (kd_pointset *)X, NULL, seed, &opt, out);
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

int ctt_test_config_error(MPI_Comm comm, const char *name, const char *const *st, const char *key,
                          kd_kernel_type kt) {
  kd_kernel_params kp = kd_kernel_params_default(kt);
  kd_kernel *k = NULL;
  kd_pointset *X = NULL, *Y = NULL;
  kd_result r = KD_RESULT_INIT;
  int ok = kd_kernel_create(&kp, 2, &k) == KD_OK &&
           ctt_test_gauss(comm, 64, 2, NULL, 1, &X) == KD_OK &&
           ctt_test_gauss(comm, 40, 2, NULL, 2, &Y) == KD_OK;
  if (ok) {
    kd_err_clear();
    const kd_err e = kd_dist_agreed(comm, ctt_test_run(comm, name, k, X, Y, 1, st, &r));
    ok = e == KD_ERR_CONFIG && strstr(kd_err_message(), key) != NULL;
  }
  kd_result_free(&r);
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  kd_kernel_destroy(&k);
  return ok;
}

double ctt_test_f64(const kd_result *r, const char *path) {
  const kd_result_dataset *ds = kd_result_find(r, path);
  return (ds && !ds->is_int) ? ds->f64[0] : NAN;
}

int64_t ctt_test_i64(const kd_result *r, const char *path) {
  const kd_result_dataset *ds = kd_result_find(r, path);
  return (ds && ds->is_int) ? ds->i64[0] : -1;
}

int ctt_test_same_outputs(const kd_result *a, const kd_result *b, int64_t B) {
  const kd_result_dataset *p = kd_result_find(a, "/test/permutation_statistics");
  const kd_result_dataset *q = kd_result_find(b, "/test/permutation_statistics");
  const double sa = ctt_test_f64(a, "/test/statistic"), sb = ctt_test_f64(b, "/test/statistic");
  return !memcmp(&sa, &sb, sizeof sa) &&
         ctt_test_f64(a, "/test/p_value") == ctt_test_f64(b, "/test/p_value") &&
         ctt_test_i64(a, "/test/reject") == ctt_test_i64(b, "/test/reject") &&
         ctt_test_i64(a, "/test/rank") == ctt_test_i64(b, "/test/rank") && p && q &&
         p->dims[0] >= B && q->dims[0] >= B && !memcmp(p->f64, q->f64, sizeof(double) * (size_t)B);
}

void ctt_test_shifted_pair(double shift, double *v, kd_measure *gx, kd_measure *gy) {
  memset(gx, 0, sizeof *gx);
  v[0] = v[1] = v[3] = 0.0;
  v[2] = shift;
  v[4] = v[5] = 1.0;
  gx->type = KD_MEASURE_GAUSSIAN;
  gx->d = 2;
  gx->mean = v;
  gx->sd = v + 4;
  *gy = *gx;
  gy->mean = v + 2;
}
