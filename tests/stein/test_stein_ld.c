/* test_stein_ld.c - the low-rank debiasing of Li et al. 2024 (low_rank_debias.c) and its
 * fixed-point sums, at 1, 2 and 4 ranks:
 *   1. kd_dist_dot_fixed: signed column sums over rows split between ranks equal the one-rank sum
 *      bit for bit and a long-double reference to 1e-15 of the sum of |terms|;
 *   2. exactness: with rank = n the model is K itself; 2000 mirror-descent steps reach the exact
 *      simplex QP optimum (active-set solver on the full 400 x 400 Stein matrix) to 2%, the
 *      reported model objective is the exact 1/2 w^T K w to 1e-8, the weights are >= 0 and sum to
 *      1 to 1e-12;
 *   3. low rank (the defaults: rank ceil(2 sqrt n) = 128, 3 rounds, 200 steps) on 4096 draws of the
 *      shifted N((0.5, 0.5), I_2) with the scores of N(0, I_2): the exact KSD of the weights is
 *      within 1.2x of the full-rank pairwise Frank-Wolfe weights' (2000 steps) and at least 20x
 *      below uniform weights', and below one round's;
 *   4. the weights are bitwise those of the MPI_COMM_SELF run. */
#include <stdlib.h>
#include <string.h>

#include "algo/stein/stein_impl.h"
#include "comm/dist_impl.h"
#include "kd_test.h"
#include "la/la_impl.h"

static double *chain_rows(kd_gidx n, double shift, uint64_t seed) {
  double *R = malloc(sizeof(double) * (size_t)n * 4);
  for (kd_gidx i = 0; i < n; i++)
    for (int j = 0; j < 2; j++) {
      const double x = shift + kd_rng_normal(seed, 1, (uint64_t)(i * 2 + j));
      R[i * 4 + j] = x;
      R[i * 4 + 2 + j] = -x;
    }
  return R;
}

static kd_kernel *stein_kernel(void) {
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_STEIN);
  p.base = KD_KERNEL_IMQ;
  p.ls = 1.0;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, 4, &k));
  return k;
}

static void fixed_sums(void) {
  const int64_t n = 1000;
  const int m = 3, p = kd_test_size(), r = kd_test_rank();
  double *V = malloc(sizeof(double) * n * m), *x = malloc(sizeof(double) * n);
  for (int64_t i = 0; i < n; i++) {
    x[i] = kd_rng_uniform(5, 2, (uint64_t)i);
    for (int j = 0; j < m; j++)
      V[j * n + i] = kd_rng_normal(5, 3, (uint64_t)(j * n + i)) * pow(10.0, (double)(i % 7) - 3);
  }
  const int64_t a = n * r / p, b = n * (r + 1) / p;
  double *Vl = malloc(sizeof(double) * (size_t)(b - a + 1) * m), out[3], one[3];
  for (int j = 0; j < m; j++) memcpy(Vl + j * (b - a), V + j * n + a, sizeof(double) * (b - a));
  KD_TEST_OK(kd_dist_dot_fixed(MPI_COMM_WORLD, m, b - a, Vl, x + a, n, NULL, out));
  KD_TEST_OK(kd_dist_dot_fixed(MPI_COMM_SELF, m, n, V, x, n, NULL, one));
  for (int j = 0; j < m; j++) {
    long double s = 0, sa = 0;
    for (int64_t i = 0; i < n; i++) {
      s += (long double)V[j * n + i] * x[i];
      sa += fabsl((long double)V[j * n + i] * x[i]);
    }
    KD_TEST(out[j] == one[j], "column %d: %d ranks == one rank bit for bit (%.17g, %.17g)", j, p,
            out[j], one[j]);
    KD_TEST(fabs(out[j] - (double)s) <= 1e-15 * (double)sa, "column %d: %.17g vs %.17Lg", j, out[j],
            s);
  }
  free(V), free(x), free(Vl);
}

/* the local weights of kd_stein_ld on WORLD, gathered; the SELF run's on rank 0 compared */
static double *ld_weights(const double *R, kd_gidx n, kd_stein_ld_opts o, double *obj) {
  kd_kernel *k = stein_kernel();
  kd_pointset *ps = NULL, *p1 = NULL;
  kd_target *t = NULL, *t1 = NULL;
  KD_TEST_OK(kd_pointset_from_replicated(MPI_COMM_WORLD, n, 4, R, NULL, &ps));
  KD_TEST_OK(kd_target_create_stein(MPI_COMM_WORLD, k, &t));
  const kd_lidx nl = kd_pointset_n_local(ps);
  double *wl = calloc((size_t)nl + 1, sizeof(double)), *w = malloc(sizeof(double) * n);
  kd_algo_in in = {0};
  in.comm = MPI_COMM_WORLD, in.kernel = k, in.points = ps, in.target = t, in.seed = 11;
  KD_TEST_OK(kd_stein_ld(&in, &o, wl, obj));
  KD_TEST_OK(kd_dist_allgatherv(MPI_COMM_WORLD, wl, nl, w));
  if (kd_test_rank() == 0) {
    double *w1 = malloc(sizeof(double) * n), o1 = NAN;
    KD_TEST_OK(kd_pointset_from_replicated(MPI_COMM_SELF, n, 4, R, NULL, &p1));
    KD_TEST_OK(kd_target_create_stein(MPI_COMM_SELF, k, &t1));
    kd_algo_in i1 = in;
    i1.comm = MPI_COMM_SELF, i1.points = p1, i1.target = t1;
    KD_TEST_OK(kd_stein_ld(&i1, &o, w1, &o1));
    KD_TEST(!memcmp(w, w1, sizeof(double) * n) && o1 == *obj,
            "n %lld rank %lld: weights on %d ranks == MPI_COMM_SELF bit for bit", (long long)n,
            (long long)o.rank, kd_test_size());
    free(w1);
  }
  kd_target_destroy(&t), kd_target_destroy(&t1);
  kd_pointset_destroy(&ps), kd_pointset_destroy(&p1);
  kd_kernel_destroy(&k);
  free(wl);
  return w;
}

/* f[v] = 1/2 w_v^T K w_v over all rows for nv weight vectors W[v] (replicated, every rank) */
static void half_quads(const double *R, kd_gidx n, int nv, double *const *W, double *f) {
  kd_kernel *k = stein_kernel();
  double *col = malloc(sizeof(double) * n);
  long double s[4] = {0, 0, 0, 0};
  for (kd_gidx j = 0; j < n; j++) {
    KD_TEST_OK(kd_kernel_eval_block(k, R, n, R + 4 * j, 1, col, 1));
    for (int v = 0; v < nv; v++) {
      long double c = 0;
      for (kd_gidx i = 0; i < n; i++) c += (long double)W[v][i] * col[i];
      s[v] += c * W[v][j];
    }
  }
  for (int v = 0; v < nv; v++) f[v] = 0.5 * (double)s[v];
  free(col);
  kd_kernel_destroy(&k);
}

static void exact_model(void) {
  const kd_gidx n = 400;
  double *R = chain_rows(n, 0.5, 31), obj = NAN;
  kd_stein_ld_opts o = {n, 1, 2000};
  double *w = ld_weights(R, n, o, &obj);
  double sum = 0, wmin = 1;
  for (kd_gidx i = 0; i < n; i++) sum += w[i], wmin = fmin(wmin, w[i]);
  KD_TEST(fabs(sum - 1) <= 1e-12 && wmin >= 0, "weights sum to 1 (%.17g), min %g", sum, wmin);
  kd_kernel *k = stein_kernel();
  double *K = malloc(sizeof(double) * n * n), *z = calloc(n, sizeof(double)),
         *wq = malloc(sizeof(double) * n);
  KD_TEST_OK(kd_kernel_eval_block(k, R, n, R, n, K, n));
  KD_TEST_OK(kd_simplex_qp((int)n, K, z, 1e-13, 100000, wq));
  double *W[2] = {w, wq}, fv[2];
  half_quads(R, n, 2, W, fv);
  const double f = fv[0], fq = fv[1];
  if (kd_test_rank() == 0)
    printf("rank n: LD objective %.6e (model %.6e), exact QP %.6e\n", f, obj, fq);
  KD_TEST_REL(obj, f, 1e-8, "the model objective is the exact objective when rank = n");
  KD_TEST(f <= 1.02 * fq && f >= fq * (1 - 1e-9), "LD %.6e within 2%% of the QP optimum %.6e", f,
          fq);
  kd_kernel_destroy(&k);
  free(K), free(z), free(wq), free(w), free(R);
}

static void low_rank(void) {
  const kd_gidx n = 4096;
  double *R = chain_rows(n, 0.5, 2024), obj = NAN, obj1 = NAN;
  kd_stein_ld_opts o = {0, 3, 200}, o1 = {0, 1, 200};
  double *w = ld_weights(R, n, o, &obj), *w1 = ld_weights(R, n, o1, &obj1);
  /* the full-rank pairwise Frank-Wolfe weights of skt / sr */
  kd_kernel *k = stein_kernel();
  kd_pointset *ps = NULL;
  kd_target *t = NULL;
  KD_TEST_OK(kd_pointset_from_replicated(MPI_COMM_WORLD, n, 4, R, NULL, &ps));
  KD_TEST_OK(kd_target_create_stein(MPI_COMM_WORLD, k, &t));
  const kd_lidx nl = kd_pointset_n_local(ps);
  double *wl = calloc((size_t)nl + 1, sizeof(double)), *wp = malloc(sizeof(double) * n),
         *wu = malloc(sizeof(double) * n);
  kd_algo_in in = {0};
  in.comm = MPI_COMM_WORLD, in.kernel = k, in.points = ps, in.target = t, in.seed = 11;
  int64_t steps = 0;
  KD_TEST_OK(kd_stein_pfw(&in, 2000, wl, &steps));
  KD_TEST_OK(kd_dist_allgatherv(MPI_COMM_WORLD, wl, nl, wp));
  for (kd_gidx i = 0; i < n; i++) wu[i] = 1.0 / (double)n;
  double *W[4] = {w, w1, wp, wu}, f[4];
  half_quads(R, n, 4, W, f);
  const double ksd = sqrt(2 * f[0]), ksd1 = sqrt(2 * f[1]), ksdp = sqrt(2 * f[2]),
               ksdu = sqrt(2 * f[3]);
  if (kd_test_rank() == 0)
    printf("n 4096 KSD: LD 3 rounds %.4e, 1 round %.4e, pairwise FW %.4e, uniform %.4e\n", ksd,
           ksd1, ksdp, ksdu);
  KD_TEST(ksd <= 1.2 * ksdp, "low-rank KSD %.4e within 1.2x of pairwise FW %.4e", ksd, ksdp);
  KD_TEST(20 * ksd <= ksdu, "low-rank KSD %.4e at least 20x below uniform %.4e", ksd, ksdu);
  KD_TEST(ksd < ksd1, "3 rounds %.4e below 1 round %.4e", ksd, ksd1);
  kd_target_destroy(&t);
  kd_pointset_destroy(&ps);
  kd_kernel_destroy(&k);
  free(wl), free(wp), free(wu), free(w), free(w1), free(R);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  fixed_sums();
  exact_model();
  low_rank();
  return kd_test_finish();
}
