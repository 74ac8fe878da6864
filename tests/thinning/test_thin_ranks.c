/* test_thin_ranks.c - rank-count independence and the non-power-of-4 rule. Every algorithm runs on
 * the distributed set (MPI_COMM_WORLD, 1/2/4 ranks) and on a serial copy (MPI_COMM_SELF); the
 * coresets must be identical. n_in = 5000 (K = 6, F = 1, 904 remainder rows halved inside the 64
 * leaf bins) and n_out = 100 (not a power of 2: the root halves 4096 -> 128 then maps 128 -> 100
 * by the remainder rule). */
#include "thin_test_util.h"

static int same_on_self(const char *name, const double *X, kd_lidx n, int d, kd_pointset *ps,
                        kd_kernel *k, kd_target *t, const char *const *kv, kd_result *rd) {
  kd_result rs = KD_RESULT_INIT;
  kd_pointset *pself = NULL;
  kd_target *tself = NULL;
  int ok = 0;
  KD_TEST_OK(thin_test_run(MPI_COMM_WORLD, name, ps, k, t, 77, kv, rd));
  if (kd_test_rank() != 0) return 1; /* the serial reference runs on rank 0 only */
  KD_TEST_OK(kd_pointset_from_replicated(MPI_COMM_SELF, n, d, X, NULL, &pself));
  KD_TEST_OK(kd_target_create_empirical(k, pself, 0, &tself));
  KD_TEST_OK(thin_test_run(MPI_COMM_SELF, name, pself, k, tself, 77, kv, &rs));
  ok = rd->n == rs.n && rd->n > 0 &&
       memcmp(rd->indices, rs.indices, sizeof(int64_t) * rd->n) == 0 &&
       memcmp(rd->points, rs.points, sizeof(double) * rd->n * d) == 0;
  KD_TEST(ok, "%s: same coreset at %d ranks as on one rank", name, kd_test_size());
  KD_TEST_REL(rd->mmd, rs.mmd, 1e-9, "MMD independent of the rank count");
  kd_result_free(&rs);
  kd_target_destroy(&tself);
  kd_pointset_destroy(&pself);
  return ok;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  const int d = 2;
  const kd_lidx n = 5000;
  kd_measure mu = thin_test_mixture(d);
  kd_pointset *ps = NULL;
  KD_TEST_OK(kd_pointset_generate(c, &mu, n, 99, &ps));
  double *X = malloc(sizeof(double) * n * d);
  KD_TEST_OK(kd_pointset_allgather(ps, X));
  kd_kernel *k = thin_test_gauss(d);
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_empirical(k, ps, 0, &t));
  double xx = thin_test_self(k, X, n, d);
  double unif = thin_test_uniform_mmd(k, X, n, d, xx, 100, 10);
  kd_result r = KD_RESULT_INIT;

  const char *const kv100[] = {"n_out=100", NULL};
  const char *const kv100g2[] = {"n_out=100", "g=2", NULL};
  const char *const kvkh[] = {"refine=true", NULL};
  const char *const kvrw[] = {"n_out=100", "g=2", "reweight=convex", NULL};
  const char *const kva[] = {"n_out=100", "threshold=adaptive", NULL};
  const char *const kvag2[] = {"n_out=100", "g=2", "threshold=adaptive", NULL};
  struct {
    const char *name;
    const char *const *kv;
    kd_lidx n_out;
    double factor; /* MMD <= factor * mean uniform (n_out = 100) */
  } cases[] = {
      {"rkh", kv100, 100, 0.9},           {"kh_compress", kv100g2, 100, 0.9},
      {"kt_compress", kv100g2, 100, 0.2}, {"kh_refine", kv100, 100, 0.2},
      {"lkh", kv100, 100, 1.5},           {"kh", kvkh, 2500, 1.0},
      {"kt_compress", kvrw, 100, 0.2},    {"rkh", kva, 100, 0.9},
      {"kh_compress", kvag2, 100, 0.9},   {"kt_compress", kvag2, 100, 0.2},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    same_on_self(cases[i].name, X, n, d, ps, k, t, cases[i].kv, &r);
    KD_TEST(r.n == cases[i].n_out, "%s: n_out %lld", cases[i].name, (long long)r.n);
    KD_TEST(thin_test_distinct(r.indices, r.n, n), "%s: distinct rows", cases[i].name);
    double mine = thin_test_mmd_idx(k, X, n, d, xx, r.indices, r.weights, r.n);
    KD_TEST_REL(r.mmd, mine, 1e-6, "reported MMD against all 5000 rows");
    if (cases[i].n_out == 100)
      KD_TEST(r.mmd <= cases[i].factor * unif, "%s: MMD %.3e vs uniform %.3e", cases[i].name, r.mmd,
              unif);
    kd_lidx late = 0;
    for (kd_lidx j = 0; j < r.n; j++) late += r.indices[j] >= 4096;
    KD_TEST(late > 0, "%s: rows past the largest power of 4 are represented (%lld)", cases[i].name,
            (long long)late);
    double mu_w = 0;
    if (kd_result_get_metric(&r, "mmd_uniform_weights", &mu_w)) {
      KD_TEST(r.mmd <= mu_w * (1 + 1e-9), "reweight: convex MMD %.4e <= uniform-weight MMD %.4e",
              r.mmd, mu_w);
      double s = 0;
      int nonneg = 1;
      for (kd_lidx j = 0; j < r.n; j++) {
        s += r.weights[j];
        nonneg &= r.weights[j] >= 0;
      }
      KD_TEST(nonneg && fabs(s - 1) < 1e-12, "reweight: simplex weights");
    }
    /* Remark 3 against the refine's own target (P_in or Compress): every refining case reports
     * both values (kh_refine, kt_compress, kh with refine=true) */
    double b2 = 0, a2 = 0;
    const int refines = !strcmp(cases[i].name, "kh_refine") ||
                        !strcmp(cases[i].name, "kt_compress") || cases[i].kv == kvkh;
    const int has = kd_result_get_metric(&r, "refine_mmd2_before_minus_self", &b2) &&
                    kd_result_get_metric(&r, "refine_mmd2_after_minus_self", &a2);
    KD_TEST(has == refines, "%s: refine metrics %s", cases[i].name,
            refines ? "reported" : "absent without refine");
    if (has)
      KD_TEST(a2 <= b2 + 1e-12 * fabs(b2), "%s: refine never increases MMD to its target",
              cases[i].name);
    if (kd_test_rank() == 0)
      printf("%-12s n_out %4lld  MMD %.4e  (%.3f x uniform-100)\n", cases[i].name, (long long)r.n,
             r.mmd, r.mmd / unif);
  }

  /* GS-Thin / GS-Compress (cubic): n_in = 300 (K = 4, F = 1, 44 remainder rows) -> 32 */
  kd_pointset *ps3 = NULL;
  kd_target *t3 = NULL;
  KD_TEST_OK(kd_pointset_generate(c, &mu, 300, 5, &ps3));
  double *X3 = malloc(sizeof(double) * 300 * d);
  KD_TEST_OK(kd_pointset_allgather(ps3, X3));
  KD_TEST_OK(kd_target_create_empirical(k, ps3, 0, &t3));
  double xx3 = thin_test_self(k, X3, 300, d);
  double unif3 = thin_test_uniform_mmd(k, X3, 300, d, xx3, 32, 10);
  const char *const kv32[] = {"n_out=32", NULL};
  const char *const kv32g[] = {"n_out=32", "g=1", NULL};
  same_on_self("gs_thin", X3, 300, d, ps3, k, t3, kv32, &r);
  KD_TEST(r.n == 32 && thin_test_distinct(r.indices, r.n, 300), "gs_thin size/distinct");
  KD_TEST(r.mmd <= 0.5 * unif3, "gs_thin MMD %.3e <= uniform/2 %.3e", r.mmd, unif3);
  same_on_self("gs_compress", X3, 300, d, ps3, k, t3, kv32g, &r);
  KD_TEST(r.n == 32 && thin_test_distinct(r.indices, r.n, 300), "gs_compress size/distinct");
  KD_TEST(r.mmd <= 0.7 * unif3, "gs_compress MMD %.3e <= 0.7 uniform %.3e", r.mmd, unif3);

  kd_result_free(&r);
  kd_target_destroy(&t3);
  kd_pointset_destroy(&ps3);
  kd_target_destroy(&t);
  kd_pointset_destroy(&ps);
  kd_kernel_destroy(&k);
  kd_measure_free(&mu);
  free(X);
  free(X3);
  return kd_test_finish();
}
