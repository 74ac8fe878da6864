/* lf_common.h - what the libFuzzer harnesses of tests/fuzz/lf share: MPI started once as an
 * isolated singleton, one quiet context bound for the messages, and the input as a file the
 * readers can open (an anonymous memory file, /proc/self/fd/N: nothing is written to disk).
 * Built only with -DKD_ENABLE_FUZZ=ON and clang (tests/fuzz/CMakeLists.txt). */
#ifndef KDISTILL_LF_COMMON_H
#define KDISTILL_LF_COMMON_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/ctx_impl.h"
#include "kdistill/kd_ctx.h"
#include "kdistill/author/kd_check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer calls this once: MPI (no helper daemon: kdistill never spawns) and a bound context on
 * MPI_COMM_SELF. Defined here, once per harness (each includes this header once). */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  static kd_ctx *ctx = NULL; /* the harness process's one context, alive until exit */
  setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
  /* Open MPI's own handlers for SIGABRT/SIGSEGV/... would replace libFuzzer's and ASan's: a
   * crash would then print Open MPI's backtrace and leave no reproducer */
  setenv("OMPI_MCA_opal_signal", "", 0);
  int done = 0;
  MPI_Initialized(&done);
  if (!done && MPI_Init(argc, argv) != MPI_SUCCESS) abort();
  if (kd_ctx_create(MPI_COMM_SELF, &ctx) != KD_OK) abort();
  kd_ctx_set_log_level(ctx, KD_LOG_QUIET);
  kd_ctx_bind(ctx);
  return 0;
}

/* The bytes as a regular file at path[len] (a memfd, re-opened by the readers through /proc);
 * returns its descriptor (close it after the call) or -1. */
static inline int lf_file(const uint8_t *data, size_t size, char *path, size_t len) {
  int fd = memfd_create("kd_fuzz", MFD_CLOEXEC);
  if (fd < 0) return -1;
  for (size_t at = 0; at < size;) {
    ssize_t w = write(fd, data + at, size - at);
    if (w <= 0) {
      close(fd);
      return -1;
    }
    at += (size_t)w;
  }
  snprintf(path, len, "/proc/self/fd/%d", fd);
  return fd;
}

#endif
