/* test_recombination.c - Caratheodory recombination (Hayakawa, Oberhauser & Lyons, Remark 1 and
 * Alg. 1 steps 2-4): every test-function mean preserved to 1e-10 relative, weights >= 0 summing to
 * the input total, support a subset of the input of size <= m+1 (<= m after the k1,diag step), and
 * the distributed tree gives the same rule as the serial tree (COMM_SELF) at any rank count. */
#include <stdlib.h>
#include <string.h>

#include "algo/quadrature/recombination.h"
#include "kd_test.h"

/* test functions of point g: smooth functions of two seeded coordinates */
static void feat(uint64_t seed, int64_t g, int m, double *f) {
  double a = kd_rng_uniform(seed, 1, (uint64_t)g), b = kd_rng_normal(seed, 2, (uint64_t)g);
  for (int j = 0; j < m; j++) f[j] = cos((j + 1) * a + 0.3 * j * b) + (j % 3 == 0 ? b * b : 0);
}

static double wt(uint64_t seed, int64_t g) { return 0.1 + kd_rng_uniform(seed, 3, (uint64_t)g); }

/* check out against the full input (N points, weights from wt, features from feat) */
static void check_rule(const char *what, uint64_t seed, int64_t N, int m, int mcheck,
                       const kd_recomb_set *out, int64_t max_size) {
  double *mean_in = calloc((size_t)m + 1, sizeof(double));
  double *mean_out = calloc((size_t)m + 1, sizeof(double));
  double *f = malloc(sizeof(double) * m);
  for (int64_t g = 0; g < N; g++) {
    double w = wt(seed, g);
    feat(seed, g, m, f);
    mean_in[m] += w;
    for (int j = 0; j < m; j++) mean_in[j] += w * f[j];
  }
  int nonneg = 1, subset = 1, sorted = 1;
  for (int64_t i = 0; i < out->n; i++) {
    nonneg &= out->w[i] >= 0;
    subset &= out->gid[i] >= 0 && out->gid[i] < N;
    if (i) sorted &= out->gid[i] > out->gid[i - 1];
    feat(seed, out->gid[i], m, f);
    /* the carried test-function values are those of the input point */
    for (int j = 0; j < m; j++) subset &= f[j] == out->F[i * m + j];
    mean_out[m] += out->w[i];
    for (int j = 0; j < m; j++) mean_out[j] += out->w[i] * f[j];
  }
  KD_TEST(out->n <= max_size, "%s: size %lld <= %lld", what, (long long)out->n,
          (long long)max_size);
  KD_TEST(nonneg, "%s: weights >= 0", what);
  KD_TEST(subset && sorted, "%s: support is a subset of the input (distinct points)", what);
  KD_TEST_REL(mean_out[m], mean_in[m], 1e-12, "total weight");
  double worst = 0;
  for (int j = 0; j < mcheck; j++)
    worst = fmax(worst, fabs(mean_out[j] - mean_in[j]) / fmax(fabs(mean_in[j]), 1e-300));
  KD_TEST(worst <= 1e-10, "%s: worst relative mean error %.3g <= 1e-10", what, worst);
  free(mean_in);
  free(mean_out);
  free(f);
}

static void fill_leaf(uint64_t seed, int64_t a, int64_t b, int m, kd_recomb_set *s) {
  KD_TEST_OK(kd_recomb_set_alloc(s, b - a, m));
  s->n = b - a;
  for (int64_t g = a; g < b; g++) {
    s->gid[g - a] = g;
    s->w[g - a] = wt(seed, g);
    feat(seed, g, m, s->F + (g - a) * m);
  }
}

/* the tree over n_leaves leaves of N points on comm */
static void run_tree(MPI_Comm comm, uint64_t seed, int64_t N, int m, int64_t n_leaves,
                     kd_recomb_set *out) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int64_t lo, hi;
  kd_recomb_leaf_range(n_leaves, rank, size, &lo, &hi);
  kd_recomb_set *leaves = calloc((size_t)(hi - lo + 1), sizeof *leaves);
  for (int64_t j = lo; j < hi; j++)
    fill_leaf(seed, N * j / n_leaves, N * (j + 1) / n_leaves, m, &leaves[j - lo]);
  KD_TEST_OK(kd_recomb_tree(comm, m, n_leaves, leaves, out));
  for (int64_t j = lo; j < hi; j++) kd_recomb_set_free(&leaves[j - lo]);
  free(leaves);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const uint64_t seed = 2024;

  /* 1. local reduce: N = 5000 points, m = 30 test functions -> <= 31 points */
  {
    kd_recomb_set s;
    fill_leaf(seed, 0, 5000, 30, &s);
    KD_TEST_OK(kd_recomb_reduce(&s));
    check_rule("local N=5000 m=30", seed, 5000, 30, 30, &s, 31);
    KD_TEST(s.n == 31, "generic position: exactly m+1 = 31 points (got %lld)", (long long)s.n);
    /* Alg. 1 steps 2-4: last test function plays k1,diag */
    double k1_before = 0, k1_after = 0;
    for (int64_t i = 0; i < s.n; i++) k1_before += s.w[i] * s.F[i * 30 + 29];
    KD_TEST_OK(kd_recomb_drop_one(&s));
    for (int64_t i = 0; i < s.n; i++) k1_after += s.w[i] * s.F[i * 30 + 29];
    check_rule("after drop_one", seed, 5000, 30, 29, &s, 30);
    KD_TEST(k1_after <= k1_before + 1e-12 * fabs(k1_before),
            "drop_one does not increase the k1,diag mean (%.17g -> %.17g)", k1_before, k1_after);
    kd_recomb_set_free(&s);
  }
  /* 2. linearly dependent test functions (column 5 = 2 * column 1, column 7 = 1): fewer points */
  {
    kd_recomb_set s;
    fill_leaf(seed, 0, 3000, 12, &s);
    for (int64_t i = 0; i < s.n; i++) {
      s.F[i * 12 + 5] = 2 * s.F[i * 12 + 1];
      s.F[i * 12 + 7] = 1.0;
    }
    double tw = 0, t3 = 0;
    for (int64_t i = 0; i < s.n; i++) {
      tw += s.w[i];
      t3 += s.w[i] * s.F[i * 12 + 3];
    }
    KD_TEST_OK(kd_recomb_reduce(&s));
    KD_TEST(s.n <= 11, "rank-deficient test functions: <= rank + 1 = 11 points (got %lld)",
            (long long)s.n);
    double ow = 0, o3 = 0;
    for (int64_t i = 0; i < s.n; i++) {
      ow += s.w[i];
      o3 += s.w[i] * s.F[i * 12 + 3];
    }
    KD_TEST_REL(ow, tw, 1e-12, "rank-deficient: total weight");
    KD_TEST_REL(o3, t3, 1e-10, "rank-deficient: mean of phi_3");
    kd_recomb_set_free(&s);
  }
  /* 3. fewer points than m+1: unchanged; zero weights dropped */
  {
    kd_recomb_set s;
    fill_leaf(seed, 0, 8, 20, &s);
    s.w[3] = 0;
    KD_TEST_OK(kd_recomb_reduce(&s));
    KD_TEST(s.n == 7 && s.gid[3] == 4, "small input kept, zero weight dropped");
    kd_recomb_set_free(&s);
  }
  /* 4. non-finite test function -> KD_ERR_NUMERIC naming the point */
  {
    kd_recomb_set s;
    fill_leaf(seed, 0, 100, 5, &s);
    s.F[42 * 5 + 2] = NAN;
    KD_TEST(kd_recomb_reduce(&s) == KD_ERR_NUMERIC && strstr(kd_err_message(), "42"),
            "NaN rejected: %s", kd_err_message());
    kd_err_clear();
    kd_recomb_set_free(&s);
  }
  /* 5. distributed tree vs the same tree on COMM_SELF: identical rule at any rank count */
  {
    const int64_t N = 20000;
    const int m = 24;
    for (int64_t nl = 1; nl <= 7; nl += 3) {
      kd_recomb_set dist = {0}, ser = {0};
      run_tree(MPI_COMM_WORLD, seed, N, m, nl, &dist);
      run_tree(MPI_COMM_SELF, seed, N, m, nl, &ser);
      char what[64];
      snprintf(what, sizeof what, "tree with %lld leaves", (long long)nl);
      check_rule(what, seed, N, m, m, &dist, m + 1);
      int same = dist.n == ser.n;
      double dw = 0;
      for (int64_t i = 0; same && i < dist.n; i++) {
        same &= dist.gid[i] == ser.gid[i];
        dw = fmax(dw, fabs(dist.w[i] - ser.w[i]));
      }
      KD_TEST(same && dw <= 1e-14, "%s: same support and weights (max dw %.3g) as 1 rank", what,
              dw);
      kd_recomb_set_free(&dist);
      kd_recomb_set_free(&ser);
    }
  }
  return kd_test_finish();
}
