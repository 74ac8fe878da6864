/* herding_impl.h - state shared by the kernel-herding / Frank-Wolfe family (src/algo/herding/).
 *
 * Problem (Tsuji & Tanaka eq. (2.1); BPCG paper Sec. 4): minimise F(nu) = 1/2 ||mu - nu||_K^2 over
 * nu = sum_i w_i k(x_i, .) with w in the simplex and x_i in a candidate set of m points whose rows
 * are split over the ranks. The gradient at nu, tested against the vertex k(c, .), is
 *   <grad F(nu), delta_c> = nu(c) - z(c),      z = kernel mean embedding of the target mu.
 *
 * Distribution. Every rank keeps, for its n_local candidates, z(c) (computed once) and the
 * gradient g(c) = nu(c) - z(c) with nu(c) = sum_i w_i k(c, x_i), updated in place from the kernel
 * column k(., x) of the one or two atoms a step touches (each rank evaluates only its own block of
 * the column; a pairwise step g += gamma (k_s - k_a) does not even read z). The linear
 * minimisation oracle is a local scan plus one kd_dist_argmin (ties: smallest global index). The
 * active set (atoms in insertion order, weights, Gram matrix K_S, z at the atoms) is small and
 * replicated: every rank computes the same away vertex, step size and small QP. Cost per step:
 * O(n_local d) kernel work + O(|S|^2); memory O(n_local (1 + cached columns) + |S|^2).
 *
 * Exact quantities from the replicated state: nu(x_i) = (K_S w)_i, and
 *   MMD^2 = zz - 2 w^T z_S + w^T K_S w,   FW gap = w^T (K_S w - z_S) - min_c (nu(c) - z(c)). */
#ifndef KDISTILL_HERDING_IMPL_H
#define KDISTILL_HERDING_IMPL_H

#include "kdistill/author/kd_algo.h"
#include "kdistill/author/kd_ckpt.h"
#include "la/la_impl.h" /* kd_nonneg_qp */

/** The common stopping / tracing keys every herding algorithm declares first (in this order);
 *  kd_herd_params_read stores them in kd_herd_params.stop. */
#define KD_HERD_COMMON_PARAMS                                                 \
  {"max_iter",                                                                \
   KD_PARAM_INT,                                                              \
   0,                                                                         \
   NULL,                                                                      \
   0,                                                                         \
   1e9,                                                                       \
   NULL,                                                                      \
   "maximum number of iterations (0: 1000; with max_atoms, 100 x max_atoms)", \
   KD_PARAM_AT(kd_herd_params, stop.max_iter)},                               \
      {"max_atoms",                                                           \
       KD_PARAM_INT,                                                          \
       0,                                                                     \
       NULL,                                                                  \
       0,                                                                     \
       1e9,                                                                   \
       NULL,                                                                  \
       "stop once the active set has this many atoms (0: no limit)",          \
       KD_PARAM_AT(kd_herd_params, stop.max_atoms)},                          \
      {"tol_mmd",                                                             \
       KD_PARAM_F64,                                                          \
       0,                                                                     \
       NULL,                                                                  \
       0,                                                                     \
       1e300,                                                                 \
       NULL,                                                                  \
       "stop once the MMD is <= tol_mmd",                                     \
       KD_PARAM_AT(kd_herd_params, stop.tol_mmd)},                            \
      {"tol_gap",                                                             \
       KD_PARAM_F64,                                                          \
       0,                                                                     \
       NULL,                                                                  \
       0,                                                                     \
       1e300,                                                                 \
       NULL,                                                                  \
       "stop once the Frank-Wolfe gap is <= tol_gap",                         \
       KD_PARAM_AT(kd_herd_params, stop.tol_gap)},                            \
      {"trace_every",                                                         \
       KD_PARAM_INT,                                                          \
       1,                                                                     \
       NULL,                                                                  \
       1,                                                                     \
       1e9,                                                                   \
       NULL,                                                                  \
       "record a trace row every this many iterations (and at the end)",      \
       KD_PARAM_AT(kd_herd_params, stop.trace_every)},                        \
  {                                                                           \
    "cache_mb", KD_PARAM_F64, 256, NULL, 0, 1e9, NULL,                        \
        "per-rank memory for cached kernel columns of active atoms (MiB)",    \
        KD_PARAM_AT(kd_herd_params, stop.cache_mb)                            \
  }
#define KD_HERD_N_COMMON 6

typedef struct {
  /* inputs (borrowed; in->comm is passed only to comm/ helpers) */
  const kd_algo_in *in;
  kd_kernel *kernel;
  const kd_pointset *cand;
  kd_target *target;
  int d;
  kd_gidx m;                /* candidates, global */
  kd_lidx nl;               /* candidates, this rank */
  kd_gidx off;              /* global index of the first local candidate */
  const double *rows;       /* local candidate rows [nl*d] */
  kd_kernel_packed *rows_p; /* the same rows packed for the kernel columns (kd_herd_column) */
  /* per-candidate state (local block) */
  double *z;     /* [nl] z(c) */
  double *g;     /* [nl] g(c) = nu_t(c) - z(c), the gradient tested against k(c, .) */
  double *kdiag; /* [nl] k(c, c) */
  double *col;   /* [nl] scratch column */
  double *col2;  /* [nl] scratch column */
  double zz;     /* int int k dmu dmu */
  /* replicated active set, atoms in insertion order */
  int n, cap;
  kd_gidx *idx; /* [cap] candidate global indices */
  double *x;    /* [cap*d] coordinates */
  double *w;    /* [cap] weights */
  double *zs;   /* [cap] z(x_i) */
  double *K;    /* [cap*cap] Gram matrix, row-major with leading dimension cap */
  double *kw;   /* [cap] (K_S w)_i = nu(x_i), refreshed by kd_herd_refresh */
  int *slot;    /* [cap] cache slot of atom i's column, -1 if not cached */
  /* column cache: n_slots columns of length nl (cache_mb); col_misses counts the columns of
   * active atoms evaluated again for want of a slot, n_peak the largest active set */
  int n_slots, slots_alloc;
  double *cache;
  char *slot_used;
  double cache_mb;
  int64_t col_misses;
  int n_peak;
  /* scalars refreshed by kd_herd_refresh */
  double wkw, wz, mmd2, mmd;
  /* run control: tol_gap for the iteration functions, done = 1 ends the run */
  double tol_gap;
  int done, qp_warned;
  /* a local failure (allocation, kernel block) that must not change this rank's control flow: it
   * is folded into the next LMO reduction (every rank then fails together) or agreed at the end */
  kd_err pending_err;
  double wmin_seen; /* smallest weight of any atom after any iteration (metric min_weight_seen) */
  /* local part of the next LMO, min_c (nu(c) - z(c)) over this rank's candidates (ties: smallest
   * index), computed in the same pass as the nu update of the hot steps; valid = 0 forces a scan */
  int lmin_valid, lmin_nan;
  double lmin_val;
  kd_gidx lmin_idx;
  /* the last LMO winner's row and z value, carried by the reduction itself when d <= 64
   * (kd_dist_argmin_pay): kd_herd_fetch of that index needs no broadcast; lmo_pay_g = -1: none */
  double lmo_pay[65];
  kd_gidx lmo_pay_g;
  /* counters */
  int64_t lmo_calls, n_fw_steps, n_pair_steps, n_away_steps, n_drop_steps;
  double t0;
  /* 1 once a signal (kd_interrupt_pending) was agreed over the ranks in an LMO reduction while
   * checkpointing is on: the driver checkpoints at the end of this iteration and stops */
  int interrupted;
  int stop_reason; /* kd_stop_reason, set when the driver stops */
  /* the Frank-Wolfe gap of every trace row (NaN where the algorithm has none): /herding/fw_gap */
  double *gap_trace;
  int64_t n_gap, cap_gap;
} kd_herd;

/** Common stopping keys, read from params. */
typedef struct {
  int64_t max_iter, max_atoms, trace_every;
  double tol_mmd, tol_gap, cache_mb;
} kd_herd_stop;

/** Why a herding run stopped (/metrics stop_reason; kd_stop_reason_name). */
int kd_herd_stop_reason(const kd_herd *h, const kd_herd_stop *st, int64_t it, double gap);

/** The typed parameters of the herding family: the common keys, then those of the algorithms that
 *  declare them (members of undeclared keys stay 0). */
typedef struct {
  kd_herd_stop stop;
  int64_t K_max;  /* accelerated herding (herding_accel.h) */
  double delta;   /* accelerated herding: truncation of the direction search */
  double K_sc, J; /* bpcg, bpcg_lazy */
} kd_herd_params;

/** Zero *hp and fill it from p (kd_params_fill). Local. */
kd_err kd_herd_params_read(const kd_params *p, kd_herd_params *hp);

/** Set up the state: checks the candidate set (>= 2 points), computes z (kd_target_embed), the
 *  diagonal and zz; empty active set. Collective over in->comm. Free with kd_herd_free. */
kd_err kd_herd_init(const kd_algo_in *in, double cache_mb, kd_herd *h);
void kd_herd_free(kd_herd *h);

/** Local scan + one kd_dist_argmin of score[] over all candidates (ties: smallest global index);
 *  *g gets the winner, *val its score. local_err is folded into the reduction. Collective. */
kd_err kd_herd_argmin(kd_herd *h, const double *score, kd_err local_err, double *val, kd_gidx *g);
/** Same with maximisation. Collective. */
kd_err kd_herd_argmax(kd_herd *h, const double *score, kd_err local_err, double *val, kd_gidx *g);
/** The global LMO: argmin_c nu(c) - z(c). Counts one LMO call. Collective. */
kd_err kd_herd_lmo(kd_herd *h, double *val, kd_gidx *g);
/** The prologue of a Frank-Wolfe iteration: the LMO vertex *g and the Frank-Wolfe gap
 *  *gap = <w, grad> - min grad; at a gap <= tol_gap the rule is optimal on the candidates and
 *  h->done is set (the caller returns). Collective. */
kd_err kd_herd_lmo_gap(kd_herd *h, double *gap, kd_gidx *g);

/** Fetch the coordinates x[d] and z(x) of candidate g from its owner (one broadcast).
 *  Collective. */
kd_err kd_herd_fetch(kd_herd *h, kd_gidx g, double *x, double *zx);
/** Kernel column k(x, c) over the local candidates into out[nl] (one fused block evaluation).
 *  A failure becomes h->pending_err (out filled with NaN), so ranks keep in step. Local. */
kd_err kd_herd_column(kd_herd *h, const double *x, double *out);
/** Column of active atom i: from the cache (pointer valid until the next kd_herd_add_atom), or
 * evaluated into scratch (which). *col points to it. Local. */
kd_err kd_herd_atom_column(kd_herd *h, int i, double *scratch, const double **col);

/** Position of candidate g in the active set, or -1. Local. */
int kd_herd_find(const kd_herd *h, kd_gidx g);
/** Append atom (g, x, zx) with weight 0; extends K (kernel row against the atoms) and caches its
 *  column if col != NULL and a slot is free. Returns its position in *pos. Collective when the
 *  active-set arrays grow (every rank grows at the same call; allocation failures are agreed). */
kd_err kd_herd_add_atom(kd_herd *h, kd_gidx g, const double *x, double zx, const double *col,
                        int *pos);
/** Ensure candidate g is an atom (fetching it if needed; collective in that case since every rank
 *  takes the same branch). *pos gets its position; *col_out (optional) its column (cached or in
 *  scratch). Collective. */
kd_err kd_herd_ensure_atom(kd_herd *h, kd_gidx g, double *scratch, const double **col_out,
                           int *pos);
/** Remove atom i (keeps the order of the others). Local. */
void kd_herd_remove_atom(kd_herd *h, int i);
/** Remove every atom with weight <= 0. Local. */
void kd_herd_prune(kd_herd *h);

/** Recompute kw = K_S w, wkw, wz, mmd2, mmd from the replicated state. Local. */
void kd_herd_refresh(kd_herd *h);
/** Rebuild g = sum_i w_i k(., x_i) - z over the local candidates from the atom columns (after a
 *  fully-corrective weight change). Local. */
kd_err kd_herd_rebuild_nu(kd_herd *h);

/** Make a small result computed redundantly on every rank identical everywhere: broadcast rank 0's
 *  v[0..n) and outcome `local`; returns rank 0's outcome on every rank (with its message). buf:
 *  scratch of n + 1 doubles. Collective. */
kd_err kd_herd_replicate(kd_herd *h, kd_err local, double *v, int n, double *buf);
/** Fully-corrective step: weights <- argmin F over the simplex on the active set
 *  (kd_simplex_qp_fac, the Cholesky factor of the face Hessian kept in fac from one step to the
 *  next), warm-started from the current weights, replicated from rank 0; zero-weight atoms are
 *  dropped (from fac too) and nu rebuilt. Collective. */
kd_err kd_herd_fc_weights(kd_herd *h, kd_qp_fac *fac);

/** Record the trace row / progress line for iteration it and check the common stopping rules
 *  (gap may be NaN when unknown). Returns 1 in *stop when a rule fired. A failed trace append
 *  becomes h->pending_err. Local. */
kd_err kd_herd_record(kd_herd *h, const kd_herd_stop *st, int64_t it, double gap, int force,
                      kd_result *out, int *stop);

/** Copy the active set into out (points, weights, indices), set out->mmd and the common metrics
 *  (lmo_calls, iterations, fw_gap, ...); agrees on pending errors first. Collective. */
kd_err kd_herd_output(kd_herd *h, int64_t iterations, double gap, kd_result *out);

/** One iteration of an algorithm: it = 1, 2, ...; *gap = FW gap computed in this iteration (NaN if
 *  none). Set h->done to finish (e.g. gap <= h->tol_gap, or no progress possible). Collective. */
typedef kd_err (*kd_herd_iter_fn)(kd_herd *h, void *ctx, int64_t it, double *gap);
/** Checkpoint / restart of an algorithm's own state between iterations (its ctx). save puts
 *  datasets under /state/algo/ into the state being written (replicated values; Local); load
 *  restores them with the typed getters of the resume state (Local; every rank sees the same
 *  state, so a failure is the same everywhere). */
typedef struct {
  kd_err (*save)(void *ctx, kd_ckpt *ck);
  kd_err (*load)(void *ctx, const kd_ckpt *ck);
} kd_herd_ctx_io;
/** The common driver: init, start vertex, iterate fn until a stopping rule fires, trace, output,
 *  with checkpointing and resumption through in->ckpt (kd_ckpt.h) of the shared
 *  state and, through io (optional), of the algorithm's ctx. A due
 *  checkpoint is written at the end of an iteration: every `every` iterations (kd_ckpt_create), and
 * once a signal was agreed (then the run returns KD_ERR_INTERRUPTED "interrupted at iteration N").
 *  State datasets (global order): /state/iteration, atoms, weights, points, z_atoms, gram, grad
 *  (nu - z at every candidate; significant on rank 0 only), counters, scalars. Collective. */
kd_err kd_herd_drive(const kd_algo_in *in, kd_result *out, kd_herd_iter_fn fn, void *ctx,
                     const kd_herd_ctx_io *io);

/* ---- steps (herding_steps.c); all Collective where they fetch a new atom, else Local ---- */
/** nu_1 = k(x_1, .) with x_1 = argmax_c z(c) (the LMO at nu = 0; ties: smallest index). */
kd_err kd_herd_start(kd_herd *h);
/** Gradient at atom i: <grad F, delta_{x_i}> = (K_S w)_i - z(x_i) (after kd_herd_refresh). */
double kd_herd_grad(const kd_herd *h, int i);
/** Away vertex a = argmax_{i in S, w_i > 0} grad_i and local FW vertex s = argmin_{i in S}
 *  grad_i (ties: first in order). Local. */
void kd_herd_away_local(const kd_herd *h, int *a, int *s);
/** <grad F, nu> = w^T (K_S w - z_S). Local. */
double kd_herd_wgrad(const kd_herd *h);
/** FW step nu <- (1-gamma) nu + gamma k(., x_v) toward atom v (added beforehand, weight may be
 *  0). gamma < 0: exact line search over [0, 1]. *gamma_out (optional) gets the step. Local. */
kd_err kd_herd_step_fw(kd_herd *h, int v, double gamma, double *gamma_out);
/** Pairwise step moving weight from atom a to atom s with exact line search over [0, w_a];
 *  *dropped = 1 if a left the active set. Local. */
kd_err kd_herd_step_pair(kd_herd *h, int a, int s, int *dropped);
/** Away step nu <- nu + gamma (nu - k(., x_a)), exact line search over [0, w_a/(1-w_a)];
 *  *dropped = 1 if a left. Local. */
kd_err kd_herd_step_away(kd_herd *h, int a, int *dropped);

#endif
