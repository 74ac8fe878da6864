/* paths.c - input and output path checks (io/paths.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "io/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kd_path_kind_(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

kd_err kd_path_check_input(const char *path, const char *role) {
  kd_err err = KD_OK;
  struct stat st;
  int fd = -1;
  KD_CHECK(strlen(path) <= KD_PATH_MAX, KD_ERR_FILE,
           "%.60s...: the %s path is %zu characters long; at most %d are accepted", path, role,
           strlen(path), KD_PATH_MAX);
  /* O_NONBLOCK: opening a FIFO with no writer must not block; the type is then checked */
  fd = open(path, O_RDONLY | O_NONBLOCK);
  KD_CHECK(fd >= 0, KD_ERR_FILE, "%s: cannot open %s: %s", path,
           strcmp(role, "config") ? "file" : "config file", strerror(errno));
  KD_CHECK(fstat(fd, &st) == 0, KD_ERR_FILE, "%s: cannot stat %s file: %s", path, role,
           strerror(errno));
  KD_CHECK(S_ISREG(st.st_mode), KD_ERR_FILE, "%s: the %s file is %s, not a regular file", path,
           role, kd_path_kind_(st.st_mode));
cleanup:
  if (fd >= 0) close(fd);
  return err;
}

/* The strings parts[0..n) joined by sep into out[len] (cut at len - 1). */
static void kd_path_join_(char *out, size_t len, const char *sep, const char *const *parts, int n) {
  size_t o = 0;
  for (int i = 0; i < n; i++) {
    for (const char *c = i ? sep : ""; *c && o + 1 < len; c++) out[o++] = *c;
    for (const char *c = parts[i]; *c && o + 1 < len; c++) out[o++] = *c;
  }
  out[o] = '\0';
}

/* dir + "/" + path made absolute against the working directory into out[len] (best effort). */
static void kd_path_abs_(const char *dir, const char *path, char *out, size_t len) {
  char cwd[4096] = ".";
  if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, ".");
  const char *parts[3] = {cwd, dir ? dir : path, path};
  if (path[0] == '/')
    kd_path_join_(out, len, "/", parts + 2, 1);
  else if (!dir)
    kd_path_join_(out, len, "/", parts, 2);
  else if (dir[0] == '/')
    kd_path_join_(out, len, "/", parts + 1, 2);
  else
    kd_path_join_(out, len, "/", parts, 3);
}

int kd_path_input_missing(const char *path, const char *cfg_file, char *out, size_t len) {
  struct stat st;
  char a[4096], b[4096], dir[4096];
  if (!path[0] || stat(path, &st) == 0 || errno != ENOENT) return 0;
  kd_path_abs_(NULL, path, a, sizeof a);
  const char *slash = cfg_file ? strrchr(cfg_file, '/') : NULL;
  if (path[0] == '/' || !slash) {
    snprintf(out, len, "%s", a);
    return 1;
  }
  snprintf(dir, sizeof dir, "%.*s", (int)(slash - cfg_file), cfg_file);
  kd_path_abs_(dir, path, b, sizeof b);
  const char *ab[2] = {a, b};
  kd_path_join_(out, len, " and ", ab, 2);
  return 1;
}

/* The directory part of path ("." when there is none) into a malloc'ed string. */
static kd_err kd_path_dir_(const char *path, char **out) {
  kd_err err = KD_OK;
  const char *slash = strrchr(path, '/');
  const size_t n = slash ? (size_t)(slash - path) : 0;
  char *dir = NULL;
  KD_ALLOC(dir, n + 2);
  if (slash)
    memcpy(dir, path, n ? n : 1); /* "/x" -> "/" */
  else
    dir[0] = '.';
  *out = dir;
cleanup:
  return err;
}

/* mkdir -p of dir. */
static kd_err kd_path_mkdirs_(const char *dir, const char *path, const char *role) {
  kd_err err = KD_OK;
  char *p = NULL;
  const size_t n = strlen(dir);
  KD_ALLOC(p, n + 2);
  memcpy(p, dir, n + 1);
  p[n] = '/';
  for (size_t i = 1; i <= n; i++) {
    if (p[i] != '/') continue;
    p[i] = '\0';
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
      KD_FAIL(KD_ERR_IO, "%s: %s: cannot create directory %s: %s", role, path, p, strerror(errno));
    p[i] = '/';
  }
cleanup:
  free(p);
  return err;
}

/* The shape of an output path: not over KD_PATH_MAX, no component over NAME_MAX, not ending in
 * '/' (that names a directory, which kdistill never writes). Local; KD_ERR_CONFIG. */
static kd_err kd_path_check_shape_(const char *path, const char *role) {
  kd_err err = KD_OK;
  const size_t len = strlen(path);
  KD_CHECK(len <= KD_PATH_MAX, KD_ERR_CONFIG,
           "%s: %.60s...: the path is %zu characters long; at most %d are accepted", role, path,
           len, KD_PATH_MAX);
  KD_CHECK(path[len - 1] != '/', KD_ERR_CONFIG,
           "%s: %s ends in '/': name the file to write, not a directory", role, path);
  for (const char *c = path; *c;) {
    const size_t n = strcspn(c, "/");
    KD_CHECK(n <= NAME_MAX, KD_ERR_CONFIG,
             "%s: %.60s...: a file or directory name of %zu bytes in this path; at most %d are "
             "allowed",
             role, path, n, NAME_MAX);
    c += n;
    c += *c == '/';
  }
cleanup:
  return err;
}

kd_err kd_path_check_output(const char *path, const char *role, int make_dirs) {
  kd_err err = KD_OK;
  struct stat st;
  char *dir = NULL;
  KD_CHECK(path && path[0], KD_ERR_CONFIG, "%s: the output path is empty", role);
  KD_TRY(kd_path_check_shape_(path, role));
  if (lstat(path, &st) == 0)
    KD_CHECK(S_ISREG(st.st_mode), KD_ERR_CONFIG,
             "%s: %s is %s; kdistill only replaces regular files", role, path,
             kd_path_kind_(st.st_mode));
  KD_TRY(kd_path_dir_(path, &dir));
  if (make_dirs && stat(dir, &st) != 0) KD_TRY(kd_path_mkdirs_(dir, path, role));
  if (stat(dir, &st) != 0) {
    /* validate creates nothing: a missing directory is fine if its nearest existing ancestor is
     * a writable directory (it is created when the run writes) */
    char *q = strrchr(dir, '/');
    while (q && stat(dir, &st) != 0) {
      if (q == dir) { /* "/missing" -> "/" */
        dir[1] = '\0';
        break;
      }
      *q = '\0';
      q = strrchr(dir, '/');
    }
    if (stat(dir, &st) != 0 && dir[0] != '/') {
      dir[0] = '.';
      dir[1] = '\0';
    }
  }
  KD_CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode), KD_ERR_IO, "%s: %s: %s is not a directory",
           role, path, dir);
  KD_CHECK(access(dir, W_OK | X_OK) == 0, KD_ERR_IO, "%s: %s: directory %s is not writable: %s",
           role, path, dir, strerror(errno));
cleanup:
  free(dir);
  return err;
}

int kd_path_resolve_input(const char *path, const char *cfg_file, char *out, size_t len) {
  struct stat st;
  snprintf(out, len, "%s", path);
  if (!path[0] || path[0] == '/' || stat(path, &st) == 0 || !cfg_file) return 0;
  const char *slash = strrchr(cfg_file, '/');
  if (!slash) return 0; /* the config is in the working directory: nothing else to try */
  const int dl = (int)(slash - cfg_file);
  if ((size_t)dl + 1 + strlen(path) + 1 > len) return 0;
  char *alt = malloc((size_t)dl + strlen(path) + 2);
  if (!alt) return 0;
  snprintf(alt, (size_t)dl + strlen(path) + 2, "%.*s/%s", dl, cfg_file, path);
  const int found = stat(alt, &st) == 0;
  if (found) snprintf(out, len, "%s", alt);
  free(alt);
  return found;
}

void kd_path_id(const char *path, kd_file_id *id) {
  struct stat st;
  memset(id, 0, sizeof *id);
  if (!path || stat(path, &st) != 0) return;
  id->dev = (unsigned long long)st.st_dev;
  id->ino = (unsigned long long)st.st_ino;
  id->size = (long long)st.st_size;
  id->ctime_s = (long long)st.st_ctim.tv_sec;
  id->ctime_ns = (long long)st.st_ctim.tv_nsec;
  id->set = 1;
}

int kd_path_remove_own(const char *path, const kd_file_id *id) {
  struct stat st;
  if (!path || !path[0] || !id || !id->set || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
    return 0;
  if ((unsigned long long)st.st_dev != id->dev || (unsigned long long)st.st_ino != id->ino ||
      (long long)st.st_size != id->size || (long long)st.st_ctim.tv_sec != id->ctime_s ||
      (long long)st.st_ctim.tv_nsec != id->ctime_ns)
    return 0;
  return unlink(path) == 0;
}

/* Append the components of rest ("a/./b/../c") to out[cap], folding "." and "..". */
static void kd_path_fold_(char *out, size_t cap, const char *rest) {
  size_t o = strlen(out);
  for (const char *c = rest; *c;) {
    const size_t n = strcspn(c, "/");
    if (n == 2 && c[0] == '.' && c[1] == '.') {
      while (o > 1 && out[o - 1] != '/') o--; /* drop the last component */
      if (o > 1) o--;
      out[o] = '\0';
    } else if (n && !(n == 1 && c[0] == '.') && o + n + 2 < cap) {
      if (o == 0 || out[o - 1] != '/') out[o++] = '/';
      memcpy(out + o, c, n);
      o += n;
      out[o] = '\0';
    }
    c += n;
    c += *c == '/';
  }
}

/* `path` made absolute with its longest existing prefix resolved (realpath) and the rest folded
 * lexically: the same string for two spellings of one file, whether it exists yet or not.
 * malloc'ed; NULL when out of memory. */
static char *kd_path_canon_(const char *path) {
  const size_t cap = 2 * PATH_MAX + 2;
  char *abs = malloc(cap), *out = malloc(cap);
  if (!abs || !out) {
    free(abs);
    free(out);
    return NULL;
  }
  abs[0] = '\0';
  if (path[0] != '/' && getcwd(abs, PATH_MAX) == NULL) snprintf(abs, cap, ".");
  snprintf(abs + strlen(abs), cap - strlen(abs), "%s%s", path[0] == '/' ? "" : "/", path);
  for (size_t cut = strlen(abs);;) {
    const char keep = abs[cut];
    abs[cut] = '\0';
    char *r = realpath(cut ? abs : "/", NULL);
    abs[cut] = keep;
    if (r || cut == 0) {
      snprintf(out, cap, "%s", r ? r : "/");
      free(r);
      kd_path_fold_(out, cap, abs + cut);
      break;
    }
    while (cut > 0 && abs[--cut] != '/') {
    }
  }
  free(abs);
  return out;
}

/* 1 if a and b may name one file without that being a conflict: the same role (a key checked
 * twice), two inputs, or the checkpoint a run resumes from and the one it goes on writing. */
static int kd_path_claims_compatible_(const kd_file_claim *a, const kd_file_claim *b) {
  if (!strcmp(a->role, b->role) || (!a->output && !b->output)) return 1;
  const kd_file_claim *w = a->output ? a : b, *r = a->output ? b : a;
  return !strcmp(w->role, "run.checkpoint_path") && !strcmp(r->role, "resume checkpoint");
}

static kd_err kd_path_claim_conflict_(const kd_file_claim *a, const kd_file_claim *b) {
  /* the message starts with the key to change: the newer output, else the output */
  const kd_file_claim *w = a->output ? a : b, *r = w == a ? b : a;
  if (r->output)
    return kd_err_set(KD_ERR_CONFIG, __FILE__, __LINE__,
                      "%s: %s is the same file as %s (%s); every file a run writes needs a path "
                      "of its own",
                      w->role, w->shown, r->role, r->shown);
  return kd_err_set(KD_ERR_CONFIG, __FILE__, __LINE__,
                    "%s: %s is the same file as the %s %s; kdistill never overwrites a file its "
                    "run reads: choose another path",
                    w->role, w->shown, r->role, r->shown);
}

/* Hash index of the claims, so a job claiming many files (a sweep of 10000 points) does not
 * compare each new claim with all earlier ones. A claim sits in the slot chain of its resolved
 * path and, when the file exists, in that of its device and inode. */
static size_t kd_path_hash_canon_(const char *canon) {
  uint64_t h = 14695981039346656037ULL;
  for (const unsigned char *c = (const unsigned char *)canon; *c; c++)
    h = (h ^ *c) * 1099511628211ULL;
  return (size_t)h;
}

static size_t kd_path_hash_id_(const kd_file_id *id) {
  uint64_t h = (uint64_t)id->dev * 0x9E3779B97F4A7C15ULL;
  h ^= (uint64_t)id->ino + 0x7F4A7C159E3779B9ULL + (h << 6) + (h >> 2);
  return (size_t)(h * 0xBF58476D1CE4E5B9ULL);
}

static void kd_path_slot_put_(int *slots, int n_slots, size_t h, int value) {
  size_t s = h & (size_t)(n_slots - 1);
  while (slots[s]) s = (s + 1) & (size_t)(n_slots - 1);
  slots[s] = value;
}

static void kd_path_slot_claim_(kd_ctx *ctx, int i) {
  kd_path_slot_put_(ctx->claim_slots, ctx->n_slots, kd_path_hash_canon_(ctx->claims[i].canon),
                    i + 1);
  if (ctx->claims[i].id.set)
    kd_path_slot_put_(ctx->claim_slots, ctx->n_slots, kd_path_hash_id_(&ctx->claims[i].id), i + 1);
}

/* Room in the index for one more claim: rebuilt twice as large when it would be more than half
 * full. */
static kd_err kd_path_index_grow_(kd_ctx *ctx) {
  kd_err err = KD_OK;
  if (4 * (ctx->n_claims + 1) <= ctx->n_slots) return KD_OK;
  int n = ctx->n_slots ? 2 * ctx->n_slots : 64;
  while (4 * (ctx->n_claims + 1) > n) n *= 2;
  int *slots = calloc((size_t)n, sizeof *slots);
  KD_CHECK(slots, KD_ERR_MEM, "out of memory recording a path");
  free(ctx->claim_slots);
  ctx->claim_slots = slots;
  ctx->n_slots = n;
  for (int j = 0; j < ctx->n_claims; j++) kd_path_slot_claim_(ctx, j);
cleanup:
  return err;
}

static int kd_path_same_file_(const kd_file_claim *a, const kd_file_claim *b) {
  return (a->id.set && b->id.set && a->id.dev == b->id.dev && a->id.ino == b->id.ino) ||
         !strcmp(a->canon, b->canon);
}

/* The earliest claim after claim `after` (-1: from the first) that names the same file as c, or
 * -1: the claims met in the order they were made, as a scan of the whole list would meet them. */
static int kd_path_next_same_(const kd_ctx *ctx, const kd_file_claim *c, int after) {
  int best = -1;
  if (!ctx->n_slots) return -1;
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1 && !c->id.set) break;
    size_t s = (pass ? kd_path_hash_id_(&c->id) : kd_path_hash_canon_(c->canon)) &
               (size_t)(ctx->n_slots - 1);
    for (; ctx->claim_slots[s]; s = (s + 1) & (size_t)(ctx->n_slots - 1)) {
      const int j = ctx->claim_slots[s] - 1;
      if (j > after && (best < 0 || j < best) && kd_path_same_file_(c, &ctx->claims[j])) best = j;
    }
  }
  return best;
}

kd_err kd_path_claim(const char *path, const char *role, int output) {
  kd_err err = KD_OK;
  kd_ctx *ctx = kd_ctx_current();
  kd_file_claim c;
  memset(&c, 0, sizeof c);
  if (!ctx || !path || !path[0]) return KD_OK;
  snprintf(c.role, sizeof c.role, "%s", role);
  c.output = output;
  kd_path_id(path, &c.id);
  c.canon = kd_path_canon_(path);
  c.shown = strdup(path);
  KD_CHECK(c.canon && c.shown, KD_ERR_MEM, "out of memory recording the path %s", role);
  for (int i = kd_path_next_same_(ctx, &c, -1); i >= 0; i = kd_path_next_same_(ctx, &c, i)) {
    const kd_file_claim *o = &ctx->claims[i];
    if (!strcmp(o->role, c.role) && !strcmp(o->canon, c.canon)) goto cleanup; /* known */
    if (!kd_path_claims_compatible_(o, &c)) KD_TRY(kd_path_claim_conflict_(&c, o));
  }
  if (ctx->n_claims == ctx->cap_claims) {
    const int cap = ctx->cap_claims ? 2 * ctx->cap_claims : 8;
    kd_file_claim *g = realloc(ctx->claims, (size_t)cap * sizeof *g);
    KD_CHECK(g, KD_ERR_MEM, "out of memory recording the path %s", role);
    ctx->claims = g;
    ctx->cap_claims = cap;
  }
  KD_TRY(kd_path_index_grow_(ctx));
  ctx->claims[ctx->n_claims] = c;
  memset(&c, 0, sizeof c);
  kd_path_slot_claim_(ctx, ctx->n_claims++);
cleanup:
  free(c.canon);
  free(c.shown);
  return err;
}
