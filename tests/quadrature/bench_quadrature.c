/* bench_quadrature.c - stage timings of nystrom_recombination (not a test; run by
 * bench/quadrature.sh). Usage: bench_quadrature sobolev|gaussian n [reps] [extra key=value ...]
 * d = 3; sobolev: periodic Sobolev r = 3 on the torus [0,1)^3; gaussian: Gaussian kernel ls = 1
 * with target N(0, I_3) (closed form). N = n^2, l = 10n, opt: convex. Prints one line per rep:
 * wall time (max over ranks), CPU time of the busiest rank (user + system; on a shared machine
 * this approximates the wall time an idle machine would give), and the stage times. */
#include <sys/resource.h>

#include "quad_test_util.h"

/* CPU seconds (user + system) of this process. */
static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
         (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  if (argc < 3) {
    if (kd_test_rank() == 0)
      fprintf(stderr, "usage: %s sobolev|gaussian n [reps] [k=v ...]\n", argv[0]);
    return kd_test_finish();
  }
  const int sob = strcmp(argv[1], "sobolev") == 0;
  const int n = atoi(argv[2]), reps = argc > 3 ? atoi(argv[3]) : 3;
  MPI_Comm world = MPI_COMM_WORLD;
  kd_kernel_params kp = kd_kernel_params_default(sob ? KD_KERNEL_SOBOLEV : KD_KERNEL_GAUSSIAN);
  kp.order = 3;
  kp.ls = 1.0;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&kp, 3, &k));
  double mean[3] = {0, 0, 0}, sd[3] = {1, 1, 1};
  kd_measure mu = {0};
  mu.type = sob ? KD_MEASURE_TORUS : KD_MEASURE_GAUSSIAN;
  mu.d = 3;
  if (!sob) {
    mu.mean = mean;
    mu.sd = sd;
  }
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_closed(world, k, &mu, &t));
  char nbuf[32];
  snprintf(nbuf, sizeof nbuf, "n=%d", n);
  const char *kv[16] = {nbuf};
  int nk = 1;
  for (int i = 4; i < argc && nk < 15; i++) kv[nk++] = argv[i];
  kv[nk] = NULL;
  static const char *const st[6] = {"time_sampling",      "time_eigensolve", "time_test_functions",
                                    "time_recombination", "time_opt",        "time_nystrom"};
  for (int rep = 0; rep < reps; rep++) {
    kd_result r = KD_RESULT_INIT;
    MPI_Barrier(world);
    double t0 = MPI_Wtime(), c0 = cpu_seconds();
    KD_TEST_OK(qt_run(world, "nystrom_recombination", k, t, 1000 + rep, kv, &r));
    double tc[2] = {MPI_Wtime() - t0, cpu_seconds() - c0};
    MPI_Allreduce(MPI_IN_PLACE, tc, 2, MPI_DOUBLE, MPI_MAX, world);
    const double total = tc[0], cpu = tc[1];
    double v[6] = {0}, m1 = NAN, m2 = NAN, sc = 0;
    for (int i = 0; i < 6; i++) kd_result_get_metric(&r, st[i], &v[i]);
    kd_result_get_metric(&r, "mmd_recombination", &m1);
    kd_result_get_metric(&r, "mmd_opt", &m2);
    kd_result_get_metric(&r, "eig_scalapack", &sc);
    if (kd_test_rank() == 0)
      printf(
          "%s n=%d ranks=%d rep=%d total %.3f s cpu %.3f s | sampling %.3f eigensolve %.3f (%s) "
          "test_functions %.3f recombination %.3f opt %.3f | nystrom %.3f | wce N.+emp %.4e "
          "+opt %.4e | size %lld\n",
          argv[1], n, kd_test_size(), rep, total, cpu, v[0], v[1], sc > 0 ? "ScaLAPACK" : "LAPACK",
          v[2], v[3], v[4], v[5], m1, m2, (long long)r.n);
    fflush(stdout);
    kd_result_free(&r);
  }
  kd_target_destroy(&t);
  kd_kernel_destroy(&k);
  return kd_test_finish();
}
