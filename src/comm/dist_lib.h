/* dist_lib.h - MPI process setup for library callers without a main() of their own (the Python
 * package): initialise MPI if nobody has, finalise it at exit if we did, and communicators given
 * as Fortran handles. Used by job/lib.c (include/kdistill/kd_data.h). */
#ifndef KDISTILL_DIST_LIB_H
#define KDISTILL_DIST_LIB_H

#include <mpi.h>
#include <stdint.h>

#include "kdistill/author/kd_check.h"

/** MPI_Init_thread(MPI_THREAD_SERIALIZED) unless MPI is initialised; *here = 1 if this call did
 *  it; *level = the thread level in effect. KD_ERR_MPI if MPI was already finalised. Local
 *  (collective over MPI_COMM_WORLD when it initialises). */
kd_err kd_dist_lib_init(int *here, int *level);
/** MPI_Finalize if MPI is initialised and not yet finalised. Collective over MPI_COMM_WORLD. */
void kd_dist_lib_finalize(void);
/** MPI_Comm_c2f(MPI_COMM_WORLD). Local. */
int64_t kd_dist_world_f(void);
/** MPI_Comm_c2f(MPI_COMM_SELF). Local. */
int64_t kd_dist_self_f(void);
/** MPI_Comm_f2c(f); KD_ERR_ARG for MPI_COMM_NULL. Local. */
kd_err kd_dist_comm_from_f(int64_t f, MPI_Comm *out);

#endif
