/* leaf_sample_smpi.c - the SMPI build's leaf bins (CMake option KD_SMPI, bench/sim/README.md),
 * in place of leaf_sample.c. With KD_SIM_SAMPLE_LEAVES=N (N >= 1) in the environment the run is
 * for timing only: SimGrid's global sampling (SMPI_SAMPLE_GLOBAL) runs the first N leaf bins of
 * the job, over all simulated ranks, and for every later bin skips the computation and charges
 * their mean simulated time to the rank instead. A skipped bin's output is a placeholder (the
 * caller's), so the coreset is not the job's: such runs are never fingerprinted. Without the
 * variable every bin runs, as in the real build. Local (the sampling's state is SimGrid's). */
#include <stdlib.h>

#include <smpi/smpi.h>

#include "algo/thinning/thin_impl.h"

int kd_leaf_sample_run(kd_err (*fn)(void *), void *arg, kd_err *err) {
  const char *v = getenv("KD_SIM_SAMPLE_LEAVES");
  const int iters = v ? atoi(v) : 0;
  int ran = 0;
  *err = KD_OK;
  if (iters <= 0) {
    *err = fn(arg);
    return 1;
  }
  SMPI_SAMPLE_GLOBAL(int i = 0, i < 1, i++, iters, 0.0) {
    *err = fn(arg);
    ran = 1;
  }
  return ran;
}
