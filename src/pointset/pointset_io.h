/* pointset_io.h - checks of point-set input files without loading them (src/pointset/io_h5.c,
 * io_csv.c, io_npy.c), for validating a configuration (task/: `kdistill validate`, sweep points),
 * and the readers whose hints name the config section being read. `sec` is that section
 * ("target": "set target.dataset"); NULL: data. */
#ifndef KDISTILL_POINTSET_IO_H
#define KDISTILL_POINTSET_IO_H

#include "core/ctx_impl.h"
#include "kdistill/author/kd_pointset.h"

/** Check that `path` is an HDF5 file with a readable 1-D/2-D numeric dataset `dset`; *n, *d get
 *  its shape (optional). Unless allow_external (the key `<sec>.allow_external: true`), a dataset
 *  whose values live outside the file is refused: an external link on its path, external raw
 *  data storage, or a virtual dataset. Rank 0 checks with a serial open, the result is agreed
 *  and broadcast. Collective. */
kd_err kd_h5_check_dataset(MPI_Comm comm, const char *path, const char *dset, const char *sec,
                           int allow_external, int64_t *n, int *d);
/** The dataset of the HDF5 file `path` to read, into out[len]: `want` if given (it must exist:
 *  else an error listing the file's datasets, ending with `hint`, e.g. "set data.dataset" or
 *  "use --dataset NAME"); with want NULL, "data" if the file has it, else the file's only 2-D
 *  numeric dataset (an error listing them when there are none or several). External links on
 *  the way to `want` are refused as in kd_h5_check_dataset. Rank 0 decides, the result is agreed
 *  and broadcast. Collective. */
kd_err kd_h5_pick_dataset(MPI_Comm comm, const char *path, const char *want, const char *hint,
                          const char *sec, int allow_external, char *out, int len);
/** kd_pointset_read_h5 for the config section sec (allow_external as in kd_h5_check_dataset).
 *  Collective. */
kd_err kd_pointset_read_h5_sec(MPI_Comm comm, const char *path, const char *dset, const char *sec,
                               int allow_external, kd_pointset **out);
/** At most this many datasets make one point set (kd_pointset_read_h5_cols). */
#define KD_H5_MAX_DATASETS 64
/** kd_h5_check_dataset for several datasets names[k] of one file as the columns of one point
 *  set: each dataset's first `flatten` dimensions index the rows (flattened in C order, equal for
 *  every dataset), its other dimensions its columns (flattened in C order; none: one column);
 *  the columns follow the order of names. *n, *d get the shape. Collective. */
kd_err kd_h5_check_cols(MPI_Comm comm, const char *path, const char *const *names, int k,
                        int flatten, const char *sec, int allow_external, int64_t *n, int *d);
/** Read the point set kd_h5_check_cols describes: every rank its own block of rows, with
 *  collective reads of at most 2 flatten - 1 hyperslabs per dataset and chunk. Collective. */
kd_err kd_pointset_read_h5_cols(MPI_Comm comm, const char *path, const char *const *names, int k,
                                int flatten, const char *sec, int allow_external,
                                kd_pointset **out);
/** Check that the CSV file `path` parses (header as in kd_pointset_read_csv); *n, *d get its shape
 *  (optional). Rank 0 parses, the result is agreed and broadcast. Collective. */
kd_err kd_csv_check(MPI_Comm comm, const char *path, const kd_csv_opts *o, int64_t *n, int *d);

/** Check a .npy file (npz = 0) or the array `name` of an .npz archive (npz = 1; name NULL or "":
 *  the only array; `hint` ends the message when there are several, e.g. "set data.dataset to
 *  one of" (NULL) or "use --dataset with one of"); *n, *d get its shape (optional). Rank 0 checks,
 * the result is agreed and broadcast. Collective. */
kd_err kd_npy_check(MPI_Comm comm, const char *path, int npz, const char *name, const char *hint,
                    int flatten, int64_t *n, int *d);
/** kd_pointset_read_npy with the hint of kd_npy_check. flatten 0: an n or n x d array; F >= 1: the
 *  first F dimensions index the rows and the others the columns (C order; a Fortran-order array
 *  only as n or n x d). Collective. */
kd_err kd_pointset_read_npy_sec(MPI_Comm comm, const char *path, int npz, const char *name,
                                const char *hint, int flatten, kd_pointset **out);

/* ---- input fingerprints and the ranks' agreement on an input file (io_print.c) ---- */

/** Add the hashes of rows [g0, g0 + nr) (row-major, nr x d doubles) to acc: a sum of one hash per
 *  row keyed by its global index, so blocks may be added in any order, by any rank. Local. */
uint64_t kd_print_rows(uint64_t acc, kd_gidx g0, const double *rows, kd_lidx nr, int d);
/** The fingerprint of a point set as read: shape, element type of its file and content hash
 *  (section and path are left empty for the caller). Collective (one sum). */
kd_err kd_pointset_print(const kd_pointset *ps, kd_input_print *out);
/** Record the element type of the file a reader read ps from ("<f8", "float32", "text"). Local. */
void kd_pointset_set_dtype(kd_pointset *ps, const char *dtype);
/** How a rank's reader sees `path` ("50 x 3 float64"), for the message of kd_input_agree; an
 *  unreadable file is described by its error. Local. */
typedef void (*kd_input_describe)(const char *path, const void *user, char *buf, size_t len);
/** Every rank's signature of `path` (its size and a hash of its first and last 4 KiB) must equal
 *  rank 0's: a rank that sees another file (a stale node-local copy) fails with one message naming
 *  the file, its shape (fn, called on that rank only) and rank 0's (shape0). One broadcast and one
 *  agreement; nothing with 1 rank. Collective. */
kd_err kd_input_agree(MPI_Comm comm, const char *path, const char *shape0, kd_input_describe fn,
                      const void *user);

#endif
