/* params.c - typed parameter tables declared by algorithms and filled from the config. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kdistill/author/kd_util.h"

static char *kd_strdup_(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

kd_err kd_params_defaults(const kd_param_spec *spec, int n, kd_params *p) {
  kd_err err = KD_OK;
  p->spec = spec;
  p->n = n;
  p->v = NULL;
  KD_ALLOC(p->v, n);
  for (int i = 0; i < n; i++) {
    kd_param_val *v = &p->v[i];
    v->i = (int64_t)spec[i].def;
    v->f = spec[i].def;
    v->b = spec[i].def != 0.0;
    v->s = NULL;
    if (spec[i].type == KD_PARAM_STR && spec[i].def_str) {
      v->s = kd_strdup_(spec[i].def_str);
      KD_CHECK(v->s, KD_ERR_MEM, "out of memory");
    }
  }
cleanup:
  if (err) kd_params_free(p);
  return err;
}

void kd_params_free(kd_params *p) {
  if (!p || !p->v) return;
  for (int i = 0; i < p->n; i++) free((void *)p->v[i].s);
  free(p->v);
  p->v = NULL;
  p->n = 0;
}

static int kd_params_index_(const kd_params *p, const char *key) {
  for (int i = 0; i < p->n; i++)
    if (strcmp(p->spec[i].key, key) == 0) return i;
  return -1;
}

static const kd_param_val *kd_params_get_(const kd_params *p, const char *key, kd_param_type t) {
  int i = kd_params_index_(p, key);
  KD_ASSERT(i >= 0);
  KD_ASSERT(p->spec[i].type == t);
  return &p->v[i];
}

int64_t kd_params_int(const kd_params *p, const char *key) {
  return kd_params_get_(p, key, KD_PARAM_INT)->i;
}
double kd_params_f64(const kd_params *p, const char *key) {
  return kd_params_get_(p, key, KD_PARAM_F64)->f;
}
const char *kd_params_str(const kd_params *p, const char *key) {
  return kd_params_get_(p, key, KD_PARAM_STR)->s;
}
int kd_params_bool(const kd_params *p, const char *key) {
  return kd_params_get_(p, key, KD_PARAM_BOOL)->b;
}

int kd_params_role_i64(const kd_params *p, kd_param_role role, int64_t *value) {
  for (int i = 0; p && role != KD_PARAM_ROLE_NONE && i < p->n; i++)
    if (p->spec[i].role == (int)role && p->spec[i].type == KD_PARAM_INT) {
      *value = p->v[i].i;
      return i;
    }
  return -1;
}

/* position of s among the '|'-separated choices, or -1 */
static int kd_choice_index_(const char *choices, const char *s) {
  size_t n = strlen(s);
  const char *c = choices;
  for (int i = 0; *c; i++) {
    const char *bar = strchr(c, '|');
    size_t len = bar ? (size_t)(bar - c) : strlen(c);
    if (len == n && strncmp(c, s, n) == 0) return i;
    if (!bar) break;
    c = bar + 1;
  }
  return -1;
}

static int kd_choice_ok_(const char *choices, const char *s) {
  return kd_choice_index_(choices, s) >= 0;
}

kd_err kd_params_fill(const kd_params *p, void *out) {
  kd_err err = KD_OK;
  char *base = out;
  for (int i = 0; i < p->n; i++) {
    const kd_param_spec *s = &p->spec[i];
    const kd_param_val *v = &p->v[i];
    if (s->offset == 0) continue;
    char *at = base + (s->offset - 1);
    switch (s->type) {
      case KD_PARAM_INT:
        if (s->as_index) {
          const int k = (int)v->i;
          memcpy(at, &k, sizeof k);
        } else {
          memcpy(at, &v->i, sizeof v->i);
        }
        break;
      case KD_PARAM_F64:
        memcpy(at, &v->f, sizeof v->f);
        break;
      case KD_PARAM_BOOL:
        memcpy(at, &v->b, sizeof v->b);
        break;
      case KD_PARAM_STR:
        if (s->as_index) {
          int k = (s->choices && v->s) ? kd_choice_index_(s->choices, v->s) : -1;
          KD_CHECK(k >= 0, KD_ERR_CONFIG, "algorithm.%s = '%s' is not one of %s", s->key,
                   v->s ? v->s : "(unset)", s->choices ? s->choices : "(no choices)");
          memcpy(at, &k, sizeof k);
        } else {
          memcpy(at, &v->s, sizeof v->s);
        }
        break;
    }
  }
cleanup:
  return err;
}

/* the index of key (declared with type t: KD_ASSERT), or a config error naming ctx */
static kd_err kd_params_slot_(kd_params *p, const char *key, kd_param_type t, const char *ctx,
                              int *i) {
  kd_err err = KD_OK;
  *i = kd_params_index_(p, key);
  KD_CHECK(*i >= 0, KD_ERR_CONFIG, "%s: unknown key", ctx);
  KD_ASSERT(p->spec[*i].type == t);
cleanup:
  return err;
}

kd_err kd_params_set_i64(kd_params *p, const char *key, int64_t x, const char *ctx) {
  kd_err err = KD_OK;
  int i = 0;
  KD_TRY(kd_params_slot_(p, key, KD_PARAM_INT, ctx, &i));
  const kd_param_spec *s = &p->spec[i];
  KD_CHECK((double)x >= s->min && (double)x <= s->max, KD_ERR_CONFIG,
           "%s: %lld is out of range [%.17g, %.17g]", ctx, (long long)x, s->min, s->max);
  p->v[i].i = x;
  p->v[i].f = (double)x;
cleanup:
  return err;
}

kd_err kd_params_set_f64(kd_params *p, const char *key, double x, const char *ctx) {
  kd_err err = KD_OK;
  int i = 0;
  KD_TRY(kd_params_slot_(p, key, KD_PARAM_F64, ctx, &i));
  const kd_param_spec *s = &p->spec[i];
  KD_CHECK(isfinite(x), KD_ERR_CONFIG, "%s: expected a finite number, got %g", ctx, x);
  KD_CHECK(x >= s->min && x <= s->max, KD_ERR_CONFIG, "%s: %.17g is out of range [%.17g, %.17g]",
           ctx, x, s->min, s->max);
  p->v[i].f = x;
cleanup:
  return err;
}

kd_err kd_params_set_bool(kd_params *p, const char *key, int b, const char *ctx) {
  kd_err err = KD_OK;
  int i = 0;
  KD_TRY(kd_params_slot_(p, key, KD_PARAM_BOOL, ctx, &i));
  p->v[i].b = b != 0;
  p->v[i].i = p->v[i].b;
cleanup:
  return err;
}

kd_err kd_params_set_str(kd_params *p, const char *key, const char *text, const char *ctx) {
  kd_err err = KD_OK;
  int i = 0;
  KD_TRY(kd_params_slot_(p, key, KD_PARAM_STR, ctx, &i));
  const kd_param_spec *s = &p->spec[i];
  KD_CHECK(!s->choices || kd_choice_ok_(s->choices, text), KD_ERR_CONFIG,
           "%s: '%s' is not one of %s", ctx, text, s->choices);
  char *c = kd_strdup_(text);
  KD_CHECK(c, KD_ERR_MEM, "out of memory");
  free((void *)p->v[i].s);
  p->v[i].s = c;
cleanup:
  return err;
}

/* an integer from text: decimal, or an integral float such as 1e3 */
static int kd_params_parse_int_(const char *text, long long *x) {
  char *end = NULL;
  errno = 0;
  *x = strtoll(text, &end, 10);
  if (end != text && *end == '\0' && errno == 0) return 1;
  const double f = strtod(text, &end);
  if (end == text || *end != '\0' || f != floor(f) || !(fabs(f) < 9.0e18)) return 0;
  *x = (long long)f;
  return 1;
}

kd_err kd_params_set_text(kd_params *p, const char *key, const char *text, const char *ctx) {
  kd_err err = KD_OK;
  const int i = kd_params_index_(p, key);
  KD_CHECK(i >= 0, KD_ERR_CONFIG, "%s: unknown key", ctx);
  switch (p->spec[i].type) {
    case KD_PARAM_INT: {
      long long x = 0;
      KD_CHECK(kd_params_parse_int_(text, &x), KD_ERR_CONFIG, "%s: expected an integer, got '%s'",
               ctx, text);
      KD_TRY(kd_params_set_i64(p, key, (int64_t)x, ctx));
      break;
    }
    case KD_PARAM_F64: {
      char *end = NULL;
      const double f = strtod(text, &end);
      KD_CHECK(end != text && *end == '\0' && isfinite(f), KD_ERR_CONFIG,
               "%s: expected a finite number, got '%s'", ctx, text);
      KD_TRY(kd_params_set_f64(p, key, f, ctx));
      break;
    }
    case KD_PARAM_BOOL: {
      int b = -1;
      if (!strcmp(text, "true") || !strcmp(text, "yes") || !strcmp(text, "on") ||
          !strcmp(text, "1"))
        b = 1;
      else if (!strcmp(text, "false") || !strcmp(text, "no") || !strcmp(text, "off") ||
               !strcmp(text, "0"))
        b = 0;
      KD_CHECK(b >= 0, KD_ERR_CONFIG, "%s: expected true or false, got '%s'", ctx, text);
      KD_TRY(kd_params_set_bool(p, key, b, ctx));
      break;
    }
    case KD_PARAM_STR:
      KD_TRY(kd_params_set_str(p, key, text, ctx));
      break;
  }
cleanup:
  return err;
}
