/* task_common.c - helpers shared by tasks: reading kernel, measure, point-set, target and
 * algorithm sections, and running one algorithm with timing, evaluation counting and the exact MMD.
 * Every key a task uses is read here through the typed getters, so kd_config_check_unused catches
 * typos and the resolved config lists every default. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "core/mem.h"
#include "io/io_impl.h"
#include "io/paths.h"
#include "kdistill/author/kd_ckpt.h"
#include "pointset/pointset_io.h"
#include "task/task_impl.h"

#define KD_MEASURE_CHOICES "uniform_box|gaussian|gaussian_mixture|sphere|torus|grid|trunc_gaussian"

static void kd_key_(char *buf, size_t len, const char *section, const char *key) {
  snprintf(buf, len, "%s.%s", section, key);
}

/* ------------------------------------------------------------ kernel */

static void kd_kernel_choices_(char *buf, size_t len) {
  buf[0] = '\0';
  for (int i = 0; i < KD_KERNEL_COUNT_; i++) {
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, "%s%s", i ? "|" : "", kd_kernel_name((kd_kernel_type)i));
  }
}

/* A length-scale key: a positive number, or 'median' (*median = 1; *ls untouched), or 'auto' where
 * it is the family's default (*median = 2: the stein kernel, task_stein.c). */
static kd_err kd_read_ls_(kd_config *cfg, const char *key, const char *def, double *ls,
                          int *median) {
  kd_err err = KD_OK;
  const char *v = NULL;
  char where[512];
  const int can_auto = !strcmp(def, "auto");
  KD_TRY(kd_config_get_str(cfg, key, def, NULL, 0, &v));
  if (!strcmp(v, "median") || (can_auto && !strcmp(v, "auto"))) {
    *median = strcmp(v, "median") ? 2 : 1;
  } else {
    char *end = NULL;
    double x = strtod(v, &end);
    KD_CHECK_KEY(end != v && *end == '\0' && isfinite(x) && x > 0, KD_ERR_CONFIG, key,
                 "%s: %s: expected a positive number or %s, got '%s'",
                 kd_config_where(cfg, key, where, sizeof where), key,
                 can_auto ? "'auto' or 'median'" : "'median'", v);
    KD_TRY(kd_config_get_f64(cfg, key, 1.0, 1e-300, INFINITY, ls));
  }
cleanup:
  return err;
}

kd_err kd_task_read_kernel(const kd_task_ctx *ctx, const char *section, int d, kd_kernel **out) {
  kd_err err = KD_OK;
  kd_config *cfg = ctx->cfg;
  char key[256], choices[512], where[512];
  const char *name = NULL;
  int64_t iv = 0;
  *out = NULL;
  kd_kernel_choices_(choices, sizeof choices);
  kd_key_(key, sizeof key, section, "name");
  KD_TRY(kd_config_get_str(cfg, key, "gaussian", choices, 0, &name));
  kd_kernel_type t = kd_kernel_from_name(name);
  kd_kernel_params p = kd_kernel_params_default(t);
  const kd_kernel_keys keys = kd_kernel_keys_of(t); /* the family's own keys */
  if (keys.ls_default) {
    kd_key_(key, sizeof key, section, "ls");
    KD_TRY(kd_read_ls_(cfg, key, keys.ls_default, &p.ls, &p.ls_median));
    kd_key_(key, sizeof key, section, "median_sample");
    KD_TRY(kd_config_get_int(cfg, key, 1000, 2, 100000000, &p.median_sample));
  }
  if (keys.n_keys > 0) {
    kd_params kp = {NULL, 0, NULL};
    KD_TRY(kd_config_get_params(cfg, section, keys.keys, keys.n_keys, &kp));
    err = kd_params_fill(&kp, &p);
    kd_params_free(&kp);
    KD_TRY(err);
  }
  /* keys that depend on the data: the Stein kernel's base and scores, attention's split */
  if (t == KD_KERNEL_STEIN) KD_TRY(kd_task_read_stein_kernel(ctx, section, d, &p));
  if (t == KD_KERNEL_ATTENTION) {
    kd_key_(key, sizeof key, section, "dk");
    KD_CHECK(d >= 2, KD_ERR_CONFIG,
             "%s: %s: the attention kernel needs points (k, v) of "
             "dimension >= 2, the data has d = %d",
             kd_config_where(cfg, key, where, sizeof where), key, d);
    KD_TRY(kd_config_get_int(cfg, key, d / 2, 1, d - 1, &iv));
    p.dk = (int)iv;
  }
  if (t == KD_KERNEL_DEEP) { /* rows (x, phi(x)): the split is the data's, so it has no default */
    kd_key_(key, sizeof key, section, "ls_phi");
    KD_TRY(kd_read_ls_(cfg, key, "median", &p.ls_phi, &p.ls_phi_median));
    kd_key_(key, sizeof key, section, "dx");
    KD_CHECK(d >= 2 && kd_config_has(cfg, key), KD_ERR_CONFIG,
             "%s: %s: the deep kernel needs the number of input columns of its rows (x, phi(x)): "
             "set %s in 1 .. d-1 (the data has d = %d)",
             kd_config_where(cfg, section, where, sizeof where), key, key, d);
    KD_TRY(kd_config_get_int(cfg, key, 1, 1, d - 1, &iv));
    p.dx = (int)iv;
  }
  if (t == KD_KERNEL_ENERGY)
    KD_CHECK(d >= 1, KD_ERR_CONFIG, "%s: energy kernel needs d >= 1", section);
  KD_TRY(kd_kernel_create(&p, d, out));
cleanup:
  return err;
}

kd_err kd_task_kernel_finish(const kd_task_ctx *ctx, kd_kernel *k, const kd_pointset *ps) {
  kd_err err = KD_OK;
  kd_pointset *sample = NULL;
  int64_t ns = 1000;
  KD_TRY(kd_task_stein_precond(ctx, k, ps));
  if (!k || !kd_kernel_median_pending(k)) return KD_OK;
  ns = kd_kernel_get_params(k)->median_sample;
  KD_CHECK(ps != NULL, KD_ERR_CONFIG,
           "kernel.ls: 'median' needs a point set to compute the heuristic on; set a number");
  if (kd_pointset_is_lazy(ps)) {
    /* the first rows of a generated set are independent draws: the heuristic on 2^20 of them */
    kd_gidx n = kd_pointset_n_global(ps);
    KD_TRY(kd_pointset_generate(kd_pointset_comm(ps), kd_pointset_generator(ps),
                                n < ((kd_gidx)1 << 20) ? n : ((kd_gidx)1 << 20), ctx->seed,
                                &sample));
    ps = sample;
  }
  KD_TRY(kd_kernel_set_median_ls(k, ps, ctx->seed, (kd_lidx)ns));
  kd_log_verbose("kernel: median heuristic gives %s", kd_kernel_describe(k));
cleanup:
  kd_pointset_destroy(&sample);
  return err;
}

kd_err kd_task_record_kernel(const kd_kernel *k, kd_task_info *info, kd_result *res) {
  kd_err err = KD_OK;
  snprintf(info->kernel, sizeof info->kernel, "%s", kd_kernel_describe(k));
  const double ls = kd_kernel_length_scale(k), lp = kd_kernel_length_scale_phi(k);
  if (ls > 0) KD_TRY(kd_result_set_metric(res, "kernel_ls", ls));
  if (lp > 0) KD_TRY(kd_result_set_metric(res, "kernel_ls_phi", lp));
  KD_TRY(kd_task_record_stein_kernel(k, res));
cleanup:
  return err;
}

kd_err kd_task_output_yaml(const kd_config *cfg, const kd_result *res, char **yaml) {
  /* the length scales a run resolved (metric) and the config keys that asked for 'median' */
  static const char *const metric[2] = {"kernel_ls", "kernel_ls_phi"};
  static const char *const key[2] = {"kernel.ls", "kernel.ls_phi"};
  kd_err err = KD_OK;
  kd_config *c = NULL;
  const char *ls = NULL;
  double v = NAN;
  char set[96];
  int changed = 0;
  *yaml = NULL;
  for (int i = 0; i < 2; i++) {
    if (!kd_result_get_metric(res, metric[i], &v) || !(v > 0) || !kd_config_has(cfg, key[i]))
      continue;
    if (!c) KD_TRY(kd_config_clone(cfg, kd_config_name(cfg), &c));
    KD_TRY(kd_config_get_str(c, key[i], NULL, NULL, 0, &ls));
    if (ls && (!strcmp(ls, "median") || !strcmp(ls, "auto"))) {
      snprintf(set, sizeof set, "%s=%.17g", key[i], v);
      KD_TRY(kd_config_set(c, set));
      changed = 1;
    }
  }
  if (changed) KD_TRY(kd_config_emit_resolved(c, yaml));
cleanup:
  kd_config_destroy(&c);
  return err;
}

/* ----------------------------------------------------------- measure */
/* A per-coordinate vector key: absent -> default broadcast (inserted as a list of length d);
 * a single number or a list of length 1 broadcasts (a one-element list sets d = 1 unless d or a
 * longer list says otherwise: kd_vec_len_); otherwise the length must be d. */
static kd_err kd_read_vec_(const kd_task_ctx *ctx, const char *section, const char *name, int d,
                           double def, double lo, double hi, double **out) {
  kd_err err = KD_OK;
  char key[256], where[512];
  double *v = NULL, *in = NULL;
  int n = 0;
  *out = NULL;
  kd_key_(key, sizeof key, section, name);
  KD_ALLOC(v, d);
  KD_TRY(kd_config_get_f64_list(ctx->cfg, key, 0, &n, &in));
  if (n == 0) {
    for (int j = 0; j < d; j++) v[j] = def;
    KD_TRY(kd_config_default_f64_list(ctx->cfg, key, d, v));
  } else {
    KD_CHECK(n == 1 || n == d, KD_ERR_CONFIG, "%s: %s: has %d values but d = %d",
             kd_config_where(ctx->cfg, key, where, sizeof where), key, n, d);
    for (int j = 0; j < d; j++) {
      v[j] = in[n == 1 ? 0 : j];
      KD_CHECK(v[j] >= lo && v[j] <= hi, KD_ERR_CONFIG, "%s: %s: value %g is out of range",
               kd_config_where(ctx->cfg, key, where, sizeof where), key, v[j]);
    }
  }
  *out = v;
  v = NULL;
cleanup:
  free(v);
  free(in);
  return err;
}

/* Length of a vector key if it is a list, one-element lists included (0 for a number or when
 * absent: those broadcast to whatever d is). Without d, the longest list gives d. */
static int kd_vec_len_(const kd_task_ctx *ctx, const char *section, const char *name) {
  char key[256];
  kd_key_(key, sizeof key, section, name);
  return kd_config_count(ctx->cfg, key);
}

/* The gaussian_mixture keys of a measure section: means (lists), sds, weights, d. */
static kd_err kd_read_mixture_(kd_config *cfg, const char *section, kd_measure *m) {
  kd_err err = KD_OK;
  char key[256], sub[300], where[512];
  double *tmp = NULL;
  int64_t iv = 0;
  kd_key_(key, sizeof key, section, "means");
  int nc = kd_config_count(cfg, key);
  KD_CHECK(nc >= 1, KD_ERR_CONFIG, "%s: %s: required: a list of component means (lists)",
           kd_config_where(cfg, key, where, sizeof where), key);
  snprintf(sub, sizeof sub, "%s.0", key);
  int d0 = 0;
  KD_TRY(kd_config_get_f64_list(cfg, sub, 1, &d0, &tmp));
  free(tmp);
  tmp = NULL;
  kd_key_(key, sizeof key, section, "d");
  KD_TRY(kd_config_get_int(cfg, key, d0, d0, d0, &iv));
  const int d = (int)iv;
  m->d = d;
  m->n_comp = nc;
  KD_ALLOC(m->means, (size_t)nc * d);
  KD_ALLOC(m->sds, (size_t)nc * d);
  KD_ALLOC(m->mix_w, nc);
  for (int c = 0; c < nc; c++) {
    int n = 0;
    snprintf(sub, sizeof sub, "%s.means.%d", section, c);
    KD_TRY(kd_config_get_f64_list(cfg, sub, 1, &n, &tmp));
    KD_CHECK(n == d, KD_ERR_CONFIG, "%s: %s: has %d values, component 0 has %d",
             kd_config_where(cfg, sub, where, sizeof where), sub, n, d);
    memcpy(m->means + (size_t)c * d, tmp, (size_t)d * sizeof(double));
    free(tmp);
    tmp = NULL;
  }
  kd_key_(key, sizeof key, section, "sds");
  int ns = kd_config_count(cfg, key);
  if (!kd_config_has(cfg, key)) {
    double one = 1.0;
    KD_TRY(kd_config_get_f64(cfg, key, one, 1e-300, INFINITY, &one));
    for (size_t i = 0; i < (size_t)nc * d; i++) m->sds[i] = 1.0;
  } else if (ns == 0) {
    double s = 1.0;
    KD_TRY(kd_config_get_f64(cfg, key, 1.0, 1e-300, INFINITY, &s));
    for (size_t i = 0; i < (size_t)nc * d; i++) m->sds[i] = s;
  } else {
    KD_CHECK(ns == nc, KD_ERR_CONFIG, "%s: %s: has %d entries for %d components",
             kd_config_where(cfg, key, where, sizeof where), key, ns, nc);
    for (int c = 0; c < nc; c++) {
      int n = 0;
      snprintf(sub, sizeof sub, "%s.sds.%d", section, c);
      KD_TRY(kd_config_get_f64_list(cfg, sub, 1, &n, &tmp));
      KD_CHECK(n == 1 || n == d, KD_ERR_CONFIG, "%s: %s: has %d values but d = %d",
               kd_config_where(cfg, sub, where, sizeof where), sub, n, d);
      for (int j = 0; j < d; j++) m->sds[(size_t)c * d + j] = tmp[n == 1 ? 0 : j];
      free(tmp);
      tmp = NULL;
    }
  }
  kd_key_(key, sizeof key, section, "weights");
  int nw = 0;
  KD_TRY(kd_config_get_f64_list(cfg, key, 0, &nw, &tmp));
  if (nw == 0) {
    for (int c = 0; c < nc; c++) m->mix_w[c] = 1.0 / nc;
    KD_TRY(kd_config_default_f64_list(cfg, key, nc, m->mix_w));
  } else {
    KD_CHECK(nw == nc, KD_ERR_CONFIG, "%s: %s: has %d values for %d components",
             kd_config_where(cfg, key, where, sizeof where), key, nw, nc);
    double s = 0;
    for (int c = 0; c < nc; c++) s += tmp[c];
    KD_CHECK(s > 0, KD_ERR_CONFIG, "%s: %s: must have a positive sum",
             kd_config_where(cfg, key, where, sizeof where), key);
    for (int c = 0; c < nc; c++) m->mix_w[c] = tmp[c] / s;
  }
cleanup:
  free(tmp);
  return err;
}

kd_err kd_task_read_measure(const kd_task_ctx *ctx, const char *section, kd_measure *m) {
  return kd_task_read_measure_d(ctx, section, 0, m);
}

kd_err kd_task_read_measure_d(const kd_task_ctx *ctx, const char *section, int d_default,
                              kd_measure *m) {
  kd_err err = KD_OK;
  kd_config *cfg = ctx->cfg;
  char key[256];
  const char *type = NULL;
  int64_t iv = 0;
  memset(m, 0, sizeof *m);
  kd_key_(key, sizeof key, section, "type");
  KD_TRY(kd_config_get_str(cfg, key, NULL, KD_MEASURE_CHOICES, 1, &type));
  m->type = kd_measure_from_name(type);
  if (m->type == KD_MEASURE_GAUSSIAN_MIXTURE) {
    KD_TRY(kd_read_mixture_(cfg, section, m));
  } else {
    int dl = 0;
    static const char *const vecs[] = {"lo", "hi", "mean", "sd"};
    for (int i = 0; i < 4; i++) {
      int l = kd_vec_len_(ctx, section, vecs[i]);
      if (l > dl) dl = l;
    }
    const int ddef =
        dl > 0 ? dl : (d_default > 0 ? d_default : (m->type == KD_MEASURE_SPHERE ? 3 : 2));
    kd_key_(key, sizeof key, section, "d");
    KD_TRY(kd_config_get_int(cfg, key, ddef, 1, 1000000, &iv));
    const int d = (int)iv;
    m->d = d;
    switch (m->type) {
      case KD_MEASURE_UNIFORM_BOX:
      case KD_MEASURE_GRID:
        KD_TRY(kd_read_vec_(ctx, section, "lo", d, 0.0, -INFINITY, INFINITY, &m->lo));
        KD_TRY(kd_read_vec_(ctx, section, "hi", d, 1.0, -INFINITY, INFINITY, &m->hi));
        if (m->type == KD_MEASURE_GRID) {
          kd_key_(key, sizeof key, section, "grid_n");
          KD_TRY(kd_config_get_int(cfg, key, 10, 1, 100000000, &m->grid_n));
        }
        break;
      case KD_MEASURE_GAUSSIAN:
      case KD_MEASURE_TRUNC_GAUSSIAN:
        KD_TRY(kd_read_vec_(ctx, section, "mean", d, 0.0, -INFINITY, INFINITY, &m->mean));
        KD_TRY(kd_read_vec_(ctx, section, "sd", d, 1.0, 1e-300, INFINITY, &m->sd));
        if (m->type == KD_MEASURE_TRUNC_GAUSSIAN) {
          KD_TRY(kd_read_vec_(ctx, section, "lo", d, -1.0, -INFINITY, INFINITY, &m->lo));
          KD_TRY(kd_read_vec_(ctx, section, "hi", d, 1.0, -INFINITY, INFINITY, &m->hi));
        }
        break;
      default:
        break;
    }
  }
  KD_TRY(kd_measure_validate(m, section));
cleanup:
  if (err) kd_measure_free(m);
  return err;
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
  kd_key_(key, sizeof key, section, "name");
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
  kd_key_(key, sizeof key, section, "header");
  KD_TRY(kd_config_get_str(cfg, key, "auto", "auto|true|false", 0, &h));
  o.header = !strcmp(h, "auto") ? -1 : !strcmp(h, "true");
  kd_key_(key, sizeof key, section, "delimiter");
  KD_TRY(kd_config_get_str(cfg, key, "auto", "auto|comma|semicolon|tab|whitespace", 0, &dl));
  o.delim = !strcmp(dl, "comma")        ? ','
            : !strcmp(dl, "semicolon")  ? ';'
            : !strcmp(dl, "tab")        ? '\t'
            : !strcmp(dl, "whitespace") ? ' '
                                        : 0;
  kd_key_(key, sizeof key, section, "columns");
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
  kd_key_(key, sizeof key, section, "dataset");
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
  kd_key_(key, sizeof key, section, "dataset");
  kd_key_(dkey, sizeof dkey, section, "datasets");
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
  kd_key_(key, sizeof key, section, "flatten");
  if (kd_config_has(cfg, key)) KD_TRY(kd_config_get_int(cfg, key, 1, 1, 7, &flatten));
  kd_key_(key, sizeof key, section, "datasets");
  if (npz && kd_config_has(cfg, key)) {
    KD_TRY(kd_task_dataset_list_(cfg, section, names, &k));
  } else if (npz) {
    kd_key_(key, sizeof key, section, "dataset");
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
    kd_key_(key, sizeof key, section, "datasets");
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
  kd_key_(key, sizeof key, section, "allow_external");
  KD_TRY(kd_config_get_bool(cfg, key, 0, &ext));
  kd_key_(dkey, sizeof dkey, section, "datasets");
  kd_key_(fkey, sizeof fkey, section, "flatten");
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
  kd_key_(key, sizeof key, section, "type");
  KD_TRY(
      kd_config_get_str(cfg, key, NULL, KD_MEASURE_CHOICES "|hdf5|csv|npy|npz|memory", 1, &type));
  if (!strcmp(type, "memory")) {
    KD_TRY(kd_task_read_memory_(ctx, section, what, sizeof what, &ps, &n, &d));
  } else if (!strcmp(type, "npy") || !strcmp(type, "npz")) {
    const int npz = !strcmp(type, "npz");
    kd_key_(key, sizeof key, section, "path");
    KD_TRY(kd_config_get_str(cfg, key, NULL, NULL, 1, &path));
    KD_TRY(kd_task_resolve_path_(ctx, key, path, rpath, sizeof rpath));
    path = rpath;
    snprintf(what, sizeof what, "%s (%s)", section, path);
    KD_TRY(kd_task_read_npy_(ctx, section, path, npz, &ps, &n, &d));
  } else if (!strcmp(type, "hdf5") || !strcmp(type, "csv")) {
    kd_key_(key, sizeof key, section, "path");
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
      kd_key_(key, sizeof key, section, "grid_n");
      KD_CHECK(total <= 1e12, KD_ERR_CONFIG, "%s: %s: grid_n^d = %g points is too many",
               kd_config_where(cfg, key, where, sizeof where), key, total);
      n = (int64_t)llround(total);
    } else {
      kd_key_(key, sizeof key, section, "n");
      KD_TRY(kd_config_get_int(cfg, key, 1000, 1, 1000000000000LL, &n));
    }
    kd_key_(key, sizeof key, section, "seed");
    KD_TRY(kd_config_get_int(cfg, key, (int64_t)ctx->seed, 0, INT64_MAX, &seed));
    int lz = 0;
    if (lazy) {
      kd_key_(key, sizeof key, section, "lazy");
      KD_TRY(kd_config_get_bool(cfg, key, 0, &lz));
      *lazy = lz;
      char sk[256];
      kd_key_(sk, sizeof sk, section, "score");
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

/* ------------------------------------------------------------ algorithm */
void kd_task_algo_choices(const char *task, char *buf, int len) {
  buf[0] = '\0';
  for (int i = 0; kd_algo_at(i); i++) {
    const kd_algo_desc *a = kd_algo_at(i);
    if (strcmp(a->task, task)) continue;
    size_t l = strlen(buf);
    snprintf(buf + l, (size_t)len - l, "%s%s", l ? "|" : "", a->name);
  }
}

/* The algorithm a task runs when algorithm.name is not given (docs/guide.md says why these). */
static const char *kd_task_default_algo_(const char *task) {
  static const char *const defs[][2] = {
      {"thin", "kt_compress"}, {"herd", "bpcg"}, {"quad", "nystrom_recombination"}, {"ctt", "ctt"}};
  for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
    if (!strcmp(task, defs[i][0])) return defs[i][1];
  return NULL;
}

kd_err kd_task_read_algo(const kd_task_ctx *ctx, const char *section, const char *task,
                         const kd_algo_desc **desc, kd_params *params) {
  kd_err err = KD_OK;
  char key[256], choices[2048], where[512];
  const char *name = NULL;
  *desc = NULL;
  kd_task_algo_choices(task, choices, sizeof choices);
  kd_key_(key, sizeof key, section, "name");
  KD_CHECK(choices[0], KD_ERR_UNSUPPORTED, "%s: task %s has no registered algorithm",
           kd_config_where(ctx->cfg, key, where, sizeof where), task);
  KD_TRY(kd_config_get_str(ctx->cfg, key, kd_task_default_algo_(task), choices,
                           kd_task_default_algo_(task) == NULL, &name));
  *desc = kd_algo_find(task, name);
  KD_CHECK(*desc, KD_ERR_INTERNAL, "algorithm %s vanished from the registry", name);
  KD_TRY(kd_config_get_params(ctx->cfg, section, (*desc)->params, (*desc)->n_params, params));
cleanup:
  return err;
}

int kd_task_is_file_type(const char *type) {
  return !strcmp(type, "hdf5") || !strcmp(type, "csv") || !strcmp(type, "npy") ||
         !strcmp(type, "npz");
}

/* --------------------------------------------------------------- target */
/* SECTION.self: auto | exact | estimate | skip (true / false: exact / skip, as before);
 * SECTION.self_rows: target rows (and rule atoms) sampled by the estimate (0: automatic);
 * SECTION.cross: auto | exact | estimate, the estimate's cross term (kd_target_set_cross);
 * SECTION.fgt_tol: the fast Gauss transform's tolerance (kd_target_set_fgt_tol). */
static kd_err kd_task_read_self_(const kd_task_ctx *ctx, const char *section, int *mode,
                                 int64_t *rows, int *cross, double *fgt_tol) {
  kd_err err = KD_OK;
  char key[256];
  const char *v = NULL;
  static const char *const names[] = {"auto", "exact", "estimate", "skip", "true", "false", "fgt"};
  static const int modes[] = {KD_SELF_AUTO,  KD_SELF_EXACT, KD_SELF_ESTIMATE, KD_SELF_SKIP,
                              KD_SELF_EXACT, KD_SELF_SKIP,  KD_SELF_FGT};
  kd_key_(key, sizeof key, section, "self");
  KD_TRY(
      kd_config_get_str(ctx->cfg, key, "auto", "auto|exact|estimate|skip|true|false|fgt", 0, &v));
  for (int i = 0; i < 7; i++)
    if (!strcmp(v, names[i])) *mode = modes[i];
  kd_key_(key, sizeof key, section, "self_rows");
  KD_TRY(kd_config_get_int(ctx->cfg, key, 0, 0, (int64_t)1 << 24, rows));
  static const char *const cnames[] = {"auto", "exact", "estimate"};
  static const int cmodes[] = {KD_CROSS_AUTO, KD_CROSS_EXACT, KD_CROSS_ESTIMATE};
  kd_key_(key, sizeof key, section, "cross");
  KD_TRY(kd_config_get_str(ctx->cfg, key, "auto", "auto|exact|estimate", 0, &v));
  for (int i = 0; i < 3; i++)
    if (!strcmp(v, cnames[i])) *cross = cmodes[i];
  kd_key_(key, sizeof key, section, "fgt_tol");
  KD_TRY(kd_config_get_f64(ctx->cfg, key, KD_FGT_TOL_DEFAULT, 1e-15, 1e-2, fgt_tol));
cleanup:
  return err;
}

kd_err kd_task_read_target(const kd_task_ctx *ctx, const char *section, kd_kernel *k,
                           kd_pointset *data, int has_data, kd_target **out,
                           kd_pointset **owned_points) {
  kd_err err = KD_OK;
  kd_config *cfg = ctx->cfg;
  char key[256], where[512];
  const char *type = NULL;
  kd_measure m;
  int self = KD_SELF_AUTO, cross = KD_CROSS_AUTO, d = 0;
  int64_t self_rows = 0;
  double fgt_tol = KD_FGT_TOL_DEFAULT;
  memset(&m, 0, sizeof m);
  *out = NULL;
  kd_key_(key, sizeof key, section, "type");
  KD_TRY(kd_config_get_str(cfg, key, has_data ? "data" : NULL,
                           has_data ? "data|hdf5|csv|npy|npz|memory|stein|" KD_MEASURE_CHOICES
                                    : "hdf5|csv|npy|npz|memory|stein|" KD_MEASURE_CHOICES,
                           !has_data, &type));
  if (!strcmp(type, "stein")) {
    if (k) KD_TRY(kd_target_create_stein(ctx->comm, k, out));
  } else if (!strcmp(type, "data") || kd_task_is_file_type(type) || !strcmp(type, "memory")) {
    const kd_pointset *pts = data;
    if (strcmp(type, "data")) {
      KD_CHECK(owned_points || ctx->validate_only, KD_ERR_INTERNAL, "no point set for %s", section);
      if (owned_points && !*owned_points)
        KD_TRY(kd_task_read_pointset(ctx, section, owned_points, NULL, &d));
      pts = owned_points ? *owned_points : NULL;
    }
    KD_TRY(kd_task_read_self_(ctx, section, &self, &self_rows, &cross, &fgt_tol));
    if (pts && k && kd_pointset_is_lazy(pts)) {
      /* the rows are not stored: the target is the measure they are drawn from */
      err = kd_target_create_closed(ctx->comm, k, kd_pointset_generator(pts), out);
      if (err) {
        char why[1024], msg[1200];
        snprintf(why, sizeof why, "%s", kd_err_message());
        snprintf(msg, sizeof msg,
                 "data.lazy: true: the target is the generating measure, in closed form: %s", why);
        kd_err_set_message(msg);
        goto cleanup;
      }
      kd_log_info(
          "target: the data's generating measure %s (lazy data: the MMD is to the "
          "distribution, not to the drawn rows)",
          kd_measure_name(kd_pointset_generator(pts)->type));
    } else if (pts && k) {
      kd_key_(key, sizeof key, section, "type");
      KD_CHECK(kd_pointset_dim(pts) == kd_kernel_dim(k), KD_ERR_INPUT,
               "%s: %s: the target points have dimension %d but the kernel's points have %d",
               kd_config_where(cfg, key, where, sizeof where), section, kd_pointset_dim(pts),
               kd_kernel_dim(k));
      KD_TRY(kd_target_create_empirical(k, pts, 0, out));
      KD_TRY(kd_target_set_self(*out, (kd_self_mode)self, self_rows, ctx->seed));
      KD_TRY(kd_target_set_cross(*out, (kd_cross_mode)cross));
      KD_TRY(kd_target_set_fgt_tol(*out, fgt_tol));
    }
  } else {
    KD_TRY(kd_task_read_measure(ctx, section, &m));
    if (k) {
      kd_key_(key, sizeof key, section, "d");
      KD_CHECK(m.d == kd_kernel_dim(k), KD_ERR_CONFIG,
               "%s: %s: the target has dimension %d but the points have %d",
               kd_config_where(cfg, key, where, sizeof where), key, m.d, kd_kernel_dim(k));
      KD_TRY(kd_target_create_closed(ctx->comm, k, &m, out));
    }
  }
cleanup:
  kd_measure_free(&m);
  return err;
}

/* ------------------------------------------------------------------ run */
/* Algorithms cannot see the config; when one rejects a parameter it records the key with the
 * message (KD_CHECK_KEY, kd_err_key). Prefix the message with the key's FILE:LINE so every config
 * error reads the same way. */
static void kd_task_locate_message_(const kd_config *cfg) {
  char where[512], msg[1024];
  const char *key = kd_err_key();
  if (!key[0] || !kd_config_has(cfg, key)) return;
  snprintf(msg, sizeof msg, "%s: %s", kd_config_where(cfg, key, where, sizeof where),
           kd_err_message());
  kd_err_set_message(msg);
}

kd_err kd_task_check_algo(const kd_task_ctx *ctx, const kd_algo_desc *desc, const kd_params *p,
                          const kd_algo_shape *shape) {
  kd_err err = KD_OK;
  for (int i = 0; (desc->flags & KD_ALGO_N_OUT) && i < p->n; i++)
    if (!strcmp(p->spec[i].key, "n_out") && p->spec[i].type == KD_PARAM_INT)
      KD_CHECK_KEY(p->v[i].i <= shape->n_in, KD_ERR_CONFIG, "algorithm.n_out",
                   "algorithm.n_out = %lld exceeds the %lld input points", (long long)p->v[i].i,
                   (long long)shape->n_in);
  if (desc->check) KD_TRY(desc->check(p, shape));
  if (desc->mem) {
    kd_algo_mem m;
    memset(&m, 0, sizeof m);
    kd_err local = desc->mem(p, shape, &m);
    if (!local)
      local = kd_mem_require(m.bytes < 1.8e19 ? (uint64_t)m.bytes : UINT64_MAX, m.what, m.key);
    KD_TRY(kd_dist_agreed(ctx->comm, local));
  }
cleanup:
  if (err == KD_ERR_CONFIG) kd_task_locate_message_(ctx->cfg);
  return err;
}

/* The MMD of the algorithm's rule against the target, unless the algorithm reported an exact
 * one: exact, exact to a bound (target.self: fgt, or auto above KD_SELF_EXACT_EVALS where the
 * fast Gauss transform applies), estimated (auto elsewhere above it, or estimate) or skipped;
 * /metrics gets mmd_method (0 exact, 1 estimate, 2 skipped, 3 bounded), the errors or bounds and
 * seconds_evaluation.
 * Collective. */
static kd_err kd_task_evaluate_(MPI_Comm comm, kd_target *target, kd_kernel *k, kd_result *res) {
  kd_err err = KD_OK;
  kd_mmd_info info;
  const double tm = kd_dist_wtime();
  double te = 0.0;
  const char *what = kd_kernel_get_params(k)->type == KD_KERNEL_STEIN ? "KSD" : "MMD";
  kd_mmd_method method = target ? kd_target_mmd_method(target) : KD_MMD_EXACT;
  if (target && (isnan(res->mmd) || method != KD_MMD_EXACT)) {
    KD_TRY(kd_mmd_eval(target, res->points, res->weights, (kd_lidx)res->n, &info));
    res->mmd = info.mmd;
    method = info.method;
    if (method == KD_MMD_EXACT)
      kd_log_info("exact %s of the %lld-point rule against the target: %.6e (%.3f s)", what,
                  (long long)res->n, info.mmd, kd_dist_wtime() - tm);
    if (method == KD_MMD_ESTIMATE) {
      KD_TRY(kd_result_set_metric(res, "mmd_se", info.mmd_se));
      KD_TRY(kd_result_set_metric(res, "mmd2", info.mmd2));
      KD_TRY(kd_result_set_metric(res, "mmd2_se", info.mmd2_se));
      KD_TRY(kd_result_set_count(res, "self_rows", (int64_t)info.rows));
      if (!isnan(info.mmd2_minus_self)) /* the exact relative quality, beside the estimate */
        KD_TRY(kd_result_set_metric(res, "mmd2_minus_self", info.mmd2_minus_self));
      if (info.cross_rows > 0)
        KD_TRY(kd_result_set_count(res, "cross_rows", (int64_t)info.cross_rows));
    }
    if (method == KD_MMD_BOUNDED) {
      KD_TRY(kd_result_set_metric(res, "mmd2", info.mmd2));
      KD_TRY(kd_result_set_metric(res, "mmd2_bound", info.mmd2_bound));
      KD_TRY(kd_result_set_metric(res, "mmd_bound", info.mmd_bound));
      KD_TRY(kd_result_set_count(res, "fgt_order", (int64_t)info.fgt_order));
      KD_TRY(kd_result_set_count(res, "fgt_cells", info.fgt_cells));
    }
    if (method == KD_MMD_SKIPPED) {
      KD_TRY(kd_result_set_metric(res, "mmd2_minus_self", info.mmd2_minus_self));
      kd_log_warn(
          "the target's double integral was skipped (target.self: skip): mmd is NaN; "
          "/metrics mmd2_minus_self = MMD^2 - int int k = %.10g",
          info.mmd2_minus_self);
    }
  }
  te = kd_dist_wtime() - tm;
  KD_TRY(kd_dist_max(comm, &te, 1));
  KD_TRY(kd_result_set_count(res, "mmd_method", (int64_t)method));
  KD_TRY(kd_result_set_metric(res, "seconds_evaluation", te));
cleanup:
  return err;
}

kd_err kd_task_run_algo(const kd_task_ctx *ctx, const kd_algo_desc *desc, const kd_params *params,
                        kd_kernel *k, kd_pointset *points, kd_target *target, const void *task_in,
                        kd_ckpt *ck, kd_result *res) {
  kd_err err = KD_OK;
  kd_algo_in in;
  double t = 0;
  uint64_t evals = 0;
  memset(&in, 0, sizeof in);
  in.comm = ctx->comm;
  in.kernel = k;
  in.points = points;
  in.target = target;
  in.params = params;
  in.seed = ctx->seed;
  in.task_in = task_in;
  in.ctx = kd_ctx_current();
  in.ckpt = ck;
  res->mmd = NAN;
  kd_kernel_reset_evals(k);
  kd_log_info("running %s (%s)", desc->name, desc->summary);
  t = kd_dist_wtime();
  err = kd_dist_agreed(ctx->comm, desc->run(&in, res));
  if (err == KD_ERR_CONFIG) kd_task_locate_message_(ctx->cfg);
  KD_TRY(err);
  t = kd_dist_wtime() - t;
  KD_TRY(kd_dist_max(ctx->comm, &t, 1));
  evals = kd_kernel_evals(k);
  KD_TRY(kd_dist_sum_u64(ctx->comm, &evals, 1));
  res->seconds = t;
  res->kernel_evals = evals;
  KD_CHECK(res->n >= 1 && res->points && res->weights && res->indices, KD_ERR_INTERNAL,
           "algorithm %s returned no points", desc->name);
  kd_log_info("%s finished in %.3f s (%llu kernel evaluations)", desc->name, t,
              (unsigned long long)evals);
  KD_TRY(kd_task_evaluate_(ctx->comm, target, k, res));
  KD_TRY(kd_task_split_scores(k, points, res));
  kd_kernel_reset_evals(k);
cleanup:
  return err;
}

kd_err kd_task_ckpt_open(const kd_task_ctx *ctx, int64_t every, const char *path, int keep,
                         kd_ckpt_sink sink, void *user, kd_ckpt **ck, const kd_result **resume) {
  kd_checkpoint_session *ss = kd_checkpoint_session_get();
  const int own_session = ss && ss->cfg == ctx->cfg;
  const kd_result *r = own_session ? ss->resume : NULL;
  *ck = NULL;
  /* the inputs read now (fingerprints agreed over the ranks) against those of the checkpoint: the
   * same text and the same prints on every rank, so every rank decides alike */
  if (r) {
    kd_err err =
        kd_checkpoint_inputs_check(ss->resume_path, ss->resume_inputs, ss->inputs, ss->n_inputs);
    if (err) return err;
  }
  /* the job removes ss->path once the output is in place */
  if (own_session) snprintf(ss->path, sizeof ss->path, "%s", keep ? "" : path);
  if (resume) *resume = r;
  return kd_ckpt_create(ctx->comm, every, sink, user, r, ck);
}

kd_err kd_task_read_checkpoint(const kd_task_ctx *ctx, int64_t *every, int *keep, char **path) {
  kd_err err = KD_OK;
  const char *cp = NULL, *outp = NULL;
  int on_interrupt = 1; /* read here so that the key is known and checked; used at the write */
  *path = NULL;
  KD_TRY(kd_config_get_int(ctx->cfg, "run.checkpoint_every", 0, 0, INT64_MAX, every));
  KD_TRY(kd_config_get_str(ctx->cfg, "run.checkpoint_path", "", NULL, 0, &cp));
  KD_TRY(kd_config_get_bool(ctx->cfg, "run.checkpoint_keep", 0, keep));
  KD_TRY(kd_config_get_bool(ctx->cfg, "run.checkpoint_on_interrupt", 1, &on_interrupt));
  KD_TRY(kd_config_get_str(ctx->cfg, "output.path", "kdistill_out.h5", NULL, 0, &outp));
  size_t pn = strlen(cp[0] ? cp : outp) + 16;
  KD_ALLOC(*path, pn);
  if (cp[0])
    snprintf(*path, pn, "%s", cp);
  else
    snprintf(*path, pn, "%s.ckpt.h5", outp);
  if (!ctx->evaluate_only) KD_TRY(kd_task_check_output(ctx, "run.checkpoint_path", *path));
cleanup:
  return err;
}

kd_err kd_task_check_output(const kd_task_ctx *ctx, const char *key, const char *path) {
  kd_err local = KD_OK;
  if (kd_dist_rank(ctx->comm) == 0) {
    local = kd_path_check_output(path, key, 0);
    if (local == KD_OK) local = kd_path_claim(path, key, 1); /* not an input, not another output */
  }
  return kd_dist_agreed(ctx->comm, local);
}

void kd_task_choices(char *buf, int len) {
  buf[0] = '\0';
  for (int i = 0; kd_task_at(i); i++) {
    size_t l = strlen(buf);
    snprintf(buf + l, (size_t)len - l, "%s%s", l ? "|" : "", kd_task_at(i)->name);
  }
}

kd_err kd_task_checkpoint_write(const kd_task_ctx *ctx, const char *task, const char *algorithm,
                                const char *path, const kd_result *state, int64_t *iteration,
                                const char **reason) {
  kd_err err = KD_OK;
  kd_checkpoint_session *ss = kd_checkpoint_session_get();
  double it = 0, intr = 0;
  char *own = NULL;
  int on_interrupt = 1;
  kd_result_get_metric(state, "iteration", &it);
  kd_result_get_metric(state, "interrupted", &intr);
  /* run.checkpoint_on_interrupt: false (the Python calls without checkpoint=): an interrupted
   * run writes nothing; the periodic checkpoints of checkpoint_every are still written */
  KD_TRY(kd_config_get_bool(ctx->cfg, "run.checkpoint_on_interrupt", 1, &on_interrupt));
  if (intr != 0 && !on_interrupt) {
    *iteration = (int64_t)it;
    *reason = "not written";
    return KD_OK;
  }
  if (!ss || ss->cfg != ctx->cfg || !ss->config_yaml) /* e.g. a sweep point: its own config */
    KD_TRY(kd_config_emit_resolved(ctx->cfg, &own));
  kd_checkpoint_meta meta = {task,
                             algorithm,
                             own ? own : ss->config_yaml,
                             (int64_t)it,
                             intr != 0 ? "signal" : "periodic",
                             kd_dist_size(ctx->comm),
                             own ? NULL : ss->inputs,
                             own ? 0 : ss->n_inputs};
  KD_TRY(kd_checkpoint_write(ctx->comm, path, &meta, state));
  *iteration = (int64_t)it;
  *reason = meta.reason;
  if (ss) ss->last_iteration = (int64_t)it;
  /* which file was placed: only that one is removed once the output is in place */
  if (ss && kd_dist_rank(ctx->comm) == 0) kd_path_id(path, &ss->written);
cleanup:
  free(own);
  return err;
}
