/* reorder.c - thinned reordering (Low-Rank Thinning Alg. 2, Harvey & Samadi's construction) with
 * LKH(delta) (Alg. B.2): the n/2 rows LKH keeps are appended in processing order, the others
 * prepended to a second list; pi_{k+1} = concatenate(Pi, Pi'). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/apps/apps_impl.h"
#include "algo/thinning/thin_impl.h"

kd_err kd_thin_reorder(MPI_Comm comm, const kd_pointset *X, const int64_t *pi_k, double delta,
                       uint64_t seed, int64_t *pi_next) {
  kd_err err = KD_OK;
  kd_kernel *kl = NULL;
  kd_target *t = NULL;
  kd_result r = KD_RESULT_INIT;
  char *in_out = NULL;
  const kd_gidx n = kd_pointset_n_global(X);
  const int d = kd_pointset_dim(X);
  KD_CHECK(n >= 2, KD_ERR_INPUT, "reorder: need at least 2 gradient rows (got %lld)", (long long)n);
  KD_CHECK(delta > 0 && delta < 1, KD_ERR_CONFIG, "reorder.delta = %g: must be in (0,1)", delta);
  kd_kernel_params lp = kd_kernel_params_default(KD_KERNEL_LINEAR);
  lp.c = 0.0;
  KD_TRY(kd_kernel_create(&lp, d, &kl));
  KD_TRY(kd_target_create_empirical(kl, X, 1, &t));
  kd_algo_in in;
  memset(&in, 0, sizeof in);
  in.comm = comm;
  in.kernel = kl;
  in.points = (kd_pointset *)X;
  in.target = t;
  in.seed = seed;
  kd_thin_plan pl;
  memset(&pl, 0, sizeof pl);
  pl.kind = KD_HALVE_LKH;
  pl.delta = delta;
  pl.n_out = n / 2;
  pl.refine_passes = 1;
  KD_TRY(kd_thin_run(&in, &pl, &r));
  KD_ALLOC(in_out, n);
  for (kd_gidx j = 0; j < r.n; j++) in_out[r.indices[j]] = 1;
  kd_gidx a = 0, b = n - 1; /* Pi grows from the front, Pi' (prepended) fills from the back */
  for (kd_gidx i = 0; i < n; i++) {
    int64_t p = pi_k ? pi_k[i] : i;
    if (in_out[i])
      pi_next[a++] = p;
    else
      pi_next[b--] = p;
  }
  /* prepending to Pi' and concatenating puts the last non-kept row right after Pi: filling from
   * the back in processing order gives exactly that reversed order */
  KD_CHECK(a == b + 1, KD_ERR_INTERNAL, "reorder: bookkeeping");
cleanup:
  free(in_out);
  kd_result_free(&r);
  kd_target_destroy(&t);
  kd_kernel_destroy(&kl);
  return err;
}

double kd_prefix_discrepancy(const double *G, int64_t n, int d, const int64_t *pi) {
  double *mean = calloc((size_t)d, sizeof(double)), *s = calloc((size_t)d, sizeof(double));
  double best = 0.0;
  if (!mean || !s) {
    free(mean);
    free(s);
    return NAN;
  }
  for (int64_t i = 0; i < n; i++)
    for (int c = 0; c < d; c++) mean[c] += G[i * d + c] / (double)n;
  for (int64_t j = 0; j < n; j++) {
    double nn = 0.0;
    for (int c = 0; c < d; c++) {
      s[c] += G[pi[j] * d + c] - mean[c];
      nn += s[c] * s[c];
    }
    if (nn > best) best = nn;
  }
  free(mean);
  free(s);
  return sqrt(best);
}
