/* stop_guard.c - the bound on the time from a signal to the end of a command-line run
 * (docs/reliability.md, "Signals"). Iterative algorithms stop at their safe points (with a
 * checkpoint) and computations without one poll kd_interrupt_check; between two polls a single
 * LAPACK call or kernel block can still take long at large sizes. The guard is a thread that
 * watches the process's signal flag: if the run has not ended grace seconds after the signal, and
 * no file is being published, rank 0 prints one line and the process leaves with status 3. Nothing
 * is half-written: outputs and checkpoints only appear by rename (io/publish.c), which the guard
 * waits for. The other ranks leave a little later than rank 0, so that its line is printed before
 * the launcher tears the job down. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "core/ctx_impl.h"

enum { KD_GUARD_TICK_MS = 20 };

static double kd_guard_now_(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void kd_guard_sleep_(void) {
  const struct timespec ts = {0, KD_GUARD_TICK_MS * 1000000L};
  nanosleep(&ts, NULL);
}

/* The forced stop: one line on rank 0 (the last checkpoint, if this run wrote one, is named),
 * then _exit(3): no atexit handlers, no MPI_Finalize (the other ranks are leaving too). */
static void kd_guard_stop_(kd_ctx *ctx) {
  if (ctx->rank == 0) {
    const kd_checkpoint_session *ss = &ctx->ckpt;
    if (ss->path[0] && ss->last_iteration >= 0)
      fprintf(stderr,
              "kdistill: interrupted: no safe point within %g s of the signal; stopped without "
              "writing output (the last checkpoint, %s, is kept)\n",
              ctx->guard_grace, ss->path);
    else
      fprintf(stderr,
              "kdistill: interrupted: no safe point within %g s of the signal; stopped, "
              "nothing was written\n",
              ctx->guard_grace);
    fflush(stderr);
  }
  _exit(3);
}

static void *kd_guard_main_(void *arg) {
  kd_ctx *ctx = arg;
  double t_sig = -1.0;
  int seen = 0;
  const double extra = ctx->rank == 0 ? 0.0 : 0.2; /* rank 0 leaves first, with its line */
  while (!atomic_load(&ctx->guard_quit)) {
    kd_guard_sleep_();
    if (t_sig < 0.0) {
      if (!kd_interrupt_signal_seen_()) continue;
      t_sig = kd_guard_now_();
      seen = atomic_load(&ctx->published);
      continue;
    }
    /* a publish after the signal: the run is writing its output or a checkpoint and ends by
     * itself; while one is in progress, never stop */
    if (atomic_load(&ctx->publishing) > 0 || atomic_load(&ctx->published) != seen) return NULL;
    if (atomic_load(&ctx->stopping)) continue; /* at a safe point: the checkpoint is coming */
    if (!kd_interrupt_signal_seen_()) {        /* cleared (a sweep point moved on): watch again */
      t_sig = -1.0;
      continue;
    }
    if (kd_guard_now_() - t_sig >= ctx->guard_grace + extra) kd_guard_stop_(ctx);
  }
  return NULL;
}

kd_err kd_ctx_stop_guard(kd_ctx *ctx, double grace) {
  kd_err err = KD_OK;
  if (!ctx || grace <= 0.0 || ctx->guard_on) return KD_OK;
  ctx->guard_grace = grace;
  atomic_store(&ctx->guard_quit, 0);
  KD_CHECK(pthread_create(&ctx->guard, NULL, kd_guard_main_, ctx) == 0, KD_ERR_INTERNAL,
           "cannot start the signal guard thread");
  ctx->guard_on = 1;
cleanup:
  return err;
}

void kd_stop_guard_end_(kd_ctx *ctx) {
  if (!ctx || !ctx->guard_on) return;
  atomic_store(&ctx->guard_quit, 1);
  pthread_join(ctx->guard, NULL);
  ctx->guard_on = 0;
}

void kd_ctx_safe_stop_mark(void) {
  kd_ctx *ctx = kd_ctx_current();
  if (ctx) atomic_store(&ctx->stopping, 1);
}

void kd_ctx_publish_mark(int begin) {
  kd_ctx *ctx = kd_ctx_current();
  if (!ctx) return;
  if (begin) {
    atomic_fetch_add(&ctx->published, 1);
    atomic_fetch_add(&ctx->publishing, 1);
  } else {
    atomic_fetch_sub(&ctx->publishing, 1);
  }
}
