/* choose.c - seeded choice of k distinct rows of a distributed point set, independent of the rank
 * count: row g gets the key kd_rng_u64(seed, stream, g) and the k smallest keys win (ties: lowest
 * index). Each rank offers its k best, one all-gather, every rank selects the same k. */
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "kdistill/author/kd_pointset.h"

typedef struct {
  uint64_t key;
  int64_t idx;
} kd_keyed_row_;

static int kd_keyed_row_cmp_(const void *a, const void *b) {
  const kd_keyed_row_ *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return (x->idx > y->idx) - (x->idx < y->idx);
}

kd_err kd_pointset_choose_keyed(const kd_pointset *ps, uint64_t seed, uint64_t stream, kd_gidx k,
                                kd_gidx *idx) {
  kd_err err = KD_OK;
  kd_keyed_row_ *loc = NULL;
  double *send = NULL, *all = NULL;
  const MPI_Comm comm = kd_pointset_comm(ps);
  const kd_lidx nl = kd_pointset_n_local(ps);
  const kd_gidx off = kd_pointset_offset(ps);
  KD_CHECK(k >= 0 && k <= kd_pointset_n_global(ps), KD_ERR_INTERNAL,
           "cannot choose %lld of %lld rows", (long long)k, (long long)kd_pointset_n_global(ps));
  KD_ALLOC(loc, nl);
  for (kd_lidx i = 0; i < nl; i++) {
    loc[i].key = kd_rng_u64(seed, stream, (uint64_t)(off + i));
    loc[i].idx = off + i;
  }
  qsort(loc, (size_t)nl, sizeof *loc, kd_keyed_row_cmp_);
  const int64_t keep = nl < k ? nl : k;
  /* a key travels bit for bit in a double, next to its row index */
  KD_ALLOC(send, 2 * keep);
  for (int64_t i = 0; i < keep; i++) {
    memcpy(&send[2 * i], &loc[i].key, sizeof(double));
    send[2 * i + 1] = (double)loc[i].idx;
  }
  int64_t total = keep;
  KD_TRY(kd_dist_sum_i64(comm, &total, 1));
  KD_ALLOC(all, 2 * total);
  KD_TRY(kd_dist_allgatherv(comm, send, 2 * keep, all));
  free(loc);
  loc = NULL;
  KD_ALLOC(loc, total);
  for (int64_t i = 0; i < total; i++) {
    memcpy(&loc[i].key, &all[2 * i], sizeof(double));
    loc[i].idx = (int64_t)all[2 * i + 1];
  }
  qsort(loc, (size_t)total, sizeof *loc, kd_keyed_row_cmp_);
  for (kd_gidx i = 0; i < k; i++) idx[i] = loc[i].idx;
cleanup:
  free(loc);
  free(send);
  free(all);
  return err;
}
