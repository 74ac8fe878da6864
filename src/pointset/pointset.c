/* pointset.c - block-distributed n x d point sets: creation, accessors, validation, gathers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "comm/dist_impl.h"
#include "pointset/pointset_impl.h"

static kd_gidx kd_block_off_(kd_gidx n, int r, int p) {
  /* floor(n*r/p) without overflow for n < 2^62/p */
  return (kd_gidx)((n / p) * r + ((n % p) * r) / p);
}

kd_err kd_pointset_create(MPI_Comm comm, kd_gidx n, int d, kd_pointset **out) {
  kd_err err = KD_OK;
  kd_pointset *ps = NULL;
  *out = NULL;
  KD_CHECK(n >= 0 && d >= 1, KD_ERR_ARG, "point set size %lld x %d is invalid", (long long)n, d);
  KD_ALLOC(ps, 1);
  ps->comm = comm;
  ps->rank = kd_dist_rank(comm);
  ps->size = kd_dist_size(comm);
  ps->n = n;
  ps->d = d;
  ps->offset = kd_block_off_(n, ps->rank, ps->size);
  ps->n_local = kd_block_off_(n, ps->rank + 1, ps->size) - ps->offset;
  {
    /* decided on the largest block, and agreed with the allocation: the memory each rank sees
     * (KD_MEMORY_LIMIT, cgroups, MemAvailable) can differ between ranks, and no rank may be left
     * in the next collective when another refuses */
    size_t bytes = 0;
    const int fits = kd_size_ok(n / ps->size + 1, d, sizeof(double), &bytes);
    kd_err local = kd_mem_require(fits ? (uint64_t)bytes : UINT64_MAX, "point set", "n");
    if (local == KD_OK) {
      const size_t cnt = (size_t)ps->n_local * (size_t)d;
      ps->rows = calloc(cnt ? cnt : 1, sizeof(double));
      if (!ps->rows)
        local = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                           "out of memory allocating the %lld x %d point set",
                           (long long)ps->n_local, d);
    }
    KD_TRY(kd_dist_agreed(comm, local));
  }
  *out = ps;
  ps = NULL;
cleanup:
  kd_pointset_destroy(&ps);
  return err;
}

kd_err kd_pointset_generate(MPI_Comm comm, const kd_measure *m, kd_gidx n, uint64_t seed,
                            kd_pointset **out) {
  kd_err err = KD_OK;
  kd_pointset *ps = NULL;
  KD_TRY(kd_pointset_create(comm, n, m->d, &ps));
  err = kd_measure_sample(m, seed, ps->offset, ps->n_local, ps->rows);
  KD_TRY(kd_dist_agreed(comm, err));
  *out = ps;
  ps = NULL;
cleanup:
  kd_pointset_destroy(&ps);
  return err;
}

kd_err kd_pointset_generate_lazy(MPI_Comm comm, const kd_measure *m, kd_gidx n, uint64_t seed,
                                 kd_pointset **out) {
  kd_err err = KD_OK;
  kd_pointset *ps = NULL;
  *out = NULL;
  KD_CHECK(n >= 1 && m->d >= 1, KD_ERR_ARG, "point set size %lld x %d is invalid", (long long)n,
           m->d);
  KD_ALLOC(ps, 1);
  ps->comm = comm;
  ps->rank = kd_dist_rank(comm);
  ps->size = kd_dist_size(comm);
  ps->n = n;
  ps->d = m->d;
  ps->offset = kd_block_off_(n, ps->rank, ps->size);
  ps->n_local = kd_block_off_(n, ps->rank + 1, ps->size) - ps->offset;
  ps->lazy = 1;
  ps->gen_seed = seed;
  KD_TRY(kd_measure_copy(m, &ps->gen));
  *out = ps;
  ps = NULL;
cleanup:
  kd_pointset_destroy(&ps);
  return err;
}

int kd_pointset_is_lazy(const kd_pointset *ps) { return ps->lazy; }
const kd_measure *kd_pointset_generator(const kd_pointset *ps) {
  return ps->lazy ? &ps->gen : NULL;
}

kd_err kd_pointset_rows_at(const kd_pointset *ps, kd_gidx g0, kd_lidx cnt, double *dst) {
  kd_err err = KD_OK;
  KD_CHECK(g0 >= 0 && cnt >= 0 && g0 + cnt <= ps->n, KD_ERR_INTERNAL,
           "point set: rows [%lld, %lld) out of range", (long long)g0, (long long)(g0 + cnt));
  if (ps->lazy) return kd_measure_sample(&ps->gen, ps->gen_seed, g0, cnt, dst);
  KD_CHECK(g0 >= ps->offset && g0 + cnt <= ps->offset + ps->n_local, KD_ERR_INTERNAL,
           "point set: rows [%lld, %lld) are not on this rank", (long long)g0,
           (long long)(g0 + cnt));
  if (cnt > 0)
    memcpy(dst, ps->rows + (size_t)(g0 - ps->offset) * ps->d, (size_t)cnt * ps->d * sizeof(double));
cleanup:
  return err;
}

kd_err kd_pointset_from_replicated(MPI_Comm comm, kd_gidx n, int d, const double *rows,
                                   const double *weights, kd_pointset **out) {
  kd_err err = KD_OK;
  kd_pointset *ps = NULL;
  KD_TRY(kd_pointset_create(comm, n, d, &ps));
  if (ps->n_local)
    memcpy(ps->rows, rows + (size_t)ps->offset * d, (size_t)ps->n_local * d * sizeof(double));
  if (weights) {
    KD_ALLOC(ps->w, ps->n_local);
    if (ps->n_local) memcpy(ps->w, weights + ps->offset, (size_t)ps->n_local * sizeof(double));
  }
  *out = ps;
  ps = NULL;
cleanup:
  kd_pointset_destroy(&ps);
  return err;
}

void kd_pointset_destroy(kd_pointset **ps) {
  if (!ps || !*ps) return;
  if (!(*ps)->rows_borrowed) free((*ps)->rows);
  kd_measure_free(&(*ps)->gen);
  free((*ps)->w);
  free(*ps);
  *ps = NULL;
}

MPI_Comm kd_pointset_comm(const kd_pointset *ps) { return ps->comm; }
kd_gidx kd_pointset_n_global(const kd_pointset *ps) { return ps->n; }
kd_lidx kd_pointset_n_local(const kd_pointset *ps) { return ps->n_local; }
int kd_pointset_dim(const kd_pointset *ps) { return ps->d; }
kd_gidx kd_pointset_offset(const kd_pointset *ps) { return ps->offset; }

kd_gidx kd_pointset_rank_offset(const kd_pointset *ps, int r) {
  return kd_block_off_(ps->n, r, ps->size);
}

int kd_pointset_owner(const kd_pointset *ps, kd_gidx g) {
  /* first guess from the proportional split, then correct */
  int r = (int)((double)g * ps->size / (double)(ps->n ? ps->n : 1));
  if (r >= ps->size) r = ps->size - 1;
  if (r < 0) r = 0;
  while (r > 0 && kd_block_off_(ps->n, r, ps->size) > g) r--;
  while (r < ps->size - 1 && kd_block_off_(ps->n, r + 1, ps->size) <= g) r++;
  return r;
}

void kd_pointset_get_rows(kd_pointset *ps, double **rows) { *rows = ps->rows; }
void kd_pointset_restore_rows(kd_pointset *ps, double **rows) {
  (void)ps;
  *rows = NULL;
}
const double *kd_pointset_rows_const(const kd_pointset *ps) { return ps->rows; }
const double *kd_pointset_weights_const(const kd_pointset *ps) { return ps->w; }

kd_err kd_pointset_set_weights(kd_pointset *ps, const double *w_local) {
  kd_err err = KD_OK;
  double *w = NULL;
  if (!w_local) {
    free(ps->w);
    ps->w = NULL;
    return KD_OK;
  }
  KD_ALLOC(w, ps->n_local);
  double s = 0.0;
  kd_err lerr = KD_OK;
  for (kd_lidx i = 0; i < ps->n_local; i++) {
    if (!(w_local[i] >= 0.0) || !isfinite(w_local[i])) {
      lerr = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__,
                        "weight of row %lld is negative or not finite (%g)",
                        (long long)(ps->offset + i + 1), w_local[i]);
      break;
    }
    w[i] = w_local[i];
  }
  KD_TRY(kd_dist_agreed(ps->comm, lerr));
  /* the normalising total must not depend on the rank count (it scales every weight) */
  KD_TRY(kd_dist_sum_exact(ps->comm, w, ps->n_local, &s));
  KD_CHECK(s > 0.0 && isfinite(s), KD_ERR_INPUT,
           "weights sum to %g; they must have a positive finite sum (rescale weights whose sum "
           "overflows)",
           s);
  for (kd_lidx i = 0; i < ps->n_local; i++) w[i] /= s;
  free(ps->w);
  ps->w = w;
  w = NULL;
cleanup:
  free(w);
  return err;
}

kd_err kd_pointset_validate(const kd_pointset *ps, const char *ctx) {
  kd_err err = KD_OK;
  KD_CHECK(ps->n > 0, KD_ERR_INPUT, "%s: the point set is empty", ctx);
  if (ps->lazy) return KD_OK; /* generated rows are finite (kd_measure_sample) */
  kd_gidx bad = -1;
  for (kd_lidx i = 0; i < ps->n_local && bad < 0; i++)
    for (int j = 0; j < ps->d; j++)
      if (!isfinite(ps->rows[(size_t)i * ps->d + j])) {
        bad = ps->offset + i;
        break;
      }
  /* lowest bad row over all ranks: argmin on the row index */
  double v = 0.0;
  kd_gidx gbad = -1;
  KD_TRY(kd_dist_argmin(ps->comm, 0.0, bad, KD_OK, &v, &gbad));
  KD_CHECK(gbad < 0, KD_ERR_INPUT, "%s: row %lld has a non-finite value (NaN or Inf)", ctx,
           (long long)gbad + 1);
cleanup:
  return err;
}

kd_err kd_pointset_gather_rows(const kd_pointset *ps, const kd_gidx *idx, kd_lidx k, double *out) {
  kd_err err = KD_OK;
  kd_err lerr = KD_OK;
  const int d = ps->d;
  memset(out, 0, (size_t)k * d * sizeof(double));
  for (kd_lidx i = 0; i < k; i++) {
    if (idx[i] < 0 || idx[i] >= ps->n) {
      lerr = kd_err_set(KD_ERR_INTERNAL, __FILE__, __LINE__, "gather: row %lld out of range",
                        (long long)idx[i]);
      break;
    }
    kd_gidx l = idx[i] - ps->offset;
    if (l >= 0 && l < ps->n_local) {
      if (ps->lazy)
        lerr = kd_measure_sample(&ps->gen, ps->gen_seed, idx[i], 1, out + (size_t)i * d);
      else
        memcpy(out + (size_t)i * d, ps->rows + (size_t)l * d, d * sizeof(double));
    }
  }
  KD_TRY(kd_dist_agreed(ps->comm, lerr));
  /* each row is non-zero on exactly one rank: a sum is an exact gather */
  for (kd_lidx off = 0; off < k * d; off += (1 << 28)) {
    kd_lidx len = k * d - off < (1 << 28) ? k * d - off : (1 << 28);
    KD_TRY(kd_dist_sum(ps->comm, out + off, (int)len));
  }
cleanup:
  return err;
}

kd_err kd_pointset_allgather(const kd_pointset *ps, double *out) {
  if (ps->lazy) /* the same on every rank: no rank is left in the collective */
    return kd_err_set(KD_ERR_CONFIG, __FILE__, __LINE__,
                      "data.lazy: this step needs every row in memory; set lazy: false");
  return kd_dist_allgatherv(ps->comm, ps->rows, ps->n_local * ps->d, out);
}
