/* task_target.c - the target section of a task's configuration: a closed-form measure or an
 * empirical one (the task's data, or a file), and how its self term is computed (exact, estimate,
 * fast Gauss transform to a tolerance, or skipped). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "io/io_impl.h"
#include "task/task_impl.h"

/* --------------------------------------------------------------- target */
/* SECTION.self: auto | exact | estimate | skip (true / false: exact / skip, as before);
 * SECTION.self_rows: target rows (and rule atoms) sampled by the estimate (0: automatic);
 * SECTION.cross: auto | exact | estimate, the estimate's cross term (kd_target_set_cross);
 * SECTION.fgt_tol: the fast Gauss transform's tolerance (kd_target_set_fgt_tol). */
static kd_err kd_task_read_self_(const kd_task_ctx *ctx, const char *section, int *mode,
                                 int64_t *rows, int *cross, double *fgt_tol) {
  kd_err err = KD_OK;
  char key[256];
  const char *v = NULL;
  static const char *const names[] = {"auto", "exact", "estimate", "skip", "true", "false", "fgt"};
  static const int modes[] = {KD_SELF_AUTO,  KD_SELF_EXACT, KD_SELF_ESTIMATE, KD_SELF_SKIP,
                              KD_SELF_EXACT, KD_SELF_SKIP,  KD_SELF_FGT};
  kd_task_key(key, sizeof key, section, "self");
  KD_TRY(
      kd_config_get_str(ctx->cfg, key, "auto", "auto|exact|estimate|skip|true|false|fgt", 0, &v));
  for (int i = 0; i < 7; i++)
    if (!strcmp(v, names[i])) *mode = modes[i];
  kd_task_key(key, sizeof key, section, "self_rows");
  KD_TRY(kd_config_get_int(ctx->cfg, key, 0, 0, (int64_t)1 << 24, rows));
  static const char *const cnames[] = {"auto", "exact", "estimate"};
  static const int cmodes[] = {KD_CROSS_AUTO, KD_CROSS_EXACT, KD_CROSS_ESTIMATE};
  kd_task_key(key, sizeof key, section, "cross");
  KD_TRY(kd_config_get_str(ctx->cfg, key, "auto", "auto|exact|estimate", 0, &v));
  for (int i = 0; i < 3; i++)
    if (!strcmp(v, cnames[i])) *cross = cmodes[i];
  kd_task_key(key, sizeof key, section, "fgt_tol");
  KD_TRY(kd_config_get_f64(ctx->cfg, key, KD_FGT_TOL_DEFAULT, 1e-15, 1e-2, fgt_tol));
cleanup:
  return err;
}

kd_err kd_task_read_target(const kd_task_ctx *ctx, const char *section, kd_kernel *k,
                           kd_pointset *data, int has_data, kd_target **out,
                           kd_pointset **owned_points) {
  kd_err err = KD_OK;
  kd_config *cfg = ctx->cfg;
  char key[256], where[512];
  const char *type = NULL;
  kd_measure m;
  int self = KD_SELF_AUTO, cross = KD_CROSS_AUTO, d = 0;
  int64_t self_rows = 0;
  double fgt_tol = KD_FGT_TOL_DEFAULT;
  memset(&m, 0, sizeof m);
  *out = NULL;
  kd_task_key(key, sizeof key, section, "type");
  KD_TRY(kd_config_get_str(cfg, key, has_data ? "data" : NULL,
                           has_data ? "data|hdf5|csv|npy|npz|memory|stein|" KD_MEASURE_CHOICES
                                    : "hdf5|csv|npy|npz|memory|stein|" KD_MEASURE_CHOICES,
                           !has_data, &type));
  if (!strcmp(type, "stein")) {
    if (k) KD_TRY(kd_target_create_stein(ctx->comm, k, out));
  } else if (!strcmp(type, "data") || kd_task_is_file_type(type) || !strcmp(type, "memory")) {
    const kd_pointset *pts = data;
    if (strcmp(type, "data")) {
      KD_CHECK(owned_points || ctx->validate_only, KD_ERR_INTERNAL, "no point set for %s", section);
      if (owned_points && !*owned_points)
        KD_TRY(kd_task_read_pointset(ctx, section, owned_points, NULL, &d));
      pts = owned_points ? *owned_points : NULL;
    }
    KD_TRY(kd_task_read_self_(ctx, section, &self, &self_rows, &cross, &fgt_tol));
    if (pts && k && kd_pointset_is_lazy(pts)) {
      /* the rows are not stored: the target is the measure they are drawn from */
      err = kd_target_create_closed(ctx->comm, k, kd_pointset_generator(pts), out);
      if (err) {
        char why[1024], msg[1200];
        snprintf(why, sizeof why, "%s", kd_err_message());
        snprintf(msg, sizeof msg,
                 "data.lazy: true: the target is the generating measure, in closed form: %s", why);
        kd_err_set_message(msg);
        goto cleanup;
      }
      kd_log_info(
          "target: the data's generating measure %s (lazy data: the MMD is to the "
          "distribution, not to the drawn rows)",
          kd_measure_name(kd_pointset_generator(pts)->type));
    } else if (pts && k) {
      kd_task_key(key, sizeof key, section, "type");
      KD_CHECK(kd_pointset_dim(pts) == kd_kernel_dim(k), KD_ERR_INPUT,
               "%s: %s: the target points have dimension %d but the kernel's points have %d",
               kd_config_where(cfg, key, where, sizeof where), section, kd_pointset_dim(pts),
               kd_kernel_dim(k));
      KD_TRY(kd_target_create_empirical(k, pts, 0, out));
      KD_TRY(kd_target_set_self(*out, (kd_self_mode)self, self_rows, ctx->seed));
      KD_TRY(kd_target_set_cross(*out, (kd_cross_mode)cross));
      KD_TRY(kd_target_set_fgt_tol(*out, fgt_tol));
    }
  } else {
    KD_TRY(kd_task_read_measure(ctx, section, &m));
    if (k) {
      kd_task_key(key, sizeof key, section, "d");
      KD_CHECK(m.d == kd_kernel_dim(k), KD_ERR_CONFIG,
               "%s: %s: the target has dimension %d but the points have %d",
               kd_config_where(cfg, key, where, sizeof where), key, m.d, kd_kernel_dim(k));
      KD_TRY(kd_target_create_closed(ctx->comm, k, &m, out));
    }
  }
cleanup:
  kd_measure_free(&m);
  return err;
}
