/* thinformer.c - Thinformer (Low-Rank Thinning Alg. 1, eq. (22)-(23)): thin the augmented
 * key-value pairs (k_i / d^(1/4), (v_i, v_max)) with KH-Compress(0.5) under the attention kernel
 * k_att((k,v),(k',v')) = exp(<k,k'>) <v,v'> and return the exact softmax attention
 * T_hat = D^-1 A V over the selected pairs, A_ij = exp(<q_i, k_j> / sqrt(d)). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/apps/apps_impl.h"
#include "algo/thinning/thin_impl.h"
#include "comm/dist_impl.h"

/* rows T[nq*dv] of softmax attention of Q[nq*dk] over (Ks, Vs)[m]; stable (max-shifted). */
static kd_err kd_attention_rows_(const double *Q, kd_lidx nq, int dk, const double *Ks,
                                 const double *Vs, kd_lidx m, int dv, double *T) {
  kd_err err = KD_OK;
  double *a = NULL;
  const double s = 1.0 / sqrt((double)dk);
  KD_ALLOC(a, m);
  for (kd_lidx i = 0; i < nq; i++) {
    double mx = -INFINITY, den = 0.0;
    for (kd_lidx j = 0; j < m; j++) {
      double t = 0.0;
      for (int c = 0; c < dk; c++) t += Q[i * dk + c] * Ks[j * dk + c];
      a[j] = t * s;
      if (a[j] > mx) mx = a[j];
    }
    for (int c = 0; c < dv; c++) T[i * dv + c] = 0.0;
    for (kd_lidx j = 0; j < m; j++) {
      double e = exp(a[j] - mx);
      den += e;
      for (int c = 0; c < dv; c++) T[i * dv + c] += e * Vs[j * dv + c];
    }
    for (int c = 0; c < dv; c++) T[i * dv + c] /= den;
  }
cleanup:
  free(a);
  return err;
}

/* The augmented pairs (k / dk^(1/4), v, v_max) as a new point set *P. Collective. */
static kd_err kd_thinformer_augment_(MPI_Comm comm, const kd_pointset *K, const kd_pointset *V,
                                     kd_pointset **P_out) {
  kd_err err = KD_OK;
  kd_pointset *P = NULL;
  const kd_gidx n = kd_pointset_n_global(K);
  const int dk = kd_pointset_dim(K), dv = kd_pointset_dim(V);
  const kd_lidx nl = kd_pointset_n_local(K);
  const double *kr = kd_pointset_rows_const(K), *vr = kd_pointset_rows_const(V);
  double vmax = 0.0;
  for (kd_lidx i = 0; i < nl * dv; i++) vmax = fmax(vmax, fabs(vr[i]));
  KD_TRY(kd_dist_max(comm, &vmax, 1));
  const int da = dk + dv + 1;
  KD_TRY(kd_pointset_create(comm, n, da, &P));
  {
    double *pr;
    kd_pointset_get_rows(P, &pr);
    const double sc = pow((double)dk, -0.25);
    for (kd_lidx i = 0; i < nl; i++) {
      for (int c = 0; c < dk; c++) pr[i * da + c] = kr[i * dk + c] * sc;
      for (int c = 0; c < dv; c++) pr[i * da + dk + c] = vr[i * dv + c];
      pr[i * da + dk + dv] = vmax;
    }
    kd_pointset_restore_rows(P, &pr);
  }
  *P_out = P;
  P = NULL;
cleanup:
  kd_pointset_destroy(&P);
  return err;
}

/* Thin the augmented pairs P (attention kernel ka, target t) to n_out rows into r. Collective. */
static kd_err kd_thinformer_select_(MPI_Comm comm, kd_kernel *ka, kd_pointset *P, kd_target *t,
                                    kd_attn_method method, kd_gidx n_out, int g, double delta,
                                    int tight, uint64_t seed, kd_result *r) {
  kd_err err = KD_OK;
  kd_params up = {0};
  const kd_gidx n = kd_pointset_n_global(P);
  kd_algo_in in;
  memset(&in, 0, sizeof in);
  in.comm = comm;
  in.kernel = ka;
  in.points = P;
  in.target = t;
  in.seed = seed;
  if (method == KD_ATTN_KH_COMPRESS) {
    kd_thin_plan pl;
    memset(&pl, 0, sizeof pl);
    pl.kind = KD_HALVE_KH;
    pl.compress = 1;
    pl.g = g;
    pl.delta = delta;
    pl.refine_passes = 1;
    pl.tight = tight;
    if (n_out <= 0) {
      int Kh = 0;
      while (((kd_gidx)1 << (2 * (Kh + 1))) <= n) Kh++;
      n_out = (n >> (2 * Kh)) << (g + Kh);
    }
    pl.n_out = n_out;
    KD_TRY(kd_thin_run(&in, &pl, r));
  } else {
    const kd_algo_desc *u = kd_algo_find("thin", "uniform");
    KD_CHECK(u != NULL && n_out > 0, KD_ERR_CONFIG, "attention: uniform needs n_out > 0");
    KD_TRY(kd_params_defaults(u->params, u->n_params, &up));
    KD_TRY(kd_params_set_i64(&up, "n_out", n_out, "attention.n_out"));
    in.params = &up;
    KD_TRY(kd_algo_run(u, &in, r));
  }
cleanup:
  kd_params_free(&up);
  return err;
}

/* The exact attention T_exact over all n keys and the largest error of T_hat. Collective. */
static kd_err kd_thinformer_exact_(MPI_Comm comm, const kd_pointset *Q, const kd_pointset *K,
                                   const kd_pointset *V, const double *T_hat, double *T_exact,
                                   double *max_err) {
  kd_err err = KD_OK;
  double *Kall = NULL, *Vall = NULL, *Te = NULL;
  const kd_gidx n = kd_pointset_n_global(K), nq = kd_pointset_n_global(Q);
  const int dk = kd_pointset_dim(K), dv = kd_pointset_dim(V);
  const kd_lidx nql = kd_pointset_n_local(Q);
  KD_ALLOC(Kall, n * dk);
  KD_ALLOC(Vall, n * dv);
  KD_ALLOC(Te, nql * dv);
  KD_TRY(kd_pointset_allgather(K, Kall));
  KD_TRY(kd_pointset_allgather(V, Vall));
  KD_TRY(kd_attention_rows_(kd_pointset_rows_const(Q), nql, dk, Kall, Vall, n, dv, Te));
  KD_TRY(kd_dist_allgatherv(comm, Te, nql * dv, T_exact));
  double e = 0.0;
  for (kd_gidx i = 0; i < nq * dv; i++) e = fmax(e, fabs(T_hat[i] - T_exact[i]));
  if (max_err) *max_err = e;
cleanup:
  free(Kall);
  free(Vall);
  free(Te);
  return err;
}

kd_err kd_thinformer(MPI_Comm comm, const kd_pointset *Q, const kd_pointset *K,
                     const kd_pointset *V, kd_attn_method method, kd_gidx n_out, int g,
                     double delta, int tight, uint64_t seed, double *T_hat, int64_t **sel,
                     kd_gidx *n_sel, double *T_exact, double *max_err, uint64_t *kernel_evals) {
  kd_err err = KD_OK;
  kd_pointset *P = NULL;
  kd_kernel *ka = NULL;
  kd_target *t = NULL;
  kd_result r = KD_RESULT_INIT;
  double *Ks = NULL, *Vs = NULL, *Tl = NULL;
  *sel = NULL;
  *n_sel = 0;
  const kd_gidx n = kd_pointset_n_global(K);
  const int dk = kd_pointset_dim(K), dv = kd_pointset_dim(V);
  const kd_lidx nql = kd_pointset_n_local(Q);
  KD_CHECK(kd_pointset_n_global(V) == n, KD_ERR_INPUT,
           "attention: keys have %lld rows but values %lld", (long long)n,
           (long long)kd_pointset_n_global(V));
  KD_CHECK(kd_pointset_dim(Q) == dk, KD_ERR_INPUT,
           "attention: queries of dimension %d, keys of dimension %d", kd_pointset_dim(Q), dk);
  KD_CHECK(delta > 0 && delta < 1, KD_ERR_CONFIG, "attention.delta = %g: must be in (0,1)", delta);
  KD_TRY(kd_thinformer_augment_(comm, K, V, &P));
  const int da = dk + dv + 1;
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_ATTENTION);
  kp.ls = 1.0;
  kp.dk = dk;
  KD_TRY(kd_kernel_create(&kp, da, &ka));
  KD_TRY(kd_target_create_empirical(ka, P, 1, &t));
  KD_TRY(kd_thinformer_select_(comm, ka, P, t, method, n_out, g, delta, tight, seed, &r));
  const kd_gidx m = r.n;
  if (kernel_evals) *kernel_evals = r.kernel_evals;
  KD_ALLOC(*sel, m);
  for (kd_gidx j = 0; j < m; j++) (*sel)[j] = r.indices[j];
  *n_sel = m;
  KD_ALLOC(Ks, m * dk);
  KD_ALLOC(Vs, m * dv);
  KD_TRY(kd_pointset_gather_rows(K, r.indices, m, Ks));
  KD_TRY(kd_pointset_gather_rows(V, r.indices, m, Vs));
  KD_ALLOC(Tl, nql * dv);
  KD_TRY(kd_attention_rows_(kd_pointset_rows_const(Q), nql, dk, Ks, Vs, m, dv, Tl));
  KD_TRY(kd_dist_allgatherv(comm, Tl, nql * dv, T_hat));
  if (T_exact) KD_TRY(kd_thinformer_exact_(comm, Q, K, V, T_hat, T_exact, max_err));
cleanup:
  if (err != KD_OK) {
    free(*sel);
    *sel = NULL;
    *n_sel = 0;
  }
  kd_result_free(&r);
  kd_target_destroy(&t);
  kd_kernel_destroy(&ka);
  kd_pointset_destroy(&P);
  free(Ks);
  free(Vs);
  free(Tl);
  return err;
}
