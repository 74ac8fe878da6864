/* interrupt.c - SIGTERM / SIGUSR1 set a flag; iterative algorithms checkpoint at a safe point. */
#include <signal.h>

#include "kdistill/kd_types.h"

static volatile sig_atomic_t kd_interrupt_flag_ = 0;

static void kd_interrupt_handler_(int sig) {
  (void)sig;
  kd_interrupt_flag_ = 1;
}

int kd_interrupt_pending(void) { return kd_interrupt_flag_ != 0; }

void kd_interrupt_set(int on) { kd_interrupt_flag_ = on ? 1 : 0; }

/* sigaction, not signal(): under strict C11 + POSIX glibc's signal() has System V semantics and
 * resets the handler after the first delivery, so a second SIGTERM (timeout and SLURM signal a
 * whole process group as well as the process) killed the run before its checkpoint. */
void kd_interrupt_install(void) {
  struct sigaction sa;
  sa.sa_handler = kd_interrupt_handler_;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
}
