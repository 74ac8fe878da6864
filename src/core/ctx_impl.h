/* ctx_impl.h - the inside of kd_ctx (include/kdistill/kd_ctx.h) for src/core/ and the few layers
 * that keep per-run state in it: comm/ (communication timer), io/ and task/ (checkpoint session).
 * The binding of a context to a thread lives in ctx.c; everything here acts on a given context. */
#ifndef KDISTILL_CTX_IMPL_H
#define KDISTILL_CTX_IMPL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "kdistill/author/kd_algo.h"
#include "kdistill/kd_ctx.h"
#include "kdistill/author/kd_io.h"

/** Which file a path named when it was looked at (io/paths.c: kd_path_id): device, inode, size
 *  and change time. A file that was replaced, or removed and created again, differs in one of
 *  them. `set` is 0 when nothing was recorded. */
typedef struct {
  unsigned long long dev, ino;
  long long size, ctime_s, ctime_ns;
  int set;
} kd_file_id;

/** A file the job reads or writes, as recorded by io/paths.c (kd_path_claim) on the rank that
 *  checks paths (rank 0): an output must not be the same file as an input or as another output
 *  (docs/reliability.md, "same-file refusal"). */
typedef struct {
  char *canon;   /* absolute path with the existing part resolved (realpath) */
  char *shown;   /* the path as the user gave it */
  char role[48]; /* "output.path", "run.checkpoint_path", "CSV input", ... */
  kd_file_id id; /* set when the file exists */
  int output;    /* 1: the job writes it */
} kd_file_claim;

/** An input point set as a checkpoint records it (pointset/io_print.c): the config section, the
 *  file (for messages), shape, element type, and the content hash (a sum of row hashes keyed by
 *  global row index, the same at any rank count). */
typedef struct {
  char section[64];
  char path[1024];
  char dtype[16];
  int64_t n, d;
  uint64_t hash;
} kd_input_print;

/** At most this many input point sets are fingerprinted per job. */
#define KD_MAX_INPUT_PRINTS 16

/** Checkpoint session of the job running on a context: set by the job entry point (config_yaml,
 *  cfg, resume) and by the task that checkpoints (path, last written iteration). Reset between
 *  jobs. */
typedef struct {
  const char *config_yaml;  /* resolved configuration (borrowed from the job) */
  const kd_config *cfg;     /* the configuration it was emitted from (a task running on another
                               one, e.g. a sweep point, neither resumes nor uses config_yaml) */
  const kd_result *resume;  /* state read with --resume, or NULL */
  const char *resume_path;  /* the file it came from */
  int64_t resume_iteration; /* iteration it was written at */
  char path[4096];          /* where the task writes checkpoints ("" = not checkpointing) */
  int64_t last_iteration;   /* iteration of the last checkpoint written, -1 none */
  kd_file_id written;       /* the last checkpoint this process placed at `path` (rank 0) */
  kd_file_id resumed;       /* the file read with --resume, as it was read (rank 0) */

  /* the input fingerprints of the checkpoint resumed from (kd_checkpoint_read's text), and those
   * of the input point sets this job read (task/, as they are read) */
  const char *resume_inputs;
  kd_input_print inputs[KD_MAX_INPUT_PRINTS];
  int n_inputs;
} kd_checkpoint_session;

struct kd_ctx {
  MPI_Comm comm; /* owned duplicate of the caller's communicator */
  int rank, size;
  /* logging (log.c) */
  kd_log_level level;
  double log_interval;
  kd_log_sink sink; /* NULL: stderr */
  void *sink_user;
  double t0;           /* origin of kd_log_elapsed / kd_ctx_elapsed (MPI_Wtime) */
  double log_last;     /* elapsed time of the last rate-limited progress line */
  int64_t log_total;   /* iteration budget of the current phase (0 unknown) */
  int64_t log_done;    /* iterations done before this phase's clock started (resume) */
  double log_phase_t0; /* elapsed time when the phase's budget was announced */
  /* errors (err.c) */
  char err_msg[1024];
  char err_key[128];   /* the config key the message is about (kd_err_set_key), "" if none */
  char err_known[400]; /* unknown key: the keys its section used, ", " between (kd_err_set_known) */
  /* interruption (interrupt.c) */
  atomic_int interrupted;
  int listen_signals;
  int interrupt_anywhere; /* the running computation has no safe point (kd_interrupt_anywhere) */
  struct sigaction sigint_saved; /* SIGINT's action before kd_ctx_catch_sigint's bracket */
  /* stop guard (stop_guard.c): bounded time from a signal to the end of a CLI run */
  pthread_t guard;
  int guard_on;
  double guard_grace;    /* seconds from the signal to the forced stop */
  atomic_int guard_quit; /* set by kd_ctx_destroy */
  atomic_int publishing; /* files being published now (io/publish.c) */
  atomic_int published;  /* files published or begun so far (io/publish.c) */
  atomic_int stopping;   /* the ranks agreed to stop at a safe point: a checkpoint is on its way */
  /* communication timer and volume (comm/dist.c): seconds in the helpers, payload bytes sent plus
   * received by this rank, point-to-point and collective operations */
  double comm_seconds;
  int64_t comm_bytes, comm_ops;
  /* checkpoint session (io/checkpoint.c, task/) */
  kd_checkpoint_session ckpt;
  /* the files the current job reads and writes (io/paths.c; reset between jobs) */
  kd_file_claim *claims;
  int n_claims, cap_claims;
  /* hash index of the claims (io/paths.c): claim i + 1 in two slots, one found from its resolved
   * path and one from its device and inode; 0 = empty; n_slots a power of two or 0 */
  int *claim_slots;
  int n_slots;
};

/** Stop the guard thread of kd_ctx_stop_guard, if any (kd_ctx_destroy). Local. */
void kd_stop_guard_end_(kd_ctx *ctx);
/** io/publish.c brackets every file it publishes: the guard never stops a process while a file is
 *  being placed, and a run that reached a publish after the signal is left to finish. Local. */
void kd_ctx_publish_mark(int begin);
/** io/ckpt.c marks the agreed decision to stop at a safe point after a signal: gathering and
 *  writing the checkpoint can take longer than the grace at large sizes, and the guard leaves
 *  such a run to finish (cleared with the interrupt, kd_ctx_clear_interrupt). Local. */
void kd_ctx_safe_stop_mark(void);

/** Forget the checkpoint session (between jobs). Local. */
void kd_ctx_session_reset(kd_ctx *ctx);
/** Forget the files claimed by the last job (between jobs; kd_ctx_destroy). Local. */
void kd_ctx_claims_reset(kd_ctx *ctx);
/** Non-zero once a SIGTERM/SIGUSR1 reached the process since the last clear (interrupt.c). */
int kd_interrupt_signal_seen_(void);
/** Clear the process's signal flag (interrupt.c). */
void kd_interrupt_signal_clear_(void);
/** Install the SIGTERM/SIGUSR1 handlers (interrupt.c; idempotent). */
void kd_interrupt_install_handlers_(void);

#endif
