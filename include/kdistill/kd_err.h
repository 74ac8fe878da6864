/* kd_err.h - error codes and their messages (user tier).
 *
 * One X-macro table gives each code its number, name, message and exit status.
 */
#ifndef KDISTILL_KD_ERR_H
#define KDISTILL_KD_ERR_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "kd_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(code, value, exit_status, message). Exit 1: the user's input; exit 2: the environment. */
#define KD_ERR_LIST(X)                                           \
  X(KD_OK, 0, 0, "success")                                      \
  X(KD_ERR_CONFIG, 1, 1, "invalid configuration")                \
  X(KD_ERR_INPUT, 2, 1, "invalid input data")                    \
  X(KD_ERR_ARG, 3, 1, "invalid argument")                        \
  X(KD_ERR_FILE, 4, 1, "cannot read input file")                 \
  X(KD_ERR_UNSUPPORTED, 5, 1, "unsupported combination")         \
  X(KD_ERR_NUMERIC, 6, 1, "numerical failure")                   \
  X(KD_ERR_INTERRUPTED, 7, 3, "interrupted; checkpoint written") \
  X(KD_ERR_MEM, 8, 2, "out of memory")                           \
  X(KD_ERR_IO, 9, 2, "I/O error")                                \
  X(KD_ERR_MPI, 10, 2, "MPI error")                              \
  X(KD_ERR_H5, 11, 2, "HDF5 error")                              \
  X(KD_ERR_LA, 12, 2, "linear algebra error")                    \
  X(KD_ERR_INTERNAL, 13, 2, "internal error")

typedef enum {
#define KD_ERR_ENUM_(c, v, s, m) c = v,
  KD_ERR_LIST(KD_ERR_ENUM_)
#undef KD_ERR_ENUM_
} kd_err;

/** Static message for a code. Local. */
KD_API const char *kd_err_string(kd_err code);
/** Process exit status for a code (0 ok, 1 bad input, 2 environment, 3 interrupted). Local. */
KD_API int kd_err_exit_status(kd_err code);
/** The enumerator's name of a code ("KD_ERR_CONFIG"), NULL for a value that is no code. The codes
 *  are 0 .. n-1 with no gap, so a binding lists them by counting up to the first NULL. Local. */
KD_API const char *kd_err_name(int code);

#ifdef __cplusplus
}
#endif
#endif
