/* task_output.c - what a task writes beside its result: the resolved configuration with the
 * length scales the run used, the checkpoint keys and files (run.checkpoint_*), and the check that
 * an output path may be written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "io/io_impl.h"
#include "io/paths.h"
#include "kdistill/author/kd_ckpt.h"
#include "task/task_impl.h"

kd_err kd_task_output_yaml(const kd_config *cfg, const kd_result *res, char **yaml) {
  /* the length scales a run resolved (metric) and the config keys that asked for 'median' */
  static const char *const metric[2] = {"kernel_ls", "kernel_ls_phi"};
  static const char *const key[2] = {"kernel.ls", "kernel.ls_phi"};
  kd_err err = KD_OK;
  kd_config *c = NULL;
  const char *ls = NULL;
  double v = NAN;
  int changed = 0;
  *yaml = NULL;
  for (int i = 0; i < 2; i++) {
    if (!kd_result_get_metric(res, metric[i], &v) || !(v > 0) || !kd_config_has(cfg, key[i]))
      continue;
    if (!c) KD_TRY(kd_config_clone(cfg, kd_config_name(cfg), &c));
    KD_TRY(kd_config_get_str(c, key[i], NULL, NULL, 0, &ls));
    if (ls && (!strcmp(ls, "median") || !strcmp(ls, "auto"))) {
      KD_TRY(kd_config_set_f64(c, key[i], v));
      changed = 1;
    }
  }
  if (changed) KD_TRY(kd_config_emit_resolved(c, yaml));
cleanup:
  kd_config_destroy(&c);
  return err;
}

kd_err kd_task_ckpt_open(const kd_task_ctx *ctx, int64_t every, const char *path, int keep,
                         kd_ckpt_sink sink, void *user, kd_ckpt **ck, const kd_result **resume) {
  kd_checkpoint_session *ss = kd_checkpoint_session_get();
  const int own_session = ss && ss->cfg == ctx->cfg;
  const kd_result *r = own_session ? ss->resume : NULL;
  *ck = NULL;
  /* the inputs read now (fingerprints agreed over the ranks) against those of the checkpoint: the
   * same text and the same prints on every rank, so every rank decides alike */
  if (r) {
    kd_err err =
        kd_checkpoint_inputs_check(ss->resume_path, ss->resume_inputs, ss->inputs, ss->n_inputs);
    if (err) return err;
  }
  /* the job removes ss->path once the output is in place */
  if (own_session) snprintf(ss->path, sizeof ss->path, "%s", keep ? "" : path);
  if (resume) *resume = r;
  return kd_ckpt_create(ctx->comm, every, sink, user, r, ck);
}

kd_err kd_task_read_checkpoint(const kd_task_ctx *ctx, int64_t *every, int *keep, char **path) {
  kd_err err = KD_OK;
  const char *cp = NULL, *outp = NULL;
  int on_interrupt = 1; /* read here so that the key is known and checked; used at the write */
  *path = NULL;
  KD_TRY(kd_config_get_int(ctx->cfg, "run.checkpoint_every", 0, 0, INT64_MAX, every));
  KD_TRY(kd_config_get_str(ctx->cfg, "run.checkpoint_path", "", NULL, 0, &cp));
  KD_TRY(kd_config_get_bool(ctx->cfg, "run.checkpoint_keep", 0, keep));
  KD_TRY(kd_config_get_bool(ctx->cfg, "run.checkpoint_on_interrupt", 1, &on_interrupt));
  KD_TRY(kd_config_get_str(ctx->cfg, "output.path", "kdistill_out.h5", NULL, 0, &outp));
  size_t pn = strlen(cp[0] ? cp : outp) + 16;
  KD_ALLOC(*path, pn);
  if (cp[0])
    snprintf(*path, pn, "%s", cp);
  else
    snprintf(*path, pn, "%s.ckpt.h5", outp);
  if (!ctx->evaluate_only) KD_TRY(kd_task_check_output(ctx, "run.checkpoint_path", *path));
cleanup:
  return err;
}

kd_err kd_task_check_output(const kd_task_ctx *ctx, const char *key, const char *path) {
  kd_err local = KD_OK;
  if (kd_dist_rank(ctx->comm) == 0) {
    local = kd_path_check_output(path, key, 0);
    if (local == KD_OK) local = kd_path_claim(path, key, 1); /* not an input, not another output */
  }
  return kd_dist_agreed(ctx->comm, local);
}

kd_err kd_task_checkpoint_write(const kd_task_ctx *ctx, const char *task, const char *algorithm,
                                const char *path, const kd_result *state, int64_t *iteration,
                                const char **reason) {
  kd_err err = KD_OK;
  kd_checkpoint_session *ss = kd_checkpoint_session_get();
  double it = 0, intr = 0;
  char *own = NULL;
  int on_interrupt = 1;
  kd_result_get_metric(state, "iteration", &it);
  kd_result_get_metric(state, "interrupted", &intr);
  /* run.checkpoint_on_interrupt: false (the Python calls without checkpoint=): an interrupted
   * run writes nothing; the periodic checkpoints of checkpoint_every are still written */
  KD_TRY(kd_config_get_bool(ctx->cfg, "run.checkpoint_on_interrupt", 1, &on_interrupt));
  if (intr != 0 && !on_interrupt) {
    *iteration = (int64_t)it;
    *reason = "not written";
    return KD_OK;
  }
  if (!ss || ss->cfg != ctx->cfg || !ss->config_yaml) /* e.g. a sweep point: its own config */
    KD_TRY(kd_config_emit_resolved(ctx->cfg, &own));
  kd_checkpoint_meta meta = {task,
                             algorithm,
                             own ? own : ss->config_yaml,
                             (int64_t)it,
                             intr != 0 ? "signal" : "periodic",
                             kd_dist_size(ctx->comm),
                             own ? NULL : ss->inputs,
                             own ? 0 : ss->n_inputs};
  KD_TRY(kd_checkpoint_write(ctx->comm, path, &meta, state));
  *iteration = (int64_t)it;
  *reason = meta.reason;
  if (ss) ss->last_iteration = (int64_t)it;
  /* which file was placed: only that one is removed once the output is in place */
  if (ss && kd_dist_rank(ctx->comm) == 0) kd_path_id(path, &ss->written);
cleanup:
  free(own);
  return err;
}
