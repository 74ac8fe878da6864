/* io_h5.c - point sets from HDF5 datasets. Rank 0 first checks the file and dataset with a serial
 * open (so every error has one clear message, agreed by all ranks); then all ranks open the file
 * with the MPI-IO driver and read their own contiguous block of rows with a collective hyperslab
 * read, converting any integer or float type to double. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "io/h5_util.h"
#include "io/paths.h"
#include "pointset/io_h5_impl.h"
#include "pointset/pointset_io.h"
#include "pointset/pointset_impl.h"

/* Rows per H5Dread call are limited so that one call moves at most this many doubles. */
#define KD_H5_CHUNK_DOUBLES ((int64_t)1 << 26)

/* The datasets of an open file, "/a (100 x 3), /b (7)", at most 10 (H5Ovisit). */
typedef struct {
  char *buf;
  size_t len;
  int count;
} kd_h5_list_;

static herr_t kd_h5_list_cb_(hid_t obj, const char *name, const H5O_info_t *info, void *op) {
  kd_h5_list_ *l = op;
  if (info->type != H5O_TYPE_DATASET) return 0;
  if (++l->count > 10) return 0;
  char shape[64] = "";
  hid_t ds = H5Dopen2(obj, name, H5P_DEFAULT), sp = ds >= 0 ? H5Dget_space(ds) : -1;
  hsize_t dims[8] = {0};
  int r = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
  if (r >= 0 && r <= 8 && H5Sget_simple_extent_dims(sp, dims, NULL) >= 0) {
    size_t o = 0;
    for (int i = 0; i < r && o < sizeof shape; i++)
      o += (size_t)snprintf(shape + o, sizeof shape - o, "%s%llu", i ? " x " : "",
                            (unsigned long long)dims[i]);
    if (r == 0) snprintf(shape, sizeof shape, "scalar");
  }
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  size_t o = strlen(l->buf);
  snprintf(l->buf + o, l->len - o, "%s/%s (%s)", o ? ", " : "", name, shape);
  return 0;
}

/* "; it has: /X (1000 x 5), /y (1000) (set data.dataset)" or "; it has no datasets" into buf;
 * the hint names what to set: a config key or a command-line flag (NULL: data.dataset). */
void kd_h5_datasets_(hid_t f, const char *hint, char *buf, size_t len) {
  char names[1024] = "";
  kd_h5_list_ l = {names, sizeof names, 0};
  if (H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_INC, kd_h5_list_cb_, &l, H5O_INFO_BASIC) < 0)
    H5Eclear2(H5E_DEFAULT);
  if (l.count == 0)
    snprintf(buf, len, "; it has no datasets");
  else
    snprintf(buf, len, "; it has: %s%s (%s)", names, l.count > 10 ? ", ..." : "",
             hint ? hint : "set data.dataset");
}

/* The 2-D numeric datasets of a file (H5Ovisit: hard links only), for kd_h5_pick_dataset. */
typedef struct {
  int count;
  char first[1024];
} kd_h5_cands_;

static herr_t kd_h5_cands_cb_(hid_t obj, const char *name, const H5O_info_t *info, void *op) {
  kd_h5_cands_ *c = op;
  if (info->type != H5O_TYPE_DATASET) return 0;
  hid_t ds = H5Dopen2(obj, name, H5P_DEFAULT);
  hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1, ty = ds >= 0 ? H5Dget_type(ds) : -1;
  const H5T_class_t cls = ty >= 0 ? H5Tget_class(ty) : H5T_NO_CLASS;
  if (sp >= 0 && H5Sget_simple_extent_ndims(sp) == 2 && (cls == H5T_FLOAT || cls == H5T_INTEGER))
    if (c->count++ == 0) snprintf(c->first, sizeof c->first, "%s", name);
  if (ty >= 0) H5Tclose(ty);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  H5Eclear2(H5E_DEFAULT);
  return 0;
}

/* Rank 0 of kd_h5_pick_dataset. */
static kd_err kd_h5_pick_(const char *path, const char *want, const char *hint, const char *sec,
                          int allow_ext, char *out, size_t len) {
  kd_err err = KD_OK;
  hid_t fapl = -1, f = -1;
  char have[1200];
  KD_TRY(kd_path_check_input(path, "HDF5")); /* a FIFO or directory is refused, not opened */
  KD_H5C(fapl = H5Pcreate(H5P_FILE_ACCESS), KD_ERR_H5, "H5Pcreate(FILE_ACCESS)");
  KD_H5C(H5Pset_fapl_sec2(fapl), KD_ERR_H5, "H5Pset_fapl_sec2");
  KD_CHECK(H5Fis_hdf5(path) > 0, KD_ERR_FILE, "%s: not an HDF5 file", path);
  KD_H5C(f = H5Fopen(path, H5F_ACC_RDONLY, fapl), KD_ERR_FILE, "%s: cannot open HDF5 file", path);
  if (want) {
    if (!allow_ext) KD_TRY(kd_h5_no_external_link_(f, path, want, sec));
    if (H5Lexists(f, want, H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      kd_h5_datasets_(f, hint, have, sizeof have);
      KD_FAIL(KD_ERR_FILE, "%s: dataset '%s' not found%s", path, want, have);
    }
    snprintf(out, len, "%s", want);
  } else if (H5Lexists(f, "data", H5P_DEFAULT) > 0) {
    snprintf(out, len, "data");
  } else {
    kd_h5_cands_ c = {0, ""};
    if (H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_INC, kd_h5_cands_cb_, &c, H5O_INFO_BASIC) < 0)
      H5Eclear2(H5E_DEFAULT);
    if (c.count != 1) {
      H5Eclear2(H5E_DEFAULT);
      kd_h5_datasets_(f, hint, have, sizeof have);
      KD_FAIL(KD_ERR_INPUT,
              "%s: no dataset named, no dataset 'data', and %s 2-D numeric datasets to choose "
              "from%s",
              path, c.count == 0 ? "no" : "several", have);
    }
    KD_CHECK(strlen(c.first) + 1 < len, KD_ERR_INPUT, "%s: dataset name too long", path);
    snprintf(out, len, "%s", c.first);
  }
cleanup:
  H5Eclear2(H5E_DEFAULT);
  if (f >= 0) H5Fclose(f);
  if (fapl >= 0) H5Pclose(fapl);
  return err;
}

kd_err kd_h5_pick_dataset(MPI_Comm comm, const char *path, const char *want, const char *hint,
                          const char *sec, int allow_external, char *out, int len) {
  kd_err err = KD_OK;
  kd_h5_quiet();
  out[0] = '\0';
  KD_TRY(kd_dist_agreed(comm,
                        kd_dist_rank(comm) == 0
                            ? kd_h5_pick_(path, want, hint, sec, allow_external, out, (size_t)len)
                            : KD_OK));
  KD_TRY(kd_dist_bcast(comm, out, len, 0));
cleanup:
  return err;
}

/* A link on the way to dset that points into another file: the dataset's values would come from
 * a file the user did not name. Checked component by component before anything is opened through
 * them. Local. */
kd_err kd_h5_no_external_link_(hid_t f, const char *path, const char *dset, const char *sec) {
  kd_err err = KD_OK;
  char *p = strdup(dset);
  KD_CHECK(p, KD_ERR_MEM, "out of memory");
  for (char *c = p + (p[0] == '/');; c++) {
    if (*c != '/' && *c != '\0') continue;
    const char keep = *c;
    *c = '\0';
    H5L_info_t li;
    if (c > p && H5Lget_info(f, p, &li, H5P_DEFAULT) >= 0)
      KD_CHECK(li.type != H5L_TYPE_EXTERNAL, KD_ERR_INPUT,
               "%s: '%s' is an external link into another file; kdistill reads only the file it "
               "is given (set %s.allow_external: true to follow it)",
               path, p, sec ? sec : "data");
    *c = keep;
    if (!keep) break;
  }
cleanup:
  H5Eclear2(H5E_DEFAULT);
  free(p);
  return err;
}

/* Values stored outside the file: external raw data (H5Pset_external) or a virtual dataset, whose
 * sources may be other files. Local. */
kd_err kd_h5_no_external_data_(hid_t ds, const char *path, const char *dset, const char *sec) {
  kd_err err = KD_OK;
  hid_t dcpl = -1;
  KD_H5C(dcpl = H5Dget_create_plist(ds), KD_ERR_H5, "%s: %s: H5Dget_create_plist", path, dset);
  const int n_ext = H5Pget_external_count(dcpl);
  KD_CHECK(n_ext == 0, KD_ERR_INPUT,
           "%s: dataset '%s' keeps its values in %s file(s) outside this one (external storage); "
           "kdistill reads only the file it is given (set %s.allow_external: true to read them)",
           path, dset, n_ext > 0 ? "other" : "unknown", sec ? sec : "data");
  KD_CHECK(H5Pget_layout(dcpl) != H5D_VIRTUAL, KD_ERR_INPUT,
           "%s: dataset '%s' is a virtual dataset whose sources may be other files; kdistill "
           "reads only the file it is given (set %s.allow_external: true to read it)",
           path, dset, sec ? sec : "data");
cleanup:
  if (dcpl >= 0) H5Pclose(dcpl);
  return err;
}

kd_err kd_h5_open_numeric_(hid_t f, const char *path, const char *dset, const char *sec,
                           const char *key, int allow_ext, hid_t *ds, hid_t *sp) {
  kd_err err = KD_OK;
  hid_t ty = -1;
  char have[1200], hint[300];
  *ds = *sp = -1;
  if (!allow_ext) KD_TRY(kd_h5_no_external_link_(f, path, dset, sec));
  if (H5Lexists(f, dset, H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    snprintf(hint, sizeof hint, "set %s.%s", sec ? sec : "data", key);
    kd_h5_datasets_(f, hint, have, sizeof have);
    KD_FAIL(KD_ERR_FILE, "%s: dataset '%s' not found%s", path, dset, have);
  }
  KD_H5C(*ds = H5Dopen2(f, dset, H5P_DEFAULT), KD_ERR_FILE, "%s: '%s' is not a dataset", path,
         dset);
  if (!allow_ext) KD_TRY(kd_h5_no_external_data_(*ds, path, dset, sec));
  KD_H5C(ty = H5Dget_type(*ds), KD_ERR_H5, "%s: %s: H5Dget_type", path, dset);
  const H5T_class_t cls = H5Tget_class(ty);
  KD_CHECK(cls == H5T_FLOAT || cls == H5T_INTEGER, KD_ERR_INPUT,
           "%s: dataset '%s' must hold numbers (integer or float), not this type", path, dset);
  KD_H5C(*sp = H5Dget_space(*ds), KD_ERR_H5, "%s: %s: H5Dget_space", path, dset);
cleanup:
  if (ty >= 0) H5Tclose(ty);
  if (err && *ds >= 0) {
    H5Dclose(*ds);
    *ds = -1;
  }
  return err;
}

/* "float64", "int32", "uint8", ... of a numeric type into buf[16]. */
static void kd_h5_dtype_(hid_t ty, char *buf) {
  const int is_float = H5Tget_class(ty) == H5T_FLOAT;
  const int is_signed = is_float || H5Tget_sign(ty) != H5T_SGN_NONE;
  snprintf(buf, 16, "%s%s%d", is_signed ? "" : "u", is_float ? "float" : "int",
           (int)(8 * H5Tget_size(ty)));
}

/* The shape and element type of dataset dset of path (serial open). Local. */
static kd_err kd_h5_shape_of_(const char *path, const char *dset, const char *sec, int allow_ext,
                              int64_t *n, int *d, char dtype[16]) {
  kd_err err = KD_OK;
  hid_t fapl = -1, f = -1, ds = -1, sp = -1, ty = -1;
  hsize_t dims[2] = {0, 0};
  KD_H5C(fapl = H5Pcreate(H5P_FILE_ACCESS), KD_ERR_H5, "H5Pcreate(FILE_ACCESS)");
  KD_H5C(H5Pset_fapl_sec2(fapl), KD_ERR_H5, "H5Pset_fapl_sec2");
  htri_t is_h5 = H5Fis_hdf5(path);
  KD_CHECK(is_h5 > 0, KD_ERR_FILE, "%s: not an HDF5 file", path);
  KD_H5C(f = H5Fopen(path, H5F_ACC_RDONLY, fapl), KD_ERR_FILE, "%s: cannot open HDF5 file", path);
  KD_TRY(kd_h5_open_numeric_(f, path, dset, sec, "dataset", allow_ext, &ds, &sp));
  KD_H5C(ty = H5Dget_type(ds), KD_ERR_H5, "%s: %s: H5Dget_type", path, dset);
  kd_h5_dtype_(ty, dtype);
  int r = H5Sget_simple_extent_ndims(sp);
  KD_CHECK(r == 1 || r == 2, KD_ERR_INPUT,
           "%s: dataset '%s' has rank %d; expected n x d (2-D) or n (1-D)", path, dset, r);
  KD_H5C(H5Sget_simple_extent_dims(sp, dims, NULL), KD_ERR_H5, "%s: %s: extent", path, dset);
  *n = (int64_t)dims[0];
  *d = r == 2 ? (int)dims[1] : 1;
  KD_CHECK(r == 1 || (dims[1] >= 1 && dims[1] <= 1000000), KD_ERR_INPUT,
           "%s: dataset '%s' has %llu columns", path, dset, (unsigned long long)dims[1]);
  /* the declared shape is checked before anything is sized from it: a crafted file may declare
   * (2^45, 2^19) while storing nothing */
  KD_CHECK(dims[0] <= (hsize_t)INT64_MAX && kd_size_ok((int64_t)dims[0], *d, sizeof(double), NULL),
           KD_ERR_INPUT, "%s: dataset '%s' declares %llu x %d values, more than can be addressed",
           path, dset, (unsigned long long)dims[0], *d);
cleanup:
  if (ty >= 0) H5Tclose(ty);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  if (f >= 0) H5Fclose(f);
  if (fapl >= 0) H5Pclose(fapl);
  return err;
}

/* Rank 0: the file checked and claimed as an input, then its shape. */
static kd_err kd_h5_probe_(const char *path, const char *dset, const char *sec, int allow_ext,
                           int64_t *n, int *d, char dtype[16]) {
  kd_err err = KD_OK;
  KD_TRY(kd_path_check_input(path, "HDF5"));    /* a FIFO or directory is refused, not read */
  KD_TRY(kd_path_claim(path, "HDF5 input", 0)); /* no output of the run may replace it */
  KD_TRY(kd_h5_shape_of_(path, dset, sec, allow_ext, n, d, dtype));
cleanup:
  return err;
}

/* kd_h5_check_dataset with the element type (rank 0's, broadcast). */
static kd_err kd_h5_check_typed_(MPI_Comm comm, const char *path, const char *dset, const char *sec,
                                 int allow_external, int64_t *n, int *d, char dtype[16]) {
  kd_err err = KD_OK, lerr = KD_OK;
  int64_t shape[2] = {0, 0};
  kd_h5_quiet();
  memset(dtype, 0, 16);
  if (kd_dist_rank(comm) == 0) {
    int dd = 0;
    lerr = kd_h5_probe_(path, dset, sec, allow_external, &shape[0], &dd, dtype);
    shape[1] = dd;
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_bcast(comm, shape, (int64_t)sizeof shape, 0));
  KD_TRY(kd_dist_bcast(comm, dtype, 16, 0));
  if (n) *n = shape[0];
  if (d) *d = (int)shape[1];
cleanup:
  return err;
}

kd_err kd_h5_check_dataset(MPI_Comm comm, const char *path, const char *dset, const char *sec,
                           int allow_external, int64_t *n, int *d) {
  char dtype[16];
  return kd_h5_check_typed_(comm, path, dset, sec, allow_external, n, d, dtype);
}

typedef struct {
  const char *dset, *sec;
  int allow_ext;
} kd_h5_what_;

/* kd_input_describe: the dataset as this rank sees it. */
static void kd_h5_describe_(const char *path, const void *user, char *buf, size_t len) {
  const kd_h5_what_ *w = user;
  int64_t n = 0;
  int d = 0;
  char dtype[16] = "";
  if (kd_h5_shape_of_(path, w->dset, w->sec, w->allow_ext, &n, &d, dtype) == KD_OK)
    snprintf(buf, len, "%lld x %d %s", (long long)n, d, dtype);
  else
    snprintf(buf, len, "an unreadable dataset (%s)", kd_err_message());
}

/* Handles of the collective (MPI-IO) read. */
typedef struct {
  hid_t fapl, f, ds, fs, dxpl;
} kd_h5_par_;

static void kd_h5_par_close_(kd_h5_par_ *h) {
  if (h->dxpl >= 0) H5Pclose(h->dxpl);
  if (h->fs >= 0) H5Sclose(h->fs);
  if (h->ds >= 0) H5Dclose(h->ds);
  if (h->f >= 0) H5Fclose(h->f);
  if (h->fapl >= 0) H5Pclose(h->fapl);
  h->dxpl = h->fs = h->ds = h->f = h->fapl = -1;
}

/* Every rank opens the file with MPI-IO (collective); errors are local, agreed by the caller. */
static kd_err kd_h5_par_open_(MPI_Comm comm, const char *path, const char *dset, kd_h5_par_ *h) {
  kd_err err = KD_OK;
  KD_H5C(h->fapl = H5Pcreate(H5P_FILE_ACCESS), KD_ERR_H5, "H5Pcreate(FILE_ACCESS)");
  KD_H5C(H5Pset_fapl_mpio(h->fapl, comm, MPI_INFO_NULL), KD_ERR_H5, "H5Pset_fapl_mpio");
  KD_H5C(h->f = H5Fopen(path, H5F_ACC_RDONLY, h->fapl), KD_ERR_FILE,
         "%s: cannot open HDF5 file with MPI-IO", path);
  KD_H5C(h->ds = H5Dopen2(h->f, dset, H5P_DEFAULT), KD_ERR_FILE, "%s: cannot open dataset '%s'",
         path, dset);
  KD_H5C(h->fs = H5Dget_space(h->ds), KD_ERR_H5, "%s: %s: H5Dget_space", path, dset);
  KD_H5C(h->dxpl = H5Pcreate(H5P_DATASET_XFER), KD_ERR_H5, "H5Pcreate(DATASET_XFER)");
  KD_H5C(H5Pset_dxpl_mpio(h->dxpl, H5FD_MPIO_COLLECTIVE), KD_ERR_H5, "H5Pset_dxpl_mpio");
cleanup:
  return err;
}

/* Collective read number c: this rank's rows [c*per, (c+1)*per) of its block, or an empty
 * selection when it has none left or already failed (it must still take part in the call). */
static kd_err kd_h5_par_read_(const kd_h5_par_ *h, kd_pointset *ps, int64_t c, int64_t per,
                              int skip, const char *path, const char *dset) {
  kd_err err = KD_OK;
  hid_t ms = -1;
  const int d = ps->d;
  int64_t r0 = c * per, nr = skip ? 0 : ps->n_local - r0;
  if (nr > per) nr = per;
  if (nr < 0) nr = 0;
  hsize_t start[2] = {(hsize_t)(ps->offset + r0), 0}, count[2] = {(hsize_t)nr, (hsize_t)d};
  hsize_t mdims[2] = {(hsize_t)(nr > 0 ? nr : 1), (hsize_t)d};
  const int rank2 = H5Sget_simple_extent_ndims(h->fs) == 2;
  ms = H5Screate_simple(rank2 ? 2 : 1, mdims, NULL);
  kd_err pre = KD_OK; /* a failed selection: this rank still takes part, with nothing selected */
  if (nr > 0 && ms < 0)
    pre = kd_h5_fail_(KD_ERR_H5, __FILE__, __LINE__, "H5Screate_simple");
  else if (nr > 0 && H5Sselect_hyperslab(h->fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0)
    pre = kd_h5_fail_(KD_ERR_H5, __FILE__, __LINE__, "%s: %s: cannot select rows %lld..%lld", path,
                      dset, (long long)start[0] + 1, (long long)(start[0] + (hsize_t)nr));
  if (nr <= 0 || pre) {
    H5Sselect_none(h->fs);
    if (ms >= 0) H5Sselect_none(ms);
  }
  herr_t st = H5Dread(h->ds, H5T_NATIVE_DOUBLE, ms >= 0 ? ms : h->fs, h->fs, h->dxpl,
                      nr > 0 && !pre ? ps->rows + (size_t)r0 * (size_t)d : ps->rows);
  if (pre) {
    err = pre;
    goto cleanup;
  }
  if (!skip)
    KD_H5C(st, KD_ERR_FILE, "%s: cannot read dataset '%s' (rows %lld..%lld)", path, dset,
           (long long)start[0] + 1, (long long)(start[0] + (hsize_t)nr));
cleanup:
  if (ms >= 0) H5Sclose(ms);
  return err;
}

kd_err kd_pointset_read_h5(MPI_Comm comm, const char *path, const char *dset, kd_pointset **out) {
  return kd_pointset_read_h5_sec(comm, path, dset, NULL, 0, out);
}

kd_err kd_pointset_read_h5_sec(MPI_Comm comm, const char *path, const char *dset, const char *sec,
                               int allow_external, kd_pointset **out) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_pointset *ps = NULL;
  kd_h5_par_ h = {-1, -1, -1, -1, -1};
  int64_t n = 0;
  int d = 0;
  *out = NULL;
  char dtype[16], shape0[160];
  KD_TRY(kd_h5_check_typed_(comm, path, dset, sec, allow_external, &n, &d, dtype));
  {
    /* before the collective open: ranks that see different files would wait on each other */
    const kd_h5_what_ w = {dset, sec, allow_external};
    snprintf(shape0, sizeof shape0, "%lld x %d %s", (long long)n, d, dtype);
    KD_TRY(kd_input_agree(comm, path, shape0, kd_h5_describe_, &w));
  }
  KD_TRY(kd_pointset_create(comm, n, d, &ps));
  kd_pointset_set_dtype(ps, dtype);
  const int64_t per = KD_H5_CHUNK_DOUBLES / d > 0 ? KD_H5_CHUNK_DOUBLES / d : 1;
  int64_t n_calls = (ps->n_local + per - 1) / per;
  KD_TRY(kd_dist_max_i64(comm, &n_calls, 1));
  KD_TRY(kd_dist_agreed(comm, kd_h5_par_open_(comm, path, dset, &h)));
  /* a rank whose read fails keeps taking part (empty selection) so nobody waits */
  for (int64_t c = 0; c < n_calls; c++) {
    kd_err e = kd_h5_par_read_(&h, ps, c, per, lerr != KD_OK, path, dset);
    if (e != KD_OK && lerr == KD_OK) lerr = e;
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  *out = ps;
  ps = NULL;
cleanup:
  kd_h5_par_close_(&h);
  kd_pointset_destroy(&ps);
  return err;
}
