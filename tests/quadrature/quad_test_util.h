/* quad_test_util.h - helpers shared by the quadrature tests and the benchmark driver. */
#ifndef KDISTILL_QUAD_TEST_UTIL_H
#define KDISTILL_QUAD_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "kd_algo_kv.h"
#include "kd_test.h"

/* Run algorithm `name` (task quad) with "key=value" settings (NULL-terminated list). */
static inline kd_err qt_run_pool(MPI_Comm comm, const char *name, kd_kernel *k, kd_target *t,
                                 kd_pointset *pool, uint64_t seed, const char *const *kv,
                                 kd_result *res) {
  return kd_algo_run_kv(comm, "quad", name, kv, k, pool, t, seed, NULL, res);
}

static inline kd_err qt_run(MPI_Comm comm, const char *name, kd_kernel *k, kd_target *t,
                            uint64_t seed, const char *const *kv, kd_result *res) {
  return qt_run_pool(comm, name, k, t, NULL, seed, kv, res);
}

/* Direct worst-case error^2 (eq. 14) of a rule against the uniform measure on the torus for the
 * periodic Sobolev kernel: z == 1 and zz == 1, so wce^2 = w^T K w - 1. */
static inline double qt_sobolev_wce2(kd_kernel *k, const kd_result *r) {
  double s = 0;
  for (int64_t i = 0; i < r->n; i++)
    for (int64_t j = 0; j < r->n; j++)
      s += r->weights[i] * r->weights[j] *
           kd_kernel_eval(k, r->points + i * r->d, r->points + j * r->d);
  return s - 1.0;
}

/* Check a rule: weights >= 0 summing to 1, size <= n, indices distinct and in [0, N). */
static inline void qt_check_rule(const char *what, const kd_result *r, int64_t n, int64_t N) {
  double sum = 0;
  int ok = 1;
  for (int64_t i = 0; i < r->n; i++) {
    ok &= r->weights[i] >= 0 && r->indices[i] >= 0 && r->indices[i] < N;
    for (int64_t j = 0; j < i; j++) ok &= r->indices[i] != r->indices[j];
    sum += r->weights[i];
  }
  KD_TEST(r->n >= 1 && r->n <= n, "%s: size %lld <= n = %lld", what, (long long)r->n, (long long)n);
  KD_TEST(ok, "%s: weights >= 0, distinct sample indices", what);
  KD_TEST_NEAR(sum, 1.0, 1e-12, what);
}

#endif
