/* kernel_median.c - the median heuristic for the length scale: ls = median of |x_i - x_j| over the
 * pairs i < j of a seeded subsample of at most max_sample rows.
 *
 * The subsample is the max_sample rows with the smallest keys kd_rng_u64(seed, KD_MEDIAN_STREAM, g)
 * (ties by the global index g), so it depends only on (seed, n), never on the rank count: each rank
 * proposes its own smallest keys, an all-gather merges the proposals, every rank picks the same
 * rows and gathers them (kd_pointset_gather_rows). The m(m-1)/2 distances are split over the
 * ranks and the exact median is found by a radix selection with one summed histogram per round, so
 * memory per rank is m(m-1)/(2p) doubles and the result does not depend on p. An even number of
 * distances gives the mean of the two middle ones. Distances use the kernel's squared-distance
 * accumulation, so they are bitwise the same as inside the kernels. */
#include <stdlib.h>

#include "comm/dist_impl.h"
#include "kernel/kernel_impl.h"

#define KD_MEDIAN_STREAM 0x6d656469616e6c73ULL /* "medianls" */

typedef struct {
  uint64_t key;
  kd_gidx g;
} kd_median_key;

static int kd_median_key_cmp_(const void *pa, const void *pb) {
  const kd_median_key *a = pa, *b = pb;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return (a->g > b->g) - (a->g < b->g);
}

static int kd_gidx_cmp_(const void *pa, const void *pb) {
  kd_gidx a = *(const kd_gidx *)pa, b = *(const kd_gidx *)pb;
  return (a > b) - (a < b);
}

/* Sift k[i] down the max-heap k[0..n) (the largest key at the root). */
static void kd_median_sift_(kd_median_key *k, kd_lidx n, kd_lidx i) {
  for (;;) {
    kd_lidx c = 2 * i + 1;
    if (c >= n) return;
    if (c + 1 < n && kd_median_key_cmp_(&k[c + 1], &k[c]) > 0) c++;
    if (kd_median_key_cmp_(&k[c], &k[i]) <= 0) return;
    const kd_median_key tmp = k[i];
    k[i] = k[c];
    k[c] = tmp;
    i = c;
  }
}

/* k[0..m): the m smallest (key, g) of this rank's nl rows, in no order: a max-heap of the m
 * smallest so far, O(nl log m), where sorting all nl keys cost O(nl log nl) (0.2 s at 2^20). The
 * order (key, then g) is total, so the set is the same as the sort's first m. */
static void kd_median_smallest_(uint64_t seed, kd_gidx off, kd_lidx nl, kd_lidx m,
                                kd_median_key *k) {
  for (kd_lidx i = 0; i < m; i++) {
    k[i].key = kd_rng_u64(seed, KD_MEDIAN_STREAM, (uint64_t)(off + i));
    k[i].g = off + i;
  }
  for (kd_lidx i = m / 2; i-- > 0;) kd_median_sift_(k, m, i);
  for (kd_lidx i = m; i < nl && m > 0; i++) {
    const kd_median_key c = {kd_rng_u64(seed, KD_MEDIAN_STREAM, (uint64_t)(off + i)), off + i};
    if (kd_median_key_cmp_(&c, &k[0]) >= 0) continue;
    k[0] = c;
    kd_median_sift_(k, m, 0);
  }
}

/* Step 1: this rank's m smallest (key, g) as pairs of int64 in prop[2 * np]. Collective (agree). */
static kd_err kd_median_propose_(MPI_Comm comm, const kd_pointset *ps, uint64_t seed, kd_lidx m,
                                 kd_median_key **keys, int64_t **prop, kd_lidx *np_out) {
  kd_err err = KD_OK, lerr = KD_OK;
  const kd_lidx nl = kd_pointset_n_local(ps);
  const kd_lidx np = nl < m ? nl : m;
  const kd_gidx off = kd_pointset_offset(ps);
  *keys = malloc(sizeof **keys * (size_t)(nl > 0 ? nl : 1));
  *prop = malloc(sizeof **prop * (size_t)(2 * np + 1));
  if (!*keys || !*prop) {
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "kernel.ls: median heuristic: out of memory");
  } else {
    kd_median_key *k = *keys;
    kd_median_smallest_(seed, off, nl, np, k);
    qsort(k, (size_t)np, sizeof *k, kd_median_key_cmp_);
    for (kd_lidx i = 0; i < np; i++) {
      uint64_t kk = k[i].key;
      memcpy(&(*prop)[2 * i], &kk, sizeof kk);
      (*prop)[2 * i + 1] = k[i].g;
    }
  }
  *np_out = np;
  KD_TRY(kd_dist_agree(comm, &lerr));
  KD_TRY(lerr);
cleanup:
  return err;
}

/* Step 2: every rank sees all proposals (at most size * m pairs) and picks the same m rows, in
 * increasing global index (idx[m], allocated). keys may be reallocated. Collective. */
static kd_err kd_median_pick_(MPI_Comm comm, const int64_t *prop, kd_lidx np, kd_lidx nl, kd_lidx m,
                              kd_median_key **keys, kd_gidx **idx) {
  kd_err err = KD_OK;
  int64_t *all = NULL;
  int64_t tot = 2 * np;
  KD_TRY(kd_dist_sum_i64(comm, &tot, 1));
  KD_ALLOC_AGREED(comm, all, tot);
  KD_TRY(kd_dist_allgatherv_i64(comm, prop, 2 * np, all));
  const kd_lidx nall = tot / 2;
  if (nall > nl) { /* reuse the local keys when large enough */
    free(*keys);
    *keys = NULL;
    KD_ALLOC_AGREED(comm, *keys, nall);
  }
  kd_median_key *mk = *keys;
  for (kd_lidx i = 0; i < nall; i++) {
    uint64_t kk;
    memcpy(&kk, &all[2 * i], sizeof kk);
    mk[i].key = kk;
    mk[i].g = all[2 * i + 1];
  }
  qsort(mk, (size_t)nall, sizeof *mk, kd_median_key_cmp_);
  KD_CHECK(nall >= m, KD_ERR_INTERNAL, "kernel.ls: median subsample short (%lld < %lld)",
           (long long)nall, (long long)m);
  KD_ALLOC_AGREED(comm, *idx, m);
  for (kd_lidx i = 0; i < m; i++) (*idx)[i] = mk[i].g;
  qsort(*idx, (size_t)m, sizeof **idx, kd_gidx_cmp_);
cleanup:
  free(all);
  return err;
}

/* dist[t], t < count: the squared distances of the pairs (i, j), (i, j+1), ..., (i, m-1),
 * (i+1, i+2), ... of rows, accumulated like the kernels' SQDIST (explicit fma, identical bits in
 * every clone). Squared: sqrt is monotone, so it is applied to the two statistics only. */
KD_KCLONES static void kd_median_fill_(const double *rows, kd_lidx m, int d, kd_lidx i, kd_lidx j,
                                       int64_t count, double *dist) {
  for (int64_t t = 0; t < count; t++) {
    double s2 = 0.0;
    for (int kk = 0; kk < d; kk++) {
      double u = rows[i * d + kk] - rows[j * d + kk];
      s2 = fma(u, u, s2);
    }
    dist[t] = s2;
    if (++j == m) j = ++i + 1;
  }
}

/* Step 3: rank r computes the pairs [P r / p, P (r+1) / p) of the enumeration (0,1), (0,2), ...,
 * (1,2), ... of the m gathered rows: its share dist[*nd] of squared distances (allocated,
 * unsorted). Collective. */
static kd_err kd_median_distances_(MPI_Comm comm, const double *rows, kd_lidx m, int d,
                                   double **dist_out, int64_t *nd) {
  kd_err err = KD_OK, lerr = KD_OK;
  const int64_t npair = (int64_t)m * (int64_t)(m - 1) / 2;
  const int rank = kd_dist_rank(comm), size = kd_dist_size(comm);
  const int64_t q0 = npair * rank / size, q1 = npair * (rank + 1) / size;
  double *dist = malloc(sizeof *dist * (size_t)(q1 - q0 > 0 ? q1 - q0 : 1));
  *dist_out = dist;
  *nd = q1 - q0;
  lerr = dist ? KD_OK
              : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                           "kernel.ls: median heuristic: cannot allocate %lld distances "
                           "(lower kernel.median_sample)",
                           (long long)(q1 - q0));
  KD_TRY(kd_dist_agree(comm, &lerr));
  KD_TRY(lerr);
  kd_lidx i = 0;
  int64_t q = 0; /* index of pair (i, i+1) */
  while (q1 > q0 && q + (m - 1 - i) <= q0) q += m - 1 - i++;
  kd_median_fill_(rows, m, d, i, i + 1 + (kd_lidx)(q0 - q), q1 - q0, dist);
cleanup:
  return err;
}

/* Keeps the entries of dist[*a, *b) whose bit patterns lie in [lo, hi], packed at the front of
 * that window; the others are no longer needed and are overwritten. Linear, branch-free. */
static void kd_median_narrow_(double *dist, int64_t *a, int64_t *b, uint64_t lo, uint64_t hi) {
  int64_t w = *a;
  for (int64_t t = *a; t < *b; t++) {
    uint64_t u;
    memcpy(&u, &dist[t], sizeof u);
    dist[w] = dist[t];
    w += (u - lo) <= (hi - lo); /* lo <= u <= hi, unsigned wrap-around */
  }
  *b = w;
}

/* The digits of a 64-bit pattern, most significant first: sign and exponent, then the mantissa. */
static const int kd_median_shift_[] = {52, 44, 36, 28, 20, 12, 4, 0};
static const int kd_median_width_[] = {12, 8, 8, 8, 8, 8, 8, 4};
#define KD_MEDIAN_ROUNDS 8
#define KD_MEDIAN_MAX_BUCKETS 4096

/* One digit of both statistics: counts the window's entries that share stat c's known high bits,
 * by their next digit, sums the counts over the ranks, and moves pre[c] and the rank rk[c] within
 * the bucket that holds the statistic. cnt has 2 * KD_MEDIAN_MAX_BUCKETS entries. Collective. */
static kd_err kd_median_digit_(MPI_Comm comm, const double *dist, int64_t wa, int64_t wb, int r,
                               int64_t *cnt, uint64_t pre[2], int64_t rk[2]) {
  kd_err err = KD_OK;
  const int s = kd_median_shift_[r], top = s + kd_median_width_[r];
  const int64_t nb = (int64_t)1 << kd_median_width_[r];
  const uint64_t mask = (uint64_t)nb - 1;
  memset(cnt, 0, sizeof *cnt * (size_t)(2 * nb));
  if (top == 64 || (pre[0] >> top) == (pre[1] >> top)) {
    /* the usual case: both statistics share their known bits, so one histogram serves both */
    for (int64_t t = wa; t < wb; t++) {
      uint64_t u;
      memcpy(&u, &dist[t], sizeof u);
      if (top == 64 || (u >> top) == (pre[0] >> top)) cnt[(int64_t)((u >> s) & mask)]++;
    }
    memcpy(cnt + nb, cnt, sizeof *cnt * (size_t)nb);
  } else {
    for (int64_t t = wa; t < wb; t++) {
      uint64_t u;
      memcpy(&u, &dist[t], sizeof u);
      for (int c = 0; c < 2; c++)
        if ((u >> top) == (pre[c] >> top)) cnt[c * nb + (int64_t)((u >> s) & mask)]++;
    }
  }
  KD_TRY(kd_dist_sum_i64(comm, cnt, (int)(2 * nb)));
  for (int c = 0; c < 2; c++) {
    int64_t bkt = 0;
    while (bkt < nb - 1 && rk[c] >= cnt[c * nb + bkt]) rk[c] -= cnt[c * nb + bkt++];
    pre[c] |= (uint64_t)bkt << s;
  }
cleanup:
  return err;
}

/* Step 4: the exact order statistics k1 = (P-1)/2 and k2 = P/2 of all P squared distances by a
 * radix selection on their bit patterns (non-negative doubles order like their bits): 8 rounds,
 * one digit each, of a summed histogram. The result is the same value whatever the rank count.
 * Each rank keeps a window of its entries that can still be either statistic (partitioned in
 * place), so the work is a little over one pass over dist. dist (nd local, reordered).
 * Collective. */
static kd_err kd_median_select_(MPI_Comm comm, double *dist, int64_t nd, int64_t npair,
                                double *med) {
  kd_err err = KD_OK, lerr = KD_OK;
  int64_t rk[2] = {(npair - 1) / 2, npair / 2};
  uint64_t pre[2] = {0, 0};
  int64_t wa = 0, wb = nd;
  int64_t *cnt = malloc(sizeof *cnt * 2 * KD_MEDIAN_MAX_BUCKETS);
  lerr = cnt ? KD_OK
             : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                          "kernel.ls: median heuristic: cannot allocate its histogram");
  KD_TRY(kd_dist_agree(comm, &lerr));
  KD_TRY(lerr);
  for (int r = 0; r < KD_MEDIAN_ROUNDS; r++) {
    KD_TRY(kd_median_digit_(comm, dist, wa, wb, r, cnt, pre, rk));
    const uint64_t low = ((uint64_t)1 << kd_median_shift_[r]) - 1;
    kd_median_narrow_(dist, &wa, &wb, pre[0] < pre[1] ? pre[0] : pre[1],
                      (pre[0] > pre[1] ? pre[0] : pre[1]) | low);
  }
  double v1, v2;
  memcpy(&v1, &pre[0], sizeof v1);
  memcpy(&v2, &pre[1], sizeof v2);
  *med = 0.5 * (sqrt(v1) + sqrt(v2));
cleanup:
  free(cnt);
  return err;
}

/* The median distance over columns [c0, c1) of the m gathered rows (m x d): packed into their own
 * rows, split over the ranks and selected exactly. key names the length scale in the error when
 * the median is 0 or not finite. Collective. */
static kd_err kd_median_cols_(MPI_Comm comm, const double *rows, kd_lidx m, int d, int c0, int c1,
                              const char *key, double *med) {
  kd_err err = KD_OK;
  double *sub = NULL, *dist = NULL;
  int64_t nd = 0;
  const int w = c1 - c0;
  KD_ALLOC_AGREED(comm, sub, (size_t)m * w);
  for (kd_lidx i = 0; i < m; i++)
    memcpy(sub + i * w, rows + i * d + c0, sizeof(double) * (size_t)w);
  KD_TRY(kd_median_distances_(comm, sub, m, w, &dist, &nd));
  KD_TRY(kd_median_select_(comm, dist, nd, (int64_t)m * (int64_t)(m - 1) / 2, med));
  KD_CHECK(*med > 0 && isfinite(*med), KD_ERR_INPUT,
           "%s: median heuristic gave %g (more than half of the sampled pairs coincide "
           "or are not finite); set %s to a number",
           key, *med, key);
cleanup:
  free(sub);
  free(dist);
  return err;
}

int kd_kernel_median_pending(const kd_kernel *k) {
  return k && (k->ls_pending || k->ls_phi_pending);
}

kd_err kd_kernel_set_median_ls(kd_kernel *k, const kd_pointset *ps, uint64_t seed,
                               kd_lidx max_sample) {
  kd_err err = KD_OK;
  kd_median_key *keys = NULL;
  int64_t *prop = NULL;
  kd_gidx *idx = NULL;
  double *rows = NULL, *h = NULL;
  MPI_Comm comm = kd_pointset_comm(ps);
  const kd_gidx n = kd_pointset_n_global(ps);
  const int d = kd_pointset_dim(ps);
  /* checks every rank makes identically: no agreement needed */
  KD_CHECK(k != NULL, KD_ERR_ARG, "kernel: NULL kernel");
  KD_CHECK(d == k->d, KD_ERR_INPUT,
           "kernel.ls: median heuristic on points of dimension %d, kernel "
           "dimension %d",
           d, k->d);
  KD_CHECK(max_sample >= 2, KD_ERR_CONFIG, "kernel.median_sample: must be >= 2 (got %lld)",
           (long long)max_sample);
  KD_CHECK(n >= 2, KD_ERR_INPUT, "kernel.ls: median heuristic needs at least 2 points (got %lld)",
           (long long)n);
  const kd_lidx m = n < max_sample ? (kd_lidx)n : max_sample;
  kd_lidx np = 0;
  double med = 0.0, med_phi = 0.0;
  KD_TRY(kd_median_propose_(comm, ps, seed, m, &keys, &prop, &np));
  KD_TRY(kd_median_pick_(comm, prop, np, kd_pointset_n_local(ps), m, &keys, &idx));
  KD_ALLOC_AGREED(comm, rows, (size_t)m * d);
  KD_TRY(kd_pointset_gather_rows(ps, idx, m, rows));
  /* deep: one median per block, the inputs' and the embeddings', for the length scales that
   * asked for it (ls also when neither did, as every other family) */
  const int deep = k->p.type == KD_KERNEL_DEEP;
  const int do_phi = deep && k->p.ls_phi_median, do_ls = !deep || k->p.ls_median || !do_phi;
  if (deep) {
    if (do_ls) KD_TRY(kd_median_cols_(comm, rows, m, d, 0, k->p.dx, "kernel.ls", &med));
    if (do_phi) KD_TRY(kd_median_cols_(comm, rows, m, d, k->p.dx, d, "kernel.ls_phi", &med_phi));
  } else {
    const int dd = k->p.type == KD_KERNEL_STEIN ? d / 2 : d; /* stein: distances of x only */
    if (k->pre) { /* preconditioned stein: the Mahalanobis distances |L^-1 (x - y)| */
      KD_ALLOC_AGREED(comm, h, dd);
      for (kd_lidx i = 0; i < m; i++) {
        kd_stein_pre_map_x_(k, rows + i * d, h);
        memcpy(rows + i * d, h, sizeof(double) * (size_t)dd);
      }
    }
    KD_TRY(kd_median_cols_(comm, rows, m, d, 0, dd, "kernel.ls", &med));
  }
  /* p.ls_median (p.ls_phi_median) stays as the caller set it: it records where ls came from */
  if (do_ls) k->p.ls = med;
  if (do_phi) k->p.ls_phi = med_phi;
  k->ls_pending = 0;
  k->ls_phi_pending = 0;
  kd_kernel_refresh_(k);
  kd_kernel_update_desc_(k);
cleanup:
  free(keys);
  free(prop);
  free(idx);
  free(rows);
  free(h);
  return err;
}
