/* pointset_impl.h - the point-set struct, shared by the files of src/pointset/ only. */
#ifndef KDISTILL_POINTSET_IMPL_H
#define KDISTILL_POINTSET_IMPL_H

#include "kdistill/author/kd_pointset.h"

struct kd_pointset {
  MPI_Comm comm; /* borrowed */
  int rank, size;
  kd_gidx n; /* global rows */
  int d;
  kd_gidx offset;
  kd_lidx n_local;
  double *rows;      /* [n_local*d] owned */
  double *w;         /* [n_local] owned, NULL = uniform */
  int rows_borrowed; /* 1: rows belong to the caller (kd_pointset_from_array), not freed */
  int lazy;          /* 1: no rows stored; row g is draw g of (gen, gen_seed), made on demand */
  kd_measure gen;    /* lazy: owned copy of the generator measure */
  uint64_t gen_seed;
  char dtype[16]; /* the element type of the file it was read from ("" = float64 values) */
};

#endif
