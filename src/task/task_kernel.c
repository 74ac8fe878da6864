/* task_kernel.c - the kernel section of a task's configuration: its name, the family's own keys
 * (kd_kernel_keys_of), the length scale (a number or 'median', resolved on the data by
 * kd_task_kernel_finish), and the kernel the run used, recorded as metrics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task/task_impl.h"

/* ------------------------------------------------------------ kernel */

static void kd_kernel_choices_(char *buf, size_t len) {
  buf[0] = '\0';
  for (int i = 0; i < KD_KERNEL_COUNT_; i++) {
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, "%s%s", i ? "|" : "", kd_kernel_name((kd_kernel_type)i));
  }
}

/* A length-scale key: a positive number, or 'median' (*median = 1; *ls untouched). */
static kd_err kd_read_ls_(kd_config *cfg, const char *key, const char *def, double *ls,
                          int *median) {
  kd_err err = KD_OK;
  const char *v = NULL;
  char where[512];
  KD_TRY(kd_config_get_str(cfg, key, def, NULL, 0, &v));
  if (!strcmp(v, "median")) {
    *median = 1;
  } else {
    char *end = NULL;
    double x = strtod(v, &end);
    KD_CHECK_KEY(end != v && *end == '\0' && isfinite(x) && x > 0, KD_ERR_CONFIG, key,
                 "%s: %s: expected a positive number or 'median', got '%s'",
                 kd_config_where(cfg, key, where, sizeof where), key, v);
    KD_TRY(kd_config_get_f64(cfg, key, 1.0, 1e-300, INFINITY, ls));
  }
cleanup:
  return err;
}

kd_err kd_task_read_kernel(const kd_task_ctx *ctx, const char *section, int d, kd_kernel **out) {
  kd_err err = KD_OK;
  kd_config *cfg = ctx->cfg;
  char key[256], choices[512], where[512];
  const char *name = NULL;
  int64_t iv = 0;
  *out = NULL;
  kd_kernel_choices_(choices, sizeof choices);
  kd_task_key(key, sizeof key, section, "name");
  KD_TRY(kd_config_get_str(cfg, key, "gaussian", choices, 0, &name));
  kd_kernel_type t = kd_kernel_from_name(name);
  kd_kernel_params p = kd_kernel_params_default(t);
  const kd_kernel_keys keys = kd_kernel_keys_of(t); /* the family's own keys */
  if (keys.ls_default) {
    kd_task_key(key, sizeof key, section, "ls");
    KD_TRY(kd_read_ls_(cfg, key, keys.ls_default, &p.ls, &p.ls_median));
    kd_task_key(key, sizeof key, section, "median_sample");
    KD_TRY(kd_config_get_int(cfg, key, 1000, 2, 100000000, &p.median_sample));
  }
  if (keys.n_keys > 0) {
    kd_params kp = {NULL, 0, NULL};
    KD_TRY(kd_config_get_params(cfg, section, keys.keys, keys.n_keys, &kp));
    err = kd_params_fill(&kp, &p);
    kd_params_free(&kp);
    KD_TRY(err);
  }
  /* keys that depend on the data: the Stein kernel's base and scores, attention's split */
  if (t == KD_KERNEL_STEIN) KD_TRY(kd_task_read_stein_kernel(ctx, section, d, &p));
  if (t == KD_KERNEL_ATTENTION) {
    kd_task_key(key, sizeof key, section, "dk");
    KD_CHECK(d >= 2, KD_ERR_CONFIG,
             "%s: %s: the attention kernel needs points (k, v) of "
             "dimension >= 2, the data has d = %d",
             kd_config_where(cfg, key, where, sizeof where), key, d);
    KD_TRY(kd_config_get_int(cfg, key, d / 2, 1, d - 1, &iv));
    p.dk = (int)iv;
  }
  if (t == KD_KERNEL_DEEP) { /* rows (x, phi(x)): the split is the data's, so it has no default */
    kd_task_key(key, sizeof key, section, "ls_phi");
    KD_TRY(kd_read_ls_(cfg, key, "median", &p.ls_phi, &p.ls_phi_median));
    kd_task_key(key, sizeof key, section, "dx");
    KD_CHECK(d >= 2 && kd_config_has(cfg, key), KD_ERR_CONFIG,
             "%s: %s: the deep kernel needs the number of input columns of its rows (x, phi(x)): "
             "set %s in 1 .. d-1 (the data has d = %d)",
             kd_config_where(cfg, section, where, sizeof where), key, key, d);
    KD_TRY(kd_config_get_int(cfg, key, 1, 1, d - 1, &iv));
    p.dx = (int)iv;
  }
  if (t == KD_KERNEL_ENERGY)
    KD_CHECK(d >= 1, KD_ERR_CONFIG, "%s: energy kernel needs d >= 1", section);
  KD_TRY(kd_kernel_create(&p, d, out));
cleanup:
  return err;
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
cleanup:
  return err;
}
