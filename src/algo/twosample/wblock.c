/* wblock.c - the W-Block baseline of paper 003, Sec. 6.2 (Fig. 2; the B-test of Zaremba, Gretton
 * & Blaschko 2013 with a wild bootstrap): X and Y are cut into nblk = floor(min(m, n) / block)
 * blocks of `block` consecutive rows each (block j: x and y rows [j block, (j + 1) block), the
 * last rows of the larger sample unused); the statistic is the mean over blocks of the block's
 * V-statistic MMD^2, (1/nblk) sum_j (1/block^2) sum_{i,l in j} h(z_i, z_l) with
 * h(z_i, z_l) = k(x_i, x_l) + k(y_i, y_l) - k(x_i, y_l) - k(x_l, y_i), O(n block) work instead of
 * O(n^2). The null: the wild bootstrap of Chwialkowski et al. (2014) on the pairs (x_i, y_i),
 * replicate b multiplying pair i by a Rademacher sign keyed by its global index
 * (kd_ctt_wild_labels); swapping a pair's rows leaves the null distribution unchanged, so with
 * the randomised threshold of Alg. 3 (kd_ctt_decide) the size is alpha exactly (the diagonal
 * terms h(z_i, z_i), which a U-statistic would drop, are the same in every replicate and do not
 * change the decision). Distribution: chunks of KD_WB_CHUNK blocks, chunk range by rank; each
 * rank receives its blocks' rows (one all-to-all per sample), sums each chunk's blocks in block
 * order, and the chunks' sums are gathered and added in chunk order: the same bits at any rank
 * count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/twosample/ctt_impl.h"
#include "comm/dist_impl.h"

enum { KD_WB_CHUNK = 64 }; /* blocks per chunk: the unit of distribution and of summation */

static const kd_param_spec kd_wb_params_[] = {
    {"block", KD_PARAM_INT, 64, NULL, 2, 1e8, NULL,
     "rows of each sample per block (the paper's B; n / block blocks)",
     KD_PARAM_AT(kd_ctt_params, block)},
    KD_CTT_PARAM_B("number of wild-bootstrap replicates"),
    KD_CTT_PARAM_ALPHA,
    KD_CTT_PARAM_TILE,
};

static kd_err kd_wb_check_size_(const kd_ctt_params *p, kd_gidx m, kd_gidx n) {
  kd_err err = KD_OK;
  KD_CHECK_KEY(p->block >= 2 && p->block <= m && p->block <= n, KD_ERR_CONFIG, "algorithm.block",
               "algorithm.block = %lld: it must be at least 2 and at most the smaller sample "
               "(m = %lld, n = %lld)",
               (long long)p->block, (long long)m, (long long)n);
cleanup:
  return err;
}

static kd_err kd_wb_check_(const kd_params *params, const kd_algo_shape *sh) {
  return kd_ctt_check_with(params, sh, kd_wb_check_size_);
}

/* Rank r's rows [lo(r), hi(r)) of S, lo(r) = rows * c0(r), from their owners into out (rows of
 * this rank's range, in order). rows: sample rows per chunk; ch[p + 1]: each rank's first chunk;
 * rmax: rows of all chunks (the rest of S unused). Collective. */
static kd_err kd_wb_fetch_(MPI_Comm comm, const kd_pointset *S, int64_t rows, int64_t rmax,
                           const int64_t *ch, double *out) {
  kd_err err = KD_OK, lerr = KD_OK;
  const int p = kd_dist_size(comm), rank = kd_dist_rank(comm), d = kd_pointset_dim(S);
  int64_t *sc = NULL, *rc = NULL;
  double *send = NULL;
  const kd_gidx off = kd_pointset_offset(S), nl = kd_pointset_n_local(S);
  KD_ALLOC_AGREED(comm, sc, p);
  KD_ALLOC_AGREED(comm, rc, p);
  int64_t ns = 0;
  for (int r = 0; r < p; r++) {
    const int64_t lo = ch[r] * rows, hi = ch[r + 1] * rows < rmax ? ch[r + 1] * rows : rmax;
    const int64_t a = lo > off ? lo : off, b = hi < off + nl ? hi : off + nl;
    sc[r] = b > a ? (b - a) * d : 0;
    ns += sc[r];
    const int64_t mlo = ch[rank] * rows;
    const int64_t mhi = ch[rank + 1] * rows < rmax ? ch[rank + 1] * rows : rmax;
    const kd_gidx o0 = kd_pointset_rank_offset(S, r), o1 = kd_pointset_rank_offset(S, r + 1);
    const int64_t c = (mhi < o1 ? mhi : o1) - (mlo > o0 ? mlo : o0);
    rc[r] = c > 0 ? c * d : 0;
  }
  KD_ALLOC_AGREED(comm, send, ns);
  int64_t at = 0;
  for (int r = 0; r < p && lerr == KD_OK; r++) {
    if (!sc[r]) continue;
    const int64_t lo = ch[r] * rows > off ? ch[r] * rows : off;
    lerr = kd_pointset_rows_at(S, lo, (kd_lidx)(sc[r] / d), send + at);
    at += sc[r];
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_alltoallv(comm, send, sc, out, rc));
cleanup:
  free(sc);
  free(rc);
  free(send);
  return err;
}

/* The B + 1 squared statistics of the blocks [j0, j1) (rows of X in Xr, of Y in Yr from block j0
 * on), block by block, summed in block order into acc[nb]. Local. */
static kd_err kd_wb_blocks_(const kd_algo_in *in, const kd_ctt_params *p, int64_t j0, int64_t j1,
                            const double *Xr, const double *Yr, double *acc) {
  kd_err err = KD_OK;
  const int d = kd_kernel_dim(in->kernel);
  const int64_t bl = p->block, nb = p->B + 1, N = 2 * bl;
  const int64_t tile = p->tile < N ? p->tile : N, nt = (N + tile - 1) / tile;
  double *Z = NULL, *rowacc = NULL, *s2 = NULL, *ws = NULL;
  unsigned char *lab = NULL;
  KD_ALLOC(Z, N * d);
  KD_ALLOC(lab, N * nb);
  KD_ALLOC(rowacc, nt * nb);
  KD_ALLOC(s2, nb);
  const kd_ctt_quad q = {in->kernel, Z, N, nb, tile, d, lab, 1.0 / (double)bl, -1.0 / (double)bl};
  KD_ALLOC(ws, kd_ctt_quad_ws_size(&q));
  for (int64_t j = j0; j < j1; j++) {
    KD_TRY(kd_interrupt_check("wblock (no checkpoint)"));
    memcpy(Z, Xr + (size_t)((j - j0) * bl) * d, sizeof(double) * (size_t)(bl * d));
    memcpy(Z + (size_t)bl * d, Yr + (size_t)((j - j0) * bl) * d, sizeof(double) * (size_t)(bl * d));
    kd_ctt_wild_labels(bl, j * bl, nb, in->seed, lab);
    KD_TRY(kd_ctt_quad_local(&q, ws, rowacc, s2));
    for (int64_t b = 0; b < nb; b++) acc[b] += s2[b];
  }
cleanup:
  free(Z);
  free(lab);
  free(rowacc);
  free(s2);
  free(ws);
  return err;
}

/* This rank's chunks: rows fetched, each chunk's sum into csum[(c - ch[rank]) nb ..]. Then all
 * chunks' sums on every rank (in chunk order) and stat2[b] = their sum / nblk. Collective. */
static kd_err kd_wb_stats_(const kd_algo_in *in, const kd_pointset *Y, const kd_ctt_params *p,
                           int64_t nblk, const int64_t *ch, double *stat2, uint64_t *evals) {
  kd_err err = KD_OK, lerr = KD_OK;
  MPI_Comm comm = in->comm;
  const int rank = kd_dist_rank(comm), d = kd_pointset_dim(Y);
  const int64_t bl = p->block, nb = p->B + 1, nch = (nblk + KD_WB_CHUNK - 1) / KD_WB_CHUNK;
  const int64_t rows = KD_WB_CHUNK * bl, rmax = nblk * bl;
  const int64_t b0 = ch[rank] * KD_WB_CHUNK;
  const int64_t b1 = ch[rank + 1] * KD_WB_CHUNK < nblk ? ch[rank + 1] * KD_WB_CHUNK : nblk;
  const int64_t mine = b1 > b0 ? b1 - b0 : 0;
  double *Xr = NULL, *Yr = NULL, *csum = NULL, *all = NULL;
  KD_ALLOC_AGREED(comm, Xr, mine * bl * d);
  KD_ALLOC_AGREED(comm, Yr, mine * bl * d);
  KD_ALLOC_AGREED(comm, csum, (ch[rank + 1] - ch[rank]) * nb);
  KD_ALLOC_AGREED(comm, all, nch * nb);
  KD_TRY(kd_wb_fetch_(comm, in->points, rows, rmax, ch, Xr));
  KD_TRY(kd_wb_fetch_(comm, Y, rows, rmax, ch, Yr));
  const uint64_t e0 = kd_kernel_evals(in->kernel);
  for (int64_t c = ch[rank]; c < ch[rank + 1] && lerr == KD_OK; c++) {
    const int64_t j0 = c * KD_WB_CHUNK, j1 = j0 + KD_WB_CHUNK < nblk ? j0 + KD_WB_CHUNK : nblk;
    const size_t at = (size_t)((j0 - b0) * bl) * d;
    lerr = kd_wb_blocks_(in, p, j0, j1, Xr + at, Yr + at, csum + (c - ch[rank]) * nb);
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  *evals = kd_kernel_evals(in->kernel) - e0;
  KD_TRY(kd_dist_allgatherv(comm, csum, (ch[rank + 1] - ch[rank]) * nb, all));
  for (int64_t b = 0; b < nb; b++) {
    double s = 0.0;
    for (int64_t c = 0; c < nch; c++) s += all[c * nb + b];
    stat2[b] = s / (double)nblk;
  }
cleanup:
  free(Xr);
  free(Yr);
  free(csum);
  free(all);
  return err;
}

kd_err kd_ctt_wblock_test(const kd_algo_in *in, const kd_ctt_params *p, kd_result *out) {
  kd_err err = KD_OK;
  const kd_pointset *Y = NULL;
  double *stat2 = NULL;
  int64_t *ch = NULL;
  const double t0 = kd_dist_wtime();
  KD_TRY(kd_ctt_check_common(in, p, &Y));
  const kd_gidx m = kd_pointset_n_global(in->points), n = kd_pointset_n_global(Y);
  KD_TRY(kd_wb_check_size_(p, m, n));
  const int np = kd_dist_size(in->comm), d = kd_pointset_dim(Y);
  const int64_t B = p->B, nblk = (m < n ? m : n) / p->block;
  const int64_t nch = (nblk + KD_WB_CHUNK - 1) / KD_WB_CHUNK;
  KD_ALLOC_AGREED(in->comm, stat2, B + 1);
  KD_ALLOC_AGREED(in->comm, ch, np + 1);
  for (int r = 0; r <= np; r++) ch[r] = nch * r / np;
  uint64_t evals = 0;
  KD_TRY(kd_wb_stats_(in, Y, p, nblk, ch, stat2, &evals));
  KD_TRY(kd_ctt_finish(in, "wblock", stat2, p, d, t0, evals, out));
  KD_TRY(kd_result_set_count(out, "blocks", nblk));
  KD_TRY(kd_result_set_count(out, "rows_unused", m + n - 2 * nblk * p->block));
cleanup:
  free(stat2);
  free(ch);
  return err;
}

static kd_err kd_wb_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_ctt_params p;
  memset(&p, 0, sizeof p);
  KD_TRY(kd_params_fill(in->params, &p));
  KD_TRY(kd_ctt_wblock_test(in, &p, out));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_wblock = {
    "wblock",
    "ctt",
    "W-Block baseline: mean of block MMD^2 over n / block blocks, wild bootstrap (Zaremba 2013)",
    kd_wb_params_,
    (int)(sizeof kd_wb_params_ / sizeof kd_wb_params_[0]),
    kd_wb_run_,
    0,
    kd_wb_check_,
    NULL};
