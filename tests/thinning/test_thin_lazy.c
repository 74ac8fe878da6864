/* test_thin_lazy.c - lazy (generated on demand) input for the thinning tree. A lazy point set
 * stores no rows; the thinning driver generates each leaf bin when it compresses it. Checked at
 * 1/2/4 ranks on n = 5000 rows of a 2-D mixture (64 leaf bins, bins straddling rank boundaries):
 * - kd_pointset_rows_at gives bitwise the rows kd_pointset_generate stores, at any offset;
 * - every thinning-tree algorithm (gs_thin left out: O(n^2) halving, the same driver path) returns
 *   (the Compress ones with g = 0 and 1 too, where a leaf bin of 4^3 rows is generated 4^(g+1)
 *   rows at a time and compressed from its children's outputs, kd_thin_compress_node_src)
 *   bitwise the same coreset, weights and MMD (against the closed-form mixture) on the lazy set
 *   as on the stored one, and the same on one rank;
 * - the reported MMD equals the closed-form formula zz - 2 w^T z + w^T K w computed here;
 * - kd_algo_accepts_lazy is 1 exactly for the thinning tree's algorithms, and a whole-set gather of
 *   a lazy set fails alike on every rank (no rank left in a collective). */
#include "thin_test_util.h"

static int same_result(const kd_result *a, const kd_result *b, int d) {
  return a->n == b->n && a->n > 0 && memcmp(a->indices, b->indices, sizeof(int64_t) * a->n) == 0 &&
         memcmp(a->points, b->points, sizeof(double) * a->n * d) == 0 &&
         memcmp(a->weights, b->weights, sizeof(double) * a->n) == 0 &&
         memcmp(&a->mmd, &b->mmd, sizeof a->mmd) == 0;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  const int d = 2;
  const kd_lidx n = 5000;
  kd_measure mu = thin_test_mixture(d);
  kd_pointset *ps = NULL, *lz = NULL, *lself = NULL;
  KD_TEST_OK(kd_pointset_generate(c, &mu, n, 99, &ps));
  KD_TEST_OK(kd_pointset_generate_lazy(c, &mu, n, 99, &lz));
  KD_TEST_OK(kd_pointset_generate_lazy(MPI_COMM_SELF, &mu, n, 99, &lself));
  KD_TEST(kd_pointset_is_lazy(lz) && !kd_pointset_is_lazy(ps), "lazy flag");
  KD_TEST(kd_pointset_rows_const(lz) == NULL && kd_pointset_n_local(lz) == kd_pointset_n_local(ps),
          "a lazy set stores no rows but keeps the block layout");
  double *X = malloc(sizeof(double) * n * d), *Y = malloc(sizeof(double) * n * d);
  KD_TEST_OK(kd_pointset_allgather(ps, X));
  KD_TEST_OK(kd_pointset_rows_at(lz, 0, n, Y));
  KD_TEST(memcmp(X, Y, sizeof(double) * n * d) == 0, "generated rows = stored rows, bitwise");
  KD_TEST_OK(kd_pointset_rows_at(lz, 4321, 7, Y));
  KD_TEST(memcmp(X + 4321 * d, Y, sizeof(double) * 7 * d) == 0, "rows at an offset");
  /* a gather of the whole lazy set is refused on every rank alike */
  KD_TEST(kd_pointset_allgather(lz, Y) == KD_ERR_CONFIG, "allgather of a lazy set refused");
  kd_err_clear();

  kd_kernel *k = thin_test_gauss(d);
  kd_target *t = NULL, *tself = NULL;
  KD_TEST_OK(kd_target_create_closed(c, k, &mu, &t));
  KD_TEST_OK(kd_target_create_closed(MPI_COMM_SELF, k, &mu, &tself));
  const char *const kv100[] = {"n_out=100", NULL};
  const char *const kv100g2[] = {"n_out=100", "g=2", NULL};
  const char *const kv100g1[] = {"n_out=100", "g=1", NULL};
  const char *const kv50g0[] = {"n_out=50", "g=0", NULL};
  const char *const kvkh[] = {"refine=true", NULL};
  const char *const kvrw[] = {"n_out=100", "g=2", "reweight=convex", NULL};
  const struct {
    const char *name;
    const char *const *kv;
  } cases[] = {{"rkh", kv100},         {"kh_compress", kv100g2}, {"kt_compress", kv100g2},
               {"kh_refine", kv100},   {"lkh", kv100},           {"kh", kvkh},
               {"kt_compress", kvrw},  {"gs_compress", kv100g2}, {"kt_compress", kv100g1},
               {"kh_compress", kv50g0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    kd_result rs = KD_RESULT_INIT, rl = KD_RESULT_INIT, r1 = KD_RESULT_INIT;
    KD_TEST_OK(thin_test_run(c, cases[i].name, ps, k, t, 77, cases[i].kv, &rs));
    KD_TEST_OK(thin_test_run(c, cases[i].name, lz, k, t, 77, cases[i].kv, &rl));
    KD_TEST(same_result(&rs, &rl, d), "%s: lazy = stored input (coreset, weights, MMD), bitwise",
            cases[i].name);
    if (kd_test_rank() == 0) {
      KD_TEST_OK(
          thin_test_run(MPI_COMM_SELF, cases[i].name, lself, k, tself, 77, cases[i].kv, &r1));
      KD_TEST(same_result(&rl, &r1, d), "%s: lazy at %d ranks = lazy on one rank", cases[i].name,
              kd_test_size());
      /* the MMD to the mixture from its closed form, computed here */
      double zz = 0.0, wz = 0.0, wkw = 0.0, *z = malloc(sizeof(double) * rl.n),
             *y = malloc(sizeof(double) * rl.n);
      int avail = 0;
      KD_TEST_OK(kd_target_self(tself, &zz, &avail));
      KD_TEST_OK(kd_target_embed_rows(tself, rl.points, rl.n, z));
      KD_TEST_OK(kd_kernel_matvec(k, rl.points, rl.n, rl.points, rl.n, rl.weights, 0.0, y));
      for (kd_lidx a = 0; a < rl.n; a++) {
        wz += rl.weights[a] * z[a];
        wkw += rl.weights[a] * y[a];
      }
      free(y);
      const double m2 = zz - 2.0 * wz + wkw;
      const double want = sqrt(m2 > 0 ? m2 : 0);
      KD_TEST(fabs(rl.mmd - want) <= 1e-6 * want, "%s: MMD %.9e to the mixture (closed form %.9e)",
              cases[i].name, rl.mmd, want);
      free(z);
    }
    kd_result_free(&rs);
    kd_result_free(&rl);
    kd_result_free(&r1);
  }
  int nlazy = 0;
  for (int i = 0; kd_algo_at(i); i++) {
    const kd_algo_desc *a = kd_algo_at(i);
    const int tree = !strcmp(a->task, "thin") && strncmp(a->name, "stein", 5) &&
                     strcmp(a->name, "rpcholesky") && strcmp(a->name, "uniform") &&
                     strcmp(a->name, "skt") && strcmp(a->name, "sr") && strcmp(a->name, "sc") &&
                     strcmp(a->name, "lskt") && strcmp(a->name, "lsr") && strcmp(a->name, "lsc");
    nlazy += kd_algo_accepts_lazy(a);
    KD_TEST(kd_algo_accepts_lazy(a) == tree, "kd_algo_accepts_lazy(%s/%s) = %d", a->task, a->name,
            tree);
  }
  KD_TEST(nlazy == 8, "eight thinning-tree algorithms accept lazy input (%d)", nlazy);
  kd_target_destroy(&t);
  kd_target_destroy(&tself);
  kd_kernel_destroy(&k);
  kd_pointset_destroy(&ps);
  kd_pointset_destroy(&lz);
  kd_pointset_destroy(&lself);
  kd_measure_free(&mu);
  free(X);
  free(Y);
  return kd_test_finish();
}
