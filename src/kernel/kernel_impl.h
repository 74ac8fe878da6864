/* kernel_impl.h - the kernel struct and the family contract, private to src/kernel/.
 *
 * Every family evaluates k(x, y) in two steps, and every path (one pair, a tile, a fused mat-vec,
 * the diagonal) performs exactly the same floating-point operations per pair:
 *   1. an accumulation over the coordinates in increasing order (kd_kernel_acc), written with
 *      explicit fma() so that no compiler contraction or vector width changes a bit;
 *   2. a per-family "finish" map from the accumulator(s) to the kernel value, applied lane-wise
 *      to arrays (so the compiler vectorises it without changing the per-element operations).
 * Hence k(a, b) is bitwise the same whatever tile, block or rank a and b sit in. */
#ifndef KDISTILL_KERNEL_IMPL_H
#define KDISTILL_KERNEL_IMPL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kdistill/author/kd_kernel.h"

#include "core/clones.h" /* KD_KCLONES: multi-versioned hot loops */

/** What is accumulated per pair over the coordinates j = 0..d-1 (s starts at 0, or 1 for SOBOLEV):
 *  SQDIST  s = fma(t, t, s) with t = x_j - y_j (squared distance, never negative)
 *  DOT     s = fma(x_j, y_j, s)
 *  SOBOLEV s = s * (1 + coef * B_{2r}(frac(|x_j - y_j|)))   (the whole product kernel)
 *  ATTN    s = key dot (j < dk), s2 = value dot (j >= dk)
 *  SQDIST2 s = fma(t, t, s) over j < dx, s2 = fma(t, t, s2) over j >= dx (t = x_j - y_j; the deep
 *          kernel's two squared distances, of the inputs and of their embeddings). */
typedef enum {
  KD_KACC_SQDIST,
  KD_KACC_DOT,
  KD_KACC_SOBOLEV,
  KD_KACC_ATTN,
  KD_KACC_SQDIST2
} kd_kernel_acc;

/** A family's map from accumulators to kernel values: out[j] from s[j] (and s2[j]), j < n. */
typedef void (*kd_kernel_finish_fn)(const kd_kernel *k, kd_lidx n, const double *s,
                                    const double *s2, double *out);

typedef struct {
  kd_kernel_type type;
  kd_kernel_acc acc;
  /** Precompute k->c[] from k->p (called at create and when ls changes). */
  void (*setup)(kd_kernel *k);
  /** out[j] = kernel value from s[j] (and s2[j] for ATTN), j < n. Pure, element-wise. */
  kd_kernel_finish_fn finish;
  /** Optional (NULL: none): finish for arrays known to hold only s[j] <= k->s_normal (setup sets
   *  it), where the exponential's argument is in its normal range: the same values without the
   *  range test (kd_kexp_neg_sel_). The mat-vec uses it when bounding boxes prove the bound. */
  kd_kernel_finish_fn finish_normal;
  /** The family's configuration keys (kd_kernel_keys_of): the default of kernel.ls ("median",
   *  "1", or NULL without a length scale) and the table of its other keys. */
  const char *ls_default;
  const kd_param_spec *keys;
  int n_keys;
  /** kd_kernel_cap bits: what the family offers to the code outside src/kernel/. */
  unsigned caps;
  /** Optional (NULL: none): the family's keys that depend on the data (d, the other sections),
   *  read after its table (kernel_config.c). */
  kd_err (*read_keys)(const kd_section *s, int d, kd_kernel_params *p);
} kd_kernel_family;

/** The family of type t (NULL for an unknown type). */
const kd_kernel_family *kd_kernel_family_of_(kd_kernel_type t);
/* the read_keys hooks (kernel_config.c) */
kd_err kd_attention_read_keys_(const kd_section *s, int d, kd_kernel_params *p);
kd_err kd_deep_read_keys_(const kd_section *s, int d, kd_kernel_params *p);
kd_err kd_energy_read_keys_(const kd_section *s, int d, kd_kernel_params *p);
kd_err kd_stein_read_keys_(const kd_section *s, int d, kd_kernel_params *p);

struct kd_kernel {
  kd_kernel_params p;
  int d;
  const kd_kernel_family *fam;
  double c[4];                 /* family constants (from setup) */
  double cl[KD_KERNEL_MAX_LS]; /* gaussian_sum: -1 / (2 ls_j^2) per length scale (from setup) */
  signed char gsq[KD_KERNEL_MAX_LS]; /* gaussian_sum: a group's size (scales from one
                                        exponential) at its narrowest scale, 0 at its others */
  double s_normal;    /* families with finish_normal: the accumulator bound it needs (from setup) */
  double sob_coef;    /* Sobolev: (-1)^{r-1} (2 pi)^{2r} / (2r)! */
  int isa;            /* kd_kernel_isa_() at creation: which micro-kernel the blocks use */
  int ls_pending;     /* ls: median requested and kd_kernel_set_median_ls not yet run */
  int ls_phi_pending; /* deep: ls_phi likewise (kd_kernel_set_median_ls sets both) */
  int screen_off;     /* kd_kernel_set_screening(k, 0): no screening mat-vec (kernel_screen.c) */
  int screen_fgt;     /* the halving's fast Gauss transform: 0 where it pays, 1 forced, 2 never */
  int screen_gemm;    /* the screening's distances: 0 by d (KD_SCR_GEMM_MIND), 1 sgemm, 2 direct */
  uint64_t evals;
  uint64_t evals_screened; /* those of evals computed by the screening mat-vecs */
  char desc[160];
  double *pre;   /* stein preconditioner (stein_precond.c): [L^-1 | M^-1], dx x dx each, or NULL */
  double pre_tr; /* tr(M^-1) */
  int pre_diag;  /* 1: M is diagonal */
  double *ws;    /* the block routines' scratch, grown on demand, reused by every call */
  size_t ws_n;   /* its size in doubles */
};

/** k(x, y) by the fast path for one pair (no counting); bitwise equal to the block routines. */
double kd_kernel_pair_(const kd_kernel *k, const double *x, const double *y);
/** k(x, y) by the textbook formula with libm exp/pow and plain loops (no counting). A reference
 *  for tests: agrees with kd_kernel_pair_ to a few ulp, not bitwise. */
double kd_kernel_ref_(const kd_kernel *k, const double *x, const double *y);
/** Refresh the description after a parameter change (median heuristic). */
void kd_kernel_update_desc_(kd_kernel *k);
/** Recompute the family constants after a parameter change. */
void kd_kernel_refresh_(kd_kernel *k);

/** Columns per packed panel of B in the block routines (multiple of 8). */
#define KD_KERNEL_PANEL 256

/** The common part of the exponentials below: t = x log2(e) + 1.5 2^52 rounded (its low
 *  mantissa bits hold k = round(x / ln 2)) and the polynomial q = exp(r), r = x - k ln2 by
 *  Cody-Waite reduction, |r| <= ln2/2, degree-13 Taylor polynomial by Horner with fma. */
static inline double kd_kexp_q_(double x, double *t_out) {
  const double shifter = 0x1.8p52, log2e = 0x1.71547652b82fep0;
  const double ln2hi = 0x1.62e42fefa39efp-1, ln2lo = 0x1.abc9e3b39803fp-56;
  double t = fma(x, log2e, shifter);
  double kf = t - shifter;
  double r = fma(-kf, ln2hi, x);
  r = fma(-kf, ln2lo, r);
  double q = 1.0 / 6227020800.0;
  q = fma(q, r, 1.0 / 479001600.0);
  q = fma(q, r, 1.0 / 39916800.0);
  q = fma(q, r, 1.0 / 3628800.0);
  q = fma(q, r, 1.0 / 362880.0);
  q = fma(q, r, 1.0 / 40320.0);
  q = fma(q, r, 1.0 / 5040.0);
  q = fma(q, r, 1.0 / 720.0);
  q = fma(q, r, 1.0 / 120.0);
  q = fma(q, r, 1.0 / 24.0);
  q = fma(q, r, 1.0 / 6.0);
  q = fma(q, r, 0.5);
  q = fma(q, r, 1.0);
  q = fma(q, r, 1.0);
  *t_out = t;
  return q;
}

/** exp(x) for x <= 0 (the range the distance kernels use), vectorisable: q of kd_kexp_q_ times
 *  2^k, with 2^k built in the exponent bits (scaled through 2^54 so that results down to the
 *  subnormal range round once). Max relative error vs libm about 1 ulp on [-708, 0]; x < -746
 *  gives 0; NaN gives NaN. */
static inline double kd_kexp_neg_(double x) {
  x = x < -746.0 ? -746.0 : x;
  double t, q = kd_kexp_q_(x, &t);
  uint64_t tb, sb;
  double sc;
  memcpy(&tb, &t, sizeof tb);
  sb = (tb + 1023u + 54u) << 52; /* exponent field = k + 1023 + 54 */
  memcpy(&sc, &sb, sizeof sc);
  return (q * sc) * 0x1p-54;
}

/** Arguments down to this bound give a normal exp(x) whatever the rounding of k (k >= -1020). */
#define KD_KEXP_NORMAL_MIN (-707.0)

/** kd_kexp_neg_(x) for KD_KEXP_NORMAL_MIN <= x <= 0, bitwise: there exp(x) = q 2^k is a normal
 *  number, so q * 2^k is exact, and adding k to q's exponent field gives the same bits as the two
 *  multiplications of kd_kexp_neg_ (two fewer floating-point operations per value). */
static inline double kd_kexp_neg_normal_(double x) {
  double t, q = kd_kexp_q_(x, &t);
  uint64_t tb, qb;
  memcpy(&tb, &t, sizeof tb);
  memcpy(&qb, &q, sizeof qb);
  qb += tb << 52; /* (k mod 2^12) << 52: k added to the exponent field, which stays >= 1 */
  memcpy(&q, &qb, sizeof q);
  return q;
}

/** 1 when kd_kexp_neg_normal_(x) may differ from kd_kexp_neg_(x): x below KD_KEXP_NORMAL_MIN, or
 *  NaN. */
#define KD_KEXP_OUTSIDE(x) (!((x) >= KD_KEXP_NORMAL_MIN))

/** kd_kexp_neg_(x) when general, else kd_kexp_neg_normal_(x). A finish writes its loop once as an
 *  inline function of a constant `general` that also counts KD_KEXP_OUTSIDE arguments, runs it
 *  with general = 0, and again with general = 1 when that count is not 0: one pass over the
 *  array in the usual case, and bitwise kd_kexp_neg_ throughout. */
static inline double kd_kexp_neg_sel_(double x, int general) {
  return general ? kd_kexp_neg_(x) : kd_kexp_neg_normal_(x);
}

/** 0: portable loops, 1: AVX2+FMA, 2: AVX-512F micro-kernels available on this CPU. */
int kd_kernel_isa_(void);
/** The screening's squared distances (kernel_screen_gemm.c): 0 by d (the default), 1 through
 *  sgemm, 2 by the direct difference loops; for tests and benchmarks (the same decisions). */
void kd_kernel_set_screen_gemm_(kd_kernel *k, int mode);
/** 1 when kd_kernel_matvec_gemm takes its dgemm path for this kernel (kernel_gemm.c). */
int kd_kernel_gemm_wanted_(const kd_kernel *k);

/** The Matern 1/2 setup (c[0] = 1 / ls and s_normal) and finishes, out[j] = exp(-sqrt(s[j]) c[0]):
 *  also the Laplace kernel's (laplace.c). */
void kd_matern12_setup_(kd_kernel *k);
void kd_matern12_finish_(const kd_kernel *k, kd_lidx n, const double *s, const double *s2,
                         double *out);
void kd_matern12_finish_normal_(const kd_kernel *k, kd_lidx n, const double *s, const double *s2,
                                double *out);

/** Array form of kd_kexp_neg_ (multi-versioned); exported for the unit test. */
void kd_kernel_vexp_neg_(kd_lidx n, const double *x, double *y);
/** Array form of the single-precision exp of kernel_screen.c (x[j] in [-80, 0]), for the test. */
void kd_kernel_vfexp_neg_(kd_lidx n, const float *x, float *y);
/** y[j] = the pair screening's single-precision expm1(x[j]), x[j] in [-80, 0] (for the unit
 *  test). */
void kd_kernel_vfexpm1_neg_(kd_lidx n, const float *x, float *y);

/* The Stein kernel (stein.c) is not a map of per-pair accumulators (s, s2): it needs three, so
 * kernel_block.c hands its tiles, mat-vecs and pairs to these (same bitwise contract). */
double kd_stein_pair_(const kd_kernel *k, const double *x, const double *y);
/** K != NULL: tile K[i*ldk + j]; else y[i] = beta y[i] + sum_j k(A_i, B_j) w[j] (w NULL = 1) with
 *  the lanes of kernel_block.c (lane j mod 8, summed ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7))). */
kd_err kd_stein_block_(const kd_kernel *k, const double *A, kd_lidx na, const double *B, kd_lidx nb,
                       double *K, kd_lidx ldk, const double *w, double beta, double *y);
/** Textbook reference value (libm, plain loops) for the tests. */
double kd_stein_ref_(const kd_kernel *k, const double *x, const double *y);
/** out[j] = k_p from the accumulators r2 (phi's argument), w2 (|M^-1 u|^2; = r2 unpreconditioned),
 *  t, q and T = tr(M^-1) (= d_x unpreconditioned), j < n. */
void kd_stein_finish4_(const kd_kernel *k, kd_lidx n, const double *r2, const double *w2,
                       const double *t, const double *q, double T, double *out);
/* the preconditioned Stein kernel (stein_precond.c): same contracts as the two above */
double kd_stein_pre_pair_(const kd_kernel *k, const double *x, const double *y);
kd_err kd_stein_pre_block_(const kd_kernel *k, const double *A, kd_lidx na, const double *B,
                           kd_lidx nb, double *K, kd_lidx ldk, const double *w, double beta,
                           double *y);
/** o[d_x] = L^-1 x of the x part of a row (the median heuristic's distances). */
void kd_stein_pre_map_x_(const kd_kernel *k, const double *x, double *o);

/* The families (one file each), listed in kernel_list.h. */
#define KD_KFAM(sym) extern const kd_kernel_family sym;
#include "kernel/kernel_list.h"
#undef KD_KFAM

/** Packs B (nb x d, row-major) panel by panel: panel p holds rows [p P, p P + nc) transposed,
 *  width npad = nc rounded up to 16, zero-padded, at Bp + d p P. Local. */
void kd_kernel_pack_panels(int d, const double *B, kd_lidx nb, kd_lidx P, double *Bp);
/** Columns per panel for dimension d (a multiple of 16). */
kd_lidx kd_kernel_panel_(int d);
/** Doubles per coordinate of nb rows packed in panels of P columns (padding included). */
kd_lidx kd_kernel_packed_size_(kd_lidx nb, kd_lidx P);
/** Rows per call of kd_kernel_panel_values_ (the register block of kernel_block.c). */
#define KD_KERNEL_MR 4
/** The kernel values of up to KD_KERNEL_MR rows of A from row i (rows < i1) against the packed
 *  panel Bpj (npad columns; its box bx from kd_kernel_panel_boxes_, or NULL), exactly as
 *  kd_kernel_matvec computes them, into out[r npad + j]; returns the rows done. ws: 2
 *  KD_KERNEL_MR npad doubles. Local. */
int kd_kernel_panel_values_(const kd_kernel *k, const double *A, kd_lidx i1, kd_lidx i,
                            const double *Bpj, const double *bx, kd_lidx npad, double *ws,
                            double *out);
/** kd_kernel_matvec's lane sums: p[8 r + l] += sum over j = l mod 8 (j < n, increasing) of
 *  v[r n + j] w[j] by fma, r < nr (multi-versioned); then y[i] = beta y[i] + ((l0 + l1) +
 *  (l2 + l3)) + ((l4 + l5) + (l6 + l7)) of row i's 8 lanes, i < n. */
void kd_kernel_lanes_rows_(int nr, kd_lidx n, const double *v, const double *w, double *p);
void kd_kernel_lanes_sum_(kd_lidx n, const double *lanes, double beta, double *y);
/** The boxes of packed panels (kd_kernel_pack_panels), as kd_kernel_matvec computes them. */
void kd_kernel_panel_boxes_(int d, const double *Bp, kd_lidx nb, kd_lidx P, double *box);
/** At least n doubles of the kernel's reusable scratch k->ws (grown zeroed, never shrunk). */
kd_err kd_kernel_ws_(kd_kernel *k, size_t n, double **ws);
/** Columns X (n x d, borrowed: must outlive the set) packed once for many mat-vecs over a prefix of
 *  them: kd_kernel_prefix_matvec_ gives y = kd_kernel_matvec(k, A, na, X, nb, w, 0, y) bit for bit
 *  for any nb <= n without packing the nb columns again (only the last, partial panel). The full
 *  panels are packed when a call first needs them (npan_done of them so far): a set whose exact
 *  rows are rare touches only the memory of the prefixes asked for. Local. */
typedef struct {
  const double *X;
  kd_lidx n, npan_done;
  double *Bp, *box;
} kd_kernel_prefix_;
kd_err kd_kernel_prefix_pack_(kd_kernel *k, const double *X, kd_lidx n, kd_kernel_prefix_ *pf);
void kd_kernel_prefix_free_(kd_kernel_prefix_ *pf);
kd_err kd_kernel_prefix_matvec_(kd_kernel *k, kd_kernel_prefix_ *pf, const double *A, kd_lidx na,
                                kd_lidx nb, const double *w, double *y);

#endif
