/* sweep_summary.c - the sweep's summary table, as CSV and as HDF5, written by one rank.
 *
 * CSV (<dir>/summary.csv): header "point,<key1>,...,status,mmd,n_atoms,seconds,kernel_evals,file,
 * message", one row per point; fields with ',', '"' or a newline are double-quoted.
 * HDF5 (<dir>/summary.h5): group /sweep with 1-D datasets point, status, mmd, n_atoms, seconds,
 * kernel_evals (uint64), file and message (variable-length UTF-8 strings), and /sweep/params/<key>
 * per swept key: float64 when every value of the key is a number, strings otherwise ("" where a
 * point leaves the key at its base value). Attributes of /sweep: task, mode, n_points,
 * config_yaml (how the points were run is left out: the same file from one allocation or from an
 * array of jobs plus sweep.summary_only). Root attribute kdistill_version. Both files appear
 * atomically (io/publish.h; the HDF5 one through io/'s kd_h5_file).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/publish.h"
#include "sweep/sweep_impl.h"

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
  char path[1200], file[1100];
  FILE *f = NULL;
  kd_publish pub;
  memset(&pub, 0, sizeof pub);
  snprintf(path, sizeof path, "%s/summary.csv", sp->dir);
  KD_TRY(kd_publish_begin(MPI_COMM_SELF, path, &pub)); /* rank 0 of the sweep writes it alone */
  const char *tmp = pub.tmp;
  f = kd_publish_fopen(&pub);
  KD_CHECK(f, KD_ERR_IO, "%s: cannot open: %s", tmp, strerror(errno));
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
  KD_CHECK(!ferror(f) && fflush(f) == 0, KD_ERR_IO, "%s: write failed: %s", tmp, strerror(errno));
  {
    int rc = fclose(f);
    f = NULL;
    KD_CHECK(rc == 0, KD_ERR_IO, "%s: close failed: %s", tmp, strerror(errno));
  }
  KD_TRY(kd_publish_commit(&pub, KD_OK));
cleanup:
  if (f) fclose(f);
  kd_publish_abort(&pub); /* removes the temporary unless it was published */
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

/* The columns of every point as 1-D datasets of /sweep (i64/f64/u64 scratch of n entries). */
static kd_err kd_sweep_h5_columns_(kd_h5_file *h, const kd_sweep_spec *sp, const kd_sweep_row *rows,
                                   int64_t *i64, double *f64, uint64_t *u64) {
  kd_err err = KD_OK;
  const int n = sp->n_points;
  for (int p = 0; p < n; p++) i64[p] = p;
  KD_TRY(kd_h5_file_i64(h, "/sweep/point", n, i64));
  for (int p = 0; p < n; p++) i64[p] = rows[p].status;
  KD_TRY(kd_h5_file_i64(h, "/sweep/status", n, i64));
  for (int p = 0; p < n; p++) f64[p] = rows[p].mmd;
  KD_TRY(kd_h5_file_f64(h, "/sweep/mmd", n, f64));
  for (int p = 0; p < n; p++) i64[p] = rows[p].n_atoms;
  KD_TRY(kd_h5_file_i64(h, "/sweep/n_atoms", n, i64));
  for (int p = 0; p < n; p++) f64[p] = rows[p].seconds;
  KD_TRY(kd_h5_file_f64(h, "/sweep/seconds", n, f64));
  for (int p = 0; p < n; p++) u64[p] = rows[p].kernel_evals;
  KD_TRY(kd_h5_file_u64(h, "/sweep/kernel_evals", n, u64));
cleanup:
  return err;
}

/* /sweep/file, /sweep/message and /sweep/params/<key> (numbers or strings). */
static kd_err kd_sweep_h5_texts_(kd_h5_file *h, const kd_sweep_spec *sp, const kd_sweep_row *rows,
                                 double *f64) {
  kd_err err = KD_OK;
  const int n = sp->n_points;
  const char **strs = NULL;
  char *files = NULL, dpath[600];
  KD_ALLOC(strs, n);
  KD_ALLOC(files, (size_t)n * 1100);
  for (int p = 0; p < n; p++) {
    char *fp = files + (size_t)p * 1100;
    if (rows[p].status == KD_OK)
      kd_sweep_point_path(sp, p, fp, 1100);
    else
      fp[0] = '\0';
    strs[p] = fp;
  }
  KD_TRY(kd_h5_file_str(h, "/sweep/file", n, strs));
  for (int p = 0; p < n; p++) strs[p] = rows[p].message;
  KD_TRY(kd_h5_file_str(h, "/sweep/message", n, strs));
  KD_TRY(kd_h5_file_group(h, "/sweep/params"));
  for (int k = 0; k < sp->n_keys; k++) {
    int numeric = 1;
    for (int p = 0; p < n && numeric; p++)
      numeric = kd_sweep_is_number_(sp->vals[(size_t)p * sp->n_keys + k], &f64[p]);
    snprintf(dpath, sizeof dpath, "/sweep/params/%s", sp->keys[k]);
    if (numeric) {
      KD_TRY(kd_h5_file_f64(h, dpath, n, f64));
    } else {
      for (int p = 0; p < n; p++) {
        const char *v = sp->vals[(size_t)p * sp->n_keys + k];
        strs[p] = v ? v : "";
      }
      KD_TRY(kd_h5_file_str(h, dpath, n, strs));
    }
  }
cleanup:
  free(strs);
  free(files);
  return err;
}

static kd_err kd_sweep_write_h5_(const kd_sweep_spec *sp, const kd_sweep_row *rows,
                                 const char *config_yaml) {
  kd_err err = KD_OK;
  char path[1200];
  kd_h5_file *h = NULL;
  const int n = sp->n_points;
  int64_t *i64 = NULL;
  double *f64 = NULL;
  uint64_t *u64 = NULL;
  snprintf(path, sizeof path, "%s/summary.h5", sp->dir);
  KD_ALLOC(i64, n);
  KD_ALLOC(f64, n);
  KD_ALLOC(u64, n);
  KD_TRY(kd_h5_file_create(path, &h));
  KD_TRY(kd_h5_file_attr_str(h, "/", "kdistill_version", KD_VERSION_STRING));
  KD_TRY(kd_h5_file_group(h, "/sweep"));
  KD_TRY(kd_h5_file_attr_str(h, "/sweep", "task", sp->task));
  KD_TRY(kd_h5_file_attr_str(h, "/sweep", "mode", sp->mode));
  KD_TRY(kd_h5_file_attr_i64(h, "/sweep", "n_points", n));
  KD_TRY(kd_h5_file_attr_str(h, "/sweep", "config_yaml", config_yaml ? config_yaml : ""));
  KD_TRY(kd_sweep_h5_columns_(h, sp, rows, i64, f64, u64));
  KD_TRY(kd_sweep_h5_texts_(h, sp, rows, f64));
  KD_TRY(kd_h5_file_commit(&h));
cleanup:
  kd_h5_file_discard(&h);
  free(i64);
  free(f64);
  free(u64);
  return err;
}

kd_err kd_sweep_write_summary(const kd_sweep_spec *sp, const kd_sweep_row *rows,
                              const char *config_yaml) {
  kd_err err = KD_OK;
  KD_TRY(kd_sweep_write_csv_(sp, rows));
  KD_TRY(kd_sweep_write_h5_(sp, rows, config_yaml));
cleanup:
  return err;
}

int kd_sweep_point_done(const char *path, uint64_t hash) {
  int64_t stored = 0;
  return kd_h5_file_read_i64(path, "/sweep_point/hash", &stored) && (uint64_t)stored == hash;
}
