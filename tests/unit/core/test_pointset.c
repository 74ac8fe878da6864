/* test_pointset.c - block split, generators identical at any rank count, gathers, NaN rows. */
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  int size = kd_test_size();
  const kd_gidx n = 1001;
  const int d = 3;
  double lo[3] = {-1, 0, 2}, hi[3] = {1, 1, 5}, mean[3] = {1, -2, 0}, sd[3] = {0.5, 1, 2};
  kd_measure mu = {0};
  mu.type = KD_MEASURE_UNIFORM_BOX;
  mu.d = d;
  mu.lo = lo;
  mu.hi = hi;
  kd_pointset *ps = NULL;
  KD_TEST_OK(kd_pointset_generate(c, &mu, n, 11, &ps));
  KD_TEST(kd_pointset_n_global(ps) == n, "n");
  kd_gidx tot = kd_pointset_n_local(ps);
  MPI_Allreduce(MPI_IN_PLACE, &tot, 1, MPI_INT64_T, MPI_SUM, c);
  KD_TEST(tot == n, "local sizes sum to n");
  KD_TEST(kd_pointset_rank_offset(ps, size) == n, "last offset");
  for (kd_gidx g = 0; g < n; g += 97) {
    int o = kd_pointset_owner(ps, g);
    KD_TEST(kd_pointset_rank_offset(ps, o) <= g && g < kd_pointset_rank_offset(ps, o + 1), "owner");
  }
  /* rows are a function of (seed, global row): compare with a serial draw */
  double *all = malloc(sizeof(double) * n * d), *ref = malloc(sizeof(double) * n * d);
  KD_TEST_OK(kd_pointset_allgather(ps, all));
  KD_TEST_OK(kd_measure_sample(&mu, 11, 0, n, ref));
  KD_TEST(memcmp(all, ref, sizeof(double) * n * d) == 0, "generated rows independent of ranks");
  int inbox = 1;
  for (kd_gidx g = 0; g < n; g++)
    for (int j = 0; j < d; j++) inbox &= all[g * d + j] >= lo[j] && all[g * d + j] <= hi[j];
  KD_TEST(inbox, "uniform_box inside the box");
  kd_gidx idx[3] = {1000, 0, 517};
  double got[9];
  KD_TEST_OK(kd_pointset_gather_rows(ps, idx, 3, got));
  KD_TEST(memcmp(got, ref + 1000 * d, sizeof(double) * d) == 0 &&
              memcmp(got + 3, ref, 8 * d) == 0 && memcmp(got + 6, ref + 517 * d, 8 * d) == 0,
          "gather rows");
  KD_TEST_OK(kd_pointset_validate(ps, "box"));
  /* plant a NaN in global row 600 (1-based 601) on whichever rank owns it */
  double *rows;
  kd_pointset_get_rows(ps, &rows);
  kd_gidx off = kd_pointset_offset(ps);
  if (600 >= off && 600 < off + kd_pointset_n_local(ps)) rows[(600 - off) * d + 1] = NAN;
  kd_pointset_restore_rows(ps, &rows);
  KD_TEST(kd_pointset_validate(ps, "data.csv") == KD_ERR_INPUT, "NaN rejected");
  KD_TEST(strstr(kd_err_message(), "row 601") && strstr(kd_err_message(), "data.csv"),
          "message names row and file: %s", kd_err_message());
  kd_err_clear();
  kd_pointset_destroy(&ps);
  KD_TEST(ps == NULL, "destroy sets NULL");

  /* Gaussian sample moments (n = 20000): 5 SE tolerance */
  mu.type = KD_MEASURE_GAUSSIAN;
  mu.mean = mean;
  mu.sd = sd;
  const kd_gidx N = 20000;
  KD_TEST_OK(kd_pointset_generate(c, &mu, N, 3, &ps));
  double m[6] = {0};
  const double *r = kd_pointset_rows_const(ps);
  for (kd_lidx i = 0; i < kd_pointset_n_local(ps); i++)
    for (int j = 0; j < d; j++) {
      m[j] += r[i * d + j];
      m[3 + j] += (r[i * d + j] - mean[j]) * (r[i * d + j] - mean[j]);
    }
  MPI_Allreduce(MPI_IN_PLACE, m, 6, MPI_DOUBLE, MPI_SUM, c);
  for (int j = 0; j < d; j++) {
    KD_TEST_NEAR(m[j] / N, mean[j], 5 * sd[j] / sqrt((double)N), "gaussian mean");
    KD_TEST_NEAR(m[3 + j] / N, sd[j] * sd[j], 5 * sd[j] * sd[j] * sqrt(2.0 / N), "gaussian var");
  }
  kd_pointset_destroy(&ps);
  /* truncated Gaussian stays in its box; sphere rows have unit norm */
  mu.type = KD_MEASURE_TRUNC_GAUSSIAN;
  mu.lo = lo;
  mu.hi = hi;
  double x[300];
  KD_TEST_OK(kd_measure_sample(&mu, 5, 0, 100, x));
  int ok = 1;
  for (int i = 0; i < 100; i++)
    for (int j = 0; j < d; j++) ok &= x[i * d + j] >= lo[j] && x[i * d + j] <= hi[j];
  KD_TEST(ok, "trunc_gaussian inside the box");
  mu.type = KD_MEASURE_SPHERE;
  KD_TEST_OK(kd_measure_sample(&mu, 5, 0, 100, x));
  ok = 1;
  for (int i = 0; i < 100; i++)
    ok &= fabs(x[3 * i] * x[3 * i] + x[3 * i + 1] * x[3 * i + 1] + x[3 * i + 2] * x[3 * i + 2] -
               1) < 1e-14;
  KD_TEST(ok, "sphere rows unit norm");
  mu.type = KD_MEASURE_GRID;
  mu.grid_n = 4;
  KD_TEST_OK(kd_measure_sample(&mu, 0, 0, 64, x));
  KD_TEST_NEAR(x[0], -0.75, 1e-15, "grid first point (cell midpoint)");
  KD_TEST(kd_measure_sample(&mu, 0, 64, 1, x) == KD_ERR_INPUT, "grid row beyond n^d");
  kd_err_clear();
  free(all);
  free(ref);
  return kd_test_finish();
}
