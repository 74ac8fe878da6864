/* test_thin_errors.c - bad input gives one clear error on every rank, never a hang: n_out > n_in,
 * n_out < 1, g too large for n_in, n_out beyond the Compress output, delta outside (0,1), and a
 * non-finite value planted on the last rank only (agreed over ranks, message names the row). */
#include "thin_test_util.h"

static void expect(kd_err got, kd_err want, const char *needle, const char *what) {
  KD_TEST(got == want && strstr(kd_err_message(), needle) != NULL, "%s: code %d, message '%s'",
          what, (int)got, kd_err_message());
  kd_err_clear();
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  const int d = 2;
  const kd_lidx n = 1000;
  kd_measure mu = thin_test_mixture(d);
  kd_pointset *ps = NULL;
  KD_TEST_OK(kd_pointset_generate(c, &mu, n, 3, &ps));
  kd_kernel *k = thin_test_gauss(d);
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_empirical(k, ps, 1, &t));
  kd_result r = KD_RESULT_INIT;

  const char *const big[] = {"n_out=1001", NULL};
  expect(thin_test_run(c, "rkh", ps, k, t, 1, big, &r), KD_ERR_CONFIG, "exceeds the 1000 input",
         "n_out > n_in");
  expect(thin_test_run(c, "kt_compress", ps, k, t, 1, big, &r), KD_ERR_CONFIG, "exceeds",
         "n_out > n_in (kt)");
  const char *const zero[] = {"n_out=0", NULL};
  expect(thin_test_run(c, "kh_compress", ps, k, t, 1, zero, &r), KD_ERR_CONFIG, "n_out",
         "n_out < 1");
  /* n = 1000: K = 4 (4^4 = 256 <= 1000 < 1024), so Compress needs g <= 3 */
  const char *const gbig[] = {"n_out=10", "g=4", NULL};
  expect(thin_test_run(c, "kt_compress", ps, k, t, 1, gbig, &r), KD_ERR_CONFIG,
         "g = 4 too large for n_in = 1000", "g too large");
  const char *const gsmall[] = {"n_out=500", "g=0", NULL};
  expect(thin_test_run(c, "kh_compress", ps, k, t, 1, gsmall, &r), KD_ERR_CONFIG,
         "exceeds the Compress output", "n_out beyond 3 * 2^(0+4) = 48");
  const char *const d1[] = {"n_out=10", "delta=1", NULL};
  expect(thin_test_run(c, "rkh", ps, k, t, 1, d1, &r), KD_ERR_CONFIG, "delta", "delta = 1");
  const char *const d0[] = {"n_out=10", "delta=0", NULL};
  expect(thin_test_run(c, "kh_compress", ps, k, t, 1, d0, &r), KD_ERR_CONFIG, "delta", "delta = 0");
  const char *const d2[] = {"n_out=10", "delta=1.5", NULL};
  expect(thin_test_run(c, "kh_compress", ps, k, t, 1, d2, &r), KD_ERR_CONFIG, "delta",
         "delta = 1.5");

  /* NaN on the last rank only (global row 998, 1-based 999) */
  double *rows;
  kd_pointset_get_rows(ps, &rows);
  kd_gidx off = kd_pointset_offset(ps);
  if (998 >= off && 998 < off + kd_pointset_n_local(ps)) rows[(998 - off) * d] = NAN;
  kd_pointset_restore_rows(ps, &rows);
  const char *const ok[] = {"n_out=10", NULL};
  const char *const okg[] = {"n_out=10", "g=1", NULL};
  const char *algos[] = {"kh",          "lkh",       "rkh",        "kh_compress",
                         "kt_compress", "kh_refine", "gs_compress"};
  for (int i = 0; i < 7; i++)
    expect(thin_test_run(c, algos[i], ps, k, t, 1,
                         i == 0 ? NULL : (strstr(algos[i], "compress") ? okg : ok), &r),
           KD_ERR_INPUT, "row 999", algos[i]);
  KD_TEST(r.n == 0 && r.indices == NULL, "nothing returned on error");
  kd_result_free(&r);
  kd_target_destroy(&t);
  kd_pointset_destroy(&ps);
  kd_kernel_destroy(&k);
  kd_measure_free(&mu);
  return kd_test_finish();
}
