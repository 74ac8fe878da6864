/* io_impl.h - private helpers of src/io/ and src/pointset/io_*.c: HDF5 checking, the HDF5 error
 * text, and the output-file summary used by `kdistill info`. */
#ifndef KDISTILL_IO_IMPL_H
#define KDISTILL_IO_IMPL_H

#include <hdf5.h>
#include <stdio.h>

#include "kdistill/kd_io.h"

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

/** Print a human summary of a kdistill output file to `out` (root attributes, coreset size and
 *  weight sum, metrics, trace length, extra datasets). Local. Errors name the file. */
kd_err kd_output_info(const char *path, FILE *out);

/** If `key` is absent, insert the list v[0..n) as its resolved default (marked read); no effect
 *  when present. Local. */
kd_err kd_config_default_f64_list(kd_config *cfg, const char *key, int n, const double *v);

/** Check that `path` is an HDF5 file with a readable 1-D/2-D numeric dataset `dset`; *n, *d get
 *  its shape (optional). Rank 0 checks with a serial open, the result is agreed and broadcast.
 *  Collective. */
kd_err kd_h5_check_dataset(MPI_Comm comm, const char *path, const char *dset, int64_t *n, int *d);
/** Check that the CSV file `path` parses (header as in kd_pointset_read_csv); *n, *d get its shape
 *  (optional). Rank 0 parses, the result is agreed and broadcast. Collective. */
kd_err kd_csv_check(MPI_Comm comm, const char *path, int header, int64_t *n, int *d);

#endif
