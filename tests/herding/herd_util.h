/* herd_util.h - helpers shared by the herding tests: build a problem (candidates + closed-form
 * target) on a communicator and run one herding algorithm with key=value overrides. */
#ifndef KDISTILL_TESTS_HERD_UTIL_H
#define KDISTILL_TESTS_HERD_UTIL_H

#include "kd_test.h"

typedef struct {
  kd_kernel *k;
  kd_pointset *cand;
  kd_target *t;
  kd_measure mu;
} herd_problem;

/** Gaussian kernel (ls) with N(0, I_d) target; m candidates sampled from the target with seed. */
kd_err herd_problem_gauss(MPI_Comm comm, int d, double ls, kd_gidx m, uint64_t seed,
                          herd_problem *p);
/** Periodic Sobolev order r on [0,1) with the torus target; m uniform candidates. */
kd_err herd_problem_sobolev(MPI_Comm comm, int r, kd_gidx m, uint64_t seed, herd_problem *p);
void herd_problem_free(herd_problem *p);

/** Run algorithm `name` (task herd) with overrides "key=value" (NULL-terminated list). */
kd_err herd_run(MPI_Comm comm, const herd_problem *p, const char *name, const char *const *kv,
                kd_result *res);

/** Smallest MMD over trace rows with at most n atoms (INFINITY if none). */
double herd_best_mmd_at(const kd_result *r, int64_t n);
/** Smallest atom count among trace rows with MMD <= tol (-1 if none). */
int64_t herd_atoms_to_reach(const kd_result *r, double tol);

/** Least-squares slope of log(best MMD at n atoms) against log n over n in [nmin, final]. */
double herd_fit_slope(const kd_result *r, int64_t nmin);

#endif
