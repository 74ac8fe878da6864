/* kd_kernel.h - positive-definite kernels as a vtable of pure block evaluations.
 * Points are rows of row-major arrays (n x d). All evaluations are Local and count kernel
 * evaluations in the kernel object (kd_kernel_evals). */
#ifndef KDISTILL_KD_KERNEL_H
#define KDISTILL_KD_KERNEL_H

#include "kd_pointset.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(enum, config name, summary) */
#define KD_KERNEL_LIST(X)                                                                      \
  X(KD_KERNEL_GAUSSIAN, "gaussian", "exp(-|x-y|^2 / (2 ls^2))")                                \
  X(KD_KERNEL_LAPLACE, "laplace", "exp(-|x-y| / ls)")                                          \
  X(KD_KERNEL_IMQ, "imq", "(1 + |x-y|^2 / ls^2)^(-beta)")                                      \
  X(KD_KERNEL_MATERN12, "matern12", "exp(-r/ls)")                                              \
  X(KD_KERNEL_MATERN32, "matern32", "(1 + sqrt3 r/ls) exp(-sqrt3 r/ls)")                       \
  X(KD_KERNEL_MATERN52, "matern52", "(1 + sqrt5 r/ls + 5r^2/(3ls^2)) exp(-sqrt5 r/ls)")        \
  X(KD_KERNEL_LINEAR, "linear", "<x,y> + c")                                                   \
  X(KD_KERNEL_POLYNOMIAL, "polynomial", "(<x,y>/ls^2 + c)^degree")                             \
  X(KD_KERNEL_SOBOLEV, "sobolev", "periodic Sobolev order r on [0,1)^d")                       \
  X(KD_KERNEL_ENERGY, "energy", "8/3 - |x-y|")                                                 \
  X(KD_KERNEL_ATTENTION, "attention", "exp(<k,k'>/ls^2) <v,v'>, point = (k[dk], v)")           \
  X(KD_KERNEL_STEIN, "stein", "Langevin Stein kernel of a base kernel, point = (x, score(x))") \
  X(KD_KERNEL_DEEP, "deep",                                                                    \
    "[(1-eps) exp(-|u-u'|^2/(2 ls_phi^2)) + eps] exp(-|x-x'|^2/(2 ls^2)), point = (x[dx], u)") \
  X(KD_KERNEL_GAUSSIAN_SUM, "gaussian_sum",                                                    \
    "(1/L) sum_j exp(-|x-y|^2/(2 ls_j^2)), ls_j = ls ls_ratio^(j-(L-1)/2), L = n_ls")

typedef enum {
#define KD_KERNEL_ENUM_(e, n, s) e,
  KD_KERNEL_LIST(KD_KERNEL_ENUM_)
#undef KD_KERNEL_ENUM_
      KD_KERNEL_COUNT_
} kd_kernel_type;

/** Kernel parameters (config section `kernel:`). Unused fields are ignored by a family. */
typedef struct {
  kd_kernel_type type;
  double ls;             /* length scale (bandwidth); > 0 */
  int ls_median;         /* 1: ls is set by kd_kernel_set_median_ls before use; 2: 'auto' (stein:
                          * kd_kernel_stein_autotune, or the median if it cannot) */
  int64_t median_sample; /* rows the median heuristic looks at (kernel.median_sample) */
  double beta;           /* IMQ exponent (default 0.5) */
  double c;              /* linear / polynomial offset */
  int degree;            /* polynomial degree */
  int order;             /* Sobolev order r in {1,2,3} */
  int dk;                /* attention: key dimension (value dimension = d - dk) */
  /* stein: the base kernel (KD_KERNEL_GAUSSIAN, _IMQ or _MATERN52; ls and beta are its
   * parameters); points are rows (x, s(x)) of width d = 2 d_x, s = grad log p */
  kd_kernel_type base;
  /* deep (Liu et al. 2020; Low-Rank Thinning Eq. 43): rows (x[dx], u = phi(x)[d - dx]); ls is the
   * length scale of x, ls_phi that of the embedding u (ls_phi_median: set by the median heuristic
   * on the embedding columns), eps in [0, 1] the weight of the plain Gaussian on x */
  int dx;
  double eps;
  double ls_phi;
  int ls_phi_median;
  /* gaussian_sum: the mean of n_ls Gaussians at ls ls_ratio^(j - (n_ls-1)/2), j < n_ls (the
   * kernel goodpoints' aggregated test compresses with) */
  int n_ls;
  double ls_ratio;
} kd_kernel_params;

/** Length scales at most: of one gaussian_sum kernel (n_ls), and so of one aggregated test (ctt
 *  algorithm actt, whose `compression: sum` is that kernel). */
#define KD_KERNEL_MAX_LS 64

typedef struct kd_kernel kd_kernel;

const char *kd_kernel_name(kd_kernel_type t);
/** KD_KERNEL_COUNT_ if unknown. */
kd_kernel_type kd_kernel_from_name(const char *name);
/** Default parameters for a family (ls = 1, beta = 0.5, c = 1, degree = 2, order = 1,
 *  median_sample = 1000). */
kd_kernel_params kd_kernel_params_default(kd_kernel_type t);

/** The configuration keys a family owns (the `kernel:` section): ls_default is the default of
 *  kernel.ls ("median" for distance kernels, "1" for dot-product ones; NULL: the family has no
 *  length scale, and neither ls nor median_sample is a key); keys[n_keys] are its other keys as a
 *  parameter table stored into kd_kernel_params (KD_PARAM_AT). Families whose keys depend on the
 *  data (attention: dk; stein: its base kernel and scores) read those themselves. Local. */
typedef struct {
  const char *ls_default;
  const kd_param_spec *keys;
  int n_keys;
} kd_kernel_keys;
kd_kernel_keys kd_kernel_keys_of(kd_kernel_type t);

/** What a kernel family offers (kd_kernel_family.caps), so that code outside src/kernel/ asks
 *  for a capability instead of testing kernel types. */
typedef enum {
  KD_KCAP_LS = 1u << 0,      /* a length scale: kernel.ls, a number or 'median' */
  KD_KCAP_RADIAL = 1u << 1,  /* k(x, y) = f(|x - y| / ls), positive definite in every dimension
                                (gaussian, laplace, imq, matern): ACTT's grid of length scales */
  KD_KCAP_FGT = 1u << 2,     /* the fast Gauss transform evaluates its sums (gaussian) */
  KD_KCAP_FOURIER = 1u << 3, /* random Fourier features sample its spectral measure (gaussian) */
  KD_KCAP_STEIN = 1u << 4,   /* a Stein kernel: rows (x, score), the target is p through its
                                score, discrepancies are KSDs (docs/stein.md) */
  KD_KCAP_CLOSED = 1u << 5,  /* closed-form embeddings of some measures (docs/targets.md) */
  KD_KCAP_MERCER = 1u << 6   /* known Mercer eigenfunctions on a measure (sobolev on the torus) */
} kd_kernel_cap;
/** 1 if the family of type t (of kernel k) has every capability in caps (kd_kernel_cap bits),
 *  else 0 (also for an unknown type or a NULL kernel). Local. */
int kd_kernel_type_has(kd_kernel_type t, unsigned caps);
int kd_kernel_has(const kd_kernel *k, unsigned caps);

/** Read the kernel section s (e.g. prefix "kernel") for points of dimension d and create the
 *  kernel: the name, kernel.ls (a positive number or 'median', then resolved by
 *  kd_kernel_set_median_ls), median_sample, the family's table of keys and its keys that depend
 *  on the data (attention's dk, the deep kernel's dx and ls_phi, the Stein kernel's base, beta and
 *  precondition). Errors name FILE:LINE: key. Local. */
kd_err kd_kernel_read(const kd_section *s, int d, kd_kernel **out);
/** A length-scale key NAME of section s: a positive number into *ls, or 'median' (*median = 1,
 *  *ls untouched), or 'auto' where def is "auto" (*median = 2: the Stein kernel's choice,
 *  kd_kernel_stein_autotune); def is its default text. Local. */
kd_err kd_kernel_read_ls(const kd_section *s, const char *name, const char *def, double *ls,
                         int *median);

/** Create a kernel for points of dimension d. Checks parameters (message names `kernel.<key>`).
 *  Local. */
kd_err kd_kernel_create(const kd_kernel_params *p, int d, kd_kernel **out);
void kd_kernel_destroy(kd_kernel **k);
const kd_kernel_params *kd_kernel_get_params(const kd_kernel *k);
int kd_kernel_dim(const kd_kernel *k);
/** Human-readable description, e.g. "gaussian(ls=1)" (owned by the kernel). */
const char *kd_kernel_describe(const kd_kernel *k);
/** The length scale in use (after the median heuristic, when it was asked for), or 0 for a family
 *  without one (linear, sobolev, energy). Local. */
double kd_kernel_length_scale(const kd_kernel *k);
/** The deep kernel's embedding length scale ls_phi in use (after the median heuristic), or 0 for
 *  any other family. Local. */
double kd_kernel_length_scale_phi(const kd_kernel *k);

/** Precondition a stein kernel (kernel.precondition): its base kernel sees the Mahalanobis
 *  distance of the SPD matrix M[d_x*d_x] (row-major, d_x = dim/2, replicated on every rank):
 *  k(x, y) = phi(|x - y|^2_{M^-1}). Call before kd_kernel_set_median_ls (which then takes the
 *  median of those distances). KD_ERR_INPUT if M is not positive definite. Local. */
kd_err kd_kernel_set_stein_precond(kd_kernel *k, const double *M);
/** 1 if kd_kernel_set_stein_precond was applied. */
int kd_kernel_stein_preconditioned(const kd_kernel *k);
/** 0: no preconditioner, 1: a diagonal M, 2: a full M. */
int kd_kernel_stein_precond_kind(const kd_kernel *k);
/** What kd_kernel_stein_autotune chose (stein_tune.c). */
typedef struct {
  double ls;           /* the length scale set (0: none, the median heuristic stays pending) */
  double fisher_trace; /* mean s^T M s over the rows looked at (M = I without preconditioner) */
  double anisotropy;   /* max / min of mean s_j^2 over the coordinates (0 if not asked) */
  int precondition;    /* 1: M = diag(1 / mean s_j^2) was applied */
  int64_t rows;        /* rows looked at */
} kd_stein_tune;
/** kernel.ls: auto (tune_ls) and kernel.precondition: auto (tune_pre) for a stein kernel from
 *  its rows (x, s(x)) in ps: the diagonal preconditioner diag(1 / mean s_j^2) when those means
 *  differ by more than 4x, and ls^2 = 2 d_x^2 / mean s^T M s (M: the one chosen, the explicit
 *  M[d_x*d_x] already applied, or I if NULL). A trace that is 0 or not finite leaves ls pending
 *  (out->ls = 0). The same at any rank count. Collective over ps's communicator. */
kd_err kd_kernel_stein_autotune(kd_kernel *k, const kd_pointset *ps, const double *M, int tune_ls,
                                int tune_pre, kd_stein_tune *out);
/** Set ls by the median heuristic: median of pairwise distances over a seeded subsample of at most
 *  `max_sample` rows of ps (rows chosen by (seed, global index), the same for any rank count).
 *  The deep kernel takes one median per block of columns: ls from the inputs x (when ls_median,
 *  or when ls_phi_median is not set) and ls_phi from the embeddings (when ls_phi_median).
 *  Collective over ps's communicator. */
kd_err kd_kernel_set_median_ls(kd_kernel *k, const kd_pointset *ps, uint64_t seed,
                               kd_lidx max_sample);
/** 1 while a length scale requested as 'median' (ls, or the deep kernel's ls_phi) waits for
 *  kd_kernel_set_median_ls; the kernel refuses to evaluate until then. Local. */
int kd_kernel_median_pending(const kd_kernel *k);

/** k(x, y) for one pair. The block routines below take their scratch from a workspace kept in
 *  k (grown to the largest call, then reused; freed by kd_kernel_destroy): no allocation per
 *  call, and one kernel object per thread. */
double kd_kernel_eval(kd_kernel *k, const double *x, const double *y);
/** Tile K[i*ldk + j] = k(A_i, B_j), A: na x d, B: nb x d. */
kd_err kd_kernel_eval_block(kd_kernel *k, const double *A, kd_lidx na, const double *B, kd_lidx nb,
                            double *K, kd_lidx ldk);
/** Rows B (nb x d) packed once into the block kernel's layout, for many
 *  kd_kernel_eval_block_packed calls against the same rows (herding's candidate columns):
 *  about 8 nb d bytes, which a kd_kernel_eval_block call would otherwise allocate and fill on
 *  every call. B is borrowed and must outlive the packed form. Local. */
typedef struct kd_kernel_packed kd_kernel_packed;
kd_err kd_kernel_pack(const kd_kernel *k, const double *B, kd_lidx nb, kd_kernel_packed **out);
/** kd_kernel_eval_block(k, A, na, B, nb, K, ldk) with B packed by kd_kernel_pack: the same
 *  values bit for bit. */
kd_err kd_kernel_eval_block_packed(kd_kernel *k, const double *A, kd_lidx na,
                                   const kd_kernel_packed *B, double *K, kd_lidx ldk);
void kd_kernel_packed_free(kd_kernel_packed **p);
/** Fused mat-vec y[i] = beta*y[i] + sum_j k(A_i, B_j) w[j] without materialising K(A,B).
 *  w == NULL means w_j = 1. */
kd_err kd_kernel_matvec(kd_kernel *k, const double *A, kd_lidx na, const double *B, kd_lidx nb,
                        const double *w, double beta, double *y);
/** y[l] = what kd_kernel_matvec(ks[l], A, na, B, nb, w, 0, y[l]) gives, bit for bit, for L
 *  kernels of one dimension and accumulation (the gaussian family at several length scales, say;
 *  not the Stein kernel): the columns are packed once and the squared distances computed once
 *  for all L. Each kernel's evaluation count grows by na nb. Local. */
kd_err kd_kernel_matvec_multi(kd_kernel *const *ks, int L, const double *A, kd_lidx na,
                              const double *B, kd_lidx nb, const double *w, double *const *y);
/** ya = K(A, B) wb and yb = K(B, A) wa (NULL weights: 1), each bit for bit what kd_kernel_matvec
 *  gives for it, from one evaluation of each pair (half the work of the two calls), for kernels
 *  with kd_kernel_matvec_pair_ok (src/kernel/kernel_sym.c). Counts na nb evaluations. Local. */
kd_err kd_kernel_matvec_pair(kd_kernel *k, const double *A, kd_lidx na, const double *B, kd_lidx nb,
                             const double *wa, const double *wb, double *ya, double *yb);
/** y = K(A, A) w (w == NULL: 1), bit for bit kd_kernel_matvec(k, A, n, A, n, w, 0, y), from about
 *  n^2 / 2 evaluations (counted), for kernels with kd_kernel_matvec_pair_ok. Local. */
kd_err kd_kernel_matvec_sym(kd_kernel *k, const double *A, kd_lidx n, const double *w, double *y);
/** 1 when the kernel's values are symmetric bit for bit so that kd_kernel_matvec_pair and
 *  kd_kernel_matvec_sym apply: the squared-distance families (not Stein, not linear, sobolev,
 *  attention or deep). */
int kd_kernel_matvec_pair_ok(const kd_kernel *k);
/** 1 when kd_kernel_matvec_gemm takes its dgemm path for this kernel (else it is kd_kernel_matvec).
 */
int kd_kernel_matvec_gemm_active(const kd_kernel *k);
/** y = K(A, B) w (w == NULL: 1) like kd_kernel_matvec, but for the Gaussian kernel at d >= 96
 *  with the squared distances from dgemm around A's mean (src/kernel/kernel_gemm.c): faster at
 *  high d, within about 2 d 2^-53 (|a - m|^2 + |b - m|^2) / (2 ls^2) of kd_kernel_matvec's values
 *  relatively, NOT its bits, and a row's value depends on the shapes na, nb of the call. For
 *  callers whose blocks have fixed shapes at any rank count; other kernels and smaller d: exactly
 *  kd_kernel_matvec. Counts na nb evaluations. Local. */
kd_err kd_kernel_matvec_gemm(kd_kernel *k, const double *A, kd_lidx na, const double *B, kd_lidx nb,
                             const double *w, double *y);
/** Screening mat-vecs, for callers that compare y with thresholds. kd_kernel_screen_prepare keeps
 *  the rows X (n x d) in single precision (centred and scaled) and in double precision (about
 *  20 n d + 8 n bytes in all); then
 *  kd_kernel_screen_matvec gives, for rows i0 .. i0+na-1 of X against its first nb rows,
 *  y[i] = sum_{j<nb} k(X_{i0+i}, X_j) w[j] (w == NULL: 1) in single precision, and bound[i] >=
 *  |y[i] - y'[i]| proven for y' = what kd_kernel_matvec(k, X + (i0+i) d, 1, X, nb, w, 0, y')
 *  returns. Where the bound does not settle a comparison, ask kd_kernel_screen_exact (or
 *  kd_kernel_matvec) for that row: the
 *  outcome is then the one kd_kernel_matvec alone gives, bit for bit. *out = NULL (no error) when
 *  there is no screening form: not kd_kernel_screen_available(k) (the Gaussian kernel with
 *  screening on), points so spread against ls that single precision cannot resolve them, or
 *  non-finite points. About 2.3x kd_kernel_matvec's speed at d = 2 (bench/results/kernel.md).
 *  X is copied: it may change after the call. Local. */
typedef struct kd_kernel_screen kd_kernel_screen;
kd_err kd_kernel_screen_prepare(kd_kernel *k, const double *X, kd_lidx n, kd_kernel_screen **out);
kd_err kd_kernel_screen_matvec(kd_kernel *k, const kd_kernel_screen *S, kd_lidx i0, kd_lidx na,
                               kd_lidx nb, const double *w, double *y, double *bound);
/** The screening mat-vec of pairs' differences: for pairs p = 0 .. np-1 of rows (i0 + 2p,
 *  i0 + 2p + 1) of X against its first nb rows, y[p] = sum_{j<nb} (k(X_{i0+2p}, X_j) -
 *  k(X_{i0+2p+1}, X_j)) w[j] in single precision and bound[p] >= |y[p] - (y0 - y1)| proven for the
 *  two rows y0, y1 kd_kernel_matvec returns. The bound grows with the pair's distance, not with
 *  the rows' kernel sums: for the close pairs of a halving (k-d order) it stays small where the
 *  row bounds of kd_kernel_screen_matvec do not settle a comparison of y0 - y1. Counts 2 np nb
 *  evaluations. Local. */
kd_err kd_kernel_screen_pairs(kd_kernel *k, const kd_kernel_screen *S, kd_lidx i0, kd_lidx np,
                              kd_lidx nb, const double *w, double *y, double *bound);
/** 1 when S is the sgemm form (from d = 16 on, docs/kernels.md): its pairs' mat-vec is the
 *  difference of two screened rows, no tighter than the rows, and a screened value costs about a
 *  third of an exact one at d >= 64 (a caller may keep screening with more comparisons open). */
int kd_kernel_screen_is_gemm(const kd_kernel_screen *S);
/** The exact rows: y = what kd_kernel_matvec(k, X + i0 d, na, X, nb, w, 0, y) returns, bit for bit,
 *  from the double-precision copy of X the screening set keeps packed (the nb columns are not
 *  packed again per call: the exact rows of a comparison the bound leaves open cost their
 *  evaluations only). Local. */
kd_err kd_kernel_screen_exact(kd_kernel *k, const kd_kernel_screen *S, kd_lidx i0, kd_lidx na,
                              kd_lidx nb, const double *w, double *y);
void kd_kernel_screen_free(kd_kernel_screen **S);
int kd_kernel_screen_available(const kd_kernel *k);
/** Screening on (1, the default) or off (0): off, kd_kernel_screen_available says 0 and callers
 *  take the double-precision path everywhere (the same results; for tests and comparisons).
 *  2: on, and the KH halving's fast Gauss transform used wherever it applies, not only where it
 *  pays; 3: on without that transform (both for tests and comparisons: the same results). */
void kd_kernel_set_screening(kd_kernel *k, int on);
/** The KH halving's fast Gauss transform under the screening setting: 0 not used, 1 where it
 *  pays, 2 wherever it applies. */
int kd_kernel_screen_fgt(const kd_kernel *k);
/** diag[i] = k(A_i, A_i). */
kd_err kd_kernel_diag(kd_kernel *k, const double *A, kd_lidx na, double *diag);
/** Total evaluations counted by this kernel object. */
uint64_t kd_kernel_evals(const kd_kernel *k);
/** Of those, the ones the screening mat-vecs computed in single precision
 *  (kd_kernel_screen_matvec, kd_kernel_screen_pairs). */
uint64_t kd_kernel_screened_evals(const kd_kernel *k);
void kd_kernel_reset_evals(kd_kernel *k);

#ifdef __cplusplus
}
#endif
#endif
