/* test_herding_ranks.c - every herding algorithm gives identical atoms in identical order and
 * weights equal to round-off whatever the rank count: inside one MPI run, each algorithm runs over
 * the world communicator and, on rank 0, over MPI_COMM_SELF (the 1-rank reference), and rank 0
 * compares. Also: the same run twice gives the same bits. */
#include <stdlib.h>
#include <string.h>

#include "herd_util.h"

static const char *const kAlgos[] = {"fw_eq", "fw_linesearch", "fcfw",      "afw",
                                     "pfw",   "bpcg",          "bpcg_lazy", "pmp",
                                     "gcos",  "fc_pmp",        "fc_gcos"};

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const int rank = kd_test_rank();
  herd_problem world, self;
  memset(&self, 0, sizeof self);
  KD_TEST_OK(herd_problem_gauss(MPI_COMM_WORLD, 2, 0.7, 1025, 99, &world));
  if (rank == 0) KD_TEST_OK(herd_problem_gauss(MPI_COMM_SELF, 2, 0.7, 1025, 99, &self));
  for (size_t a = 0; a < sizeof kAlgos / sizeof *kAlgos; a++) {
    kd_result rw = KD_RESULT_INIT, rs = KD_RESULT_INIT, rw2 = KD_RESULT_INIT;
    /* small cache on the world run: forces recomputed columns on some ranks (same values) */
    const char *kvw[] = {"max_iter=100", "cache_mb=0.02", NULL};
    const char *kvs[] = {"max_iter=100", NULL};
    KD_TEST_OK(herd_run(MPI_COMM_WORLD, &world, kAlgos[a], kvw, &rw));
    KD_TEST_OK(herd_run(MPI_COMM_WORLD, &world, kAlgos[a], kvw, &rw2));
    KD_TEST(rw.n == rw2.n && memcmp(rw.weights, rw2.weights, sizeof(double) * rw.n) == 0 &&
                memcmp(rw.indices, rw2.indices, sizeof(int64_t) * rw.n) == 0,
            "%s: repeated run identical", kAlgos[a]);
    if (rank == 0) {
      KD_TEST_OK(herd_run(MPI_COMM_SELF, &self, kAlgos[a], kvs, &rs));
      int same = rw.n == rs.n;
      double dw = 0;
      for (int64_t i = 0; same && i < rw.n; i++) {
        same &= rw.indices[i] == rs.indices[i];
        dw = fmax(dw, fabs(rw.weights[i] - rs.weights[i]));
      }
      KD_TEST(same, "%s: same atoms in the same order (%lld vs %lld atoms)", kAlgos[a],
              (long long)rw.n, (long long)rs.n);
      KD_TEST(dw <= 1e-12, "%s: weights agree to %.3g", kAlgos[a], dw);
      KD_TEST_NEAR(rw.mmd, rs.mmd, 1e-12, kAlgos[a]);
      double lw = 0, ls = 0;
      kd_result_get_metric(&rw, "lmo_calls", &lw);
      kd_result_get_metric(&rs, "lmo_calls", &ls);
      KD_TEST(lw == ls, "%s: same LMO calls %g vs %g", kAlgos[a], lw, ls);
      KD_TEST(rw.n_trace == rs.n_trace, "%s: same trace length", kAlgos[a]);
    }
    /* results replicated on every rank: compare with rank 0's copy */
    int64_t n0 = rw.n;
    MPI_Bcast(&n0, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    int ok = n0 == rw.n;
    if (ok) {
      double *w0 = malloc(sizeof(double) * n0);
      memcpy(w0, rw.weights, sizeof(double) * n0);
      MPI_Bcast(w0, (int)n0, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      ok = memcmp(w0, rw.weights, sizeof(double) * n0) == 0;
      free(w0);
    }
    KD_TEST(ok, "%s: result replicated bit-identically on all ranks", kAlgos[a]);
    kd_result_free(&rw);
    kd_result_free(&rw2);
    kd_result_free(&rs);
  }
  herd_problem_free(&world);
  if (rank == 0) herd_problem_free(&self);
  return kd_test_finish();
}
