/* bench_herding.c - BPCG herding speed (not a test): m candidates from N(0, I_2), Gaussian kernel
 * ls = 1, closed-form target, `iters` BPCG iterations. Prints one line with
 *   col_s      median time of one fused kernel column k(x, c) over the local candidates c
 *              (kd_kernel_eval_block with x as the single row; max over ranks),
 *   iter_s     per-iteration time of the BPCG loop (trace time from iteration 0 to the last),
 *   ratio      iter_s / col_s, setup_s, atoms, mmd, lmo calls;
 *   col_cpu, run_cpu_per_iter, cpu_ratio: the same in process CPU time (max over ranks; the run's
 *              CPU includes the setup and any MPI busy-waiting), which time slices lost to other
 *              jobs on a shared machine do not inflate.
 * usage: bench_herding [m=1000000] [iters=500] [cache_mb=2048] [algo=bpcg] */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "herd_util.h"

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const kd_gidx m = argc > 1 ? atoll(argv[1]) : 1000000;
  const int iters = argc > 2 ? atoi(argv[2]) : 500;
  const char *cache = argc > 3 ? argv[3] : "2048";
  const char *algo = argc > 4 ? argv[4] : "bpcg";
  MPI_Comm c = MPI_COMM_WORLD;
  herd_problem p;
  if (herd_problem_gauss(c, 2, 1.0, m, 5, &p) != KD_OK) {
    fprintf(stderr, "setup: %s\n", kd_err_message());
    MPI_Abort(c, 1);
  }
  /* one fused kernel column over the local candidates */
  const kd_lidx nl = kd_pointset_n_local(p.cand);
  double *col = malloc(sizeof(double) * (nl ? nl : 1)), x[2] = {0.3, -0.2}, t[15], tc[15];
  for (int r = 0; r < 15; r++) {
    MPI_Barrier(c);
    double t0 = MPI_Wtime(), c0 = cpu_now();
    kd_kernel_eval_block(p.k, x, 1, kd_pointset_rows_const(p.cand), nl, col, nl);
    t[r] = MPI_Wtime() - t0;
    tc[r] = cpu_now() - c0;
    x[0] += 1e-3;
  }
  qsort(t, 15, sizeof(double), cmpd);
  qsort(tc, 15, sizeof(double), cmpd);
  double col_s[2] = {t[7], tc[7]};
  MPI_Allreduce(MPI_IN_PLACE, col_s, 2, MPI_DOUBLE, MPI_MAX, c);
  char it_s[32], cm[48];
  snprintf(it_s, sizeof it_s, "max_iter=%d", iters);
  snprintf(cm, sizeof cm, "cache_mb=%s", cache);
  const char *kv[] = {it_s, cm, NULL};
  kd_result r = KD_RESULT_INIT;
  double t0 = MPI_Wtime(), c0 = cpu_now();
  if (herd_run(c, &p, algo, kv, &r) != KD_OK) {
    fprintf(stderr, "run: %s\n", kd_err_message());
    MPI_Abort(c, 1);
  }
  double total = MPI_Wtime() - t0, cpu = cpu_now() - c0;
  MPI_Allreduce(MPI_IN_PLACE, &cpu, 1, MPI_DOUBLE, MPI_MAX, c);
  double loop = r.trace_seconds[r.n_trace - 1] - r.trace_seconds[0];
  int64_t nit = r.trace_iter[r.n_trace - 1] - r.trace_iter[0];
  double iter_s = loop / (double)nit, lmo = 0, fws = 0, pws = 0;
  kd_result_get_metric(&r, "lmo_calls", &lmo);
  kd_result_get_metric(&r, "fw_steps", &fws);
  kd_result_get_metric(&r, "pairwise_steps", &pws);
  if (kd_test_rank() == 0)
    printf(
        "algo %s ranks %d m %lld iters %lld col_s %.6f iter_s %.6f ratio %.3f setup_s %.3f "
        "total_s %.3f col_cpu %.6f run_cpu_per_iter %.6f cpu_ratio %.3f atoms %lld mmd %.4e "
        "lmo %g fw_steps %g pairwise_steps %g\n",
        algo, kd_test_size(), (long long)m, (long long)nit, col_s[0], iter_s, iter_s / col_s[0],
        total - loop, total, col_s[1], cpu / (double)nit, cpu / (double)nit / col_s[1],
        (long long)r.n, r.mmd, lmo, fws, pws);
  kd_result_free(&r);
  free(col);
  herd_problem_free(&p);
  kd_test_finish();
  return 0;
}
