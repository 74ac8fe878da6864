/* test_apps.c - Thinformer (Alg. 1) and thinned reordering (Alg. 2) through their C APIs.
 * Thinformer: seeded random Q, K, V (n = 1024 keys, 256 queries, dk = 8, dv = 4);
 * ||T_hat - T||_max shrinks as n_out grows (64 -> 256; g = 1, 3) and beats uniform key
 * subsampling at equal n_out (mean over 3 seeds), with the tight KH threshold (the attention
 * task's default; see docs/thinning.md). Reordering: fixed seeded gradients (n = 4096,
 * d = 10), 5 successive LKH(1/(2K)) reorderings (K = 5), each fed back; the prefix discrepancy
 * max_j ||sum_{i<=j} (x_pi(i) - mean)|| must be >= 2.5x below its median over 21 random
 * permutations. At 1, 2, 4 ranks every call is repeated on rank 0 over MPI_COMM_SELF (the
 * in-process one-rank reference, same seeded inputs): the selected rows, T_hat, the exact
 * attention, ||T_hat - T||_max and every reordering permutation must be identical bit for bit. */
#include <stdlib.h>
#include <string.h>

#include "algo/apps/apps_impl.h"
#include "kd_test.h"

/* Thinformer on the job's communicator (Q, K, V) and, on rank 0, on MPI_COMM_SELF (Q1, K1, V1, the
 * same rows): same selection, T_hat, exact attention and error, bit for bit. *e gets the error. */
static void thinformer_vs_self(MPI_Comm c, kd_pointset *const w[3], kd_pointset *const s1[3],
                               kd_attn_method method, kd_gidx n_out, int g, uint64_t seed, int nq,
                               int dv, double *e, kd_gidx *ns) {
  double *Th = malloc(sizeof(double) * nq * dv), *Te = malloc(sizeof(double) * nq * dv);
  double *Th1 = malloc(sizeof(double) * nq * dv), *Te1 = malloc(sizeof(double) * nq * dv);
  int64_t *sel = NULL, *sel1 = NULL;
  kd_gidx ns1 = 0;
  double e1 = NAN;
  *e = NAN;
  KD_TEST_OK(kd_thinformer(c, w[0], w[1], w[2], method, n_out, g, 0.5, 1, seed, Th, &sel, ns, Te, e,
                           NULL));
  if (kd_test_rank() == 0) {
    KD_TEST_OK(kd_thinformer(MPI_COMM_SELF, s1[0], s1[1], s1[2], method, n_out, g, 0.5, 1, seed,
                             Th1, &sel1, &ns1, Te1, &e1, NULL));
    KD_TEST(*ns == ns1 && sel && sel1 && !memcmp(sel, sel1, sizeof(int64_t) * (size_t)ns1),
            "thinformer (method %d, n_out %lld, seed %llu): same rows at %d ranks as on one",
            (int)method, (long long)n_out, (unsigned long long)seed, kd_test_size());
    KD_TEST(
        !memcmp(Th, Th1, sizeof(double) * nq * dv) && !memcmp(Te, Te1, sizeof(double) * nq * dv),
        "thinformer: same T_hat and exact attention bits at %d ranks as on one", kd_test_size());
    KD_TEST(*e == e1, "thinformer: same max error %.17g vs %.17g", *e, e1);
  }
  free(sel);
  free(sel1);
  free(Th);
  free(Te);
  free(Th1);
  free(Te1);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  /* ---- Thinformer ---- */
  const int n = 1024, nq = 256, dk = 8, dv = 4;
  kd_measure g = {0};
  double zero[16] = {0}, one[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
         half[16] = {.5, .5, .5, .5, .5, .5, .5, .5, .5, .5, .5, .5, .5, .5, .5, .5};
  g.type = KD_MEASURE_GAUSSIAN;
  g.mean = zero;
  g.sd = one;
  kd_pointset *Q = NULL, *K = NULL, *V = NULL;
  /* queries and keys N(0, 0.25 I): logits <q,k>/sqrt(d) of size ~0.25, attention weights O(1)
   * (with unit-variance keys exp(|k|^2/sqrt(d)) spans three decades and a handful of keys dominate
   * the attention-kernel MMD, so no thinning rule can beat uniform sampling there) */
  g.d = dk;
  g.sd = half;
  KD_TEST_OK(kd_pointset_generate(c, &g, nq, 1, &Q));
  KD_TEST_OK(kd_pointset_generate(c, &g, n, 2, &K));
  g.sd = one;
  g.d = dv;
  KD_TEST_OK(kd_pointset_generate(c, &g, n, 3, &V));
  kd_pointset *Q1 = NULL, *K1 = NULL, *V1 = NULL; /* the MPI_COMM_SELF copies (rank 0) */
  if (kd_test_rank() == 0) {
    g.d = dk;
    g.sd = half;
    KD_TEST_OK(kd_pointset_generate(MPI_COMM_SELF, &g, nq, 1, &Q1));
    KD_TEST_OK(kd_pointset_generate(MPI_COMM_SELF, &g, n, 2, &K1));
    g.sd = one;
    g.d = dv;
    KD_TEST_OK(kd_pointset_generate(MPI_COMM_SELF, &g, n, 3, &V1));
  }
  kd_pointset *const w3[3] = {Q, K, V}, *const s3[3] = {Q1, K1, V1};
  double *Th = malloc(sizeof(double) * nq * dv), *Te = malloc(sizeof(double) * nq * dv);
  int64_t *sel = NULL;
  kd_gidx ns = 0;
  double err_kh[2] = {0, 0}, err_u[2] = {0, 0};
  const int gs[2] = {1, 3};
  const kd_gidx nouts[2] = {64, 256};
  for (int a = 0; a < 2; a++)
    for (int s = 0; s < 3; s++) {
      double e = 0;
      thinformer_vs_self(c, w3, s3, KD_ATTN_KH_COMPRESS, nouts[a], gs[a], 10 + (uint64_t)s, nq, dv,
                         &e, &ns);
      KD_TEST(ns == nouts[a], "thinformer n_out %lld", (long long)ns);
      err_kh[a] += e / 3;
      thinformer_vs_self(c, w3, s3, KD_ATTN_UNIFORM, nouts[a], 0, 10 + (uint64_t)s, nq, dv, &e,
                         &ns);
      err_u[a] += e / 3;
    }
  if (kd_test_rank() == 0)
    printf(
        "Thinformer ||T_hat - T||_max: n_out 64: %.4f (uniform %.4f); n_out 256: %.4f "
        "(uniform %.4f)\n",
        err_kh[0], err_u[0], err_kh[1], err_u[1]);
  KD_TEST(err_kh[1] < err_kh[0], "error shrinks with n_out: %g -> %g", err_kh[0], err_kh[1]);
  KD_TEST(err_kh[0] < err_u[0] && err_kh[1] < err_u[1], "beats uniform key subsampling");
  /* default n_out = Compress output 2^g sqrt(n) = 2^2 * 32 = 128; rows distinct */
  KD_TEST_OK(kd_thinformer(c, Q, K, V, KD_ATTN_KH_COMPRESS, 0, 2, 0.5, 1, 1, Th, &sel, &ns, NULL,
                           NULL, NULL));
  KD_TEST(ns == 128, "default n_out %lld", (long long)ns);
  free(sel);
  sel = NULL;
  KD_TEST(kd_thinformer(c, Q, K, V, KD_ATTN_KH_COMPRESS, 64, 1, 1.0, 1, 1, Th, &sel, &ns, NULL,
                        NULL, NULL) == KD_ERR_CONFIG &&
              sel == NULL,
          "delta = 1 rejected");
  kd_err_clear();

  /* ---- thinned reordering ---- */
  const int N = 4096, d = 10, epochs = 5;
  g.d = d;
  double *G = malloc(sizeof(double) * N * d), *Xo = malloc(sizeof(double) * N * d);
  KD_TEST_OK(kd_measure_sample(&g, 77, 0, N, G));
  for (int i = 0; i < N * d; i++) G[i] = G[i] * (1 + (i % d)) + 0.3; /* anisotropic, off-centre */
  int64_t *pi = malloc(sizeof(int64_t) * N), *pn = malloc(sizeof(int64_t) * N);
  for (int i = 0; i < N; i++) pi[i] = i;
  for (int k = 0; k < epochs; k++) {
    for (int i = 0; i < N; i++) memcpy(Xo + i * d, G + pi[i] * d, sizeof(double) * d);
    kd_pointset *X = NULL;
    KD_TEST_OK(kd_pointset_from_replicated(c, N, d, Xo, NULL, &X));
    KD_TEST_OK(kd_thin_reorder(c, X, pi, 1.0 / (2 * epochs), 500 + k, pn));
    kd_pointset_destroy(&X);
    if (kd_test_rank() == 0) { /* the one-rank reference on the same rows */
      int64_t *p1 = malloc(sizeof(int64_t) * N);
      KD_TEST_OK(kd_pointset_from_replicated(MPI_COMM_SELF, N, d, Xo, NULL, &X));
      KD_TEST_OK(kd_thin_reorder(MPI_COMM_SELF, X, pi, 1.0 / (2 * epochs), 500 + k, p1));
      KD_TEST(!memcmp(pn, p1, sizeof(int64_t) * N),
              "epoch %d: same permutation at %d ranks as on one", k, kd_test_size());
      kd_pointset_destroy(&X);
      free(p1);
    }
    char *seen = calloc(N, 1);
    int perm = 1;
    for (int i = 0; i < N; i++) {
      if (pn[i] < 0 || pn[i] >= N || seen[pn[i]])
        perm = 0;
      else
        seen[pn[i]] = 1;
    }
    free(seen);
    KD_TEST(perm, "epoch %d: output is a permutation", k);
    memcpy(pi, pn, sizeof(int64_t) * N);
  }
  double disc = kd_prefix_discrepancy(G, N, d, pi);
  double rnd[21];
  for (int r = 0; r < 21; r++) {
    for (int i = 0; i < N; i++) pn[i] = i;
    kd_rng rg = kd_rng_make(900 + r, 1);
    for (int i = N - 1; i > 0; i--) {
      int j = (int)kd_rng_next_below(&rg, (uint64_t)(i + 1));
      int64_t t = pn[i];
      pn[i] = pn[j];
      pn[j] = t;
    }
    rnd[r] = kd_prefix_discrepancy(G, N, d, pn);
  }
  qsort(rnd, 21, sizeof(double), cmp_d);
  if (kd_test_rank() == 0)
    printf(
        "reorder: prefix discrepancy after %d LKH reorderings %.3f, median random %.3f "
        "(%.1fx)\n",
        epochs, disc, rnd[10], rnd[10] / disc);
  KD_TEST(disc * 2.5 <= rnd[10], "discrepancy %.3f >= 2.5x below the random median %.3f", disc,
          rnd[10]);
  /* identity check of Alg. 2 on a tiny case: n = 2 keeps one row, the other goes last */
  {
    double x2[2] = {1.0, -1.0};
    int64_t p2[2] = {5, 9}, q2[2];
    kd_pointset *X = NULL;
    KD_TEST_OK(kd_pointset_from_replicated(c, 2, 1, x2, NULL, &X));
    KD_TEST_OK(kd_thin_reorder(c, X, p2, 0.5, 1, q2));
    KD_TEST((q2[0] == 5 && q2[1] == 9) || (q2[0] == 9 && q2[1] == 5), "n = 2 permutation");
    kd_pointset_destroy(&X);
  }
  free(G);
  free(Xo);
  free(pi);
  free(pn);
  free(Th);
  free(Te);
  kd_pointset_destroy(&Q);
  kd_pointset_destroy(&K);
  kd_pointset_destroy(&V);
  kd_pointset_destroy(&Q1);
  kd_pointset_destroy(&K1);
  kd_pointset_destroy(&V1);
  return kd_test_finish();
}
