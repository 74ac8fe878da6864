/* stein.c - the Stein target: for a Stein kernel k_p (kernel/stein.c) the mean embedding
 * z(x) = E_{Y~p} k_p(x, Y) vanishes (Stein's identity, under the usual decay of p at infinity), and
 * so does the double integral, so MMD^2(w, X) = w^T K_p(X, X) w = KSD^2 (docs/stein.md). target.c
 * returns the zeros; this file only creates the object. */
#include <stdlib.h>

#include "embed/target_impl.h"

kd_err kd_target_create_stein(MPI_Comm comm, kd_kernel *k, kd_target **out) {
  kd_err err = KD_OK;
  kd_target *t = NULL;
  KD_CHECK(out && k, KD_ERR_ARG, "target: NULL argument");
  *out = NULL;
  KD_CHECK(kd_kernel_has(k, KD_KCAP_STEIN), KD_ERR_CONFIG,
           "target.type: stein needs kernel.name: stein (the kernel is %s)", kd_kernel_describe(k));
  KD_ALLOC(t, 1);
  t->closed = 1;
  t->stein = 1;
  t->comm = comm;
  t->k = k;
  *out = t;
  t = NULL;
cleanup:
  kd_target_destroy(&t);
  return err;
}
