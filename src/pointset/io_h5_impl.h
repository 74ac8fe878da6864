/* io_h5_impl.h - the HDF5 checks shared by the readers of one dataset (io_h5.c) and of several
 * datasets as columns (io_h5_cols.c). Local, serial HDF5 (rank 0's probe). */
#ifndef KDISTILL_POINTSET_IO_H5_IMPL_H
#define KDISTILL_POINTSET_IO_H5_IMPL_H

#include <stddef.h>

#include "io/h5_util.h"

/** "; it has: /X (1000 x 5), /y (1000) (HINT)" or "; it has no datasets" into buf (hint NULL:
 *  "set data.dataset"). */
void kd_h5_datasets_(hid_t f, const char *hint, char *buf, size_t len);
/** Refuse an external link on the way to dset (the values would come from a file the user did
 *  not name); the message names the key <sec>.allow_external. */
kd_err kd_h5_no_external_link_(hid_t f, const char *path, const char *dset, const char *sec);
/** Refuse values stored outside the file: external raw data or a virtual dataset. */
kd_err kd_h5_no_external_data_(hid_t ds, const char *path, const char *dset, const char *sec);

/** Open the numeric dataset dset of f for reading its shape: the checks above (unless
 *  allow_ext), existence (a missing one's message lists the file's datasets and ends with "set
 *  <sec>.<key>"), an integer or float type. *ds and *sp are the caller's to close. */
kd_err kd_h5_open_numeric_(hid_t f, const char *path, const char *dset, const char *sec,
                           const char *key, int allow_ext, hid_t *ds, hid_t *sp);

#endif
