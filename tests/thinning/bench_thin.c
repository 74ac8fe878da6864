/* bench_thin.c - benchmark of kt_compress (Compress++ style, g = 4) for bench/thinning.sh (built,
 * not registered as a test). Usage: bench_thin LOG2N D [REPS] [ZZ]
 *   data: d = 2, n = 2^16: standard normal; otherwise the 8-component mixture of the tests
 *   (d > 2: extra coordinates N(0,1)); Gaussian kernel sigma^2 = 2d; n_out = sqrt(n).
 * Prints per repetition: wall seconds of run() (max over ranks), kernel evaluations of the
 * thinning (summed over ranks), and MMD^2 - zz; with ZZ = 1 also the exact MMD (the double sum
 * zz over all n^2 pairs, computed once, distributed). */
#include <stdio.h>

#include "thin_test_util.h"

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  const int lg = argc > 1 ? atoi(argv[1]) : 16, d = argc > 2 ? atoi(argv[2]) : 2;
  const int reps = argc > 3 ? atoi(argv[3]) : 3;
  /* ZZ: 0 = unknown, 1 = compute it, any other number = the known value (from an earlier run) */
  const double zz_arg = argc > 4 ? atof(argv[4]) : 0.0;
  const int want_zz = zz_arg == 1.0;
  const kd_gidx n = (kd_gidx)1 << lg;
  kd_measure mu = thin_test_mixture(d);
  double zero[64] = {0}, one[64];
  for (int j = 0; j < 64; j++) one[j] = 1;
  kd_measure nrm;
  memset(&nrm, 0, sizeof nrm);
  nrm.type = KD_MEASURE_GAUSSIAN;
  nrm.d = d;
  nrm.mean = zero;
  nrm.sd = one;
  kd_pointset *ps = NULL;
  KD_TEST_OK(kd_pointset_generate(c, (lg == 16 && d == 2) ? &nrm : &mu, n, 1234, &ps));
  kd_kernel *k = thin_test_gauss(d);
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_empirical(k, ps, !want_zz, &t));
  char nout[64];
  snprintf(nout, sizeof nout, "n_out=%lld", (long long)(1LL << (lg / 2)));
  const char *kv[8] = {nout, "g=4", NULL};
  for (int i = 5; i < argc && i < 10; i++) kv[i - 3] = argv[i]; /* extra key=value settings */
  double zz = (zz_arg != 0.0 && zz_arg != 1.0) ? zz_arg : NAN;
  if (want_zz) {
    int av = 0;
    double t0 = MPI_Wtime();
    KD_TEST_OK(kd_target_self(t, &zz, &av));
    if (kd_test_rank() == 0) printf("zz = %.12e (%.1f s)\n", zz, MPI_Wtime() - t0);
  }
  for (int r = 0; r < reps; r++) {
    kd_result res = KD_RESULT_INIT;
    MPI_Barrier(c);
    double t0 = MPI_Wtime();
    KD_TEST_OK(
        kd_algo_run_kv(c, "thin", "kt_compress", kv, k, ps, t, 42 + (uint64_t)r, NULL, &res));
    double wall = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &wall, 1, MPI_DOUBLE, MPI_MAX, c);
    double mmd = NAN, mmd2 = NAN;
    KD_TEST_OK(kd_mmd(t, res.points, res.weights, res.n, &mmd, &mmd2));
    if (kd_test_rank() == 0)
      printf(
          "n=2^%d d=%d ranks=%d rep %d: %.3f s  algo %.3f s  evals %.4e  n_out %lld  "
          "MMD^2-zz %.10e  MMD %.4e\n",
          lg, d, kd_test_size(), r, wall, res.seconds, (double)res.kernel_evals, (long long)res.n,
          want_zz ? mmd2 - zz : mmd2,
          want_zz ? mmd : (isnan(zz) ? NAN : sqrt(fmax(mmd2 + zz, 0.0))));
    kd_result_free(&res);
  }
  kd_target_destroy(&t);
  kd_pointset_destroy(&ps);
  kd_kernel_destroy(&k);
  kd_measure_free(&mu);
  return kd_test_finish();
}
