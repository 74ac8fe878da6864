/* ctt.c - Compress Then Test (paper 003, Alg. 3; statistic eq. 37). X (m rows) is split into
 * s_m = s m/(m+n) and Y (n rows) into s_n = s n/(m+n) equal bins of n_in = (m+n)/s points; bin b
 * (X bins first, then Y bins) is compressed to 2^g sqrt(n_in) points by KT-Compress(delta) on
 * the rank holding its first row (no communication while compressing; only bins that straddle
 * a rank boundary move), the coresets are all-gathered, and the s x s
 * matrix G_ij of mean kernel values between coresets i and j is computed once (pair (i<=j) number
 * q on rank q mod p, then summed). Each of the B label permutations then costs O(s^2):
 * MMD^2 = w^T G w with w_i = 1/s_m on X-labelled coresets, -1/s_n on Y-labelled ones.
 * Randomness: KT-Compress of bin b uses stream KD_CTT_STREAM_BIN + b; permutations and the tie
 * break use the streams in ctt_impl.h, so the outcome does not depend on the rank count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/twosample/ctt_impl.h"
#include "algo/thinning/compress_impl.h"
#include "comm/dist_impl.h"
#include "comm/tree_impl.h"

static const kd_param_spec kd_ctt_params_[] = {
    {"s", KD_PARAM_INT, 16, NULL, 2, 1048576, NULL,
     "number of coresets (bins) s >= 2; s m/(m+n) bins of X and s n/(m+n) of Y, all equal",
     KD_PARAM_AT(kd_ctt_params, s)},
    KD_PARAM_G(kd_ctt_params, g, 0, 0,
               "compression level: each bin of n_in points is thinned to 2^g sqrt(n_in) points"),
    KD_CTT_PARAM_DELTA,
    KD_CTT_PARAM_B("number of label permutations (replicates)"),
    KD_CTT_PARAM_ALPHA,
};

/* Where bin b's rows live: sample (0 = X, 1 = Y) and the global row range [lo, lo + n_in). */
static const kd_pointset *kd_ctt_bin_src_(const kd_pointset *X, const kd_pointset *Y, int64_t s_m,
                                          int64_t n_in, int64_t b, kd_gidx *lo) {
  if (b < s_m) {
    *lo = b * n_in;
    return X;
  }
  *lo = (b - s_m) * n_in;
  return Y;
}

/* ---------------- the driver: phases over one state ----------------
 * kd_ctt_test = setup, distribute the bins, compress them, gather the coresets, their mean-kernel
 * matrix G, the permutations and the decision, metrics. The distribution logistics (bin b on the
 * rank holding its first row, compressed in place unless it straddles a rank boundary, coresets
 * back in bin order) are the comm/tree_impl.h bin primitive, called from kd_ctt_distribute_ and
 * kd_ctt_gather_ only. */
typedef struct {
  const kd_algo_in *in;
  kd_ctt_params cfg;
  MPI_Comm comm;
  int rank, p, d;
  const kd_pointset *X, *Y;
  kd_gidx m, n;
  int64_t s_m, s_n, n_in;  /* bins of X, bins of Y, points per bin */
  int64_t s_asked, unused; /* algorithm.s; rows left out of the bins (kd_ctt_split_) */
  int compress;            /* 0: the coreset would be the whole bin, bins are kept as they are */
  int *owner;              /* [s]: the rank of bin b, the owner of its first row */
  kd_dist_block *bin;      /* [s]: rows of bin b (n_in x d) on its owner, {n, NULL}: in place */
  kd_dist_block *core;     /* [s]: coreset of bin b on its owner, rows (x_1 .. x_d, pooled row) */
  kd_lidx *idx;            /* [n_in]: KT-Compress output of one bin */
  int64_t *nout, *coff;    /* [s] coreset sizes, [s + 1] their offsets in bin order */
  int64_t total;           /* coreset rows over all bins */
  int64_t *cbin;           /* [total]: bin of each output row */
  double *G, *stat2;       /* [s * s] mean kernel values, [B + 1] squared statistics */
  uint64_t ev0, evals;     /* kernel evaluations of this rank: count at the start of phase 2;
                              those of phases 2 (compress) and 4 (G) */
  double t0, t1, t2, t3;   /* phase boundaries (wall clock) */
} kd_ctt_drv_;

static void kd_ctt_drv_free_(kd_ctt_drv_ *D) {
  for (int64_t b = 0; b < D->cfg.s; b++) {
    if (D->bin) kd_dist_block_free(&D->bin[b]);
    if (D->core) kd_dist_block_free(&D->core[b]);
  }
  free(D->bin);
  free(D->core);
  free(D->owner);
  free(D->idx);
  free(D->nout);
  free(D->coff);
  free(D->cbin);
  free(D->G);
  free(D->stat2);
}

/* The split of Alg. 3 into t = s_m + s_n bins of n_in rows each: the first s_m n_in rows of X and
 * the first s_n n_in of Y, the rest unused (a data-independent choice, so the permutation test
 * stays exact). Over t in [max(2, s/2), 2s], nearest to s first (s, s-1, s+1, ...), the split
 * with the fewest unused rows wins; s_m = round(t m/(m+n)), n_in = min(m/s_m, n/s_n) >= 4. When
 * s m/(m+n) is an integer and the bins divide m and n, that is t = s with no row unused, as
 * Alg. 3 has it. Returns the unused rows, -1 when no t gives bins of 4 rows. Local. */
static int64_t kd_ctt_split_(int64_t s, kd_gidx m, kd_gidx n, int64_t *bins_x, int64_t *bins_y,
                             int64_t *bin_rows) {
  int64_t best = -1;
  for (int64_t k = 0; k <= 2 * s; k++) {
    const int64_t t = k % 2 ? s - (k + 1) / 2 : s + k / 2;
    if (t < 2 || t < s / 2 || t > 2 * s || t > m + n) continue;
    int64_t a = (int64_t)llround((double)t * (double)m / (double)(m + n));
    a = a < 1 ? 1 : a > t - 1 ? t - 1 : a;
    const int64_t b = t - a, r = m / a < n / b ? m / a : n / b;
    const int64_t unused = m + n - t * r;
    if (r < 4 || (best >= 0 && unused >= best)) continue;
    best = unused;
    *bins_x = a;
    *bins_y = b;
    *bin_rows = r;
    if (!unused) break;
  }
  return best;
}

kd_err kd_ctt_check_sizes(const kd_ctt_params *p, kd_gidx m, kd_gidx n, int64_t *bins_x,
                          int64_t *bins_y, int64_t *bin_rows) {
  kd_err err = KD_OK;
  const int64_t s = p->s, g = p->g;
  const double delta = p->delta;
  KD_CHECK_KEY(s >= 2, KD_ERR_CONFIG, "algorithm.s", "algorithm.s must be >= 2, got %lld",
               (long long)s);
  KD_CHECK_KEY(g >= 0 && g <= 30, KD_ERR_CONFIG, "algorithm.g",
               "algorithm.g must be in [0,30], got %lld", (long long)g);
  KD_CHECK_KEY(delta > 0.0 && delta < 1.0, KD_ERR_CONFIG, "algorithm.delta",
               "algorithm.delta must be in (0,1), got %g", delta);
  KD_CHECK_KEY(s <= m + n, KD_ERR_CONFIG, "algorithm.s",
               "algorithm.s = %lld exceeds m + n = %lld points", (long long)s, (long long)(m + n));
  int64_t s_m = 0, s_n = 0, n_in = 0;
  KD_CHECK_KEY(kd_ctt_split_(s, m, n, &s_m, &s_n, &n_in) >= 0, KD_ERR_CONFIG, "algorithm.s",
               "algorithm.s = %lld: m = %lld and n = %lld give no split into %lld to %lld equal "
               "bins of at least 4 points",
               (long long)s, (long long)m, (long long)n, (long long)(s / 2 > 2 ? s / 2 : 2),
               (long long)(2 * s));
  *bins_x = s_m;
  *bins_y = s_n;
  *bin_rows = n_in;
cleanup:
  return err;
}

static kd_err kd_ctt_check_(const kd_params *params, const kd_algo_shape *sh) {
  kd_err err = KD_OK;
  kd_ctt_params p;
  int64_t s_m, s_n, n_in;
  memset(&p, 0, sizeof p);
  KD_TRY(kd_params_fill(params, &p));
  if (sh->n_in < 1 || sh->n_second < 1) goto cleanup; /* empty samples: the run's own message */
  KD_TRY(kd_ctt_check_sizes(&p, sh->n_in, sh->n_second, &s_m, &s_n, &n_in));
cleanup:
  return err;
}

/* Check the parameters against m and n and fix the bins (Alg. 3). Local (replicated). */
static kd_err kd_ctt_setup_(kd_ctt_drv_ *D, const kd_algo_in *in, const kd_ctt_params *prm) {
  kd_err err = KD_OK;
  D->in = in;
  D->t0 = kd_dist_wtime();
  D->X = in->points;
  D->cfg = *prm;
  KD_TRY(kd_ctt_check_common(in, prm, &D->Y));
  D->comm = in->comm;
  D->rank = kd_dist_rank(D->comm);
  D->p = kd_dist_size(D->comm);
  const int64_t g = D->cfg.g;
  const kd_gidx m = kd_pointset_n_global(D->X), n = kd_pointset_n_global(D->Y);
  D->m = m;
  D->n = n;
  D->d = kd_pointset_dim(D->X);
  int64_t s_m = 0, s_n = 0, n_in = 0;
  KD_TRY(kd_ctt_check_sizes(&D->cfg, m, n, &s_m, &s_n, &n_in));
  /* KT-Compress keeps F 2^(g+K) rows, K = floor(log4 n_in), F = floor(n_in / 4^K) (= 2^g sqrt(n_in)
   * for n_in a power of 4); it compresses only when 4^(g+1) <= n_in. Otherwise the coreset would
   * be at least the whole bin, so the bin is kept as it is (no compression). */
  int K = 0;
  while (K < 31 && ((int64_t)1 << (2 * (K + 1))) <= n_in) K++;
  D->s_m = s_m;
  D->s_n = s_n;
  D->n_in = n_in;
  D->compress = K > g;
  if (D->cfg.rank > 0) { /* lrctt: sub-bins of 4^(g+1) rows halved when r > 4^(g+1) */
    const int64_t q = (int64_t)1 << (2 * (g + 1));
    D->compress = D->cfg.rank > q && q <= n_in;
  }
  D->unused = m + n - (s_m + s_n) * n_in;
  if (s_m + s_n != D->cfg.s || D->unused)
    kd_log_info(
        "ctt: m = %lld and n = %lld split into %lld + %lld bins of %lld rows (s = %lld "
        "asked for; unused: the last %lld rows of X and %lld of Y)",
        (long long)m, (long long)n, (long long)s_m, (long long)s_n, (long long)n_in,
        (long long)D->cfg.s, (long long)(m - s_m * n_in), (long long)(n - s_n * n_in));
  D->s_asked = D->cfg.s;
  D->cfg.s = s_m + s_n;
cleanup:
  return err;
}

/* Bins [b0, b0 + nb) (all of sample S) collected on their owners. Collective. */
static kd_err kd_ctt_collect_(kd_ctt_drv_ *D, const kd_pointset *S, int64_t b0, int64_t nb,
                              int64_t *offs, int64_t *bound) {
  for (int r = 0; r <= D->p; r++) offs[r] = kd_pointset_rank_offset(S, r);
  for (int64_t j = 0; j <= nb; j++) bound[j] = j * D->n_in;
  return kd_dist_bins_collect(D->comm, offs, kd_pointset_rows_const(S), D->d, nb, bound,
                              D->owner + b0, 1, D->bin + b0);
}

/* Phase 1 (logistics): bin b (X bins first, then Y bins) belongs to the rank holding its first
 * row; only a bin that straddles a rank boundary is moved (kd_dist_bins_collect). Which rank
 * compresses a bin does not change its coreset. Collective. */
static kd_err kd_ctt_distribute_(kd_ctt_drv_ *D) {
  kd_err err = KD_OK, lerr = KD_OK;
  const int64_t s = D->cfg.s;
  int64_t *offs = NULL, *bound = NULL;
  D->owner = malloc(sizeof *D->owner * (size_t)s);
  D->bin = calloc((size_t)s, sizeof *D->bin);
  D->core = calloc((size_t)s, sizeof *D->core);
  D->nout = calloc((size_t)s, sizeof *D->nout);
  D->idx = malloc((size_t)D->n_in * sizeof *D->idx);
  offs = malloc(sizeof *offs * (size_t)(D->p + 1));
  bound = malloc(sizeof *bound * (size_t)(s + 1));
  if (!D->owner || !D->bin || !D->core || !D->nout || !D->idx || !offs || !bound)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "ctt: cannot allocate the bins");
  KD_TRY(kd_dist_agreed(D->comm, lerr));
  for (int64_t b = 0; b < s; b++) {
    kd_gidx lo = 0;
    const kd_pointset *S = kd_ctt_bin_src_(D->X, D->Y, D->s_m, D->n_in, b, &lo);
    D->owner[b] = kd_pointset_owner(S, lo);
  }
  KD_TRY(kd_ctt_collect_(D, D->X, 0, D->s_m, offs, bound));
  KD_TRY(kd_ctt_collect_(D, D->Y, D->s_m, D->s_n, offs, bound));
cleanup:
  free(offs);
  free(bound);
  return err;
}

/* KT-Compress bin b (on its owner) into core[b], rows (x, pooled row number). Local. */
static kd_err kd_ctt_compress_bin_(kd_ctt_drv_ *D, int64_t b) {
  kd_err err = KD_OK;
  const int64_t n_in = D->n_in;
  const int d = D->d;
  kd_gidx lo = 0;
  const kd_pointset *S = kd_ctt_bin_src_(D->X, D->Y, D->s_m, n_in, b, &lo);
  const double *rows =
      D->bin[b].v ? D->bin[b].v : kd_pointset_rows_const(S) + (lo - kd_pointset_offset(S)) * d;
  kd_lidx k = n_in;
  if (D->cfg.rank > 0) { /* lrctt */
    KD_TRY(kd_lrctt_compress_bin(D->in->kernel, rows, n_in, d, &D->cfg, D->in->seed,
                                 KD_CTT_STREAM_BIN + (uint64_t)b, D->idx, &k));
  } else if (D->compress) {
    KD_TRY(kd_thin_kt_compress_local(D->in->kernel, rows, n_in, d, (int)D->cfg.g, D->cfg.delta,
                                     D->in->seed, KD_CTT_STREAM_BIN + (uint64_t)b, D->idx, &k));
    KD_CHECK(k >= 1 && k <= n_in, KD_ERR_INTERNAL,
             "ctt: KT-Compress returned %lld points for a bin of %lld", (long long)k,
             (long long)n_in);
  } else {
    for (kd_lidx j = 0; j < n_in; j++) D->idx[j] = j;
  }
  D->core[b].v = malloc((size_t)k * (size_t)(d + 1) * sizeof(double));
  KD_CHECK(D->core[b].v, KD_ERR_MEM, "ctt: cannot allocate a coreset");
  D->core[b].n = k * (d + 1);
  const int64_t shift = (S == D->X) ? 0 : D->m; /* pooled row numbering: X rows, then Y rows */
  for (kd_lidx j = 0; j < k; j++) {
    double *c = D->core[b].v + (size_t)j * (d + 1);
    memcpy(c, rows + (size_t)D->idx[j] * d, (size_t)d * sizeof(double));
    c[d] = (double)(shift + lo + D->idx[j]); /* exact: row numbers < 2^53 */
  }
cleanup:
  return err;
}

/* Phase 2: KT-Compress every local bin (Local, keyed by bin id), agreed. Collective. */
static kd_err kd_ctt_compress_(kd_ctt_drv_ *D) {
  kd_err err = KD_OK, lerr = KD_OK;
  D->t1 = kd_dist_wtime();
  D->ev0 = kd_kernel_evals(D->in->kernel);
  for (int64_t b = 0; b < D->cfg.s && lerr == KD_OK; b++) {
    if (D->owner[b] != D->rank) continue;
    lerr = kd_interrupt_check("ctt (no checkpoint)"); /* polled once per bin */
    if (lerr == KD_OK) lerr = kd_ctt_compress_bin_(D, b);
  }
  KD_TRY(kd_dist_agreed(D->comm, lerr));
  D->t2 = kd_dist_wtime();
cleanup:
  return err;
}

/* Phase 3 (logistics): the coresets in bin order on every rank (kd_dist_bins_allgather), as the
 * output rows (weight 1 / (s |coreset|)) with their bins. Collective. */
static kd_err kd_ctt_gather_(kd_ctt_drv_ *D, kd_result *out) {
  kd_err err = KD_OK;
  double *all = NULL;
  const int d = D->d;
  const int64_t s = D->cfg.s;
  KD_ALLOC(D->coff, s + 1);
  KD_TRY(kd_dist_bins_allgather(D->comm, s, D->owner, D->core, &all, D->coff));
  for (int64_t b = 0; b <= s; b++) D->coff[b] /= d + 1; /* values -> coreset rows */
  for (int64_t b = 0; b < s; b++) D->nout[b] = D->coff[b + 1] - D->coff[b];
  D->total = D->coff[s];
  KD_TRY(kd_result_alloc(out, D->total, d));
  KD_ALLOC(D->cbin, D->total);
  for (int64_t b = 0; b < s; b++)
    for (int64_t j = D->coff[b]; j < D->coff[b + 1]; j++) {
      memcpy(out->points + (size_t)j * d, all + (size_t)j * (d + 1), (size_t)d * sizeof(double));
      out->indices[j] = (kd_gidx)all[(size_t)j * (d + 1) + d];
      out->weights[j] = 1.0 / ((double)s * (double)D->nout[b]);
      D->cbin[j] = b;
    }
cleanup:
  free(all);
  return err;
}

kd_err kd_ctt_coreset_means_multi(MPI_Comm comm, kd_kernel *const *ks, int L, const double *pts,
                                  const int64_t *coff, int64_t s, int d, double *const *G) {
  kd_err err = KD_OK, lerr = KD_OK;
  double *tmp = NULL, *Gall = NULL, *ty[KD_CTT_MAX_KERNELS];
  const int rank = kd_dist_rank(comm), p = kd_dist_size(comm);
  int64_t maxn = 0;
  KD_CHECK(L >= 1 && L <= KD_CTT_MAX_KERNELS, KD_ERR_ARG, "ctt: %d kernels for the coreset means",
           L);
  for (int64_t b = 0; b < s; b++)
    maxn = coff[b + 1] - coff[b] > maxn ? coff[b + 1] - coff[b] : maxn;
  KD_ALLOC_AGREED(comm, tmp, maxn * L);
  KD_ALLOC_AGREED(comm, Gall, s * s * L);
  for (int l = 0; l < L; l++) ty[l] = tmp + maxn * l;
  for (int64_t i = 0, q = 0; i < s && lerr == KD_OK; i++)
    for (int64_t j = i; j < s; j++, q++) {
      if (q % p != rank) continue;
      const int64_t ni = coff[i + 1] - coff[i], nj = coff[j + 1] - coff[j];
      lerr = kd_kernel_matvec_multi(ks, L, pts + (size_t)coff[i] * d, ni, pts + (size_t)coff[j] * d,
                                    nj, NULL, ty);
      if (lerr != KD_OK) break;
      for (int l = 0; l < L; l++) {
        double acc = 0.0;
        for (int64_t t = 0; t < ni; t++) acc += ty[l][t];
        Gall[l * s * s + i * s + j] = Gall[l * s * s + j * s + i] = acc / ((double)ni * (double)nj);
      }
    }
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_sum(comm, Gall, (int)(s * s * L)));
  for (int l = 0; l < L; l++) memcpy(G[l], Gall + l * s * s, sizeof(double) * (size_t)(s * s));
cleanup:
  free(tmp);
  free(Gall);
  return err;
}

kd_err kd_ctt_coreset_means(MPI_Comm comm, kd_kernel *k, const double *pts, const int64_t *coff,
                            int64_t s, int d, double *G) {
  return kd_ctt_coreset_means_multi(comm, &k, 1, pts, coff, s, d, &G);
}

/* Phase 4: G_ij = mean kernel value between coresets i and j (kd_ctt_coreset_means; lrctt: from
 * the mean random Fourier features). Collective. */
static kd_err kd_ctt_means_(kd_ctt_drv_ *D, const kd_result *out) {
  kd_err err = KD_OK;
  const int64_t s = D->cfg.s;
  KD_ALLOC_AGREED(D->comm, D->G, s * s);
  if (D->cfg.rank > 0)
    KD_TRY(kd_lrctt_gram(D->comm, D->in->kernel, out->points, D->coff, s, D->d, D->cfg.rank,
                         D->in->seed, D->G));
  else
    KD_TRY(kd_ctt_coreset_means(D->comm, D->in->kernel, out->points, D->coff, s, D->d, D->G));
  for (int64_t q = 0; q < s * s; q++) /* replicated: every rank takes the same branch */
    KD_CHECK(isfinite(D->G[q]), KD_ERR_NUMERIC,
             "ctt: the kernel mean between coresets %lld and %lld is not finite (NaN or Inf in "
             "the data?)",
             (long long)(q / s), (long long)(q % s));
  D->evals = kd_kernel_evals(D->in->kernel) - D->ev0;
  D->t3 = kd_dist_wtime();
cleanup:
  return err;
}

/* Phase 5: B label permutations, O(s^2) each, the threshold of Alg. 3 and the /test outputs.
 * Local (replicated). */
static kd_err kd_ctt_permute_(kd_ctt_drv_ *D, kd_result *out) {
  kd_err err = KD_OK;
  const int64_t s = D->cfg.s, B = D->cfg.B, s_m = D->s_m;
  const double *G = D->G;
  KD_ALLOC(D->stat2, B + 1);
  KD_TRY(kd_ctt_labelled_stats(&G, 1, s, s_m, D->in->seed, B, D->stat2));
  kd_ctt_decision dec;
  KD_TRY(kd_ctt_decide(D->stat2, B, D->cfg.alpha, D->in->seed, &dec));
  KD_TRY(kd_ctt_add_outputs(out, D->stat2, B, &dec));
  const int64_t dims2[2] = {s, s}, dims1[1] = {s}, dimsc[1] = {D->total};
  const int64_t sizes[2] = {s_m, D->s_n};
  const int64_t dimb[1] = {2};
  KD_TRY(kd_result_add_f64(out, "/test/coreset_kernel_means", 2, dims2, D->G));
  KD_TRY(kd_result_add_i64(out, "/test/coreset_sizes", 1, dims1, D->nout));
  KD_TRY(kd_result_add_i64(out, "/test/coreset_bin", 1, dimsc, D->cbin));
  KD_TRY(kd_result_add_i64(out, "/test/bins", 1, dimb, sizes));
cleanup:
  return err;
}

/* Phase timings and counts (replicated: maxima / sums over ranks). Collective. */
static kd_err kd_ctt_metrics_(kd_ctt_drv_ *D, kd_result *out) {
  kd_err err = KD_OK;
  double tt[4] = {D->t1 - D->t0, D->t2 - D->t1, D->t3 - D->t2, kd_dist_wtime() - D->t0};
  KD_TRY(kd_dist_max(D->comm, tt, 4));
  KD_TRY(kd_dist_sum_u64(D->comm, &D->evals, 1));
  KD_TRY(kd_result_set_metric(out, "seconds_distribute", tt[0]));
  KD_TRY(kd_result_set_metric(out, "seconds_compress", tt[1]));
  KD_TRY(kd_result_set_metric(out, "seconds_coreset_kernel", tt[2]));
  KD_TRY(kd_result_set_count(out, "n_in", (int64_t)D->n_in));
  KD_TRY(kd_result_set_count(out, "compressed", (int64_t)D->compress));
  if (D->s_asked != D->cfg.s || D->unused) { /* only when the split is not Alg. 3's own */
    KD_TRY(kd_result_set_count(out, "s", D->cfg.s));
    KD_TRY(kd_result_set_count(out, "rows_unused", D->unused));
  }
  out->seconds = tt[3];
  out->kernel_evals = D->evals;
  out->mmd = sqrt(fmax(D->stat2[D->cfg.B], 0.0));
cleanup:
  return err;
}

/* kd_ctt_params.coresets_only: the coresets' datasets and the kernel evaluations of the
 * compression (summed over ranks), in place of phases 4 and 5. Collective. */
static kd_err kd_ctt_coresets_only_(kd_ctt_drv_ *D, kd_result *out) {
  kd_err err = KD_OK;
  const int64_t s = D->cfg.s, dims1[1] = {s}, dimsc[1] = {D->total}, dimb[1] = {2};
  const int64_t sizes[2] = {D->s_m, D->s_n};
  D->evals = kd_kernel_evals(D->in->kernel) - D->ev0;
  KD_TRY(kd_dist_sum_u64(D->comm, &D->evals, 1));
  out->kernel_evals = D->evals;
  KD_TRY(kd_result_add_i64(out, "/test/coreset_sizes", 1, dims1, D->nout));
  KD_TRY(kd_result_add_i64(out, "/test/coreset_bin", 1, dimsc, D->cbin));
  KD_TRY(kd_result_add_i64(out, "/test/bins", 1, dimb, sizes));
cleanup:
  return err;
}

kd_err kd_ctt_test(const kd_algo_in *in, const kd_ctt_params *p, kd_result *out) {
  kd_err err = KD_OK;
  kd_ctt_drv_ D;
  memset(&D, 0, sizeof D);
  KD_TRY(kd_ctt_setup_(&D, in, p));
  KD_TRY(kd_ctt_distribute_(&D));
  KD_TRY(kd_ctt_compress_(&D));
  KD_TRY(kd_ctt_gather_(&D, out));
  if (p->coresets_only) {
    KD_TRY(kd_ctt_coresets_only_(&D, out));
    goto cleanup;
  }
  KD_TRY(kd_ctt_means_(&D, out));
  KD_TRY(kd_ctt_permute_(&D, out));
  KD_TRY(kd_ctt_metrics_(&D, out));
cleanup:
  kd_ctt_drv_free_(&D);
  return err;
}

static kd_err kd_ctt_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_ctt_params p;
  memset(&p, 0, sizeof p);
  KD_TRY(kd_params_fill(in->params, &p));
  KD_TRY(kd_ctt_test(in, &p, out));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_ctt = {
    "ctt",
    "ctt",
    "Compress Then Test: KT-Compress s bins, permutation MMD test on the coresets (Alg. 3)",
    kd_ctt_params_,
    (int)(sizeof kd_ctt_params_ / sizeof kd_ctt_params_[0]),
    kd_ctt_run_,
    0,
    kd_ctt_check_,
    NULL};
