/* kd_ctx.h - the library context: everything a run used to keep in process globals.
 *
 * A kd_ctx holds a duplicate of the caller's communicator, the log level, interval and sink, the
 * last error message, an interrupt flag, the elapsed-time origin and the communication timer, and
 * the checkpoint session of the job running on it. The caller (the CLI, a test, a Python session)
 * creates one per communicator and passes it to the library's entry points (kd_job.h), which bind
 * it to the calling thread for the duration of the call: the internal helpers (kd_log_*, kd_err_*,
 * kd_interrupt_pending, ...) act on the bound context. Two contexts on different communicators
 * can be used in one process, one after the other or from different threads.
 *
 *   kd_ctx *ctx = NULL;
 *   KD_TRY(kd_ctx_create(MPI_COMM_WORLD, &ctx));
 *   kd_ctx_set_log_level(ctx, KD_LOG_VERBOSE);
 *   err = kd_job_run(ctx, &opts, &summary, NULL);
 *   if (err) fprintf(stderr, "%s\n", kd_ctx_message(ctx));   // the agreed message (rank 0)
 *   kd_ctx_destroy(&ctx);
 */
#ifndef KDISTILL_KD_CTX_H
#define KDISTILL_KD_CTX_H

#include <mpi.h>

#include "kd_api.h"
#include "kd_err.h"
#include "kd_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kd_ctx kd_ctx;

/** Receives one finished log line (no trailing newline; borrowed for the call) and the level it was
 *  logged at (KD_LOG_NORMAL for info, warnings and progress, KD_LOG_VERBOSE for verbose lines).
 *  Called on rank 0 of the context's communicator only, from the thread the context is bound to,
 *  possibly inside a collective: it must not log, communicate or block for long. It may call
 *  kd_ctx_interrupt. */
typedef void (*kd_log_sink)(void *user, kd_log_level level, const char *line);

/** Create a context on comm: duplicates it (with MPI_ERRORS_RETURN installed on the duplicate),
 *  records rank and size, log level KD_LOG_NORMAL, interval 1 s, the default sink (rank 0 writes
 *  each line to stderr), and starts the elapsed-time clock. Collective over comm.
 *  @param[in] comm borrowed; the context owns its duplicate.
 *  @param[out] out new context, destroy with kd_ctx_destroy.
 *  Errors: KD_ERR_MEM, KD_ERR_MPI (no message is recorded: no context exists yet). */
KD_API kd_err kd_ctx_create(MPI_Comm comm, kd_ctx **out);
/** Free the context and its duplicate communicator; *ctx becomes NULL (NULL-safe). If it is bound
 *  to the calling thread it is unbound first. Collective over the context's communicator. */
KD_API void kd_ctx_destroy(kd_ctx **ctx);
/** The context's (duplicate) communicator, borrowed. Local. */
MPI_Comm kd_ctx_comm(const kd_ctx *ctx);
/** Rank and size in the context's communicator. Local. */
KD_API int kd_ctx_rank(const kd_ctx *ctx);
KD_API int kd_ctx_size(const kd_ctx *ctx);

/** Bind ctx (may be NULL) to the calling thread; returns the previously bound context, to be given
 *  back to kd_ctx_unbind. Entry points do this themselves; callers of the lower-level API (tests)
 *  bind once. Local. */
KD_API kd_ctx *kd_ctx_bind(kd_ctx *ctx);
/** Restore the binding returned by kd_ctx_bind. Local. */
KD_API void kd_ctx_unbind(kd_ctx *prev);
/** The context bound to the calling thread, or NULL. Local. */
KD_API kd_ctx *kd_ctx_current(void);

/* ---- logging ---- */
/** Log level (KD_LOG_QUIET: nothing; NORMAL: info, warnings, progress; VERBOSE: also details).
 *  Local. */
KD_API void kd_ctx_set_log_level(kd_ctx *ctx, kd_log_level level);
KD_API kd_log_level kd_ctx_log_level(const kd_ctx *ctx);
/** Minimum seconds between two rate-limited progress lines (0 = every one). A job's
 *  run.log_interval key overrides it for the duration of the job. Local. */
KD_API void kd_ctx_set_log_interval(kd_ctx *ctx, double seconds);
KD_API double kd_ctx_log_interval(const kd_ctx *ctx);
/** Replace the sink (NULL restores the default: stderr, one line per call, flushed). user is
 *  borrowed and passed back to the sink. Local. */
KD_API void kd_ctx_set_log_sink(kd_ctx *ctx, kd_log_sink sink, void *user);

/* ---- errors ---- */
/** The message of the last error recorded on this context ("" if none); after an entry point
 *  failed it is the agreed message (the same on every rank that needs it; always on rank 0).
 *  Owned by the context, valid until the next call that uses it. Local. */
KD_API const char *kd_ctx_message(const kd_ctx *ctx);
/** The configuration key the last error is about, e.g. "algorithm.n_out" ("" when the error names
 *  no key, or none is recorded); agreed with the message. Owned by the context, valid as
 *  kd_ctx_message's. Local. */
KD_API const char *kd_ctx_error_key(const kd_ctx *ctx);
/** When the last error is an unknown key (kd_ctx_error_key "section.key"): the i-th (from 0) key
 *  of that section the configuration used, copied into buf (len bytes, truncated). Returns 1,
 *  or 0 (buf "") past the last one or when the error lists none. Local. */
KD_API int kd_ctx_error_known(const kd_ctx *ctx, int i, char *buf, int len);
/** Forget the recorded message. Local. */
KD_API void kd_ctx_clear_error(kd_ctx *ctx);

/* ---- interruption ---- */
/** Ask the run on this context to stop at its next safe point (iterative algorithms checkpoint
 *  first, then return KD_ERR_INTERRUPTED). Safe to call from another thread. Local. */
KD_API void kd_ctx_interrupt(kd_ctx *ctx);
/** Non-zero once kd_ctx_interrupt was called, or a SIGTERM/SIGUSR1 arrived while the context
 *  listens to signals. Local (agree before acting on it: a signal may reach only some ranks). */
KD_API int kd_ctx_interrupted(const kd_ctx *ctx);
/** Clear the interrupt flag (and, for a context listening to signals, the process's signal flag).
 *  Local. */
KD_API void kd_ctx_clear_interrupt(kd_ctx *ctx);
/** on = 1: install the SIGTERM/SIGUSR1 handlers (process-wide, idempotent) and let this context
 *  see them; on = 0: ignore signals again (the handlers stay installed). The CLI listens; a
 *  library caller usually does not. Local. */
KD_API void kd_ctx_listen_signals(kd_ctx *ctx, int on);
/** For a host process (Python) that calls the library from the thread that handles its signals:
 *  on = 1 saves the process's SIGINT action and installs one that interrupts this context
 *  (kd_ctx_interrupt) and does nothing else; on = 0 restores the saved action. Bracket one call
 *  with it, so that Ctrl-C stops the call at its next safe point without a second thread;
 * afterwards kd_ctx_interrupted says whether a SIGINT came. One context at a time: on = 1 while
 * another bracket is open, or ctx NULL, returns KD_ERR_ARG and changes nothing; a failed
 * sigaction returns KD_ERR_INTERNAL. Local. */
KD_API kd_err kd_ctx_catch_sigint(kd_ctx *ctx, int on);
/** For a process that runs one command on this context (the CLI), never for a host process such
 *  as Python: once a signal has reached the process, if the command is still running after grace
 *  seconds (it found no safe point to stop at), rank 0 prints one line and the process ends with
 *  status 3 without writing anything. It never ends the process while a file is being placed, and
 *  stands down once the run publishes a file after the signal (an output or a checkpoint: the run
 *  is stopping by itself). grace <= 0: no guard. Starts a thread; kd_ctx_destroy stops it. Local.
 */
KD_API kd_err kd_ctx_stop_guard(kd_ctx *ctx, double grace);

/* ---- timers ---- */
/** Seconds since the context was created or kd_ctx_reset_clock. Local. */
KD_API double kd_ctx_elapsed(const kd_ctx *ctx);
/** Restart the elapsed-time clock and zero the communication timer. Local. */
KD_API void kd_ctx_reset_clock(kd_ctx *ctx);
/** Seconds spent inside the comm/ communication helpers while this context was bound. Local. */
KD_API double kd_ctx_comm_seconds(const kd_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
