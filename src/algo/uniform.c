/* uniform.c - baseline thinning: n_out distinct input rows chosen uniformly without replacement.
 * Row g gets the key kd_rng_u64(seed, 7, g); the n_out smallest keys win (ties: lowest index), so
 * the choice does not depend on the rank count. */
#include <math.h>
#include <stdlib.h>

#include "dist/dist_impl.h"
#include "kdistill/kd_algo.h"

static const kd_param_spec kd_uniform_params_[] = {
    {"n_out", KD_PARAM_INT, 64, NULL, 1, 1e15, NULL, "number of output points"},
};

typedef struct {
  uint64_t key;
  int64_t idx;
} kd_keyed_;

static int kd_keyed_cmp_(const void *a, const void *b) {
  const kd_keyed_ *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

static kd_err kd_uniform_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_keyed_ *loc = NULL;
  double *sendbuf = NULL, *all = NULL;
  kd_gidx *pick = NULL;
  const kd_pointset *ps = in->points;
  const kd_gidx n = kd_pointset_n_global(ps);
  const kd_gidx n_out = kd_params_int(in->params, "n_out");
  const kd_lidx nl = kd_pointset_n_local(ps);
  const kd_gidx off = kd_pointset_offset(ps);
  const int d = kd_pointset_dim(ps);
  KD_CHECK(n_out <= n, KD_ERR_CONFIG, "algorithm.n_out = %lld exceeds the %lld input points",
           (long long)n_out, (long long)n);
  KD_ALLOC(loc, nl);
  for (kd_lidx i = 0; i < nl; i++) {
    loc[i].key = kd_rng_u64(in->seed, 7, (uint64_t)(off + i));
    loc[i].idx = off + i;
  }
  qsort(loc, (size_t)nl, sizeof *loc, kd_keyed_cmp_);
  kd_lidx keep = nl < n_out ? nl : n_out;
  /* keys travel as doubles bit-for-bit: two doubles per candidate (key bits, index) */
  KD_ALLOC(sendbuf, 2 * keep);
  for (kd_lidx i = 0; i < keep; i++) {
    union {
      uint64_t u;
      double f;
    } cv;
    cv.u = loc[i].key;
    sendbuf[2 * i] = cv.f;
    sendbuf[2 * i + 1] = (double)loc[i].idx;
  }
  int64_t total = keep;
  KD_TRY(kd_dist_sum_i64(in->comm, &total, 1));
  KD_ALLOC(all, 2 * total);
  KD_TRY(kd_dist_allgatherv(in->comm, sendbuf, 2 * keep, all));
  free(loc);
  loc = NULL;
  KD_ALLOC(loc, total);
  for (int64_t i = 0; i < total; i++) {
    union {
      uint64_t u;
      double f;
    } cv;
    cv.f = all[2 * i];
    loc[i].key = cv.u;
    loc[i].idx = (int64_t)all[2 * i + 1];
  }
  qsort(loc, (size_t)total, sizeof *loc, kd_keyed_cmp_);
  KD_ALLOC(pick, n_out);
  for (kd_gidx i = 0; i < n_out; i++) pick[i] = loc[i].idx;
  KD_TRY(kd_result_alloc(out, n_out, d));
  KD_TRY(kd_pointset_gather_rows(ps, pick, n_out, out->points));
  for (kd_gidx i = 0; i < n_out; i++) out->indices[i] = pick[i];
  out->mmd = NAN;
cleanup:
  free(loc);
  free(sendbuf);
  free(all);
  free(pick);
  return err;
}

const kd_algo_desc kd_algo_uniform = {
    "uniform",          "thin", "uniform random subsample without replacement (seeded)",
    kd_uniform_params_, 1,      kd_uniform_run_};
