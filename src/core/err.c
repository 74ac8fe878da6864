/* err.c - error code table, the per-process error message, MPI error text. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdistill/kd_err.h"

static char kd_err_msg_[1024];

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

kd_err kd_err_set(kd_err code, const char *file, int line, const char *fmt, ...) {
  if (kd_err_msg_[0] == '\0') {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(kd_err_msg_, sizeof kd_err_msg_, fmt, ap);
    va_end(ap);
    if (getenv("KD_DEBUG_ERRORS")) {
      size_t len = strlen(kd_err_msg_);
      snprintf(kd_err_msg_ + len, sizeof kd_err_msg_ - len, " [%s:%d]", file, line);
    }
  }
  return code;
}

const char *kd_err_message(void) { return kd_err_msg_; }

void kd_err_set_message(const char *msg) {
  snprintf(kd_err_msg_, sizeof kd_err_msg_, "%s", msg ? msg : "");
}

void kd_err_clear(void) { kd_err_msg_[0] = '\0'; }

kd_err kd_err_set_mpi(int mpi_code, const char *file, int line, const char *what) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (MPI_Error_string(mpi_code, text, &len) != MPI_SUCCESS)
    snprintf(text, sizeof text, "code %d", mpi_code);
  return kd_err_set(KD_ERR_MPI, file, line, "MPI call failed (%s): %s", what, text);
}

void kd_abort_assert_(const char *what, const char *file, int line) {
  fprintf(stderr, "kdistill: internal assertion failed: %s (%s:%d)\n", what, file, line);
  MPI_Abort(MPI_COMM_WORLD, 2);
  abort();
}
