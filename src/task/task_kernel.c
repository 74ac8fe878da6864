/* task_kernel.c - a task's kernel: its section read beside the kernel (kernel/kernel_config.c), the
 * length scale 'median' resolved on the task's data, and the kernel the run used, recorded as
 * metrics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task/task_impl.h"

kd_err kd_task_read_kernel(const kd_task_ctx *ctx, const char *section, int d, kd_kernel **out) {
  const kd_section s = {ctx->cfg, section, ctx->comm, ctx->validate_only};
  return kd_kernel_read(&s, d, out);
}

kd_err kd_task_kernel_finish(const kd_task_ctx *ctx, kd_kernel *k, const kd_pointset *ps) {
  kd_err err = KD_OK;
  kd_pointset *sample = NULL;
  int64_t ns = 1000;
  KD_TRY(kd_task_stein_precond(ctx, k, ps));
  if (!k || !kd_kernel_median_pending(k)) return KD_OK;
  ns = kd_kernel_get_params(k)->median_sample;
  KD_CHECK(ps != NULL, KD_ERR_CONFIG,
           "kernel.ls: 'median' needs a point set to compute the heuristic on; set a number");
  if (kd_pointset_is_lazy(ps)) {
    /* the first rows of a generated set are independent draws: the heuristic on 2^20 of them */
    kd_gidx n = kd_pointset_n_global(ps);
    KD_TRY(kd_pointset_generate(kd_pointset_comm(ps), kd_pointset_generator(ps),
                                n < ((kd_gidx)1 << 20) ? n : ((kd_gidx)1 << 20), ctx->seed,
                                &sample));
    ps = sample;
  }
  KD_TRY(kd_kernel_set_median_ls(k, ps, ctx->seed, (kd_lidx)ns));
  kd_log_verbose("kernel: median heuristic gives %s", kd_kernel_describe(k));
cleanup:
  kd_pointset_destroy(&sample);
  return err;
}

kd_err kd_task_record_kernel(const kd_kernel *k, kd_task_info *info, kd_result *res) {
  kd_err err = KD_OK;
  snprintf(info->kernel, sizeof info->kernel, "%s", kd_kernel_describe(k));
  const double ls = kd_kernel_length_scale(k), lp = kd_kernel_length_scale_phi(k);
  if (ls > 0) KD_TRY(kd_result_set_metric(res, "kernel_ls", ls));
  if (lp > 0) KD_TRY(kd_result_set_metric(res, "kernel_ls_phi", lp));
  KD_TRY(kd_task_record_stein_kernel(k, res));
cleanup:
  return err;
}
