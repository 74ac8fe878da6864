/* ctx.c - kd_ctx: creation, the per-thread binding, and the accessors of kd_ctx.h.
 * The binding below is one of the two pieces of file-scope mutable state in src/ (the other is
 * the signal flag of interrupt.c); .ci/check_globals.sh enforces that. The context owns a duplicate
 * of the caller's communicator: core/ is the layer below comm/, so the few MPI calls it needs to
 * create, free and query it are made here directly. */
#include <stdlib.h>
#include <string.h>

#include "core/ctx_impl.h"

/* The context the library's internal helpers act on in this thread (kd_ctx_bind). */
static _Thread_local kd_ctx *kd_ctx_bound_ = NULL;

kd_ctx *kd_ctx_bind(kd_ctx *ctx) {
  kd_ctx *prev = kd_ctx_bound_;
  kd_ctx_bound_ = ctx;
  return prev;
}

void kd_ctx_unbind(kd_ctx *prev) { kd_ctx_bound_ = prev; }

kd_ctx *kd_ctx_current(void) { return kd_ctx_bound_; }

kd_err kd_ctx_create(MPI_Comm comm, kd_ctx **out) {
  kd_ctx *c = calloc(1, sizeof *c);
  *out = NULL;
  if (!c) return KD_ERR_MEM;
  c->comm = MPI_COMM_NULL;
  if (MPI_Comm_dup(comm, &c->comm) != MPI_SUCCESS ||
      MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
      MPI_Comm_rank(c->comm, &c->rank) != MPI_SUCCESS ||
      MPI_Comm_size(c->comm, &c->size) != MPI_SUCCESS) {
    if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
    free(c);
    return KD_ERR_MPI;
  }
  c->level = KD_LOG_NORMAL;
  c->log_interval = 1.0;
  atomic_init(&c->interrupted, 0);
  atomic_init(&c->stopping, 0);
  kd_ctx_reset_clock(c);
  kd_ctx_session_reset(c);
  *out = c;
  return KD_OK;
}

void kd_ctx_destroy(kd_ctx **ctx) {
  if (!ctx || !*ctx) return;
  kd_stop_guard_end_(*ctx);
  (void)kd_ctx_catch_sigint(*ctx, 0); /* a bracket left open on it: SIGINT's action restored */
  if (kd_ctx_bound_ == *ctx) kd_ctx_bound_ = NULL;
  kd_ctx_claims_reset(*ctx);
  if ((*ctx)->comm != MPI_COMM_NULL) MPI_Comm_free(&(*ctx)->comm);
  free(*ctx);
  *ctx = NULL;
}

MPI_Comm kd_ctx_comm(const kd_ctx *ctx) { return ctx ? ctx->comm : MPI_COMM_NULL; }
int kd_ctx_rank(const kd_ctx *ctx) { return ctx ? ctx->rank : 0; }
int kd_ctx_size(const kd_ctx *ctx) { return ctx ? ctx->size : 1; }

void kd_ctx_set_log_level(kd_ctx *ctx, kd_log_level level) {
  if (ctx) ctx->level = level;
}

kd_log_level kd_ctx_log_level(const kd_ctx *ctx) { return ctx ? ctx->level : KD_LOG_QUIET; }

void kd_ctx_set_log_interval(kd_ctx *ctx, double seconds) {
  if (ctx) ctx->log_interval = seconds;
}

double kd_ctx_log_interval(const kd_ctx *ctx) { return ctx ? ctx->log_interval : 1.0; }

void kd_ctx_set_log_sink(kd_ctx *ctx, kd_log_sink sink, void *user) {
  if (!ctx) return;
  ctx->sink = sink;
  ctx->sink_user = sink ? user : NULL;
}

const char *kd_ctx_message(const kd_ctx *ctx) { return ctx ? ctx->err_msg : ""; }

const char *kd_ctx_error_key(const kd_ctx *ctx) { return ctx ? ctx->err_key : ""; }

int kd_ctx_error_known(const kd_ctx *ctx, int i, char *buf, int len) {
  if (buf && len > 0) buf[0] = '\0';
  if (!ctx || i < 0) return 0;
  const char *s = ctx->err_known;
  for (; i > 0 && s; i--) {
    s = strstr(s, ", ");
    if (s) s += 2;
  }
  if (!s || !*s) return 0;
  if (buf && len > 0) {
    size_t n = strcspn(s, ",");
    if (n >= (size_t)len) n = (size_t)len - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
  }
  return 1;
}

void kd_ctx_clear_error(kd_ctx *ctx) {
  if (ctx) ctx->err_msg[0] = ctx->err_key[0] = ctx->err_known[0] = '\0';
}

void kd_ctx_interrupt(kd_ctx *ctx) {
  if (ctx) atomic_store(&ctx->interrupted, 1);
}

int kd_ctx_interrupted(const kd_ctx *ctx) {
  if (!ctx) return 0;
  /* atomic_load takes a pointer to non-const in C11 */
  if (atomic_load((atomic_int *)&ctx->interrupted)) return 1;
  return ctx->listen_signals && kd_interrupt_signal_seen_();
}

void kd_ctx_clear_interrupt(kd_ctx *ctx) {
  if (!ctx) return;
  atomic_store(&ctx->interrupted, 0);
  atomic_store(&ctx->stopping, 0);
  if (ctx->listen_signals) kd_interrupt_signal_clear_();
}

void kd_ctx_listen_signals(kd_ctx *ctx, int on) {
  if (!ctx) return;
  if (on) kd_interrupt_install_handlers_();
  ctx->listen_signals = on != 0;
}

double kd_ctx_elapsed(const kd_ctx *ctx) { return ctx ? MPI_Wtime() - ctx->t0 : 0.0; }

void kd_ctx_reset_clock(kd_ctx *ctx) {
  if (!ctx) return;
  ctx->t0 = MPI_Wtime();
  ctx->log_last = -1e300;
  ctx->comm_seconds = 0.0;
  ctx->comm_bytes = ctx->comm_ops = 0;
}

double kd_ctx_comm_seconds(const kd_ctx *ctx) { return ctx ? ctx->comm_seconds : 0.0; }

void kd_ctx_claims_reset(kd_ctx *ctx) {
  if (!ctx) return;
  for (int i = 0; i < ctx->n_claims; i++) {
    free(ctx->claims[i].canon);
    free(ctx->claims[i].shown);
  }
  free(ctx->claims);
  ctx->claims = NULL;
  ctx->n_claims = ctx->cap_claims = 0;
  free(ctx->claim_slots);
  ctx->claim_slots = NULL;
  ctx->n_slots = 0;
}

void kd_ctx_session_reset(kd_ctx *ctx) {
  if (!ctx) return;
  memset(&ctx->ckpt, 0, sizeof ctx->ckpt);
  ctx->ckpt.last_iteration = -1;
}
