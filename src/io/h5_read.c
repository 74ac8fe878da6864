/* h5_read.c - reading kdistill output files back (kd_output_read, `kdistill info`). Local: one
 * process opens the file read-only with the sec2 driver. */
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_impl.h"
#include "io/mmd_text.h"
#include "io/paths.h"

static kd_err kd_h5_open_ro_(const char *path, hid_t *f) {
  kd_err err = KD_OK;
  hid_t fapl = -1;
  *f = -1;
  KD_TRY(kd_path_check_input(path, "HDF5")); /* a FIFO or directory is refused, not read */
  KD_TRY(kd_h5_verify(path));                /* a damaged file never reaches the HDF5 parser */
  kd_h5_quiet();
  KD_H5C(fapl = H5Pcreate(H5P_FILE_ACCESS), KD_ERR_H5, "H5Pcreate(FILE_ACCESS)");
  KD_H5C(H5Pset_fapl_sec2(fapl), KD_ERR_H5, "H5Pset_fapl_sec2");
  KD_H5C(*f = H5Fopen(path, H5F_ACC_RDONLY, fapl), KD_ERR_FILE, "%s: not a readable HDF5 file",
         path);
cleanup:
  if (fapl >= 0) H5Pclose(fapl);
  return err;
}

/* String attribute (variable or fixed length) -> malloc'ed copy. */
static kd_err kd_h5_read_attr_str_(hid_t loc, const char *name, const char *path, char **out) {
  kd_err err = KD_OK;
  hid_t a = -1, ft = -1, mt = -1, sp = -1;
  char *vl = NULL, *buf = NULL;
  *out = NULL;
  KD_H5C(a = H5Aopen(loc, name, H5P_DEFAULT), KD_ERR_INPUT, "%s: attribute '%s' is missing", path,
         name);
  KD_H5C(ft = H5Aget_type(a), KD_ERR_INPUT, "%s: attribute '%s': H5Aget_type", path, name);
  KD_CHECK(H5Tget_class(ft) == H5T_STRING, KD_ERR_INPUT, "%s: attribute '%s' is not a string", path,
           name);
  KD_H5C(mt = H5Tcopy(H5T_C_S1), KD_ERR_H5, "H5Tcopy");
  KD_H5C(H5Tset_cset(mt, H5Tget_cset(ft)), KD_ERR_H5, "H5Tset_cset");
  htri_t var = H5Tis_variable_str(ft);
  KD_H5C(var, KD_ERR_INPUT, "%s: attribute '%s': H5Tis_variable_str", path, name);
  if (var) {
    KD_H5C(H5Tset_size(mt, H5T_VARIABLE), KD_ERR_H5, "H5Tset_size");
    KD_H5C(H5Aread(a, mt, &vl), KD_ERR_INPUT, "%s: cannot read attribute '%s'", path, name);
    size_t n = vl ? strlen(vl) : 0;
    KD_ALLOC(buf, n + 1);
    if (n) memcpy(buf, vl, n);
  } else {
    size_t n = H5Tget_size(ft);
    KD_CHECK(n > 0, KD_ERR_INPUT, "%s: attribute '%s' has size 0", path, name);
    KD_H5C(H5Tset_size(mt, n + 1), KD_ERR_H5, "H5Tset_size");
    KD_ALLOC(buf, n + 2);
    KD_H5C(H5Aread(a, mt, buf), KD_ERR_INPUT, "%s: cannot read attribute '%s'", path, name);
  }
  *out = buf;
  buf = NULL;
cleanup:
  if (vl) H5free_memory(vl);
  free(buf);
  if (sp >= 0) H5Sclose(sp);
  if (mt >= 0) H5Tclose(mt);
  if (ft >= 0) H5Tclose(ft);
  if (a >= 0) H5Aclose(a);
  return err;
}

static kd_err kd_h5_read_attr_num_(hid_t loc, const char *name, const char *path, hid_t mtype,
                                   void *val) {
  kd_err err = KD_OK;
  hid_t a = -1;
  KD_H5C(a = H5Aopen(loc, name, H5P_DEFAULT), KD_ERR_INPUT, "%s: attribute '%s' is missing", path,
         name);
  KD_H5C(H5Aread(a, mtype, val), KD_ERR_INPUT, "%s: cannot read attribute '%s'", path, name);
cleanup:
  if (a >= 0) H5Aclose(a);
  return err;
}

/* 1-D or 2-D dataset: dims (rank <= 2). */
static kd_err kd_h5_dims_(hid_t f, const char *dpath, const char *path, int *rank,
                          hsize_t dims[2]) {
  kd_err err = KD_OK;
  hid_t d = -1, s = -1;
  dims[0] = dims[1] = 0;
  KD_H5C(d = H5Dopen2(f, dpath, H5P_DEFAULT), KD_ERR_INPUT,
         "%s: dataset %s is missing (not a kdistill output?)", path, dpath);
  KD_H5C(s = H5Dget_space(d), KD_ERR_INPUT, "%s: %s: H5Dget_space", path, dpath);
  int r = H5Sget_simple_extent_ndims(s);
  KD_CHECK(r >= 0 && r <= 2, KD_ERR_INPUT, "%s: %s has rank %d (expected 1 or 2)", path, dpath, r);
  KD_H5C(H5Sget_simple_extent_dims(s, dims, NULL), KD_ERR_INPUT, "%s: %s: extent", path, dpath);
  *rank = r;
cleanup:
  if (s >= 0) H5Sclose(s);
  if (d >= 0) H5Dclose(d);
  return err;
}

static kd_err kd_h5_read_all_(hid_t f, const char *dpath, const char *path, hid_t mtype,
                              hsize_t expect, void *buf) {
  kd_err err = KD_OK;
  hid_t d = -1, s = -1;
  KD_H5C(d = H5Dopen2(f, dpath, H5P_DEFAULT), KD_ERR_INPUT, "%s: dataset %s is missing", path,
         dpath);
  KD_H5C(s = H5Dget_space(d), KD_ERR_INPUT, "%s: %s: H5Dget_space", path, dpath);
  hssize_t np = H5Sget_simple_extent_npoints(s);
  KD_CHECK(np >= 0 && (hsize_t)np == expect, KD_ERR_INPUT,
           "%s: %s has %lld elements, expected %llu", path, dpath, (long long)np,
           (unsigned long long)expect);
  {
    /* kdistill writes its arrays in full: a declared size the file does not hold is damage */
    hid_t ft = H5Dget_type(d);
    const size_t ts = ft >= 0 ? H5Tget_size(ft) : 0;
    if (ft >= 0) H5Tclose(ft);
    KD_CHECK(ts > 0 && ts <= 8 && H5Dget_storage_size(d) == (hsize_t)np * ts, KD_ERR_INPUT,
             "%s: %s declares %lld elements that the file does not hold (damaged output)", path,
             dpath, (long long)np);
  }
  if (expect > 0)
    KD_H5C(H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), KD_ERR_INPUT,
           "%s: cannot read %s", path, dpath);
cleanup:
  if (s >= 0) H5Sclose(s);
  if (d >= 0) H5Dclose(d);
  return err;
}

typedef struct {
  kd_result *res;
  const char *path;
  kd_err err;
} kd_metrics_iter_;

static herr_t kd_metrics_cb_(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
  kd_metrics_iter_ *it = data;
  kd_err err = KD_OK;
  (void)info;
  if (!strcmp(name, "mmd") || !strcmp(name, "seconds") || !strcmp(name, "kernel_evals")) return 0;
  double v = NAN;
  int64_t c = 0;
  hid_t a = -1, ty = -1;
  KD_H5C(a = H5Aopen(loc, name, H5P_DEFAULT), KD_ERR_INPUT, "%s: attribute '%s' is missing",
         it->path, name);
  KD_H5C(ty = H5Aget_type(a), KD_ERR_INPUT, "%s: attribute '%s': H5Aget_type", it->path, name);
  const H5T_class_t cl = H5Tget_class(ty);
  if (cl == H5T_INTEGER) { /* a count (kd_result_set_count) */
    KD_TRY(kd_h5_read_attr_num_(loc, name, it->path, H5T_NATIVE_INT64, &c));
    KD_TRY(kd_result_set_count(it->res, name, c));
  } else {
    KD_TRY(kd_h5_read_attr_num_(loc, name, it->path, H5T_NATIVE_DOUBLE, &v));
    KD_TRY(kd_result_set_metric(it->res, name, v));
  }
cleanup:
  if (ty >= 0) H5Tclose(ty);
  if (a >= 0) H5Aclose(a);
  it->err = err;
  return err ? -1 : 0;
}

/* A Stein-kernel output's /coreset/scores (n x d, the score at every point) as the result's
 * dataset of that name, so that `kdistill mmd` can evaluate the KSD. Local. */
static kd_err kd_output_read_scores_(hid_t f, const char *path, const hsize_t *dims,
                                     kd_result *res) {
  kd_err err = KD_OK;
  hsize_t sd[2];
  int sr = 0;
  double *s = NULL;
  htri_t has = H5Lexists(f, "/coreset/scores", H5P_DEFAULT);
  KD_H5C(has, KD_ERR_INPUT, "%s: H5Lexists(/coreset/scores)", path);
  if (!has) goto cleanup;
  KD_TRY(kd_h5_dims_(f, "/coreset/scores", path, &sr, sd));
  KD_CHECK(sr == 2 && sd[0] == dims[0] && sd[1] == dims[1], KD_ERR_INPUT,
           "%s: /coreset/scores must have the shape of /coreset/points", path);
  KD_ALLOC(s, (size_t)(dims[0] * dims[1] > 0 ? dims[0] * dims[1] : 1));
  KD_TRY(kd_h5_read_all_(f, "/coreset/scores", path, H5T_NATIVE_DOUBLE, dims[0] * dims[1], s));
  const int64_t d2[2] = {(int64_t)dims[0], (int64_t)dims[1]};
  KD_TRY(kd_result_add_f64(res, "/coreset/scores", 2, d2, s));
cleanup:
  free(s);
  return err;
}

kd_err kd_output_read(const char *path, kd_result *res, char **config_yaml, char **task,
                      char **algorithm) {
  kd_err err = KD_OK;
  hid_t f = -1, m = -1;
  hsize_t dims[2], wd[2];
  int rank = 0, wr = 0;
  if (config_yaml) *config_yaml = NULL;
  if (task) *task = NULL;
  if (algorithm) *algorithm = NULL;
  KD_TRY(kd_h5_open_ro_(path, &f));
  KD_TRY(kd_h5_dims_(f, "/coreset/points", path, &rank, dims));
  KD_CHECK(rank == 2 && dims[1] >= 1, KD_ERR_INPUT, "%s: /coreset/points must be n x d", path);
  /* the shape is checked before anything is sized from it (a crafted file may declare anything) */
  KD_CHECK(dims[1] <= 1000000 && dims[0] <= (hsize_t)INT64_MAX &&
               kd_size_ok((int64_t)dims[0], (int64_t)dims[1], sizeof(double), NULL),
           KD_ERR_INPUT, "%s: /coreset/points declares %llu x %llu values, more than can be read",
           path, (unsigned long long)dims[0], (unsigned long long)dims[1]);
  KD_TRY(kd_h5_dims_(f, "/coreset/weights", path, &wr, wd));
  KD_CHECK(wr == 1 && wd[0] == dims[0], KD_ERR_INPUT,
           "%s: /coreset/weights must have one entry per point", path);
  KD_TRY(kd_result_alloc(res, (kd_gidx)dims[0], (int)dims[1]));
  KD_TRY(kd_h5_read_all_(f, "/coreset/points", path, H5T_NATIVE_DOUBLE, dims[0] * dims[1],
                         res->points));
  KD_TRY(kd_h5_read_all_(f, "/coreset/weights", path, H5T_NATIVE_DOUBLE, dims[0], res->weights));
  KD_TRY(kd_h5_read_all_(f, "/coreset/indices", path, H5T_NATIVE_INT64, dims[0], res->indices));
  KD_TRY(kd_output_read_scores_(f, path, dims, res));
  KD_H5C(m = H5Gopen2(f, "/metrics", H5P_DEFAULT), KD_ERR_INPUT, "%s: group /metrics is missing",
         path);
  KD_TRY(kd_h5_read_attr_num_(m, "mmd", path, H5T_NATIVE_DOUBLE, &res->mmd));
  KD_TRY(kd_h5_read_attr_num_(m, "seconds", path, H5T_NATIVE_DOUBLE, &res->seconds));
  KD_TRY(kd_h5_read_attr_num_(m, "kernel_evals", path, H5T_NATIVE_UINT64, &res->kernel_evals));
  {
    kd_metrics_iter_ it = {res, path, KD_OK};
    hsize_t idx = 0;
    herr_t st = H5Aiterate2(m, H5_INDEX_CRT_ORDER, H5_ITER_NATIVE, &idx, kd_metrics_cb_, &it);
    if (st < 0 && it.err == KD_OK) {
      /* creation order is not tracked: fall back to name order */
      idx = 0;
      H5Eclear2(H5E_DEFAULT);
      st = H5Aiterate2(m, H5_INDEX_NAME, H5_ITER_INC, &idx, kd_metrics_cb_, &it);
    }
    KD_TRY(it.err);
    KD_H5C(st, KD_ERR_INPUT, "%s: cannot list the attributes of /metrics", path);
  }
  htri_t has_trace = H5Lexists(m, "trace", H5P_DEFAULT);
  KD_H5C(has_trace, KD_ERR_INPUT, "%s: H5Lexists(/metrics/trace)", path);
  if (has_trace) {
    hsize_t td[2];
    int tr = 0;
    KD_TRY(kd_h5_dims_(f, "/metrics/trace/iteration", path, &tr, td));
    KD_CHECK(tr == 1 && td[0] <= (hsize_t)1 << 40, KD_ERR_INPUT,
             "%s: /metrics/trace/iteration must be 1-D", path);
    for (int64_t i = 0; i < (int64_t)td[0]; i++) KD_TRY(kd_result_trace_push(res, 0, 0, 0.0, 0.0));
    KD_TRY(kd_h5_read_all_(f, "/metrics/trace/iteration", path, H5T_NATIVE_INT64, td[0],
                           res->trace_iter));
    KD_TRY(kd_h5_read_all_(f, "/metrics/trace/n_atoms", path, H5T_NATIVE_INT64, td[0],
                           res->trace_atoms));
    KD_TRY(
        kd_h5_read_all_(f, "/metrics/trace/mmd", path, H5T_NATIVE_DOUBLE, td[0], res->trace_mmd));
    KD_TRY(kd_h5_read_all_(f, "/metrics/trace/seconds", path, H5T_NATIVE_DOUBLE, td[0],
                           res->trace_seconds));
  }
  if (config_yaml) KD_TRY(kd_h5_read_attr_str_(f, "config_yaml", path, config_yaml));
  if (task) KD_TRY(kd_h5_read_attr_str_(f, "task", path, task));
  if (algorithm) KD_TRY(kd_h5_read_attr_str_(f, "algorithm", path, algorithm));
cleanup:
  if (m >= 0) H5Gclose(m);
  if (f >= 0) H5Fclose(f);
  if (err) {
    if (config_yaml) free(*config_yaml), *config_yaml = NULL;
    if (task) free(*task), *task = NULL;
    if (algorithm) free(*algorithm), *algorithm = NULL;
  }
  return err;
}

kd_err kd_output_read_meta(const char *path, char **kernel, int *n_ranks) {
  kd_err err = KD_OK;
  hid_t f = -1;
  int32_t nr = 0;
  if (kernel) *kernel = NULL;
  KD_CHECK(path, KD_ERR_ARG, "kd_output_read_meta: NULL path");
  KD_TRY(kd_h5_open_ro_(path, &f));
  /* a file written by other tools in the documented layout may lack them: NULL and 0 then */
  htri_t has = H5Aexists(f, "kernel");
  KD_H5C(has, KD_ERR_INPUT, "%s: H5Aexists(kernel)", path);
  if (kernel && has) KD_TRY(kd_h5_read_attr_str_(f, "kernel", path, kernel));
  has = H5Aexists(f, "n_ranks");
  KD_H5C(has, KD_ERR_INPUT, "%s: H5Aexists(n_ranks)", path);
  if (n_ranks && has) KD_TRY(kd_h5_read_attr_num_(f, "n_ranks", path, H5T_NATIVE_INT32, &nr));
  if (n_ranks) *n_ranks = (int)nr;
cleanup:
  if (f >= 0) H5Fclose(f);
  if (err && kernel) free(*kernel), *kernel = NULL;
  return err;
}

/* ---------------------------------------------------------------- info */
typedef struct {
  FILE *out;
  int n;
} kd_info_iter_;

static herr_t kd_info_visit_(hid_t o, const char *name, const H5O_info_t *info, void *data) {
  kd_info_iter_ *it = data;
  (void)o;
  if (info->type != H5O_TYPE_DATASET) return 0;
  if (!strncmp(name, "coreset/", 8) || !strncmp(name, "metrics/trace/", 14)) return 0;
  fprintf(it->out, "%s/%s", it->n++ ? ", " : "  extra datasets: ", name);
  return 0;
}

/* Attribute text is the file's, not ours: control characters (an escape sequence, a carriage
 * return that overwrites the line) are shown as '?' so that `info` prints only what is there. */
static void kd_info_printable_(char *s) {
  for (; s && *s; s++)
    if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f) *s = '?';
}

kd_err kd_output_info(const char *path, FILE *out) {
  kd_err err = KD_OK;
  kd_result res = KD_RESULT_INIT;
  char *s[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
  static const char *const names[6] = {"kdistill_version", "task",        "algorithm",
                                       "kernel",           "created_utc", "config_yaml"};
  int32_t nr = 0;
  uint64_t seed = 0;
  hid_t f = -1;
  KD_TRY(kd_output_read(path, &res, NULL, NULL, NULL));
  KD_TRY(kd_h5_open_ro_(path, &f));
  for (int i = 0; i < 6; i++) {
    KD_TRY(kd_h5_read_attr_str_(f, names[i], path, &s[i]));
    if (i < 5) kd_info_printable_(s[i]); /* config_yaml (s[5]) has its newlines */
  }
  KD_TRY(kd_h5_read_attr_num_(f, "n_ranks", path, H5T_NATIVE_INT32, &nr));
  KD_TRY(kd_h5_read_attr_num_(f, "seed", path, H5T_NATIVE_UINT64, &seed));
  double wsum = 0, wmin = INFINITY, wmax = -INFINITY;
  int64_t n_idx = 0;
  for (kd_gidx i = 0; i < res.n; i++) {
    wsum += res.weights[i];
    wmin = fmin(wmin, res.weights[i]);
    wmax = fmax(wmax, res.weights[i]);
    n_idx += res.indices[i] >= 0;
  }
  fprintf(out, "file:         %s\n", path);
  fprintf(out, "kdistill:     %s (created %s on %d rank%s, seed %llu)\n", s[0], s[4], (int)nr,
          nr == 1 ? "" : "s", (unsigned long long)seed);
  fprintf(out, "task:         %s\nalgorithm:    %s\nkernel:       %s\n", s[1], s[2], s[3]);
  fprintf(out, "coreset:      %lld points in %d dimension%s, %lld from input rows\n",
          (long long)res.n, res.d, res.d == 1 ? "" : "s", (long long)n_idx);
  if (res.n > 0) fprintf(out, "weights:      sum %.15g, min %.6g, max %.6g\n", wsum, wmin, wmax);
  {
    double method = 0.0, e = NAN;
    char text[256];
    kd_result_get_metric(&res, "mmd_method", &method);
    kd_result_get_metric(&res, method == 3 ? "mmd_bound" : "mmd_se", &e);
    kd_output_mmd_text(text, sizeof text, (int)method, res.mmd, e);
    fprintf(out, "mmd:          %s\n", text);
  }
  fprintf(out, "seconds:      %.6g\n", res.seconds);
  fprintf(out, "kernel_evals: %llu\n", (unsigned long long)res.kernel_evals);
  for (int i = 0; i < res.n_metrics; i++)
    if (res.metrics[i].is_count)
      fprintf(out, "metric:       %s = %lld\n", res.metrics[i].name,
              (long long)res.metrics[i].value);
    else
      fprintf(out, "metric:       %s = %.10g\n", res.metrics[i].name, res.metrics[i].value);
  if (res.n_trace > 0)
    fprintf(out, "trace:        %lld rows, final mmd %.10g at %lld atoms\n", (long long)res.n_trace,
            res.trace_mmd[res.n_trace - 1], (long long)res.trace_atoms[res.n_trace - 1]);
  {
    kd_info_iter_ it = {out, 0};
    KD_H5C(H5Ovisit(f, H5_INDEX_NAME, H5_ITER_INC, kd_info_visit_, &it), KD_ERR_INPUT,
           "%s: cannot list the datasets", path);
    if (it.n) fputc('\n', out);
  }
  fprintf(out, "config_yaml:  %zu bytes (h5dump -a /config_yaml %s)\n", strlen(s[5]), path);
cleanup:
  if (f >= 0) H5Fclose(f);
  for (int i = 0; i < 6; i++) free(s[i]);
  kd_result_free(&res);
  return err;
}

int kd_h5_file_read_i64(const char *path, const char *dset, int64_t *v) {
  hid_t f = -1, d = -1;
  int ok = 0;
  FILE *probe = fopen(path, "rb");
  if (!probe) return 0;
  fclose(probe);
  kd_h5_quiet();
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  /* every link on the path must exist (H5Lexists on a missing parent is an error) */
  int exists = f >= 0;
  for (const char *c = dset + 1; exists && c && *c;) {
    const char *slash = strchr(c, '/');
    char part[1024];
    const int len = slash ? (int)(slash - dset) : (int)strlen(dset);
    snprintf(part, sizeof part, "%.*s", len, dset);
    exists = H5Lexists(f, part, H5P_DEFAULT) > 0;
    c = slash ? slash + 1 : NULL;
  }
  if (exists) d = H5Dopen2(f, dset, H5P_DEFAULT);
  if (d >= 0) {
    hid_t s = H5Dget_space(d);
    ok = s >= 0 && H5Sget_simple_extent_npoints(s) == 1 &&
         H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
    if (s >= 0) H5Sclose(s);
    H5Dclose(d);
  }
  if (f >= 0) H5Fclose(f);
  return ok;
}
