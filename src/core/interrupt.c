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

void kd_interrupt_install(void) {
  signal(SIGTERM, kd_interrupt_handler_);
  signal(SIGUSR1, kd_interrupt_handler_);
}
