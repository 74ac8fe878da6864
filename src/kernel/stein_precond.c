/* stein_precond.c - the preconditioned Langevin Stein kernel (kernel.precondition: diag|matrix):
 * the base kernel on the Mahalanobis distance of an SPD matrix M (the sample covariance of the x
 * coordinates, or its diagonal), k(x, y) = phi(u^T M^-1 u), u = x - y (Riabiz et al. 2022).
 * With grad_x k = 2 phi' M^-1 u = -grad_y k and div_x div_y k = -2 phi' tr(M^-1) - 4 phi'' |M^-1
 * u|^2: k_p = -2 phi' tr(M^-1) - 4 phi'' w2 + 2 phi' t + phi q, r2 = |L^-1 u|^2 (M = L L^T), w2 =
 * |M^-1 u|^2, t = (M^-1 u) . (s(y) - s(x)), q = s(x) . s(y). Every row (x, s) is first mapped to
 * (L^-1 x, M^-1 x, s) by one fixed loop order, so r2, w2 and t are coordinate sums of differences
 * of mapped rows: a value is the same bits in every path and rank, and k_p(x, y) == k_p(y, x)
 * bitwise (swapping x and y negates both factors of t's terms). With M = I the mapped rows equal
 * the input rows and the values equal the plain kernel's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kernel_impl.h"

/* o[3 dx] = (L^-1 x, M^-1 x, s) of the row a = (x, s) */
static void kd_pre_row_(const kd_kernel *k, const double *a, double *o) {
  const int dx = k->d / 2;
  const double *Li = k->pre, *Mi = k->pre + (size_t)dx * dx;
  for (int i = 0; i < dx; i++) {
    double v = 0.0, w = 0.0;
    for (int j = 0; j < dx; j++) {
      v = fma(Li[i * dx + j], a[j], v);
      w = fma(Mi[i * dx + j], a[j], w);
    }
    o[i] = v;
    o[dx + i] = w;
    o[2 * dx + i] = a[dx + i];
  }
}

/* the four accumulators of two mapped rows */
static void kd_pre_acc_(int dx, const double *a, const double *b, double *r2, double *w2, double *t,
                        double *q) {
  double sr = 0.0, sw = 0.0, st = 0.0, sq = 0.0;
  for (int kk = 0; kk < dx; kk++) {
    const double u = a[kk] - b[kk], v = a[dx + kk] - b[dx + kk];
    const double as = a[2 * dx + kk], bs = b[2 * dx + kk];
    sr = fma(u, u, sr);
    sw = fma(v, v, sw);
    st = fma(v, bs - as, st);
    sq = fma(as, bs, sq);
  }
  *r2 = sr, *w2 = sw, *t = st, *q = sq;
}

double kd_stein_pre_pair_(const kd_kernel *k, const double *x, const double *y) {
  const int dx = k->d / 2;
  double a[3 * 64], b[3 * 64], *ha = NULL, *hb = NULL, r2, w2, t, q, out = NAN;
  double *pa = a, *pb = b;
  if (dx > 64) {
    ha = malloc(sizeof(double) * 3 * (size_t)dx);
    hb = malloc(sizeof(double) * 3 * (size_t)dx);
    if (!ha || !hb) goto done;
    pa = ha, pb = hb;
  }
  kd_pre_row_(k, x, pa);
  kd_pre_row_(k, y, pb);
  kd_pre_acc_(dx, pa, pb, &r2, &w2, &t, &q);
  kd_stein_finish4_(k, 1, &r2, &w2, &t, &q, k->pre_tr, &out);
done:
  free(ha);
  free(hb);
  return out;
}

kd_err kd_stein_pre_block_(const kd_kernel *k, const double *A, kd_lidx na, const double *B,
                           kd_lidx nb, double *K, kd_lidx ldk, const double *w, double beta,
                           double *y) {
  kd_err err = KD_OK;
  const int dx = k->d / 2, D = 3 * dx;
  const kd_lidx P = KD_KERNEL_PANEL;
  double *Am = NULL, *Bm = NULL, *acc = NULL, *out = NULL;
  KD_ALLOC(Am, (size_t)D * (na > 0 ? na : 1));
  KD_ALLOC(Bm, (size_t)D * (nb > 0 ? nb : 1));
  KD_ALLOC(acc, 4 * (size_t)P);
  KD_ALLOC(out, P);
  for (kd_lidx i = 0; i < na; i++) kd_pre_row_(k, A + i * k->d, Am + i * D);
  for (kd_lidx j = 0; j < nb; j++) kd_pre_row_(k, B + j * k->d, Bm + j * D);
  for (kd_lidx i = 0; i < na; i++) {
    double l[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (kd_lidx j0 = 0; j0 < nb; j0 += P) {
      const kd_lidx nc = nb - j0 < P ? nb - j0 : P;
      for (kd_lidx j = 0; j < nc; j++)
        kd_pre_acc_(dx, Am + i * D, Bm + (j0 + j) * D, acc + j, acc + P + j, acc + 2 * P + j,
                    acc + 3 * P + j);
      kd_stein_finish4_(k, nc, acc, acc + P, acc + 2 * P, acc + 3 * P, k->pre_tr,
                        K ? K + i * ldk + j0 : out);
      for (kd_lidx j = 0; !K && j < nc; j++) /* the lanes of kernel_block.c: lane j mod 8 */
        l[(j0 + j) % 8] = fma(out[j], w ? w[j0 + j] : 1.0, l[(j0 + j) % 8]);
    }
    if (!K) {
      const double sum = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
      y[i] = beta == 0.0 ? sum : beta * y[i] + sum;
    }
  }
cleanup:
  free(Am);
  free(Bm);
  free(acc);
  free(out);
  return err;
}

void kd_stein_pre_map_x_(const kd_kernel *k, const double *x, double *o) {
  const int dx = k->d / 2;
  for (int i = 0; i < dx; i++) {
    double v = 0.0;
    for (int j = 0; j < dx; j++) v = fma(k->pre[i * dx + j], x[j], v);
    o[i] = v;
  }
}

kd_err kd_kernel_set_stein_precond(kd_kernel *k, const double *M) {
  kd_err err = KD_OK;
  double *L = NULL, *pre = NULL;
  KD_CHECK(k && M, KD_ERR_ARG, "kernel: NULL argument");
  KD_CHECK(k->p.type == KD_KERNEL_STEIN, KD_ERR_ARG,
           "kernel.precondition: only the stein kernel is preconditioned");
  const int dx = k->d / 2;
  KD_ALLOC(L, (size_t)dx * dx);
  KD_ALLOC(pre, 2 * (size_t)dx * dx);
  /* Cholesky M = L L^T (lower), in a fixed order */
  for (int j = 0; j < dx; j++) {
    double s = M[j * dx + j];
    for (int c = 0; c < j; c++) s -= L[j * dx + c] * L[j * dx + c];
    KD_CHECK(s > 1e-14 * fabs(M[j * dx + j]) && s > 0 && isfinite(s), KD_ERR_INPUT,
             "kernel.precondition: the matrix is not positive definite (pivot %d = %.3g); the x "
             "coordinates may be constant or linearly dependent: use precondition: diag or none",
             j + 1, s);
    L[j * dx + j] = sqrt(s);
    for (int i = j + 1; i < dx; i++) {
      double v = M[i * dx + j];
      for (int c = 0; c < j; c++) v -= L[i * dx + c] * L[j * dx + c];
      L[i * dx + j] = v / L[j * dx + j];
    }
  }
  /* L^-1 by forward substitution, column by column; then M^-1 = L^-T L^-1 */
  double *Li = pre, *Mi = pre + (size_t)dx * dx;
  for (int c = 0; c < dx; c++)
    for (int i = 0; i < dx; i++) {
      double v = i == c ? 1.0 : 0.0;
      for (int j = c; j < i; j++) v -= L[i * dx + j] * Li[j * dx + c];
      Li[i * dx + c] = i < c ? 0.0 : v / L[i * dx + i];
    }
  double tr = 0.0;
  for (int i = 0; i < dx; i++)
    for (int j = 0; j < dx; j++) {
      double v = 0.0;
      for (int m = 0; m < dx; m++) v = fma(Li[m * dx + i], Li[m * dx + j], v);
      Mi[i * dx + j] = v;
    }
  for (int i = 0; i < dx; i++) tr += Mi[i * dx + i];
  int diag = 1;
  for (int i = 0; i < dx; i++)
    for (int j = 0; j < dx; j++) diag &= i == j || M[i * dx + j] == 0.0;
  free(k->pre);
  k->pre = pre;
  k->pre_tr = tr;
  k->pre_diag = diag;
  pre = NULL;
  kd_kernel_update_desc_(k);
cleanup:
  free(L);
  free(pre);
  return err;
}

int kd_kernel_stein_preconditioned(const kd_kernel *k) { return k && k->pre != NULL; }

int kd_kernel_stein_precond_kind(const kd_kernel *k) {
  return !kd_kernel_stein_preconditioned(k) ? 0 : k->pre_diag ? 1 : 2;
}
