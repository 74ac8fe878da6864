/* target_impl.h - the target struct and the helpers shared by the files of src/embed/ only.
 *   closed.c     closed-form kernel mean embeddings z(x) and double integrals zz
 *   empirical.c  weighted point sets distributed over ranks (ring passes of target blocks)
 *   target.c     creation, accessors and the MMD (exact, or estimated: self_estimate.c, or
 *                exact to a bound by the fast Gauss transform: fgt.c)
 *     MMD^2(w, X) = zz - 2 w^T z(X) + w^T K(X,X) w. */
#ifndef KDISTILL_TARGET_IMPL_H
#define KDISTILL_TARGET_IMPL_H

#include <math.h>

#include "kdistill/author/kd_target.h"

struct kd_target {
  int closed;               /* 1: closed form (measure m), 0: empirical (points pts) */
  MPI_Comm comm;            /* borrowed (the caller's, or the point set's) */
  kd_kernel *k;             /* borrowed */
  kd_measure m;             /* owned copy (closed form) */
  const kd_pointset *pts;   /* borrowed (empirical) */
  kd_self_mode self_mode;   /* empirical: how zz enters the MMD (kd_target_set_self) */
  int64_t self_rows;        /* ... rows sampled for the estimate (0: budget) */
  uint64_t self_seed;       /* ... seed of the row sample */
  kd_cross_mode cross_mode; /* empirical: how an estimate obtains w^T z (kd_target_set_cross) */
  int zz_done;              /* zz cached ... */
  double zz, zz_ls;         /* ... for the kernel length scale zz_ls (recomputed if ls changes) */
  int own_done;             /* empirical: this rank's chunk-aligned set built (empirical.c): */
  kd_lidx own_n;            /* ... its rows, */
  kd_lidx own_pre;          /* ... of which the first own_pre come from the previous ranks, */
  kd_lidx own_nh;           /* ... the first own_nh (0, or the first chunk when own_pre > 0) */
  double *own_head;         /* ... packed here as [own_nh rows | own_nh weights]; the rest are a
                               view on the point set's local rows (row i: local row i - own_pre) */
  double *own_wu;           /* ... 2048 copies of 1/N (unweighted point sets) */
  int zz0_done;             /* empirical: the own set's part of zz (step 0 of its ring) ... */
  double zz0[2], zz0_ls;    /* ... as (sum, compensation), kept by the symmetric embedding at
                               the set's own rows for kd_target_emp_self_, for length scale zz0_ls */
  int stein;                /* 1: Stein target (stein.c): z = 0, zz = 0, so the MMD is the KSD */
  double fgt_tol;           /* target.self: fgt's tolerance (0: KD_FGT_TOL_DEFAULT) */
};

/** Neumaier's compensated sum: (*s, *c) += v; the value is *s + *c. */
static inline void kd_neu_add_(double *s, double *c, double v) {
  const double t = *s + v;
  if (fabs(*s) >= fabs(v))
    *c += (*s - t) + v;
  else
    *c += (v - t) + *s;
  *s = t;
}

/** 1 if (kernel, measure) has a closed form here; otherwise 0 and a reason in why[nwhy]. Local. */
int kd_target_closed_supported_(const kd_kernel *k, const kd_measure *m, char *why, int nwhy);
/** Closed-form z at n rows X[n*d]. Local. */
kd_err kd_target_closed_embed_(const kd_target *t, const double *X, kd_lidx n, double *z);
/** Closed-form zz. Local. */
kd_err kd_target_closed_self_(const kd_target *t, double *zz);

/** Build this rank's chunk-aligned set of target rows (once). Collective. */
kd_err kd_target_emp_own_(kd_target *t);
/** Rows of this rank's chunk-aligned set starting at row j0 (a multiple of 2048, < own_n): the
 *  chunk's rows in *X, its weights in *w; returns its length. Local, after kd_target_emp_own_. */
kd_lidx kd_target_emp_chunk_(const kd_target *t, kd_lidx j0, const double **X, const double **w);
/** Empirical z at the local rows of a distributed X (ring). Collective. */
kd_err kd_target_emp_embed_(kd_target *t, const double *Xl, kd_lidx nl, double *z);
/** Empirical z at replicated rows (local block contribution + sum). Collective. */
kd_err kd_target_emp_embed_rows_(kd_target *t, const double *X, kd_lidx n, double *z);
/** Empirical zz = w^T K w over the distributed set (ring over half the block pairs). Collective. */
kd_err kd_target_emp_self_(kd_target *t, double *zz);

/** 1 when an estimate of the MMD of an n-atom rule samples its cross term w^T z (cross_mode,
 *  KD_CROSS_EXACT_MAX). Local. */
int kd_target_emp_cross_sampled_(const kd_target *t, kd_lidx n);
/** The estimate of MMD^2 of the rule (X[n*d], w[n]) from sampled target rows (self_estimate.c),
 *  given wkw = w^T K w exact and either wz = w^T z(X) exact (zq NULL) or zq[n] = K(X, X) w, the
 *  rule's embedding at its atoms, for the sampled cross term (wz unused); fills info.
 *  Collective. */
kd_err kd_target_emp_estimate_(kd_target *t, const double *X, const double *w, kd_lidx n,
                               const double *zq, double wz, double wkw, kd_mmd_info *info);

/** out[i] = the compensated sum over ranks, in rank order, of every rank's (s[i], c[i]) pairs
 *  (Neumaier), i < n; out may be s. Collective. */
kd_err kd_target_sum_pairs_(MPI_Comm comm, const double *s, const double *c, int64_t n,
                            double *out);
/** 1 when the fast Gauss transform can evaluate this target's MMD (empirical, gaussian kernel,
 *  d <= KD_FGT_DMAX). Local. */
int kd_target_fgt_kernel_ok_(const kd_target *t);
/** The MMD of the rule (X[n*d], w[n]) by the fast Gauss transform (fgt.c), method
 *  KD_MMD_BOUNDED, with *applied = 1; *applied = 0 and info untouched when no cell grid fits or,
 *  unless force, d > 2 or the cell pairs cost too much (kd_self_mode's auto); with force, a grid
 *  that does not fit or another kernel is KD_ERR_CONFIG naming target.self. Collective. */
kd_err kd_target_emp_fgt_(kd_target *t, const double *X, const double *w, kd_lidx n, int force,
                          kd_mmd_info *info, int *applied);

/** n Gauss-Legendre nodes x[n] and weights w[n] on [-1, 1] (Newton on P_n). Local. */
void kd_target_gauss_legendre_(int n, double *x, double *w);

#endif
