/* publish.c - atomic publish of a file written by the root of a communicator (io/publish.h):
 * temporary next to the target, agreed outcome, fsync, rename, fsync of the directory. */
#include "io/publish.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ctx_impl.h"
#include "dist/dist_impl.h"
#include "io/paths.h"

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
  }
cleanup:
  if (err) kd_publish_abort(pub);
  return err;
}

void kd_publish_abort(kd_publish *pub) {
  if (!pub) return;
  if (pub->root && pub->tmp) remove(pub->tmp);
  if (pub->marked) kd_ctx_publish_mark(0);
  pub->marked = 0;
  free(pub->tmp);
  free(pub->path);
  pub->tmp = pub->path = NULL;
}

/* fsync the file or directory at path; a directory that cannot be synced on this file system
 * (EINVAL, ENOTSUP) is not an error. Local. */
static kd_err kd_publish_sync_(const char *path, int is_dir) {
  kd_err err = KD_OK;
  int fd = open(path, is_dir ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0 && is_dir) goto cleanup; /* e.g. no read permission on the directory */
  KD_CHECK(fd >= 0, KD_ERR_IO, "%s: cannot open to sync: %s", path, strerror(errno));
  if (fsync(fd) != 0 && !(is_dir && (errno == EINVAL || errno == ENOTSUP)))
    KD_FAIL(KD_ERR_IO, "%s: cannot sync to disk: %s", path, strerror(errno));
cleanup:
  if (fd >= 0) close(fd);
  return err;
}

/* The root's half of the commit: sync, rename, sync the directory. Local. */
static kd_err kd_publish_place_(const kd_publish *pub) {
  kd_err err = KD_OK;
  char *dir = NULL;
  KD_TRY(kd_publish_sync_(pub->tmp, 0));
  KD_CHECK(rename(pub->tmp, pub->path) == 0, KD_ERR_IO, "%s: cannot move into place: %s", pub->path,
           strerror(errno));
  {
    const char *slash = strrchr(pub->path, '/');
    const size_t n = slash ? (size_t)(slash - pub->path) : 0;
    KD_ALLOC(dir, n + 2);
    if (slash)
      memcpy(dir, pub->path, n ? n : 1); /* "/x" -> "/" */
    else
      dir[0] = '.';
  }
  KD_TRY(kd_publish_sync_(dir, 1));
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
    if (written != KD_OK || lerr != KD_OK) remove(pub->tmp);
  }
  err = kd_dist_agreed(pub->comm, written != KD_OK ? written : lerr);
  free(pub->tmp); /* placed or removed above */
  pub->tmp = NULL;
  kd_publish_abort(pub);
  return err;
}
