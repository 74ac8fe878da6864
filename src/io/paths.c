/* paths.c - input and output path checks (io/paths.h). */
#include "io/paths.h"

#include <errno.h>
#include <fcntl.h>
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
  /* O_NONBLOCK: opening a FIFO with no writer must not block; the type is then checked */
  int fd = open(path, O_RDONLY | O_NONBLOCK);
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

kd_err kd_path_check_output(const char *path, const char *role, int make_dirs) {
  kd_err err = KD_OK;
  struct stat st;
  char *dir = NULL;
  KD_CHECK(path && path[0], KD_ERR_CONFIG, "%s: the output path is empty", role);
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
