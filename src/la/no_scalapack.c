/* no_scalapack.c - the SMPI build's stand-ins (CMake option KD_SMPI, bench/sim/README.md) for
 * eig.c and blacs.c: ScaLAPACK is linked against Open MPI, whose MPI cannot run inside SimGrid.
 * The eigensolvers fail with KD_ERR_UNSUPPORTED (the quad task's Nystrom and Mercer rules need
 * them); every rank fails the same way without communicating, so the error is agreed. Not
 * compiled into the normal build. */
#include "la/la_dist_impl.h"

#define KD_NO_LA_(what)                              \
  kd_err_set(KD_ERR_UNSUPPORTED, __FILE__, __LINE__, \
             "%s: the eigensolvers (ScaLAPACK) are not available in the SMPI build", what)

kd_err kd_la_eig_top_dist(MPI_Comm comm, int l, kd_la_fill_fn fill, void *ctx, int s, int nb,
                          double *lambda, double *U) {
  (void)comm, (void)l, (void)fill, (void)ctx, (void)s, (void)nb, (void)lambda, (void)U;
  return KD_NO_LA_("kd_la_eig_top_dist");
}

kd_err kd_la_eig_top_local(int l, kd_la_fill_fn fill, void *ctx, int s, double *lambda, double *U) {
  (void)l, (void)fill, (void)ctx, (void)s, (void)lambda, (void)U;
  return KD_NO_LA_("kd_la_eig_top_local");
}

kd_err kd_la_null_space(int r, int K, double *M, double rtol, double *V, int *q) {
  (void)r, (void)K, (void)M, (void)rtol, (void)V, (void)q;
  return KD_NO_LA_("kd_la_null_space");
}
