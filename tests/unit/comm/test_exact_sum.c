/* test_exact_sum.c - kd_dist_sum_exact (comm/exact_sum.c) at 1/2/4 ranks: the sum of non-negative
 * doubles is the same double whatever the rank count or the split, and it is the exact total
 * rounded: 1 + 1000 * 2^-60 (3.9 ulp of 1 lost one by one in a plain left-to-right sum) gives
 * 1 + 4 * 2^-52; subnormals, huge values and zeros are added exactly; and kd_pointset_set_weights
 * normalises with it, so weights are bitwise the same at every rank count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "kd_test.h"
#include "kdistill/author/kd_pointset.h"

/* this rank's block [a, b) of n values under a split by kind: 0 even, 1 all on the last rank,
 * 2 skewed */
static void block(int kind, int64_t n, int rank, int size, int64_t *a, int64_t *b) {
  if (kind == 1) {
    *a = rank == size - 1 ? 0 : n;
    *b = n;
    if (rank < size - 1) *a = *b = 0;
    return;
  }
  const int64_t s0 = kind == 0 ? n * rank / size : n * rank * rank / ((int64_t)size * size);
  const int64_t s1 =
      kind == 0 ? n * (rank + 1) / size : n * (rank + 1) * (rank + 1) / ((int64_t)size * size);
  *a = s0;
  *b = s1;
}

static double sum_split(const double *x, int64_t n, int kind, int rank, int size) {
  int64_t a, b;
  double s = NAN;
  block(kind, n, rank, size, &a, &b);
  KD_TEST_OK(kd_dist_sum_exact(MPI_COMM_WORLD, x + a, b - a, &s));
  return s;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* 1 followed by 1000 values of 2^-60 */
  const int64_t n = 1001;
  double *x = malloc(sizeof(double) * (size_t)n);
  x[0] = 1.0;
  for (int64_t i = 1; i < n; i++) x[i] = ldexp(1.0, -60);
  double plain = 0;
  for (int64_t i = 0; i < n; i++) plain += x[i];
  KD_TEST(plain == 1.0, "the plain sum loses the small terms (%.17g)", plain);
  for (int kind = 0; kind < 3; kind++) {
    const double s = sum_split(x, n, kind, rank, size);
    KD_TEST(s == 1.0 + ldexp(4.0, -52), "split %d: %.17g, expected 1 + 4 * 2^-52", kind, s);
  }
  /* a mix of magnitudes: huge, subnormal, zero and ordinary; every split gives the same bits as a
   * one-rank sum of the same values (MPI_COMM_SELF) */
  const int64_t m = 4099;
  double *y = malloc(sizeof(double) * (size_t)m);
  for (int64_t i = 0; i < m; i++) {
    const int64_t k = (i * 7919) % 97;
    y[i] = k == 0   ? 0.0
           : k == 1 ? 4.9e-324 * (double)(i % 13)
           : k == 2 ? 1e300
                    : 1.0 / (double)(k + i);
  }
  double ref = NAN;
  KD_TEST_OK(kd_dist_sum_exact(MPI_COMM_SELF, y, m, &ref));
  KD_TEST(isfinite(ref) && ref > 4e301, "mixed sum %.17g", ref);
  for (int kind = 0; kind < 3; kind++) {
    const double s = sum_split(y, m, kind, rank, size);
    KD_TEST(memcmp(&s, &ref, sizeof s) == 0, "split %d: %.17g differs from %.17g", kind, s, ref);
  }
  double zero = NAN;
  KD_TEST_OK(kd_dist_sum_exact(MPI_COMM_WORLD, y, 0, &zero));
  KD_TEST(zero == 0.0, "empty sum %g", zero);
  /* set_weights: the normalised weight of row 0 (1 / total) is the same bits at every rank count */
  kd_pointset *ps = NULL;
  KD_TEST_OK(kd_pointset_create(MPI_COMM_WORLD, n, 1, &ps));
  const kd_gidx off = kd_pointset_offset(ps);
  const kd_lidx nl = kd_pointset_n_local(ps);
  KD_TEST_OK(kd_pointset_set_weights(ps, x + off));
  double w0 = nl > 0 && off == 0 ? kd_pointset_weights_const(ps)[0] : 0.0;
  KD_TEST_OK(kd_dist_sum(MPI_COMM_WORLD, &w0, 1));
  KD_TEST(w0 == 1.0 / (1.0 + ldexp(4.0, -52)), "weight of row 0: %.17g", w0);
  (void)nl;
  kd_pointset_destroy(&ps);
  free(x);
  free(y);
  return kd_test_finish();
}
