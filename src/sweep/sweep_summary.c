/* sweep_summary.c - the sweep's summary table, as CSV and as HDF5, written by one rank.
 *
 * CSV (<dir>/summary.csv): header "point,<key1>,...,status,mmd,n_atoms,seconds,kernel_evals,file,
 * message", one row per point; fields with ',', '"' or a newline are double-quoted.
 * HDF5 (<dir>/summary.h5): group /sweep with 1-D datasets point, status, mmd, n_atoms, seconds,
 * kernel_evals (uint64), file and message (variable-length UTF-8 strings), and /sweep/params/<key>
 * per swept key: float64 when every value of the key is a number, strings otherwise ("" where a
 * point leaves the key at its base value). Attributes of /sweep: task, mode, n_points, n_groups,
 * config_yaml. Root attribute kdistill_version. Both files appear atomically (temporary + rename).
 */
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep/sweep_impl.h"

#define KD_SWEEP_H5(call)                                                                      \
  do {                                                                                         \
    if ((long long)(call) < 0) {                                                               \
      err = kd_err_set(KD_ERR_H5, __FILE__, __LINE__, "%s: HDF5 call failed: %s", tmp, #call); \
      goto cleanup;                                                                            \
    }                                                                                          \
  } while (0)

static void kd_sweep_csv_field_(FILE *f, const char *s) {
  if (!s) s = "";
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (const char *c = s; *c; c++) {
    if (*c == '"') fputc('"', f);
    fputc(*c, f);
  }
  fputc('"', f);
}

static kd_err kd_sweep_write_csv_(const kd_sweep_spec *sp, const kd_sweep_row *rows) {
  kd_err err = KD_OK;
  char path[1200], tmp[1300], file[1100];
  FILE *f = NULL;
  snprintf(path, sizeof path, "%s/summary.csv", sp->dir);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  f = fopen(tmp, "w");
  KD_CHECK(f, KD_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
  fputs("point", f);
  for (int k = 0; k < sp->n_keys; k++) {
    fputc(',', f);
    kd_sweep_csv_field_(f, sp->keys[k]);
  }
  fputs(",status,mmd,n_atoms,seconds,kernel_evals,file,message\n", f);
  for (int p = 0; p < sp->n_points; p++) {
    const kd_sweep_row *r = &rows[p];
    fprintf(f, "%d", p);
    for (int k = 0; k < sp->n_keys; k++) {
      fputc(',', f);
      kd_sweep_csv_field_(f, sp->vals[(size_t)p * sp->n_keys + k]);
    }
    fprintf(f, ",%lld,%.17g,%lld,%.6f,%llu,", (long long)r->status, r->mmd, (long long)r->n_atoms,
            r->seconds, (unsigned long long)r->kernel_evals);
    kd_sweep_csv_field_(f, r->status == KD_OK ? kd_sweep_point_path(sp, p, file, sizeof file) : "");
    fputc(',', f);
    kd_sweep_csv_field_(f, r->message);
    fputc('\n', f);
  }
  KD_CHECK(!ferror(f), KD_ERR_IO, "%s: write failed", tmp);
  {
    int rc = fclose(f);
    f = NULL;
    KD_CHECK(rc == 0, KD_ERR_IO, "%s: close failed: %s", tmp, strerror(errno));
  }
  KD_CHECK(rename(tmp, path) == 0, KD_ERR_IO, "%s: cannot rename into place: %s", path,
           strerror(errno));
cleanup:
  if (f) fclose(f);
  if (err) remove(tmp);
  return err;
}

/* The full text is a number (strtod consumes it all). */
static int kd_sweep_is_number_(const char *s, double *v) {
  if (!s || !*s) return 0;
  char *end = NULL;
  errno = 0;
  *v = strtod(s, &end);
  return end && *end == '\0' && errno == 0 && isfinite(*v);
}

static kd_err kd_sweep_h5_attr_str_(hid_t obj, const char *name, const char *val, const char *tmp) {
  kd_err err = KD_OK;
  hid_t t = -1, sp = -1, a = -1;
  KD_SWEEP_H5(t = H5Tcopy(H5T_C_S1));
  KD_SWEEP_H5(H5Tset_size(t, H5T_VARIABLE));
  KD_SWEEP_H5(H5Tset_cset(t, H5T_CSET_UTF8));
  KD_SWEEP_H5(sp = H5Screate(H5S_SCALAR));
  KD_SWEEP_H5(a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT));
  KD_SWEEP_H5(H5Awrite(a, t, &val));
cleanup:
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  if (t >= 0) H5Tclose(t);
  return err;
}

static kd_err kd_sweep_h5_attr_i64_(hid_t obj, const char *name, int64_t val, const char *tmp) {
  kd_err err = KD_OK;
  hid_t sp = -1, a = -1;
  KD_SWEEP_H5(sp = H5Screate(H5S_SCALAR));
  KD_SWEEP_H5(a = H5Acreate2(obj, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT));
  KD_SWEEP_H5(H5Awrite(a, H5T_NATIVE_INT64, &val));
cleanup:
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  return err;
}

/* 1-D dataset of n elements; mtype the memory type, ftype the file type. */
static kd_err kd_sweep_h5_dset_(hid_t grp, const char *name, hid_t ftype, hid_t mtype, int64_t n,
                                const void *data, const char *tmp) {
  kd_err err = KD_OK;
  hid_t sp = -1, d = -1;
  hsize_t dims[1] = {(hsize_t)n};
  KD_SWEEP_H5(sp = H5Screate_simple(1, dims, NULL));
  KD_SWEEP_H5(d = H5Dcreate2(grp, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  KD_SWEEP_H5(H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
cleanup:
  if (d >= 0) H5Dclose(d);
  if (sp >= 0) H5Sclose(sp);
  return err;
}

static kd_err kd_sweep_write_h5_(const kd_sweep_spec *sp, const kd_sweep_row *rows, int n_groups,
                                 const char *config_yaml) {
  kd_err err = KD_OK;
  char path[1200], tmp[1300];
  hid_t f = -1, g = -1, gp = -1, st = -1;
  const int n = sp->n_points;
  int64_t *i64 = NULL;
  double *f64 = NULL;
  uint64_t *u64 = NULL;
  const char **strs = NULL;
  char *files = NULL;
  snprintf(path, sizeof path, "%s/summary.h5", sp->dir);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  KD_ALLOC(i64, n);
  KD_ALLOC(f64, n);
  KD_ALLOC(u64, n);
  KD_ALLOC(strs, n);
  KD_ALLOC(files, (size_t)n * 1100);
  KD_SWEEP_H5(st = H5Tcopy(H5T_C_S1));
  KD_SWEEP_H5(H5Tset_size(st, H5T_VARIABLE));
  KD_SWEEP_H5(H5Tset_cset(st, H5T_CSET_UTF8));
  KD_SWEEP_H5(f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  KD_TRY(kd_sweep_h5_attr_str_(f, "kdistill_version", KD_VERSION_STRING, tmp));
  KD_SWEEP_H5(g = H5Gcreate2(f, "sweep", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  KD_TRY(kd_sweep_h5_attr_str_(g, "task", sp->task, tmp));
  KD_TRY(kd_sweep_h5_attr_str_(g, "mode", sp->mode, tmp));
  KD_TRY(kd_sweep_h5_attr_i64_(g, "n_points", n, tmp));
  KD_TRY(kd_sweep_h5_attr_i64_(g, "n_groups", n_groups, tmp));
  KD_TRY(kd_sweep_h5_attr_str_(g, "config_yaml", config_yaml ? config_yaml : "", tmp));
  for (int p = 0; p < n; p++) i64[p] = p;
  KD_TRY(kd_sweep_h5_dset_(g, "point", H5T_STD_I64LE, H5T_NATIVE_INT64, n, i64, tmp));
  for (int p = 0; p < n; p++) i64[p] = rows[p].status;
  KD_TRY(kd_sweep_h5_dset_(g, "status", H5T_STD_I64LE, H5T_NATIVE_INT64, n, i64, tmp));
  for (int p = 0; p < n; p++) f64[p] = rows[p].mmd;
  KD_TRY(kd_sweep_h5_dset_(g, "mmd", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, f64, tmp));
  for (int p = 0; p < n; p++) i64[p] = rows[p].n_atoms;
  KD_TRY(kd_sweep_h5_dset_(g, "n_atoms", H5T_STD_I64LE, H5T_NATIVE_INT64, n, i64, tmp));
  for (int p = 0; p < n; p++) f64[p] = rows[p].seconds;
  KD_TRY(kd_sweep_h5_dset_(g, "seconds", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, f64, tmp));
  for (int p = 0; p < n; p++) u64[p] = rows[p].kernel_evals;
  KD_TRY(kd_sweep_h5_dset_(g, "kernel_evals", H5T_STD_U64LE, H5T_NATIVE_UINT64, n, u64, tmp));
  for (int p = 0; p < n; p++) {
    char *fp = files + (size_t)p * 1100;
    if (rows[p].status == KD_OK)
      kd_sweep_point_path(sp, p, fp, 1100);
    else
      fp[0] = '\0';
    strs[p] = fp;
  }
  KD_TRY(kd_sweep_h5_dset_(g, "file", st, st, n, strs, tmp));
  for (int p = 0; p < n; p++) strs[p] = rows[p].message;
  KD_TRY(kd_sweep_h5_dset_(g, "message", st, st, n, strs, tmp));
  KD_SWEEP_H5(gp = H5Gcreate2(g, "params", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  for (int k = 0; k < sp->n_keys; k++) {
    int numeric = 1;
    for (int p = 0; p < n && numeric; p++)
      numeric = kd_sweep_is_number_(sp->vals[(size_t)p * sp->n_keys + k], &f64[p]);
    if (numeric) {
      KD_TRY(kd_sweep_h5_dset_(gp, sp->keys[k], H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, f64, tmp));
    } else {
      for (int p = 0; p < n; p++) {
        const char *v = sp->vals[(size_t)p * sp->n_keys + k];
        strs[p] = v ? v : "";
      }
      KD_TRY(kd_sweep_h5_dset_(gp, sp->keys[k], st, st, n, strs, tmp));
    }
  }
  KD_SWEEP_H5(H5Gclose(gp));
  gp = -1;
  KD_SWEEP_H5(H5Gclose(g));
  g = -1;
  {
    herr_t rc = H5Fclose(f);
    f = -1;
    KD_SWEEP_H5(rc);
  }
  KD_CHECK(rename(tmp, path) == 0, KD_ERR_IO, "%s: cannot rename into place: %s", path,
           strerror(errno));
cleanup:
  if (gp >= 0) H5Gclose(gp);
  if (g >= 0) H5Gclose(g);
  if (f >= 0) H5Fclose(f);
  if (st >= 0) H5Tclose(st);
  if (err) remove(tmp);
  free(i64);
  free(f64);
  free(u64);
  free(strs);
  free(files);
  return err;
}

kd_err kd_sweep_write_summary(const kd_sweep_spec *sp, const kd_sweep_row *rows, int n_groups,
                              const char *config_yaml) {
  kd_err err = KD_OK;
  H5E_auto2_t old_fn = NULL;
  void *old_data = NULL;
  H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  KD_TRY(kd_sweep_write_csv_(sp, rows));
  KD_TRY(kd_sweep_write_h5_(sp, rows, n_groups, config_yaml));
cleanup:
  H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
  return err;
}

int kd_sweep_point_done(const char *path, uint64_t hash) {
  H5E_auto2_t old_fn = NULL;
  void *old_data = NULL;
  hid_t f = -1, d = -1;
  int64_t stored = 0;
  int done = 0;
  FILE *probe = fopen(path, "rb");
  if (!probe) return 0;
  fclose(probe);
  H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f >= 0 && H5Lexists(f, "/sweep_point", H5P_DEFAULT) > 0 &&
      H5Lexists(f, "/sweep_point/hash", H5P_DEFAULT) > 0)
    d = H5Dopen2(f, "/sweep_point/hash", H5P_DEFAULT);
  if (d >= 0 && H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &stored) >= 0)
    done = (uint64_t)stored == hash;
  if (d >= 0) H5Dclose(d);
  if (f >= 0) H5Fclose(f);
  H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
  return done;
}
