/* io_h5_cols.c - one point set from several datasets of one HDF5 file, side by side as columns,
 * with leading dimensions flattened into rows: an ArviZ / netCDF4 posterior group, where mu and
 * tau are (chain, draw) and theta is (chain, draw, school), reads with `datasets: [posterior/mu,
 * posterior/tau, posterior/theta]` and `flatten: 2` as (chain*draw) x (1 + 1 + school) rows, in C
 * order. Rank 0 checks every dataset first (the same checks as one dataset, io_h5.c, plus equal
 * leading dimensions); then every rank reads its own block of flattened rows of each dataset with
 * a collective read of at most 2 L - 1 hyperslabs (L = flatten), a chunk at a time, into its
 * columns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "io/paths.h"
#include "pointset/io_h5_impl.h"
#include "pointset/pointset_impl.h"
#include "pointset/pointset_io.h"

enum { KD_H5_MAXR = 8 };
/* values per collective read of one dataset: bounds the staging buffer at 32 MiB */
#define KD_H5_COLS_CHUNK ((int64_t)1 << 22)

/* What rank 0 finds and every rank needs: rows, columns, and each dataset's rank and shape. */
typedef struct {
  int64_t n, d;
  int64_t rank[KD_H5_MAX_DATASETS];
  int64_t cols[KD_H5_MAX_DATASETS];
  int64_t dims[KD_H5_MAX_DATASETS][KD_H5_MAXR];
} kd_h5_cols_layout_;

/* Rank 0: check dataset i (names[i]) of the open file f against the first one's leading dims. */
static kd_err kd_h5_cols_probe_one_(hid_t f, const char *path, const char *const *names, int i,
                                    int L, const char *sec, int allow_ext,
                                    kd_h5_cols_layout_ *lay) {
  const char *name = names[i];
  kd_err err = KD_OK;
  hid_t ds = -1, sp = -1;
  hsize_t dims[KD_H5_MAXR];
  KD_TRY(kd_h5_open_numeric_(f, path, name, sec, "datasets", allow_ext, &ds, &sp));
  const int r = H5Sget_simple_extent_ndims(sp);
  KD_CHECK(r >= L && r <= KD_H5_MAXR, KD_ERR_INPUT,
           "%s: dataset '%s' has %d dimensions; %s.flatten = %d takes datasets of %d to %d "
           "(the first %d index the rows)",
           path, name, r, sec ? sec : "data", L, L, KD_H5_MAXR, L);
  KD_H5C(H5Sget_simple_extent_dims(sp, dims, NULL), KD_ERR_H5, "%s: %s: extent", path, name);
  int64_t rows = 1, cols = 1;
  for (int j = 0; j < r; j++) {
    KD_CHECK(dims[j] <= (hsize_t)1 << 50, KD_ERR_INPUT, "%s: dataset '%s': dimension %d is %llu",
             path, name, j, (unsigned long long)dims[j]);
    if (j < L)
      rows *= (int64_t)dims[j];
    else
      cols *= (int64_t)dims[j];
    KD_CHECK(rows <= (int64_t)1 << 50 && cols <= 1000000, KD_ERR_INPUT,
             "%s: dataset '%s' has too many %s", path, name, j < L ? "rows" : "columns");
    lay->dims[i][j] = (int64_t)dims[j];
  }
  for (int j = 0; j < L && i > 0; j++)
    KD_CHECK(lay->dims[i][j] == lay->dims[0][j], KD_ERR_INPUT,
             "%s: dataset '%s' has %lld along dimension %d, '%s' has %lld: with %s.flatten = %d "
             "the first %d dimensions must agree",
             path, name, (long long)lay->dims[i][j], j, names[0], (long long)lay->dims[0][j],
             sec ? sec : "data", L, L);
  lay->rank[i] = r;
  lay->cols[i] = cols;
  lay->n = rows;
  lay->d += cols;
cleanup:
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  return err;
}

static kd_err kd_h5_cols_shape_of_(const char *path, const char *const *names, int k, int L,
                                   const char *sec, int allow_ext, kd_h5_cols_layout_ *lay) {
  kd_err err = KD_OK;
  hid_t fapl = -1, f = -1;
  KD_H5C(fapl = H5Pcreate(H5P_FILE_ACCESS), KD_ERR_H5, "H5Pcreate(FILE_ACCESS)");
  KD_H5C(H5Pset_fapl_sec2(fapl), KD_ERR_H5, "H5Pset_fapl_sec2");
  KD_CHECK(H5Fis_hdf5(path) > 0, KD_ERR_FILE, "%s: not an HDF5 file", path);
  KD_H5C(f = H5Fopen(path, H5F_ACC_RDONLY, fapl), KD_ERR_FILE, "%s: cannot open HDF5 file", path);
  for (int i = 0; i < k; i++)
    KD_TRY(kd_h5_cols_probe_one_(f, path, names, i, L, sec, allow_ext, lay));
  KD_CHECK(lay->d <= 1000000, KD_ERR_INPUT, "%s: the datasets have %lld columns in all", path,
           (long long)lay->d);
  KD_CHECK(kd_size_ok(lay->n, (int)lay->d, sizeof(double), NULL), KD_ERR_INPUT,
           "%s: the datasets declare %lld x %lld values, more than can be addressed", path,
           (long long)lay->n, (long long)lay->d);
cleanup:
  H5Eclear2(H5E_DEFAULT);
  if (f >= 0) H5Fclose(f);
  if (fapl >= 0) H5Pclose(fapl);
  return err;
}

/* Rank 0: the file checked and claimed as an input, then its layout. */
static kd_err kd_h5_cols_probe_(const char *path, const char *const *names, int k, int L,
                                const char *sec, int allow_ext, kd_h5_cols_layout_ *lay) {
  kd_err err = KD_OK;
  KD_TRY(kd_path_check_input(path, "HDF5"));
  KD_TRY(kd_path_claim(path, "HDF5 input", 0));
  KD_TRY(kd_h5_cols_shape_of_(path, names, k, L, sec, allow_ext, lay));
cleanup:
  return err;
}

typedef struct {
  const char *const *names;
  int k, L, allow_ext;
  const char *sec;
} kd_h5_cols_what_;

/* kd_input_describe: the datasets as this rank sees them. */
static void kd_h5_cols_describe_(const char *path, const void *user, char *buf, size_t len) {
  const kd_h5_cols_what_ *w = user;
  kd_h5_cols_layout_ lay;
  memset(&lay, 0, sizeof lay);
  if (kd_h5_cols_shape_of_(path, w->names, w->k, w->L, w->sec, w->allow_ext, &lay) == KD_OK)
    snprintf(buf, len, "%lld x %lld", (long long)lay.n, (long long)lay.d);
  else
    snprintf(buf, len, "unreadable datasets (%s)", kd_err_message());
}

/* Rank 0 probes, every rank gets the layout. */
static kd_err kd_h5_cols_layout_get_(MPI_Comm comm, const char *path, const char *const *names,
                                     int k, int L, const char *sec, int allow_ext,
                                     kd_h5_cols_layout_ *lay) {
  kd_err err = KD_OK;
  memset(lay, 0, sizeof *lay);
  KD_CHECK(k >= 1 && k <= KD_H5_MAX_DATASETS && L >= 1 && L <= KD_H5_MAXR, KD_ERR_INTERNAL,
           "%d datasets, flatten %d", k, L);
  kd_h5_quiet();
  KD_TRY(kd_dist_agreed(comm, kd_dist_rank(comm) == 0
                                  ? kd_h5_cols_probe_(path, names, k, L, sec, allow_ext, lay)
                                  : KD_OK));
  KD_TRY(kd_dist_bcast(comm, lay, (int64_t)sizeof *lay, 0));
cleanup:
  return err;
}

kd_err kd_h5_check_cols(MPI_Comm comm, const char *path, const char *const *names, int k,
                        int flatten, const char *sec, int allow_external, int64_t *n, int *d) {
  kd_err err = KD_OK;
  kd_h5_cols_layout_ lay;
  KD_TRY(kd_h5_cols_layout_get_(comm, path, names, k, flatten, sec, allow_external, &lay));
  if (n) *n = lay.n;
  if (d) *d = (int)lay.d;
cleanup:
  return err;
}

/* The hyperslabs covering flattened rows [a, b) of a dataset whose first L of r dimensions
 * (dims) index the rows: dimensions below k are fixed in start/count by the caller; the trailing
 * dimensions are taken whole. OR'ed into the selection fs (*first: the first one SETs it). */
static herr_t kd_h5_cols_select_(hid_t fs, const hsize_t *dims, int L, int r, int64_t a, int64_t b,
                                 int k, hsize_t *start, hsize_t *count, int *first) {
  herr_t st = 0;
  if (a >= b) return 0;
  int64_t S = 1; /* rows per index of dimension k */
  for (int j = k + 1; j < L; j++) S *= (int64_t)dims[j];
  if (k == L - 1 || (a % S == 0 && b % S == 0)) {
    start[k] = (hsize_t)(a / S);
    count[k] = (hsize_t)((b - a) / S);
    for (int j = k + 1; j < r; j++) {
      start[j] = 0;
      count[j] = dims[j];
    }
    st = H5Sselect_hyperslab(fs, *first ? H5S_SELECT_SET : H5S_SELECT_OR, start, NULL, count, NULL);
    *first = 0;
    return st;
  }
  const int64_t i0 = a / S, i1 = (b - 1) / S;
  if (i0 == i1) {
    start[k] = (hsize_t)i0;
    count[k] = 1;
    return kd_h5_cols_select_(fs, dims, L, r, a - i0 * S, b - i0 * S, k + 1, start, count, first);
  }
  int64_t lo = i0, hi = b / S;
  if (a % S) { /* the partial index at the front */
    start[k] = (hsize_t)i0;
    count[k] = 1;
    st = kd_h5_cols_select_(fs, dims, L, r, a % S, S, k + 1, start, count, first);
    lo = i0 + 1;
  }
  if (st >= 0 && lo < hi)
    st = kd_h5_cols_select_(fs, dims, L, r, lo * S, hi * S, k, start, count, first);
  if (st >= 0 && b % S) { /* the partial index at the back */
    start[k] = (hsize_t)hi;
    count[k] = 1;
    st = kd_h5_cols_select_(fs, dims, L, r, 0, b % S, k + 1, start, count, first);
  }
  return st;
}

/* Collective: this rank's rows of dataset `name` (layout index i, columns c0..) into ps, a chunk
 * of rows per read; a rank that has failed keeps taking part with empty selections. */
static kd_err kd_h5_cols_read_one_(hid_t f, hid_t dxpl, const char *path, const char *name,
                                   const kd_h5_cols_layout_ *lay, int i, int L, int64_t c0,
                                   kd_pointset *ps) {
  kd_err err = KD_OK, lerr = KD_OK;
  hid_t ds = -1, fs = -1;
  double *buf = NULL;
  hsize_t dims[KD_H5_MAXR], start[KD_H5_MAXR], count[KD_H5_MAXR];
  const int r = (int)lay->rank[i];
  const int64_t cols = lay->cols[i], d = ps->d;
  for (int j = 0; j < r; j++) dims[j] = (hsize_t)lay->dims[i][j];
  int64_t per = KD_H5_COLS_CHUNK / cols;
  if (per < 1) per = 1;
  int64_t n_calls = (ps->n_local + per - 1) / per;
  KD_TRY(kd_dist_max_i64(ps->comm, &n_calls, 1));
  ds = H5Dopen2(f, name, H5P_DEFAULT);
  fs = ds >= 0 ? H5Dget_space(ds) : -1;
  buf = malloc(sizeof(double) * (size_t)((per < ps->n_local ? per : ps->n_local) * cols + 1));
  if (ds < 0 || fs < 0 || !buf)
    lerr = kd_h5_fail_(buf ? KD_ERR_FILE : KD_ERR_MEM, __FILE__, __LINE__,
                       "%s: cannot open dataset '%s' for reading", path, name);
  KD_TRY(kd_dist_agreed(ps->comm, lerr));
  for (int64_t c = 0; c < n_calls; c++) {
    const int64_t r0 = c * per, nr = lerr ? 0 : (ps->n_local - r0 < per ? ps->n_local - r0 : per);
    const int64_t a = ps->offset + r0;
    hsize_t m = (hsize_t)(nr > 0 ? nr * cols : 1);
    hid_t ms = H5Screate_simple(1, &m, NULL);
    int first = 1;
    herr_t st = ms >= 0 ? 0 : -1;
    if (nr > 0 && st >= 0)
      st = kd_h5_cols_select_(fs, dims, L, r, a, a + nr, 0, start, count, &first);
    if (nr <= 0 || st < 0) {
      H5Sselect_none(fs);
      if (ms >= 0) H5Sselect_none(ms);
    }
    /* every rank takes part in the collective read, with nothing selected when it has no rows
     * left or could not build its selection (the error is agreed after the loop) */
    const herr_t rd = H5Dread(ds, H5T_NATIVE_DOUBLE, ms >= 0 ? ms : fs, fs, dxpl, buf);
    if (rd < 0) st = rd;
    if (ms >= 0) H5Sclose(ms);
    if (st < 0 && nr > 0 && lerr == KD_OK)
      lerr = kd_h5_fail_(KD_ERR_FILE, __FILE__, __LINE__,
                         "%s: cannot read dataset '%s' (rows %lld..%lld)", path, name,
                         (long long)a + 1, (long long)(a + nr));
    for (int64_t q = 0; q < nr && lerr == KD_OK; q++)
      memcpy(ps->rows + (size_t)((r0 + q) * d + c0), buf + (size_t)(q * cols),
             sizeof(double) * (size_t)cols);
  }
  KD_TRY(kd_dist_agreed(ps->comm, lerr));
cleanup:
  free(buf);
  if (fs >= 0) H5Sclose(fs);
  if (ds >= 0) H5Dclose(ds);
  return err;
}

kd_err kd_pointset_read_h5_cols(MPI_Comm comm, const char *path, const char *const *names, int k,
                                int flatten, const char *sec, int allow_external,
                                kd_pointset **out) {
  kd_err err = KD_OK;
  kd_pointset *ps = NULL;
  kd_h5_cols_layout_ lay;
  hid_t fapl = -1, f = -1, dxpl = -1;
  *out = NULL;
  KD_TRY(kd_h5_cols_layout_get_(comm, path, names, k, flatten, sec, allow_external, &lay));
  {
    /* before the collective open: ranks that see different files would wait on each other */
    char shape0[64];
    const kd_h5_cols_what_ w = {names, k, flatten, allow_external, sec};
    snprintf(shape0, sizeof shape0, "%lld x %lld", (long long)lay.n, (long long)lay.d);
    KD_TRY(kd_input_agree(comm, path, shape0, kd_h5_cols_describe_, &w));
  }
  KD_TRY(kd_pointset_create(comm, lay.n, (int)lay.d, &ps));
  kd_pointset_set_dtype(ps, "columns");
  {
    kd_err lerr = KD_OK;
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0 ||
        (f = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0 || (dxpl = H5Pcreate(H5P_DATASET_XFER)) < 0 ||
        H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0)
      lerr = kd_h5_fail_(KD_ERR_FILE, __FILE__, __LINE__, "%s: cannot open HDF5 file with MPI-IO",
                         path);
    KD_TRY(kd_dist_agreed(comm, lerr));
  }
  int64_t c0 = 0;
  for (int i = 0; i < k; i++) {
    KD_TRY(kd_h5_cols_read_one_(f, dxpl, path, names[i], &lay, i, flatten, c0, ps));
    c0 += lay.cols[i];
  }
  *out = ps;
  ps = NULL;
cleanup:
  if (dxpl >= 0) H5Pclose(dxpl);
  if (f >= 0) H5Fclose(f);
  if (fapl >= 0) H5Pclose(fapl);
  kd_pointset_destroy(&ps);
  return err;
}
