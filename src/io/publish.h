/* publish.h - the one atomic publish of every file kdistill writes (outputs, checkpoints, sweep
 * summaries, the CTT study CSV): the root writes a temporary next to the target, the ranks agree
 * on the outcome, the root makes the temporary durable (fsync), renames it into place and makes
 * the rename durable (fsync of the directory). A reader therefore sees the previous file or the
 * new one, never a partial one, and every failure path removes the temporary.
 *
 *   kd_publish pub;
 *   KD_TRY(kd_publish_begin(comm, path, &pub));
 *   if (rank == 0) lerr = write_the_file(pub.tmp);   // any writer that creates pub.tmp
 *   KD_TRY(kd_publish_commit(&pub, lerr));           // agreed; pub freed either way
 *
 * The writer runs on the root only (rank 0 of comm); a file one process writes alone uses
 * MPI_COMM_SELF. */
#ifndef KDISTILL_IO_PUBLISH_H
#define KDISTILL_IO_PUBLISH_H

#include <mpi.h>

#include "kdistill/kd_err.h"

typedef struct {
  MPI_Comm comm; /* borrowed */
  int root;      /* 1 on rank 0 of comm: it writes tmp and renames it */
  char *path;    /* the target (owned copy) */
  char *tmp;     /* "<path>.tmp.<pid>" in the target's directory (owned; NULL off the root) */
  int marked;    /* 1 between begin and the end (kd_ctx_publish_mark: the stop guard waits) */
} kd_publish;

/** Start publishing `path` over comm: pub->tmp gets the temporary name next to the target (on the
 *  root; other ranks get NULL). Nothing is created yet. Local; KD_ERR_MEM. On failure *pub is
 *  empty (kd_publish_abort is still safe). */
kd_err kd_publish_begin(MPI_Comm comm, const char *path, kd_publish *pub);

/** Finish: agree `local` (this rank's outcome of writing; the root's write included) over
 *  pub->comm; if every rank succeeded the root fsyncs pub->tmp, renames it to pub->path and fsyncs
 *  the directory, and that outcome is agreed too. On every failure the temporary is removed (before
 *  any rank returns) and a previous file at pub->path is left intact. pub is freed in every case.
 * Collective; returns the agreed error (the writer's own, or KD_ERR_IO naming the file). */
kd_err kd_publish_commit(kd_publish *pub, kd_err local);

/** Give up: the root removes the temporary if it exists; pub is freed. Local; idempotent. */
void kd_publish_abort(kd_publish *pub);

#endif
