/* publish.h - the one atomic publish of every file kdistill writes (outputs, checkpoints, sweep
 * summaries, the CTT study CSV): the root writes a temporary next to the target, the ranks agree
 * on the outcome, the root makes the temporary durable (fsync), renames it into place and makes
 * the rename durable (fsync of the directory). A reader therefore sees the previous file or the
 * new one, never a partial one, and every failure path removes the temporary.
 *
 *   kd_publish pub;
 *   KD_TRY(kd_publish_begin(comm, path, &pub));
 *   if (rank == 0) lerr = write_the_file(&pub);      // kd_publish_fopen: the existing tmp
 *   KD_TRY(kd_publish_commit(&pub, lerr));           // agreed; pub freed either way
 *
 * The temporary is created by kd_publish_begin itself, with O_CREAT | O_EXCL | O_NOFOLLOW and mode
 * 0600: a file or symbolic link planted at that name makes the publish fail and is left alone,
 * never written through or removed. Writers open it without O_CREAT and with O_NOFOLLOW. The
 * temporary gets the ordinary mode (0666 less the umask) just before it is renamed into place, and
 * it is removed on failure only while it is still the file begin created (device and inode).
 *
 * The writer runs on the root only (rank 0 of comm); a file one process writes alone uses
 * MPI_COMM_SELF. */
#ifndef KDISTILL_IO_PUBLISH_H
#define KDISTILL_IO_PUBLISH_H

#include <mpi.h>
#include <stdio.h>

#include "kdistill/author/kd_check.h"

typedef struct {
  MPI_Comm comm; /* borrowed */
  int root;      /* 1 on rank 0 of comm: it writes tmp and renames it */
  char *path;    /* the target (owned copy) */
  char *tmp;     /* "<path>.tmp.<pid>" in the target's directory (owned; NULL off the root) */
  int marked;    /* 1 between begin and the end (kd_ctx_publish_mark: the stop guard waits) */
  int created;   /* 1 once the root created tmp; dev/ino say which file that is */
  unsigned long long dev, ino;
  unsigned mode;  /* the mode the published file gets (0666 less the umask) */
  int no_replace; /* set after begin: the commit places the file only where nothing is (link(2),
                     atomic); a file that appeared at the path meanwhile is left alone */
} kd_publish;

/** Start publishing `path` over comm: on the root, pub->tmp gets the temporary name next to the
 *  target and is created there empty (mode 0600, O_EXCL | O_NOFOLLOW); other ranks get NULL.
 *  Local; KD_ERR_MEM, KD_ERR_CONFIG for a target that is not a regular file, KD_ERR_IO when the
 *  temporary cannot be created (something already at its name included). On failure *pub is
 *  empty (kd_publish_abort is still safe). */
kd_err kd_publish_begin(MPI_Comm comm, const char *path, kd_publish *pub);

/** Finish: agree `local` (this rank's outcome of writing; the root's write included) over
 *  pub->comm; if every rank succeeded the root fsyncs pub->tmp, renames it to pub->path and fsyncs
 *  the directory, and that outcome is agreed too. On every failure the temporary is removed (before
 *  any rank returns) and a previous file at pub->path is left intact. pub is freed in every case.
 * Collective; returns the agreed error (the writer's own, or KD_ERR_IO naming the file). */
kd_err kd_publish_commit(kd_publish *pub, kd_err local);

/** Give up: the root removes the temporary it created (if it is still that file); pub is freed.
 *  Local; idempotent. */
void kd_publish_abort(kd_publish *pub);

/** The root's temporary opened for writing as a stream (truncated; O_NOFOLLOW, never created
 *  here); NULL with errno set on failure. Local. */
FILE *kd_publish_fopen(const kd_publish *pub);
/** Open an existing temporary `tmp` for writing from the start (O_WRONLY | O_TRUNC | O_NOFOLLOW,
 *  never O_CREAT): the one way writers open what kd_publish_begin created. Returns the descriptor
 *  or -1 with errno set. Local. */
int kd_publish_open_tmp(const char *tmp);

#endif
