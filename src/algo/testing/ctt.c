/* ctt.c - Compress Then Test (paper 003, Alg. 3; statistic eq. 37). X (m rows) is split into
 * s_m = s m/(m+n) and Y (n rows) into s_n = s n/(m+n) equal bins of n_in = (m+n)/s points; bin b
 * (X bins first, then Y bins) is compressed to 2^g sqrt(n_in) points by KT-Compress(delta) on
 * rank b mod p (no communication while compressing), the coresets are all-gathered, and the s x s
 * matrix G_ij of mean kernel values between coresets i and j is computed once (pair (i<=j) number
 * q on rank q mod p, then summed). Each of the B label permutations then costs O(s^2):
 * MMD^2 = w^T G w with w_i = 1/s_m on X-labelled coresets, -1/s_n on Y-labelled ones.
 * Randomness: KT-Compress of bin b uses stream KD_CTT_STREAM_BIN + b; permutations and the tie
 * break use the streams in ctt_impl.h, so the outcome does not depend on the rank count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/testing/ctt_impl.h"
#include "algo/thinning/compress_impl.h"
#include "dist/dist_impl.h"

static const kd_param_spec kd_ctt_params_[] = {
    {"s", KD_PARAM_INT, 16, NULL, 2, 1048576, NULL,
     "number of coresets (bins) s >= 2; s m/(m+n) bins of X and s n/(m+n) of Y, all equal",
     KD_PARAM_NONE},
    {"g", KD_PARAM_INT, 0, NULL, 0, 30, NULL,
     "compression level: each bin of n_in points is thinned to 2^g sqrt(n_in) points",
     KD_PARAM_NONE},
    {"delta", KD_PARAM_F64, 0.5, NULL, 0, 1, NULL,
     "KT-Compress failure probability delta, strictly inside (0,1)", KD_PARAM_NONE},
    {"B", KD_PARAM_INT, 100, NULL, 1, 1e8, NULL, "number of label permutations (replicates)",
     KD_PARAM_NONE},
    {"alpha", KD_PARAM_F64, 0.05, NULL, 0, 1, NULL, "nominal level, strictly inside (0,1)",
     KD_PARAM_NONE},
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

static kd_err kd_ctt_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK, lerr = KD_OK;
  const double t0 = kd_dist_wtime();
  const kd_pointset *X = in->points, *Y = NULL;
  double **bins = NULL, **cores = NULL, *mine = NULL, *all = NULL, *G = NULL, *tmp = NULL;
  double *stat2 = NULL;
  kd_lidx *idx = NULL;
  int64_t *nout = NULL, *minei = NULL, *alli = NULL, **corei = NULL, *coff = NULL;
  int64_t *cbin = NULL;
  unsigned char *lab = NULL;
  int nmine = 0;
  KD_TRY(kd_ctt_check_common(in, &Y));
  const MPI_Comm comm = in->comm;
  const int rank = kd_dist_rank(comm), p = kd_dist_size(comm);
  const int64_t s = kd_params_int(in->params, "s"), g = kd_params_int(in->params, "g");
  const double delta = kd_params_f64(in->params, "delta");
  const int64_t B = kd_params_int(in->params, "B");
  const double alpha = kd_params_f64(in->params, "alpha");
  const kd_gidx m = kd_pointset_n_global(X), n = kd_pointset_n_global(Y);
  const int d = kd_pointset_dim(X);
  KD_CHECK(s >= 2, KD_ERR_CONFIG, "algorithm.s must be >= 2, got %lld", (long long)s);
  KD_CHECK(g >= 0 && g <= 30, KD_ERR_CONFIG, "algorithm.g must be in [0,30], got %lld",
           (long long)g);
  KD_CHECK(delta > 0.0 && delta < 1.0, KD_ERR_CONFIG, "algorithm.delta must be in (0,1), got %g",
           delta);
  KD_CHECK(s <= m + n, KD_ERR_CONFIG, "algorithm.s = %lld exceeds m + n = %lld points",
           (long long)s, (long long)(m + n));
  KD_CHECK((s * m) % (m + n) == 0, KD_ERR_CONFIG,
           "algorithm.s = %lld: s*m/(m+n) = %lld*%lld/%lld is not an integer, so X and Y cannot "
           "be split into equal bins (Alg. 3)",
           (long long)s, (long long)s, (long long)m, (long long)(m + n));
  const int64_t s_m = s * m / (m + n), s_n = s - s_m;
  KD_CHECK(s_m >= 1 && s_n >= 1, KD_ERR_CONFIG,
           "algorithm.s = %lld gives %lld bins of X and %lld of Y; both need at least one",
           (long long)s, (long long)s_m, (long long)s_n);
  KD_CHECK(m % s_m == 0 && n % s_n == 0, KD_ERR_CONFIG,
           "algorithm.s = %lld: m = %lld and n = %lld do not split into equal bins of (m+n)/s",
           (long long)s, (long long)m, (long long)n);
  const int64_t n_in = m / s_m;
  KD_CHECK(n_in >= 4, KD_ERR_CONFIG,
           "algorithm.s = %lld leaves bins of %lld points; every bin needs at least 4 points",
           (long long)s, (long long)n_in);
  /* KT-Compress keeps F 2^(g+K) rows, K = floor(log4 n_in), F = floor(n_in / 4^K) (= 2^g sqrt(n_in)
   * for n_in a power of 4); it compresses only when 4^(g+1) <= n_in. Otherwise the coreset would
   * be at least the whole bin, so the bin is kept as it is (no compression). */
  int K = 0;
  while (K < 31 && ((int64_t)1 << (2 * (K + 1))) <= n_in) K++;
  const int compress = K > g;

  /* ---- phase 1: bin b goes to rank b mod p (allocate first, agree, then move rows) ---- */
  for (int64_t b = rank; b < s; b += p) nmine++;
  KD_ALLOC(bins, nmine ? nmine : 1);
  KD_ALLOC(cores, nmine ? nmine : 1);
  KD_ALLOC(corei, nmine ? nmine : 1);
  KD_ALLOC(nout, s);
  for (int i = 0; i < nmine && lerr == KD_OK; i++) {
    bins[i] = malloc((size_t)n_in * (size_t)d * sizeof(double));
    if (!bins[i]) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "ctt: cannot allocate a bin");
  }
  if (lerr == KD_OK) {
    idx = malloc((size_t)n_in * sizeof *idx);
    if (!idx) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "ctt: cannot allocate a bin");
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  for (int64_t b = 0; b < s; b++) {
    kd_gidx lo = 0;
    const kd_pointset *S = kd_ctt_bin_src_(X, Y, s_m, n_in, b, &lo);
    const int o = (int)(b % p);
    double *dst = (rank == o) ? bins[b / p] : NULL;
    for (int r = 0; r < p; r++) {
      const kd_gidx r_lo = kd_pointset_rank_offset(S, r), r_hi = kd_pointset_rank_offset(S, r + 1);
      const kd_gidx a = lo > r_lo ? lo : r_lo, e = (lo + n_in) < r_hi ? (lo + n_in) : r_hi;
      if (a >= e) continue;
      const int64_t cnt = (int64_t)(e - a) * d;
      if (r == o) {
        if (rank == o)
          memcpy(dst + (size_t)(a - lo) * d, kd_pointset_rows_const(S) + (size_t)(a - r_lo) * d,
                 (size_t)cnt * sizeof(double));
      } else if (rank == r) {
        KD_TRY(kd_dist_send(comm, kd_pointset_rows_const(S) + (size_t)(a - r_lo) * d, cnt, o, 71));
      } else if (rank == o) {
        int64_t got = 0;
        KD_TRY(kd_dist_recv(comm, dst + (size_t)(a - lo) * d, cnt, &got, r, 71));
        KD_CHECK(got == cnt, KD_ERR_INTERNAL, "ctt: bin %lld: received %lld of %lld values",
                 (long long)b, (long long)got, (long long)cnt);
      }
    }
  }

  /* ---- phase 2: KT-Compress every local bin (Local, keyed by bin id) ---- */
  const double t1 = kd_dist_wtime();
  for (int i = 0; i < nmine && lerr == KD_OK; i++) {
    const int64_t b = rank + (int64_t)i * p;
    kd_lidx k = n_in;
    if (compress) {
      lerr = kd_thin_kt_compress_local(in->kernel, bins[i], n_in, d, (int)g, delta, in->seed,
                                       KD_CTT_STREAM_BIN + (uint64_t)b, idx, &k);
      if (lerr == KD_OK && (k < 1 || k > n_in))
        lerr = kd_err_set(KD_ERR_INTERNAL, __FILE__, __LINE__,
                          "ctt: KT-Compress returned %lld points for a bin of %lld", (long long)k,
                          (long long)n_in);
    } else {
      for (kd_lidx j = 0; j < n_in; j++) idx[j] = j;
    }
    if (lerr != KD_OK) break;
    cores[i] = malloc((size_t)k * (size_t)d * sizeof(double));
    corei[i] = malloc((size_t)k * sizeof(int64_t));
    if (!cores[i] || !corei[i]) {
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "ctt: cannot allocate a coreset");
      break;
    }
    kd_gidx lo = 0;
    const kd_pointset *S = kd_ctt_bin_src_(X, Y, s_m, n_in, b, &lo);
    const int64_t shift = (S == X) ? 0 : m; /* pooled row numbering: X rows, then Y rows */
    for (kd_lidx j = 0; j < k; j++) {
      memcpy(cores[i] + (size_t)j * d, bins[i] + (size_t)idx[j] * d, (size_t)d * sizeof(double));
      corei[i][j] = shift + lo + idx[j];
    }
    nout[b] = k;
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  const double t2 = kd_dist_wtime();

  /* ---- phase 3: gather the coresets in bin order on every rank ---- */
  KD_TRY(kd_dist_sum_i64(comm, nout, (int)s));
  int64_t total = 0, nloc = 0;
  KD_ALLOC(coff, s + 1);
  for (int64_t b = 0; b < s; b++) coff[b + 1] = coff[b] + nout[b];
  total = coff[s];
  for (int i = 0; i < nmine; i++) nloc += nout[rank + (int64_t)i * p];
  KD_ALLOC(mine, nloc * d);
  KD_ALLOC(minei, nloc);
  for (int i = 0, at = 0; i < nmine; i++) {
    const int64_t k = nout[rank + (int64_t)i * p];
    memcpy(mine + (size_t)at * d, cores[i], (size_t)k * d * sizeof(double));
    memcpy(minei + at, corei[i], (size_t)k * sizeof(int64_t));
    at += (int)k;
  }
  KD_ALLOC(all, total * d);
  KD_ALLOC(alli, total);
  KD_TRY(kd_dist_allgatherv(comm, mine, nloc * d, all));
  KD_TRY(kd_dist_allgatherv_i64(comm, minei, nloc, alli));
  KD_TRY(kd_result_alloc(out, total, d));
  KD_ALLOC(cbin, total);
  {
    int64_t at = 0; /* rank r contributed bins r, r+p, ... in that order */
    for (int r = 0; r < p; r++)
      for (int64_t b = r; b < s; b += p) {
        memcpy(out->points + (size_t)coff[b] * d, all + (size_t)at * d,
               (size_t)nout[b] * d * sizeof(double));
        for (int64_t j = 0; j < nout[b]; j++) {
          out->indices[coff[b] + j] = alli[at + j];
          out->weights[coff[b] + j] = 1.0 / ((double)s * (double)nout[b]);
          cbin[coff[b] + j] = b;
        }
        at += nout[b];
      }
  }

  /* ---- phase 4: G_ij = mean kernel value between coresets i and j, pair q on rank q mod p ---- */
  KD_ALLOC(G, s * s);
  {
    int64_t maxn = 0;
    for (int64_t b = 0; b < s; b++) maxn = nout[b] > maxn ? nout[b] : maxn;
    KD_ALLOC(tmp, maxn);
  }
  const uint64_t ev0 = kd_kernel_evals(in->kernel);
  for (int64_t i = 0, q = 0; i < s && lerr == KD_OK; i++)
    for (int64_t j = i; j < s; j++, q++) {
      if (q % p != rank) continue;
      memset(tmp, 0, (size_t)nout[i] * sizeof(double));
      lerr = kd_kernel_matvec(in->kernel, out->points + (size_t)coff[i] * d, nout[i],
                              out->points + (size_t)coff[j] * d, nout[j], NULL, 0.0, tmp);
      if (lerr != KD_OK) break;
      double acc = 0.0;
      for (int64_t t = 0; t < nout[i]; t++) acc += tmp[t];
      G[i * s + j] = G[j * s + i] = acc / ((double)nout[i] * (double)nout[j]);
    }
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_sum(comm, G, (int)(s * s))); /* each entry is non-zero on one rank: exact */
  for (int64_t q = 0; q < s * s; q++)         /* replicated: every rank takes the same branch */
    KD_CHECK(isfinite(G[q]), KD_ERR_NUMERIC,
             "ctt: the kernel mean between coresets %lld and %lld is not finite (NaN or Inf in "
             "the data?)",
             (long long)(q / s), (long long)(q % s));
  uint64_t evals = kd_kernel_evals(in->kernel) - ev0;
  const double t3 = kd_dist_wtime();

  /* ---- phase 5: B label permutations, O(s^2) each, and the threshold of Alg. 3 ---- */
  KD_ALLOC(stat2, B + 1);
  KD_ALLOC(lab, s);
  for (int64_t b = 0; b < B; b++) {
    kd_ctt_permute_labels(s, s_m, in->seed, b, lab);
    stat2[b] = kd_ctt_labelled_mmd2(G, s, lab);
  }
  for (int64_t i = 0; i < s; i++) lab[i] = (unsigned char)(i < s_m ? 0 : 1);
  stat2[B] = kd_ctt_labelled_mmd2(G, s, lab);
  kd_ctt_decision dec;
  KD_TRY(kd_ctt_decide(stat2, B, alpha, in->seed, &dec));
  KD_TRY(kd_ctt_add_outputs(out, stat2, B, &dec));
  {
    const int64_t dims2[2] = {s, s}, dims1[1] = {s}, dimsc[1] = {total};
    const int64_t sizes[2] = {s_m, s_n};
    const int64_t dimb[1] = {2};
    KD_TRY(kd_result_add_f64(out, "/test/coreset_kernel_means", 2, dims2, G));
    KD_TRY(kd_result_add_i64(out, "/test/coreset_sizes", 1, dims1, nout));
    KD_TRY(kd_result_add_i64(out, "/test/coreset_bin", 1, dimsc, cbin));
    KD_TRY(kd_result_add_i64(out, "/test/bins", 1, dimb, sizes));
  }
  /* phase timings and counts (replicated: maxima / sums over ranks) */
  {
    double tt[4] = {t1 - t0, t2 - t1, t3 - t2, kd_dist_wtime() - t0};
    KD_TRY(kd_dist_max(comm, tt, 4));
    KD_TRY(kd_dist_sum_u64(comm, &evals, 1));
    KD_TRY(kd_result_set_metric(out, "seconds_distribute", tt[0]));
    KD_TRY(kd_result_set_metric(out, "seconds_compress", tt[1]));
    KD_TRY(kd_result_set_metric(out, "seconds_coreset_kernel", tt[2]));
    KD_TRY(kd_result_set_metric(out, "n_in", (double)n_in));
    KD_TRY(kd_result_set_metric(out, "compressed", (double)compress));
    out->seconds = tt[3];
    out->kernel_evals = evals;
    out->mmd = sqrt(fmax(stat2[B], 0.0));
  }
cleanup:
  for (int i = 0; i < nmine; i++) {
    if (bins) free(bins[i]);
    if (cores) free(cores[i]);
    if (corei) free(corei[i]);
  }
  free(bins);
  free(cores);
  free(corei);
  free(idx);
  free(nout);
  free(coff);
  free(mine);
  free(minei);
  free(all);
  free(alli);
  free(cbin);
  free(G);
  free(tmp);
  free(stat2);
  free(lab);
  return err;
}

const kd_algo_desc kd_algo_ctt = {
    "ctt",
    "ctt",
    "Compress Then Test: KT-Compress s bins, permutation MMD test on the coresets (Alg. 3)",
    kd_ctt_params_,
    (int)(sizeof kd_ctt_params_ / sizeof kd_ctt_params_[0]),
    kd_ctt_run_};
