/* config.c - YAML configuration: libyaml events -> a tree whose nodes keep their source line, typed
 * getters that validate and record the resolved value (defaults are inserted into the tree), the
 * unknown-key check and the resolved-config emitter (libyaml emitter).
 *
 * Messages have the form "FILE:LINE: key.path: what is wrong" (LINE from libyaml's marks, 1-based);
 * values that came from --set say "--set key.path: ..." and defaults name the file only. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "comm/dist_impl.h"
#include "io/io_impl.h"
#include "io/paths.h"

enum { KD_CN_SCALAR = 0, KD_CN_SEQ = 1, KD_CN_MAP = 2 };
enum { KD_ORIGIN_FILE = 0, KD_ORIGIN_SET = 1, KD_ORIGIN_DEFAULT = 2 };
#define KD_CFG_MAX_DEPTH 64
#define KD_CFG_MAX_BYTES (64 * 1024 * 1024)

typedef struct kd_cnode kd_cnode;
struct kd_cnode {
  int kind;
  char *key;   /* key in the parent mapping (NULL for sequence elements and the root) */
  char *val;   /* scalar text */
  int quoted;  /* scalar was written quoted (a string, never a number) */
  int is_null; /* plain null scalar: treated as absent */
  int line;    /* 1-based source line of the key / element, 0 if none */
  int origin;
  int used;
  int n, cap;
  kd_cnode **kids;
};

struct kd_config {
  char *name;
  kd_cnode *root;
  int built; /* kd_config_new: every value came from a typed setter; messages name only `name` */
};

/* ------------------------------------------------------------------ nodes */
static char *kd_cfg_strdup_(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

static void kd_cnode_free_(kd_cnode *n) {
  if (!n) return;
  for (int i = 0; i < n->n; i++) kd_cnode_free_(n->kids[i]);
  free(n->kids);
  free(n->key);
  free(n->val);
  free(n);
}

static kd_err kd_cnode_new_(int kind, int line, int origin, kd_cnode **out) {
  kd_err err = KD_OK;
  kd_cnode *n = NULL;
  KD_ALLOC(n, 1);
  n->kind = kind;
  n->line = line;
  n->origin = origin;
  *out = n;
cleanup:
  return err;
}

static kd_err kd_cnode_add_(kd_cnode *parent, kd_cnode *kid) {
  kd_err err = KD_OK;
  if (parent->n == parent->cap) {
    int cap = parent->cap ? 2 * parent->cap : 8;
    kd_cnode **k = realloc(parent->kids, (size_t)cap * sizeof *k);
    KD_CHECK(k, KD_ERR_MEM, "out of memory while parsing the configuration");
    parent->kids = k;
    parent->cap = cap;
  }
  parent->kids[parent->n++] = kid;
cleanup:
  return err;
}

static int kd_cfg_is_null_text_(const char *s) {
  return s[0] == '\0' || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
         !strcmp(s, "NULL");
}

/* Set a node to a plain scalar (used for defaults). */
static kd_err kd_cnode_set_scalar_(kd_cnode *n, const char *text, int quoted, int origin) {
  kd_err err = KD_OK;
  char *v = kd_cfg_strdup_(text);
  KD_CHECK(v, KD_ERR_MEM, "out of memory");
  for (int i = 0; i < n->n; i++) kd_cnode_free_(n->kids[i]);
  n->n = 0;
  free(n->val);
  n->val = v;
  n->kind = KD_CN_SCALAR;
  n->quoted = quoted;
  n->is_null = 0;
  n->origin = origin;
cleanup:
  return err;
}

/* ---------------------------------------------------------------- parsing */
typedef struct {
  yaml_parser_t *p;
  const char *name;
} kd_cfg_parse_;

static kd_err kd_cfg_next_(kd_cfg_parse_ *ps, yaml_event_t *ev) {
  kd_err err = KD_OK;
  if (!yaml_parser_parse(ps->p, ev)) {
    yaml_parser_t *p = ps->p;
    const char *what = p->problem ? p->problem : "malformed YAML";
    if (p->context)
      KD_FAIL(KD_ERR_CONFIG, "%s:%lu: YAML syntax error: %s (%s at line %lu)", ps->name,
              (unsigned long)p->problem_mark.line + 1, what, p->context,
              (unsigned long)p->context_mark.line + 1);
    KD_FAIL(KD_ERR_CONFIG, "%s:%lu: YAML syntax error: %s", ps->name,
            (unsigned long)p->problem_mark.line + 1, what);
  }
cleanup:
  return err;
}

/* The keys of one mapping being parsed: an open-addressing table of indices into node->kids, so
 * that duplicate detection is linear in the number of keys (a 5M-key file parses in seconds). */
typedef struct {
  int *slot; /* -1 = empty */
  size_t cap;
} kd_cfg_keys_;

static size_t kd_cfg_key_hash_(const char *k) {
  uint64_t h = 14695981039346656037ULL;
  for (; *k; k++) h = (h ^ (unsigned char)*k) * 1099511628211ULL;
  return (size_t)h;
}

/* Index of kid with this key, or -1. */
static int kd_cfg_keys_find_(const kd_cfg_keys_ *ks, const kd_cnode *node, const char *key) {
  if (!ks->cap) return -1;
  for (size_t i = kd_cfg_key_hash_(key) & (ks->cap - 1);; i = (i + 1) & (ks->cap - 1)) {
    if (ks->slot[i] < 0) return -1;
    if (!strcmp(node->kids[ks->slot[i]]->key, key)) return ks->slot[i];
  }
}

/* Record kid idx (already in node->kids); grows and rehashes at half load. */
static kd_err kd_cfg_keys_add_(kd_cfg_keys_ *ks, const kd_cnode *node, int idx) {
  kd_err err = KD_OK;
  if (2 * (size_t)(idx + 1) > ks->cap) {
    size_t cap = ks->cap ? 2 * ks->cap : 16;
    int *slot = malloc(cap * sizeof *slot);
    KD_CHECK(slot, KD_ERR_MEM, "out of memory (config keys)");
    for (size_t i = 0; i < cap; i++) slot[i] = -1;
    free(ks->slot);
    ks->slot = slot;
    ks->cap = cap;
    for (int k = 0; k < idx; k++) KD_TRY(kd_cfg_keys_add_(ks, node, k));
  }
  size_t i = kd_cfg_key_hash_(node->kids[idx]->key) & (ks->cap - 1);
  while (ks->slot[i] >= 0) i = (i + 1) & (ks->cap - 1);
  ks->slot[i] = idx;
cleanup:
  return err;
}

/* Parse the node starting with event *ev (consumed). */
static kd_err kd_cfg_parse_node_(kd_cfg_parse_ *ps, yaml_event_t *ev, int depth, kd_cnode **out) {
  kd_err err = KD_OK;
  kd_cnode *node = NULL, *kid = NULL;
  yaml_event_t e;
  int have_e = 0;
  kd_cfg_keys_ keys = {NULL, 0};
  const int line = (int)ev->start_mark.line + 1;
  *out = NULL;
  KD_CHECK(depth < KD_CFG_MAX_DEPTH, KD_ERR_CONFIG, "%s:%d: nesting deeper than %d levels",
           ps->name, line, KD_CFG_MAX_DEPTH);
  switch (ev->type) {
    case YAML_SCALAR_EVENT: {
      KD_TRY(kd_cnode_new_(KD_CN_SCALAR, line, KD_ORIGIN_FILE, &node));
      node->val = malloc(ev->data.scalar.length + 1);
      KD_CHECK(node->val, KD_ERR_MEM, "out of memory");
      memcpy(node->val, ev->data.scalar.value, ev->data.scalar.length);
      node->val[ev->data.scalar.length] = '\0';
      KD_CHECK(strlen(node->val) == ev->data.scalar.length, KD_ERR_CONFIG,
               "%s:%d: a value contains a NUL character", ps->name, line);
      node->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
      node->is_null = !node->quoted && kd_cfg_is_null_text_(node->val);
      break;
    }
    case YAML_SEQUENCE_START_EVENT:
      KD_TRY(kd_cnode_new_(KD_CN_SEQ, line, KD_ORIGIN_FILE, &node));
      for (;;) {
        KD_TRY(kd_cfg_next_(ps, &e));
        have_e = 1;
        if (e.type == YAML_SEQUENCE_END_EVENT) break;
        KD_TRY(kd_cfg_parse_node_(ps, &e, depth + 1, &kid));
        yaml_event_delete(&e);
        have_e = 0;
        KD_TRY(kd_cnode_add_(node, kid));
        kid = NULL;
      }
      break;
    case YAML_MAPPING_START_EVENT:
      KD_TRY(kd_cnode_new_(KD_CN_MAP, line, KD_ORIGIN_FILE, &node));
      for (;;) {
        KD_TRY(kd_cfg_next_(ps, &e));
        have_e = 1;
        if (e.type == YAML_MAPPING_END_EVENT) break;
        const int kline = (int)e.start_mark.line + 1;
        KD_CHECK(e.type == YAML_SCALAR_EVENT, KD_ERR_CONFIG,
                 "%s:%d: mapping keys must be plain names", ps->name, kline);
        char *key = malloc(e.data.scalar.length + 1);
        KD_CHECK(key, KD_ERR_MEM, "out of memory");
        memcpy(key, e.data.scalar.value, e.data.scalar.length);
        key[e.data.scalar.length] = '\0';
        yaml_event_delete(&e);
        have_e = 0;
        const int dup = kd_cfg_keys_find_(&keys, node, key);
        if (dup >= 0) {
          err = kd_err_set(KD_ERR_CONFIG, __FILE__, __LINE__,
                           "%s:%d: %s: duplicate key (first given at line %d)", ps->name, kline,
                           key, node->kids[dup]->line);
          free(key);
          goto cleanup;
        }
        if (strchr(key, '.') || key[0] == '\0') {
          err = kd_err_set(KD_ERR_CONFIG, __FILE__, __LINE__,
                           "%s:%d: '%s': key names must be non-empty and contain no '.'", ps->name,
                           kline, key);
          free(key);
          goto cleanup;
        }
        err = kd_cfg_next_(ps, &e);
        if (err) {
          free(key);
          goto cleanup;
        }
        have_e = 1;
        err = kd_cfg_parse_node_(ps, &e, depth + 1, &kid);
        if (err) {
          free(key);
          goto cleanup;
        }
        yaml_event_delete(&e);
        have_e = 0;
        kid->key = key;
        kid->line = kline;
        KD_TRY(kd_cnode_add_(node, kid));
        kid = NULL;
        KD_TRY(kd_cfg_keys_add_(&keys, node, node->n - 1));
      }
      break;
    case YAML_ALIAS_EVENT:
      KD_FAIL(KD_ERR_CONFIG, "%s:%d: YAML aliases (*name) are not supported", ps->name, line);
    default:
      KD_FAIL(KD_ERR_CONFIG, "%s:%d: unexpected YAML content", ps->name, line);
  }
  *out = node;
  node = NULL;
cleanup:
  free(keys.slot);
  if (have_e) yaml_event_delete(&e);
  kd_cnode_free_(kid);
  kd_cnode_free_(node);
  return err;
}

/* Parse a whole stream: the first document's root node (an empty stream gives *out = NULL). */
static kd_err kd_cfg_parse_bytes_(const char *bytes, size_t len, const char *name, kd_cnode **out) {
  kd_err err = KD_OK;
  yaml_parser_t parser;
  yaml_event_t ev;
  int have_parser = 0, have_ev = 0;
  kd_cnode *root = NULL;
  kd_cfg_parse_ ps = {&parser, name};
  *out = NULL;
  KD_CHECK(yaml_parser_initialize(&parser), KD_ERR_MEM, "cannot initialise the YAML parser");
  have_parser = 1;
  yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, len);
  for (;;) {
    KD_TRY(kd_cfg_next_(&ps, &ev));
    have_ev = 1;
    if (ev.type == YAML_STREAM_END_EVENT) break;
    if (ev.type == YAML_STREAM_START_EVENT || ev.type == YAML_DOCUMENT_START_EVENT ||
        ev.type == YAML_DOCUMENT_END_EVENT) {
      yaml_event_delete(&ev);
      have_ev = 0;
      continue;
    }
    KD_CHECK(root == NULL, KD_ERR_CONFIG, "%s:%lu: only one YAML document is allowed", name,
             (unsigned long)ev.start_mark.line + 1);
    KD_TRY(kd_cfg_parse_node_(&ps, &ev, 0, &root));
    yaml_event_delete(&ev);
    have_ev = 0;
  }
  *out = root;
  root = NULL;
cleanup:
  if (have_ev) yaml_event_delete(&ev);
  if (have_parser) yaml_parser_delete(&parser);
  kd_cnode_free_(root);
  return err;
}

static void kd_cnode_set_origin_(kd_cnode *n, int origin) {
  n->origin = origin;
  n->line = 0;
  for (int i = 0; i < n->n; i++) kd_cnode_set_origin_(n->kids[i], origin);
}

kd_err kd_config_load_string(const char *yaml, const char *name, kd_config **out) {
  kd_err err = KD_OK;
  kd_config *cfg = NULL;
  *out = NULL;
  KD_ALLOC(cfg, 1);
  cfg->name = kd_cfg_strdup_(name ? name : "<config>");
  KD_CHECK(cfg->name, KD_ERR_MEM, "out of memory");
  KD_TRY(kd_cfg_parse_bytes_(yaml, strlen(yaml), cfg->name, &cfg->root));
  if (!cfg->root || (cfg->root->kind == KD_CN_SCALAR && cfg->root->is_null)) {
    kd_cnode_free_(cfg->root);
    cfg->root = NULL;
    KD_TRY(kd_cnode_new_(KD_CN_MAP, 0, KD_ORIGIN_FILE, &cfg->root));
  }
  KD_CHECK(cfg->root->kind == KD_CN_MAP, KD_ERR_CONFIG,
           "%s:%d: the configuration must be a mapping of sections (task:, data:, ...)", cfg->name,
           cfg->root->line);
  *out = cfg;
  cfg = NULL;
cleanup:
  kd_config_destroy(&cfg);
  return err;
}

const char *kd_section_key(const kd_section *s, const char *key, char *buf, size_t len) {
  snprintf(buf, len, "%s.%s", s->prefix, key);
  return buf;
}

kd_err kd_config_new(const char *name, kd_config **out) {
  kd_err err = KD_OK;
  KD_TRY(kd_config_load_string("{}", name, out));
  (*out)->built = 1;
cleanup:
  return err;
}

kd_err kd_config_load(MPI_Comm comm, const char *path, kd_config **out) {
  kd_err err = KD_OK, lerr = KD_OK;
  char *buf = NULL;
  FILE *f = NULL;
  int64_t len = 0;
  *out = NULL;
  if (kd_dist_rank(comm) == 0) {
    lerr = kd_path_check_input(path, "config"); /* a FIFO is refused instead of blocking */
    if (!lerr) lerr = kd_path_claim(path, "config file", 0); /* no output may replace it */
    f = lerr ? NULL : fopen(path, "rb");
    if (!f) {
      if (!lerr)
        lerr = kd_err_set(KD_ERR_FILE, __FILE__, __LINE__, "%s: cannot open config file: %s", path,
                          strerror(errno));
    } else {
      size_t cap = 4096, n = 0;
      buf = malloc(cap + 1);
      while (buf && !lerr) {
        if (n == cap) {
          if (cap >= KD_CFG_MAX_BYTES) {
            lerr = kd_err_set(KD_ERR_CONFIG, __FILE__, __LINE__,
                              "%s: config file larger than %d bytes", path, KD_CFG_MAX_BYTES);
            break;
          }
          char *b = realloc(buf, 2 * cap + 1);
          if (!b) break;
          buf = b;
          cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
          if (ferror(f))
            lerr = kd_err_set(KD_ERR_FILE, __FILE__, __LINE__, "%s: cannot read config file: %s",
                              path, strerror(errno));
          break;
        }
      }
      if (!buf && !lerr) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "out of memory");
      len = (int64_t)n;
    }
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  KD_TRY(kd_dist_bcast(comm, &len, (int64_t)sizeof len, 0));
  if (kd_dist_rank(comm) != 0) KD_ALLOC(buf, len + 1);
  KD_TRY(kd_dist_bcast(comm, buf, len, 0));
  buf[len] = '\0';
  KD_CHECK(strlen(buf) == (size_t)len, KD_ERR_CONFIG, "%s: the file contains NUL bytes", path);
  KD_TRY(kd_config_load_string(buf, path, out));
cleanup:
  if (f) fclose(f);
  free(buf);
  return err;
}

void kd_config_destroy(kd_config **cfg) {
  if (!cfg || !*cfg) return;
  kd_cnode_free_((*cfg)->root);
  free((*cfg)->name);
  free(*cfg);
  *cfg = NULL;
}

const char *kd_config_name(const kd_config *cfg) { return cfg->name; }

const char *kd_config_yaml_version(void) { return yaml_get_version_string(); }

/* Deep copy of a node: structure, text, lines and origins; nothing marked read. */
static kd_err kd_cnode_clone_(const kd_cnode *src, kd_cnode **out) {
  kd_err err = KD_OK;
  kd_cnode *n = NULL, *kid = NULL;
  *out = NULL;
  KD_TRY(kd_cnode_new_(src->kind, src->line, src->origin, &n));
  n->quoted = src->quoted;
  n->is_null = src->is_null;
  if (src->key) KD_CHECK(n->key = kd_cfg_strdup_(src->key), KD_ERR_MEM, "out of memory");
  if (src->val) KD_CHECK(n->val = kd_cfg_strdup_(src->val), KD_ERR_MEM, "out of memory");
  for (int i = 0; i < src->n; i++) {
    KD_TRY(kd_cnode_clone_(src->kids[i], &kid));
    KD_TRY(kd_cnode_add_(n, kid));
    kid = NULL;
  }
  *out = n;
  n = NULL;
cleanup:
  kd_cnode_free_(kid);
  kd_cnode_free_(n);
  return err;
}

kd_err kd_config_clone(const kd_config *src, const char *name, kd_config **out) {
  kd_err err = KD_OK;
  kd_config *cfg = NULL;
  *out = NULL;
  KD_ALLOC(cfg, 1);
  cfg->name = kd_cfg_strdup_(name ? name : src->name);
  KD_CHECK(cfg->name, KD_ERR_MEM, "out of memory");
  KD_TRY(kd_cnode_clone_(src->root, &cfg->root));
  cfg->built = src->built;
  *out = cfg;
  cfg = NULL;
cleanup:
  kd_config_destroy(&cfg);
  return err;
}

/* ----------------------------------------------------------------- lookup */
static const char *kd_cfg_kind_name_(const kd_cnode *n) {
  if (n->kind == KD_CN_MAP) return "a mapping";
  if (n->kind == KD_CN_SEQ) return "a list";
  return "a value";
}

/* "FILE:LINE", "--set" or "FILE" for node n (NULL: the file). */
static const char *kd_cfg_where_node_(const kd_config *cfg, const kd_cnode *n, char *buf, int len) {
  if (n && n->origin == KD_ORIGIN_SET && !cfg->built)
    snprintf(buf, (size_t)len, "%s: --set", cfg->name);
  else if (n && n->line > 0)
    snprintf(buf, (size_t)len, "%s:%d", cfg->name, n->line);
  else
    snprintf(buf, (size_t)len, "%s", cfg->name);
  return buf;
}

static int kd_cfg_parse_index_(const char *s, size_t len, int *idx) {
  if (len == 0 || len > 9) return 0;
  int v = 0;
  for (size_t i = 0; i < len; i++) {
    if (!isdigit((unsigned char)s[i])) return 0;
    v = v * 10 + (s[i] - '0');
  }
  *idx = v;
  return 1;
}

/* Walk the dotted path. *node = the node (NULL if absent); *last = deepest existing node on the
 * path. If create, missing mappings / the leaf are created with `origin` (the leaf as a null
 * scalar). An intermediate node that is not a mapping/list is an error naming it. */
static kd_err kd_cfg_walk_(const kd_config *cfg, const char *key, int create, int origin,
                           kd_cnode **node, kd_cnode **last) {
  kd_err err = KD_OK;
  kd_cnode *cur = cfg->root, *nn = NULL;
  const char *p = key;
  char where[512];
  *node = NULL;
  if (last) *last = cur;
  if (!key || !key[0]) { /* "" or NULL: the root mapping */
    *node = cur;
    return KD_OK;
  }
  while (1) {
    const char *dot = strchr(p, '.');
    size_t len = dot ? (size_t)(dot - p) : strlen(p);
    KD_CHECK(len > 0, KD_ERR_CONFIG, "%s: '%s': malformed key path", cfg->name, key);
    kd_cnode *next = NULL;
    if (cur->kind == KD_CN_MAP) {
      for (int i = 0; i < cur->n; i++)
        if (strlen(cur->kids[i]->key) == len && !strncmp(cur->kids[i]->key, p, len)) {
          next = cur->kids[i];
          break;
        }
      if (!next && create) {
        KD_TRY(kd_cnode_new_(dot ? KD_CN_MAP : KD_CN_SCALAR, 0, origin, &nn));
        nn->key = malloc(len + 1);
        KD_CHECK(nn->key, KD_ERR_MEM, "out of memory");
        memcpy(nn->key, p, len);
        nn->key[len] = '\0';
        if (!dot) nn->is_null = 1;
        KD_TRY(kd_cnode_add_(cur, nn));
        next = nn;
        nn = NULL;
      }
    } else if (cur->kind == KD_CN_SEQ) {
      int idx = -1;
      KD_CHECK(kd_cfg_parse_index_(p, len, &idx), KD_ERR_CONFIG,
               "%s: %.*s: expected a mapping, got a list", kd_cfg_where_node_(cfg, cur, where, 512),
               (int)(p - key - 1 > 0 ? p - key - 1 : 0), key);
      if (idx < cur->n) next = cur->kids[idx];
      KD_CHECK(next || !create, KD_ERR_CONFIG,
               "%s: %s: list index %d is out of range (%d elements)",
               kd_cfg_where_node_(cfg, cur, where, 512), key, idx, cur->n);
    } else if (cur->is_null && create) {
      /* "section:" with nothing under it: becomes a mapping */
      cur->kind = KD_CN_MAP;
      cur->is_null = 0;
      free(cur->val);
      cur->val = NULL;
      continue;
    } else if (cur->is_null) {
      next = NULL;
    } else {
      KD_FAIL(KD_ERR_CONFIG, "%s: %.*s: expected a section (mapping), got %s '%s'",
              kd_cfg_where_node_(cfg, cur, where, 512), (int)(p - key - 1 > 0 ? p - key - 1 : 0),
              key, kd_cfg_kind_name_(cur), cur->val ? cur->val : "");
    }
    if (!next) goto cleanup;
    cur = next;
    if (last) *last = cur;
    if (!dot) break;
    p = dot + 1;
  }
  *node = cur;
cleanup:
  kd_cnode_free_(nn);
  return err;
}

/* kd_cfg_walk_ without creating and without touching the error message (the look-ups below
 * never report): *n is the node at key, NULL where there is none. */
static kd_err kd_cfg_find_quiet_(const kd_config *cfg, const char *key, kd_cnode **n) {
  char saved[1024];
  *n = NULL;
  snprintf(saved, sizeof saved, "%s", kd_err_message());
  kd_err e = kd_cfg_walk_(cfg, key, 0, 0, n, NULL);
  kd_err_set_message(saved);
  if (e != KD_OK) *n = NULL;
  return e;
}

int kd_config_has(const kd_config *cfg, const char *key) {
  kd_cnode *n = NULL;
  (void)kd_cfg_find_quiet_(cfg, key, &n);
  return n && !(n->kind == KD_CN_SCALAR && n->is_null);
}

const char *kd_config_where(const kd_config *cfg, const char *key, char *buf, int len) {
  kd_cnode *n = NULL, *last = NULL;
  char saved[1024];
  snprintf(saved, sizeof saved, "%s", kd_err_message());
  if (kd_cfg_walk_(cfg, key, 0, 0, &n, &last) != KD_OK) last = NULL;
  kd_err_set_message(saved);
  return kd_cfg_where_node_(cfg, n ? n : last, buf, len);
}

/* Find the scalar at key. *n = NULL when absent (or null). Errors if it is a list/mapping. */
static kd_err kd_cfg_scalar_(kd_config *cfg, const char *key, kd_cnode **n) {
  kd_err err = KD_OK;
  char where[512];
  KD_TRY(kd_cfg_walk_(cfg, key, 0, 0, n, NULL));
  if (*n && (*n)->kind != KD_CN_SCALAR)
    KD_FAIL_KEY(KD_ERR_CONFIG, key, "%s: %s: expected a single value, got %s",
                kd_cfg_where_node_(cfg, *n, where, 512), key, kd_cfg_kind_name_(*n));
  if (*n && (*n)->is_null) *n = NULL;
cleanup:
  return err;
}

/* Insert a default scalar at key (marks it used). */
static kd_err kd_cfg_default_(kd_config *cfg, const char *key, const char *text) {
  kd_err err = KD_OK;
  kd_cnode *n = NULL;
  KD_TRY(kd_cfg_walk_(cfg, key, 1, KD_ORIGIN_DEFAULT, &n, NULL));
  KD_TRY(kd_cnode_set_scalar_(n, text, 0, KD_ORIGIN_DEFAULT));
  n->used = 1;
cleanup:
  return err;
}

/* Shortest "%.Ng" text that reads back as exactly x. */
static void kd_cfg_fmt_f64_(double x, char *buf, size_t len) {
  if (isinf(x)) {
    snprintf(buf, len, "%s", x > 0 ? ".inf" : "-.inf");
    return;
  }
  if (isnan(x)) {
    snprintf(buf, len, ".nan");
    return;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, len, "%.*g", prec, x);
    if (strtod(buf, NULL) == x) return;
  }
}

static int kd_cfg_parse_f64_(const char *s, double *out) {
  char *end = NULL;
  if (!s[0] || isspace((unsigned char)s[0])) return 0;
  if (!strcmp(s, ".inf") || !strcmp(s, ".Inf") || !strcmp(s, "+.inf")) {
    *out = INFINITY;
    return 1;
  }
  if (!strcmp(s, "-.inf") || !strcmp(s, "-.Inf")) {
    *out = -INFINITY;
    return 1;
  }
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || *end != '\0') return 0;
  /* reject C-only spellings that YAML does not treat as numbers */
  for (const char *c = s; *c; c++)
    if (isalpha((unsigned char)*c) && *c != 'e' && *c != 'E') return 0;
  *out = x;
  return 1;
}

static void kd_cfg_fmt_bound_(double x, char *buf, size_t len) {
  if (isinf(x))
    snprintf(buf, len, "%sinf", x < 0 ? "-" : "");
  else
    kd_cfg_fmt_f64_(x, buf, len);
}

kd_err kd_config_get_f64(kd_config *cfg, const char *key, double def, double lo, double hi,
                         double *out) {
  kd_err err = KD_OK;
  kd_cnode *n = NULL;
  char where[512], a[40], b[40];
  double x = 0;
  KD_TRY(kd_cfg_scalar_(cfg, key, &n));
  if (!n) {
    kd_cfg_fmt_f64_(def, a, sizeof a);
    KD_TRY(kd_cfg_default_(cfg, key, a));
    *out = def;
    goto cleanup;
  }
  kd_cfg_where_node_(cfg, n, where, 512);
  KD_CHECK_KEY(!n->quoted && kd_cfg_parse_f64_(n->val, &x), KD_ERR_CONFIG, key,
               "%s: %s: expected a number, got '%s'", where, key, n->val);
  kd_cfg_fmt_bound_(lo, a, sizeof a);
  kd_cfg_fmt_bound_(hi, b, sizeof b);
  KD_CHECK_KEY(!isnan(x) && x >= lo && x <= hi, KD_ERR_CONFIG, key,
               "%s: %s: %s is out of range [%s, %s]", where, key, n->val, a, b);
  n->used = 1;
  *out = x;
cleanup:
  return err;
}

static int kd_cfg_parse_int_(const char *s, int64_t *out) {
  char *end = NULL;
  if (!s[0] || isspace((unsigned char)s[0])) return 0;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end != s && *end == '\0' && errno == 0) {
    *out = v;
    return 1;
  }
  double f = 0;
  if (!kd_cfg_parse_f64_(s, &f) || !(fabs(f) < 9.0e18) || f != floor(f)) return 0;
  *out = (int64_t)f;
  return 1;
}

kd_err kd_config_get_int(kd_config *cfg, const char *key, int64_t def, int64_t lo, int64_t hi,
                         int64_t *out) {
  kd_err err = KD_OK;
  kd_cnode *n = NULL;
  char where[512], a[40];
  int64_t x = 0;
  KD_TRY(kd_cfg_scalar_(cfg, key, &n));
  if (!n) {
    snprintf(a, sizeof a, "%lld", (long long)def);
    KD_TRY(kd_cfg_default_(cfg, key, a));
    *out = def;
    goto cleanup;
  }
  kd_cfg_where_node_(cfg, n, where, 512);
  KD_CHECK_KEY(!n->quoted && kd_cfg_parse_int_(n->val, &x), KD_ERR_CONFIG, key,
               "%s: %s: expected an integer, got '%s'", where, key, n->val);
  KD_CHECK_KEY(x >= lo && x <= hi, KD_ERR_CONFIG, key, "%s: %s: %s is out of range [%lld, %lld]",
               where, key, n->val, (long long)lo, (long long)hi);
  n->used = 1;
  *out = x;
cleanup:
  return err;
}

static int kd_cfg_parse_bool_(const char *s, int *b) {
  static const char *const t[] = {"true", "yes", "on"}, *const f[] = {"false", "no", "off"};
  for (int i = 0; i < 3; i++) {
    if (!strcasecmp(s, t[i])) return *b = 1, 1;
    if (!strcasecmp(s, f[i])) return *b = 0, 1;
  }
  return 0;
}

kd_err kd_config_get_bool(kd_config *cfg, const char *key, int def, int *out) {
  kd_err err = KD_OK;
  kd_cnode *n = NULL;
  char where[512];
  int b = 0;
  KD_TRY(kd_cfg_scalar_(cfg, key, &n));
  if (!n) {
    KD_TRY(kd_cfg_default_(cfg, key, def ? "true" : "false"));
    *out = def ? 1 : 0;
    goto cleanup;
  }
  KD_CHECK_KEY(!n->quoted && kd_cfg_parse_bool_(n->val, &b), KD_ERR_CONFIG, key,
               "%s: %s: expected true or false, got '%s'", kd_cfg_where_node_(cfg, n, where, 512),
               key, n->val);
  n->used = 1;
  *out = b;
cleanup:
  return err;
}

static int kd_cfg_choice_ok_(const char *choices, const char *s) {
  size_t n = strlen(s);
  const char *c = choices;
  for (;;) {
    const char *bar = strchr(c, '|');
    size_t len = bar ? (size_t)(bar - c) : strlen(c);
    if (len == n && strncmp(c, s, n) == 0) return 1;
    if (!bar) return 0;
    c = bar + 1;
  }
}

kd_err kd_config_get_str(kd_config *cfg, const char *key, const char *def, const char *choices,
                         int required, const char **out) {
  kd_err err = KD_OK;
  kd_cnode *n = NULL, *last = NULL;
  char where[512];
  KD_TRY(kd_cfg_scalar_(cfg, key, &n));
  if (!n) {
    if (required || !def) {
      KD_TRY(kd_cfg_walk_(cfg, key, 0, 0, &n, &last));
      if (choices)
        KD_FAIL_KEY(KD_ERR_CONFIG, key, "%s: %s: required key is missing (one of: %s)",
                    kd_cfg_where_node_(cfg, last, where, 512), key, choices);
      KD_FAIL_KEY(KD_ERR_CONFIG, key, "%s: %s: required key is missing",
                  kd_cfg_where_node_(cfg, last, where, 512), key);
    }
    KD_TRY(kd_cfg_default_(cfg, key, def));
    KD_TRY(kd_cfg_scalar_(cfg, key, &n));
  }
  if (choices && !kd_cfg_choice_ok_(choices, n->val))
    KD_FAIL_KEY(KD_ERR_CONFIG, key, "%s: %s: '%s' is not one of %s",
                kd_cfg_where_node_(cfg, n, where, 512), key, n->val, choices);
  n->used = 1;
  *out = n->val;
cleanup:
  return err;
}

kd_err kd_config_get_f64_list(kd_config *cfg, const char *key, int required, int *nout,
                              double **out) {
  kd_err err = KD_OK;
  kd_cnode *n = NULL, *last = NULL;
  double *v = NULL;
  char where[512];
  *nout = 0;
  *out = NULL;
  KD_TRY(kd_cfg_walk_(cfg, key, 0, 0, &n, &last));
  if (!n || (n->kind == KD_CN_SCALAR && n->is_null)) {
    KD_CHECK_KEY(!required, KD_ERR_CONFIG, key, "%s: %s: required key is missing",
                 kd_cfg_where_node_(cfg, last, where, 512), key);
    goto cleanup;
  }
  if (n->kind == KD_CN_SCALAR) {
    KD_ALLOC(v, 1);
    KD_CHECK_KEY(!n->quoted && kd_cfg_parse_f64_(n->val, &v[0]) && isfinite(v[0]), KD_ERR_CONFIG,
                 key, "%s: %s: expected a finite number or a list of numbers, got '%s'",
                 kd_cfg_where_node_(cfg, n, where, 512), key, n->val);
    *nout = 1;
  } else {
    KD_CHECK_KEY(n->kind == KD_CN_SEQ, KD_ERR_CONFIG, key,
                 "%s: %s: expected a list of numbers, got %s",
                 kd_cfg_where_node_(cfg, n, where, 512), key, kd_cfg_kind_name_(n));
    KD_ALLOC(v, n->n);
    for (int i = 0; i < n->n; i++) {
      kd_cnode *e = n->kids[i];
      KD_CHECK_KEY(e->kind == KD_CN_SCALAR && !e->quoted && kd_cfg_parse_f64_(e->val, &v[i]) &&
                       isfinite(v[i]),
                   KD_ERR_CONFIG, key, "%s: %s.%d: expected a finite number, got %s%s%s",
                   kd_cfg_where_node_(cfg, e, where, 512), key, i,
                   e->kind == KD_CN_SCALAR ? "'" : kd_cfg_kind_name_(e),
                   e->kind == KD_CN_SCALAR ? e->val : "", e->kind == KD_CN_SCALAR ? "'" : "");
      e->used = 1;
    }
    *nout = n->n;
  }
  n->used = 1;
  *out = v;
  v = NULL;
cleanup:
  free(v);
  return err;
}

int kd_config_count(const kd_config *cfg, const char *key) {
  kd_cnode *n = NULL;
  (void)kd_cfg_find_quiet_(cfg, key, &n);
  if (!n || n->kind == KD_CN_SCALAR) return 0;
  return n->n;
}

const char *kd_config_key_at(const kd_config *cfg, const char *key, int i) {
  kd_cnode *n = NULL;
  (void)kd_cfg_find_quiet_(cfg, key, &n);
  if (!n || n->kind != KD_CN_MAP || i < 0 || i >= n->n) return NULL;
  return n->kids[i]->key;
}

kd_value_kind kd_config_value(const kd_config *cfg, const char *key, double *num, int64_t *inum,
                              char *buf, int len) {
  kd_cnode *n = NULL;
  double x = 0;
  int64_t i = 0;
  if (buf && len > 0) buf[0] = '\0';
  (void)kd_cfg_find_quiet_(cfg, key, &n);
  if (!n || n->kind != KD_CN_SCALAR || n->is_null || !n->val) return KD_VALUE_NONE;
  if (!n->quoted && (!strcmp(n->val, "true") || !strcmp(n->val, "false"))) {
    if (inum) *inum = n->val[0] == 't';
    return KD_VALUE_BOOL;
  }
  if (!n->quoted && kd_cfg_parse_int_(n->val, &i) &&
      strspn(n->val, "+-0123456789") == strlen(n->val)) {
    if (inum) *inum = i;
    if (num) *num = (double)i;
    return KD_VALUE_INT;
  }
  if (!n->quoted && kd_cfg_parse_f64_(n->val, &x)) {
    if (num) *num = x;
    return KD_VALUE_REAL;
  }
  if (buf && len > 0) snprintf(buf, (size_t)len, "%s", n->val);
  return KD_VALUE_TEXT;
}

static void kd_cnode_mark_used_(kd_cnode *n) {
  n->used = 1;
  for (int i = 0; i < n->n; i++) kd_cnode_mark_used_(n->kids[i]);
}

kd_err kd_config_mark_read(kd_config *cfg, const char *key) {
  kd_err err = KD_OK;
  kd_cnode *n = NULL;
  KD_TRY(kd_cfg_walk_(cfg, key, 0, 0, &n, NULL));
  if (n) kd_cnode_mark_used_(n);
cleanup:
  return err;
}

kd_err kd_config_get_params(kd_config *cfg, const char *section, const kd_param_spec *spec, int n,
                            kd_params *out) {
  kd_err err = KD_OK;
  char key[256], where[512], ctx[800];
  kd_cnode *node = NULL;
  KD_TRY(kd_params_defaults(spec, n, out));
  for (int i = 0; i < n; i++) {
    snprintf(key, sizeof key, "%s.%s", section, spec[i].key);
    switch (spec[i].type) {
      case KD_PARAM_INT: {
        int64_t v = 0;
        KD_TRY(kd_config_get_int(cfg, key, (int64_t)spec[i].def,
                                 spec[i].min <= -9.2e18 ? INT64_MIN : (int64_t)spec[i].min,
                                 spec[i].max >= 9.2e18 ? INT64_MAX : (int64_t)spec[i].max, &v));
        out->v[i].i = v;
        out->v[i].f = (double)v;
        break;
      }
      case KD_PARAM_F64:
        KD_TRY(kd_config_get_f64(cfg, key, spec[i].def, spec[i].min, spec[i].max, &out->v[i].f));
        break;
      case KD_PARAM_BOOL:
        KD_TRY(kd_config_get_bool(cfg, key, spec[i].def != 0.0, &out->v[i].b));
        out->v[i].i = out->v[i].b;
        break;
      case KD_PARAM_STR: {
        const char *s = NULL;
        KD_TRY(kd_config_get_str(cfg, key, spec[i].def_str, spec[i].choices,
                                 spec[i].def_str == NULL, &s));
        KD_TRY(kd_cfg_walk_(cfg, key, 0, 0, &node, NULL));
        snprintf(ctx, sizeof ctx, "%s: %s", kd_cfg_where_node_(cfg, node, where, 512), key);
        KD_TRY(kd_params_set_text(out, spec[i].key, s, ctx));
        break;
      }
    }
  }
cleanup:
  if (err) kd_params_free(out);
  return err;
}

kd_err kd_config_default_f64_list(kd_config *cfg, const char *key, int n, const double *v) {
  kd_err err = KD_OK;
  kd_cnode *node = NULL, *e = NULL;
  char text[40];
  if (kd_config_has(cfg, key)) return KD_OK;
  KD_TRY(kd_cfg_walk_(cfg, key, 1, KD_ORIGIN_DEFAULT, &node, NULL));
  node->kind = KD_CN_SEQ;
  node->is_null = 0;
  free(node->val);
  node->val = NULL;
  for (int i = 0; i < n; i++) {
    KD_TRY(kd_cnode_new_(KD_CN_SCALAR, 0, KD_ORIGIN_DEFAULT, &e));
    kd_cfg_fmt_f64_(v[i], text, sizeof text);
    KD_TRY(kd_cnode_set_scalar_(e, text, 0, KD_ORIGIN_DEFAULT));
    e->used = 1;
    KD_TRY(kd_cnode_add_(node, e));
    e = NULL;
  }
  node->used = 1;
cleanup:
  kd_cnode_free_(e);
  return err;
}

/* ------------------------------------------------------ unused-key check */
/* A map whose every entry went unread is reported as a whole (the section itself is unknown). */
static int kd_cfg_any_used_(const kd_cnode *n) {
  if (n->used) return 1;
  for (int i = 0; i < n->n; i++)
    if (kd_cfg_any_used_(n->kids[i])) return 1;
  return 0;
}

static kd_err kd_cfg_unused_(const kd_config *cfg, const kd_cnode *parent, const kd_cnode *n,
                             const char *path) {
  kd_err err = KD_OK;
  char where[512], sub[512], known[400];
  if (n->used) return KD_OK;
  if ((n->kind == KD_CN_SCALAR) || n->n == 0) {
    if (n->kind == KD_CN_SCALAR && n->is_null && n->origin == KD_ORIGIN_DEFAULT) return KD_OK;
    known[0] = '\0';
    if (parent && parent->kind == KD_CN_MAP)
      for (int i = 0; i < parent->n; i++) {
        const kd_cnode *s = parent->kids[i];
        int s_used = kd_cfg_any_used_(s);
        if (s == n || !s_used) continue;
        size_t l = strlen(known);
        if (l + strlen(s->key) + 3 >= sizeof known) break;
        snprintf(known + l, sizeof known - l, "%s%s", l ? ", " : "", s->key);
      }
    if (known[0]) {
      err = kd_err_set_key(KD_ERR_CONFIG, path, __FILE__, __LINE__,
                           "%s: %s: unknown key (keys read here: %s)",
                           kd_cfg_where_node_(cfg, n, where, 512), path, known);
      kd_err_set_known(path, known);
      goto cleanup;
    }
    KD_FAIL_KEY(KD_ERR_CONFIG, path, "%s: %s: unknown key (not used by this configuration)",
                kd_cfg_where_node_(cfg, n, where, 512), path);
  }
  for (int i = 0; i < n->n; i++) {
    const kd_cnode *k = n->kids[i];
    if (n->kind == KD_CN_MAP)
      snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", k->key);
    else
      snprintf(sub, sizeof sub, "%s.%d", path, i);
    KD_TRY(kd_cfg_unused_(cfg, n, k, sub));
  }
cleanup:
  return err;
}

/* The kd_cfg_unused_ verdict on n without a message: 1 if nothing at or under n would be reported.
 */
static int kd_cfg_all_read_(const kd_cnode *n) {
  if (n->used) return 1;
  if (n->kind == KD_CN_SCALAR || n->n == 0)
    return n->kind == KD_CN_SCALAR && n->is_null && n->origin == KD_ORIGIN_DEFAULT;
  for (int i = 0; i < n->n; i++)
    if (!kd_cfg_all_read_(n->kids[i])) return 0;
  return 1;
}

int kd_config_is_read(const kd_config *cfg, const char *key) {
  kd_cnode *n = NULL;
  if (kd_cfg_find_quiet_(cfg, key, &n) != KD_OK) return 0;
  return !n || kd_cfg_all_read_(n);
}

kd_err kd_config_check_unused(const kd_config *cfg) {
  kd_err err = KD_OK;
  char where[512], known[400] = "";
  const kd_cnode *r = cfg->root;
  for (int i = 0; i < r->n; i++)
    if (kd_cfg_any_used_(r->kids[i])) {
      size_t l = strlen(known);
      if (l + strlen(r->kids[i]->key) + 3 < sizeof known)
        snprintf(known + l, sizeof known - l, "%s%s", l ? ", " : "", r->kids[i]->key);
    }
  for (int i = 0; i < r->n; i++) {
    const kd_cnode *s = r->kids[i];
    if (s->kind == KD_CN_SCALAR && !s->used && !(s->is_null && s->origin != 0))
      KD_FAIL_KEY(KD_ERR_CONFIG, s->key, "%s: %s: unknown key (sections read: %s)",
                  kd_cfg_where_node_(cfg, s, where, 512), s->key, known);
    if (!kd_cfg_any_used_(s) && !(s->kind == KD_CN_SCALAR && s->is_null && s->origin != 0))
      KD_FAIL_KEY(KD_ERR_CONFIG, s->key, "%s: %s: unknown or unused section (sections read: %s)",
                  kd_cfg_where_node_(cfg, s, where, 512), s->key, known);
    KD_TRY(kd_cfg_unused_(cfg, r, s, s->key));
  }
cleanup:
  return err;
}

/* ---------------------------------------------------------------- --set */
/* Levels below n (0 for a scalar); bounded by the parser's depth limit. */
static int kd_cnode_height_(const kd_cnode *n) {
  int h = 0;
  for (int i = 0; n->kind != KD_CN_SCALAR && i < n->n; i++) {
    const int k = 1 + kd_cnode_height_(n->kids[i]);
    if (k > h) h = k;
  }
  return h;
}

/* 1 if key is a dotted key path of letters, digits, '_', '-' and '.' */
static int kd_cfg_key_path_ok_(const char *key) {
  if (!key || !key[0]) return 0;
  for (const char *c = key; *c; c++)
    if (!(isalnum((unsigned char)*c) || *c == '_' || *c == '.' || *c == '-')) return 0;
  return 1;
}

kd_err kd_config_set(kd_config *cfg, const char *assignment) {
  kd_err err = KD_OK;
  char *key = NULL;
  kd_cnode *val = NULL, *n = NULL;
  const char *eq = strchr(assignment, '=');
  KD_CHECK(eq && eq != assignment, KD_ERR_ARG, "--set %s: expected key.path=value", assignment);
  KD_CHECK(eq[1] != '\0', KD_ERR_ARG, "--set %s: the value is empty", assignment);
  key = malloc((size_t)(eq - assignment) + 1);
  KD_CHECK(key, KD_ERR_MEM, "out of memory");
  memcpy(key, assignment, (size_t)(eq - assignment));
  key[eq - assignment] = '\0';
  KD_CHECK(kd_cfg_key_path_ok_(key), KD_ERR_ARG,
           "--set %s: '%s' is not a key path (letters, digits, '_', '-', '.')", assignment, key);
  {
    char name[600];
    snprintf(name, sizeof name, "--set %s", key);
    KD_TRY(kd_cfg_parse_bytes_(eq + 1, strlen(eq + 1), name, &val));
  }
  KD_CHECK(val, KD_ERR_ARG, "--set %s: the value is empty", assignment);
  {
    /* the value lands as many levels down as the key has parts: the whole must stay within the
     * limit the parser holds a file to, or the resolved config (stored in every output) could not
     * be read back (found by tests/fuzz/lf/lf_config.c) */
    int levels = 1;
    for (const char *c = key; *c; c++) levels += *c == '.';
    KD_CHECK(levels + kd_cnode_height_(val) < KD_CFG_MAX_DEPTH, KD_ERR_ARG,
             "--set %s: nesting deeper than %d levels", key, KD_CFG_MAX_DEPTH);
  }
  KD_TRY(kd_cfg_walk_(cfg, key, 1, KD_ORIGIN_SET, &n, NULL));
  /* replace n's content with val's, keeping n's key */
  for (int i = 0; i < n->n; i++) kd_cnode_free_(n->kids[i]);
  free(n->kids);
  free(n->val);
  n->kind = val->kind;
  n->val = val->val;
  n->quoted = val->quoted;
  n->is_null = val->is_null;
  n->kids = val->kids;
  n->n = val->n;
  n->cap = val->cap;
  n->used = 0;
  val->val = NULL;
  val->kids = NULL;
  val->n = val->cap = 0;
  kd_cnode_set_origin_(n, KD_ORIGIN_SET);
cleanup:
  kd_cnode_free_(val);
  free(key);
  return err;
}

/* The typed setters: the scalar at key (created, or replacing what was there, as --set does)
 * holds text; quoted marks a string that must never read back as a number or null. */
static kd_err kd_cfg_set_scalar_(kd_config *cfg, const char *key, const char *text, int quoted,
                                 int is_null) {
  kd_err err = KD_OK;
  kd_cnode *n = NULL;
  int levels = 1;
  KD_CHECK(kd_cfg_key_path_ok_(key), KD_ERR_ARG,
           "'%s' is not a key path (letters, digits, '_', '-', '.')", key ? key : "(null)");
  for (const char *c = key; *c; c++) levels += *c == '.';
  KD_CHECK_KEY(levels < KD_CFG_MAX_DEPTH, KD_ERR_ARG, key, "%s: nesting deeper than %d levels", key,
               KD_CFG_MAX_DEPTH);
  KD_TRY(kd_cfg_walk_(cfg, key, 1, KD_ORIGIN_SET, &n, NULL));
  KD_TRY(kd_cnode_set_scalar_(n, text, quoted, KD_ORIGIN_SET));
  n->is_null = is_null;
  n->used = 0;
cleanup:
  return err;
}

kd_err kd_config_set_str(kd_config *cfg, const char *key, const char *value) {
  kd_err err = KD_OK;
  KD_CHECK_KEY(value, KD_ERR_ARG, key, "%s: no value given", key ? key : "(null)");
  KD_TRY(kd_cfg_set_scalar_(cfg, key, value, 1, 0));
cleanup:
  return err;
}

kd_err kd_config_set_int(kd_config *cfg, const char *key, int64_t value) {
  char text[32];
  snprintf(text, sizeof text, "%lld", (long long)value);
  return kd_cfg_set_scalar_(cfg, key, text, 0, 0);
}

kd_err kd_config_set_f64(kd_config *cfg, const char *key, double value) {
  kd_err err = KD_OK;
  char text[40];
  KD_CHECK_KEY(isfinite(value), KD_ERR_ARG, key, "%s: %g is not a finite number",
               key ? key : "(null)", value);
  kd_cfg_fmt_f64_(value, text, sizeof text); /* the shortest text that reads back as value */
  KD_TRY(kd_cfg_set_scalar_(cfg, key, text, 0, 0));
cleanup:
  return err;
}

kd_err kd_config_set_f64_array(kd_config *cfg, const char *key, const double *v, int64_t rows,
                               int cols) {
  kd_err err = KD_OK;
  kd_cnode *n = NULL, *row = NULL, *x = NULL;
  char text[40];
  const int64_t total = cols > 0 ? rows * cols : rows;
  KD_CHECK(rows >= 1 && cols >= 0 && rows <= 100000000 / (cols > 0 ? cols : 1) && v, KD_ERR_ARG,
           "%s: a list of %lld x %d values cannot be set", key ? key : "(null)", (long long)rows,
           cols);
  for (int64_t i = 0; i < total; i++)
    KD_CHECK(isfinite(v[i]), KD_ERR_ARG, "%s: value %lld is %g, not a finite number", key,
             (long long)i, v[i]);
  KD_TRY(kd_cfg_set_scalar_(cfg, key, "null", 0, 1));
  KD_TRY(kd_cfg_walk_(cfg, key, 0, 0, &n, NULL));
  n->kind = KD_CN_SEQ;
  n->is_null = 0;
  free(n->val);
  n->val = NULL;
  for (int64_t r = 0; r < rows; r++) {
    kd_cnode *into = n;
    if (cols > 0) {
      KD_TRY(kd_cnode_new_(KD_CN_SEQ, 0, KD_ORIGIN_SET, &row));
      KD_TRY(kd_cnode_add_(n, row));
      into = row;
      row = NULL;
    }
    for (int j = 0; j < (cols > 0 ? cols : 1); j++) {
      kd_cfg_fmt_f64_(v[r * (cols > 0 ? cols : 1) + j], text, sizeof text);
      KD_TRY(kd_cnode_new_(KD_CN_SCALAR, 0, KD_ORIGIN_SET, &x));
      KD_TRY(kd_cnode_set_scalar_(x, text, 0, KD_ORIGIN_SET));
      KD_TRY(kd_cnode_add_(into, x));
      x = NULL;
    }
  }
cleanup:
  kd_cnode_free_(row);
  kd_cnode_free_(x);
  return err;
}

kd_err kd_config_set_bool(kd_config *cfg, const char *key, int value) {
  return kd_cfg_set_scalar_(cfg, key, value ? "true" : "false", 0, 0);
}

kd_err kd_config_set_null(kd_config *cfg, const char *key) {
  return kd_cfg_set_scalar_(cfg, key, "null", 0, 1);
}

/* ------------------------------------------------------------- emitting */
typedef struct {
  char *buf;
  size_t len, cap;
  int oom;
} kd_cfg_out_;

static int kd_cfg_write_(void *data, unsigned char *buffer, size_t size) {
  kd_cfg_out_ *o = data;
  if (o->len + size + 1 > o->cap) {
    size_t cap = o->cap ? o->cap : 1024;
    while (o->len + size + 1 > cap) cap *= 2;
    char *b = realloc(o->buf, cap);
    if (!b) {
      o->oom = 1;
      return 0;
    }
    o->buf = b;
    o->cap = cap;
  }
  memcpy(o->buf + o->len, buffer, size);
  o->len += size;
  o->buf[o->len] = '\0';
  return 1;
}

static int kd_cfg_emit_scalar_(yaml_emitter_t *em, const char *text, int quoted) {
  yaml_event_t ev;
  if (!text[0]) quoted = 1; /* an empty string must not read back as null */
  if (!yaml_scalar_event_initialize(
          &ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text), !quoted, 1,
          quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE))
    return 0;
  return yaml_emitter_emit(em, &ev);
}

static int kd_cfg_emit_node_(yaml_emitter_t *em, const kd_cnode *n) {
  yaml_event_t ev;
  if (n->kind == KD_CN_SCALAR)
    return kd_cfg_emit_scalar_(em, n->is_null ? "null" : n->val, n->quoted);
  if (n->kind == KD_CN_SEQ) {
    int flat = 1;
    for (int i = 0; i < n->n; i++)
      if (n->kids[i]->kind != KD_CN_SCALAR) flat = 0;
    if (!yaml_sequence_start_event_initialize(
            &ev, NULL, NULL, 1, flat ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE) ||
        !yaml_emitter_emit(em, &ev))
      return 0;
    for (int i = 0; i < n->n; i++)
      if (!kd_cfg_emit_node_(em, n->kids[i])) return 0;
    if (!yaml_sequence_end_event_initialize(&ev)) return 0;
    return yaml_emitter_emit(em, &ev);
  }
  if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
      !yaml_emitter_emit(em, &ev))
    return 0;
  for (int i = 0; i < n->n; i++) {
    const kd_cnode *k = n->kids[i];
    if (k->kind == KD_CN_SCALAR && k->is_null && k->origin == KD_ORIGIN_DEFAULT) continue;
    if (!kd_cfg_emit_scalar_(em, k->key, 0) || !kd_cfg_emit_node_(em, k)) return 0;
  }
  if (!yaml_mapping_end_event_initialize(&ev)) return 0;
  return yaml_emitter_emit(em, &ev);
}

/* One YAML document of the node n (or, with key, of the mapping {key: n}) into *yaml. */
static kd_err kd_config_emit_(const kd_cnode *n, const char *key, char **yaml) {
  kd_err err = KD_OK;
  yaml_emitter_t em;
  yaml_event_t ev;
  int have_em = 0;
  kd_cfg_out_ o = {NULL, 0, 0, 0};
  *yaml = NULL;
  KD_CHECK(yaml_emitter_initialize(&em), KD_ERR_MEM, "cannot initialise the YAML emitter");
  have_em = 1;
  yaml_emitter_set_output(&em, kd_cfg_write_, &o);
  yaml_emitter_set_width(&em, 100);
  yaml_emitter_set_unicode(&em, 1);
  int ok =
      yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&em, &ev) &&
      yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && yaml_emitter_emit(&em, &ev);
  if (ok && key)
    ok = yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) &&
         yaml_emitter_emit(&em, &ev) && kd_cfg_emit_scalar_(&em, key, 0);
  ok = ok && kd_cfg_emit_node_(&em, n);
  if (ok && key) ok = yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(&em, &ev);
  ok = ok && yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&em, &ev) &&
       yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&em, &ev) &&
       yaml_emitter_flush(&em);
  KD_CHECK(!o.oom, KD_ERR_MEM, "out of memory while writing the resolved configuration");
  KD_CHECK(ok, KD_ERR_INTERNAL, "YAML emitter failed: %s",
           em.problem ? em.problem : "unknown problem");
  *yaml = o.buf;
  o.buf = NULL;
cleanup:
  if (have_em) yaml_emitter_delete(&em);
  free(o.buf);
  return err;
}

kd_err kd_config_emit_resolved(const kd_config *cfg, char **yaml) {
  return kd_config_emit_(cfg->root, NULL, yaml);
}

kd_err kd_config_emit_section(const kd_config *cfg, const char *key, char **yaml) {
  kd_err err = KD_OK;
  kd_cnode *n = NULL;
  *yaml = NULL;
  KD_TRY(kd_cfg_walk_(cfg, key, 0, 0, &n, NULL));
  KD_CHECK(n != NULL, KD_ERR_CONFIG, "%s: the configuration has no key '%s'", cfg->name, key);
  KD_TRY(kd_config_emit_(n, key, yaml));
cleanup:
  return err;
}
