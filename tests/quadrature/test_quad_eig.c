/* test_quad_eig.c - the two eigen paths of the Nystrom step (eq. (10)-(11)): LAPACK dsyevr on one
 * rank and ScaLAPACK pdsyevr on a BLACS grid over the communicator (block-cyclic) return the same
 * top eigenvalues (1e-10 relative) and eigenvectors with small residuals; plus the dgeqp3 null
 * space used by recombination. */
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"
#include "la/la_dist_impl.h"

typedef struct {
  kd_kernel *k;
  const double *Z;
  int d;
} gram_ctx;

static kd_err gram_fill(void *v, int i0, int ni, int j0, int nj, double *A, int lda) {
  gram_ctx *c = v;
  for (int j = 0; j < nj; j++)
    for (int i = 0; i < ni; i++)
      A[i + (size_t)j * lda] =
          kd_kernel_eval(c->k, c->Z + (size_t)(i0 + i) * c->d, c->Z + (size_t)(j0 + j) * c->d);
  return KD_OK;
}

static void compare(const char *what, kd_kernel *k, int d, int l, int s, int nb) {
  double *Z = malloc(sizeof(double) * l * d);
  kd_measure mu = {0};
  mu.type = KD_MEASURE_TORUS;
  mu.d = d;
  KD_TEST_OK(kd_measure_sample(&mu, 77, 0, l, Z));
  gram_ctx c = {k, Z, d};
  double *l1 = malloc(sizeof(double) * s), *l2 = malloc(sizeof(double) * s);
  double *U1 = malloc(sizeof(double) * l * s), *U2 = malloc(sizeof(double) * l * s);
  KD_TEST_OK(kd_la_eig_top_local(l, gram_fill, &c, s, l1, U1));
  KD_TEST_OK(kd_la_eig_top_dist(MPI_COMM_WORLD, l, gram_fill, &c, s, nb, l2, U2));
  double worst = 0, res = 0;
  int sorted = 1;
  for (int t = 0; t < s; t++) {
    worst = fmax(worst, fabs(l1[t] - l2[t]) / fabs(l1[t]));
    if (t) sorted &= l2[t] <= l2[t - 1];
  }
  /* residual |W u - lambda u|_inf of the ScaLAPACK vectors, relative to lambda_1 */
  double *A = malloc(sizeof(double) * l * l);
  gram_fill(&c, 0, l, 0, l, A, l);
  for (int t = 0; t < s; t++)
    for (int i = 0; i < l; i++) {
      double acc = 0;
      for (int j = 0; j < l; j++) acc += A[i + (size_t)j * l] * U2[(size_t)j * s + t];
      res = fmax(res, fabs(acc - l2[t] * U2[(size_t)i * s + t]) / l2[0]);
    }
  KD_TEST(worst <= 1e-10, "%s: LAPACK vs ScaLAPACK eigenvalues, worst relative gap %.3g", what,
          worst);
  KD_TEST(sorted, "%s: eigenvalues descending", what);
  KD_TEST(res <= 1e-10, "%s: ScaLAPACK eigenvector residual %.3g", what, res);
  free(A);
  free(Z);
  free(l1);
  free(l2);
  free(U1);
  free(U2);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  kd_kernel *k = NULL;
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_SOBOLEV);
  p.order = 1;
  KD_TEST_OK(kd_kernel_create(&p, 1, &k));
  compare("sobolev r=1 d=1 l=240 s=40 nb=32", k, 1, 240, 40, 32);
  compare("sobolev r=1 d=1 l=131 s=20 nb=7", k, 1, 131, 20, 7);
  /* the default block size: pdsyevr's own workspace query was too small here (PDORMTR) */
  compare("sobolev r=1 d=1 l=240 s=40 nb=64", k, 1, 240, 40, 64);
  kd_kernel_destroy(&k);
  p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  p.ls = 0.5;
  KD_TEST_OK(kd_kernel_create(&p, 3, &k));
  compare("gaussian d=3 l=160 s=20 nb=16", k, 3, 160, 20, 16);
  kd_kernel_destroy(&k);

  /* bad arguments: s > l */
  {
    double lam[4], U[16];
    gram_ctx c = {NULL, NULL, 1};
    KD_TEST(kd_la_eig_top_local(3, gram_fill, &c, 4, lam, U) == KD_ERR_ARG, "s > l rejected");
    kd_err_clear();
  }
  /* null space of a 5 x 12 matrix with rank 4 (row 4 = row 0 + row 1) */
  {
    const int r = 5, K = 12;
    double M[60], M0[60], V[144];
    for (int j = 0; j < K; j++) {
      for (int i = 0; i < 4; i++) M[i + j * r] = kd_rng_normal(5, 0, (uint64_t)(i * K + j));
      M[4 + j * r] = M[0 + j * r] + M[1 + j * r];
    }
    memcpy(M0, M, sizeof M);
    int q = 0;
    KD_TEST_OK(kd_la_null_space(r, K, M, 1e-13, V, &q));
    KD_TEST(q == 8, "null space dimension 12 - rank 4 = 8 (got %d)", q);
    double worst = 0;
    for (int t = 0; t < q; t++)
      for (int i = 0; i < r; i++) {
        double acc = 0;
        for (int j = 0; j < K; j++) acc += M0[i + j * r] * V[j + t * K];
        worst = fmax(worst, fabs(acc));
      }
    KD_TEST(worst <= 1e-12, "M V = 0 (max %.3g)", worst);
  }
  return kd_test_finish();
}
