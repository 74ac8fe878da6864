/* test_thin_edges.c - tiny and awkward sizes at 1, 2, 4 ranks (ranks without rows, bins straddling
 * ranks, odd counts, n_out = 1 and n_out = n_in): every algorithm returns n_out distinct rows, the
 * same as a serial run, and no call hangs. */
#include "thin_test_util.h"

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  const int d = 2;
  kd_measure mu = thin_test_mixture(d);
  kd_kernel *k = thin_test_gauss(d);
  const kd_gidx sizes[] = {1, 2, 3, 5, 7, 17, 64, 100, 257};
  const char *algos[] = {"rkh", "lkh", "kh_refine", "gs_thin", "kt_compress", "kh_compress", "kh"};
  kd_result r = KD_RESULT_INIT, rs = KD_RESULT_INIT;
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    const kd_gidx n = sizes[si];
    kd_pointset *ps = NULL, *pself = NULL;
    kd_target *t = NULL, *tself = NULL;
    double *X = malloc(sizeof(double) * n * d);
    KD_TEST_OK(kd_pointset_generate(c, &mu, n, 31 + si, &ps));
    KD_TEST_OK(kd_pointset_allgather(ps, X));
    KD_TEST_OK(kd_target_create_empirical(k, ps, 0, &t));
    KD_TEST_OK(kd_pointset_from_replicated(MPI_COMM_SELF, n, d, X, NULL, &pself));
    KD_TEST_OK(kd_target_create_empirical(k, pself, 0, &tself));
    const kd_gidx outs[3] = {1, n / 3 > 0 ? n / 3 : 1, n};
    for (int a = 0; a < 7; a++) {
      const int compress = strstr(algos[a], "compress") != NULL;
      if (compress && n < 4) continue; /* needs 4^(g+1) <= n_in */
      for (int o = 0; o < (a == 6 ? 1 : 3); o++) {
        char kv0[32];
        snprintf(kv0, sizeof kv0, "n_out=%lld", (long long)outs[o]);
        const char *kv[3] = {a == 6 ? NULL : kv0, compress ? "g=0" : NULL, NULL};
        kd_err e = thin_test_run(c, algos[a], ps, k, t, 5, kv, &r);
        kd_gidx want = a == 6 ? n / 2 : outs[o];
        if (e != KD_OK) {
          /* only the documented refusals: n_out beyond the Compress output, or kh of one row */
          int ok = (compress && strstr(kd_err_message(), "exceeds the Compress output")) ||
                   (a == 6 && n < 2);
          KD_TEST(ok, "%s n=%lld n_out=%lld: %s", algos[a], (long long)n, (long long)want,
                  kd_err_message());
          kd_err_clear();
          continue;
        }
        KD_TEST(r.n == want && thin_test_distinct(r.indices, r.n, n), "%s n=%lld: %lld rows",
                algos[a], (long long)n, (long long)r.n);
        if (kd_test_rank() == 0) {
          KD_TEST_OK(thin_test_run(MPI_COMM_SELF, algos[a], pself, k, tself, 5, kv, &rs));
          KD_TEST(rs.n == r.n && memcmp(rs.indices, r.indices, sizeof(int64_t) * r.n) == 0,
                  "%s n=%lld n_out=%lld: same as serial", algos[a], (long long)n, (long long)want);
        }
      }
    }
    kd_target_destroy(&tself);
    kd_target_destroy(&t);
    kd_pointset_destroy(&pself);
    kd_pointset_destroy(&ps);
    free(X);
  }
  kd_result_free(&r);
  kd_result_free(&rs);
  kd_kernel_destroy(&k);
  kd_measure_free(&mu);
  return kd_test_finish();
}
