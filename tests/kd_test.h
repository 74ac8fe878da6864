/* kd_test.h - a tiny test harness for MPI tests: checks are counted on every rank, the totals are
 * summed at the end and rank 0 prints "N passed, N failed". */
#ifndef KDISTILL_KD_TEST_H
#define KDISTILL_KD_TEST_H

#include <math.h>
#include <mpi.h>
#include <stdio.h>

#include "kdistill/author.h"

/** MPI_Init + MPI_ERRORS_RETURN on MPI_COMM_WORLD + a context on MPI_COMM_WORLD (quiet logging)
 *  bound to the main thread, so kd_err_message / kd_interrupt_set / ... work in every test. */
void kd_test_init(int *argc, char ***argv);
/** Reduce pass/fail counts, print the summary on rank 0, destroy the context, MPI_Finalize;
 *  returns the exit status. */
int kd_test_finish(void);
/** The context kd_test_init created and bound (borrowed). */
kd_ctx *kd_test_ctx(void);
/** Record one check; prints a FAIL line (with rank) when cond is false. Returns cond. */
int kd_test_check_(int cond, const char *expr, const char *file, int line, const char *fmt, ...);
int kd_test_rank(void);
int kd_test_size(void);

/** A distributed 2-component Gaussian mixture of N rows in d dimensions (component 0 at 0 with
 *  sd 0.6, component 1 at (1.5, -1, 0.5, ...) with sds (0.4, 0.8, 0.5, ...), weights 0.6 / 0.4;
 *  seed), with weights 1 + (g mod wmod) when wmod > 0 (else uniform). Fills the replicated rows
 *  Y[N*d] and normalised weights v[N] for brute-force references. Collective. */
kd_pointset *kd_test_mixture_target(MPI_Comm c, kd_gidx N, int d, uint64_t seed, int wmod,
                                    double *Y, double *v);

/** A Gaussian kernel of length scale ls on R^d (the check of its creation recorded). */
kd_kernel *kd_test_gaussian(int d, double ls);

/* 1 in the sanitizer build (-DKD_ENABLE_ASAN=ON): a test whose cost is repetitions of the same
 * code (seeds of a statistical check) may run fewer of them there, where every run costs 5-10
 * times more and what is checked is memory safety, not the statistics. */
#ifndef KD_TEST_SANITIZED
#define KD_TEST_SANITIZED 0
#endif

#define KD_TEST(cond, ...) kd_test_check_((cond) ? 1 : 0, #cond, __FILE__, __LINE__, __VA_ARGS__)
/** |a - b| <= tol (absolute). */
#define KD_TEST_NEAR(a, b, tol, what)                                                       \
  kd_test_check_(fabs((double)(a) - (double)(b)) <= (tol), #a " ~ " #b, __FILE__, __LINE__, \
                 "%s: %.17g vs %.17g (tol %.3g)", (what), (double)(a), (double)(b), (double)(tol))
/** relative closeness |a-b| <= rtol*max(|a|,|b|) + tiny. */
#define KD_TEST_REL(a, b, rtol, what)                                                          \
  kd_test_check_(fabs((double)(a) - (double)(b)) <=                                            \
                     (rtol)*fmax(fabs((double)(a)), fabs((double)(b))) + 1e-300,               \
                 #a " ~rel " #b, __FILE__, __LINE__, "%s: %.17g vs %.17g (rtol %.3g)", (what), \
                 (double)(a), (double)(b), (double)(rtol))
/** A kd_err call that must succeed. */
#define KD_TEST_OK(call) \
  kd_test_check_((call) == KD_OK, #call, __FILE__, __LINE__, "failed: %s", kd_err_message())

#endif
