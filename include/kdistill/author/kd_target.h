/* kd_target.h - the measure mu being compressed, through its kernel mean embedding
 * z(x) = int k(x,y) dmu(y) and its double integral zz = int int k dmu dmu, and the exact MMD
 *   MMD^2(w, X) = zz - 2 w^T z(X) + w^T K(X,X) w.
 * A target is closed form (kernel x measure pair with a formula) or empirical (a weighted point set
 * distributed over ranks). All calls are Collective over the target's communicator. */
#ifndef KDISTILL_KD_TARGET_H
#define KDISTILL_KD_TARGET_H

#include "kd_kernel.h"
#include "kd_pointset.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kd_target kd_target;

/** Closed-form target for (kernel, measure). KD_ERR_UNSUPPORTED (message names both) if the pair
 *  has no closed form. Supported: gaussian x {gaussian, uniform_box, gaussian_mixture,
 *  trunc_gaussian}; sobolev x torus; energy x sphere (d = 3). kernel and measure are borrowed /
 *  copied respectively; comm is borrowed. Collective (no traffic). */
kd_err kd_target_create_closed(MPI_Comm comm, kd_kernel *k, const kd_measure *m, kd_target **out);
/** Empirical target: the (weighted) point set pts (borrowed, must outlive the target). If
 *  skip_self != 0 the double sum zz is not computed; kd_target_self then reports unavailable.
 *  Collective (no traffic). */
kd_err kd_target_create_empirical(kd_kernel *k, const kd_pointset *pts, int skip_self,
                                  kd_target **out);
/** Stein target for a Stein kernel (kernel `stein`, points (x, s(x))): its kernel mean embedding
 *  and double integral are 0, so kd_mmd reports the kernel Stein discrepancy
 *  KSD(w, X) = sqrt(w^T K_p(X, X) w). k is borrowed and must be a Stein kernel (KD_ERR_CONFIG
 *  otherwise, message names target.type); comm is borrowed. Collective (no traffic). */
kd_err kd_target_create_stein(MPI_Comm comm, kd_kernel *k, kd_target **out);
void kd_target_destroy(kd_target **t);

int kd_target_is_closed(const kd_target *t);
/** The generator measure, or NULL (empirical targets). */
const kd_measure *kd_target_measure(const kd_target *t);
/** The empirical point set, or NULL (closed-form targets). */
const kd_pointset *kd_target_points(const kd_target *t);
kd_kernel *kd_target_kernel(const kd_target *t);
MPI_Comm kd_target_comm(const kd_target *t);
int kd_target_dim(const kd_target *t);

/** z at the local rows of a distributed point set X (same communicator): z_local[n_local(X)].
 *  Empirical targets pass target blocks around a ring: O(N m / p) work, O(N d / p) memory. */
kd_err kd_target_embed(kd_target *t, const kd_pointset *X, double *z_local);
/** z at n rows X[n*d] that every rank holds identically; z[n] returned on every rank. */
kd_err kd_target_embed_rows(kd_target *t, const double *X, kd_lidx n, double *z);
/** zz = int int k dmu dmu, exact (cached after the first call). *available = 0 when the mode is
 *  skip or estimate (algorithms that need zz itself, e.g. herding, then refuse). */
kd_err kd_target_self(kd_target *t, double *zz, int *available);

/** How an empirical target's double sum zz = sum_ij v_i v_j k(y_i, y_j) enters the MMD
 *  (config `target.self`). Closed-form and Stein targets are always exact. */
typedef enum {
  KD_SELF_AUTO = 0, /* exact when N (N + 1) / 2 <= KD_SELF_EXACT_EVALS or zz is already known,
                       else fgt for the gaussian kernel in d <= 2 unless its cell pairs cost
                       more than its moment pass and 3 KD_SELF_EXACT_EVALS terms, else
                       estimate */
  KD_SELF_EXACT,    /* the exact double sum (N^2 / 2 kernel evaluations) */
  KD_SELF_ESTIMATE, /* an unbiased estimate from sampled target rows, with its standard error */
  KD_SELF_SKIP,     /* not computed: the MMD is NaN, MMD^2 - zz is reported */
  KD_SELF_FGT       /* gaussian kernel, d <= KD_FGT_DMAX: the whole MMD^2 by the fast Gauss
                       transform in O(N) work, exact to an a priori bound (KD_MMD_BOUNDED) */
} kd_self_mode;

/** Most kernel evaluations, N (N + 1) / 2, that `auto` spends on an empirical target's exact double
 *  sum (2^28: up to 23169 rows, ~0.1 s on one core at d = 2). The rule counts evaluations, never
 *  time, so the choice, and with it the output, is the same on every machine and rank count. */
#define KD_SELF_EXACT_EVALS 268435456.0

/** How an MMD value was obtained. */
typedef enum {
  KD_MMD_EXACT = 0,
  KD_MMD_ESTIMATE = 1,
  KD_MMD_SKIPPED = 2,
  KD_MMD_BOUNDED = 3 /* exact to a stated a priori bound (the fast Gauss transform) */
} kd_mmd_method;

/** Highest dimension target.self: fgt handles, and its default tolerance: the bound on
 *  |MMD^2 error| from truncation and cutoff stays below tol (sum |q|)^2, q the signed measure
 *  (target weights, minus the rule's), 4 tol for a probability target and a convex rule; the
 *  worst-case rounding term comes on top. */
#define KD_FGT_DMAX 5
#define KD_FGT_TOL_DEFAULT 1e-12

/** An MMD with its provenance (kd_mmd_eval). With KD_MMD_ESTIMATE, mmd2 is unbiased for MMD^2
 *  and mmd2_se its standard error; mmd_se = sqrt(max(mmd2, 0) + mmd2_se) - mmd, which is the
 *  delta-method error mmd2_se / (2 mmd) when mmd2 >> mmd2_se and sqrt(mmd2_se) near 0. Exact:
 *  both errors 0. Skipped: mmd, mmd2, errors NaN. mmd2_minus_self = w^T K w - 2 w^T z, exact,
 *  or NaN when the estimate sampled the cross term w^T z (kd_target_set_cross). rows: target rows
 *  sampled (estimate), else 0; cross_rows: rule atoms sampled for w^T z, else 0. */
typedef struct {
  double mmd, mmd2, mmd_se, mmd2_se, mmd2_minus_self;
  kd_mmd_method method;
  int64_t rows;
  int64_t cross_rows;
  double mmd2_bound, mmd_bound; /* KD_MMD_BOUNDED: |mmd2 - MMD^2| <= mmd2_bound and
                                   |mmd - MMD| <= mmd_bound; else 0 */
  int fgt_order;                /* KD_MMD_BOUNDED: the expansions' total order P, else 0 */
  int64_t fgt_cells;            /* ... and the occupied cells */
} kd_mmd_info;

/** Choose how an empirical target's zz is obtained: mode, sampled rows for the estimate (0: as
 *  many as the rule has atoms, at least 256 and at most ~2^28 / N: the estimate then costs about
 *  what the rule's exact cross term costs) and the seed of the row sample. Closed
 *  and Stein targets ignore it. Local (call it identically on every rank). */
kd_err kd_target_set_self(kd_target *t, kd_self_mode mode, int64_t rows, uint64_t seed);
/** How an estimated MMD (KD_MMD_ESTIMATE) obtains the cross term w^T z(X) of a rule of n atoms
 *  against an empirical target of N rows (config `target.cross`): n N kernel evaluations when
 *  exact, which at 2^26 rows and a 2^13-atom coreset costs more than thinning. */
typedef enum {
  KD_CROSS_AUTO = 0, /* exact unless n N > KD_CROSS_EXACT_MAX and n exceeds the sampled rows */
  KD_CROSS_EXACT,    /* exact: n N kernel evaluations */
  KD_CROSS_ESTIMATE  /* atoms sampled with probabilities |w_i|, the witness exact at each */
} kd_cross_mode;

/** Largest n N for which `auto` computes the cross term of an estimated MMD exactly (2^36). */
#define KD_CROSS_EXACT_MAX 68719476736.0

/** Choose how an estimated MMD obtains the cross term (the sample size and seed are those of
 *  kd_target_set_self). Local (call it identically on every rank). */
kd_err kd_target_set_cross(kd_target *t, kd_cross_mode mode);
/** The tolerance of target.self: fgt (KD_FGT_TOL_DEFAULT when 0; config `target.fgt_tol`), in
 *  [1e-15, 1e-2]. Local (call it identically on every rank). */
kd_err kd_target_set_fgt_tol(kd_target *t, double tol);
/** The method kd_mmd_eval would use now (depends on the mode, N and whether zz is known). Local. */
kd_mmd_method kd_target_mmd_method(const kd_target *t);

/** MMD of the rule (X[n*d], w[n]), replicated on every rank, against the target, exact or
 *  estimated as kd_target_mmd_method says; identical bits on every rank. Collective. */
kd_err kd_mmd_eval(kd_target *t, const double *X, const double *w, kd_lidx n, kd_mmd_info *info);

/** kd_mmd_eval returning sqrt(max(MMD^2, 0)) in *mmd and the raw MMD^2 in *mmd2 (optional); when
 *  zz is skipped, *mmd is NaN and *mmd2 holds MMD^2 - zz. Collective. */
kd_err kd_mmd(kd_target *t, const double *X, const double *w, kd_lidx n, double *mmd, double *mmd2);

#ifdef __cplusplus
}
#endif
#endif
