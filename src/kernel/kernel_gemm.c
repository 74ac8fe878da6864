/* kernel_gemm.c - the Gaussian kernel's weighted row sums y = K(A, B) w with the squared distances
 * from dgemm, for the large fixed blocks of the exact MMD's self term (src/embed/empirical.c) at
 * d >= KD_KG_MIND, where dgemm plus the exponential beats the direct loops (1.1x at d = 96, 1.45x
 * at d = 784, bench/results/kernel.md).
 *
 * Both blocks are moved to the frame of A's mean c (A - c, B - c, rounded once), so that
 * |a - b|^2 = |a~|^2 + |b~|^2 - 2 a~.b~ cancels only what the points' spread around c makes it
 * cancel, not an offset. Against the direct loops of kd_kernel_matvec, a value's argument then
 * differs by at most about 2 gamma_d (|a~|^2 + |b~|^2) / (2 ls^2) (gamma_d = d 2^-53 / (1 - d
 * 2^-53): the dot product in any order, the norms, the subtractions), relatively as much in the
 * kernel value; tests/unit/kernel/test_kernel_gemm.c checks the stated bound. The results are not
 * kd_kernel_matvec's bits, and a row's value depends on the call's shape (OpenBLAS picks its
 * kernels by the shape and position of a product), so this path is only for callers whose blocks
 * have fixed shapes whatever the rank count: the empirical target's chunk pairs. */
#include <cblas.h>
#include <stdlib.h>

#include "kernel/kernel_impl.h"

#define KD_KG_ROWS 128  /* rows per dgemm product */
#define KD_KG_COLS 1024 /* columns per dgemm product */
/* From this dimension on (measured: bench/results/kernel.md, 2048 x 2048 blocks at d = 8 .. 784:
 * the direct loops faster to d = 64, even at 80, dgemm 1.1x at 96 and 1.45x at 784) */
#define KD_KG_MIND 96

int kd_kernel_gemm_wanted_(const kd_kernel *k) {
  return k && k->p.type == KD_KERNEL_GAUSSIAN && k->d >= KD_KG_MIND && !k->ls_pending;
}

int kd_kernel_matvec_gemm_active(const kd_kernel *k) { return kd_kernel_gemm_wanted_(k); }

/* X (n x d) - c into Xc and the squared norms of its rows into q */
static void kd_kg_centre_(int d, const double *X, kd_lidx n, const double *c, double *Xc,
                          double *q) {
  for (kd_lidx i = 0; i < n; i++) {
    double s = 0.0;
    for (int kk = 0; kk < d; kk++) {
      const double v = X[i * d + kk] - c[kk];
      Xc[i * d + kk] = v;
      s = fma(v, v, s);
    }
    q[i] = s;
  }
}

/* One row of a product against cb columns: the arguments c0 (qa + q_j - 2 g_j) (squared distance
 * clamped at 0), their exponentials, and the weighted sum into 8 lanes (column j into lane j mod
 * 8, in order). */
KD_KCLONES static void kd_kg_row_(kd_lidx cb, const double *restrict g, double qa,
                                  const double *restrict q, double c0, const double *restrict w,
                                  double *restrict x, double *restrict lanes) {
  for (kd_lidx j = 0; j < cb; j++) {
    const double s = fma(-2.0, g[j], qa + q[j]);
    x[j] = c0 * (s > 0.0 ? s : 0.0);
  }
  for (kd_lidx j = 0; j < cb; j++) x[j] = kd_kexp_neg_(x[j]);
  kd_lidx j = 0;
  for (; j + 8 <= cb; j += 8)
    for (int l = 0; l < 8; l++) lanes[l] = fma(x[j + l], w ? w[j + l] : 1.0, lanes[l]);
  for (; j < cb; j++) lanes[j % 8] = fma(x[j], w ? w[j] : 1.0, lanes[j % 8]);
}

kd_err kd_kernel_matvec_gemm(kd_kernel *k, const double *A, kd_lidx na, const double *B, kd_lidx nb,
                             const double *w, double *y) {
  kd_err err = KD_OK;
  double *c = NULL, *Ac = NULL, *Bc = NULL, *qa = NULL, *qb = NULL, *G = NULL, *x = NULL;
  if (!kd_kernel_gemm_wanted_(k) || na == 0 || nb == 0)
    return kd_kernel_matvec(k, A, na, B, nb, w, 0.0, y);
  const int d = k->d;
  KD_CHECK(A && B && y, KD_ERR_ARG, "kernel: NULL block");
  KD_ALLOC(c, d);
  KD_ALLOC(Ac, (size_t)na * (size_t)d);
  KD_ALLOC(Bc, (size_t)nb * (size_t)d);
  KD_ALLOC(qa, na);
  KD_ALLOC(qb, nb);
  KD_ALLOC(G, (size_t)KD_KG_ROWS * KD_KG_COLS);
  KD_ALLOC(x, KD_KG_COLS);
  for (kd_lidx i = 0; i < na; i++)
    for (int kk = 0; kk < d; kk++) c[kk] += A[i * d + kk];
  for (int kk = 0; kk < d; kk++) c[kk] /= (double)na;
  kd_kg_centre_(d, A, na, c, Ac, qa);
  kd_kg_centre_(d, B, nb, c, Bc, qb);
  for (kd_lidx i0 = 0; i0 < na; i0 += KD_KG_ROWS) {
    const kd_lidx rb = na - i0 < KD_KG_ROWS ? na - i0 : KD_KG_ROWS;
    double lanes[KD_KG_ROWS][8] = {{0}};
    for (kd_lidx j0 = 0; j0 < nb; j0 += KD_KG_COLS) {
      const kd_lidx cb = nb - j0 < KD_KG_COLS ? nb - j0 : KD_KG_COLS;
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rb, (int)cb, d, 1.0,
                  Ac + (size_t)i0 * (size_t)d, d, Bc + (size_t)j0 * (size_t)d, d, 0.0, G,
                  KD_KG_COLS);
      for (kd_lidx r = 0; r < rb; r++)
        kd_kg_row_(cb, G + r * KD_KG_COLS, qa[i0 + r], qb + j0, k->c[0], w ? w + j0 : NULL, x,
                   lanes[r]);
    }
    for (kd_lidx r = 0; r < rb; r++) {
      double s = 0.0;
      for (int l = 0; l < 8; l++) s += lanes[r][l];
      y[i0 + r] = s;
    }
  }
  k->evals += (uint64_t)na * (uint64_t)nb;
cleanup:
  free(c), free(Ac), free(Bc), free(qa), free(qb), free(G), free(x);
  return err;
}
