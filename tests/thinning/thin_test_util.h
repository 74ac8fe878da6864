/* thin_test_util.h - helpers for the thinning tests: the seeded 8-component mixture of issue 4 and
 * a direct (serial, independent of src/embed/) MMD between the uniform measure on all rows and a
 * weighted subset. */
#ifndef KDISTILL_THIN_TEST_UTIL_H
#define KDISTILL_THIN_TEST_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kd_algo_kv.h"
#include "kd_test.h"

/* 8 unit-covariance components with means on a circle of radius 4 (neighbours ~3.1 apart),
 * equal weights; d = 2 (extra coordinates, if d > 2, have mean 0; d = 1: the circle's first
 * coordinate, 4 cos(2 pi c / 8)). Caller kd_measure_free()s. */
static inline kd_measure thin_test_mixture(int d) {
  kd_measure m;
  memset(&m, 0, sizeof m);
  m.type = KD_MEASURE_GAUSSIAN_MIXTURE;
  m.d = d;
  m.n_comp = 8;
  m.means = calloc((size_t)8 * d, sizeof(double));
  m.sds = calloc((size_t)8 * d, sizeof(double));
  m.mix_w = calloc(8, sizeof(double));
  for (int c = 0; c < 8; c++) {
    m.means[c * d] = 4.0 * cos(2 * 3.14159265358979323846 * c / 8.0);
    if (d > 1) m.means[c * d + 1] = 4.0 * sin(2 * 3.14159265358979323846 * c / 8.0);
    for (int j = 0; j < d; j++) m.sds[c * d + j] = 1.0;
    m.mix_w[c] = 1.0 / 8.0;
  }
  return m;
}

static inline kd_kernel *thin_test_gauss(int d) {
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  p.ls = sqrt(2.0 * d); /* sigma^2 = 2d */
  kd_kernel *k = NULL;
  kd_kernel_create(&p, d, &k);
  return k;
}

/* (1/n^2) sum_ij k(x_i, x_j) (symmetric, blocked). */
static inline double thin_test_self(kd_kernel *k, const double *X, kd_lidx n, int d) {
  double s = 0.0;
  const kd_lidx bs = 256;
  double *T = malloc(sizeof(double) * bs * bs);
  for (kd_lidx i0 = 0; i0 < n; i0 += bs)
    for (kd_lidx j0 = i0; j0 < n; j0 += bs) {
      kd_lidx ni = n - i0 < bs ? n - i0 : bs, nj = n - j0 < bs ? n - j0 : bs;
      kd_kernel_eval_block(k, X + i0 * d, ni, X + j0 * d, nj, T, nj);
      double t = 0;
      for (kd_lidx a = 0; a < ni * nj; a++) t += T[a];
      s += (i0 == j0 ? 1.0 : 2.0) * t;
    }
  free(T);
  return s / ((double)n * (double)n);
}

/* MMD between uniform on X[n] (self term xx given) and sum_j w_j delta_{X[idx_j]} (w NULL =
 * uniform). */
static inline double thin_test_mmd_idx(kd_kernel *k, const double *X, kd_lidx n, int d, double xx,
                                       const int64_t *idx, const double *w, kd_lidx m) {
  double *S = calloc((size_t)(m * d + 1), sizeof(double)), *z = malloc(sizeof(double) * m),
         *K = malloc(sizeof(double) * m * m);
  for (kd_lidx j = 0; j < m; j++) memcpy(S + j * d, X + idx[j] * d, sizeof(double) * d);
  kd_kernel_matvec(k, S, m, X, n, NULL, 0.0, z);
  kd_kernel_eval_block(k, S, m, S, m, K, m);
  double cross = 0.0, ss = 0.0;
  for (kd_lidx j = 0; j < m; j++) {
    double wj = w ? w[j] : 1.0 / m;
    cross += wj * z[j] / n;
    for (kd_lidx l = 0; l < m; l++) ss += wj * (w ? w[l] : 1.0 / m) * K[j * m + l];
  }
  free(S);
  free(z);
  free(K);
  double v = xx - 2 * cross + ss;
  return sqrt(v > 0 ? v : 0);
}

/* Mean MMD of uniform subsamples (without replacement) of size m over `reps` seeds. */
static inline double thin_test_uniform_mmd(kd_kernel *k, const double *X, kd_lidx n, int d,
                                           double xx, kd_lidx m, int reps) {
  int64_t *idx = malloc(sizeof(int64_t) * n);
  double s = 0.0;
  for (int r = 0; r < reps; r++) {
    for (kd_lidx i = 0; i < n; i++) idx[i] = i;
    kd_rng g = kd_rng_make(1000 + r, 5);
    for (kd_lidx i = 0; i < m; i++) {
      kd_lidx j = i + (kd_lidx)kd_rng_next_below(&g, (uint64_t)(n - i));
      int64_t t = idx[i];
      idx[i] = idx[j];
      idx[j] = t;
    }
    s += thin_test_mmd_idx(k, X, n, d, xx, idx, NULL, m);
  }
  free(idx);
  return s / reps;
}

static inline int thin_test_distinct(const int64_t *idx, kd_lidx m, kd_lidx n) {
  char *seen = calloc((size_t)n, 1);
  int ok = 1;
  for (kd_lidx j = 0; j < m; j++) {
    if (idx[j] < 0 || idx[j] >= n || seen[idx[j]])
      ok = 0;
    else
      seen[idx[j]] = 1;
  }
  free(seen);
  return ok;
}

/* Run the `thin` algorithm `name` with "key=value" settings kv[] (NULL-terminated) through
 * kd_algo_run_kv; like the task layer, fill the MMD when the algorithm left it NaN, and then add
 * the metric mmd_before_refine from the refine's own record (refine against P_in). Collective. */
static inline kd_err thin_test_run(MPI_Comm comm, const char *name, kd_pointset *ps, kd_kernel *k,
                                   kd_target *t, uint64_t seed, const char *const *kv,
                                   kd_result *res) {
  kd_err e = kd_algo_run_kv(comm, "thin", name, kv, k, ps, t, seed, NULL, res);
  if (e == KD_OK && isnan(res->mmd) && t) {
    double mmd = NAN, zz = NAN, b = 0, tc = 0;
    int av = 0;
    e = kd_mmd(t, res->points, res->weights, res->n, &mmd, NULL);
    if (e == KD_OK) e = kd_target_self(t, &zz, &av);
    res->mmd = mmd;
    /* refine against the Compress output: its values are not about P_in */
    if (e == KD_OK && av && kd_result_get_metric(res, "refine_mmd2_before_minus_self", &b) &&
        !(kd_result_get_metric(res, "refine_target_compress", &tc) && tc != 0))
      e = kd_result_set_metric(res, "mmd_before_refine", sqrt(fmax(zz + b, 0.0)));
  }
  return e;
}

#endif
