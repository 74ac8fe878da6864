/* exchange.c - redistribution helpers: the exclusive prefix sum of one integer per rank and the
 * all-to-all exchange of variable-length double blocks (dist_impl.h). */
#include <stdint.h>
#include <stdlib.h>

#include "comm/dist_impl.h"

kd_err kd_dist_exscan_i64(MPI_Comm comm, int64_t v, int64_t *before) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  int64_t r = 0;
  KD_MPI(MPI_Exscan(&v, &r, 1, MPI_INT64_T, MPI_SUM, comm));
  *before = kd_dist_rank(comm) == 0 ? 0 : r; /* undefined on rank 0 */
  kd_dist_comm_count(comm, 16);
cleanup:
  kd_dist_comm_add(kd_t0_);
  return err;
}

kd_err kd_dist_alltoallv(MPI_Comm comm, const double *send, const int64_t *scount, double *recv,
                         const int64_t *rcount) {
  kd_err err = KD_OK;
  const double kd_t0_ = MPI_Wtime();
  const int p = kd_dist_size(comm);
  int *sc = NULL, *sd = NULL, *rc = NULL, *rd = NULL;
  int64_t so = 0, ro = 0;
  sc = calloc((size_t)p, sizeof *sc), sd = calloc((size_t)p, sizeof *sd);
  rc = calloc((size_t)p, sizeof *rc), rd = calloc((size_t)p, sizeof *rd);
  KD_CHECK(sc && sd && rc && rd, KD_ERR_MEM, "all-to-all: out of memory");
  for (int r = 0; r < p; r++) {
    sc[r] = (int)scount[r], sd[r] = (int)so, rc[r] = (int)rcount[r], rd[r] = (int)ro;
    so += scount[r], ro += rcount[r];
  }
  KD_CHECK(so < ((int64_t)1 << 31) && ro < ((int64_t)1 << 31), KD_ERR_INTERNAL,
           "all-to-all of %lld / %lld values too large for one exchange", (long long)so,
           (long long)ro);
  KD_MPI(MPI_Alltoallv(send, sc, sd, MPI_DOUBLE, recv, rc, rd, MPI_DOUBLE, comm));
  kd_dist_comm_count(comm, 8 * (so + ro));
cleanup:
  free(sc), free(sd), free(rc), free(rd);
  kd_dist_comm_add(kd_t0_);
  return err;
}
