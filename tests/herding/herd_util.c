/* herd_util.c - see herd_util.h. */
#include "herd_util.h"

#include "kd_algo_kv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kd_err herd_problem_gauss(MPI_Comm comm, int d, double ls, kd_gidx m, uint64_t seed,
                          herd_problem *p) {
  kd_err err = KD_OK;
  memset(p, 0, sizeof *p);
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  kp.ls = ls;
  KD_TRY(kd_kernel_create(&kp, d, &p->k));
  p->mu.type = KD_MEASURE_GAUSSIAN;
  p->mu.d = d;
  p->mu.mean = calloc((size_t)d, sizeof(double));
  p->mu.sd = calloc((size_t)d, sizeof(double));
  KD_CHECK(p->mu.mean && p->mu.sd, KD_ERR_MEM, "alloc");
  for (int j = 0; j < d; j++) p->mu.sd[j] = 1.0;
  if (m > 0) KD_TRY(kd_pointset_generate(comm, &p->mu, m, seed, &p->cand));
  KD_TRY(kd_target_create_closed(comm, p->k, &p->mu, &p->t));
cleanup:
  return err;
}

kd_err herd_problem_sobolev(MPI_Comm comm, int r, kd_gidx m, uint64_t seed, herd_problem *p) {
  kd_err err = KD_OK;
  memset(p, 0, sizeof *p);
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_SOBOLEV);
  kp.order = r;
  KD_TRY(kd_kernel_create(&kp, 1, &p->k));
  p->mu.type = KD_MEASURE_TORUS;
  p->mu.d = 1;
  if (m > 0) KD_TRY(kd_pointset_generate(comm, &p->mu, m, seed, &p->cand));
  KD_TRY(kd_target_create_closed(comm, p->k, &p->mu, &p->t));
cleanup:
  return err;
}

void herd_problem_free(herd_problem *p) {
  kd_target_destroy(&p->t);
  kd_pointset_destroy(&p->cand);
  kd_kernel_destroy(&p->k);
  kd_measure_free(&p->mu);
}

kd_err herd_run(MPI_Comm comm, const herd_problem *p, const char *name, const char *const *kv,
                kd_result *res) {
  return kd_algo_run_kv(comm, "herd", name, kv, p->k, p->cand, p->t, 1, NULL, res);
}

double herd_best_mmd_at(const kd_result *r, int64_t n) {
  double b = INFINITY;
  for (int64_t i = 0; i < r->n_trace; i++)
    if (r->trace_atoms[i] <= n && r->trace_mmd[i] < b) b = r->trace_mmd[i];
  return b;
}

int64_t herd_atoms_to_reach(const kd_result *r, double tol) {
  int64_t b = -1;
  for (int64_t i = 0; i < r->n_trace; i++)
    if (r->trace_mmd[i] <= tol && (b < 0 || r->trace_atoms[i] < b)) b = r->trace_atoms[i];
  return b;
}

double herd_fit_slope(const kd_result *r, int64_t nmin) {
  int64_t nmax = 0;
  for (int64_t i = 0; i < r->n_trace; i++)
    if (r->trace_atoms[i] > nmax) nmax = r->trace_atoms[i];
  double *best = malloc(sizeof(double) * (size_t)(nmax + 1));
  if (!best) return NAN;
  for (int64_t n = 0; n <= nmax; n++) best[n] = INFINITY;
  for (int64_t i = 0; i < r->n_trace; i++)
    if (r->trace_mmd[i] < best[r->trace_atoms[i]]) best[r->trace_atoms[i]] = r->trace_mmd[i];
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int cnt = 0;
  for (int64_t n = nmin; n <= nmax; n++)
    if (isfinite(best[n]) && best[n] > 0) {
      double x = log((double)n), y = log(best[n]);
      sx += x, sy += y, sxx += x * x, sxy += x * y;
      cnt++;
    }
  free(best);
  return cnt >= 3 ? (cnt * sxy - sx * sy) / (cnt * sxx - sx * sx) : NAN;
}
