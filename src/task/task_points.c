/* task_points.c - the point-set and measure sections of a task's configuration: generated
 * measures (uniform_box, gaussian, mixtures, ...), files (hdf5, csv, npy, npz, with column
 * selections), in-memory arrays (kd_data_array), lazily generated rows, and the per-coordinate
 * vector keys of a measure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "core/mem.h"
#include "io/io_impl.h"
#include "io/paths.h"
#include "pointset/pointset_io.h"
#include "task/task_impl.h"

kd_err kd_task_read_measure(const kd_task_ctx *ctx, const char *section, kd_measure *m) {
  return kd_task_read_measure_d(ctx, section, 0, m);
}

kd_err kd_task_read_measure_d(const kd_task_ctx *ctx, const char *section, int d_default,
                              kd_measure *m) {
  const kd_section s = {ctx->cfg, section, ctx->comm, ctx->validate_only};
  return kd_measure_read(&s, d_default, m);
}

/* ---------------------------------------------------------- point sets */
/* {type: memory, name: NAME}: an array the caller registered (kd_job_opts.arrays); validate_only
 * reports its global shape without building the set. Collective. */
static kd_err kd_task_read_memory_(const kd_task_ctx *ctx, const char *section, char *what,
                                   size_t what_len, kd_pointset **ps, int64_t *n, int *d) {
  kd_err err = KD_OK;
  char key[256], where[512];
  const char *name = NULL;
  const kd_data_array *a = NULL;
  kd_task_key(key, sizeof key, section, "name");
  KD_TRY(kd_config_get_str(ctx->cfg, key, NULL, NULL, 1, &name));
  for (int i = 0; i < ctx->n_arrays && !a; i++)
    if (ctx->arrays[i].name && !strcmp(ctx->arrays[i].name, name)) a = &ctx->arrays[i];
  KD_CHECK(a, KD_ERR_CONFIG, "%s: %s: no in-memory array named '%s' was passed to this run%s",
           kd_config_where(ctx->cfg, key, where, sizeof where), key, name,
           ctx->n_arrays ? "" : " (memory inputs need the library API, e.g. Python)");
  snprintf(what, what_len, "%s (array %s)", section, name);
  if (ctx->validate_only) {
    int64_t nn = a->n_local;
    KD_TRY(kd_dist_sum_i64(ctx->comm, &nn, 1));
    *n = nn;
    *d = a->d;
  } else {
    KD_TRY(kd_pointset_from_array(ctx->comm, a, what, ps));
  }
cleanup:
  return err;
}

/* SECTION.{header, delimiter, columns} of a CSV input; reads it (or only checks it). */
static kd_err kd_task_read_csv_(const kd_task_ctx *ctx, const char *section, const char *path,
                                int check_only, kd_pointset **ps, int64_t *n, int *d) {
  kd_err err = KD_OK;
  kd_config *cfg = ctx->cfg;
  char key[256], sub[300], where[512];
  const char *h = NULL, *dl = NULL;
  kd_csv_opts o;
  int *cols = NULL;
  const char **names = NULL;
  memset(&o, 0, sizeof o);
  o.section = section;
  kd_task_key(key, sizeof key, section, "header");
  KD_TRY(kd_config_get_str(cfg, key, "auto", "auto|true|false", 0, &h));
  o.header = !strcmp(h, "auto") ? -1 : !strcmp(h, "true");
  kd_task_key(key, sizeof key, section, "delimiter");
  KD_TRY(kd_config_get_str(cfg, key, "auto", "auto|comma|semicolon|tab|whitespace", 0, &dl));
  o.delim = !strcmp(dl, "comma")        ? ','
            : !strcmp(dl, "semicolon")  ? ';'
            : !strcmp(dl, "tab")        ? '\t'
            : !strcmp(dl, "whitespace") ? ' '
                                        : 0;
  kd_task_key(key, sizeof key, section, "columns");
  if (kd_config_has(cfg, key)) {
    const int nc = kd_config_count(cfg, key) > 0 ? kd_config_count(cfg, key) : 1;
    KD_ALLOC(cols, nc);
    KD_ALLOC(names, nc);
    for (int i = 0; i < nc; i++) {
      const char *v = NULL;
      char *end = NULL;
      if (kd_config_count(cfg, key) > 0)
        snprintf(sub, sizeof sub, "%s.%d", key, i);
      else
        snprintf(sub, sizeof sub, "%s", key);
      KD_TRY(kd_config_get_str(cfg, sub, NULL, NULL, 1, &v));
      long c = strtol(v, &end, 10);
      if (end != v && *end == '\0') {
        KD_CHECK(c >= 0 && c < 1000000, KD_ERR_CONFIG,
                 "%s: %s: column %ld: expected a 0-based index or a header name",
                 kd_config_where(cfg, sub, where, sizeof where), sub, c);
        cols[i] = (int)c;
      } else {
        names[i] = v;
      }
    }
    o.ncols = nc;
    o.cols = cols;
    o.col_names = names;
  }
  if (check_only)
    KD_TRY(kd_csv_check(ctx->comm, path, &o, n, d));
  else
    KD_TRY(kd_pointset_read_csv_opts(ctx->comm, path, &o, ps));
cleanup:
  free(cols);
  free(names);
  return err;
}

/* A relative input path not found in the working directory is looked for next to the config
 * file (kd_path_resolve_input); rank 0 decides for every rank. Collective. */
static kd_err kd_task_resolve_path_(const kd_task_ctx *ctx, const char *key, const char *path,
                                    char *out, int len) {
  kd_err err = KD_OK, lerr = KD_OK;
  int moved = 0;
  char tried[8300];
  if (kd_dist_rank(ctx->comm) == 0 && strlen(path) >= (size_t)len) {
    /* refused, never cut: a shortened path could name another, existing file */
    lerr = kd_err_set(KD_ERR_CONFIG, __FILE__, __LINE__,
                      "%s: %.60s...: the path is %zu characters long; at most %d are accepted", key,
                      path, strlen(path), len - 1);
  } else if (kd_dist_rank(ctx->comm) == 0) {
    moved = kd_path_resolve_input(path, kd_config_name(ctx->cfg), out, (size_t)len);
    if (kd_path_input_missing(out, kd_config_name(ctx->cfg), tried, sizeof tried))
      lerr = kd_err_set(KD_ERR_FILE, __FILE__, __LINE__,
                        "%s: %s: cannot open file: no such file (looked for %s)", key, path, tried);
  }
  KD_TRY(kd_dist_agreed(ctx->comm, lerr));
  KD_TRY(kd_dist_bcast(ctx->comm, out, len, 0));
  if (moved)
    kd_log_info("%s: '%s' is not in the working directory; using %s (next to the config)", key,
                path, out);
cleanup:
  return err;
}

/* <section>.dataset of an HDF5 input: as given, else "data" if the file has it, else the file's
 * only 2-D numeric dataset (logged); the choice is recorded as the key's value, so the resolved
 * configuration (--print-defaults, the output's config_yaml) names it. Hints name the key, or
 * --dataset for a command-line run (`kdistill thin X.h5`). Collective. */
static kd_err kd_task_h5_dataset_(const kd_task_ctx *ctx, const char *section, const char *path,
                                  int ext, const char **dset) {
  kd_err err = KD_OK;
  char key[256], hint[300], chosen[1024];
  const char *want = NULL;
  kd_task_key(key, sizeof key, section, "dataset");
  if (!strcmp(kd_config_name(ctx->cfg), KD_JOB_COMMAND_LINE))
    snprintf(hint, sizeof hint, "use --dataset NAME");
  else
    snprintf(hint, sizeof hint, "set %s", key);
  if (kd_config_has(ctx->cfg, key)) KD_TRY(kd_config_get_str(ctx->cfg, key, NULL, NULL, 1, &want));
  KD_TRY(kd_h5_pick_dataset(ctx->comm, path, want, hint, section, ext, chosen, sizeof chosen));
  KD_TRY(kd_config_get_str(ctx->cfg, key, chosen, NULL, 0, dset));
  if (!want && strcmp(chosen, "data"))
    kd_log_info("%s: %s: using dataset '/%s', the file's only 2-D numeric dataset (%s to choose)",
                section, path, chosen, hint);
cleanup:
  return err;
}

/* SECTION.datasets: a list of names (or one), at most KD_H5_MAX_DATASETS, with SECTION.dataset
 * not set as well. Borrowed from the config. */
static kd_err kd_task_dataset_list_(kd_config *cfg, const char *section, const char **names,
                                    int *k) {
  kd_err err = KD_OK;
  char key[256], dkey[256], sub[300], where[512];
  kd_task_key(key, sizeof key, section, "dataset");
  kd_task_key(dkey, sizeof dkey, section, "datasets");
  KD_CHECK(!kd_config_has(cfg, key), KD_ERR_CONFIG,
           "%s: %s and %s are both set; give one dataset or a list of them",
           kd_config_where(cfg, dkey, where, sizeof where), key, dkey);
  *k = kd_config_count(cfg, dkey) > 0 ? kd_config_count(cfg, dkey) : 1;
  KD_CHECK(*k <= KD_H5_MAX_DATASETS, KD_ERR_CONFIG, "%s: %s: %d datasets; at most %d",
           kd_config_where(cfg, dkey, where, sizeof where), dkey, *k, KD_H5_MAX_DATASETS);
  for (int i = 0; i < *k; i++) {
    if (kd_config_count(cfg, dkey) > 0)
      snprintf(sub, sizeof sub, "%s.%d", dkey, i);
    else
      snprintf(sub, sizeof sub, "%s", dkey);
    KD_TRY(kd_config_get_str(cfg, sub, NULL, NULL, 1, &names[i]));
  }
cleanup:
  return err;
}

/* The point sets parts[k] (same rows, same blocks) side by side as the columns of *out. */
static kd_err kd_task_join_columns_(kd_pointset *const *parts, int k, kd_pointset **out) {
  kd_err err = KD_OK;
  kd_pointset *ps = NULL;
  double *rows = NULL;
  int d = 0;
  for (int i = 0; i < k; i++) d += kd_pointset_dim(parts[i]);
  KD_TRY(kd_pointset_create(kd_pointset_comm(parts[0]), kd_pointset_n_global(parts[0]), d, &ps));
  kd_pointset_get_rows(ps, &rows);
  const kd_lidx nl = kd_pointset_n_local(ps);
  for (int i = 0, c0 = 0; i < k; c0 += kd_pointset_dim(parts[i]), i++) {
    const int di = kd_pointset_dim(parts[i]);
    const double *x = kd_pointset_rows_const(parts[i]);
    for (kd_lidx r = 0; r < nl; r++)
      memcpy(rows + (size_t)r * d + c0, x + (size_t)r * di, sizeof(double) * (size_t)di);
  }
  kd_pointset_restore_rows(ps, &rows);
  *out = ps;
  ps = NULL;
cleanup:
  kd_pointset_destroy(&ps);
  return err;
}

/* An .npy file or an .npz array: SECTION.dataset (npz: the array; default the only one), or
 * SECTION.datasets (npz: several arrays as columns, equal rows), SECTION.flatten (the leading
 * dimensions that index the rows). Reads it (or only checks it). Collective. */
static kd_err kd_task_read_npy_(const kd_task_ctx *ctx, const char *section, const char *path,
                                int npz, kd_pointset **ps, int64_t *n, int *d) {
  kd_err err = KD_OK;
  kd_config *cfg = ctx->cfg;
  char key[256], where[512];
  const char *names[KD_H5_MAX_DATASETS] = {""};
  kd_pointset *parts[KD_H5_MAX_DATASETS] = {NULL};
  int64_t flatten = 0, ni = 0;
  int k = 1, di = 0;
  char hint[300];
  if (!strcmp(kd_config_name(cfg), KD_JOB_COMMAND_LINE))
    snprintf(hint, sizeof hint, "use --dataset with one of");
  else
    snprintf(hint, sizeof hint, "set %s.dataset to one of", section);
  kd_task_key(key, sizeof key, section, "flatten");
  if (kd_config_has(cfg, key)) KD_TRY(kd_config_get_int(cfg, key, 1, 1, 7, &flatten));
  kd_task_key(key, sizeof key, section, "datasets");
  if (npz && kd_config_has(cfg, key)) {
    KD_TRY(kd_task_dataset_list_(cfg, section, names, &k));
  } else if (npz) {
    kd_task_key(key, sizeof key, section, "dataset");
    KD_TRY(kd_config_get_str(cfg, key, "", NULL, 0, &names[0]));
  }
  *d = 0;
  for (int i = 0; i < k; i++) {
    if (ctx->validate_only) {
      KD_TRY(kd_npy_check(ctx->comm, path, npz, names[i], hint, (int)flatten, &ni, &di));
    } else {
      KD_TRY(
          kd_pointset_read_npy_sec(ctx->comm, path, npz, names[i], hint, (int)flatten, &parts[i]));
      ni = kd_pointset_n_global(parts[i]);
      di = kd_pointset_dim(parts[i]);
    }
    kd_task_key(key, sizeof key, section, "datasets");
    KD_CHECK(i == 0 || ni == *n, KD_ERR_INPUT,
             "%s: %s: array '%s' has %lld rows, '%s' has %lld: the arrays of %s must have the "
             "same rows",
             kd_config_where(cfg, key, where, sizeof where), path, names[i], (long long)ni,
             names[0], (long long)*n, key);
    *n = ni;
    *d += di;
  }
  if (!ctx->validate_only && k == 1) {
    *ps = parts[0];
    parts[0] = NULL;
  } else if (!ctx->validate_only) {
    KD_TRY(kd_task_join_columns_(parts, k, ps));
  }
cleanup:
  for (int i = 0; i < k; i++) kd_pointset_destroy(&parts[i]);
  return err;
}

/* An HDF5 input: SECTION.dataset (one dataset, kd_task_h5_dataset_), or SECTION.datasets (a
 * list: their columns side by side) and/or SECTION.flatten (the leading dimensions that index the
 * rows, default 1); SECTION.allow_external. Reads it (or only checks it). Collective. */
static kd_err kd_task_read_h5_(const kd_task_ctx *ctx, const char *section, const char *path,
                               kd_pointset **ps, int64_t *n, int *d) {
  kd_err err = KD_OK;
  kd_config *cfg = ctx->cfg;
  char key[256], dkey[256], fkey[256];
  const char *names[KD_H5_MAX_DATASETS], *dset = NULL;
  int ext = 0; /* values stored outside the named file are read only when asked for */
  int64_t flatten = 1;
  kd_task_key(key, sizeof key, section, "allow_external");
  KD_TRY(kd_config_get_bool(cfg, key, 0, &ext));
  kd_task_key(dkey, sizeof dkey, section, "datasets");
  kd_task_key(fkey, sizeof fkey, section, "flatten");
  if (!kd_config_has(cfg, dkey) && !kd_config_has(cfg, fkey)) { /* one n x d (or n) dataset */
    KD_TRY(kd_task_h5_dataset_(ctx, section, path, ext, &dset));
    if (ctx->validate_only)
      KD_TRY(kd_h5_check_dataset(ctx->comm, path, dset, section, ext, n, d));
    else
      KD_TRY(kd_pointset_read_h5_sec(ctx->comm, path, dset, section, ext, ps));
    goto cleanup;
  }
  KD_TRY(kd_config_get_int(cfg, fkey, 1, 1, 7, &flatten));
  int k = 1;
  if (kd_config_has(cfg, dkey)) {
    KD_TRY(kd_task_dataset_list_(cfg, section, names, &k));
  } else {
    KD_TRY(kd_task_h5_dataset_(ctx, section, path, ext, &names[0]));
  }
  if (ctx->validate_only)
    KD_TRY(kd_h5_check_cols(ctx->comm, path, names, k, (int)flatten, section, ext, n, d));
  else
    KD_TRY(kd_pointset_read_h5_cols(ctx->comm, path, names, k, (int)flatten, section, ext, ps));
cleanup:
  return err;
}

/* The fingerprint of an input point set just read (pointset_io.h), recorded in the job's
 * checkpoint session: a checkpoint stores it, a resume compares it (kd_task_ckpt_open). Only for
 * the job's own configuration (a sweep point neither resumes nor writes the job's inputs).
 * Collective (one sum). */
static kd_err kd_task_print_input_(const kd_task_ctx *ctx, const char *section, const char *path,
                                   const kd_pointset *ps) {
  kd_err err = KD_OK;
  kd_checkpoint_session *ss = kd_checkpoint_session_get();
  kd_input_print p;
  if (!ss || ss->cfg != ctx->cfg || ctx->validate_only) return KD_OK;
  const double t0 = kd_dist_wtime();
  KD_TRY(kd_pointset_print(ps, &p));
  snprintf(p.section, sizeof p.section, "%s", section);
  snprintf(p.path, sizeof p.path, "%s", path);
  KD_CHECK(ss->n_inputs < KD_MAX_INPUT_PRINTS, KD_ERR_UNSUPPORTED,
           "%s: more than %d input point sets in one run", section, KD_MAX_INPUT_PRINTS);
  ss->inputs[ss->n_inputs++] = p;
  kd_log_verbose("%s: fingerprint %016llx of %lld x %lld %s in %.3f s", section,
                 (unsigned long long)p.hash, (long long)p.n, (long long)p.d, p.dtype,
                 kd_dist_wtime() - t0);
cleanup:
  return err;
}

kd_err kd_task_read_pointset(const kd_task_ctx *ctx, const char *section, kd_pointset **out,
                             kd_gidx *nout, int *dout) {
  return kd_task_read_pointset_lazy(ctx, section, out, nout, dout, NULL);
}

kd_err kd_task_read_pointset_lazy(const kd_task_ctx *ctx, const char *section, kd_pointset **out,
                                  kd_gidx *nout, int *dout, int *lazy) {
  kd_err err = KD_OK;
  if (lazy) *lazy = 0;
  kd_config *cfg = ctx->cfg;
  char key[256], what[5200], where[512], rpath[4096];
  const char *type = NULL, *path = NULL;
  kd_measure m;
  kd_pointset *ps = NULL;
  int64_t n = 0, seed = 0;
  int d = 0;
  const double t0 = kd_dist_wtime();
  memset(&m, 0, sizeof m);
  *out = NULL;
  kd_task_key(key, sizeof key, section, "type");
  KD_TRY(
      kd_config_get_str(cfg, key, NULL, KD_MEASURE_CHOICES "|hdf5|csv|npy|npz|memory", 1, &type));
  if (!strcmp(type, "memory")) {
    KD_TRY(kd_task_read_memory_(ctx, section, what, sizeof what, &ps, &n, &d));
  } else if (!strcmp(type, "npy") || !strcmp(type, "npz")) {
    const int npz = !strcmp(type, "npz");
    kd_task_key(key, sizeof key, section, "path");
    KD_TRY(kd_config_get_str(cfg, key, NULL, NULL, 1, &path));
    KD_TRY(kd_task_resolve_path_(ctx, key, path, rpath, sizeof rpath));
    path = rpath;
    snprintf(what, sizeof what, "%s (%s)", section, path);
    KD_TRY(kd_task_read_npy_(ctx, section, path, npz, &ps, &n, &d));
  } else if (!strcmp(type, "hdf5") || !strcmp(type, "csv")) {
    kd_task_key(key, sizeof key, section, "path");
    KD_TRY(kd_config_get_str(cfg, key, NULL, NULL, 1, &path));
    KD_TRY(kd_task_resolve_path_(ctx, key, path, rpath, sizeof rpath));
    path = rpath;
    snprintf(what, sizeof what, "%s (%s)", section, path);
    if (!strcmp(type, "hdf5")) {
      KD_TRY(kd_task_read_h5_(ctx, section, path, &ps, &n, &d));
    } else {
      KD_TRY(kd_task_read_csv_(ctx, section, path, ctx->validate_only, &ps, &n, &d));
    }
    KD_CHECK(ps || ctx->validate_only, KD_ERR_INTERNAL, "no point set");
  } else {
    KD_TRY(kd_task_read_measure(ctx, section, &m));
    d = m.d;
    snprintf(what, sizeof what, "%s (%s)", section, type);
    if (m.type == KD_MEASURE_GRID) {
      double total = pow((double)m.grid_n, (double)d);
      kd_task_key(key, sizeof key, section, "grid_n");
      KD_CHECK(total <= 1e12, KD_ERR_CONFIG, "%s: %s: grid_n^d = %g points is too many",
               kd_config_where(cfg, key, where, sizeof where), key, total);
      n = (int64_t)llround(total);
    } else {
      kd_task_key(key, sizeof key, section, "n");
      KD_TRY(kd_config_get_int(cfg, key, 1000, 1, 1000000000000LL, &n));
    }
    kd_task_key(key, sizeof key, section, "seed");
    KD_TRY(kd_config_get_int(cfg, key, (int64_t)ctx->seed, 0, INT64_MAX, &seed));
    int lz = 0;
    if (lazy) {
      kd_task_key(key, sizeof key, section, "lazy");
      KD_TRY(kd_config_get_bool(cfg, key, 0, &lz));
      *lazy = lz;
      char sk[256];
      kd_task_key(sk, sizeof sk, section, "score");
      KD_CHECK(!lz || !kd_config_has(cfg, sk), KD_ERR_CONFIG,
               "%s: %s: true: scores are evaluated at stored rows; set lazy: false to use %s",
               kd_config_where(cfg, key, where, sizeof where), key, sk);
    }
    if (!ctx->validate_only) {
      if (lz)
        KD_TRY(kd_pointset_generate_lazy(ctx->comm, &m, n, (uint64_t)seed, &ps));
      else
        KD_TRY(kd_pointset_generate(ctx->comm, &m, n, (uint64_t)seed, &ps));
    }
  }
  if (ps) {
    n = kd_pointset_n_global(ps);
    d = kd_pointset_dim(ps);
    KD_TRY(kd_pointset_validate(ps, what));
    if (kd_pointset_is_lazy(ps))
      kd_log_info("%s: %lld points in %d dimensions, generated on demand (lazy: never stored)",
                  what, (long long)n, d);
    else
      kd_log_info("%s: %lld points in %d dimensions, loaded in %.2f s", what, (long long)n, d,
                  kd_dist_wtime() - t0);
  } else if (ctx->validate_only) {
    KD_CHECK(n > 0, KD_ERR_INPUT, "%s: the point set is empty", what);
  }
  if (ps && (kd_task_is_file_type(type) || !strcmp(type, "memory")))
    KD_TRY(kd_task_print_input_(ctx, section, path ? path : "memory array", ps));
  KD_TRY(kd_task_read_score(ctx, section, n, &ps, &d));
  if (nout) *nout = n;
  if (dout) *dout = d;
  *out = ps;
  ps = NULL;
cleanup:
  kd_measure_free(&m);
  kd_pointset_destroy(&ps);
  return err;
}

int kd_task_is_file_type(const char *type) {
  return !strcmp(type, "hdf5") || !strcmp(type, "csv") || !strcmp(type, "npy") ||
         !strcmp(type, "npz");
}
