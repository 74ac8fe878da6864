/* target.c - target objects (closed form or empirical), their embeddings, and the exact MMD of a
 * weighted rule (X, w) against the target (e.g. Gretton et al.'s MMD in its kernel-mean form):
 *   MMD^2 = zz - 2 w^T z(X) + w^T K(X,X) w,  z(x) = int k(x,y) dmu(y),  zz = int int k dmu dmu. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "embed/target_impl.h"

kd_err kd_target_create_closed(MPI_Comm comm, kd_kernel *k, const kd_measure *m, kd_target **out) {
  kd_err err = KD_OK;
  kd_target *t = NULL;
  char why[400];
  KD_CHECK(out && k && m, KD_ERR_ARG, "target: NULL argument");
  *out = NULL;
  KD_TRY(kd_measure_validate(m, "target"));
  KD_CHECK(kd_kernel_dim(k) == m->d, KD_ERR_ARG,
           "target: kernel dimension %d does not match measure dimension %d", kd_kernel_dim(k),
           m->d);
  if (!kd_target_closed_supported_(k, m, why, (int)sizeof why))
    KD_FAIL(KD_ERR_UNSUPPORTED, "%s", why);
  KD_ALLOC(t, 1);
  t->closed = 1;
  t->comm = comm;
  t->k = k;
  KD_TRY(kd_measure_copy(m, &t->m));
  *out = t;
  t = NULL;
cleanup:
  kd_target_destroy(&t);
  return err;
}

kd_err kd_target_create_empirical(kd_kernel *k, const kd_pointset *pts, int skip_self,
                                  kd_target **out) {
  kd_err err = KD_OK;
  kd_target *t = NULL;
  KD_CHECK(out && k && pts, KD_ERR_ARG, "target: NULL argument");
  *out = NULL;
  KD_CHECK(kd_kernel_dim(k) == kd_pointset_dim(pts), KD_ERR_ARG,
           "target: kernel dimension %d does not match the target points' dimension %d",
           kd_kernel_dim(k), kd_pointset_dim(pts));
  KD_CHECK(kd_pointset_n_global(pts) > 0, KD_ERR_INPUT, "target: the target point set is empty");
  KD_ALLOC(t, 1);
  t->closed = 0;
  t->comm = kd_pointset_comm(pts);
  t->k = k;
  t->pts = pts;
  t->self_mode = skip_self ? KD_SELF_SKIP : KD_SELF_AUTO;
  *out = t;
  t = NULL;
cleanup:
  kd_target_destroy(&t);
  return err;
}

void kd_target_destroy(kd_target **t) {
  if (!t || !*t) return;
  kd_measure_free(&(*t)->m);
  free((*t)->own_head);
  free((*t)->own_wu);
  free(*t);
  *t = NULL;
}

int kd_target_is_closed(const kd_target *t) { return t->closed; }
const kd_measure *kd_target_measure(const kd_target *t) { return t->closed ? &t->m : NULL; }
const kd_pointset *kd_target_points(const kd_target *t) { return t->closed ? NULL : t->pts; }
kd_kernel *kd_target_kernel(const kd_target *t) { return t->k; }
MPI_Comm kd_target_comm(const kd_target *t) { return t->comm; }
int kd_target_dim(const kd_target *t) { return kd_kernel_dim(t->k); }

kd_err kd_target_embed(kd_target *t, const kd_pointset *X, double *z_local) {
  kd_err err = KD_OK;
  KD_CHECK(t && X, KD_ERR_ARG, "target: NULL argument");
  KD_CHECK(kd_pointset_dim(X) == kd_target_dim(t), KD_ERR_ARG,
           "target: points of dimension %d, target of dimension %d", kd_pointset_dim(X),
           kd_target_dim(t));
  KD_CHECK(kd_dist_size(kd_pointset_comm(X)) == kd_dist_size(t->comm), KD_ERR_ARG,
           "target: the point set and the target live on communicators of different sizes");
  if (t->stein)
    memset(z_local, 0, sizeof(double) * (size_t)kd_pointset_n_local(X));
  else if (t->closed)
    KD_TRY(kd_target_closed_embed_(t, kd_pointset_rows_const(X), kd_pointset_n_local(X), z_local));
  else
    KD_TRY(kd_target_emp_embed_(t, kd_pointset_rows_const(X), kd_pointset_n_local(X), z_local));
cleanup:
  return err;
}

kd_err kd_target_embed_rows(kd_target *t, const double *X, kd_lidx n, double *z) {
  kd_err err = KD_OK;
  KD_CHECK(t && n >= 0 && (n == 0 || (X && z)), KD_ERR_ARG, "target: bad rows argument");
  if (t->stein)
    memset(z, 0, sizeof(double) * (size_t)n);
  else if (t->closed)
    KD_TRY(kd_target_closed_embed_(t, X, n, z));
  else
    KD_TRY(kd_target_emp_embed_rows_(t, X, n, z));
cleanup:
  return err;
}

kd_err kd_target_set_self(kd_target *t, kd_self_mode mode, int64_t rows, uint64_t seed) {
  kd_err err = KD_OK;
  KD_CHECK(t, KD_ERR_ARG, "target: NULL argument");
  KD_CHECK(mode >= KD_SELF_AUTO && mode <= KD_SELF_FGT && rows >= 0, KD_ERR_ARG,
           "target: self mode %d with %lld rows", (int)mode, (long long)rows);
  t->self_mode = mode;
  t->self_rows = rows;
  t->self_seed = seed;
cleanup:
  return err;
}

kd_err kd_target_set_fgt_tol(kd_target *t, double tol) {
  kd_err err = KD_OK;
  KD_CHECK(t, KD_ERR_ARG, "target: NULL argument");
  KD_CHECK(tol == 0.0 || (tol >= 1e-15 && tol <= 1e-2), KD_ERR_ARG,
           "target: fgt tolerance %g outside [1e-15, 1e-2]", tol);
  t->fgt_tol = tol;
cleanup:
  return err;
}

kd_err kd_target_set_cross(kd_target *t, kd_cross_mode mode) {
  kd_err err = KD_OK;
  KD_CHECK(t, KD_ERR_ARG, "target: NULL argument");
  KD_CHECK(mode >= KD_CROSS_AUTO && mode <= KD_CROSS_ESTIMATE, KD_ERR_ARG, "target: cross mode %d",
           (int)mode);
  t->cross_mode = mode;
cleanup:
  return err;
}

/* 1 when zz is cached for the kernel's current length scale. */
static int kd_target_zz_known_(const kd_target *t) {
  return t->zz_done && t->zz_ls == kd_kernel_get_params(t->k)->ls;
}

/* 1 when target.self: auto computes the double sum over N rows exactly (KD_SELF_EXACT_EVALS) */
static int kd_self_exact_auto_(kd_gidx N) {
  return (double)N * ((double)N + 1.0) / 2.0 <= KD_SELF_EXACT_EVALS;
}

kd_mmd_method kd_target_mmd_method(const kd_target *t) {
  if (t->closed || t->stein) return KD_MMD_EXACT;
  switch (t->self_mode) {
    case KD_SELF_EXACT:
      return KD_MMD_EXACT;
    case KD_SELF_ESTIMATE:
      return KD_MMD_ESTIMATE;
    case KD_SELF_SKIP:
      return KD_MMD_SKIPPED;
    case KD_SELF_FGT:
      return KD_MMD_BOUNDED;
    default: /* auto: a BOUNDED that finds no cheap plan becomes an ESTIMATE (kd_mmd_eval) */
      if (kd_self_exact_auto_(kd_pointset_n_global(t->pts)) || kd_target_zz_known_(t))
        return KD_MMD_EXACT;
      return kd_target_fgt_kernel_ok_(t) && kd_target_dim(t) <= 2 ? KD_MMD_BOUNDED
                                                                  : KD_MMD_ESTIMATE;
  }
}

kd_err kd_target_self(kd_target *t, double *zz, int *available) {
  kd_err err = KD_OK;
  KD_CHECK(t && zz && available, KD_ERR_ARG, "target: NULL argument");
  if (!t->closed && !t->stein &&
      (t->self_mode == KD_SELF_SKIP || t->self_mode == KD_SELF_ESTIMATE ||
       t->self_mode == KD_SELF_FGT)) {
    *zz = NAN;
    *available = 0;
    return KD_OK;
  }
  const double ls = kd_kernel_get_params(t->k)->ls;
  if (!kd_target_zz_known_(t)) {
    double v = 0.0;
    if (t->stein)
      v = 0.0;
    else if (t->closed)
      KD_TRY(kd_target_closed_self_(t, &v));
    else
      KD_TRY(kd_target_emp_self_(t, &v));
    t->zz = v;
    t->zz_ls = ls;
    t->zz_done = 1;
  }
  *zz = t->zz;
  *available = 1;
cleanup:
  return err;
}

/* A computed MMD^2 that is NaN or infinite is an overflow of finite inputs (the kernel's values
 * for coordinates near 1e160, weights near 1e308), never an MMD of 0: refused naming the cause.
 * A slightly negative MMD^2 (rounding) stays clamped to 0 by the callers. Every rank holds the
 * same bits of mmd2 (broadcast or computed on replicated values), so no agreement is needed. */
static kd_err kd_mmd_finite_(const kd_target *t, const double *w, kd_lidx n,
                             const kd_mmd_info *info) {
  kd_err err = KD_OK;
  const int bounded = info->method == KD_MMD_BOUNDED;
  if (info->method == KD_MMD_SKIPPED ||
      (isfinite(info->mmd2) && (!bounded || isfinite(info->mmd2_bound))))
    return KD_OK;
  const double bad = isfinite(info->mmd2) ? info->mmd2_bound : info->mmd2;
  const char *what = isfinite(info->mmd2) ? "the bound of MMD^2" : "MMD^2";
  double s = 0.0;
  for (kd_lidx i = 0; i < n; i++) {
    s += fabs(w[i]);
    KD_CHECK(isfinite(s), KD_ERR_NUMERIC,
             "mmd: %s is %s because the rule's weights overflow: their sum in absolute "
             "value is infinite at row %lld (weight %g); rescale the weights to sum to 1",
             what, isnan(bad) ? "nan" : "inf", (long long)i + 1, w[i]);
  }
  KD_FAIL(KD_ERR_NUMERIC,
          "mmd: %s is %s: the kernel %s overflows double precision on these points or "
          "the target's; rescale the data (e.g. standardise it)",
          what, isnan(bad) ? "nan" : "inf", kd_kernel_describe(t->k));
cleanup:
  return err;
}

kd_err kd_mmd_eval(kd_target *t, const double *X, const double *w, kd_lidx n, kd_mmd_info *info) {
  kd_err err = KD_OK, lerr = KD_OK;
  double *z = NULL, *y = NULL, *yall = NULL;
  KD_CHECK(t && X && w && info && n >= 1, KD_ERR_ARG, "mmd: need a rule with n >= 1 points");
  MPI_Comm comm = t->comm;
  const int p = kd_dist_size(comm), rank = kd_dist_rank(comm);
  double zz = 0.0;
  int avail = 0, applied = 0;
  kd_mmd_method method = kd_target_mmd_method(t);
  memset(info, 0, sizeof *info);
  if (method == KD_MMD_BOUNDED) {
    KD_TRY(kd_target_emp_fgt_(t, X, w, n, t->self_mode == KD_SELF_FGT, info, &applied));
    if (applied) return kd_mmd_finite_(t, w, n, info);
    method = KD_MMD_ESTIMATE; /* auto, and no plan costs less than the exact double sum */
  }
  const int cross = method == KD_MMD_ESTIMATE && kd_target_emp_cross_sampled_(t, n);
  /* w^T K(X,X) w: rank r does rows [n r/p, n (r+1)/p) against all of X; the row values are
   * gathered and summed in row order on every rank, so the sum does not depend on p. */
  const kd_lidx r0 = (kd_lidx)((int64_t)n * rank / p), r1 = (kd_lidx)((int64_t)n * (rank + 1) / p);
  const int d = kd_target_dim(t);
  z = calloc((size_t)n, sizeof(double));
  yall = calloc((size_t)n, sizeof(double));
  y = calloc((size_t)(r1 - r0) + 1, sizeof(double));
  if (!z || !yall || !y)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "mmd: cannot allocate %lld doubles",
                      (long long)n);
  KD_TRY(kd_dist_agreed(comm, lerr));
  if (!cross) KD_TRY(kd_target_embed_rows(t, X, n, z)); /* else z = 0 and wz unused */
  if (method == KD_MMD_EXACT) KD_TRY(kd_target_self(t, &zz, &avail));
  if (r1 > r0) lerr = kd_kernel_matvec(t->k, X + (size_t)r0 * d, r1 - r0, X, n, w, 0.0, y);
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_allgatherv(comm, y, r1 - r0, yall));
  double wz = 0.0, cz = 0.0, wkw = 0.0, ck = 0.0;
  for (kd_lidx i = 0; i < n; i++) {
    double a = w[i] * z[i], b = w[i] * yall[i], s;
    s = wz + a;
    cz += fabs(wz) >= fabs(a) ? (wz - s) + a : (a - s) + wz;
    wz = s;
    s = wkw + b;
    ck += fabs(wkw) >= fabs(b) ? (wkw - s) + b : (b - s) + wkw;
    wkw = s;
  }
  wz += cz;
  wkw += ck;
  if (method == KD_MMD_ESTIMATE) {
    KD_TRY(kd_target_emp_estimate_(t, X, w, n, cross ? yall : NULL, wz, wkw, info));
  } else {
    double res[2];
    if (avail) {
      res[1] = (zz + wkw) - 2.0 * wz;
      res[0] = sqrt(res[1] > 0.0 ? res[1] : 0.0);
    } else {
      res[1] = NAN;
      res[0] = NAN;
    }
    KD_TRY(kd_dist_bcast(comm, res, (int64_t)sizeof res, 0)); /* identical bits on every rank */
    info->mmd = res[0];
    info->mmd2 = res[1];
    info->method = avail ? KD_MMD_EXACT : KD_MMD_SKIPPED;
    info->mmd_se = info->mmd2_se = avail ? 0.0 : NAN;
  }
  info->mmd2_minus_self = cross ? NAN : wkw - 2.0 * wz;
  KD_TRY(kd_mmd_finite_(t, w, n, info));
cleanup:
  free(z);
  free(y);
  free(yall);
  return err;
}

kd_err kd_mmd(kd_target *t, const double *X, const double *w, kd_lidx n, double *mmd,
              double *mmd2) {
  kd_err err = KD_OK;
  kd_mmd_info info;
  KD_CHECK(mmd, KD_ERR_ARG, "mmd: NULL argument");
  KD_TRY(kd_mmd_eval(t, X, w, n, &info));
  *mmd = info.mmd;
  if (mmd2) *mmd2 = info.method == KD_MMD_SKIPPED ? info.mmd2_minus_self : info.mmd2;
cleanup:
  return err;
}
