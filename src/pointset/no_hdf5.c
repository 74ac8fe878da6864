/* no_hdf5.c - the SMPI build's stand-ins (CMake option KD_SMPI, bench/sim/README.md) for the
 * HDF5 readers io_h5.c and io_h5_cols.c: parallel HDF5 is linked against Open MPI, whose MPI
 * cannot run inside SimGrid. Every entry point fails with KD_ERR_UNSUPPORTED naming the file;
 * every rank fails the same way without communicating, so the error is agreed. Not compiled into
 * the normal build. */
#include "pointset/pointset_io.h"

#define KD_NO_H5_(what)                                                                    \
  kd_err_set(KD_ERR_UNSUPPORTED, __FILE__, __LINE__,                                       \
             "%s: HDF5 files are not available in the SMPI build (generated or in-memory " \
             "inputs only, results in memory)",                                            \
             what)

kd_err kd_h5_check_cols(MPI_Comm comm, const char *path, const char *const *names, int k,
                        int flatten, const char *sec, int allow_external, int64_t *n, int *d) {
  (void)comm, (void)names, (void)k, (void)flatten, (void)sec, (void)allow_external, (void)n,
      (void)d;
  return KD_NO_H5_(path);
}

kd_err kd_h5_check_dataset(MPI_Comm comm, const char *path, const char *dset, const char *sec,
                           int allow_external, int64_t *n, int *d) {
  (void)comm, (void)dset, (void)sec, (void)allow_external, (void)n, (void)d;
  return KD_NO_H5_(path);
}

kd_err kd_h5_pick_dataset(MPI_Comm comm, const char *path, const char *want, const char *hint,
                          const char *sec, int allow_external, char *out, int len) {
  (void)comm, (void)want, (void)hint, (void)sec, (void)allow_external, (void)out, (void)len;
  return KD_NO_H5_(path);
}

kd_err kd_pointset_read_h5_cols(MPI_Comm comm, const char *path, const char *const *names, int k,
                                int flatten, const char *sec, int allow_external,
                                kd_pointset **out) {
  (void)comm, (void)names, (void)k, (void)flatten, (void)sec, (void)allow_external, (void)out;
  return KD_NO_H5_(path);
}

kd_err kd_pointset_read_h5_sec(MPI_Comm comm, const char *path, const char *dset, const char *sec,
                               int allow_external, kd_pointset **out) {
  (void)comm, (void)dset, (void)sec, (void)allow_external, (void)out;
  return KD_NO_H5_(path);
}
