/* lib_mpi.c - MPI process setup for library callers (dist_lib.h): the only place besides
 * cli/main.c that initialises or finalises MPI, and only when nobody else has. */
#include "comm/dist_lib.h"

kd_err kd_dist_lib_init(int *here, int *level) {
  kd_err err = KD_OK;
  int init = 0, fin = 0, provided = MPI_THREAD_SINGLE;
  if (here) *here = 0;
  MPI_Finalized(&fin);
  KD_CHECK(!fin, KD_ERR_MPI, "MPI was already finalized in this process; start a new one");
  MPI_Initialized(&init);
  if (!init) {
    KD_CHECK(MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) == MPI_SUCCESS,
             KD_ERR_MPI, "MPI_Init_thread failed");
    if (here) *here = 1;
  }
  KD_MPI(MPI_Query_thread(&provided));
  if (level) *level = provided;
cleanup:
  return err;
}

void kd_dist_lib_finalize(void) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin) MPI_Finalize();
}

int64_t kd_dist_world_f(void) { return (int64_t)MPI_Comm_c2f(MPI_COMM_WORLD); }

int64_t kd_dist_self_f(void) { return (int64_t)MPI_Comm_c2f(MPI_COMM_SELF); }

kd_err kd_dist_comm_from_f(int64_t f, MPI_Comm *out) {
  kd_err err = KD_OK;
  *out = MPI_Comm_f2c((MPI_Fint)f);
  KD_CHECK(*out != MPI_COMM_NULL, KD_ERR_ARG, "the communicator is MPI_COMM_NULL");
cleanup:
  return err;
}
