/* h5_write.c - the HDF5 output file (the contract documented in kd_io.h and docs/cli.md).
 * Rank 0 writes "<path>.tmp.<pid>" with the serial sec2 driver (the result is replicated, so one
 * writer suffices), and the file is published like every file the program writes (io/publish.h):
 * every rank agrees on the outcome, rank 0 syncs the file, renames it into place and syncs the
 * directory. A failure at any step removes the temporary, so nothing is ever left at `path`. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "comm/dist_impl.h"
#include "io/io_impl.h"
#include "io/publish.h"

typedef struct {
  char text[256]; /* the innermost message */
  int oom;        /* some level could not allocate (a chunk too big to decompress) */
  int locked;     /* the file lock was refused: another process has the file open for writing */
} kd_h5_walk_;

/* The innermost HDF5 message, reduced to one short line: the driver's "file write failed: time =
 * ...\n, filename = ..., error message = 'No space left on device', ..." becomes its error text. */
static herr_t kd_h5_walk_cb_(unsigned n, const H5E_error2_t *e, void *data) {
  kd_h5_walk_ *w = data;
  char *buf = w->text;
  if (e->min_num == H5E_CANTALLOC || e->min_num == H5E_NOSPACE) w->oom = 1;
  if (e->desc && strstr(e->desc, "unable to lock file")) w->locked = 1;
  if (n != 0 || !e->desc || !e->desc[0]) return 0;
  const char *em = strstr(e->desc, "error message = '");
  if (em) {
    em += strlen("error message = '");
    const char *q = strchr(em, '\'');
    snprintf(buf, 256, "%.*s", (int)(q ? q - em : (ptrdiff_t)strlen(em)), em);
  } else {
    snprintf(buf, 256, "%.*s", (int)strcspn(e->desc, "\n"), e->desc);
  }
  return 0;
}

kd_err kd_h5_fail_(kd_err code, const char *file, int line, const char *fmt, ...) {
  char msg[768];
  kd_h5_walk_ w;
  memset(&w, 0, sizeof w);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, kd_h5_walk_cb_, &w);
  H5Eclear2(H5E_DEFAULT);
  /* HDF5 out of memory (a compressed chunk too big to inflate) is the environment's: status 2 */
  if (w.oom) code = KD_ERR_MEM;
  /* the bare "Resource temporarily unavailable" of a refused flock(2) names neither the lock nor
   * the way around it */
  if (w.locked)
    return kd_err_set(code, file, line,
                      "%s: it is locked by another process (HDF5 file locking); if that writer is "
                      "done or the file system does not support locks, set "
                      "HDF5_USE_FILE_LOCKING=FALSE",
                      msg);
  if (w.text[0]) return kd_err_set(code, file, line, "%s (HDF5: %s)", msg, w.text);
  return kd_err_set(code, file, line, "%s", msg);
}

void kd_h5_quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

kd_err kd_h5_image_create(const char *name, hid_t *f) {
  kd_err err = KD_OK;
  hid_t fapl = -1, fcpl = -1;
  *f = -1;
  KD_H5C(fapl = H5Pcreate(H5P_FILE_ACCESS), KD_ERR_H5, "H5Pcreate(FILE_ACCESS)");
  KD_H5C(H5Pset_fapl_core(fapl, (size_t)1 << 20, 0), KD_ERR_H5, "H5Pset_fapl_core");
  /* the user block carries the checksum of the file (kd_h5_image_save, kd_h5_verify) */
  KD_H5C(fcpl = H5Pcreate(H5P_FILE_CREATE), KD_ERR_H5, "H5Pcreate(FILE_CREATE)");
  KD_H5C(H5Pset_userblock(fcpl, KD_H5_USERBLOCK), KD_ERR_H5, "H5Pset_userblock");
  KD_H5C(*f = H5Fcreate(name, H5F_ACC_TRUNC, fcpl, fapl), KD_ERR_H5,
         "%s: cannot create the file in memory", name);
cleanup:
  if (fcpl >= 0) H5Pclose(fcpl);
  if (fapl >= 0) H5Pclose(fapl);
  return err;
}

static uint64_t kd_h5_sum_(const unsigned char *b, size_t n) {
  uint64_t h = 14695981039346656037ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

/* "KDISTILL-SUM1 <fnv64 hex of bytes [512, len)> <len>\n" at the start of the user block. */
#define KD_H5_SUM_TAG "KDISTILL-SUM1 "

kd_err kd_h5_verify(const char *path) {
  kd_err err = KD_OK;
  unsigned char *b = NULL;
  unsigned long long want = 0, len = 0;
  long n = -1;
  FILE *fp = fopen(path, "rb");
  KD_CHECK(fp, KD_ERR_FILE, "%s: cannot open: %s", path, strerror(errno));
  char head[64] = {0};
  if (fread(head, 1, sizeof head - 1, fp) != sizeof head - 1 ||
      strncmp(head, KD_H5_SUM_TAG, strlen(KD_H5_SUM_TAG)) != 0)
    goto cleanup; /* not written by this kdistill (or the tag itself was hit): HDF5 decides */
  KD_CHECK(sscanf(head + strlen(KD_H5_SUM_TAG), "%16llx %llu", &want, &len) == 2 &&
               fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 &&
               (unsigned long long)n == len && len >= KD_H5_USERBLOCK,
           KD_ERR_INPUT, "%s: damaged file (%ld bytes, %llu written): truncated or altered", path,
           n, len);
  KD_ALLOC(b, (size_t)len);
  KD_CHECK(fseek(fp, 0, SEEK_SET) == 0 && fread(b, 1, (size_t)len, fp) == (size_t)len, KD_ERR_FILE,
           "%s: cannot read: %s", path, strerror(errno));
  KD_CHECK(kd_h5_sum_(b + KD_H5_USERBLOCK, (size_t)len - KD_H5_USERBLOCK) == want, KD_ERR_INPUT,
           "%s: damaged file (checksum mismatch): altered after it was written", path);
cleanup:
  if (fp) fclose(fp);
  free(b);
  return err;
}

/* Write n bytes to the temporary at path that the publish created (io/publish.h: opened without
 * O_CREAT, never through a symbolic link) and fsync it. On failure the publish removes it. */
static kd_err kd_h5_write_bytes_(const char *path, const char *buf, size_t n) {
  kd_err err = KD_OK;
  int fd = kd_publish_open_tmp(path);
  KD_CHECK(fd >= 0, KD_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  for (size_t at = 0; at < n;) {
    ssize_t w = write(fd, buf + at, n - at);
    if (w < 0 && errno == EINTR) continue;
    KD_CHECK(w > 0, KD_ERR_IO, "%s: cannot write: %s", path,
             w < 0 ? strerror(errno) : "no progress");
    at += (size_t)w;
  }
  KD_CHECK(fsync(fd) == 0, KD_ERR_IO, "%s: cannot sync to disk: %s", path, strerror(errno));
  {
    const int c = close(fd);
    fd = -1;
    KD_CHECK(c == 0, KD_ERR_IO, "%s: cannot close: %s", path, strerror(errno));
  }
cleanup:
  if (fd >= 0) close(fd);
  return err;
}

kd_err kd_h5_image_save(hid_t *f, const char *path) {
  kd_err err = KD_OK;
  char *img = NULL;
  KD_H5C(H5Fflush(*f, H5F_SCOPE_GLOBAL), KD_ERR_H5, "%s: cannot flush the file image", path);
  {
    const ssize_t n = H5Fget_file_image(*f, NULL, 0);
    KD_H5C(n, KD_ERR_H5, "%s: cannot size the file image", path);
    /* the image starts at the superblock: the user block (our checksum line) goes before it */
    const size_t len = (size_t)n + KD_H5_USERBLOCK;
    KD_ALLOC(img, len);
    KD_H5C(H5Fget_file_image(*f, img + KD_H5_USERBLOCK, (size_t)n), KD_ERR_H5,
           "%s: cannot copy the file image", path);
    snprintf(img, KD_H5_USERBLOCK, KD_H5_SUM_TAG "%016llx %llu\n",
             (unsigned long long)kd_h5_sum_((unsigned char *)img + KD_H5_USERBLOCK, (size_t)n),
             (unsigned long long)len);
    const herr_t c = H5Fclose(*f); /* in memory: closed exactly once */
    *f = -1;
    KD_H5C(c, KD_ERR_H5, "%s: cannot close the file image", path);
    KD_TRY(kd_h5_write_bytes_(path, img, len));
  }
cleanup:
  if (*f >= 0) H5Fclose(*f);
  *f = -1;
  free(img);
  return err;
}

kd_err kd_h5_attr_str(hid_t loc, const char *name, const char *val) {
  kd_err err = KD_OK;
  hid_t t = -1, s = -1, a = -1;
  KD_H5C(t = H5Tcopy(H5T_C_S1), KD_ERR_H5, "attribute %s: H5Tcopy", name);
  KD_H5C(H5Tset_size(t, H5T_VARIABLE), KD_ERR_H5, "attribute %s: H5Tset_size", name);
  KD_H5C(H5Tset_cset(t, H5T_CSET_UTF8), KD_ERR_H5, "attribute %s: H5Tset_cset", name);
  KD_H5C(s = H5Screate(H5S_SCALAR), KD_ERR_H5, "attribute %s: H5Screate", name);
  KD_H5C(a = H5Acreate2(loc, name, t, s, H5P_DEFAULT, H5P_DEFAULT), KD_ERR_IO,
         "cannot create attribute %s", name);
  const char *v = val ? val : "";
  KD_H5C(H5Awrite(a, t, &v), KD_ERR_IO, "cannot write attribute %s", name);
cleanup:
  if (a >= 0) H5Aclose(a);
  if (s >= 0) H5Sclose(s);
  if (t >= 0) H5Tclose(t);
  return err;
}

kd_err kd_h5_attr_num(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *val) {
  kd_err err = KD_OK;
  hid_t s = -1, a = -1;
  KD_H5C(s = H5Screate(H5S_SCALAR), KD_ERR_H5, "attribute %s: H5Screate", name);
  KD_H5C(a = H5Acreate2(loc, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT), KD_ERR_IO,
         "cannot create attribute %s", name);
  KD_H5C(H5Awrite(a, mtype, val), KD_ERR_IO, "cannot write attribute %s", name);
cleanup:
  if (a >= 0) H5Aclose(a);
  if (s >= 0) H5Sclose(s);
  return err;
}

kd_err kd_h5_dset(hid_t loc, const char *path, hid_t lcpl, int is_int, int rank,
                  const int64_t *dims, const void *data) {
  kd_err err = KD_OK;
  hid_t s = -1, ds = -1;
  hsize_t hd[2] = {0, 0};
  for (int i = 0; i < rank; i++) hd[i] = (hsize_t)dims[i];
  KD_H5C(s = rank ? H5Screate_simple(rank, hd, NULL) : H5Screate(H5S_SCALAR), KD_ERR_H5,
         "dataset %s: cannot create its dataspace", path);
  KD_H5C(ds = H5Dcreate2(loc, path, is_int ? H5T_STD_I64LE : H5T_IEEE_F64LE, s, lcpl, H5P_DEFAULT,
                         H5P_DEFAULT),
         KD_ERR_IO, "cannot create dataset %s", path);
  int64_t count = 1;
  for (int i = 0; i < rank; i++) count *= dims[i];
  if (count > 0)
    KD_H5C(H5Dwrite(ds, is_int ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                    H5P_DEFAULT, data),
           KD_ERR_IO, "cannot write dataset %s", path);
cleanup:
  if (ds >= 0) H5Dclose(ds);
  if (s >= 0) H5Sclose(s);
  return err;
}

static kd_err kd_output_write_file_(const char *tmp, const kd_output_meta *meta,
                                    const kd_result *res) {
  kd_err err = KD_OK;
  hid_t f = -1, g = -1, m = -1, tr = -1, lcpl = -1;
  char stamp[40];
  time_t now = time(NULL);
  struct tm tmv;
  KD_TRY(kd_h5_image_create(tmp, &f));
  KD_H5C(lcpl = H5Pcreate(H5P_LINK_CREATE), KD_ERR_H5, "H5Pcreate(LINK_CREATE)");
  KD_H5C(H5Pset_create_intermediate_group(lcpl, 1), KD_ERR_H5, "H5Pset_create_intermediate_group");
  /* root attributes */
  if (!gmtime_r(&now, &tmv)) memset(&tmv, 0, sizeof tmv);
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  int32_t nr = meta->n_ranks;
  uint64_t seed = meta->seed;
  KD_TRY(kd_h5_attr_str(f, "kdistill_version", KD_VERSION_STRING));
  KD_TRY(kd_h5_attr_str(f, "task", meta->task));
  KD_TRY(kd_h5_attr_str(f, "algorithm", meta->algorithm));
  KD_TRY(kd_h5_attr_str(f, "kernel", meta->kernel));
  KD_TRY(kd_h5_attr_num(f, "n_ranks", H5T_STD_I32LE, H5T_NATIVE_INT32, &nr));
  KD_TRY(kd_h5_attr_num(f, "seed", H5T_STD_U64LE, H5T_NATIVE_UINT64, &seed));
  KD_TRY(kd_h5_attr_str(f, "created_utc", stamp));
  KD_TRY(kd_h5_attr_str(f, "config_yaml", meta->config_yaml));
  KD_TRY(kd_build_attrs(f));
  /* coreset */
  KD_H5C(g = H5Gcreate2(f, "/coreset", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), KD_ERR_IO,
         "cannot create group /coreset");
  int64_t dims[2] = {res->n, res->d};
  KD_TRY(kd_h5_dset(f, "/coreset/points", H5P_DEFAULT, 0, 2, dims, res->points));
  KD_TRY(kd_h5_dset(f, "/coreset/weights", H5P_DEFAULT, 0, 1, dims, res->weights));
  KD_TRY(kd_h5_dset(f, "/coreset/indices", H5P_DEFAULT, 1, 1, dims, res->indices));
  /* metrics */
  KD_H5C(m = H5Gcreate2(f, "/metrics", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), KD_ERR_IO,
         "cannot create group /metrics");
  uint64_t evals = res->kernel_evals;
  KD_TRY(kd_h5_attr_num(m, "mmd", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &res->mmd));
  KD_TRY(kd_h5_attr_num(m, "seconds", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &res->seconds));
  KD_TRY(kd_h5_attr_num(m, "kernel_evals", H5T_STD_U64LE, H5T_NATIVE_UINT64, &evals));
  for (int i = 0; i < res->n_metrics; i++) {
    const char *name = res->metrics[i].name;
    KD_CHECK(strcmp(name, "mmd") && strcmp(name, "seconds") && strcmp(name, "kernel_evals"),
             KD_ERR_INTERNAL, "metric name '%s' is reserved", name);
    if (res->metrics[i].is_count) {
      const int64_t c = (int64_t)res->metrics[i].value;
      KD_TRY(kd_h5_attr_num(m, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &c));
    } else {
      KD_TRY(kd_h5_attr_num(m, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &res->metrics[i].value));
    }
  }
  if (res->n_trace > 0) {
    int64_t nt = res->n_trace;
    KD_H5C(tr = H5Gcreate2(m, "trace", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), KD_ERR_IO,
           "cannot create group /metrics/trace");
    KD_TRY(kd_h5_dset(tr, "iteration", H5P_DEFAULT, 1, 1, &nt, res->trace_iter));
    KD_TRY(kd_h5_dset(tr, "n_atoms", H5P_DEFAULT, 1, 1, &nt, res->trace_atoms));
    KD_TRY(kd_h5_dset(tr, "mmd", H5P_DEFAULT, 0, 1, &nt, res->trace_mmd));
    KD_TRY(kd_h5_dset(tr, "seconds", H5P_DEFAULT, 0, 1, &nt, res->trace_seconds));
  }
  /* extra datasets at their paths */
  for (int i = 0; i < res->n_datasets; i++) {
    const kd_result_dataset *x = &res->datasets[i];
    KD_TRY(kd_h5_dset(f, x->path, lcpl, x->is_int, x->rank, x->dims,
                      x->is_int ? (const void *)x->i64 : (const void *)x->f64));
  }
  if (tr >= 0) H5Gclose(tr);
  if (m >= 0) H5Gclose(m);
  if (g >= 0) H5Gclose(g);
  tr = m = g = -1;
  KD_TRY(kd_h5_image_save(&f, tmp)); /* closes f exactly once */
cleanup:
  if (tr >= 0) H5Gclose(tr);
  if (m >= 0) H5Gclose(m);
  if (g >= 0) H5Gclose(g);
  if (f >= 0) H5Fclose(f);
  if (lcpl >= 0) H5Pclose(lcpl);
  return err;
}

/* mkdir -p of the directory part of path. */
static kd_err kd_mkdir_parents_(const char *path) {
  kd_err err = KD_OK;
  char *p = NULL;
  size_t n = strlen(path);
  KD_ALLOC(p, n + 1);
  memcpy(p, path, n + 1);
  for (size_t i = 1; i < n; i++) {
    if (p[i] != '/') continue;
    p[i] = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
      KD_FAIL(KD_ERR_IO, "%s: cannot create directory %s: %s", path, p, strerror(errno));
    p[i] = '/';
  }
cleanup:
  free(p);
  return err;
}

static kd_err kd_output_write_(MPI_Comm comm, const char *path, const kd_output_meta *meta,
                               const kd_result *res, int no_replace) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_publish pub;
  KD_TRY(kd_dist_agreed(comm, kd_publish_begin(comm, path, &pub)));
  pub.no_replace = no_replace;
  if (pub.root) {
    kd_h5_quiet();
    lerr = kd_mkdir_parents_(path);
    if (!lerr) lerr = kd_output_write_file_(pub.tmp, meta, res);
  }
  KD_TRY(kd_publish_commit(&pub, lerr));
cleanup:
  return err;
}

kd_err kd_output_write(MPI_Comm comm, const char *path, const kd_output_meta *meta,
                       const kd_result *res) {
  return kd_output_write_(comm, path, meta, res, 0);
}

kd_err kd_output_write_new(MPI_Comm comm, const char *path, const kd_output_meta *meta,
                           const kd_result *res) {
  return kd_output_write_(comm, path, meta, res, 1);
}

/* ------------------------------------------- small serial files (kd_h5_file, kd_io.h) */
struct kd_h5_file {
  hid_t f;
  kd_publish pub; /* a file one process writes: published over MPI_COMM_SELF */
};

kd_err kd_h5_file_create(const char *path, kd_h5_file **out) {
  kd_err err = KD_OK;
  kd_h5_file *h = NULL;
  *out = NULL;
  kd_h5_quiet();
  KD_ALLOC(h, 1);
  h->f = -1;
  KD_TRY(kd_publish_begin(MPI_COMM_SELF, path, &h->pub));
  KD_TRY(kd_h5_image_create(h->pub.tmp, &h->f));
  *out = h;
  h = NULL;
cleanup:
  kd_h5_file_discard(&h);
  return err;
}

void kd_h5_file_discard(kd_h5_file **h) {
  if (!h || !*h) return;
  if ((*h)->f >= 0) H5Fclose((*h)->f);
  kd_publish_abort(&(*h)->pub); /* removes the temporary unless it was published */
  free(*h);
  *h = NULL;
}

kd_err kd_h5_file_commit(kd_h5_file **h) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_h5_file *x = *h;
  lerr = kd_h5_image_save(&x->f, x->pub.tmp);
  err = kd_publish_commit(&x->pub, lerr);
  kd_h5_file_discard(h);
  return err;
}

/* Objects of these small files carry no modification times, so the same content gives the same
 * bytes (a sweep summary assembled later by sweep.summary_only equals the one-allocation one). */
static kd_err kd_h5_file_untimed_(hid_t cls, hid_t *plist) {
  kd_err err = KD_OK;
  KD_H5C(*plist = H5Pcreate(cls), KD_ERR_H5, "H5Pcreate");
  KD_H5C(H5Pset_obj_track_times(*plist, 0), KD_ERR_H5, "H5Pset_obj_track_times");
cleanup:
  return err;
}

kd_err kd_h5_file_group(kd_h5_file *h, const char *path) {
  kd_err err = KD_OK;
  hid_t g = -1, gcpl = -1;
  KD_TRY(kd_h5_file_untimed_(H5P_GROUP_CREATE, &gcpl));
  KD_H5C(g = H5Gcreate2(h->f, path, H5P_DEFAULT, gcpl, H5P_DEFAULT), KD_ERR_IO,
         "%s: cannot create group %s", h->pub.tmp, path);
cleanup:
  if (g >= 0) H5Gclose(g);
  if (gcpl >= 0) H5Pclose(gcpl);
  return err;
}

/* Attribute `name` on the object at obj: a string (str != NULL) or an int64. */
static kd_err kd_h5_file_attr_(kd_h5_file *h, const char *obj, const char *name, const char *str,
                               int64_t v) {
  kd_err err = KD_OK;
  hid_t o = -1;
  KD_H5C(o = H5Oopen(h->f, obj, H5P_DEFAULT), KD_ERR_IO, "%s: cannot open %s", h->pub.tmp, obj);
  if (str)
    KD_TRY(kd_h5_attr_str(o, name, str));
  else
    KD_TRY(kd_h5_attr_num(o, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v));
cleanup:
  if (o >= 0) H5Oclose(o);
  return err;
}

kd_err kd_h5_file_attr_str(kd_h5_file *h, const char *obj, const char *name, const char *val) {
  return kd_h5_file_attr_(h, obj, name, val ? val : "", 0);
}

kd_err kd_h5_file_attr_i64(kd_h5_file *h, const char *obj, const char *name, int64_t val) {
  return kd_h5_file_attr_(h, obj, name, NULL, val);
}

/* 1-D dataset of n elements, file type ftype, memory type mtype. */
static kd_err kd_h5_file_dset_(kd_h5_file *h, const char *path, hid_t ftype, hid_t mtype, int64_t n,
                               const void *data) {
  kd_err err = KD_OK;
  hid_t s = -1, d = -1, dcpl = -1;
  hsize_t dims[1] = {(hsize_t)n};
  KD_TRY(kd_h5_file_untimed_(H5P_DATASET_CREATE, &dcpl));
  KD_H5C(s = H5Screate_simple(1, dims, NULL), KD_ERR_H5, "dataset %s: dataspace", path);
  KD_H5C(d = H5Dcreate2(h->f, path, ftype, s, H5P_DEFAULT, dcpl, H5P_DEFAULT), KD_ERR_IO,
         "%s: cannot create dataset %s", h->pub.tmp, path);
  KD_H5C(H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), KD_ERR_IO,
         "%s: cannot write dataset %s", h->pub.tmp, path);
cleanup:
  if (d >= 0) H5Dclose(d);
  if (s >= 0) H5Sclose(s);
  if (dcpl >= 0) H5Pclose(dcpl);
  return err;
}

kd_err kd_h5_file_f64(kd_h5_file *h, const char *path, int64_t n, const double *v) {
  return kd_h5_file_dset_(h, path, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, v);
}

kd_err kd_h5_file_i64(kd_h5_file *h, const char *path, int64_t n, const int64_t *v) {
  return kd_h5_file_dset_(h, path, H5T_STD_I64LE, H5T_NATIVE_INT64, n, v);
}

kd_err kd_h5_file_u64(kd_h5_file *h, const char *path, int64_t n, const uint64_t *v) {
  return kd_h5_file_dset_(h, path, H5T_STD_U64LE, H5T_NATIVE_UINT64, n, v);
}

kd_err kd_h5_file_str(kd_h5_file *h, const char *path, int64_t n, const char *const *v) {
  kd_err err = KD_OK;
  hid_t t = -1;
  KD_H5C(t = H5Tcopy(H5T_C_S1), KD_ERR_H5, "dataset %s: H5Tcopy", path);
  KD_H5C(H5Tset_size(t, H5T_VARIABLE), KD_ERR_H5, "dataset %s: H5Tset_size", path);
  KD_H5C(H5Tset_cset(t, H5T_CSET_UTF8), KD_ERR_H5, "dataset %s: H5Tset_cset", path);
  KD_TRY(kd_h5_file_dset_(h, path, t, t, n, v));
cleanup:
  if (t >= 0) H5Tclose(t);
  return err;
}
