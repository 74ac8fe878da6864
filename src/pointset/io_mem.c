/* io_mem.c - point sets from caller-owned memory (kd_pointset_from_array, kd_data.h): each rank
 * passes its own block of rows; the global order is rank 0's block, then rank 1's, ... A float64
 * C-order block that already is the library's block split is borrowed in place; otherwise every
 * rank converts its block once, and when the caller's split differs from the library's, the
 * blocks travel by one broadcast per rank (each rank keeps the overlap with its own block). */
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "kdistill/kd_data.h"
#include "pointset/pointset_impl.h"

static double kd_mem_at_(const kd_data_array *a, int64_t i, int j) {
  const int64_t k = i * a->row_stride + (int64_t)j * a->col_stride;
  return a->dtype == KD_DTYPE_F32 ? (double)((const float *)a->data)[k]
                                  : ((const double *)a->data)[k];
}

/* Rows [i0, i0 + nr) of the caller's block, as row-major float64, into out[nr * d]. Local. */
static void kd_mem_convert_(const kd_data_array *a, int64_t i0, int64_t nr, double *out) {
  const int d = a->d;
  if (a->dtype == KD_DTYPE_F64 && a->col_stride == 1 && a->row_stride == d) {
    if (nr) memcpy(out, (const double *)a->data + i0 * d, (size_t)nr * (size_t)d * sizeof *out);
    return;
  }
  for (int64_t i = 0; i < nr; i++)
    for (int j = 0; j < d; j++) out[i * d + j] = kd_mem_at_(a, i0 + i, j);
}

/* Local checks of this rank's block; the message names `what`. */
static kd_err kd_mem_check_(const kd_data_array *a, const char *what) {
  kd_err err = KD_OK;
  KD_CHECK(a->n_local >= 0, KD_ERR_INPUT, "%s: negative row count %lld", what,
           (long long)a->n_local);
  KD_CHECK(a->d >= 1, KD_ERR_INPUT, "%s: dimension must be >= 1, got %d", what, a->d);
  KD_CHECK(a->dtype == KD_DTYPE_F64 || a->dtype == KD_DTYPE_F32, KD_ERR_INPUT,
           "%s: element type must be float64 or float32", what);
  KD_CHECK(a->n_local == 0 || a->data, KD_ERR_INPUT, "%s: no data for %lld rows", what,
           (long long)a->n_local);
cleanup:
  return err;
}

/* The callers' blocks differ from the library's split: each rank in turn broadcasts its
 * converted block and every rank copies the overlap with its own rows. Collective. */
static kd_err kd_mem_redistribute_(const kd_data_array *a, const int64_t *counts, kd_pointset *ps) {
  kd_err err = KD_OK;
  double *buf = NULL;
  const int d = ps->d;
  int64_t maxc = 0, off = 0;
  for (int r = 0; r < ps->size; r++) maxc = counts[r] > maxc ? counts[r] : maxc;
  KD_ALLOC(buf, (size_t)maxc * (size_t)d);
  for (int r = 0; r < ps->size; off += counts[r], r++) {
    if (!counts[r]) continue;
    if (r == ps->rank) kd_mem_convert_(a, 0, counts[r], buf);
    KD_TRY(kd_dist_bcast(ps->comm, buf, counts[r] * d * (int64_t)sizeof(double), r));
    const int64_t lo = off > ps->offset ? off : ps->offset;
    const int64_t e1 = off + counts[r], e2 = ps->offset + ps->n_local;
    const int64_t hi = e1 < e2 ? e1 : e2;
    if (hi > lo)
      memcpy(ps->rows + (lo - ps->offset) * d, buf + (lo - off) * d,
             (size_t)(hi - lo) * (size_t)d * sizeof(double));
  }
cleanup:
  free(buf);
  return err;
}

kd_err kd_pointset_from_array(MPI_Comm comm, const kd_data_array *a, const char *what,
                              kd_pointset **out) {
  kd_err err = KD_OK;
  kd_pointset *ps = NULL;
  int64_t *counts = NULL;
  const int p = kd_dist_size(comm), rank = kd_dist_rank(comm);
  *out = NULL;
  KD_TRY(kd_dist_agreed(comm, kd_mem_check_(a, what)));
  int64_t dd[2] = {a->d, -(int64_t)a->d}; /* max d, -min d */
  KD_TRY(kd_dist_max_i64(comm, dd, 2));
  KD_CHECK(dd[0] == -dd[1], KD_ERR_INPUT,
           "%s: the ranks pass blocks of different dimension (%lld and %lld columns)", what,
           (long long)-dd[1], (long long)dd[0]);
  KD_ALLOC(counts, p);
  KD_TRY(kd_dist_allgatherv_i64(comm, &a->n_local, 1, counts));
  int64_t n = 0, my_off = 0;
  for (int r = 0; r < p; r++) {
    if (r < rank) my_off += counts[r];
    n += counts[r];
  }
  KD_TRY(kd_pointset_create(comm, n, a->d, &ps));
  /* the caller's split equals the library's on every rank? (agreed through a max) */
  int64_t differ = my_off != ps->offset || a->n_local != ps->n_local;
  KD_TRY(kd_dist_max_i64(comm, &differ, 1));
  if (differ) {
    KD_TRY(kd_mem_redistribute_(a, counts, ps));
  } else if (a->dtype == KD_DTYPE_F64 && a->col_stride == 1 && a->row_stride == a->d &&
             ps->n_local > 0) {
    free(ps->rows);
    ps->rows = (double *)(uintptr_t)a->data; /* borrowed: never written, not freed */
    ps->rows_borrowed = 1;
  } else {
    kd_mem_convert_(a, 0, ps->n_local, ps->rows);
  }
  *out = ps;
  ps = NULL;
cleanup:
  free(counts);
  kd_pointset_destroy(&ps);
  return err;
}
