/* kd_build.h - what this kdistill is and what it runs on: its version (with `git describe` when it
 * was built from a git checkout), the compiler that built it, and the MPI, HDF5, BLAS, ScaLAPACK
 * and libyaml it uses (user tier). `kdistill --version` prints it; every output file stores the
 * same as attributes of its root group (build_version, build_compiler, build_mpi, ...). */
#ifndef KDISTILL_KD_BUILD_H
#define KDISTILL_KD_BUILD_H

#include <stddef.h>

#include "kd_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The build description as "key: value" lines, keys in this order: version, compiler, mpi,
 *  hdf5, blas, scalapack, yaml. Library versions are asked of the libraries the process has
 *  loaded where they can tell (MPI, HDF5, OpenBLAS, libyaml); ScaLAPACK's is the one found at
 *  build time. Writes at most size bytes including the NUL (snprintf rules); returns the length
 *  of the whole text. Callable before MPI_Init. Local. */
KD_API size_t kd_build_info(char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
