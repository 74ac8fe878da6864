/* sweep_spec.c - the sweep section: parameter axes (product / zip) or explicit points, the
 * configuration of one point (base + --set-style overrides), rank groups and file names. All
 * Local: every rank parses the same configuration and gets the same answers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep_impl.h"

static char *kd_sweep_strdup_(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Append text to a growing buffer. */
static kd_err kd_sweep_cat_(char **buf, size_t *len, size_t *cap, const char *text) {
  kd_err err = KD_OK;
  size_t t = strlen(text);
  if (*len + t + 1 > *cap) {
    size_t c = *cap ? *cap : 64;
    while (*len + t + 1 > c) c *= 2;
    char *b = realloc(*buf, c);
    KD_CHECK(b, KD_ERR_MEM, "out of memory");
    *buf = b;
    *cap = c;
  }
  memcpy(*buf + *len, text, t + 1);
  *len += t;
cleanup:
  return err;
}

/* A scalar is passed through as written unless YAML would read it as something else than the one
 * scalar it was (flow indicators, comments, quotes, leading/trailing blanks): then single-quote. */
static int kd_sweep_needs_quote_(const char *s) {
  if (!*s || s[0] == ' ' || s[strlen(s) - 1] == ' ') return 1;
  for (const char *c = s; *c; c++)
    if (strchr(":#,[]{}&*!|>'\"%@`", *c)) return 1;
  return 0;
}

/* Text of the value at key: a scalar, or a (nested) list written as a flow sequence. */
static kd_err kd_sweep_value_text_(kd_config *cfg, const char *key, int depth, char **out) {
  kd_err err = KD_OK;
  char *buf = NULL, sub[512], where[512];
  size_t len = 0, cap = 0;
  const char *s = NULL;
  *out = NULL;
  KD_CHECK(depth < 8, KD_ERR_CONFIG, "%s: %s: values nested too deeply",
           kd_config_where(cfg, key, where, 512), key);
  KD_CHECK(kd_config_key_at(cfg, key, 0) == NULL, KD_ERR_CONFIG,
           "%s: %s: a sweep value must be a value or a list, not a mapping",
           kd_config_where(cfg, key, where, 512), key);
  int n = kd_config_count(cfg, key);
  if (n > 0) {
    KD_TRY(kd_sweep_cat_(&buf, &len, &cap, "["));
    for (int i = 0; i < n; i++) {
      char *el = NULL;
      snprintf(sub, sizeof sub, "%s.%d", key, i);
      KD_TRY(kd_sweep_value_text_(cfg, sub, depth + 1, &el));
      kd_err e2 = kd_sweep_cat_(&buf, &len, &cap, i ? ", " : "");
      if (e2 == KD_OK) e2 = kd_sweep_cat_(&buf, &len, &cap, el);
      free(el);
      KD_TRY(e2);
    }
    KD_TRY(kd_sweep_cat_(&buf, &len, &cap, "]"));
  } else {
    KD_TRY(kd_config_get_str(cfg, key, NULL, NULL, 1, &s));
    if (kd_sweep_needs_quote_(s)) {
      KD_TRY(kd_sweep_cat_(&buf, &len, &cap, "'"));
      for (const char *c = s; *c; c++) {
        char one[3] = {*c, *c == '\'' ? '\'' : '\0', '\0'};
        KD_TRY(kd_sweep_cat_(&buf, &len, &cap, one));
      }
      KD_TRY(kd_sweep_cat_(&buf, &len, &cap, "'"));
    } else {
      KD_TRY(kd_sweep_cat_(&buf, &len, &cap, s));
    }
  }
  *out = buf;
  buf = NULL;
cleanup:
  free(buf);
  return err;
}

/* A parameter key must be a --set path and must not touch what the sweep itself controls. */
static kd_err kd_sweep_check_key_(kd_config *cfg, const char *where_key, const char *key) {
  kd_err err = KD_OK;
  char where[512];
  KD_CHECK(key[0] != '\0', KD_ERR_CONFIG, "%s: %s: empty parameter key",
           kd_config_where(cfg, where_key, where, 512), where_key);
  for (const char *c = key; *c; c++)
    KD_CHECK((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 *c == '_' || *c == '.' || *c == '-',
             KD_ERR_CONFIG, "%s: %s: '%s' is not a key path (letters, digits, '_', '-', '.')",
             kd_config_where(cfg, where_key, where, 512), where_key, key);
  KD_CHECK(strcmp(key, "task") != 0 && strcmp(key, "sweep") != 0 &&
               strncmp(key, "sweep.", 6) != 0 && strcmp(key, "output.path") != 0 &&
               strcmp(key, "output") != 0,
           KD_ERR_CONFIG,
           "%s: %s: '%s' cannot be swept (task, sweep.* and output.path are set by the sweep)",
           kd_config_where(cfg, where_key, where, 512), where_key, key);
cleanup:
  return err;
}

static int kd_sweep_key_index_(const kd_sweep_spec *sp, const char *key) {
  for (int k = 0; k < sp->n_keys; k++)
    if (strcmp(sp->keys[k], key) == 0) return k;
  return -1;
}

static kd_err kd_sweep_add_key_(kd_sweep_spec *sp, const char *key, int *idx) {
  kd_err err = KD_OK;
  char **keys = realloc(sp->keys, (size_t)(sp->n_keys + 1) * sizeof *keys);
  KD_CHECK(keys, KD_ERR_MEM, "out of memory");
  sp->keys = keys;
  sp->keys[sp->n_keys] = kd_sweep_strdup_(key);
  KD_CHECK(sp->keys[sp->n_keys], KD_ERR_MEM, "out of memory");
  *idx = sp->n_keys++;
cleanup:
  return err;
}

/* product / zip: a list of {key, values} axes. */
static kd_err kd_sweep_read_axes_(kd_config *cfg, kd_sweep_spec *sp, const char *sec) {
  kd_err err = KD_OK;
  char key[256], where[512];
  int n_axes = kd_config_count(cfg, sec), *len = NULL;
  char ***axis_vals = NULL;
  const char *s = NULL;
  KD_CHECK(n_axes > 0 && kd_config_key_at(cfg, sec, 0) == NULL, KD_ERR_CONFIG,
           "%s: %s: expected a non-empty list of {key: ..., values: [...]}",
           kd_config_where(cfg, sec, where, 512), sec);
  KD_ALLOC(len, n_axes);
  KD_ALLOC(axis_vals, n_axes);
  int64_t total = strcmp(sp->mode, "zip") == 0 ? -1 : 1;
  for (int a = 0; a < n_axes; a++) {
    snprintf(key, sizeof key, "%s.%d.key", sec, a);
    KD_TRY(kd_config_get_str(cfg, key, NULL, NULL, 1, &s));
    KD_TRY(kd_sweep_check_key_(cfg, key, s));
    KD_CHECK(kd_sweep_key_index_(sp, s) < 0, KD_ERR_CONFIG, "%s: %s: key '%s' appears twice",
             kd_config_where(cfg, key, where, 512), key, s);
    int idx = 0;
    KD_TRY(kd_sweep_add_key_(sp, s, &idx));
    snprintf(key, sizeof key, "%s.%d.values", sec, a);
    int nv = kd_config_count(cfg, key);
    KD_CHECK(kd_config_key_at(cfg, key, 0) == NULL, KD_ERR_CONFIG,
             "%s: %s: expected a list of values, got a mapping",
             kd_config_where(cfg, key, where, 512), key);
    if (nv == 0) {
      KD_CHECK(kd_config_has(cfg, key), KD_ERR_CONFIG, "%s: %s: required key is missing",
               kd_config_where(cfg, key, where, 512), key);
      nv = 1; /* a single value */
    }
    len[a] = nv;
    KD_ALLOC(axis_vals[a], nv);
    for (int i = 0; i < nv; i++) {
      char sub[300];
      if (kd_config_count(cfg, key) > 0)
        snprintf(sub, sizeof sub, "%s.%d", key, i);
      else
        snprintf(sub, sizeof sub, "%s", key);
      KD_TRY(kd_sweep_value_text_(cfg, sub, 0, &axis_vals[a][i]));
    }
    if (total < 0) {
      total = nv;
    } else if (strcmp(sp->mode, "zip") == 0) {
      KD_CHECK(nv == total, KD_ERR_CONFIG,
               "%s: %s: zip axes need equal lengths: %d values here, %lld in the first axis",
               kd_config_where(cfg, key, where, 512), key, nv, (long long)total);
    } else {
      total *= nv;
      KD_CHECK(total <= KD_SWEEP_MAX_POINTS, KD_ERR_CONFIG,
               "%s: %s: the product has more than %d points", kd_config_where(cfg, sec, where, 512),
               sec, KD_SWEEP_MAX_POINTS);
    }
  }
  sp->n_points = (int)total;
  KD_ALLOC(sp->vals, (size_t)sp->n_points * (size_t)n_axes);
  for (int p = 0; p < sp->n_points; p++) {
    int rem = p;
    for (int a = n_axes - 1; a >= 0; a--) {
      int i = p;
      if (strcmp(sp->mode, "product") == 0) {
        i = rem % len[a];
        rem /= len[a];
      }
      sp->vals[(size_t)p * (size_t)n_axes + (size_t)a] = kd_sweep_strdup_(axis_vals[a][i]);
      KD_CHECK(sp->vals[(size_t)p * (size_t)n_axes + (size_t)a], KD_ERR_MEM, "out of memory");
    }
  }
cleanup:
  if (axis_vals)
    for (int a = 0; a < n_axes; a++) {
      if (axis_vals[a])
        for (int i = 0; i < len[a]; i++) free(axis_vals[a][i]);
      free(axis_vals[a]);
    }
  free(axis_vals);
  free(len);
  return err;
}

/* points: a list of points, each a list of "key=value" strings. */
static kd_err kd_sweep_read_points_(kd_config *cfg, kd_sweep_spec *sp) {
  kd_err err = KD_OK;
  char key[256], where[512];
  const char *s = NULL;
  char **tmp = NULL; /* [n_points * cap_keys] while keys are still being discovered */
  int cap_keys = 0;
  int n = kd_config_count(cfg, "sweep.points");
  KD_CHECK(n > 0 && kd_config_key_at(cfg, "sweep.points", 0) == NULL, KD_ERR_CONFIG,
           "%s: sweep.points: expected a non-empty list of points, each a list of key=value",
           kd_config_where(cfg, "sweep.points", where, 512));
  KD_CHECK(n <= KD_SWEEP_MAX_POINTS, KD_ERR_CONFIG, "%s: sweep.points: more than %d points",
           kd_config_where(cfg, "sweep.points", where, 512), KD_SWEEP_MAX_POINTS);
  sp->n_points = n;
  for (int p = 0; p < n; p++) {
    snprintf(key, sizeof key, "sweep.points.%d", p);
    int m = kd_config_count(cfg, key);
    KD_CHECK(m > 0 && kd_config_key_at(cfg, key, 0) == NULL, KD_ERR_CONFIG,
             "%s: %s: expected a list of key=value (e.g. [algorithm.n_out=16, run.seed=2])",
             kd_config_where(cfg, key, where, 512), key);
    for (int j = 0; j < m; j++) {
      char sub[300];
      snprintf(sub, sizeof sub, "%s.%d", key, j);
      KD_TRY(kd_config_get_str(cfg, sub, NULL, NULL, 1, &s));
      const char *eq = strchr(s, '=');
      KD_CHECK(eq && eq != s && eq[1] != '\0', KD_ERR_CONFIG,
               "%s: %s: expected key=value, got '%s'", kd_config_where(cfg, sub, where, 512), sub,
               s);
      char k[256];
      KD_CHECK((size_t)(eq - s) < sizeof k, KD_ERR_CONFIG, "%s: %s: key too long",
               kd_config_where(cfg, sub, where, 512), sub);
      memcpy(k, s, (size_t)(eq - s));
      k[eq - s] = '\0';
      KD_TRY(kd_sweep_check_key_(cfg, sub, k));
      int idx = kd_sweep_key_index_(sp, k);
      if (idx < 0) {
        KD_TRY(kd_sweep_add_key_(sp, k, &idx));
        if (sp->n_keys > cap_keys) {
          int nc = cap_keys ? 2 * cap_keys : 8;
          char **t2 = calloc((size_t)n * (size_t)nc, sizeof *t2);
          KD_CHECK(t2, KD_ERR_MEM, "out of memory");
          for (int q = 0; q < n; q++)
            for (int c = 0; c < cap_keys; c++)
              t2[(size_t)q * nc + c] = tmp[(size_t)q * cap_keys + c];
          free(tmp);
          tmp = t2;
          cap_keys = nc;
        }
      }
      char **slot = &tmp[(size_t)p * cap_keys + idx];
      KD_CHECK(*slot == NULL, KD_ERR_CONFIG, "%s: %s: key '%s' set twice in this point",
               kd_config_where(cfg, sub, where, 512), sub, k);
      *slot = kd_sweep_strdup_(eq + 1);
      KD_CHECK(*slot, KD_ERR_MEM, "out of memory");
    }
  }
  KD_ALLOC(sp->vals, (size_t)n * (size_t)sp->n_keys);
  for (int p = 0; p < n; p++)
    for (int k = 0; k < sp->n_keys; k++) {
      sp->vals[(size_t)p * sp->n_keys + k] = tmp[(size_t)p * cap_keys + k];
      tmp[(size_t)p * cap_keys + k] = NULL;
    }
cleanup:
  if (tmp)
    for (size_t i = 0; i < (size_t)n * (size_t)cap_keys; i++) free(tmp[i]);
  free(tmp);
  return err;
}

kd_err kd_sweep_spec_read(kd_config *cfg, kd_sweep_spec *sp) {
  kd_err err = KD_OK;
  const char *s = NULL;
  char where[512];
  memset(sp, 0, sizeof *sp);
  KD_CHECK(kd_config_has(cfg, "sweep"), KD_ERR_CONFIG,
           "%s: sweep: required section is missing (task: sweep needs sweep: {task, product|zip|"
           "points})",
           kd_config_name(cfg));
  KD_TRY(kd_config_get_str(cfg, "sweep.task", NULL, NULL, 1, &s));
  KD_CHECK(strcmp(s, "sweep") != 0, KD_ERR_CONFIG, "%s: sweep.task: sweeps cannot be nested",
           kd_config_where(cfg, "sweep.task", where, 512));
  sp->task = kd_sweep_strdup_(s);
  KD_CHECK(sp->task, KD_ERR_MEM, "out of memory");
  int have = kd_config_has(cfg, "sweep.product") + kd_config_has(cfg, "sweep.zip") +
             kd_config_has(cfg, "sweep.points");
  KD_CHECK(have == 1, KD_ERR_CONFIG,
           "%s: sweep: give exactly one of product, zip or points (found %d)",
           kd_config_where(cfg, "sweep", where, 512), have);
  if (kd_config_has(cfg, "sweep.product"))
    sp->mode = kd_sweep_strdup_("product");
  else if (kd_config_has(cfg, "sweep.zip"))
    sp->mode = kd_sweep_strdup_("zip");
  else
    sp->mode = kd_sweep_strdup_("points");
  KD_CHECK(sp->mode, KD_ERR_MEM, "out of memory");
  if (strcmp(sp->mode, "points") == 0)
    KD_TRY(kd_sweep_read_points_(cfg, sp));
  else
    KD_TRY(
        kd_sweep_read_axes_(cfg, sp, strcmp(sp->mode, "zip") == 0 ? "sweep.zip" : "sweep.product"));
  KD_TRY(kd_config_get_int(cfg, "sweep.groups", 0, 0, 1 << 20, &sp->groups));
  KD_TRY(kd_config_get_str(cfg, "sweep.dir", "sweep_out", NULL, 0, &s));
  KD_CHECK(s[0] != '\0', KD_ERR_CONFIG, "%s: sweep.dir: empty path",
           kd_config_where(cfg, "sweep.dir", where, 512));
  sp->dir = kd_sweep_strdup_(s);
  KD_CHECK(sp->dir, KD_ERR_MEM, "out of memory");
  KD_TRY(kd_config_get_str(cfg, "sweep.prefix", "point", NULL, 0, &s));
  KD_CHECK(s[0] != '\0' && !strchr(s, '/'), KD_ERR_CONFIG,
           "%s: sweep.prefix: '%s' must be a non-empty file name prefix without '/'",
           kd_config_where(cfg, "sweep.prefix", where, 512), s);
  sp->prefix = kd_sweep_strdup_(s);
  KD_CHECK(sp->prefix, KD_ERR_MEM, "out of memory");
  KD_TRY(kd_config_get_bool(cfg, "sweep.allow_failures", 0, &sp->allow_failures));
  KD_TRY(kd_config_get_bool(cfg, "sweep.resume", 0, &sp->resume));
  KD_TRY(kd_config_get_int(cfg, "sweep.point", -1, -1, sp->n_points - 1, &sp->point));
  KD_TRY(kd_config_get_bool(cfg, "sweep.summary_only", 0, &sp->summary_only));
  KD_CHECK(sp->point < 0 || !sp->summary_only, KD_ERR_CONFIG,
           "%s: sweep.point and sweep.summary_only: give at most one (run one point, or assemble "
           "the summary of points already written)",
           kd_config_where(cfg, "sweep.point", where, 512));
cleanup:
  if (err) kd_sweep_spec_free(sp);
  return err;
}

void kd_sweep_spec_free(kd_sweep_spec *sp) {
  if (!sp) return;
  if (sp->vals)
    for (size_t i = 0; i < (size_t)sp->n_points * (size_t)sp->n_keys; i++) free(sp->vals[i]);
  free(sp->vals);
  if (sp->keys)
    for (int k = 0; k < sp->n_keys; k++) free(sp->keys[k]);
  free(sp->keys);
  free(sp->task);
  free(sp->mode);
  free(sp->dir);
  free(sp->prefix);
  memset(sp, 0, sizeof *sp);
}

const char *kd_sweep_point_label(const kd_sweep_spec *sp, int p, char *buf, int len) {
  int off = 0;
  buf[0] = '\0';
  for (int k = 0; k < sp->n_keys && off < len; k++) {
    const char *v = sp->vals[(size_t)p * sp->n_keys + k];
    if (!v) continue;
    int w = snprintf(buf + off, (size_t)(len - off), "%s%s=%s", off ? ", " : "", sp->keys[k], v);
    if (w < 0) break;
    off += w;
  }
  if (!buf[0]) snprintf(buf, (size_t)len, "(base configuration)");
  return buf;
}

kd_err kd_sweep_point_config(const kd_config *base, const char *base_name, const kd_sweep_spec *sp,
                             int p, const char *out_path, kd_config **out) {
  kd_err err = KD_OK;
  kd_config *cfg = NULL;
  kd_sweep_spec again = {0};
  char *assign = NULL, name[600];
  const char *s = NULL;
  *out = NULL;
  KD_CHECK(p >= 0 && p < sp->n_points, KD_ERR_ARG, "sweep point %d out of range [0, %d)", p,
           sp->n_points);
  snprintf(name, sizeof name, "%s (sweep point %d)", base_name, p);
  KD_TRY(kd_config_clone(base, name, &cfg));
  size_t cap = strlen(sp->task) + 16;
  for (int k = 0; k < sp->n_keys; k++) {
    const char *v = sp->vals[(size_t)p * sp->n_keys + k];
    size_t need = strlen(sp->keys[k]) + (v ? strlen(v) : 0) + 2;
    if (need > cap) cap = need;
  }
  KD_ALLOC(assign, cap);
  KD_TRY(kd_config_set_str(cfg, "task", sp->task));
  for (int k = 0; k < sp->n_keys; k++) {
    const char *v = sp->vals[(size_t)p * sp->n_keys + k];
    if (!v) continue;
    snprintf(assign, cap, "%s=%s", sp->keys[k], v);
    KD_TRY(kd_config_set(cfg, assign));
  }
  if (out_path) KD_TRY(kd_config_set_str(cfg, "output.path", out_path));
  /* the copy still holds the sweep section: read it so the unknown-key check passes (a base whose
   * section was blanked to null, as the points are validated, only marks it) */
  if (kd_config_count(cfg, "sweep") > 0)
    KD_TRY(kd_sweep_spec_read(cfg, &again));
  else
    KD_TRY(kd_config_mark_read(cfg, "sweep"));
  KD_TRY(kd_config_get_str(cfg, "task", NULL, NULL, 1, &s));
  *out = cfg;
  cfg = NULL;
cleanup:
  kd_sweep_spec_free(&again);
  kd_config_destroy(&cfg);
  free(assign);
  return err;
}

int kd_sweep_n_groups(int size, int n_points, int64_t requested) {
  int g = requested > 0 ? (int)(requested < size ? requested : size) : size;
  if (g > n_points) g = n_points;
  return g < 1 ? 1 : g;
}

int kd_sweep_group_of(int rank, int size, int n_groups) {
  return (int)(((int64_t)rank * n_groups) / size);
}

int kd_sweep_group_leader(int g, int size, int n_groups) {
  return (int)(((int64_t)g * size + n_groups - 1) / n_groups);
}

uint64_t kd_sweep_fnv1a(uint64_t h, const char *text) {
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    h ^= *c;
    h *= 1099511628211ULL;
  }
  return h;
}

const char *kd_sweep_point_path(const kd_sweep_spec *sp, int p, char *buf, int len) {
  snprintf(buf, (size_t)len, "%s/%s_%04d.h5", sp->dir, sp->prefix, p);
  return buf;
}
