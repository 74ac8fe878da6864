/* lib.c - process setup for library callers without a main() (include/kdistill/kd_data.h): what
 * cli/main.c does around its context (MPI, quiet HDF5, one BLAS thread), callable from Python. */
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "comm/dist_lib.h"
#include "io/io_impl.h"
#include "kdistill/kd_data.h"
#include "kdistill/kd_job.h"
#include "kdistill/kd_output.h"
#include "la/la_impl.h"

void kd_lib_quiet(void) {
  kd_h5_quiet();
  kd_la_single_thread();
}

kd_err kd_lib_init(int *initialized_here, int *thread_level) {
  kd_err err = kd_dist_lib_init(initialized_here, thread_level);
  if (err) return err;
  kd_lib_quiet();
  return KD_OK;
}

void kd_lib_finalize(void) { kd_dist_lib_finalize(); }

int64_t kd_lib_comm_world_f(void) { return kd_dist_world_f(); }

int64_t kd_lib_comm_self_f(void) { return kd_dist_self_f(); }

kd_err kd_ctx_create_f(int64_t fcomm, kd_ctx **out) {
  MPI_Comm c = MPI_COMM_NULL;
  *out = NULL;
  kd_err err = kd_dist_comm_from_f(fcomm, &c);
  if (err) return err;
  return kd_ctx_create(c, out);
}

kd_err kd_ctx_agree(kd_ctx *ctx, kd_err err, const char *msg) {
  if (!ctx) return KD_ERR_ARG;
  kd_ctx *prev = kd_ctx_bind(ctx);
  kd_err_clear();
  if (err != KD_OK) kd_err_set(err, __FILE__, __LINE__, "%s", msg ? msg : kd_err_string(err));
  if (kd_dist_agree(kd_ctx_comm(ctx), &err) != KD_OK && err == KD_OK) err = KD_ERR_MPI;
  kd_ctx_unbind(prev);
  return err;
}

void kd_free(void *p) { free(p); }

size_t kd_abi_sizeof(const char *name) {
  static const struct {
    const char *name;
    size_t size;
  } sizes[] = {{"kd_result", sizeof(kd_result)},
               {"kd_result_metric", sizeof(kd_result_metric)},
               {"kd_result_dataset", sizeof(kd_result_dataset)},
               {"kd_job_opts", sizeof(kd_job_opts)},
               {"kd_job_summary", sizeof(kd_job_summary)},
               {"kd_data_array", sizeof(kd_data_array)}};
  for (size_t i = 0; name && i < sizeof sizes / sizeof sizes[0]; i++)
    if (!strcmp(sizes[i].name, name)) return sizes[i].size;
  return 0;
}
