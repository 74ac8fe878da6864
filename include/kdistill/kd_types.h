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

#ifdef __cplusplus
}
#endif
#endif
