/* simplex_qp.c - small dense convex QPs solved by a primal active-set method:
 *   kd_simplex_qp:  min 1/2 w^T Q w - c^T w  over {w >= 0, sum w = 1}  (la_impl.h contract)
 *   kd_simplex_qp_fac: the same, with the face Hessian's Cholesky factor kept between calls
 *                   (la/qp_factor.c; a step whose factor is ill conditioned takes the path below)
 *   kd_nonneg_qp:   min 1/2 w^T Q w - c^T w  over {w >= 0}            (la_impl.h; FC-PMP /
 *                   FC-gcos direction problem (3.9) of Tsuji & Tanaka)
 * Q is symmetric positive SEMI-definite and may be singular. On the current face (free set F) the
 * step solves the equality-constrained subproblem in a null-space basis Z of {sum p_F = 0}
 * (Householder: the columns 2..k of I - 2 v v^T with v chosen so that column 1 is 1/sqrt(k)), with
 * an eigendecomposition (LAPACK dsyev) of the reduced Hessian Z^T Q_FF Z. Eigenvalues below a
 * relative threshold are treated as zero: if the reduced gradient has a component in that null
 * space the objective decreases linearly along it and the step goes to the boundary; otherwise the
 * pseudo-inverse Newton step is the face minimiser. Blocking constraints leave F; at a face minimum
 * the most violated KKT condition (smallest gradient entry, ties to the smallest index) enters F.
 * Every loop runs in a fixed order, so equal inputs give equal bits on every rank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "la/la_impl.h"

extern void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
extern void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a,
                    const int *lda, double *b, const int *ldb, int *info);
extern void dpocon_(const char *uplo, const int *n, const double *a, const int *lda,
                    const double *anorm, double *rcond, double *work, int *iwork, int *info);
extern void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
                   double *w, double *work, const int *lwork, int *info);

/* Gradient g = Q w - c, using only the free entries of w. Four rows at a time (four independent
 * sums, each in the order of F: the same bits as one row at a time). */
static void kd_qp_grad_(int n, const double *Q, const double *c, const double *w, const int *F,
                        int k, double *g) {
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const double *q0 = Q + (size_t)i * n, *q1 = q0 + n, *q2 = q1 + n, *q3 = q2 + n;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (int a = 0; a < k; a++) {
      const int j = F[a];
      const double wj = w[j];
      s0 += q0[j] * wj;
      s1 += q1[j] * wj;
      s2 += q2[j] * wj;
      s3 += q3[j] * wj;
    }
    g[i] = s0 - c[i];
    g[i + 1] = s1 - c[i + 1];
    g[i + 2] = s2 - c[i + 2];
    g[i + 3] = s3 - c[i + 3];
  }
  for (; i < n; i++) {
    double s = 0.0;
    for (int a = 0; a < k; a++) s += Q[(size_t)i * n + F[a]] * w[F[a]];
    g[i] = s - c[i];
  }
}

/* KKT violation: simplex: w^T g - min_i g_i (the Frank-Wolfe gap, >= 0, 0 at the optimum).
 * Nonnegative orthant: max(max_{i in F} |g_i|, max_{i not in F} -g_i). */
static double kd_qp_kkt_(int n, const double *w, const double *g, const char *in_f, int simplex) {
  if (simplex) {
    double wg = 0.0, gmin = INFINITY;
    for (int i = 0; i < n; i++) {
      wg += w[i] * g[i];
      if (g[i] < gmin) gmin = g[i];
    }
    return fmax(wg - gmin, 0.0);
  }
  double v = 0.0;
  for (int i = 0; i < n; i++) v = fmax(v, in_f[i] ? fabs(g[i]) : -g[i]);
  return v;
}

/* Direction p (length k, over F) from the face subproblem. *newton = 1 when p is the face minimiser
 * step (take alpha = 1 if feasible), 0 when p is a zero-curvature descent ray. Scratch: ws.
 * Simplex faces use the Householder reflection P = I - 2 v v^T / (v^T v), v = 1/sqrt(k) - e_1,
 * whose first column is 1/sqrt(k) and whose other columns span {sum p = 0}: the reduced Hessian is
 * (P A P)[1:, 1:] with A = Q_FF, formed in O(k^2) from q = A v. */
static kd_err kd_qp_direction_(int n, const double *Q, const double *g, const int *F, int k,
                               int simplex, double qscale, double *p, int *newton, double *ws,
                               int lws) {
  kd_err err = KD_OK;
  const int r = simplex ? k - 1 : k, o = simplex ? 1 : 0;
  double *H = ws, *ev = H + (size_t)k * k, *rg = ev + k, *y = rg + k, *nn = y + k, *v = nn + k,
         *qv = v + k, *t = qv + k, *work = t + k;
  int lwork = lws - (int)(work - ws);
  double vn2 = 1.0, vqv = 0.0, vg = 0.0;
  *newton = 1;
  for (int a = 0; a < k; a++) p[a] = 0.0;
  if (r <= 0) return KD_OK;
  if (simplex) {
    const double u = 1.0 / sqrt((double)k);
    vn2 = 0.0;
    for (int a = 0; a < k; a++) {
      v[a] = u - (a == 0 ? 1.0 : 0.0);
      vn2 += v[a] * v[a];
    }
    for (int a = 0; a < k; a++) {
      double s = 0.0;
      const double *Qa = Q + (size_t)F[a] * n;
      for (int b = 0; b < k; b++) s += Qa[F[b]] * v[b];
      qv[a] = s;
      vqv += v[a] * s;
      vg += v[a] * g[F[a]];
    }
  }
  /* H = (P A P)[o:, o:] (column-major = row-major, symmetric); rg = (P g_F)[o:] */
  for (int i = 0; i < r; i++) {
    const int ai = i + o;
    const double *Qa = Q + (size_t)F[ai] * n;
    for (int j = 0; j < r; j++) {
      const int bj = j + o;
      double h = Qa[F[bj]];
      if (simplex)
        h += (-2.0 * (v[ai] * qv[bj] + qv[ai] * v[bj]) + 4.0 * vqv * v[ai] * v[bj] / vn2) / vn2;
      H[i + (size_t)r * j] = h;
    }
    rg[i] = g[F[ai]] - (simplex ? 2.0 * v[ai] * vg / vn2 : 0.0);
  }
  double gnorm = 0.0;
  for (int j = 0; j < r; j++) gnorm += rg[j] * rg[j];
  gnorm = sqrt(gnorm);
  int info = 0;
  const double *dir = y;
  {
    /* fast path: Cholesky of the reduced Hessian when it is well conditioned (the usual case);
     * otherwise (singular / near-singular) the eigendecomposition below. */
    double *C = work, anorm = 0.0, rcond = 0.0;
    for (int j = 0; j < r; j++) {
      double cs = 0.0;
      for (int i = 0; i < r; i++) {
        C[i + (size_t)r * j] = H[i + (size_t)r * j];
        cs += fabs(H[i + (size_t)r * j]);
      }
      anorm = fmax(anorm, cs);
    }
    dpotrf_("U", &r, C, &r, &info);
    if (info == 0) {
      int *iwork = (int *)(C + (size_t)r * r + 3 * (size_t)r);
      dpocon_("U", &r, C, &r, &anorm, &rcond, C + (size_t)r * r, iwork, &info);
    }
    if (info == 0 && rcond > 1e-10) {
      int one = 1;
      for (int j = 0; j < r; j++) y[j] = -rg[j];
      dpotrs_("U", &r, &one, C, &r, y, &r, &info);
      KD_LA(info);
      goto back;
    }
    info = 0;
  }
  dsyev_("V", "U", &r, H, &r, ev, work, &lwork, &info);
  KD_LA(info);
  {
    double lmax = fmax(ev[r - 1], 0.0);
    const double thr = 1e-11 * fmax(lmax, qscale);
    double null2 = 0.0;
    for (int j = 0; j < r; j++) y[j] = nn[j] = 0.0;
    for (int e = 0; e < r; e++) {
      const double *ue = H + (size_t)r * e;
      double a = 0.0;
      for (int j = 0; j < r; j++) a += ue[j] * rg[j];
      if (ev[e] > thr) {
        for (int j = 0; j < r; j++) y[j] -= a / ev[e] * ue[j];
      } else {
        null2 += a * a;
        for (int j = 0; j < r; j++) nn[j] -= a * ue[j];
      }
    }
    if (sqrt(null2) > 1e-9 * (gnorm + qscale)) {
      dir = nn;
      *newton = 0;
    }
  }
back:
  /* p = P [0; dir] (simplex) or dir */
  if (simplex) {
    double vt = 0.0;
    t[0] = 0.0;
    for (int j = 0; j < r; j++) t[j + 1] = dir[j];
    for (int a = 0; a < k; a++) vt += v[a] * t[a];
    for (int a = 0; a < k; a++) p[a] = t[a] - 2.0 * v[a] * vt / vn2;
  } else {
    for (int a = 0; a < k; a++) p[a] = dir[a];
  }
cleanup:
  return err;
}

/* The active-set iteration's state (kd_qp_active_set_ and its phases). */
typedef struct {
  int n, simplex, k, face_opt, just_added, refines, lws;
  const double *Q, *c;
  double *w, *g, *p, *ws; /* w: the iterate (caller's); g, p, ws: scratch */
  int *F;                 /* the free set, ascending, k entries */
  kd_qp_fac *fac;         /* the face factor kept between calls, or NULL (kd_simplex_qp_fac) */
  char *in_f;             /* [n] membership of F */
  double tol, scale, kscale, kkt;
} kd_qp_;

/* Check the inputs (finite, sizes) and set the scales used by the tolerances. */
static kd_err kd_qp_check_(kd_qp_ *q, int max_iter) {
  kd_err err = KD_OK;
  const int n = q->n;
  const double *Q = q->Q, *c = q->c, *w = q->w;
  KD_CHECK(n >= 1 && Q && c && w, KD_ERR_ARG, "kd_simplex_qp: bad arguments (n = %d)", n);
  KD_CHECK(max_iter >= 1 && q->tol >= 0, KD_ERR_ARG, "kd_simplex_qp: max_iter %d, tol %g", max_iter,
           q->tol);
  double qscale = 0.0;
  for (int i = 0; i < n; i++) {
    KD_CHECK(isfinite(c[i]) && isfinite(w[i]), KD_ERR_NUMERIC,
             "kd_simplex_qp: non-finite input at entry %d", i);
    for (int j = 0; j < n; j++)
      KD_CHECK(isfinite(Q[(size_t)i * n + j]), KD_ERR_NUMERIC, "kd_simplex_qp: non-finite Q(%d,%d)",
               i, j);
    qscale = fmax(qscale, fabs(Q[(size_t)i * n + i]));
  }
  q->scale = fmax(1.0, fmax(qscale, 0.0));
  double cmax = 0.0;
  for (int i = 0; i < n; i++) cmax = fmax(cmax, fabs(c[i]));
  q->kscale = fmax(q->scale, cmax);
cleanup:
  return err;
}

/* Starting point: w clipped to the feasible set (simplex: normalised, or the best vertex when w
 * is all zero), and the free set F = {w_i > 0}. */
static void kd_qp_start_(kd_qp_ *q) {
  const int n = q->n;
  const double *Q = q->Q, *c = q->c;
  double *w = q->w;
  if (q->simplex) {
    double s = 0.0;
    for (int i = 0; i < n; i++) {
      if (w[i] < 0) w[i] = 0.0;
      s += w[i];
    }
    if (!(s > 0)) {
      int best = 0;
      for (int i = 1; i < n; i++)
        if (0.5 * Q[(size_t)i * n + i] - c[i] < 0.5 * Q[(size_t)best * n + best] - c[best])
          best = i;
      for (int i = 0; i < n; i++) w[i] = i == best ? 1.0 : 0.0;
    } else {
      for (int i = 0; i < n; i++) w[i] /= s;
    }
  } else {
    for (int i = 0; i < n; i++)
      if (w[i] < 0) w[i] = 0.0;
  }
  q->k = 0;
  for (int i = 0; i < n; i++) {
    q->in_f[i] = w[i] > 0;
    if (q->in_f[i]) q->F[q->k++] = i;
  }
}

/* One step on the current face towards its minimiser (to the boundary if a constraint blocks);
 * blocking entries leave F. *stop = 1: converged to round-off at a degenerate face. */
static kd_err kd_qp_face_step_(kd_qp_ *q, int *stop) {
  kd_err err = KD_OK;
  int *F = q->F, k = q->k, newton = 1, block = -1;
  double *w = q->w, *p = q->p, amax = INFINITY;
  int from_factor = 0;
  if (q->fac)
    KD_TRY(kd_qp_fac_direction(q->fac, q->n, q->Q, q->g, w, F, k, q->in_f, q->simplex, p,
                               &from_factor));
  if (!from_factor)
    KD_TRY(
        kd_qp_direction_(q->n, q->Q, q->g, F, k, q->simplex, q->scale, p, &newton, q->ws, q->lws));
  for (int a = 0; a < k; a++)
    if (p[a] < 0) {
      double t = -w[F[a]] / p[a];
      if (t < amax) {
        amax = t;
        block = a;
      }
    }
  if (!newton && block < 0) {
    KD_FAIL(KD_ERR_NUMERIC, "kd_nonneg_qp: objective unbounded below (singular Q)");
  }
  double alpha = newton ? fmin(1.0, amax) : amax;
  if (block >= 0 && F[block] == q->just_added && alpha <= 0.0) {
    /* degenerate: the entering index would leave at once; stop at the current point */
    q->kkt = kd_qp_kkt_(q->n, w, q->g, q->in_f, q->simplex);
    KD_CHECK(q->kkt <= fmax(1e4 * q->tol, 1e-9) * q->kscale, KD_ERR_NUMERIC,
             "kd_simplex_qp: no progress (degenerate face), KKT %.3g", q->kkt);
    *stop = 1; /* converged to round-off */
    goto cleanup;
  }
  for (int a = 0; a < k; a++) w[F[a]] += alpha * p[a];
  q->just_added = -1;
  if (newton && amax >= 1.0) {
    q->face_opt = 1;
  } else {
    w[F[block]] = 0.0;
  }
  /* leave F: blocking index and any entry driven to <= 0 by round-off */
  int kk = 0;
  for (int a = 0; a < k; a++) {
    if (w[F[a]] <= 0.0) {
      w[F[a]] = 0.0;
      q->in_f[F[a]] = 0;
    } else {
      F[kk++] = F[a];
    }
  }
  q->k = k = kk;
  if (q->simplex) {
    double s = 0.0;
    for (int a = 0; a < k; a++) s += w[F[a]];
    KD_CHECK(s > 0 && isfinite(s), KD_ERR_NUMERIC, "kd_simplex_qp: lost feasibility");
    for (int a = 0; a < k; a++) w[F[a]] /= s;
  }
cleanup:
  return err;
}

/* At a face minimum: stop if the KKT violation is below tolerance, else let the most violated
 * index (smallest gradient outside F, ties to the smallest index) enter F, or refine the face a
 * few times when the violation sits inside F (round-off of the face solve). *stop = 1: done. */
static void kd_qp_enter_(kd_qp_ *q, int *stop) {
  const int n = q->n;
  const double *g = q->g, *w = q->w;
  int *F = q->F;
  q->kkt = kd_qp_kkt_(n, w, g, q->in_f, q->simplex);
  if (q->kkt <= q->tol * q->kscale) {
    *stop = 1;
    return;
  }
  int j = -1;
  double lam = 0.0;
  if (q->simplex)
    for (int a = 0; a < q->k; a++) lam += w[F[a]] * g[F[a]];
  for (int i = 0; i < n; i++)
    if (!q->in_f[i] && g[i] < lam && (j < 0 || g[i] < g[j])) j = i;
  if (j >= 0 && lam - g[j] > 0.5 * q->tol * q->kscale) {
    int pos = q->k;
    while (pos > 0 && F[pos - 1] > j) {
      F[pos] = F[pos - 1];
      pos--;
    }
    F[pos] = j;
    q->k++;
    q->in_f[j] = 1;
    q->just_added = j;
    q->face_opt = 0;
    q->refines = 0;
  } else {
    if (++q->refines > 3) *stop = 1;
    q->face_opt = 0;
  }
}

/* Exact feasibility of the result: clip to >= 0 (and renormalise on the simplex). */
static kd_err kd_qp_finish_(kd_qp_ *q) {
  kd_err err = KD_OK;
  double s = 0.0, *w = q->w;
  for (int i = 0; i < q->n; i++) {
    if (!(w[i] > 0)) w[i] = 0.0;
    s += w[i];
  }
  if (q->simplex) {
    KD_CHECK(s > 0, KD_ERR_NUMERIC, "kd_simplex_qp: lost feasibility");
    for (int i = 0; i < q->n; i++) w[i] /= s;
  }
  for (int i = 0; i < q->n; i++)
    KD_CHECK(isfinite(w[i]), KD_ERR_NUMERIC, "kd_simplex_qp: non-finite solution");
cleanup:
  return err;
}

static kd_err kd_qp_active_set_(int n, const double *Q, const double *c, int simplex, double tol,
                                int max_iter, double *w, kd_qp_fac *fac) {
  kd_err err = KD_OK;
  kd_qp_ q;
  memset(&q, 0, sizeof q);
  q.n = n;
  q.simplex = simplex;
  q.Q = Q;
  q.c = c;
  q.w = w;
  q.tol = tol;
  q.fac = fac;
  KD_TRY(kd_qp_check_(&q, max_iter));
  q.lws = 4 * n * n + 8 * n + 64 * (n + 2);
  KD_ALLOC(q.F, n);
  KD_ALLOC(q.in_f, n);
  KD_ALLOC(q.g, n);
  KD_ALLOC(q.p, n);
  KD_ALLOC(q.ws, q.lws);
  kd_qp_start_(&q);
  q.face_opt = (q.k == 0);
  q.just_added = -1;
  q.kkt = INFINITY;
  for (int it = 0, stop = 0; it < max_iter && !stop; it++) {
    kd_qp_grad_(n, Q, c, w, q.F, q.k, q.g);
    if (!q.face_opt)
      KD_TRY(kd_qp_face_step_(&q, &stop));
    else
      kd_qp_enter_(&q, &stop);
  }
  KD_TRY(kd_qp_finish_(&q));
cleanup:
  free(q.F);
  free(q.in_f);
  free(q.g);
  free(q.p);
  free(q.ws);
  return err;
}

kd_err kd_simplex_qp(int n, const double *Q, const double *c, double tol, int max_iter, double *w) {
  return kd_qp_active_set_(n, Q, c, 1, tol, max_iter, w, NULL);
}

kd_err kd_simplex_qp_fac(int n, const double *Q, const double *c, double tol, int max_iter,
                         double *w, kd_qp_fac *f) {
  return kd_qp_active_set_(n, Q, c, 1, tol, max_iter, w, f);
}

kd_err kd_nonneg_qp(int n, const double *Q, const double *c, double tol, int max_iter, double *w) {
  return kd_qp_active_set_(n, Q, c, 0, tol, max_iter, w, NULL);
}
