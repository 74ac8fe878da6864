/* kernel_median.c - the median heuristic for the length scale: ls = median of |x_i - x_j| over the
 * pairs i < j of a seeded subsample of at most max_sample rows.
 *
 * The subsample is the max_sample rows with the smallest keys kd_rng_u64(seed, KD_MEDIAN_STREAM, g)
 * (ties by the global index g), so it depends only on (seed, n), never on the rank count: each rank
 * proposes its own smallest keys, an all-gather merges the proposals, every rank picks the same
 * rows, gathers them (kd_pointset_gather_rows) and computes the same median. An even number of
 * distances gives the mean of the two middle ones. Distances use the kernel's squared-distance
 * accumulation, so they are bitwise the same as inside the kernels. */
#include <stdlib.h>

#include "dist/dist_impl.h"
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

static int kd_double_cmp_(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

kd_err kd_kernel_set_median_ls(kd_kernel *k, const kd_pointset *ps, uint64_t seed,
                               kd_lidx max_sample) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_median_key *keys = NULL;
  int64_t *prop = NULL, *all = NULL;
  kd_gidx *idx = NULL;
  double *rows = NULL, *dist = NULL;
  MPI_Comm comm = kd_pointset_comm(ps);
  const kd_gidx n = kd_pointset_n_global(ps);
  const kd_lidx nl = kd_pointset_n_local(ps);
  const int d = kd_pointset_dim(ps);
  /* checks every rank makes identically: no agreement needed */
  KD_CHECK(k != NULL, KD_ERR_ARG, "kernel: NULL kernel");
  KD_CHECK(d == k->d, KD_ERR_INPUT, "kernel.ls: median heuristic on points of dimension %d, kernel "
           "dimension %d", d, k->d);
  KD_CHECK(max_sample >= 2, KD_ERR_CONFIG,
           "kernel.median_sample: must be >= 2 (got %lld)", (long long)max_sample);
  KD_CHECK(n >= 2, KD_ERR_INPUT, "kernel.ls: median heuristic needs at least 2 points (got %lld)",
           (long long)n);
  const kd_lidx m = n < max_sample ? (kd_lidx)n : max_sample;

  /* 1. local proposals: this rank's m smallest (key, g) */
  const kd_lidx np = nl < m ? nl : m;
  const kd_gidx off = kd_pointset_offset(ps);
  keys = malloc(sizeof *keys * (size_t)(nl > 0 ? nl : 1));
  prop = malloc(sizeof *prop * (size_t)(2 * np + 1));
  if (!keys || !prop) {
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "kernel.ls: median heuristic: out of memory");
  } else {
    for (kd_lidx i = 0; i < nl; i++) {
      keys[i].key = kd_rng_u64(seed, KD_MEDIAN_STREAM, (uint64_t)(off + i));
      keys[i].g = off + i;
    }
    qsort(keys, (size_t)nl, sizeof *keys, kd_median_key_cmp_);
    for (kd_lidx i = 0; i < np; i++) {
      uint64_t kk = keys[i].key;
      memcpy(&prop[2 * i], &kk, sizeof kk);
      prop[2 * i + 1] = keys[i].g;
    }
  }
  KD_TRY(kd_dist_agree(comm, &lerr));
  KD_TRY(lerr);

  /* 2. merge: every rank sees all proposals (at most size * m pairs) and picks the same m rows */
  int64_t tot = 2 * np;
  KD_TRY(kd_dist_sum_i64(comm, &tot, 1));
  KD_ALLOC(all, tot);
  KD_TRY(kd_dist_allgatherv_i64(comm, prop, 2 * np, all));
  {
    const kd_lidx nall = tot / 2;
    kd_median_key *mk = keys; /* reuse when large enough */
    if (nall > nl) {
      free(keys);
      keys = NULL;
      KD_ALLOC(keys, nall);
      mk = keys;
    }
    for (kd_lidx i = 0; i < nall; i++) {
      uint64_t kk;
      memcpy(&kk, &all[2 * i], sizeof kk);
      mk[i].key = kk;
      mk[i].g = all[2 * i + 1];
    }
    qsort(mk, (size_t)nall, sizeof *mk, kd_median_key_cmp_);
    KD_CHECK(nall >= m, KD_ERR_INTERNAL, "kernel.ls: median subsample short (%lld < %lld)",
             (long long)nall, (long long)m);
    KD_ALLOC(idx, m);
    for (kd_lidx i = 0; i < m; i++) idx[i] = mk[i].g;
    qsort(idx, (size_t)m, sizeof *idx, kd_gidx_cmp_);
  }

  /* 3. gather the rows and take the median of the pairwise distances (same on every rank) */
  KD_ALLOC(rows, (size_t)m * d);
  KD_TRY(kd_pointset_gather_rows(ps, idx, m, rows));
  const size_t npair = (size_t)m * (size_t)(m - 1) / 2;
  dist = malloc(sizeof *dist * npair);
  lerr = dist ? KD_OK : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                   "kernel.ls: median heuristic: cannot allocate %zu distances",
                                   npair);
  KD_TRY(kd_dist_agree(comm, &lerr));
  KD_TRY(lerr);
  {
    size_t q = 0;
    for (kd_lidx i = 0; i < m; i++)
      for (kd_lidx j = i + 1; j < m; j++) {
        double s2 = 0.0;
        for (int kk = 0; kk < d; kk++) {
          double t = rows[i * d + kk] - rows[j * d + kk];
          s2 = fma(t, t, s2);
        }
        dist[q++] = sqrt(s2);
      }
    qsort(dist, npair, sizeof *dist, kd_double_cmp_);
    double med = (npair % 2) ? dist[npair / 2] : 0.5 * (dist[npair / 2 - 1] + dist[npair / 2]);
    KD_CHECK(med > 0 && isfinite(med), KD_ERR_INPUT,
             "kernel.ls: median heuristic gave %g (more than half of the sampled pairs coincide); "
             "set kernel.ls to a number",
             med);
    k->p.ls = med; /* p.ls_median stays as the caller set it: it records where ls came from */
    kd_kernel_refresh_(k);
    kd_kernel_update_desc_(k);
  }
cleanup:
  free(keys);
  free(prop);
  free(all);
  free(idx);
  free(rows);
  free(dist);
  return err;
}
