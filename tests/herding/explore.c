/* explore.c - development aid (not a test): run one herding algorithm on the Gaussian (LS env =
 * length scale) or Sobolev ("sob") problem of the quality test and print its trace.
 * usage: herd_explore ALGO [gauss|sob] [key=value ...] */
#include <stdlib.h>
#include <string.h>

#include "herd_util.h"

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const char *alg = argc > 1 ? argv[1] : "bpcg";
  const char *prob = argc > 2 ? argv[2] : "gauss";
  herd_problem p;
  double t0 = MPI_Wtime();
  kd_err e = strcmp(prob, "gauss") == 0
                 ? herd_problem_gauss(MPI_COMM_WORLD, 2, getenv("LS") ? atof(getenv("LS")) : 1.0,
                                      4096, 7, &p)
                 : herd_problem_sobolev(MPI_COMM_WORLD, 1, 4096, 7, &p);
  if (e) {
    printf("setup: %s\n", kd_err_message());
    return 1;
  }
  kd_result r = KD_RESULT_INIT;
  const char *kv[8] = {0};
  for (int i = 3; i < argc && i < 10; i++) kv[i - 3] = argv[i];
  e = herd_run(MPI_COMM_WORLD, &p, alg, kv, &r);
  if (e) {
    printf("run: %s\n", kd_err_message());
    return 1;
  }
  if (kd_test_rank() == 0) {
    for (int64_t i = 0; i < r.n_trace; i += (r.n_trace / 40 + 1))
      printf("it %lld atoms %lld mmd %.4e\n", (long long)r.trace_iter[i],
             (long long)r.trace_atoms[i], r.trace_mmd[i]);
    double v;
    kd_result_get_metric(&r, "lmo_calls", &v);
    printf("final n %lld mmd %.4e lmo %g time %.2f\n", (long long)r.n, r.mmd, v, MPI_Wtime() - t0);
    if (!strcmp(prob, "sob"))
      printf("ratio to optimal: %.3f\n",
             r.mmd / (sqrt(2 * 3.14159265358979323846 * 3.14159265358979323846 / 6) / r.n));
  }
  kd_result_free(&r);
  herd_problem_free(&p);
  kd_test_finish();
  return 0;
}
