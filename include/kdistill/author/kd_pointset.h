/* kd_pointset.h - n x d float64 point sets, rows split in contiguous blocks over a communicator,
 * plus the generator measures (uniform_box, gaussian, gaussian_mixture, sphere, torus, grid) whose
 * rows depend only on (seed, global row index). */
#ifndef KDISTILL_KD_POINTSET_H
#define KDISTILL_KD_POINTSET_H

#include <mpi.h>

#include "../kd_data.h"
#include "kd_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------- measures (generators; also the closed-form targets) ---------------- */
typedef enum {
  KD_MEASURE_NONE = 0,
  KD_MEASURE_UNIFORM_BOX,      /* uniform on prod [lo_i, hi_i] */
  KD_MEASURE_GAUSSIAN,         /* N(mean, diag(sd^2)) */
  KD_MEASURE_GAUSSIAN_MIXTURE, /* sum_k w_k N(means_k, diag(sds_k^2)) */
  KD_MEASURE_SPHERE,           /* uniform on S^{d-1} */
  KD_MEASURE_TORUS,            /* uniform on [0,1)^d */
  KD_MEASURE_GRID,             /* tensor grid, grid_n points per axis, cell midpoints of [lo,hi] */
  KD_MEASURE_TRUNC_GAUSSIAN    /* N(mean, diag(sd^2)) conditioned on the box prod [lo_i, hi_i] */
} kd_measure_type;

/** A probability measure described by parameters. Arrays are owned by the struct (free with
 *  kd_measure_free). Unused arrays are NULL. */
typedef struct {
  kd_measure_type type;
  int d;
  double *lo, *hi;     /* [d] box bounds (UNIFORM_BOX, GRID, TRUNC_GAUSSIAN) */
  double *mean, *sd;   /* [d] (GAUSSIAN, TRUNC_GAUSSIAN) */
  int n_comp;          /* GAUSSIAN_MIXTURE: number of components */
  double *means, *sds; /* [n_comp*d] row-major */
  double *mix_w;       /* [n_comp], sums to 1 */
  int64_t grid_n;      /* GRID: points per axis */
} kd_measure;

/** Name <-> type ("uniform_box", "gaussian", ...). Local. */
const char *kd_measure_name(kd_measure_type t);
kd_measure_type kd_measure_from_name(const char *name); /* KD_MEASURE_NONE if unknown */
/** Deep copy. Local. */
kd_err kd_measure_copy(const kd_measure *src, kd_measure *dst);
void kd_measure_free(kd_measure *m);
/** Check parameters (sizes, sd > 0, lo < hi, weights >= 0 summing to 1). Message names `ctx`. */
kd_err kd_measure_validate(const kd_measure *m, const char *ctx);
/** The measure types a section may name (generated rows, closed-form targets). */
#define KD_MEASURE_CHOICES "uniform_box|gaussian|gaussian_mixture|sphere|torus|grid|trunc_gaussian"
/** Read the measure section s (type, d, lo/hi, mean/sd, a mixture's means/sds/weights, grid_n;
 *  d defaults to the longest vector given, else d_default if > 0, else 3 for a sphere and 2 for
 *  the others) and validate it. Errors name FILE:LINE: key. Free with kd_measure_free. Local. */
kd_err kd_measure_read(const kd_section *s, int d_default, kd_measure *m);
/** Rows row0 .. row0+nrows-1 of the seeded sample, written row-major to out[nrows*d]. Each row
 *  depends only on (seed, global row index). GRID ignores the seed (row = grid point). Local. */
kd_err kd_measure_sample(const kd_measure *m, uint64_t seed, kd_gidx row0, kd_lidx nrows,
                         double *out);

/* ---------------- point sets ---------------- */
typedef struct kd_pointset kd_pointset;

/** Create an n x d set (zeroed rows, uniform weights) with rows block-split over comm: rank r owns
 *  [n*r/p, n*(r+1)/p). comm is borrowed and must outlive the set. Collective (no traffic). */
kd_err kd_pointset_create(MPI_Comm comm, kd_gidx n, int d, kd_pointset **out);
/** Create and fill from a generator measure. Collective. */
kd_err kd_pointset_generate(MPI_Comm comm, const kd_measure *m, kd_gidx n, uint64_t seed,
                            kd_pointset **out);
/** Create an n x d set whose rows are never stored ("lazy"): row g is row g of the seeded sample of
 *  m (the rows kd_pointset_generate would hold), made on demand by kd_pointset_rows_at. Only code
 *  that reads rows through kd_pointset_rows_at accepts such a set (kd_pointset_is_lazy): for it,
 *  kd_pointset_rows_const is NULL. Collective (no traffic). */
kd_err kd_pointset_generate_lazy(MPI_Comm comm, const kd_measure *m, kd_gidx n, uint64_t seed,
                                 kd_pointset **out);
/** 1 for a set made by kd_pointset_generate_lazy. Local. */
int kd_pointset_is_lazy(const kd_pointset *ps);
/** The generator measure of a lazy set (NULL otherwise). Local. */
const kd_measure *kd_pointset_generator(const kd_pointset *ps);
/** Rows [g0, g0 + cnt) into dst[cnt*d]: generated for a lazy set, else copied from this rank's
 *  block (the rows must be local). Local. */
kd_err kd_pointset_rows_at(const kd_pointset *ps, kd_gidx g0, kd_lidx cnt, double *dst);
/** Create from rows that every rank holds identically (rows[n*d], optional weights[n]); each rank
 *  keeps its own block. Collective (no traffic). */
kd_err kd_pointset_from_replicated(MPI_Comm comm, kd_gidx n, int d, const double *rows,
                                   const double *weights, kd_pointset **out);
/** Free. Accepts NULL / *ps == NULL and sets *ps = NULL. Local. */
void kd_pointset_destroy(kd_pointset **ps);

MPI_Comm kd_pointset_comm(const kd_pointset *ps);
kd_gidx kd_pointset_n_global(const kd_pointset *ps);
kd_lidx kd_pointset_n_local(const kd_pointset *ps);
int kd_pointset_dim(const kd_pointset *ps);
/** Global index of this rank's first row. */
kd_gidx kd_pointset_offset(const kd_pointset *ps);
/** Global row offset of rank r's block (r in [0,p]; r = p gives n). */
kd_gidx kd_pointset_rank_offset(const kd_pointset *ps, int r);
/** Rank owning global row g. */
int kd_pointset_owner(const kd_pointset *ps, kd_gidx g);

/** Borrow this rank's rows (n_local x d, row-major, writable). Pair with restore. Local. */
void kd_pointset_get_rows(kd_pointset *ps, double **rows);
void kd_pointset_restore_rows(kd_pointset *ps, double **rows);
/** Read-only borrow. */
const double *kd_pointset_rows_const(const kd_pointset *ps);
/** Optional per-row weights of this rank's rows (NULL when uniform). The weights of the whole set
 *  sum to 1 when set. Local. */
const double *kd_pointset_weights_const(const kd_pointset *ps);
/** Set local weights (copied; NULL = uniform). Collective: checks >= 0, finite and normalises the
 *  global sum to 1 (error if the sum is 0). */
kd_err kd_pointset_set_weights(kd_pointset *ps, const double *w_local);

/** Reject non-finite values and empty sets; the message names the first bad global row (1-based
 *  in the message, as users count) and `ctx` (file or key). Agreed over ranks. Collective. */
kd_err kd_pointset_validate(const kd_pointset *ps, const char *ctx);
/** Gather the global rows idx[0..k) into out[k*d] on every rank (idx identical on all ranks).
 *  Collective. */
kd_err kd_pointset_gather_rows(const kd_pointset *ps, const kd_gidx *idx, kd_lidx k, double *out);
/** Choose k distinct global rows, the same at any rank count: row g gets the key
 *  kd_rng_u64(seed, stream, g) and the k smallest keys win (ties: lowest index); idx[k] in key
 *  order on every rank. Collective. */
kd_err kd_pointset_choose_keyed(const kd_pointset *ps, uint64_t seed, uint64_t stream, kd_gidx k,
                                kd_gidx *idx);
/** All rows on every rank (only for small sets): out[n*d]. Collective. */
kd_err kd_pointset_allgather(const kd_pointset *ps, double *out);

/** Read dataset `dset` (2-D, any float or integer type) of HDF5 file `path` with a parallel
 *  hyperslab read; 1-D datasets are read as d = 1. Errors name the file and dataset. Collective. */
kd_err kd_pointset_read_h5(MPI_Comm comm, const char *path, const char *dset, kd_pointset **out);
/** Read a NumPy array: a .npy file (npz = 0) or the array `name` of an .npz archive written by
 *  np.savez (npz = 1; name NULL or "": the only array); float64/float32/int64/int32, C or Fortran
 *  order, 1-D (d = 1) or 2-D. Each rank reads only its own rows. Errors name the file (and list
 *  the archive's arrays). Collective. */
kd_err kd_pointset_read_npy(MPI_Comm comm, const char *path, int npz, const char *name,
                            kd_pointset **out);
/** Read a CSV file (rank 0 parses, rows scattered); header line detected or forced with
 *  header = 1 / 0 / -1 (auto). Errors name file and line. Collective. */
kd_err kd_pointset_read_csv(MPI_Comm comm, const char *path, int header, kd_pointset **out);
/** How to read a CSV file (zero-initialise, then header = -1 for the automatic header). */
typedef struct {
  int header;                   /* 1 / 0 / -1 (auto: a first line that is not all numbers) */
  char delim;                   /* ',', ';', '\t', ' ' (runs of blanks), or 0: from line 1 */
  int ncols;                    /* columns kept, in this order (0: all; see below) */
  const int *cols;              /* ncols 0-based indices, or ... */
  const char *const *col_names; /* ... ncols header names (an entry NULL: use cols[i]) */
  const char *section; /* config section the hints name ("target": target.header); NULL: data */
} kd_csv_opts;
/** kd_pointset_read_csv with a separator and a column selection. Without a selection, a header
 *  whose first name is empty (pandas' index column) drops that column (logged). Errors name the
 *  file, line and column. Collective. */
kd_err kd_pointset_read_csv_opts(MPI_Comm comm, const char *path, const kd_csv_opts *o,
                                 kd_pointset **out);

/* ---------------- in-memory arrays (kd_data.h) ---------------- */
/** Build a point set from the ranks' blocks of `a` (see kd_data.h for the row order and
 *  when the rows are borrowed: then `a->data` must outlive the point set). Rows are not checked
 *  for NaN here (kd_pointset_validate does). Collective over comm; errors agreed.
 *  @param[in] what names the array in messages (e.g. "data (memory X)"). Errors: KD_ERR_INPUT
 *  (d differs across ranks, negative n_local, unknown dtype, bad strides), KD_ERR_MEM, KD_ERR_MPI.
 */
kd_err kd_pointset_from_array(MPI_Comm comm, const kd_data_array *a, const char *what,
                              kd_pointset **out);

#ifdef __cplusplus
}
#endif
#endif
