/* err.c - error code table, the error message of the bound context (kd_ctx_bind), MPI error
 * text. With no context bound, kd_err_set still returns its code; the message is dropped. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx_impl.h"

const char *kd_err_string(kd_err code) {
  switch (code) {
#define KD_ERR_STR_(c, v, s, m) \
  case c:                       \
    return m;
    KD_ERR_LIST(KD_ERR_STR_)
#undef KD_ERR_STR_
  }
  return "unknown error";
}

int kd_err_exit_status(kd_err code) {
  switch (code) {
#define KD_ERR_EXIT_(c, v, s, m) \
  case c:                        \
    return s;
    KD_ERR_LIST(KD_ERR_EXIT_)
#undef KD_ERR_EXIT_
  }
  return 2;
}

const char *kd_err_name(int code) {
  switch (code) {
#define KD_ERR_NAME_(c, v, s, m) \
  case v:                        \
    return #c;
    KD_ERR_LIST(KD_ERR_NAME_)
#undef KD_ERR_NAME_
  }
  return NULL;
}

/* Record the formatted message (and key, may be NULL) unless a message is already recorded. */
static kd_err kd_err_vset_(kd_err code, const char *key, const char *file, int line,
                           const char *fmt, va_list ap) {
  kd_ctx *c = kd_ctx_current();
  if (c && c->err_msg[0] == '\0') {
    char *msg = c->err_msg;
    const size_t cap = sizeof c->err_msg;
    vsnprintf(msg, cap, fmt, ap);
    /* one line: text copied from libraries (HDF5's "time = ...\n, filename = ...") or from the
     * user's input may carry line breaks or control characters */
    for (char *q = msg; *q; q++)
      if ((unsigned char)*q < 0x20) *q = ' ';
    if (getenv("KD_DEBUG_ERRORS")) {
      size_t len = strlen(msg);
      snprintf(msg + len, cap - len, " [%s:%d]", file, line);
    }
    snprintf(c->err_key, sizeof c->err_key, "%s", key ? key : "");
    c->err_known[0] = '\0';
  }
  return code;
}

kd_err kd_err_set(kd_err code, const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  kd_err e = kd_err_vset_(code, NULL, file, line, fmt, ap);
  va_end(ap);
  return e;
}

kd_err kd_err_set_key(kd_err code, const char *key, const char *file, int line, const char *fmt,
                      ...) {
  va_list ap;
  va_start(ap, fmt);
  kd_err e = kd_err_vset_(code, key, file, line, fmt, ap);
  va_end(ap);
  return e;
}

const char *kd_err_key(void) {
  kd_ctx *c = kd_ctx_current();
  return c ? c->err_key : "";
}

void kd_err_put_key(const char *key) {
  kd_ctx *c = kd_ctx_current();
  if (c) snprintf(c->err_key, sizeof c->err_key, "%s", key ? key : "");
}

const char *kd_err_known(void) {
  kd_ctx *c = kd_ctx_current();
  return c ? c->err_known : "";
}

void kd_err_set_known(const char *key, const char *known) {
  kd_ctx *c = kd_ctx_current();
  if (c && key && !strcmp(c->err_key, key))
    snprintf(c->err_known, sizeof c->err_known, "%s", known ? known : "");
}

const char *kd_err_message(void) { return kd_ctx_message(kd_ctx_current()); }

void kd_err_set_message(const char *msg) {
  kd_ctx *c = kd_ctx_current();
  if (c) snprintf(c->err_msg, sizeof c->err_msg, "%s", msg ? msg : "");
}

void kd_err_clear(void) { kd_ctx_clear_error(kd_ctx_current()); }

kd_err kd_err_set_mpi(int mpi_code, const char *file, int line, const char *what) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (MPI_Error_string(mpi_code, text, &len) != MPI_SUCCESS)
    snprintf(text, sizeof text, "code %d", mpi_code);
  return kd_err_set(KD_ERR_MPI, file, line, "MPI call failed (%s): %s", what, text);
}

/* The one place library code stops the program: a failed KD_ASSERT is a bug in kdistill, not a
 * user error, and the other ranks may be blocked in a collective, so every rank of the bound
 * context's communicator (of the whole job without one) is taken down. */
void kd_abort_assert_(const char *what, const char *file, int line) {
  kd_ctx *c = kd_ctx_current();
  fprintf(stderr, "kdistill: internal assertion failed: %s (%s:%d)\n", what, file, line);
  MPI_Abort(c ? c->comm : MPI_COMM_WORLD, 2);
  abort();
}
