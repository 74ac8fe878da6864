/* no_hdf5.c - the SMPI build's stand-ins (CMake option KD_SMPI, bench/sim/README.md) for the
 * HDF5 files of src/io it leaves out (checkpoint.c, h5_read.c, h5_write.c, build_info.c; the
 * readers' stand-ins are src/pointset/no_hdf5.c): parallel HDF5 is linked against Open MPI, whose
 * MPI cannot run inside SimGrid. Every entry point fails with KD_ERR_UNSUPPORTED naming what is
 * missing; every rank fails the same way without communicating, so the error is agreed. A simulated
 * run takes generated or in-memory inputs and returns its result in memory (kd_job_opts.no_output).
 * Not compiled into the normal build. */
#include "io/io_impl.h"

#define KD_NO_H5_(what)                                                                    \
  kd_err_set(KD_ERR_UNSUPPORTED, __FILE__, __LINE__,                                       \
             "%s: HDF5 files are not available in the SMPI build (generated or in-memory " \
             "inputs only, results in memory)",                                            \
             what)

kd_err kd_checkpoint_read(MPI_Comm comm, const char *path, const char *task, const char *algorithm,
                          const char *config_yaml, kd_result *state, int64_t *iteration,
                          char **inputs) {
  (void)comm, (void)task, (void)algorithm, (void)config_yaml, (void)state, (void)iteration;
  *inputs = NULL;
  return KD_NO_H5_(path);
}

kd_err kd_checkpoint_write(MPI_Comm comm, const char *path, const kd_checkpoint_meta *meta,
                           const kd_result *state) {
  (void)comm, (void)meta, (void)state;
  return KD_NO_H5_(path);
}

kd_err kd_output_info(const char *path, FILE *out) {
  (void)out;
  return KD_NO_H5_(path);
}

kd_err kd_output_read(const char *path, kd_result *res, char **config_yaml, char **task,
                      char **algorithm) {
  (void)res, (void)config_yaml, (void)task, (void)algorithm;
  return KD_NO_H5_(path);
}

kd_err kd_output_write(MPI_Comm comm, const char *path, const kd_output_meta *meta,
                       const kd_result *res) {
  (void)comm, (void)meta, (void)res;
  return KD_NO_H5_(path);
}

kd_err kd_output_write_new(MPI_Comm comm, const char *path, const kd_output_meta *meta,
                           const kd_result *res) {
  (void)comm, (void)meta, (void)res;
  return KD_NO_H5_(path);
}

kd_err kd_h5_file_create(const char *path, kd_h5_file **out) {
  *out = NULL;
  return KD_NO_H5_(path);
}

kd_err kd_h5_file_commit(kd_h5_file **h) {
  if (h) *h = NULL;
  return KD_NO_H5_("kd_h5_file_commit");
}

void kd_h5_file_discard(kd_h5_file **h) {
  if (h) *h = NULL;
}

kd_err kd_h5_file_group(kd_h5_file *h, const char *path) {
  (void)h;
  return KD_NO_H5_(path);
}

kd_err kd_h5_file_attr_i64(kd_h5_file *h, const char *obj, const char *name, int64_t val) {
  (void)h, (void)name, (void)val;
  return KD_NO_H5_(obj);
}

kd_err kd_h5_file_attr_str(kd_h5_file *h, const char *obj, const char *name, const char *val) {
  (void)h, (void)name, (void)val;
  return KD_NO_H5_(obj);
}

kd_err kd_h5_file_f64(kd_h5_file *h, const char *path, int64_t n, const double *v) {
  (void)h, (void)n, (void)v;
  return KD_NO_H5_(path);
}

kd_err kd_h5_file_i64(kd_h5_file *h, const char *path, int64_t n, const int64_t *v) {
  (void)h, (void)n, (void)v;
  return KD_NO_H5_(path);
}

kd_err kd_h5_file_u64(kd_h5_file *h, const char *path, int64_t n, const uint64_t *v) {
  (void)h, (void)n, (void)v;
  return KD_NO_H5_(path);
}

kd_err kd_h5_file_str(kd_h5_file *h, const char *path, int64_t n, const char *const *v) {
  (void)h, (void)n, (void)v;
  return KD_NO_H5_(path);
}

int kd_h5_file_read_i64(const char *path, const char *dset, int64_t *v) {
  (void)path, (void)dset, (void)v;
  return 0; /* a probe: fails without recording an error, as the HDF5 version does */
}

void kd_h5_quiet(void) {}
