/* spec.c - kd_spec (include/kdistill/kd_spec.h): typed settings a C caller builds in memory, and
 * their application to a job's configuration through the typed setters of io/config.c. Each
 * setting is checked when it is made (on a configuration the spec keeps for that purpose) and
 * kept in order, so it can be applied again over a file's configuration. */
#include <stdlib.h>
#include <string.h>

#include "core/ctx_impl.h"
#include "core/mem.h"
#include "io/io_impl.h"
#include "job/spec_impl.h"

typedef enum { KD_SPEC_INT, KD_SPEC_REAL, KD_SPEC_BOOL, KD_SPEC_TEXT, KD_SPEC_REALS } kd_spec_kind_;

typedef struct {
  char *key;
  kd_spec_kind_ kind;
  int64_t i;
  double f;
  char *s;
  double *v;
  int64_t rows;
  int cols;
} kd_spec_item_;

struct kd_spec {
  kd_config *check; /* the settings applied as they are made: their errors come at once */
  kd_spec_item_ *items;
  int n, cap;
  char name[64]; /* what messages call the configuration (kd_spec_set_name) */
  kd_err err;    /* the first failed setting: its code, message and key */
  char msg[1024];
  char key[128];
};

static void kd_spec_item_free_(kd_spec_item_ *it) {
  free(it->key);
  free(it->s);
  free(it->v);
}

kd_err kd_spec_create(const char *task, kd_spec **out) {
  kd_err err = KD_OK;
  kd_spec *s = NULL;
  KD_CHECK(out, KD_ERR_ARG, "kd_spec_create: no output pointer");
  *out = NULL;
  KD_CHECK(!task || task[0], KD_ERR_ARG, "kd_spec_create: the task name is empty");
  KD_ALLOC(s, 1);
  snprintf(s->name, sizeof s->name, "kd_spec");
  KD_TRY(kd_config_new(s->name, &s->check));
  *out = s;
  s = NULL;
  if (task) KD_TRY(kd_spec_set_text(*out, "task", task));
cleanup:
  if (err && out) kd_spec_destroy(out);
  kd_spec_destroy(&s);
  return err;
}

kd_err kd_spec_set_name(kd_spec *spec, const char *name) {
  kd_err err = KD_OK;
  KD_CHECK(spec && name && name[0], KD_ERR_ARG, "kd_spec_set_name: no spec or no name");
  snprintf(spec->name, sizeof spec->name, "%s", name);
cleanup:
  return err;
}

const char *kd_spec_name(const kd_spec *spec) { return spec->name; }

void kd_spec_destroy(kd_spec **spec) {
  if (!spec || !*spec) return;
  kd_spec *s = *spec;
  for (int i = 0; i < s->n; i++) kd_spec_item_free_(&s->items[i]);
  free(s->items);
  kd_config_destroy(&s->check);
  free(s);
  *spec = NULL;
}

static kd_err kd_spec_apply_item_(const kd_spec_item_ *it, kd_config *cfg) {
  switch (it->kind) {
    case KD_SPEC_INT:
      return kd_config_set_int(cfg, it->key, it->i);
    case KD_SPEC_REAL:
      return kd_config_set_f64(cfg, it->key, it->f);
    case KD_SPEC_BOOL:
      return kd_config_set_bool(cfg, it->key, (int)it->i);
    case KD_SPEC_TEXT:
      return kd_config_set_str(cfg, it->key, it->s);
    case KD_SPEC_REALS:
      return kd_config_set_f64_array(cfg, it->key, it->v, it->rows, it->cols);
  }
  return KD_ERR_INTERNAL;
}

/* Check the setting on the spec's own configuration, then keep it (owning its key, text and
 * values). */
static kd_err kd_spec_keep_(kd_spec *s, kd_spec_item_ *it) {
  kd_err err = KD_OK;
  KD_CHECK(it->key, KD_ERR_ARG, "kd_spec: no key given");
  KD_TRY(kd_spec_apply_item_(it, s->check));
  if (s->n == s->cap) {
    const int cap = s->cap ? 2 * s->cap : 16;
    kd_spec_item_ *a = realloc(s->items, (size_t)cap * sizeof *a);
    KD_CHECK(a, KD_ERR_MEM, "kd_spec: out of memory");
    s->items = a;
    s->cap = cap;
  }
  s->items[s->n++] = *it;
  memset(it, 0, sizeof *it);
cleanup:
  return err;
}

/* kd_spec_keep_ with the messages caught: a setter runs outside any job, so it binds a context of
 * its own for them, and the spec remembers the first failure (message and key) for the job. */
static kd_err kd_spec_add_(kd_spec *s, kd_spec_item_ *it) {
  kd_ctx local;
  memset(&local, 0, sizeof local);
  local.comm = MPI_COMM_NULL;
  kd_ctx *prev = kd_ctx_bind(&local);
  kd_err err = s ? kd_spec_keep_(s, it) : KD_ERR_ARG;
  kd_ctx_unbind(prev);
  if (err && s && !s->err) {
    s->err = err;
    snprintf(s->msg, sizeof s->msg, "%s", local.err_msg);
    snprintf(s->key, sizeof s->key, "%s", local.err_key);
  }
  kd_spec_item_free_(it);
  return err;
}

static char *kd_spec_dup_(const char *t) {
  if (!t) return NULL;
  const size_t n = strlen(t) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, t, n);
  return c;
}

static kd_err kd_spec_new_item_(const char *key, kd_spec_kind_ kind, kd_spec_item_ *it) {
  kd_err err = KD_OK;
  memset(it, 0, sizeof *it);
  it->kind = kind;
  if (key) KD_CHECK(it->key = kd_spec_dup_(key), KD_ERR_MEM, "kd_spec: out of memory");
cleanup:
  return err;
}

kd_err kd_spec_set_int(kd_spec *spec, const char *key, int64_t value) {
  kd_spec_item_ it;
  kd_err err = kd_spec_new_item_(key, KD_SPEC_INT, &it);
  it.i = value;
  return err ? err : kd_spec_add_(spec, &it);
}

kd_err kd_spec_set_real(kd_spec *spec, const char *key, double value) {
  kd_spec_item_ it;
  kd_err err = kd_spec_new_item_(key, KD_SPEC_REAL, &it);
  it.f = value;
  return err ? err : kd_spec_add_(spec, &it);
}

kd_err kd_spec_set_bool(kd_spec *spec, const char *key, int value) {
  kd_spec_item_ it;
  kd_err err = kd_spec_new_item_(key, KD_SPEC_BOOL, &it);
  it.i = value != 0;
  return err ? err : kd_spec_add_(spec, &it);
}

kd_err kd_spec_set_text(kd_spec *spec, const char *key, const char *value) {
  kd_spec_item_ it;
  kd_err err = kd_spec_new_item_(key, KD_SPEC_TEXT, &it);
  if (err) return err;
  if (value && !(it.s = kd_spec_dup_(value))) {
    kd_spec_item_free_(&it);
    return kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "kd_spec: out of memory");
  }
  return kd_spec_add_(spec, &it);
}

kd_err kd_spec_set_reals(kd_spec *spec, const char *key, const double *values, int64_t rows,
                         int cols) {
  kd_err err = KD_OK;
  kd_spec_item_ it;
  KD_TRY(kd_spec_new_item_(key, KD_SPEC_REALS, &it));
  it.rows = rows;
  it.cols = cols;
  const int ok = rows >= 1 && cols >= 0 && rows <= 100000000 / (cols > 0 ? cols : 1);
  const int64_t total = ok ? (cols > 0 ? rows * cols : rows) : 0;
  if (values && total >= 1) {
    it.v = malloc((size_t)total * sizeof *it.v);
    if (!it.v) {
      kd_spec_item_free_(&it);
      KD_FAIL(KD_ERR_MEM, "kd_spec: out of memory");
    }
    memcpy(it.v, values, (size_t)total * sizeof *it.v);
  }
  KD_TRY(kd_spec_add_(spec, &it)); /* kd_config_set_f64_array names a bad shape or value */
cleanup:
  return err;
}

kd_err kd_spec_apply(const kd_spec *spec, kd_config *cfg) {
  kd_err err = KD_OK;
  if (spec->err) KD_FAIL_KEY(spec->err, spec->key[0] ? spec->key : NULL, "%s", spec->msg);
  for (int i = 0; i < spec->n; i++) KD_TRY(kd_spec_apply_item_(&spec->items[i], cfg));
cleanup:
  return err;
}
