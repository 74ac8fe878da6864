/* checkpoint.c - checkpoint files for restartable iterative algorithms (docs/checkpoint.md).
 * Layout: root attributes kdistill_checkpoint_format, kdistill_version, task, algorithm,
 * config_hash, config_yaml, created_utc, n_ranks, iteration, elapsed_seconds, kernel_evals, reason,
 * input_prints (one line per input point set: section, shape, type, content hash, file);
 * the algorithm's /state/... datasets (global order); /metrics/trace/{iteration, n_atoms, mmd,
 * seconds}. Published like every file (io/publish.h): rank 0 writes a temporary with the serial
 * driver, the ranks agree, rank 0 syncs it and renames it into place. Read by rank 0 and broadcast
 * as one packed buffer. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm/dist_impl.h"
#include "io/io_impl.h"
#include "io/paths.h"
#include "io/publish.h"

/* ---------------- configuration hash ---------------- */

/* keys that may change between runs: where files go, when checkpoints are written, and how the
 * ranks share work without changing the result (KH-Refine's groups) */
static const char *const kd_ckpt_ignored_[] = {"output.path",
                                               "run.checkpoint_path",
                                               "run.checkpoint_every",
                                               "run.checkpoint_keep",
                                               "run.log_interval",
                                               "run.checkpoint_on_interrupt",
                                               "algorithm.refine_group_rows",
                                               "algorithm.leaf_split",
                                               "algorithm.halve_group"};

/* Walk the block-style YAML emitted by kd_config_emit_resolved line by line, giving each line its
 * dotted key (from the indentation stack) and a pointer to its text. */
typedef struct {
  const char *p;
  char stack[8][128];
  int indent[8];
  int depth;
  char key[1024];
  const char *line;
  size_t len;
} kd_ckpt_lines_;

static int kd_ckpt_next_line_(kd_ckpt_lines_ *w) {
  if (!w->p || !*w->p) return 0;
  const char *s = w->p, *e = strchr(s, '\n');
  size_t len = e ? (size_t)(e - s) : strlen(s);
  w->p = e ? e + 1 : s + len;
  w->line = s;
  w->len = len;
  int ind = 0;
  while ((size_t)ind < len && s[ind] == ' ') ind++;
  size_t kl = 0;
  while ((size_t)ind + kl < len && s[ind + kl] != ':') kl++;
  if ((size_t)ind + kl < len && s[ind] != '-') {
    while (w->depth > 0 && w->indent[w->depth - 1] >= ind) w->depth--;
    if (w->depth < 8) {
      size_t c = kl < 127 ? kl : 127;
      memcpy(w->stack[w->depth], s + ind, c);
      w->stack[w->depth][c] = '\0';
      w->indent[w->depth] = ind;
      w->depth++;
    }
  }
  w->key[0] = '\0';
  for (int i = 0; i < w->depth; i++) {
    size_t l = strlen(w->key);
    snprintf(w->key + l, sizeof w->key - l, "%s%s", i ? "." : "", w->stack[i]);
  }
  return 1;
}

static int kd_ckpt_ignored_key_(const char *key) {
  /* an input file's path (data.path, target.path, data.score.path, ...): the file may move; its
   * fingerprint (input_prints) says whether it is the same data */
  const size_t kl = strlen(key);
  if (kl > 5 && !strcmp(key + kl - 5, ".path")) return 1;
  for (size_t i = 0; i < sizeof kd_ckpt_ignored_ / sizeof *kd_ckpt_ignored_; i++)
    if (!strcmp(key, kd_ckpt_ignored_[i])) return 1;
  return 0;
}

/* Next line that is not an ignored key; 0 at the end. */
static int kd_ckpt_next_kept_(kd_ckpt_lines_ *w) {
  while (kd_ckpt_next_line_(w))
    if (!kd_ckpt_ignored_key_(w->key)) return 1;
  return 0;
}

void kd_checkpoint_config_hash(const char *yaml, char out[17]) {
  uint64_t h = 14695981039346656037ULL;
  kd_ckpt_lines_ w;
  memset(&w, 0, sizeof w);
  w.p = yaml;
  while (kd_ckpt_next_kept_(&w)) {
    for (size_t i = 0; i < w.len; i++) {
      h ^= (unsigned char)w.line[i];
      h *= 1099511628211ULL;
    }
    h ^= (unsigned char)'\n';
    h *= 1099511628211ULL;
  }
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* The value part of a line (after "key:"), trimmed, into buf. */
static void kd_ckpt_value_(const kd_ckpt_lines_ *w, char *buf, size_t len) {
  const char *c = memchr(w->line, ':', w->len);
  size_t off = c ? (size_t)(c - w->line) + 1 : 0;
  while (off < w->len && w->line[off] == ' ') off++;
  size_t n = w->len - off;
  if (n >= len) n = len - 1;
  memcpy(buf, w->line + off, n);
  buf[n] = '\0';
  if (!buf[0]) snprintf(buf, len, "(section)");
}

int kd_checkpoint_config_diff(const char *then, const char *now, char *buf, size_t len) {
  kd_ckpt_lines_ a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.p = then;
  b.p = now;
  for (;;) {
    int ha = kd_ckpt_next_kept_(&a), hb = kd_ckpt_next_kept_(&b);
    char va[160], vb[160];
    if (!ha && !hb) return 0;
    if (ha && hb && a.len == b.len && !memcmp(a.line, b.line, a.len)) continue;
    if (ha) kd_ckpt_value_(&a, va, sizeof va);
    if (hb) kd_ckpt_value_(&b, vb, sizeof vb);
    if (ha && hb && !strcmp(a.key, b.key))
      snprintf(buf, len, "%s: %s in the checkpoint, %s now", a.key, va, vb);
    else if (ha && (!hb || strcmp(a.key, b.key) < 0))
      snprintf(buf, len, "%s: %s in the checkpoint, absent now", a.key, va);
    else
      snprintf(buf, len, "%s: absent in the checkpoint, %s now", b.key, vb);
    return 1;
  }
}

/* ---------------- state checksum ---------------- */

static uint64_t kd_ckpt_fnv_(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 1099511628211ULL;
  }
  return h;
}

/* FNV-1a over everything a resume restores: iteration, counters, the trace and every /state
 * dataset (path, type, shape, values). Datasets are hashed one by one and summed, so the order in
 * which they were written or listed does not matter. Written as the root attribute state_checksum
 * and verified on read: a flipped byte that keeps the file readable is still refused. */
static void kd_ckpt_checksum_(const kd_result *st, int64_t iteration, char out[17]) {
  uint64_t h = 14695981039346656037ULL, sum = 0;
  const int64_t ev = (int64_t)st->kernel_evals, nt = st->n_trace;
  h = kd_ckpt_fnv_(h, &iteration, sizeof iteration);
  h = kd_ckpt_fnv_(h, &ev, sizeof ev);
  h = kd_ckpt_fnv_(h, &st->seconds, sizeof st->seconds);
  h = kd_ckpt_fnv_(h, &nt, sizeof nt);
  if (nt > 0) {
    h = kd_ckpt_fnv_(h, st->trace_iter, 8 * (size_t)nt);
    h = kd_ckpt_fnv_(h, st->trace_atoms, 8 * (size_t)nt);
    h = kd_ckpt_fnv_(h, st->trace_mmd, 8 * (size_t)nt);
    h = kd_ckpt_fnv_(h, st->trace_seconds, 8 * (size_t)nt);
  }
  for (int i = 0; i < st->n_datasets; i++) {
    const kd_result_dataset *x = &st->datasets[i];
    uint64_t g = 14695981039346656037ULL;
    int64_t hdr[4] = {x->is_int, x->rank, x->rank > 0 ? x->dims[0] : 0,
                      x->rank > 1 ? x->dims[1] : 0};
    size_t count = 1;
    for (int r = 0; r < x->rank; r++) count *= (size_t)x->dims[r];
    g = kd_ckpt_fnv_(g, x->path, strlen(x->path));
    g = kd_ckpt_fnv_(g, hdr, sizeof hdr);
    g = kd_ckpt_fnv_(g, x->is_int ? (const void *)x->i64 : (const void *)x->f64, 8 * count);
    sum += g;
  }
  h = kd_ckpt_fnv_(h, &sum, sizeof sum);
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* ---------------- input fingerprints ---------------- */

/* One line per input: "section<TAB>n<TAB>d<TAB>dtype<TAB>hash<TAB>path". */
static kd_err kd_ckpt_inputs_text_(const kd_input_print *p, int n, char **out) {
  kd_err err = KD_OK;
  size_t cap = 1, at = 0;
  for (int i = 0; i < n; i++) cap += strlen(p[i].path) + 160;
  KD_ALLOC(*out, cap);
  (*out)[0] = '\0';
  for (int i = 0; i < n; i++)
    at += (size_t)snprintf(*out + at, cap - at, "%s\t%lld\t%lld\t%s\t%016llx\t%s\n", p[i].section,
                           (long long)p[i].n, (long long)p[i].d, p[i].dtype,
                           (unsigned long long)p[i].hash, p[i].path);
cleanup:
  return err;
}

/* ---------------- writing ---------------- */

static kd_err kd_ckpt_attr_num_(hid_t loc, const char *name, int is_int, const void *val) {
  return kd_h5_attr_num(loc, name, is_int ? H5T_STD_I64LE : H5T_IEEE_F64LE,
                        is_int ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, val);
}

static kd_err kd_ckpt_write_file_(const char *tmp, const kd_checkpoint_meta *meta,
                                  const kd_result *st) {
  kd_err err = KD_OK;
  hid_t f = -1, lcpl = -1;
  char hash[17], when[32], sum[17], *inputs = NULL;
  const int64_t fmt = KD_CHECKPOINT_FORMAT, nr = meta->n_ranks, ev = (int64_t)st->kernel_evals;
  time_t now = time(NULL);
  struct tm tmv;
  gmtime_r(&now, &tmv);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  kd_checkpoint_config_hash(meta->config_yaml, hash);
  KD_TRY(kd_h5_image_create(tmp, &f)); /* saved to tmp by kd_h5_image_save below */
  KD_H5C(lcpl = H5Pcreate(H5P_LINK_CREATE), KD_ERR_H5, "H5Pcreate");
  KD_H5C(H5Pset_create_intermediate_group(lcpl, 1), KD_ERR_H5, "H5Pset_create_intermediate_group");
  KD_TRY(kd_ckpt_attr_num_(f, "kdistill_checkpoint_format", 1, &fmt));
  KD_TRY(kd_h5_attr_str(f, "kdistill_version", KD_VERSION_STRING));
  KD_TRY(kd_h5_attr_str(f, "task", meta->task));
  KD_TRY(kd_h5_attr_str(f, "algorithm", meta->algorithm));
  KD_TRY(kd_h5_attr_str(f, "config_hash", hash));
  KD_TRY(kd_h5_attr_str(f, "config_yaml", meta->config_yaml));
  KD_TRY(kd_h5_attr_str(f, "created_utc", when));
  KD_TRY(kd_h5_attr_str(f, "reason", meta->reason));
  KD_TRY(kd_ckpt_inputs_text_(meta->inputs, meta->n_inputs, &inputs));
  KD_TRY(kd_h5_attr_str(f, "input_prints", inputs));
  kd_ckpt_checksum_(st, meta->iteration, sum);
  KD_TRY(kd_h5_attr_str(f, "state_checksum", sum));
  KD_TRY(kd_ckpt_attr_num_(f, "n_ranks", 1, &nr));
  KD_TRY(kd_ckpt_attr_num_(f, "iteration", 1, &meta->iteration));
  KD_TRY(kd_ckpt_attr_num_(f, "elapsed_seconds", 0, &st->seconds));
  KD_TRY(kd_ckpt_attr_num_(f, "kernel_evals", 1, &ev));
  for (int i = 0; i < st->n_datasets; i++) {
    const kd_result_dataset *x = &st->datasets[i];
    KD_TRY(kd_h5_dset(f, x->path, lcpl, x->is_int, x->rank, x->dims,
                      x->is_int ? (const void *)x->i64 : (const void *)x->f64));
  }
  if (st->n_trace > 0) {
    const int64_t nt = st->n_trace;
    KD_TRY(kd_h5_dset(f, "/metrics/trace/iteration", lcpl, 1, 1, &nt, st->trace_iter));
    KD_TRY(kd_h5_dset(f, "/metrics/trace/n_atoms", lcpl, 1, 1, &nt, st->trace_atoms));
    KD_TRY(kd_h5_dset(f, "/metrics/trace/mmd", lcpl, 0, 1, &nt, st->trace_mmd));
    KD_TRY(kd_h5_dset(f, "/metrics/trace/seconds", lcpl, 0, 1, &nt, st->trace_seconds));
  }
  H5Pclose(lcpl);
  lcpl = -1;
  KD_TRY(kd_h5_image_save(&f, tmp)); /* closes f exactly once */
cleanup:
  free(inputs);
  if (lcpl >= 0) H5Pclose(lcpl);
  if (f >= 0) H5Fclose(f);
  return err;
}

kd_err kd_checkpoint_write(MPI_Comm comm, const char *path, const kd_checkpoint_meta *meta,
                           const kd_result *state) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_publish pub;
  KD_TRY(kd_dist_agreed(comm, kd_publish_begin(comm, path, &pub)));
  if (pub.root) {
    kd_h5_quiet();
    lerr = kd_ckpt_write_file_(pub.tmp, meta, state);
  }
  KD_TRY(kd_publish_commit(&pub, lerr));
cleanup:
  return err;
}

/* ---------------- reading ---------------- */

static kd_err kd_ckpt_read_str_(hid_t f, const char *file, const char *name, char **out) {
  kd_err err = KD_OK;
  hid_t a = -1, t = -1, mt = -1;
  char *v = NULL;
  *out = NULL;
  KD_H5C(a = H5Aopen(f, name, H5P_DEFAULT), KD_ERR_FILE,
         "%s: not a kdistill checkpoint (no attribute %s)", file, name);
  KD_H5C(t = H5Aget_type(a), KD_ERR_FILE, "%s: attribute %s", file, name);
  KD_CHECK(H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0, KD_ERR_FILE,
           "%s: attribute %s is not a string", file, name);
  KD_H5C(mt = H5Tcopy(H5T_C_S1), KD_ERR_H5, "H5Tcopy");
  KD_H5C(H5Tset_size(mt, H5T_VARIABLE), KD_ERR_H5, "H5Tset_size");
  KD_H5C(H5Tset_cset(mt, H5Tget_cset(t)), KD_ERR_H5, "H5Tset_cset");
  KD_H5C(H5Aread(a, mt, &v), KD_ERR_FILE, "%s: cannot read attribute %s", file, name);
  {
    size_t n = strlen(v ? v : "") + 1;
    *out = malloc(n);
    KD_CHECK(*out, KD_ERR_MEM, "out of memory");
    memcpy(*out, v ? v : "", n);
  }
cleanup:
  if (v) H5free_memory(v);
  if (mt >= 0) H5Tclose(mt);
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  return err;
}

static kd_err kd_ckpt_read_num_(hid_t f, const char *file, const char *name, int is_int,
                                void *out) {
  kd_err err = KD_OK;
  hid_t a = -1;
  KD_H5C(a = H5Aopen(f, name, H5P_DEFAULT), KD_ERR_FILE,
         "%s: not a kdistill checkpoint (no attribute %s)", file, name);
  KD_H5C(H5Aread(a, is_int ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, out), KD_ERR_FILE,
         "%s: cannot read attribute %s", file, name);
cleanup:
  if (a >= 0) H5Aclose(a);
  return err;
}

/* Read dataset `path` (float or integer, rank 0..2) into st. */
static kd_err kd_ckpt_read_dset_(hid_t f, const char *file, const char *path, kd_result *st) {
  kd_err err = KD_OK;
  hid_t ds = -1, sp = -1, t = -1;
  hsize_t hd[2] = {0, 0};
  int64_t dims[2] = {0, 0}, count = 1;
  void *buf = NULL;
  KD_H5C(ds = H5Dopen2(f, path, H5P_DEFAULT), KD_ERR_FILE, "%s: cannot open %s", file, path);
  KD_H5C(sp = H5Dget_space(ds), KD_ERR_FILE, "%s: %s", file, path);
  int rank = H5Sget_simple_extent_ndims(sp);
  KD_CHECK(rank >= 0 && rank <= 2, KD_ERR_FILE, "%s: %s has rank %d", file, path, rank);
  if (rank > 0)
    KD_CHECK(H5Sget_simple_extent_dims(sp, hd, NULL) == rank, KD_ERR_FILE,
             "%s: cannot read the shape of %s", file, path);
  for (int i = 0; i < rank; i++) {
    KD_CHECK(hd[i] <= (hsize_t)INT64_MAX, KD_ERR_FILE, "%s: %s has a malformed shape", file, path);
    dims[i] = (int64_t)hd[i];
  }
  size_t bytes = 0;
  count = rank > 0 ? dims[0] : 1;
  KD_CHECK(kd_size_ok(count, rank > 1 ? dims[1] : 1, 8, &bytes), KD_ERR_FILE,
           "%s: %s declares more values than can be addressed", file, path);
  count = (int64_t)(bytes / 8);
  KD_H5C(t = H5Dget_type(ds), KD_ERR_FILE, "%s: %s", file, path);
  const H5T_class_t cls = H5Tget_class(t);
  KD_CHECK((cls == H5T_INTEGER || cls == H5T_FLOAT) && H5Tget_size(t) == 8, KD_ERR_FILE,
           "%s: %s is not a 64-bit number array", file, path);
  const int is_int = cls == H5T_INTEGER;
  /* kdistill stores every state array in full, uncompressed: a dataset whose declared size is not
   * what the file holds (a crafted huge shape, a truncated file) is refused before any allocation
   */
  KD_CHECK(H5Dget_storage_size(ds) == (hsize_t)bytes, KD_ERR_FILE,
           "%s: %s declares %lld values but the file stores %llu bytes of them (damaged "
           "checkpoint)",
           file, path, (long long)count, (unsigned long long)H5Dget_storage_size(ds));
  buf = malloc(bytes ? bytes : 1);
  KD_CHECK(buf, KD_ERR_MEM, "%s: cannot allocate %zu bytes for %s", file, bytes, path);
  if (count > 0)
    KD_H5C(H5Dread(ds, is_int ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                   buf),
           KD_ERR_FILE, "%s: cannot read %s (truncated file?)", file, path);
  if (is_int)
    KD_TRY(kd_result_add_i64(st, path, rank, dims, buf));
  else
    KD_TRY(kd_result_add_f64(st, path, rank, dims, buf));
cleanup:
  free(buf);
  if (t >= 0) H5Tclose(t);
  if (sp >= 0) H5Sclose(sp);
  if (ds >= 0) H5Dclose(ds);
  return err;
}

typedef struct {
  hid_t f;
  const char *file;
  kd_result *st;
  kd_err err;
} kd_ckpt_visit_;

static herr_t kd_ckpt_visit_cb_(hid_t g, const char *name, const H5L_info_t *info, void *op) {
  kd_ckpt_visit_ *v = op;
  char path[1024];
  (void)info;
  hid_t o = H5Oopen(g, name, H5P_DEFAULT);
  if (o < 0) {
    v->err =
        kd_err_set(KD_ERR_FILE, __FILE__, __LINE__, "%s: cannot open /state/%s", v->file, name);
    return -1;
  }
  const int is_ds = H5Iget_type(o) == H5I_DATASET;
  H5Oclose(o);
  if (!is_ds) return 0;
  snprintf(path, sizeof path, "/state/%s", name);
  v->err = kd_ckpt_read_dset_(v->f, v->file, path, v->st);
  return v->err ? -1 : 0;
}

static kd_err kd_ckpt_read_trace_(hid_t f, const char *file, kd_result *st) {
  kd_err err = KD_OK;
  kd_result tmp = KD_RESULT_INIT;
  if (H5Lexists(f, "/metrics", H5P_DEFAULT) <= 0 ||
      H5Lexists(f, "/metrics/trace", H5P_DEFAULT) <= 0)
    goto cleanup;
  KD_TRY(kd_ckpt_read_dset_(f, file, "/metrics/trace/iteration", &tmp));
  KD_TRY(kd_ckpt_read_dset_(f, file, "/metrics/trace/n_atoms", &tmp));
  KD_TRY(kd_ckpt_read_dset_(f, file, "/metrics/trace/mmd", &tmp));
  KD_TRY(kd_ckpt_read_dset_(f, file, "/metrics/trace/seconds", &tmp));
  {
    const kd_result_dataset *it = &tmp.datasets[0], *na = &tmp.datasets[1], *mm = &tmp.datasets[2],
                            *se = &tmp.datasets[3];
    const int64_t nt = it->dims[0];
    KD_CHECK(it->is_int && na->is_int && !mm->is_int && !se->is_int && it->rank == 1 &&
                 na->dims[0] == nt && mm->dims[0] == nt && se->dims[0] == nt,
             KD_ERR_FILE, "%s: malformed /metrics/trace", file);
    for (int64_t i = 0; i < nt; i++)
      KD_TRY(kd_result_trace_push(st, it->i64[i], na->i64[i], mm->f64[i], se->f64[i]));
  }
cleanup:
  kd_result_free(&tmp);
  return err;
}

static int kd_ckpt_major_minor_(const char *v, int *maj, int *min) {
  return sscanf(v, "%d.%d", maj, min) == 2;
}

/* Rank 0: open, check and read the whole checkpoint. */
static kd_err kd_ckpt_read_root_(const char *path, const char *task, const char *algorithm,
                                 const char *config_yaml, kd_result *st, int64_t *iteration,
                                 char **inputs) {
  kd_err err = KD_OK;
  hid_t f = -1;
  char *ver = NULL, *tk = NULL, *al = NULL, *hs = NULL, *yaml = NULL;
  char hash[17], diff[512];
  int64_t fmt = 0, ev = 0;
  int a1, a2, b1, b2;
  kd_h5_quiet();
  KD_TRY(kd_path_check_input(path, "checkpoint"));     /* not a FIFO, directory or device */
  KD_TRY(kd_path_claim(path, "resume checkpoint", 0)); /* only run.checkpoint_path may be it */
  KD_TRY(kd_h5_verify(path)); /* a damaged file never reaches the HDF5 parser */
  KD_H5C(f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), KD_ERR_FILE,
         "%s: not a readable HDF5 checkpoint (truncated or corrupt?)", path);
  KD_TRY(kd_ckpt_read_num_(f, path, "kdistill_checkpoint_format", 1, &fmt));
  KD_CHECK(fmt != 1, KD_ERR_FILE,
           "%s: written by an older kdistill (checkpoint format 1, without the fingerprints of "
           "the input files), so it cannot tell whether the inputs changed; rerun without "
           "--resume",
           path);
  KD_CHECK(fmt == KD_CHECKPOINT_FORMAT, KD_ERR_FILE,
           "%s: checkpoint format %lld, this kdistill reads format %d", path, (long long)fmt,
           KD_CHECKPOINT_FORMAT);
  KD_TRY(kd_ckpt_read_str_(f, path, "kdistill_version", &ver));
  KD_CHECK(kd_ckpt_major_minor_(ver, &a1, &a2) &&
               kd_ckpt_major_minor_(KD_VERSION_STRING, &b1, &b2) && a1 == b1 && a2 == b2,
           KD_ERR_FILE, "%s: written by kdistill %s, this is %s (major.minor must match)", path,
           ver, KD_VERSION_STRING);
  KD_TRY(kd_ckpt_read_str_(f, path, "task", &tk));
  KD_CHECK(!strcmp(tk, task), KD_ERR_CONFIG,
           "%s: written for a different configuration (task %s in the checkpoint, %s now)", path,
           tk, task);
  KD_TRY(kd_ckpt_read_str_(f, path, "algorithm", &al));
  KD_CHECK(!strcmp(al, algorithm), KD_ERR_CONFIG,
           "%s: written for a different configuration (algorithm.name: %s in the checkpoint, %s "
           "now)",
           path, al, algorithm);
  KD_TRY(kd_ckpt_read_str_(f, path, "config_hash", &hs));
  KD_TRY(kd_ckpt_read_str_(f, path, "config_yaml", &yaml));
  kd_checkpoint_config_hash(config_yaml, hash);
  if (strcmp(hs, hash) != 0) {
    if (kd_checkpoint_config_diff(yaml, config_yaml, diff, sizeof diff))
      KD_FAIL(KD_ERR_CONFIG, "%s: written for a different configuration (%s)", path, diff);
    KD_FAIL(KD_ERR_CONFIG, "%s: written for a different configuration (config hash %s, now %s)",
            path, hs, hash);
  }
  KD_TRY(kd_ckpt_read_str_(f, path, "input_prints", inputs));
  KD_TRY(kd_ckpt_read_num_(f, path, "iteration", 1, iteration));
  KD_TRY(kd_ckpt_read_num_(f, path, "elapsed_seconds", 0, &st->seconds));
  KD_TRY(kd_ckpt_read_num_(f, path, "kernel_evals", 1, &ev));
  st->kernel_evals = (uint64_t)ev;
  KD_CHECK(H5Lexists(f, "/state", H5P_DEFAULT) > 0, KD_ERR_FILE, "%s: no /state group", path);
  {
    kd_ckpt_visit_ v = {f, path, st, KD_OK};
    hid_t g = H5Gopen2(f, "/state", H5P_DEFAULT);
    KD_H5C(g, KD_ERR_FILE, "%s: cannot open /state", path);
    herr_t r = H5Lvisit(g, H5_INDEX_NAME, H5_ITER_INC, kd_ckpt_visit_cb_, &v);
    H5Gclose(g);
    KD_TRY(v.err);
    KD_H5C(r, KD_ERR_FILE, "%s: cannot list /state (truncated file?)", path);
  }
  KD_TRY(kd_ckpt_read_trace_(f, path, st));
  KD_CHECK(*iteration >= 0 && st->seconds >= 0 && isfinite(st->seconds), KD_ERR_FILE,
           "%s: iteration %lld / elapsed %g s out of range (damaged checkpoint)", path,
           (long long)*iteration, st->seconds);
  {
    char want[17];
    free(hs);
    hs = NULL;
    KD_TRY(kd_ckpt_read_str_(f, path, "state_checksum", &hs));
    kd_ckpt_checksum_(st, *iteration, want);
    /* the expected value is not printed: it would only help to forge a state */
    KD_CHECK(!strcmp(hs, want), KD_ERR_FILE,
             "%s: the state checksum does not match the state: the checkpoint is damaged", path);
  }
cleanup:
  if (f >= 0) H5Fclose(f);
  free(ver);
  free(tk);
  free(al);
  free(hs);
  free(yaml);
  return err;
}

/* ---- packing a state kd_result into one byte buffer (for the broadcast) ---- */
typedef struct {
  char *b;
  size_t n, cap;
  int fail;
} kd_ckpt_buf_;

static void kd_ckpt_put_(kd_ckpt_buf_ *w, const void *p, size_t n) {
  if (w->fail) return;
  if (w->n + n > w->cap) {
    size_t nc = w->cap ? 2 * w->cap : 4096;
    while (nc < w->n + n) nc *= 2;
    char *q = realloc(w->b, nc);
    if (!q) {
      w->fail = 1;
      return;
    }
    w->b = q;
    w->cap = nc;
  }
  if (n) memcpy(w->b + w->n, p, n);
  w->n += n;
}

static void kd_ckpt_pack_(kd_ckpt_buf_ *w, const kd_result *st, int64_t iteration) {
  int64_t hdr[4] = {iteration, (int64_t)st->kernel_evals, st->n_trace, st->n_datasets};
  kd_ckpt_put_(w, hdr, sizeof hdr);
  kd_ckpt_put_(w, &st->seconds, sizeof(double));
  kd_ckpt_put_(w, st->trace_iter, 8 * (size_t)st->n_trace);
  kd_ckpt_put_(w, st->trace_atoms, 8 * (size_t)st->n_trace);
  kd_ckpt_put_(w, st->trace_mmd, 8 * (size_t)st->n_trace);
  kd_ckpt_put_(w, st->trace_seconds, 8 * (size_t)st->n_trace);
  for (int i = 0; i < st->n_datasets; i++) {
    const kd_result_dataset *x = &st->datasets[i];
    int64_t count = 1;
    for (int r = 0; r < x->rank; r++) count *= x->dims[r];
    int64_t d[5] = {(int64_t)strlen(x->path), x->is_int, x->rank, x->dims[0], x->dims[1]};
    kd_ckpt_put_(w, d, sizeof d);
    kd_ckpt_put_(w, x->path, (size_t)d[0]);
    kd_ckpt_put_(w, x->is_int ? (const void *)x->i64 : (const void *)x->f64, 8 * (size_t)count);
  }
}

static kd_err kd_ckpt_unpack_(const char *b, size_t n, kd_result *st, int64_t *iteration) {
  kd_err err = KD_OK;
  size_t at = 0;
  char *path = NULL;
  int64_t hdr[4];
#define KD_CKPT_GET_(dst, len)                                                    \
  do {                                                                            \
    KD_CHECK(at + (len) <= n, KD_ERR_INTERNAL, "checkpoint: short state buffer"); \
    memcpy((dst), b + at, (len));                                                 \
    at += (len);                                                                  \
  } while (0)
  KD_CKPT_GET_(hdr, sizeof hdr);
  *iteration = hdr[0];
  st->kernel_evals = (uint64_t)hdr[1];
  KD_CKPT_GET_(&st->seconds, sizeof(double));
  {
    const int64_t nt = hdr[2];
    const char *ti = b + at, *ta = ti + 8 * nt, *tm = ta + 8 * nt, *ts = tm + 8 * nt;
    KD_CHECK(at + 32 * (size_t)nt <= n, KD_ERR_INTERNAL, "checkpoint: short state buffer");
    for (int64_t i = 0; i < nt; i++) {
      int64_t a, c;
      double m, s;
      memcpy(&a, ti + 8 * i, 8);
      memcpy(&c, ta + 8 * i, 8);
      memcpy(&m, tm + 8 * i, 8);
      memcpy(&s, ts + 8 * i, 8);
      KD_TRY(kd_result_trace_push(st, a, c, m, s));
    }
    at += 32 * (size_t)nt;
  }
  for (int64_t k = 0; k < hdr[3]; k++) {
    int64_t d[5], count = 1;
    KD_CKPT_GET_(d, sizeof d);
    KD_ALLOC(path, d[0] + 1);
    KD_CKPT_GET_(path, (size_t)d[0]);
    for (int r = 0; r < d[2]; r++) count *= d[3 + r];
    KD_CHECK(at + 8 * (size_t)count <= n, KD_ERR_INTERNAL, "checkpoint: short state buffer");
    {
      void *data = malloc(8 * (size_t)(count > 0 ? count : 1));
      KD_CHECK(data, KD_ERR_MEM, "checkpoint: cannot allocate %s", path);
      memcpy(data, b + at, 8 * (size_t)count);
      at += 8 * (size_t)count;
      err = d[1] ? kd_result_add_i64(st, path, (int)d[2], d + 3, data)
                 : kd_result_add_f64(st, path, (int)d[2], d + 3, data);
      free(data);
      KD_TRY(err);
    }
    free(path);
    path = NULL;
  }
#undef KD_CKPT_GET_
cleanup:
  free(path);
  return err;
}

kd_err kd_checkpoint_read(MPI_Comm comm, const char *path, const char *task, const char *algorithm,
                          const char *config_yaml, kd_result *state, int64_t *iteration,
                          char **inputs) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_ckpt_buf_ w = {NULL, 0, 0, 0};
  int64_t nbytes = 0;
  const int root = kd_dist_rank(comm) == 0;
  *inputs = NULL;
  if (root) {
    lerr = kd_ckpt_read_root_(path, task, algorithm, config_yaml, state, iteration, inputs);
    if (!lerr) {
      const int64_t ni = (int64_t)strlen(*inputs);
      kd_ckpt_put_(&w, &ni, sizeof ni);
      kd_ckpt_put_(&w, *inputs, (size_t)ni);
      kd_ckpt_pack_(&w, state, *iteration);
      if (w.fail) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "%s: out of memory", path);
    }
    nbytes = (int64_t)w.n;
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_bcast(comm, &nbytes, (int64_t)sizeof nbytes, 0));
  if (!root) {
    w.b = malloc((size_t)(nbytes > 0 ? nbytes : 1));
    lerr = w.b ? KD_OK : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "%s: out of memory", path);
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_bcast(comm, w.b, nbytes, 0));
  if (!root) {
    int64_t ni = 0;
    lerr = nbytes >= 8
               ? KD_OK
               : kd_err_set(KD_ERR_INTERNAL, __FILE__, __LINE__, "checkpoint: short buffer");
    if (!lerr) memcpy(&ni, w.b, sizeof ni);
    if (!lerr && (ni < 0 || ni > nbytes - 8))
      lerr = kd_err_set(KD_ERR_INTERNAL, __FILE__, __LINE__, "checkpoint: short buffer");
    if (!lerr && !(*inputs = malloc((size_t)ni + 1)))
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "%s: out of memory", path);
    if (!lerr) {
      memcpy(*inputs, w.b + 8, (size_t)ni);
      (*inputs)[ni] = '\0';
      lerr = kd_ckpt_unpack_(w.b + 8 + ni, (size_t)(nbytes - 8 - ni), state, iteration);
    }
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
cleanup:
  if (err) {
    free(*inputs);
    *inputs = NULL;
  }
  free(w.b);
  return err;
}
