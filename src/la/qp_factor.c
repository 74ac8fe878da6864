/* qp_factor.c - the Cholesky factor of an active-set QP's face Hessian, updated as indices enter
 * and leave the face instead of refactored at every step (contract: la_impl.h, kd_qp_fac).
 * Entering index i: solve R^T r = H(:, i) and append the column [r; sqrt(H(i, i) - r^T r)].
 * Leaving index at factor position a: drop column a and restore the triangle with Givens
 * rotations of rows (a, a+1), (a+1, a+2), ... Both O(m^2). The reciprocal condition number of
 * the factor (LAPACK dpocon, O(m^2)) decides whether a step may use it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "la/la_impl.h"

extern void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a,
                    const int *lda, double *b, const int *ldb, int *info);
extern void dpocon_(const char *uplo, const int *n, const double *a, const int *lda,
                    const double *anorm, double *rcond, double *work, int *iwork, int *info);

/* The smallest reciprocal condition number a factor may have to be used (as the dense path). */
#define KD_QPF_RCOND 1e-10

void kd_qp_fac_free(kd_qp_fac *f) {
  free(f->idx);
  free(f->R);
  free(f->ws);
  free(f->iws);
  free(f->mark);
  memset(f, 0, sizeof *f);
}

/* An empty factor (keeps the storage and the counters). */
static void kd_qpf_clear_(kd_qp_fac *f) {
  f->m = 0;
  f->piv = -1;
}

/* Room for a QP of size n (columns copied to the new leading dimension). */
static kd_err kd_qpf_reserve_(kd_qp_fac *f, int n) {
  kd_err err = KD_OK;
  if (n <= f->cap) return KD_OK;
  const int cap = n > 2 * f->cap ? n : 2 * f->cap;
  double *R = malloc(sizeof(double) * (size_t)cap * cap), *ws = malloc(sizeof(double) * 4 * cap);
  int *idx = malloc(sizeof(int) * cap), *iws = malloc(sizeof(int) * cap);
  char *mark = calloc((size_t)cap, 1);
  if (!R || !ws || !idx || !iws || !mark) {
    free(R);
    free(ws);
    free(idx);
    free(iws);
    free(mark);
    KD_FAIL(KD_ERR_MEM, "kd_simplex_qp: cannot allocate the %d x %d face factor", cap, cap);
  }
  for (int j = 0; j < f->m; j++)
    memcpy(R + (size_t)j * cap, f->R + (size_t)j * f->cap, sizeof(double) * (size_t)(j + 1));
  if (f->m > 0) memcpy(idx, f->idx, sizeof(int) * (size_t)f->m);
  free(f->R);
  free(f->ws);
  free(f->idx);
  free(f->iws);
  free(f->mark);
  f->R = R;
  f->ws = ws;
  f->idx = idx;
  f->iws = iws;
  f->mark = mark;
  f->cap = cap;
cleanup:
  return err;
}

/* H(i, j) of the factor's parametrisation (la_impl.h). */
static double kd_qpf_h_(const kd_qp_fac *f, int n, const double *Q, int i, int j) {
  const double q = Q[(size_t)i * n + j];
  if (f->piv < 0) return q;
  const int p = f->piv;
  return q - Q[(size_t)i * n + p] - Q[(size_t)p * n + j] + Q[(size_t)p * n + p];
}

/* Append index i; 0 when the new pivot is not safely positive (i numerically in the span). */
static int kd_qpf_append_(kd_qp_fac *f, int n, const double *Q, int i) {
  const int m = f->m, ld = f->cap;
  double *r = f->R + (size_t)m * ld, s2 = 0.0;
  for (int a = 0; a < m; a++) {
    const double *Ra = f->R + (size_t)a * ld;
    double s = kd_qpf_h_(f, n, Q, f->idx[a], i);
    for (int b = 0; b < a; b++) s -= Ra[b] * r[b];
    r[a] = s / Ra[a];
    s2 += r[a] * r[a];
  }
  const double hii = kd_qpf_h_(f, n, Q, i, i), rho2 = hii - s2;
  if (!(rho2 > 1e-13 * hii) || !isfinite(rho2)) return 0;
  r[m] = sqrt(rho2);
  f->idx[m] = i;
  f->m = m + 1;
  f->appends++;
  return 1;
}

/* Delete the column at factor position a. */
static void kd_qpf_delete_(kd_qp_fac *f, int a) {
  const int m = f->m, ld = f->cap;
  double *R = f->R;
  for (int j = a + 1; j < m; j++) {
    memmove(R + (size_t)(j - 1) * ld, R + (size_t)j * ld, sizeof(double) * (size_t)(j + 1));
    f->idx[j - 1] = f->idx[j];
  }
  /* columns a .. m-2 now carry one entry below the diagonal: rotate it away */
  for (int c = a; c < m - 1; c++) {
    double *Rc = R + (size_t)c * ld;
    const double x = Rc[c], y = Rc[c + 1], h = hypot(x, y);
    const double cs = h > 0 ? x / h : 1.0, sn = h > 0 ? y / h : 0.0;
    Rc[c] = h;
    for (int j = c + 1; j < m - 1; j++) {
      double *Rj = R + (size_t)j * ld;
      const double u = Rj[c], v = Rj[c + 1];
      Rj[c] = cs * u + sn * v;
      Rj[c + 1] = cs * v - sn * u;
    }
  }
  f->m = m - 1;
  f->deletes++;
}

void kd_qp_fac_compact(kd_qp_fac *f, int n, const double *keep) {
  if (f->m == 0 && f->piv < 0) return;
  const int lim = n < f->cap ? n : f->cap;
  int *map = f->iws, j = 0;
  for (int i = 0; i < lim; i++) map[i] = keep[i] > 0 ? j++ : -1;
  if (f->piv >= lim || (f->piv >= 0 && map[f->piv] < 0)) {
    kd_qpf_clear_(f);
    return;
  }
  for (int a = f->m - 1; a >= 0; a--)
    if (f->idx[a] >= lim || map[f->idx[a]] < 0) kd_qpf_delete_(f, a);
  for (int a = 0; a < f->m; a++) f->idx[a] = map[f->idx[a]];
  if (f->piv >= 0) f->piv = map[f->piv];
}

int64_t kd_qp_fac_size(const kd_qp_fac *f) {
  return 3 + (int64_t)f->m + (int64_t)f->m * (f->m + 1) / 2;
}

void kd_qp_fac_save(const kd_qp_fac *f, double *v) {
  v[0] = f->piv;
  v[1] = f->m;
  v[2] = f->simplex;
  for (int a = 0; a < f->m; a++) v[3 + a] = f->idx[a];
  double *t = v + 3 + f->m;
  for (int j = 0; j < f->m; j++)
    for (int i = 0; i <= j; i++) *t++ = f->R[(size_t)j * f->cap + i];
}

kd_err kd_qp_fac_load(kd_qp_fac *f, const double *v, int64_t len, const char *what) {
  kd_err err = KD_OK;
  const double m = len >= 3 ? v[1] : -1;
  KD_CHECK(len >= 3 && m >= 0 && m < 1e8 && m == floor(m) && v[0] >= -1 && v[0] < 1e9 &&
               v[0] == floor(v[0]) && (v[2] == 0 || v[2] == 1) &&
               len == 3 + (int64_t)m + (int64_t)m * ((int64_t)m + 1) / 2,
           KD_ERR_FILE, "%s: not a QP factor (%lld values)", what, (long long)len);
  KD_TRY(kd_qpf_reserve_(f, (int)m + 1));
  f->piv = (int)v[0];
  f->m = (int)m;
  f->simplex = (int)v[2];
  for (int a = 0; a < f->m; a++) {
    KD_CHECK(v[3 + a] >= 0 && v[3 + a] < 1e9 && v[3 + a] == floor(v[3 + a]), KD_ERR_FILE,
             "%s: index %d is %g", what, a, v[3 + a]);
    f->idx[a] = (int)v[3 + a];
  }
  const double *t = v + 3 + f->m;
  for (int j = 0; j < f->m; j++)
    for (int i = 0; i <= j; i++) {
      KD_CHECK(isfinite(*t), KD_ERR_FILE, "%s: non-finite entry (%d, %d)", what, i, j);
      f->R[(size_t)j * f->cap + i] = *t++;
    }
cleanup:
  if (err != KD_OK) kd_qpf_clear_(f);
  return err;
}

/* Bring the factor to the face F: 1 when it covers F (less the pivot), 0 when an append failed
 * (the factor is left empty). */
static int kd_qpf_sync_(kd_qp_fac *f, int n, const double *Q, const double *w, const int *F, int k,
                        const char *in_f, int simplex) {
  int valid =
      f->simplex == simplex && f->piv < n && (simplex ? f->piv >= 0 && in_f[f->piv] : f->piv == -1);
  for (int a = 0; valid && a < f->m; a++) valid = f->idx[a] < n;
  /* distinct indices, none the pivot (a loaded factor is only range-checked) */
  int seen = 0;
  for (; valid && seen < f->m; seen++) {
    valid = !f->mark[f->idx[seen]] && f->idx[seen] != f->piv;
    f->mark[f->idx[seen]] = 1;
  }
  for (int a = 0; a < seen; a++) f->mark[f->idx[a]] = 0;
  if (!valid) {
    kd_qpf_clear_(f);
    f->simplex = simplex;
    if (simplex && k > 0) { /* the heaviest index is the one least likely to leave */
      int best = F[0];
      for (int a = 1; a < k; a++)
        if (w[F[a]] > w[best]) best = F[a];
      f->piv = best;
    }
    f->starts++;
  }
  for (int a = f->m - 1; a >= 0; a--)
    if (!in_f[f->idx[a]]) kd_qpf_delete_(f, a);
  for (int a = 0; a < f->m; a++) f->mark[f->idx[a]] = 1;
  if (f->piv >= 0) f->mark[f->piv] = 1;
  int ok = 1;
  for (int a = 0; a < k && ok; a++)
    if (!f->mark[F[a]]) ok = kd_qpf_append_(f, n, Q, F[a]);
  for (int a = 0; a < f->m; a++) f->mark[f->idx[a]] = 0;
  if (f->piv >= 0) f->mark[f->piv] = 0;
  if (!ok) kd_qpf_clear_(f);
  return ok;
}

kd_err kd_qp_fac_direction(kd_qp_fac *f, int n, const double *Q, const double *g, const double *w,
                           const int *F, int k, const char *in_f, int simplex, double *p, int *ok) {
  kd_err err = KD_OK;
  *ok = 0;
  KD_TRY(kd_qpf_reserve_(f, n));
  if (!kd_qpf_sync_(f, n, Q, w, F, k, in_f, simplex)) {
    f->fallbacks++;
    return KD_OK;
  }
  const int m = f->m, ld = f->cap;
  double *y = f->ws, *work = f->ws + f->cap;
  if (m > 0) {
    /* LAPACK's estimate of the reciprocal condition number, with ||H||_1 bounded above by
     * max_a sqrt(H_aa) sum_b sqrt(H_bb) (|H_ab| <= sqrt(H_aa H_bb), H is PSD): O(m), and the
     * estimate errs on the safe side (towards the dense path) */
    double anorm = 0.0, rcond = 0.0, dmax = 0.0, dsum = 0.0;
    for (int a = 0; a < m; a++) {
      const double r = sqrt(fmax(kd_qpf_h_(f, n, Q, f->idx[a], f->idx[a]), 0.0));
      dmax = fmax(dmax, r);
      dsum += r;
    }
    anorm = dmax * dsum;
    int info = 0, one = 1;
    dpocon_("U", &m, f->R, &ld, &anorm, &rcond, work, f->iws, &info);
    KD_LA(info);
    if (!(rcond > KD_QPF_RCOND)) {
      f->fallbacks++;
      return KD_OK;
    }
    const double gp = f->piv >= 0 ? g[f->piv] : 0.0;
    for (int a = 0; a < m; a++) y[a] = gp - g[f->idx[a]];
    dpotrs_("U", &m, &one, f->R, &ld, y, &m, &info);
    KD_LA(info);
  }
  /* p over F (ascending) from y over the factor's order; the pivot takes minus their sum */
  int *pos = f->iws;
  for (int a = 0; a < k; a++) {
    p[a] = 0.0;
    pos[F[a]] = a;
  }
  double s = 0.0;
  for (int a = 0; a < m; a++) {
    p[pos[f->idx[a]]] = y[a];
    s += y[a];
  }
  if (f->piv >= 0) p[pos[f->piv]] = -s;
  *ok = 1;
cleanup:
  return err;
}
