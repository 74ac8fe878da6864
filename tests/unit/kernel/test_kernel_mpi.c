/* test_kernel_mpi.c - the median heuristic equals a serial reference bit for bit at any rank
 * count, and row-split tiles / mat-vecs (each rank its own rows) equal the serial ones bitwise. */
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"
#include "kernel/kernel_impl.h"

static int cmp_u64g(const void *pa, const void *pb) {
  const uint64_t *a = pa, *b = pb; /* (key, g) pairs */
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return (a[1] > b[1]) - (a[1] < b[1]);
}
static int cmp_d(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

/* Serial reference of the documented rule: the m rows with the smallest
 * kd_rng_u64(seed, "medianls", g), median of their pairwise distances. */
static double median_ref(const double *X, kd_gidx n, int d, uint64_t seed, kd_lidx max_sample) {
  uint64_t *kg = malloc(sizeof(uint64_t) * 2 * (size_t)n);
  for (kd_gidx g = 0; g < n; g++) {
    kg[2 * g] = kd_rng_u64(seed, 0x6d656469616e6c73ULL, (uint64_t)g);
    kg[2 * g + 1] = (uint64_t)g;
  }
  qsort(kg, (size_t)n, 2 * sizeof(uint64_t), cmp_u64g);
  kd_lidx m = n < max_sample ? n : max_sample;
  size_t np = (size_t)m * (size_t)(m - 1) / 2, q = 0;
  double *dd = malloc(sizeof(double) * np);
  for (kd_lidx i = 0; i < m; i++)
    for (kd_lidx j = i + 1; j < m; j++) {
      const double *a = X + kg[2 * i + 1] * d, *b = X + kg[2 * j + 1] * d;
      double s = 0.0;
      for (int c = 0; c < d; c++) s = fma(a[c] - b[c], a[c] - b[c], s);
      dd[q++] = sqrt(s);
    }
  qsort(dd, np, sizeof(double), cmp_d);
  double med = np % 2 ? dd[np / 2] : 0.5 * (dd[np / 2 - 1] + dd[np / 2]);
  free(kg);
  free(dd);
  return med;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  const int d = 3;
  double mean[3] = {1, -1, 0.5}, sd[3] = {0.5, 2, 1};
  kd_measure mu = {0};
  mu.type = KD_MEASURE_GAUSSIAN;
  mu.d = d;
  mu.mean = mean;
  mu.sd = sd;

  /* ---- median heuristic ---- */
  const kd_gidx ns[4] = {1000, 37, 3, 2};
  const kd_lidx samp[4] = {300, 1000, 1000, 2};
  for (int t = 0; t < 4; t++) {
    kd_pointset *ps = NULL;
    KD_TEST_OK(kd_pointset_generate(c, &mu, ns[t], 17, &ps));
    double *X = malloc(sizeof(double) * (size_t)ns[t] * d);
    KD_TEST_OK(kd_pointset_allgather(ps, X));
    kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
    p.ls_median = 1;
    kd_kernel *k = NULL;
    KD_TEST_OK(kd_kernel_create(&p, d, &k));
    KD_TEST_OK(kd_kernel_set_median_ls(k, ps, 99, samp[t]));
    double ls = kd_kernel_get_params(k)->ls, ref = median_ref(X, ns[t], d, 99, samp[t]);
    KD_TEST(ls == ref, "median ls %.17g == serial reference %.17g (n %lld)", ls, ref,
            (long long)ns[t]);
    double lo = ls, hi = ls;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, c);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, c);
    KD_TEST(lo == hi, "median ls identical on all ranks");
    /* sanity: for N(0, diag sd^2) the median distance is near sqrt(2 sum sd^2) (~3.24 here) */
    if (t == 0) KD_TEST(ls > 2.5 && ls < 3.5, "median distance plausible: %g", ls);
    char want[64];
    snprintf(want, sizeof want, "gaussian(ls=%.17g)", ls);
    KD_TEST(strcmp(kd_kernel_describe(k), want) == 0, "description updated: %s",
            kd_kernel_describe(k));
    /* a different seed picks a different subsample */
    if (t == 0) {
      KD_TEST_OK(kd_kernel_set_median_ls(k, ps, 100, samp[t]));
      KD_TEST(kd_kernel_get_params(k)->ls != ls, "seed matters");
    }
    /* errors every rank sees */
    KD_TEST(kd_kernel_set_median_ls(k, ps, 99, 1) == KD_ERR_CONFIG &&
                strstr(kd_err_message(), "median_sample"),
            "max_sample 1 rejected: %s", kd_err_message());
    kd_err_clear();
    kd_kernel_destroy(&k);
    kd_pointset_destroy(&ps);
    free(X);
  }
  {
    /* deep: one median per block of columns, each the serial reference on those columns; a
     * numeric ls is kept while ls_phi takes the median */
    const kd_gidx n = 500;
    kd_pointset *ps = NULL;
    KD_TEST_OK(kd_pointset_generate(c, &mu, n, 23, &ps));
    double *X = malloc(sizeof(double) * (size_t)n * d), *X0 = malloc(sizeof(double) * (size_t)n);
    double *X12 = malloc(sizeof(double) * (size_t)n * 2);
    KD_TEST_OK(kd_pointset_allgather(ps, X));
    for (kd_gidx i = 0; i < n; i++) {
      X0[i] = X[i * d];
      X12[2 * i] = X[i * d + 1];
      X12[2 * i + 1] = X[i * d + 2];
    }
    kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_DEEP);
    p.dx = 1;
    p.ls_median = p.ls_phi_median = 1;
    kd_kernel *k = NULL;
    KD_TEST_OK(kd_kernel_create(&p, d, &k));
    KD_TEST_OK(kd_kernel_set_median_ls(k, ps, 5, 200));
    const double r0 = median_ref(X0, n, 1, 5, 200), r12 = median_ref(X12, n, 2, 5, 200);
    KD_TEST(kd_kernel_get_params(k)->ls == r0 && kd_kernel_get_params(k)->ls_phi == r12 &&
                !kd_kernel_median_pending(k),
            "deep: ls %.17g == %.17g (x block), ls_phi %.17g == %.17g (embedding block)",
            kd_kernel_get_params(k)->ls, r0, kd_kernel_get_params(k)->ls_phi, r12);
    KD_TEST(r0 != r12, "deep: the two blocks give different medians");
    kd_kernel_destroy(&k);
    p.ls_median = 0;
    p.ls = 0.7;
    KD_TEST_OK(kd_kernel_create(&p, d, &k));
    KD_TEST(kd_kernel_median_pending(k), "deep: ls_phi alone pending");
    KD_TEST_OK(kd_kernel_set_median_ls(k, ps, 5, 200));
    KD_TEST(kd_kernel_get_params(k)->ls == 0.7 && kd_kernel_get_params(k)->ls_phi == r12,
            "deep: numeric ls kept, ls_phi %.17g", kd_kernel_get_params(k)->ls_phi);
    kd_kernel_destroy(&k);
    kd_pointset_destroy(&ps);
    free(X);
    free(X0);
    free(X12);
  }
  {
    /* all points equal -> median 0 -> error on every rank, no hang */
    double rows[20 * 2];
    for (int i = 0; i < 40; i++) rows[i] = 1.5;
    kd_pointset *ps = NULL;
    KD_TEST_OK(kd_pointset_from_replicated(c, 20, 2, rows, NULL, &ps));
    kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_LAPLACE);
    p.ls_median = 1;
    kd_kernel *k = NULL;
    KD_TEST_OK(kd_kernel_create(&p, 2, &k));
    KD_TEST(kd_kernel_set_median_ls(k, ps, 1, 100) == KD_ERR_INPUT &&
                strstr(kd_err_message(), "kernel.ls"),
            "coincident points rejected: %s", kd_err_message());
    kd_err_clear();
    kd_kernel_destroy(&k);
    kd_pointset_destroy(&ps);
  }

  /* ---- row-split evaluation equals the serial result bitwise ---- */
  {
    const kd_gidx n = 611; /* not a multiple of the panel width or 8 */
    const int dims[3] = {2, 7, 40};
    for (int di = 0; di < 3; di++) {
      const int dd = dims[di];
      kd_measure box = {0};
      double lo[40], hi[40];
      for (int j = 0; j < dd; j++) lo[j] = -1.0, hi[j] = 1.0 + j;
      box.type = KD_MEASURE_UNIFORM_BOX;
      box.d = dd;
      box.lo = lo;
      box.hi = hi;
      kd_pointset *ps = NULL;
      KD_TEST_OK(kd_pointset_generate(c, &box, n, 5, &ps));
      double *X = malloc(sizeof(double) * (size_t)n * dd), *w = malloc(sizeof(double) * n);
      double *yall = malloc(sizeof(double) * n), *yloc = malloc(sizeof(double) * n);
      double *Kall = malloc(sizeof(double) * n * n), *Kloc = malloc(sizeof(double) * n * n);
      KD_TEST_OK(kd_pointset_allgather(ps, X));
      for (kd_gidx i = 0; i < n; i++) w[i] = kd_rng_normal(8, 0, (uint64_t)i);
      const kd_kernel_type types[3] = {KD_KERNEL_GAUSSIAN, KD_KERNEL_MATERN32, KD_KERNEL_IMQ};
      for (int ti = 0; ti < 3; ti++) {
        kd_kernel_params p = kd_kernel_params_default(types[ti]);
        p.ls = 0.7;
        kd_kernel *k = NULL;
        KD_TEST_OK(kd_kernel_create(&p, dd, &k));
        const kd_lidx nl = kd_pointset_n_local(ps);
        const kd_gidx off = kd_pointset_offset(ps);
        KD_TEST_OK(kd_kernel_matvec(k, X, n, X, n, w, 0.0, yall));
        KD_TEST_OK(kd_kernel_matvec(k, kd_pointset_rows_const(ps), nl, X, n, w, 0.0, yloc));
        KD_TEST(memcmp(yall + off, yloc, sizeof(double) * nl) == 0,
                "%s d=%d: row-split matvec bitwise equal", kd_kernel_name(types[ti]), dd);
        KD_TEST_OK(kd_kernel_eval_block(k, X, n, X, n, Kall, n));
        KD_TEST_OK(kd_kernel_eval_block(k, kd_pointset_rows_const(ps), nl, X, n, Kloc, n));
        KD_TEST(memcmp(Kall + off * n, Kloc, sizeof(double) * nl * n) == 0,
                "%s d=%d: row-split tile bitwise equal", kd_kernel_name(types[ti]), dd);
        kd_kernel_destroy(&k);
      }
      kd_pointset_destroy(&ps);
      free(X);
      free(w);
      free(yall);
      free(yloc);
      free(Kall);
      free(Kloc);
    }
  }
  return kd_test_finish();
}
