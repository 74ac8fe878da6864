/* kd_data.h - in-memory inputs and process setup for library callers (the Python package,
 * embedding applications).
 *
 * A caller that holds its rows in memory registers them as named arrays in kd_job_opts (kd_job.h)
 * and refers to them from the configuration with a point-set section {type: memory, name: NAME}
 * (data, candidates, target, x, y, ...). Each rank passes its own block of rows; the global row
 * order is rank 0's rows, then rank 1's, and so on (an exclusive scan of the local row counts).
 * The rows are borrowed for the duration of the call: float64 rows stored contiguously in C order
 * whose block is the library's own block split (rank r of p owns rows [n r / p, n (r+1) / p)) are
 * used in place; anything else (float32, Fortran order, strided, another split) is converted once
 * into the library's storage.
 *
 *   kd_data_array x = {"X", rows, n_local, d, KD_DTYPE_F64, d, 1};
 *   kd_job_opts o = {.config_text = "task: thin\ndata: {type: memory, name: X}\n...",
 *                    .arrays = &x, .n_arrays = 1, .no_output = 1};
 *   err = kd_job_run(ctx, &o, &summary, &result);
 */
#ifndef KDISTILL_KD_DATA_H
#define KDISTILL_KD_DATA_H

#include <mpi.h>
#include <stdint.h>

#include "kd_api.h"
#include "kd_ctx.h"
#include "kd_err.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Element type of a kd_data_array. */
typedef enum { KD_DTYPE_F64 = 0, KD_DTYPE_F32 = 1 } kd_dtype;

/** This rank's block of an n x d array, element (i, j) at data[i * row_stride + j * col_stride]
 *  (strides in elements: C order is {d, 1}, Fortran order {1, n_local}). All fields borrowed. */
typedef struct {
  const char *name; /* the name a {type: memory, name: ...} section refers to */
  const void *data; /* may be NULL when n_local == 0 */
  int64_t n_local;  /* rows on this rank (>= 0) */
  int d;            /* columns (>= 1, the same on every rank) */
  int dtype;        /* kd_dtype */
  int64_t row_stride, col_stride;
} kd_data_array;

/* ---------------- process setup for callers without a main() of their own ---------------- */
/** Initialise MPI unless someone already has (an MPI singleton without a launcher; under mpirun
 *  the launched world), asking for MPI_THREAD_SERIALIZED; switch off HDF5's automatic error
 *  printing and pin OpenBLAS to one thread (bitwise-reproducible results, as the CLI does).
 *  Idempotent. @param[out] initialized_here 1 if this call initialised MPI (then the caller
 *  finalises it with kd_lib_finalize), else 0 (may be NULL). @param[out] thread_level the MPI
 *  thread level in effect (may be NULL). Errors: KD_ERR_MPI (MPI was already finalised). */
KD_API kd_err kd_lib_init(int *initialized_here, int *thread_level);
/** What kd_lib_init does besides MPI, for a program that initialises MPI itself (the CLI): HDF5's
 *  automatic error printing off, OpenBLAS on one thread. Local. */
KD_API void kd_lib_quiet(void);
/** MPI_Finalize unless MPI is not initialised or already finalised. Every kd_ctx must have been
 *  destroyed. Collective over MPI_COMM_WORLD. */
KD_API void kd_lib_finalize(void);
/** The Fortran handle (MPI_Comm_c2f) of MPI_COMM_WORLD, for callers that pass communicators as
 *  integers (mpi4py's Comm.py2f()). Local. */
KD_API int64_t kd_lib_comm_world_f(void);
/** The Fortran handle of MPI_COMM_SELF (a context for one process's own work, e.g. reading an
 *  output file). Local. */
KD_API int64_t kd_lib_comm_self_f(void);
/** kd_ctx_create on the communicator whose Fortran handle is fcomm (MPI_Comm_f2c). Collective.
 *  Errors: as kd_ctx_create; KD_ERR_ARG for a null communicator. */
KD_API kd_err kd_ctx_create_f(int64_t fcomm, kd_ctx **out);
/** Agree over the context's communicator on an error a caller found on some ranks before a
 *  collective call (e.g. a bad argument on one rank): returns the code of the lowest failing rank
 *  on every rank, with that rank's message (msg, or the code's text when msg is NULL) in
 *  kd_ctx_message(ctx). KD_OK everywhere when no rank failed. Collective. */
KD_API kd_err kd_ctx_agree(kd_ctx *ctx, kd_err err, const char *msg);

#ifdef __cplusplus
}
#endif
#endif
