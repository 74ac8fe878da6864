/* publish.c - atomic publish of a file written by the root of a communicator (io/publish.h):
 * temporary next to the target, agreed outcome, fsync, rename, fsync of the directory. */
#include "io/publish.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ctx_impl.h"
#include "comm/dist_impl.h"
#include "io/paths.h"

/* The root creates the temporary: exclusive, not through a symbolic link, readable by the owner
 * only until it is published; dev/ino recorded so that only this file is ever removed. */
static kd_err kd_publish_create_(kd_publish *pub) {
  kd_err err = KD_OK;
  struct stat st;
  const mode_t mask = umask(077);
  umask(mask);
  pub->mode = 0666u & ~(unsigned)mask;
  int fd = open(pub->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  KD_CHECK(fd >= 0, KD_ERR_IO, "%s: cannot create the temporary %s: %s%s", pub->path, pub->tmp,
           strerror(errno),
           errno == EEXIST ? " (something is already there; it is left alone: remove it)" : "");
  KD_CHECK(fstat(fd, &st) == 0, KD_ERR_IO, "%s: %s", pub->tmp, strerror(errno));
  pub->created = 1;
  pub->dev = (unsigned long long)st.st_dev;
  pub->ino = (unsigned long long)st.st_ino;
cleanup:
  if (fd >= 0) close(fd);
  return err;
}

/* The root removes its temporary, only while that name still holds the file it created. */
static void kd_publish_remove_tmp_(kd_publish *pub) {
  struct stat st;
  if (!pub->root || !pub->tmp || !pub->created) return;
  if (lstat(pub->tmp, &st) == 0 && (unsigned long long)st.st_dev == pub->dev &&
      (unsigned long long)st.st_ino == pub->ino)
    unlink(pub->tmp);
  pub->created = 0;
}

int kd_publish_open_tmp(const char *tmp) {
  return open(tmp, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
}

FILE *kd_publish_fopen(const kd_publish *pub) {
  if (!pub->root || !pub->tmp) {
    errno = EINVAL;
    return NULL;
  }
  const int fd = kd_publish_open_tmp(pub->tmp);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f && fd >= 0) close(fd);
  return f;
}

kd_err kd_publish_begin(MPI_Comm comm, const char *path, kd_publish *pub) {
  kd_err err = KD_OK;
  memset(pub, 0, sizeof *pub);
  kd_ctx_publish_mark(1);
  pub->marked = 1;
  pub->comm = comm;
  pub->root = kd_dist_rank(comm) == 0;
  const size_t n = strlen(path) + 32;
  KD_ALLOC(pub->path, n);
  snprintf(pub->path, n, "%s", path);
  if (pub->root) {
    /* only ever replace a regular file: a symlink, FIFO, device or directory is refused */
    KD_TRY(kd_path_check_output(path, "output", 1));
    KD_ALLOC(pub->tmp, n);
    snprintf(pub->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    KD_TRY(kd_publish_create_(pub));
  }
cleanup:
  if (err) kd_publish_abort(pub);
  return err;
}

void kd_publish_abort(kd_publish *pub) {
  if (!pub) return;
  kd_publish_remove_tmp_(pub);
  if (pub->marked) kd_ctx_publish_mark(0);
  pub->marked = 0;
  free(pub->tmp);
  free(pub->path);
  pub->tmp = pub->path = NULL;
}

/* fsync the file or directory at path; a directory that cannot be synced on this file system
 * (EINVAL, ENOTSUP) is not an error. The file (pub given) must still be the temporary the publish
 * created; it gets its published mode. Local. */
static kd_err kd_publish_sync_(const char *path, int is_dir, const kd_publish *pub) {
  kd_err err = KD_OK;
  struct stat st;
  int fd = open(path, is_dir ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NOFOLLOW);
  if (fd < 0 && is_dir) goto cleanup; /* e.g. no read permission on the directory */
  KD_CHECK(fd >= 0, KD_ERR_IO, "%s: cannot open to sync: %s", path, strerror(errno));
  if (pub) {
    KD_CHECK(fstat(fd, &st) == 0 && (unsigned long long)st.st_dev == pub->dev &&
                 (unsigned long long)st.st_ino == pub->ino,
             KD_ERR_IO, "%s: the temporary was replaced while it was written; not published", path);
    KD_CHECK(fchmod(fd, (mode_t)pub->mode) == 0, KD_ERR_IO, "%s: cannot set its mode: %s", path,
             strerror(errno));
  }
  if (fsync(fd) != 0 && !(is_dir && (errno == EINVAL || errno == ENOTSUP)))
    KD_FAIL(KD_ERR_IO, "%s: cannot sync to disk: %s", path, strerror(errno));
cleanup:
  if (fd >= 0) close(fd);
  return err;
}

/* no_replace: a second name for the temporary at the path, which link(2) gives only where
 * nothing is (atomically), then the temporary's name is dropped. A file system without hard links
 * gets the check and the rename, with the window between them. Local. */
static const char kd_publish_there_[] =
    "%s: a file is already there; it is left alone (ask to replace it)";

static kd_err kd_publish_place_new_(kd_publish *pub) {
  kd_err err = KD_OK;
  struct stat st;
  if (link(pub->tmp, pub->path) == 0) {
    unlink(pub->tmp);
    goto cleanup;
  }
  KD_CHECK(errno != EEXIST, KD_ERR_FILE, kd_publish_there_, pub->path);
  KD_CHECK(errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == EMLINK ||
               errno == ENOSYS,
           KD_ERR_IO, "%s: cannot move into place: %s", pub->path, strerror(errno));
  KD_CHECK(lstat(pub->path, &st) != 0 && errno == ENOENT, KD_ERR_FILE, kd_publish_there_,
           pub->path);
  KD_CHECK(rename(pub->tmp, pub->path) == 0, KD_ERR_IO, "%s: cannot move into place: %s", pub->path,
           strerror(errno));
cleanup:
  return err;
}

/* The root's half of the commit: sync, rename (or link, no_replace), sync the directory. A file
 * replaced passes its permission bits on (a 0600 output stays 0600); a new one gets 0666 less the
 * umask. Local. */
static kd_err kd_publish_place_(kd_publish *pub) {
  kd_err err = KD_OK;
  char *dir = NULL;
  struct stat old;
  if (!pub->no_replace && lstat(pub->path, &old) == 0 && S_ISREG(old.st_mode))
    pub->mode = (unsigned)(old.st_mode & 0777);
  KD_TRY(kd_publish_sync_(pub->tmp, 0, pub));
  if (pub->no_replace)
    KD_TRY(kd_publish_place_new_(pub));
  else
    KD_CHECK(rename(pub->tmp, pub->path) == 0, KD_ERR_IO, "%s: cannot move into place: %s",
             pub->path, strerror(errno));
  pub->created = 0; /* placed: the temporary's name no longer holds it */
  {
    const char *slash = strrchr(pub->path, '/');
    const size_t n = slash ? (size_t)(slash - pub->path) : 0;
    KD_ALLOC(dir, n + 2);
    if (slash)
      memcpy(dir, pub->path, n ? n : 1); /* "/x" -> "/" */
    else
      dir[0] = '.';
  }
  KD_TRY(kd_publish_sync_(dir, 1, NULL));
cleanup:
  free(dir);
  return err;
}

kd_err kd_publish_commit(kd_publish *pub, kd_err local) {
  kd_err err = KD_OK, lerr = KD_OK;
  /* the writers' outcome; then the root places the file, or removes the temporary, before the
   * second agreement, so that no rank returns while a temporary is still there */
  const kd_err written = kd_dist_agreed(pub->comm, local);
  if (pub->root) {
    if (written == KD_OK) lerr = kd_publish_place_(pub);
    if (written != KD_OK || lerr != KD_OK) kd_publish_remove_tmp_(pub);
  }
  err = kd_dist_agreed(pub->comm, written != KD_OK ? written : lerr);
  free(pub->tmp); /* placed or removed above */
  pub->tmp = NULL;
  kd_publish_abort(pub);
  return err;
}
