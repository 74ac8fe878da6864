/* blas_threads.c - one BLAS thread per MPI rank. kdistill parallelises over ranks; a threaded
 * OpenBLAS inside every rank oversubscribes the cores (the small QP solves of herding ran 3x
 * slower). OPENBLAS_NUM_THREADS, when the user sets it, wins. */
#include <dlfcn.h>
#include <stdlib.h>

#include "la/la_impl.h"

void kd_la_single_thread(void) {
  if (getenv("OPENBLAS_NUM_THREADS")) return;
  void *self = dlopen(NULL, RTLD_NOW);
  if (!self) return;
  /* resolved at run time so that a non-OpenBLAS BLAS still links */
  void *sym = dlsym(self, "openblas_set_num_threads");
  if (sym) {
    void (*set_threads)(int);
    *(void **)(&set_threads) = sym;
    set_threads(1);
  }
  dlclose(self);
}
