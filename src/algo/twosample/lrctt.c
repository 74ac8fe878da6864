/* lrctt.c - Low-Rank Compress Then Test (LR-CTT; Domingo-Enrich, Dwivedi & Mackey 2023, the
 * `lrctt` of goodpoints): CTT's s permutation bins (ctt.c), each compressed only lightly and then
 * summarised by the mean of r random Fourier features, so that the s x s matrix G costs
 * O(rows r) instead of CTT's O(s^2 coreset^2) kernel evaluations:
 *   - compression: when r > 4^(g+1), every bin is cut into sub-bins of 4^(g+1) consecutive rows,
 *     each KT-Compressed to 2^g sqrt(4^(g+1)) = 2 4^g rows (half of it; the last rows of a bin
 *     that do not fill a sub-bin are kept as they are); otherwise the bin is kept whole. This is
 *     goodpoints' default coreset size (a = 0). With a > 0 (goodpoints' coreset size factor),
 *     the sub-bins have r^2 / (4^g a^2) rows, each KT-Compressed to 2^g sqrt(r^2 / (4^g a^2))
 *     = r / a rows (kept whole when that is all of it); the size must be a power of 4 that fits
 *     in a bin.
 *   - features (Gaussian kernel k(x, y) = exp(-|x - y|^2 / (2 ls^2)) only): r / 2 frequencies
 *     w_j ~ N(0, I_d / ls^2), drawn from (run seed, KD_CTT_STREAM_RFF, j d + c), and
 *     phi(x) = sqrt(2 / r) (cos(w_j . x), sin(w_j . x))_j, so that E phi(x) . phi(y) = k(x, y);
 *     F_b = the mean of phi over bin b's rows; G = F F^T.
 *   - null: the label permutations of Alg. 3 (ctt_common.c), size alpha exactly whatever r, as
 *     the features do not depend on the data.
 * Bin b's features are computed on rank b mod p from the gathered coresets, summed over ranks
 * (each row non-zero on one rank: exact) and G formed on every rank in the same order: the same
 * bits at any rank count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/twosample/ctt_impl.h"
#include "algo/thinning/compress_impl.h"
#include "comm/dist_impl.h"
#include "core/clones.h"

static const kd_param_spec kd_lrctt_params_[] = {
    {"s", KD_PARAM_INT, 16, NULL, 2, 1048576, NULL,
     "number of permutation bins s >= 2, split as in ctt", KD_PARAM_AT(kd_ctt_params, s)},
    KD_PARAM_G(
        kd_ctt_params, g, 0, 0,
        "compression level: sub-bins of 4^(g+1) rows halved by KT-Compress when r > 4^(g+1)"),
    {"r", KD_PARAM_INT, 256, NULL, 2, 1048576, NULL,
     "number of random Fourier features (even): r / 2 frequencies, cosine and sine",
     KD_PARAM_AT(kd_ctt_params, rank)},
    {"a", KD_PARAM_INT, 0, NULL, 0, 1048576, NULL,
     "coreset size factor: sub-bins of r^2 / (4^g a^2) rows compressed to r / a rows; 0: "
     "goodpoints' default (the g line)",
     KD_PARAM_AT(kd_ctt_params, a)},
    KD_CTT_PARAM_DELTA,
    KD_CTT_PARAM_B("number of label permutations (replicates)"),
    KD_CTT_PARAM_ALPHA,
};

kd_err kd_lrctt_check_a(const kd_ctt_params *p, int64_t n_in, int64_t *q) {
  kd_err err = KD_OK;
  const int64_t r = p->rank, a = p->a;
  *q = 0;
  if (a == 0) goto cleanup;
  /* r^2 / (4^g a^2) by exact steps (no overflow: r <= 2^20), then a power of 4 */
  int64_t v = r * r, g = p->g, ok = a <= r && v % (a * a) == 0;
  if (ok) v /= a * a;
  for (; ok && g > 0; g--) {
    ok = v % 4 == 0;
    v /= 4;
  }
  int64_t pw = 1;
  while (pw < v) pw *= 4;
  KD_CHECK_KEY(ok && v >= 1 && pw == v, KD_ERR_CONFIG, "algorithm.a",
               "algorithm.a = %lld: sub-bins of r^2 / (4^g a^2) rows must be a whole power of 4 "
               "(r = %lld, g = %lld: a = r / 2^(g+k) with k >= g)",
               (long long)a, (long long)r, (long long)p->g);
  KD_CHECK_KEY(v >= ((int64_t)1 << (2 * p->g)), KD_ERR_CONFIG, "algorithm.a",
               "algorithm.a = %lld: sub-bins of r^2 / (4^g a^2) = %lld rows are smaller than "
               "their coresets of r / a = %lld rows (take a smaller a)",
               (long long)a, (long long)v, (long long)(r / a));
  KD_CHECK_KEY(v <= n_in, KD_ERR_CONFIG, "algorithm.a",
               "algorithm.a = %lld: sub-bins of r^2 / (4^g a^2) = %lld rows exceed the %lld rows "
               "of a permutation bin (take a larger a, a smaller r or fewer bins s)",
               (long long)a, (long long)v, (long long)n_in);
  *q = v;
cleanup:
  return err;
}

kd_err kd_lrctt_compress_bin(kd_kernel *k, const double *rows, kd_lidx n_in, int d,
                             const kd_ctt_params *p, uint64_t seed, uint64_t stream, kd_lidx *idx,
                             kd_lidx *n_out) {
  kd_err err = KD_OK;
  const int64_t g = p->g;
  int64_t q = (int64_t)1 << (2 * (g + 1)), qa = 0;
  kd_lidx *sub = NULL, cnt = 0;
  KD_TRY(kd_lrctt_check_a(p, n_in, &qa));
  if (p->a > 0) q = qa;
  if ((p->a == 0 && (p->rank <= q || q > n_in)) ||
      (p->a > 0 && q == (int64_t)1 << (2 * g))) { /* kept whole */
    for (kd_lidx j = 0; j < n_in; j++) idx[j] = j;
    *n_out = n_in;
    return KD_OK;
  }
  KD_ALLOC(sub, q);
  for (kd_lidx j0 = 0; j0 < n_in; j0 += q) {
    if (j0 + q > n_in) { /* the tail that does not fill a sub-bin: kept */
      for (kd_lidx j = j0; j < n_in; j++) idx[cnt++] = j;
      break;
    }
    kd_lidx m = 0; /* sub-bin t of the bin: seed drawn from (seed, stream, t) */
    const uint64_t st = kd_rng_u64(seed, stream, (uint64_t)(j0 / q));
    KD_TRY(kd_thin_kt_compress_local(k, rows + (size_t)j0 * d, q, d, (int)g, p->delta, st, stream,
                                     sub, &m));
    for (kd_lidx j = 0; j < m; j++) idx[cnt++] = j0 + sub[j];
  }
  *n_out = cnt;
cleanup:
  free(sub);
  return err;
}

/* cos(x) and sin(x) for |x| < 2^20, vectorisable: k = round(x 2/pi), r = x - k pi/2 by
 * three-part Cody-Waite reduction (|r| <= pi/4 + 1e-15), Taylor polynomials of degree 16 (cos)
 * and 17 (sin) on r (truncation below 5e-17), and the quadrant k mod 4 by selects. Within a few
 * ulp of libm; the same bits on every rank, as every rank runs this code. */
static inline void kd_lrctt_sincos_(double x, double *c, double *s) {
  const double shifter = 0x1.8p52, two_over_pi = 0x1.45f306dc9c883p-1;
  const double p1 = 0x1.921fb54400000p0, p2 = 0x1.0b4611a600000p-34, p3 = 0x1.3198a2e037073p-69;
  const double t = fma(x, two_over_pi, shifter);
  const double kf = t - shifter;
  double r = fma(-kf, p1, x);
  r = fma(-kf, p2, r);
  r = fma(-kf, p3, r);
  const double r2 = r * r;
  double cp = 1.0 / 20922789888000.0; /* 1/16! */
  cp = fma(cp, r2, -1.0 / 87178291200.0);
  cp = fma(cp, r2, 1.0 / 479001600.0);
  cp = fma(cp, r2, -1.0 / 3628800.0);
  cp = fma(cp, r2, 1.0 / 40320.0);
  cp = fma(cp, r2, -1.0 / 720.0);
  cp = fma(cp, r2, 1.0 / 24.0);
  cp = fma(cp, r2, -0.5);
  cp = fma(cp, r2, 1.0);
  double sp = 1.0 / 355687428096000.0; /* 1/17! */
  sp = fma(sp, r2, -1.0 / 1307674368000.0);
  sp = fma(sp, r2, 1.0 / 6227020800.0);
  sp = fma(sp, r2, -1.0 / 39916800.0);
  sp = fma(sp, r2, 1.0 / 362880.0);
  sp = fma(sp, r2, -1.0 / 5040.0);
  sp = fma(sp, r2, 1.0 / 120.0);
  sp = fma(sp, r2, -1.0 / 6.0);
  sp = fma(sp * r2, r, r);
  uint64_t tb;
  memcpy(&tb, &t, sizeof tb);
  const unsigned q = (unsigned)(tb & 3u); /* k mod 4 */
  const double cs = (q & 1u) ? sp : cp, sn = (q & 1u) ? cp : sp;
  *c = (q == 1u || q == 2u) ? -cs : cs;
  *s = (q >= 2u) ? -sn : sn;
}

/* The mean of phi over the n rows X into f[r] (in row order). Wt: the r / 2 frequencies by
 * coordinate (d x r/2: coordinate k of frequency j at Wt[k r/2 + j], so that the angles' loop
 * reads it contiguously), ang: scratch of r / 2. Local. */
KD_KCLONES static void kd_lrctt_mean_features_(const double *X, int64_t n, int d, const double *Wt,
                                               int64_t r, double *ang, double *f) {
  const int64_t h = r / 2;
  const double c = sqrt(2.0 / (double)r);
  for (int64_t j = 0; j < r; j++) f[j] = 0.0;
  for (int64_t i = 0; i < n; i++) {
    for (int64_t j = 0; j < h; j++) ang[j] = 0.0;
    for (int k = 0; k < d; k++) {
      const double xk = X[i * d + k];
      for (int64_t j = 0; j < h; j++) ang[j] = fma(Wt[k * h + j], xk, ang[j]);
    }
    for (int64_t j = 0; j < h; j++) {
      double cj, sj;
      kd_lrctt_sincos_(ang[j], &cj, &sj);
      f[2 * j] += cj;
      f[2 * j + 1] += sj;
    }
  }
  for (int64_t j = 0; j < r; j++) f[j] *= c / (double)n;
}

kd_err kd_lrctt_gram(MPI_Comm comm, const kd_kernel *k, const double *pts, const int64_t *coff,
                     int64_t s, int d, int64_t r, uint64_t seed, double *G) {
  kd_err err = KD_OK;
  double *W = NULL, *F = NULL, *ang = NULL;
  const int rank = kd_dist_rank(comm), p = kd_dist_size(comm);
  const double ls = kd_kernel_length_scale(k);
  KD_ALLOC_AGREED(comm, W, (r / 2) * d);
  KD_ALLOC_AGREED(comm, F, s * r);
  KD_ALLOC_AGREED(comm, ang, r / 2);
  for (int64_t j = 0; j < (r / 2) * d; j++) /* frequency j / d, coordinate j mod d */
    W[(j % d) * (r / 2) + j / d] = kd_rng_normal(seed, KD_CTT_STREAM_RFF, (uint64_t)j) / ls;
  for (int64_t b = rank; b < s; b += p)
    kd_lrctt_mean_features_(pts + (size_t)coff[b] * d, coff[b + 1] - coff[b], d, W, r, ang,
                            F + b * r);
  for (int64_t off = 0; off < s * r; off += (1 << 26)) { /* one non-zero term each: exact */
    const int64_t len = s * r - off < (1 << 26) ? s * r - off : (1 << 26);
    KD_TRY(kd_dist_sum(comm, F + off, (int)len));
  }
  for (int64_t i = 0; i < s; i++)
    for (int64_t j = i; j < s; j++) {
      double acc = 0.0;
      for (int64_t t = 0; t < r; t++) acc += F[i * r + t] * F[j * r + t];
      G[i * s + j] = G[j * s + i] = acc;
    }
cleanup:
  free(W);
  free(F);
  free(ang);
  return err;
}

static kd_err kd_lrctt_check_(const kd_params *params, const kd_algo_shape *sh) {
  kd_err err = KD_OK;
  kd_ctt_params p;
  int64_t s_m, s_n, n_in;
  memset(&p, 0, sizeof p);
  KD_TRY(kd_params_fill(params, &p));
  KD_CHECK_KEY(p.rank % 2 == 0, KD_ERR_CONFIG, "algorithm.r",
               "algorithm.r = %lld: the number of features must be even (cosine and sine pairs)",
               (long long)p.rank);
  if (sh->n_in < 1 || sh->n_second < 1) goto cleanup; /* empty samples: the run's own message */
  KD_TRY(kd_ctt_check_sizes(&p, sh->n_in, sh->n_second, &s_m, &s_n, &n_in));
  int64_t q;
  KD_TRY(kd_lrctt_check_a(&p, n_in, &q));
cleanup:
  return err;
}

static kd_err kd_lrctt_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_ctt_params p;
  memset(&p, 0, sizeof p);
  KD_TRY(kd_params_fill(in->params, &p));
  KD_CHECK_KEY(p.rank >= 2 && p.rank % 2 == 0, KD_ERR_CONFIG, "algorithm.r",
               "algorithm.r = %lld: the number of features must be even and at least 2",
               (long long)p.rank);
  KD_CHECK(kd_kernel_has(in->kernel, KD_KCAP_FOURIER), KD_ERR_CONFIG,
           "lrctt: random Fourier features need the gaussian kernel (kernel %s)",
           kd_kernel_describe(in->kernel));
  KD_TRY(kd_ctt_test(in, &p, out));
  KD_TRY(kd_result_set_count(out, "r", p.rank));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_lrctt = {
    "lrctt",
    "ctt",
    "Low-Rank CTT: light KT-Compress, r random Fourier features per bin, permutation MMD test",
    kd_lrctt_params_,
    (int)(sizeof kd_lrctt_params_ / sizeof kd_lrctt_params_[0]),
    kd_lrctt_run_,
    0,
    kd_lrctt_check_,
    NULL};
