/* h5_util.h - HDF5 checking and writing helpers of io/ (src/io/h5_write.c), for every module that
 * calls HDF5 itself (io/, and the point-set readers in pointset/io_h5*.c): the KD_H5C check, the
 * HDF5 error text, quiet error printing, attributes and datasets. Other modules write HDF5 through
 * kd_io.h (kd_output_write, kd_h5_file). */
#ifndef KDISTILL_IO_H5_UTIL_H
#define KDISTILL_IO_H5_UTIL_H

#include <hdf5.h>

#include "kdistill/author/kd_check.h"

/** Check an HDF5 call (negative hid_t / herr_t = failure): jump to cleanup with `code` and the
 *  formatted message, followed by HDF5's own description of the innermost failure. */
#define KD_H5C(expr, code, ...)                                   \
  do {                                                            \
    if ((long long)(expr) < 0) {                                  \
      err = kd_h5_fail_((code), __FILE__, __LINE__, __VA_ARGS__); \
      goto cleanup;                                               \
    }                                                             \
  } while (0)

/** Record message + ": " + the innermost HDF5 error description; returns code. Local. */
kd_err kd_h5_fail_(kd_err code, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/** Turn off HDF5's automatic error printing on the default stack (idempotent). Local. */
void kd_h5_quiet(void);
/** Scalar UTF-8 string attribute name = val on loc (NULL writes ""). Local (serial HDF5). */
kd_err kd_h5_attr_str(hid_t loc, const char *name, const char *val);
/** The build description of kd_build_info as string attributes build_version, build_compiler,
 *  build_mpi, ... on loc (io/build_info.c). Local. */
kd_err kd_build_attrs(hid_t loc);
/** Scalar numeric attribute: stored as ftype, val read as mtype. Local. */
kd_err kd_h5_attr_num(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *val);
/** Dataset at path (rank 0..2, dims[rank]; float64 or int64 when is_int) written in one call;
 *  lcpl may create intermediate groups. Local. */
kd_err kd_h5_dset(hid_t loc, const char *path, hid_t lcpl, int is_int, int rank,
                  const int64_t *dims, const void *data);

/** Bytes of the user block at the start of every HDF5 file kdistill writes: it holds the
 *  checksum of the rest of the file. */
#define KD_H5_USERBLOCK 512
/** Check a file kdistill wrote against the checksum in its user block before HDF5 parses it
 *  (HDF5 itself may crash on some damaged files). Files without the tag pass. Local;
 *  KD_ERR_INPUT for a damaged file, KD_ERR_FILE when it cannot be read. */
kd_err kd_h5_verify(const char *path);
/** Create an HDF5 file in memory (core driver, no backing store) for a file that will be saved
 *  with kd_h5_image_save: HDF5 itself never writes to disk, so a full disk is an error of our own
 *  write(2) loop and never leaves HDF5 with a half-closed file. Local; KD_ERR_H5. */
kd_err kd_h5_image_create(const char *name, hid_t *f);
/** Close the in-memory file *f (exactly once, *f = -1 on return whatever happens) and write its
 *  image to `path` (created exclusively, mode 0666 & umask), fsync'ed. A failure removes `path`.
 *  Local; KD_ERR_IO naming path. */
kd_err kd_h5_image_save(hid_t *f, const char *path);

#endif
