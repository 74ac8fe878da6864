/* subsample_test.c - the Subsampling baseline of paper 003, Sec. 6.2 (Fig. 2): the MMD two-sample
 * test on n_out rows drawn uniformly without replacement from each sample, with the wild bootstrap
 * of Chwialkowski et al. (2014) for the null. The drawn rows are paired (x_i, y_i); the statistic
 * is the V-statistic MMD^2 = (1/n_out^2) sum_ij h(z_i, z_j), h(z_i, z_j) = k(x_i, x_j) +
 * k(y_i, y_j) - k(x_i, y_j) - k(x_j, y_i), and replicate b multiplies pair i by a Rademacher sign
 * (kd_ctt_wild_labels). Swapping the two rows of a pair leaves the null distribution unchanged,
 * so with the randomised threshold of Alg. 3 (kd_ctt_decide) the test has size alpha exactly at
 * any n_out, not only asymptotically. With n_out = m = n it is the exact full-sample MMD test
 * with sign flips for permutations. Rows: kd_pointset_choose_keyed on streams
 * KD_CTT_STREAM_SUB + 0 (X) and + 1 (Y), the same at any rank count; the drawn rows are
 * gathered on every rank and the tile rows of the 2 n_out x 2 n_out kernel matrix split over the
 * ranks as in ctt_exact (balanced triangle, summed in tile-row order): the statistics are the same
 * bits at any rank count. Work O(n_out^2 (B + 1) / p). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/twosample/ctt_impl.h"
#include "comm/dist_impl.h"

static const kd_param_spec kd_sub_params_[] = {
    {"n_out", KD_PARAM_INT, 1024, NULL, 2, 1e9, NULL,
     "rows drawn uniformly without replacement from each sample (at most min(m, n))",
     KD_PARAM_AT(kd_ctt_params, n_out)},
    KD_CTT_PARAM_B("number of wild-bootstrap replicates"),
    KD_CTT_PARAM_ALPHA,
    KD_CTT_PARAM_TILE,
};

static kd_err kd_sub_check_size_(const kd_ctt_params *p, kd_gidx m, kd_gidx n) {
  kd_err err = KD_OK;
  KD_CHECK_KEY(p->n_out >= 2 && p->n_out <= m && p->n_out <= n, KD_ERR_CONFIG, "algorithm.n_out",
               "algorithm.n_out = %lld: it must be at least 2 and at most the smaller sample "
               "(m = %lld, n = %lld)",
               (long long)p->n_out, (long long)m, (long long)n);
cleanup:
  return err;
}

static kd_err kd_sub_check_(const kd_params *params, const kd_algo_shape *sh) {
  return kd_ctt_check_with(params, sh, kd_sub_check_size_);
}

/* The n_out drawn rows of X and then of Y on every rank (Z, 2 n_out x d). Collective. */
static kd_err kd_sub_draw_(const kd_algo_in *in, const kd_pointset *Y, int64_t n_out, double *Z) {
  kd_err err = KD_OK;
  kd_gidx *idx = NULL;
  const int d = kd_pointset_dim(Y);
  KD_ALLOC_AGREED(in->comm, idx, n_out);
  KD_TRY(kd_pointset_choose_keyed(in->points, in->seed, KD_CTT_STREAM_SUB, n_out, idx));
  KD_TRY(kd_pointset_gather_rows(in->points, idx, n_out, Z));
  KD_TRY(kd_pointset_choose_keyed(Y, in->seed, KD_CTT_STREAM_SUB + 1, n_out, idx));
  KD_TRY(kd_pointset_gather_rows(Y, idx, n_out, Z + (size_t)n_out * d));
cleanup:
  free(idx);
  return err;
}

kd_err kd_ctt_subsample_test(const kd_algo_in *in, const kd_ctt_params *p, kd_result *out) {
  kd_err err = KD_OK;
  const kd_pointset *Y = NULL;
  double *Z = NULL, *rowacc = NULL, *stat2 = NULL;
  unsigned char *lab = NULL;
  const double t0 = kd_dist_wtime();
  KD_TRY(kd_ctt_check_common(in, p, &Y));
  const kd_gidx m = kd_pointset_n_global(in->points), n = kd_pointset_n_global(Y);
  KD_TRY(kd_sub_check_size_(p, m, n));
  const int d = kd_pointset_dim(Y), rank = kd_dist_rank(in->comm), np = kd_dist_size(in->comm);
  const int64_t n_out = p->n_out, B = p->B, nb = B + 1, N = 2 * n_out;
  const int64_t tile = p->tile, nt = (N + tile - 1) / tile;
  KD_ALLOC_AGREED(in->comm, Z, N * d);
  KD_ALLOC_AGREED(in->comm, lab, N * nb);
  KD_ALLOC_AGREED(in->comm, rowacc, nt * nb);
  KD_ALLOC_AGREED(in->comm, stat2, nb);
  KD_TRY(kd_sub_draw_(in, Y, n_out, Z));
  kd_ctt_wild_labels(n_out, 0, nb, in->seed, lab);
  const kd_ctt_quad q = {in->kernel,          Z, N, nb, tile, d, lab, 1.0 / (double)n_out,
                         -1.0 / (double)n_out};
  uint64_t evals = kd_kernel_evals(in->kernel);
  KD_TRY(kd_dist_agreed(
      in->comm, kd_ctt_quad_rows(&q, rank, np, "subsample_test (no checkpoint)", NULL, rowacc)));
  evals = kd_kernel_evals(in->kernel) - evals;
  for (int64_t off = 0; off < nt * nb; off += (1 << 26)) {
    const int64_t len = nt * nb - off < (1 << 26) ? nt * nb - off : (1 << 26);
    KD_TRY(kd_dist_sum(in->comm, rowacc + off, (int)len)); /* one non-zero term each: exact */
  }
  for (int64_t b = 0; b < nb; b++) {
    double acc = 0.0;
    for (int64_t ti = 0; ti < nt; ti++) acc += rowacc[ti * nb + b];
    stat2[b] = acc;
  }
  KD_TRY(kd_ctt_finish(in, "subsample_test", stat2, p, d, t0, evals, out));
  KD_TRY(kd_result_set_count(out, "n_out", n_out));
cleanup:
  free(Z);
  free(lab);
  free(rowacc);
  free(stat2);
  return err;
}

static kd_err kd_sub_run_(const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  kd_ctt_params p;
  memset(&p, 0, sizeof p);
  KD_TRY(kd_params_fill(in->params, &p));
  KD_TRY(kd_ctt_subsample_test(in, &p, out));
cleanup:
  return err;
}

const kd_algo_desc kd_algo_subsample_test = {
    "subsample_test",
    "ctt",
    "Subsampling baseline: MMD test on n_out uniformly drawn rows of each sample, wild bootstrap",
    kd_sub_params_,
    (int)(sizeof kd_sub_params_ / sizeof kd_sub_params_[0]),
    kd_sub_run_,
    0,
    kd_sub_check_,
    NULL};
