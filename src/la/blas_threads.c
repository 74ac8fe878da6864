/* blas_threads.c - one BLAS thread per MPI rank. kdistill parallelises over ranks; a threaded
 * OpenBLAS inside every rank oversubscribes the cores (the small QP solves of herding ran 3x
 * slower). OPENBLAS_NUM_THREADS, when the user sets it, wins. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

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

/* OpenBLAS takes a buffer of this size (plus a page) per thread at its first level-3 call; when an
 * address-space limit refuses it, OpenBLAS 0.3.21 retries the mmap forever (seen: 10^5 failed
 * calls a second, the run stuck until SIGKILL). Some room on top for the run's own arrays. */
enum { KD_LA_BLAS_BUFFER = 128 << 20, KD_LA_BLAS_SPARE = 16 << 20 };

kd_err kd_la_blas_room(char *msg, size_t len) {
  struct rlimit rl;
  if (msg && len) msg[0] = '\0';
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return KD_OK;
  /* a probe: reserving address space commits no memory (the pages are never touched), and a
   * block of this size is mapped and unmapped on its own, not kept by malloc */
  void *p = malloc((size_t)KD_LA_BLAS_BUFFER + KD_LA_BLAS_SPARE);
  if (p) {
    free(p);
    return KD_OK;
  }
  if (msg && len)
    snprintf(
        msg, len,
        "the address-space limit (ulimit -v %llu KiB) leaves no room for the BLAS library's "
        "%d MiB work buffer, for which OpenBLAS would wait forever; raise it by at least %d MiB "
        "(or lift it: ulimit -v unlimited)",
        (unsigned long long)(rl.rlim_cur / 1024), KD_LA_BLAS_BUFFER >> 20,
        (KD_LA_BLAS_BUFFER + KD_LA_BLAS_SPARE) >> 20);
  return KD_ERR_MEM;
}
