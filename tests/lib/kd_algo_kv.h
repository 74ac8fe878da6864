/* kd_algo_kv.h - the one test helper that runs a registered algorithm with parameters given as
 * "key=value" text: registry lookup by (task, name), the descriptor's defaults, each setting
 * checked as the config layer checks it (kd_params_set_text), then run() on the given
 * communicator. Shared by every suite under tests/ (herding, thinning, quadrature, CTT, the
 * checkpoint tests and the algorithm conformance suite). */
#ifndef KDISTILL_TESTS_KD_ALGO_KV_H
#define KDISTILL_TESTS_KD_ALGO_KV_H

#include "kdistill/author.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Optional inputs of kd_algo_run_kv (zero-initialise; NULL = all off). Borrowed. */
typedef struct {
  const void *task_in; /* task-specific input (e.g. CTT's kd_ctt_in) */
  kd_ckpt *ckpt;       /* checkpointing, as kd_algo_in.ckpt (NULL = off) */
  /* 1: like the task layer, fill res->mmd with kd_mmd against the target when run() left it
   * NaN (needs a target) */
  int fill_mmd;
} kd_algo_kv_opts;

/** Fill p with desc's defaults, then apply settings kv[] (NULL-terminated "key=value" list, may be
 *  NULL); an error message names "algorithm.<key>". On error p is freed. Local. */
kd_err kd_algo_params_kv(const kd_algo_desc *desc, const char *const *kv, kd_params *p);

/** Run the registered algorithm (task, name) on comm with settings kv[] over kernel k, points,
 *  target t and seed; opt (may be NULL) adds task_in, checkpointing and MMD filling. res is freed
 *  first, then filled (replicated on every rank). KD_ERR_CONFIG if (task, name) is not registered
 *  or a setting is refused. Collective over comm. */
kd_err kd_algo_run_kv(MPI_Comm comm, const char *task, const char *name, const char *const *kv,
                      kd_kernel *k, kd_pointset *points, kd_target *t, uint64_t seed,
                      const kd_algo_kv_opts *opt, kd_result *res);

#ifdef __cplusplus
}
#endif
#endif
