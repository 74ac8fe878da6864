/* ctt_test_util.h - helpers shared by the CTT tests and benchmarks: run one algorithm of task
 * "ctt" on (X, Y) with parameters given as "key=value" text, and draw Gaussian samples. */
#ifndef KDISTILL_CTT_TEST_UTIL_H
#define KDISTILL_CTT_TEST_UTIL_H

#include "algo/twosample/ctt_impl.h"
#include "kdistill/author.h"

/** Run algorithm `name` ("ctt" or "ctt_exact") of task "ctt" on comm. settings: NULL-terminated
 *  list of "key=value" strings applied to the defaults. Collective. */
kd_err ctt_test_run(MPI_Comm comm, const char *name, kd_kernel *k, const kd_pointset *X,
                    const kd_pointset *Y, uint64_t seed, const char *const *settings,
                    kd_result *out);
/** The same with the whole task input ti (Y and actt's ls_list / weights). Collective. */
kd_err ctt_test_run_in(MPI_Comm comm, const char *name, kd_kernel *k, const kd_pointset *X,
                       const kd_ctt_in *ti, uint64_t seed, const char *const *settings,
                       kd_result *out);
/** The descriptor of "ctt" or "ctt_exact" (NULL otherwise). */
const kd_algo_desc *ctt_test_desc(const char *name);
/** n rows of N(mean, I_d) on comm with seed (mean: d values, NULL = 0). Collective. */
kd_err ctt_test_gauss(MPI_Comm comm, int64_t n, int d, const double *mean, uint64_t seed,
                      kd_pointset **out);
/** The generators of a study: gx = N(0, I_2), gy = N((shift, 0), I_2), their vectors kept in the
 *  caller's v[6] (mean of x, mean of y, sd). */
void ctt_test_shifted_pair(double shift, double *v, kd_measure *gx, kd_measure *gy);
/** Run algorithm `name` with settings st on X (64 rows) and Y (40 rows) of N(0, I_2), kernel family
 *  kt at its defaults: 1 when the agreed error is KD_ERR_CONFIG and its message (kd_err_message)
 *  names key. Collective. */
int ctt_test_config_error(MPI_Comm comm, const char *name, const char *const *st, const char *key,
                          kd_kernel_type kt);
/** Scalar f64 / i64 extra dataset (NaN / -1 if absent). */
double ctt_test_f64(const kd_result *r, const char *path);
int64_t ctt_test_i64(const kd_result *r, const char *path);
/** 1 when a and b have bitwise the same /test statistic, p-value, decision, rank and the first B
 *  permutation (or bootstrap) statistics. */
int ctt_test_same_outputs(const kd_result *a, const kd_result *b, int64_t B);

#endif
