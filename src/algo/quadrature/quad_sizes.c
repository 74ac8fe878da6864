/* quad_sizes.c - the sizes of a convex-quadrature run before anything is computed: the defaults
 * of the sample size N = n^2 and the Nystrom points l = 10 n, the checks of N and l against n and
 * the empirical rows, and the memory estimate of one rank. The task layer (check and mem hooks of
 * the descriptors, validate) and the pipeline's set-up (quad_common.c) call these same functions.
 */
#include <stdio.h>

#include "algo/quadrature/quad_common.h"

void kd_quad_sizes(int64_t n, int64_t N, int64_t ell, kd_gidx n_emp, int64_t *N_out,
                   int64_t *ell_out) {
  if (N == 0) N = n * n;
  if (n_emp > 0 && N > n_emp) N = n_emp;
  if (ell == 0) ell = 10 * n;
  *N_out = N;
  *ell_out = ell;
}

kd_err kd_quad_check_sizes(kd_quad_kind kind, int64_t n, int64_t N, int64_t ell, int ell_set,
                           kd_gidx n_emp) {
  kd_err err = KD_OK;
  KD_CHECK_KEY(N >= n + 1, KD_ERR_CONFIG, "algorithm.sample_size",
               "algorithm.sample_size: N = %lld must be at least n + 1 = %lld", (long long)N,
               (long long)(n + 1));
  if (kind == KD_QUAD_NYSTROM) {
    KD_CHECK_KEY(ell >= n, KD_ERR_CONFIG, "algorithm.nystrom_points",
                 "algorithm.nystrom_points: l = %lld must be at least n = %lld", (long long)ell,
                 (long long)n);
    /* l Nystrom points beyond the N sample rows add nothing the sample can resolve and cost
     * l^2 memory: a set value is refused before any allocation (the default 10 n, above N = n^2
     * only for n < 10, is kept as it always was) */
    if (ell_set)
      KD_CHECK_KEY(ell <= N, KD_ERR_CONFIG, "algorithm.nystrom_points",
                   "algorithm.nystrom_points: l = %lld exceeds the sample size N = %lld "
                   "(algorithm.sample_size); set l <= N",
                   (long long)ell, (long long)N);
    if (n_emp > 0)
      KD_CHECK_KEY(ell <= n_emp, KD_ERR_CONFIG, "algorithm.nystrom_points",
                   "algorithm.nystrom_points: l = %lld exceeds the %lld target rows",
                   (long long)ell, (long long)n_emp);
  }
cleanup:
  return err;
}

/* the empirical rows the sample is drawn from: the pool if there is one, else a file target's */
static kd_gidx kd_quad_emp_rows_(const kd_algo_shape *s) {
  return s->n_in > 0 ? s->n_in : s->n_target;
}

kd_err kd_quad_check(const kd_params *p, const kd_algo_shape *s, kd_quad_kind kind) {
  kd_err err = KD_OK;
  int64_t N = 0, ell = 0;
  kd_quad_size_keys q;
  KD_TRY(kd_quad_size_keys_of(p, &q));
  const kd_gidx n_emp = kd_quad_emp_rows_(s);
  kd_quad_sizes(q.n, q.sample_size, q.nystrom_points, n_emp, &N, &ell);
  KD_TRY(kd_quad_check_sizes(kind, q.n, N, ell, q.nystrom_points > 0, n_emp));
cleanup:
  return err;
}

/* Counted per rank (docs/reliability.md): the rank's share of the sample rows with their weights,
 * the N sampled row ids of an empirical target, the l x (n - 1) eigenvectors, and the l x l
 * Nystrom matrix with its eigenvectors (rank 0 alone on the LAPACK path, 1/p each with
 * ScaLAPACK). Not counted: the test-function values of the rank's leaves, up to N/p x n but far
 * fewer when small Nystrom eigenvalues are dropped (eig_rtol), so the estimate is a floor that
 * refuses only runs that cannot fit. Measured peak RSS at p = 1 (gaussian target, d = 2): n = 200:
 * 98 MB (estimate 69 MB + ~30 MB of MPI and libraries), n = 400: 325 MB (estimate 277 MB). */
kd_err kd_quad_mem(const kd_params *p, const kd_algo_shape *s, kd_quad_kind kind,
                   kd_algo_mem *out) {
  const int nys = kind == KD_QUAD_NYSTROM;
  const kd_gidx n_emp = kd_quad_emp_rows_(s);
  kd_quad_size_keys q;
  const kd_err e = kd_quad_size_keys_of(p, &q);
  if (e) return e;
  const int64_t n = q.n;
  int64_t Ni = 0, elli = 0;
  kd_quad_sizes(n, q.sample_size, q.nystrom_points, n_emp, &Ni, &elli);
  const double N = (double)Ni, l = nys ? (double)elli : 0.0, dn = (double)n;
  const int ranks = s->n_ranks > 0 ? s->n_ranks : 1;
  const int lapack = nys && l < (double)q.eig_parallel_min;
  const double sample = (N / ranks + 1) * (s->d + 2) + (n_emp > 0 ? N : 0.0);
  const double nyst = l * (dn - 1) + (nys ? (lapack ? 2 * l * l : 2 * l * l / ranks) : 0.0);
  out->bytes = 8.0 * (sample + nyst);
  if (nys && nyst > sample) { /* the l x l Nystrom matrix dominates: name its key */
    snprintf(out->what, sizeof out->what,
             "quad with n = %.0f nodes and l = %.0f Nystrom points (N = %.0f sample rows)", dn, l,
             N);
    out->key = "algorithm.nystrom_points or algorithm.n";
  } else {
    snprintf(out->what, sizeof out->what, "quad with n = %.0f nodes from a sample of N = %.0f rows",
             dn, N);
    out->key = "algorithm.n or algorithm.sample_size";
  }
  return KD_OK;
}
