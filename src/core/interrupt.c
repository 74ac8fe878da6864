/* interrupt.c - SIGTERM / SIGUSR1 set a process flag; a context that listens to signals
 * (kd_ctx_listen_signals) reads it, besides its own flag (kd_ctx_interrupt). Iterative algorithms
 * ask kd_interrupt_pending() at their safe points and checkpoint. The signal flag is the one piece
 * of process state a context cannot own: the handler cannot know which contexts exist. */
#include <signal.h>

#include "core/ctx_impl.h"

static volatile sig_atomic_t kd_interrupt_signal_ = 0;

static void kd_interrupt_handler_(int sig) {
  (void)sig;
  kd_interrupt_signal_ = 1;
}

int kd_interrupt_signal_seen_(void) { return kd_interrupt_signal_ != 0; }

void kd_interrupt_signal_clear_(void) { kd_interrupt_signal_ = 0; }

int kd_interrupt_pending(void) { return kd_ctx_interrupted(kd_ctx_current()); }

void kd_interrupt_anywhere(int on) {
  kd_ctx *c = kd_ctx_current();
  if (c) c->interrupt_anywhere = on;
}

kd_err kd_interrupt_check(const char *what) {
  const kd_ctx *c = kd_ctx_current();
  if (!c || !c->interrupt_anywhere || !kd_interrupt_pending()) return KD_OK;
  return kd_err_set(KD_ERR_INTERRUPTED, __FILE__, __LINE__,
                    "interrupted during %s; nothing was written", what);
}

void kd_interrupt_set(int on) {
  kd_ctx *c = kd_ctx_current();
  if (on)
    kd_ctx_interrupt(c);
  else
    kd_ctx_clear_interrupt(c);
}

/* sigaction, not signal(): under strict C11 + POSIX glibc's signal() has System V semantics and
 * resets the handler after the first delivery, so a second SIGTERM (timeout and SLURM signal a
 * whole process group as well as the process) killed the run before its checkpoint. */
void kd_interrupt_install_handlers_(void) {
  struct sigaction sa;
  sa.sa_handler = kd_interrupt_handler_;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
}

/* kd_ctx_catch_sigint: the context a SIGINT interrupts (NULL: no bracket open; the action it
 * replaced is kept in that context). A lock-free atomic pointer, so the handler may read it. */
static _Atomic(kd_ctx *) kd_sigint_ctx_ = NULL;

static void kd_sigint_handler_(int sig) {
  (void)sig;
  kd_ctx_interrupt(atomic_load(&kd_sigint_ctx_));
}

kd_err kd_ctx_catch_sigint(kd_ctx *ctx, int on) {
  if (!on) {
    kd_ctx *open = atomic_load(&kd_sigint_ctx_);
    if (!open || (ctx && ctx != open)) return KD_ERR_ARG;
    const int bad = sigaction(SIGINT, &open->sigint_saved, NULL) != 0;
    atomic_store(&kd_sigint_ctx_, NULL);
    return bad ? KD_ERR_INTERNAL : KD_OK;
  }
  if (!ctx || atomic_load(&kd_sigint_ctx_)) return KD_ERR_ARG;
  struct sigaction sa;
  sa.sa_handler = kd_sigint_handler_;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  atomic_store(&kd_sigint_ctx_, ctx);
  if (sigaction(SIGINT, &sa, &ctx->sigint_saved) != 0) {
    atomic_store(&kd_sigint_ctx_, NULL);
    return KD_ERR_INTERNAL;
  }
  return KD_OK;
}

void kd_interrupt_install(void) { kd_ctx_listen_signals(kd_ctx_current(), 1); }
