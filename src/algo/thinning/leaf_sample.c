/* leaf_sample.c - the leaf bins of the thinning tree always run in this build. The SMPI build
 * (CMake option KD_SMPI, bench/sim/README.md) compiles leaf_sample_smpi.c instead, whose
 * timing-only runs may skip them. */
#include "algo/thinning/thin_impl.h"

int kd_leaf_sample_run(kd_err (*fn)(void *), void *arg, kd_err *err) {
  *err = fn(arg);
  return 1;
}
