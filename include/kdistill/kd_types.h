/* kd_types.h - index types, the counter-based RNG, logging and typed parameter tables. */
#ifndef KDISTILL_KD_TYPES_H
#define KDISTILL_KD_TYPES_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "kd_err.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KD_VERSION_STRING "0.1.0"

/** Global row index (over all ranks). Its MPI datatype is KD_MPI_GIDX. */
typedef int64_t kd_gidx;
/** Local row index (within one rank's block). Its MPI datatype is KD_MPI_LIDX. */
typedef int64_t kd_lidx;
#define KD_MPI_GIDX MPI_INT64_T
#define KD_MPI_LIDX MPI_INT64_T

/** Log levels of a context (kd_ctx_set_log_level). */
typedef enum { KD_LOG_QUIET = 0, KD_LOG_NORMAL = 1, KD_LOG_VERBOSE = 2 } kd_log_level;

/** The kind of a configuration value read with kd_job_config_value (kd_job.h). */
typedef enum {
  KD_VALUE_NONE = 0, /* absent, null, or a section or list rather than one value */
  KD_VALUE_INT = 1,  /* an integer: both the integer and the double are set */
  KD_VALUE_REAL = 2, /* a number that is not an integer: the double is set */
  KD_VALUE_BOOL = 3, /* true or false: the integer is 1 or 0 */
  KD_VALUE_TEXT = 4  /* anything else (a string): copied into the buffer */
} kd_value_kind;

#ifdef __cplusplus
}
#endif
#endif
