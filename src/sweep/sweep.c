/* sweep.c - task `sweep`: run a base task at every point of a parameter sweep, as independent jobs
 * over groups of ranks, one output file per point plus a summary table (sweep_impl.h, docs/hpc.md).
 *
 * Setup reads the sweep section, keeps the whole base configuration as YAML text (the clone every
 * point starts from), marks the base sections read in the sweep's own config and validates every
 * point (its config built, the base task's setup run with validate_only, unknown keys rejected),
 * so a typo fails before anything runs. Run splits the ranks into groups (kd_dist_split), group g
 * runs points g, g+G, g+2G, ... each on the group communicator and writes its output with
 * kd_output_write; then the per-point rows are summed over all ranks, rank 0 writes the summary,
 * and the best point's result (lowest MMD, ties to the lowest point) becomes the task's result with
 * the summary columns as extra datasets under /sweep. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "comm/dist_impl.h"
#include "io/io_impl.h"
#include "io/paths.h"
#include "sweep/sweep_impl.h"
#include "task/task_impl.h"

typedef struct {
  kd_sweep_spec spec;
  kd_config *base_cfg; /* the whole base configuration (a clone of the sweep's own config) */
  char base_name[512];
  const kd_task_desc *base;
  uint64_t base_hash; /* of the base configuration without the sweep and output sections */
  char *base_ckpt;    /* run.checkpoint_path of the base configuration, or NULL */
} kd_sweep_state;

/* Hash identifying what point p computes: the kdistill version, the base configuration (sweep and
 * output sections blanked, the output line left out, so changing sweep.groups/dir/resume or
 * output.path keeps finished points valid), the base task and the point's overrides. */
static uint64_t kd_sweep_point_hash_(const kd_sweep_state *st, int p) {
  const kd_sweep_spec *sp = &st->spec;
  uint64_t h = kd_sweep_fnv1a(st->base_hash, "\ntask=");
  h = kd_sweep_fnv1a(h, sp->task);
  for (int k = 0; k < sp->n_keys; k++) {
    const char *v = sp->vals[(size_t)p * sp->n_keys + k];
    if (!v) continue;
    h = kd_sweep_fnv1a(h, "\n");
    h = kd_sweep_fnv1a(h, sp->keys[k]);
    h = kd_sweep_fnv1a(h, "=");
    h = kd_sweep_fnv1a(h, v);
  }
  return h;
}

static kd_err kd_sweep_base_hash_(const kd_config *base, uint64_t *h) {
  kd_err err = KD_OK;
  kd_config *c = NULL;
  char *text = NULL;
  KD_TRY(kd_config_clone(base, "sweep base", &c));
  KD_TRY(kd_config_set_null(c, "sweep"));
  KD_TRY(kd_config_set_null(c, "output"));
  KD_TRY(kd_config_emit_resolved(c, &text));
  /* drop the blanked output line: where it sits depends on whether --output was given (set before
   * the job's defaults are read, or appended after them), which must not change the hash */
  char *o = strstr(text, "\noutput: null\n");
  if (o) memmove(o + 1, o + 14, strlen(o + 14) + 1);
  *h =
      kd_sweep_fnv1a(kd_sweep_fnv1a(KD_SWEEP_FNV_OFFSET, "kdistill " KD_VERSION_STRING "\n"), text);
cleanup:
  free(text);
  kd_config_destroy(&c);
  return err;
}

/* ---------------------------------------------------------------- config helpers */

/* The job-level keys the CLI reads around a task (src/cli/main.c: run.seed, run.log_interval,
 * output.path), with the CLI's defaults and ranges, read in a point's config; the point's seed goes
 * into pctx. (run.checkpoint_* belong to the task: kd_task_read_checkpoint.) */
static kd_err kd_sweep_read_cli_keys_(kd_config *cfg, kd_task_ctx *pctx) {
  kd_err err = KD_OK;
  int64_t s = 0;
  double interval = 1.0;
  const char *out = NULL;
  KD_TRY(kd_config_get_int(cfg, "run.seed", 0, 0, INT64_MAX, &s));
  pctx->seed = (uint64_t)s;
  KD_TRY(kd_config_get_f64(cfg, "run.log_interval", 1.0, 0.0, 1e9, &interval));
  KD_TRY(kd_config_get_str(cfg, "output.path", "kdistill_out.h5", NULL, 0, &out));
cleanup:
  return err;
}

/* A point of a checkpointing task gets its own checkpoint file, <run.checkpoint_path>.NNNN, so
 * groups never share one. The key stays unread in the point's config (the task reads it, or the
 * unknown-key check rejects it as for a stand-alone run). */
static kd_err kd_sweep_point_checkpoint_(kd_config *pcfg, const char *base_ckpt, int p) {
  kd_err err = KD_OK;
  char *a = NULL;
  if (!base_ckpt || !base_ckpt[0]) return KD_OK;
  const size_t cap = strlen(base_ckpt) + 16;
  KD_ALLOC(a, cap);
  snprintf(a, cap, "%s.%04d", base_ckpt, p);
  KD_TRY(kd_config_set_str(pcfg, "run.checkpoint_path", a));
cleanup:
  free(a);
  return err;
}

/* The point's output is in place: rank 0 of its group removes the point's checkpoint
 * (run.checkpoint_path, else <point output>.ckpt.h5) unless run.checkpoint_keep. Only the tasks
 * that can resume (their registry entry says so) have one; a missing file is not an error.
 * Collective (no traffic). */
static kd_err kd_sweep_point_remove_checkpoint_(kd_config *pcfg, const char *task, const char *out,
                                                MPI_Comm gcomm) {
  kd_err err = KD_OK;
  const char *cp = NULL;
  int keep = 0;
  char buf[1200];
  const kd_task_desc *td = kd_task_find(task);
  if (!td || !td->can_resume) return KD_OK;
  KD_TRY(kd_config_get_str(pcfg, "run.checkpoint_path", "", NULL, 0, &cp));
  KD_TRY(kd_config_get_bool(pcfg, "run.checkpoint_keep", 0, &keep));
  if (keep || kd_dist_rank(gcomm) != 0) return KD_OK;
  if (cp[0])
    snprintf(buf, sizeof buf, "%s", cp);
  else
    snprintf(buf, sizeof buf, "%s.ckpt.h5", out);
  /* only the checkpoint this point placed (the last one this rank wrote), never a file someone
   * put there since */
  const kd_checkpoint_session *ss = kd_checkpoint_session_get();
  if (ss) kd_path_remove_own(buf, &ss->written);
cleanup:
  return err;
}

/* Prefix the recorded error message with the point's label. */
static void kd_sweep_point_message_(const kd_sweep_spec *sp, int p) {
  char label[512], msg[1024];
  kd_sweep_point_label(sp, p, label, sizeof label);
  snprintf(msg, sizeof msg, "sweep point %d (%s): %s", p, label, kd_err_message());
  kd_err_set_message(msg);
}

/* ---------------------------------------------------------------- setup */

/* One file the sweep writes: a regular file or nothing, in a writable place, and not a file the
 * run reads (the config, the data). Local. */
static kd_err kd_sweep_check_path_(const char *path) {
  kd_err err = kd_path_check_output(path, "sweep.dir", 0);
  return err ? err : kd_path_claim(path, "sweep.dir", 1);
}

/* Every file the sweep will write, checked on rank 0 before any point runs (and by validate):
 * the summary files (unless only one point runs) and the point files that will be computed;
 * one agreement. A missing sweep.dir is fine when its parent is writable (created by run). */
static kd_err kd_sweep_check_paths_(const kd_task_ctx *ctx, const kd_sweep_spec *sp) {
  kd_err err = KD_OK;
  char path[1200];
  if (kd_dist_rank(ctx->comm) == 0) {
    if (sp->point < 0) {
      snprintf(path, sizeof path, "%s/summary.csv", sp->dir);
      err = kd_sweep_check_path_(path);
      snprintf(path, sizeof path, "%s/summary.h5", sp->dir);
      if (err == KD_OK) err = kd_sweep_check_path_(path);
    }
    for (int p = 0; p < sp->n_points && err == KD_OK && !sp->summary_only; p++)
      if (sp->point < 0 || p == sp->point)
        err = kd_sweep_check_path_(kd_sweep_point_path(sp, p, path, sizeof path));
  }
  return kd_dist_agreed(ctx->comm, err);
}

static void kd_sweep_destroy_(void **state) {
  if (!state || !*state) return;
  kd_sweep_state *st = *state;
  kd_sweep_spec_free(&st->spec);
  kd_config_destroy(&st->base_cfg);
  free(st->base_ckpt);
  free(st);
  *state = NULL;
}

/* Validate every point (array mode: its own point; summary_only: none, nothing runs): its config,
 * the base task's keys and inputs, unknown keys. The points are built from the base with the sweep
 * section blanked (copying its values for every point made validate quadratic in the number of
 * points) when that section has no unread key; otherwise from the whole base, so the unknown key
 * is reported by the first point as it always was. */
static kd_err kd_sweep_validate_points_(const kd_task_ctx *ctx, kd_sweep_state *st) {
  kd_err err = KD_OK;
  kd_config *vbase = NULL, *pcfg = NULL;
  void *pstate = NULL;
  if (kd_config_is_read(ctx->cfg, "sweep")) {
    KD_TRY(kd_config_clone(st->base_cfg, NULL, &vbase));
    KD_TRY(kd_config_set_null(vbase, "sweep"));
  }
  for (int p = 0; p < st->spec.n_points; p++) {
    if (st->spec.summary_only || (st->spec.point >= 0 && p != st->spec.point)) continue;
    char path[1100];
    kd_task_ctx pctx = *ctx;
    kd_sweep_point_path(&st->spec, p, path, sizeof path);
    err = kd_sweep_point_config(vbase ? vbase : st->base_cfg, st->base_name, &st->spec, p, path,
                                &pcfg);
    if (err == KD_OK) err = kd_sweep_point_checkpoint_(pcfg, st->base_ckpt, p);
    if (err == KD_OK) err = kd_sweep_read_cli_keys_(pcfg, &pctx);
    pctx.cfg = pcfg;
    pctx.validate_only = 1;
    if (err == KD_OK) err = st->base->setup(&pctx, &pstate);
    if (err == KD_OK) err = kd_config_check_unused(pcfg);
    st->base->destroy(&pstate);
    kd_config_destroy(&pcfg);
    if (err) {
      kd_sweep_point_message_(&st->spec, p);
      goto cleanup;
    }
  }
cleanup:
  kd_config_destroy(&pcfg);
  kd_config_destroy(&vbase);
  return err;
}

static kd_err kd_sweep_setup_(const kd_task_ctx *ctx, void **state) {
  kd_err err = KD_OK;
  kd_sweep_state *st = NULL;
  char where[512];
  *state = NULL;
  KD_ALLOC(st, 1);
  KD_TRY(kd_sweep_spec_read(ctx->cfg, &st->spec));
  st->base = kd_task_find(st->spec.task);
  if (!st->base) {
    char known[600] = "";
    for (int i = 0; kd_task_at(i); i++) {
      size_t l = strlen(known);
      if (l + 40 < sizeof known)
        snprintf(known + l, sizeof known - l, "%s%s", l ? ", " : "", kd_task_at(i)->name);
    }
    KD_FAIL(KD_ERR_CONFIG, "%s: sweep.task: unknown task '%s' (known: %s)",
            kd_config_where(ctx->cfg, "sweep.task", where, 512), st->spec.task, known);
  }
  snprintf(st->base_name, sizeof st->base_name, "%s", kd_config_name(ctx->cfg));
  KD_TRY(kd_config_clone(ctx->cfg, NULL, &st->base_cfg));
  KD_TRY(kd_sweep_base_hash_(st->base_cfg, &st->base_hash));
  if (kd_config_has(ctx->cfg, "run.checkpoint_path")) {
    const char *cp = NULL;
    KD_TRY(kd_config_get_str(ctx->cfg, "run.checkpoint_path", "", NULL, 0, &cp));
    size_t len = strlen(cp) + 1;
    KD_ALLOC(st->base_ckpt, len);
    memcpy(st->base_ckpt, cp, len);
  }
  /* the base sections are checked per point (below), not in the sweep's own config */
  for (int i = 0; i < kd_config_count(ctx->cfg, ""); i++) {
    const char *root = kd_config_key_at(ctx->cfg, "", i);
    if (strcmp(root, "sweep") != 0) KD_TRY(kd_config_mark_read(ctx->cfg, root));
  }
  KD_TRY(kd_sweep_check_paths_(ctx, &st->spec));
  KD_TRY(kd_sweep_validate_points_(ctx, st));
  if (ctx->validate_only) /* jobs/sweep_array.sh reads the point count from this line */
    kd_log_info("sweep: %d points of task %s (files in %s/)", st->spec.n_points, st->spec.task,
                st->spec.dir);
  *state = st;
  st = NULL;
cleanup:
  if (st) {
    void *v = st;
    kd_sweep_destroy_(&v);
  }
  return err;
}

/* ---------------------------------------------------------------- run */

/* Rank 0 creates the output directory (one level) if it is missing; all ranks agree. */
static kd_err kd_sweep_make_dir_(MPI_Comm comm, const char *dir) {
  kd_err err = KD_OK;
  if (kd_dist_rank(comm) == 0) {
    struct stat sb;
    if (stat(dir, &sb) == 0) {
      if (!S_ISDIR(sb.st_mode))
        err = kd_err_set(KD_ERR_IO, __FILE__, __LINE__,
                         "sweep.dir: %s exists and is not a "
                         "directory",
                         dir);
    } else if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
      err = kd_err_set(KD_ERR_IO, __FILE__, __LINE__, "sweep.dir: cannot create %s: %s", dir,
                       strerror(errno));
    }
  }
  KD_TRY(kd_dist_agreed(comm, err));
cleanup:
  return err;
}

/* Run point p on the group communicator; write its output. res/info receive the result. Errors
 * are agreed over gcomm. */
static kd_err kd_sweep_run_point_(const kd_task_ctx *ctx, kd_sweep_state *st, MPI_Comm gcomm, int p,
                                  kd_result *res, kd_task_info *info) {
  kd_err err = KD_OK;
  kd_config *pcfg = NULL;
  void *pstate = NULL;
  char *yaml = NULL, path[1100];
  kd_task_ctx pctx = *ctx;
  kd_sweep_point_path(&st->spec, p, path, sizeof path);
  KD_TRY(kd_sweep_point_config(st->base_cfg, st->base_name, &st->spec, p, path, &pcfg));
  KD_TRY(kd_sweep_point_checkpoint_(pcfg, st->base_ckpt, p));
  KD_TRY(kd_sweep_read_cli_keys_(pcfg, &pctx));
  pctx.comm = gcomm;
  pctx.arrays = NULL; /* a group of ranks sees only its members' blocks: no memory inputs */
  pctx.n_arrays = 0;
  pctx.cfg = pcfg;
  pctx.validate_only = 0;
  KD_TRY(st->base->setup(&pctx, &pstate));
  KD_TRY(kd_config_check_unused(pcfg));
  double t0 = kd_dist_wtime();
  KD_TRY(st->base->run(&pctx, pstate, res, info));
  if (!(res->seconds > 0)) res->seconds = kd_dist_wtime() - t0;
  KD_TRY(kd_dist_agreed(gcomm, kd_task_output_yaml(pcfg, res, &yaml)));
  if (!yaml) KD_TRY(kd_config_emit_resolved(pcfg, &yaml));
  {
    int64_t ph = (int64_t)kd_sweep_point_hash_(st, p), pi = p;
    KD_TRY(kd_result_add_i64(res, "/sweep_point/hash", 0, NULL, &ph));
    KD_TRY(kd_result_add_i64(res, "/sweep_point/index", 0, NULL, &pi));
  }
  {
    kd_output_meta meta;
    memset(&meta, 0, sizeof meta);
    meta.task = st->spec.task;
    meta.algorithm = info->algorithm;
    meta.kernel = info->kernel;
    meta.n_ranks = kd_dist_size(gcomm);
    meta.seed = pctx.seed;
    meta.config_yaml = yaml;
    KD_TRY(kd_output_write(gcomm, path, &meta, res));
  }
  KD_TRY(kd_sweep_point_remove_checkpoint_(pcfg, st->spec.task, path, gcomm));
cleanup:
  if (st->base && pstate) st->base->destroy(&pstate);
  kd_config_destroy(&pcfg);
  free(yaml);
  err = kd_dist_agreed(gcomm, err);
  return err;
}

/* Copy the best point's result from its group (root = that group's leader) to every rank: the
 * coreset, trace, MMD, time, evaluation count and metrics. The point's own extra datasets stay in
 * its point file (they are dropped here, so every rank holds the same result). */
static kd_err kd_sweep_bcast_result_(MPI_Comm comm, int root, kd_result *r, kd_task_info *info) {
  kd_err err = KD_OK;
  int64_t hdr[4] = {r->n, r->d, r->n_trace, r->n_metrics};
  double sc[2] = {r->mmd, r->seconds};
  uint64_t ev = r->kernel_evals;
  const int me = kd_dist_rank(comm) == root;
  struct {
    char name[120];
    double value;
    int64_t is_count;
  } met;
  for (int i = 0; i < r->n_datasets; i++) {
    free(r->datasets[i].path);
    free(r->datasets[i].f64);
    free(r->datasets[i].i64);
  }
  free(r->datasets);
  r->datasets = NULL;
  r->n_datasets = 0;
  KD_TRY(kd_dist_bcast(comm, hdr, sizeof hdr, root));
  KD_TRY(kd_dist_bcast(comm, sc, sizeof sc, root));
  KD_TRY(kd_dist_bcast(comm, &ev, sizeof ev, root));
  KD_TRY(kd_dist_bcast(comm, info, sizeof *info, root));
  if (!me) {
    kd_result_free(r);
    KD_TRY(kd_result_alloc(r, hdr[0], (int)hdr[1]));
    for (int64_t i = 0; i < hdr[2]; i++) KD_TRY(kd_result_trace_push(r, 0, 0, 0.0, 0.0));
  }
  r->mmd = sc[0];
  r->seconds = sc[1];
  r->kernel_evals = ev;
  KD_TRY(kd_dist_bcast(comm, r->points, (int64_t)sizeof(double) * hdr[0] * hdr[1], root));
  KD_TRY(kd_dist_bcast(comm, r->weights, (int64_t)sizeof(double) * hdr[0], root));
  KD_TRY(kd_dist_bcast(comm, r->indices, (int64_t)sizeof(int64_t) * hdr[0], root));
  if (hdr[2] > 0) {
    KD_TRY(kd_dist_bcast(comm, r->trace_iter, (int64_t)sizeof(int64_t) * hdr[2], root));
    KD_TRY(kd_dist_bcast(comm, r->trace_atoms, (int64_t)sizeof(int64_t) * hdr[2], root));
    KD_TRY(kd_dist_bcast(comm, r->trace_mmd, (int64_t)sizeof(double) * hdr[2], root));
    KD_TRY(kd_dist_bcast(comm, r->trace_seconds, (int64_t)sizeof(double) * hdr[2], root));
  }
  for (int64_t i = 0; i < hdr[3]; i++) {
    memset(&met, 0, sizeof met);
    if (me) {
      snprintf(met.name, sizeof met.name, "%s", r->metrics[i].name);
      met.value = r->metrics[i].value;
      met.is_count = r->metrics[i].is_count;
    }
    KD_TRY(kd_dist_bcast(comm, &met, sizeof met, root));
    if (!me && met.is_count) KD_TRY(kd_result_set_count(r, met.name, (int64_t)met.value));
    if (!me && !met.is_count) KD_TRY(kd_result_set_metric(r, met.name, met.value));
  }
cleanup:
  return err;
}

/* The summary columns as extra datasets of the task's result (numeric parameters only). */
static kd_err kd_sweep_add_extras_(const kd_sweep_spec *sp, const kd_sweep_row *rows,
                                   kd_result *res) {
  kd_err err = KD_OK;
  const int n = sp->n_points;
  int64_t dims[1] = {n}, *i64 = NULL;
  double *f64 = NULL;
  char path[400];
  KD_ALLOC(i64, n);
  KD_ALLOC(f64, n);
  for (int p = 0; p < n; p++) i64[p] = p;
  KD_TRY(kd_result_add_i64(res, "/sweep/point", 1, dims, i64));
  for (int p = 0; p < n; p++) i64[p] = rows[p].status;
  KD_TRY(kd_result_add_i64(res, "/sweep/status", 1, dims, i64));
  for (int p = 0; p < n; p++) f64[p] = rows[p].mmd;
  KD_TRY(kd_result_add_f64(res, "/sweep/mmd", 1, dims, f64));
  for (int p = 0; p < n; p++) i64[p] = rows[p].n_atoms;
  KD_TRY(kd_result_add_i64(res, "/sweep/n_atoms", 1, dims, i64));
  for (int p = 0; p < n; p++) f64[p] = rows[p].seconds;
  KD_TRY(kd_result_add_f64(res, "/sweep/seconds", 1, dims, f64));
  for (int k = 0; k < sp->n_keys; k++) {
    int numeric = 1;
    for (int p = 0; p < n && numeric; p++) {
      const char *v = sp->vals[(size_t)p * sp->n_keys + k];
      char *end = NULL;
      f64[p] = v ? strtod(v, &end) : NAN;
      numeric = v && end && *end == '\0' && end != v && isfinite(f64[p]);
    }
    if (!numeric) continue;
    snprintf(path, sizeof path, "/sweep/params/%s", sp->keys[k]);
    KD_TRY(kd_result_add_f64(res, path, 1, dims, f64));
  }
cleanup:
  free(i64);
  free(f64);
  return err;
}

/* What the phases of kd_sweep_run_ share. Per-point columns: only the group leader fills its
 * points' entries; kd_sweep_gather_rows_ sums them over all ranks into rows. */
typedef struct {
  int n, G, g, size, rank, grank;
  MPI_Comm gcomm;     /* this rank's group (owned) */
  kd_sweep_row *rows; /* [n] */
  int64_t *i64;       /* [2n]: status, n_atoms */
  double *f64;        /* [3n]: mmd, seconds */
  uint64_t *u64;      /* [n]: kernel_evals */
  kd_result best;     /* the group's best result so far (replicated on the group's ranks) */
  kd_task_info best_info;
  double best_mmd;
  int best_p;
  double t0;
} kd_sweep_run_ctx;

static void kd_sweep_run_free_(kd_sweep_run_ctx *r) {
  kd_result_free(&r->best);
  kd_dist_comm_free(&r->gcomm);
  free(r->rows);
  free(r->i64);
  free(r->f64);
  free(r->u64);
}

/* Point p was written by an earlier run with the same hash (sweep.resume): read it back into
 * pres / pinfo and set *done (0: compute it). Collective over the group. */
static kd_err kd_sweep_point_kept_(kd_sweep_state *st, kd_sweep_run_ctx *r, int p, kd_result *pres,
                                   kd_task_info *pinfo, int64_t *done) {
  kd_err err = KD_OK, perr = KD_OK;
  char path[1100];
  *done = 0;
  if (!st->spec.resume && !st->spec.summary_only) return KD_OK;
  kd_sweep_point_path(&st->spec, p, path, sizeof path);
  if (r->grank == 0) *done = kd_sweep_point_done(path, kd_sweep_point_hash_(st, p));
  KD_TRY(kd_dist_bcast(r->gcomm, done, sizeof *done, 0));
  if (!*done) return KD_OK;
  char *algo = NULL;
  perr = kd_output_read(path, pres, NULL, NULL, &algo);
  if (perr == KD_OK && algo) snprintf(pinfo->algorithm, sizeof pinfo->algorithm, "%s", algo);
  free(algo);
  perr = kd_dist_agreed(r->gcomm, perr);
  if (perr != KD_OK) { /* unreadable after all: compute it again */
    kd_log_warn("sweep point %d: cannot read %s back (%s)%s", p, path, kd_err_message(),
                st->spec.summary_only ? "" : "; recomputing");
    kd_err_clear();
    kd_result_free(pres);
    *done = 0;
  }
cleanup:
  return err;
}

/* Record point p's outcome: the leader's columns, the message of a failure, the progress line,
 * and the group's best result (takes pres over when it is the new best). Local. */
static void kd_sweep_point_record_(const kd_sweep_spec *sp, kd_sweep_run_ctx *r, int p, kd_err perr,
                                   int64_t done, kd_result *pres, const kd_task_info *pinfo) {
  const int n = r->n;
  if (r->grank == 0) {
    r->i64[p] = perr;
    if (perr == KD_OK) {
      r->f64[p] = pres->mmd;
      r->f64[n + p] = pres->seconds;
      r->i64[n + p] = pres->n;
      r->u64[p] = pres->kernel_evals;
    }
  }
  if (perr != KD_OK) {
    kd_sweep_point_message_(sp, p);
    snprintf(r->rows[p].message, sizeof r->rows[p].message, "%s", kd_err_message());
    kd_err_clear();
    kd_log_warn("%s", r->rows[p].message); /* printed when rank 0 is in this group */
    return;
  }
  char label[300];
  /* progress of this group (rank 0 prints its own group's): points left, time left from the
   * mean time per point so far */
  const int left = (n - 1 - p) / r->G, mine = (p - r->g) / r->G + 1;
  const double el = kd_dist_wtime() - r->t0, eta = left > 0 ? el / mine * left : 0.0;
  kd_log_info(
      "sweep point %d/%d (%s): mmd %.6e  atoms %lld  %.2f s%s  [group %d: %d left, "
      "eta %.0f s]",
      p + 1, n, kd_sweep_point_label(sp, p, label, sizeof label), pres->mmd, (long long)pres->n,
      pres->seconds, done ? "  (kept from an earlier run)" : "", r->g, left, eta);
  /* keep the group's best result (replicated on the group's ranks) */
  double m = isnan(pres->mmd) ? INFINITY : pres->mmd;
  if (r->best_p < 0 || m < r->best_mmd) {
    kd_result_free(&r->best);
    r->best = *pres;
    memset(pres, 0, sizeof *pres);
    r->best_info = *pinfo;
    r->best_mmd = m;
    r->best_p = p;
  }
}

/* Phase 1: group g runs points g, g+G, ... on its communicator (stopping, agreed over the group,
 * once a signal is pending: the rest are marked interrupted). Collective over the group. */
static kd_err kd_sweep_run_points_(const kd_task_ctx *ctx, kd_sweep_state *st,
                                   kd_sweep_run_ctx *r) {
  kd_err err = KD_OK;
  const int first = st->spec.point >= 0 ? (int)st->spec.point : r->g;
  const int step = st->spec.point >= 0 ? r->n : r->G; /* array mode: that point only */
  for (int p = first; p < r->n; p += step) {
    int64_t stop = kd_interrupt_pending() ? 1 : 0, done = 0;
    KD_TRY(kd_dist_max_i64(r->gcomm, &stop, 1));
    if (stop) {
      for (int q = p; q < r->n; q += r->G)
        if (r->grank == 0) r->i64[q] = KD_ERR_INTERRUPTED;
      break;
    }
    kd_result pres = KD_RESULT_INIT;
    kd_task_info pinfo;
    memset(&pinfo, 0, sizeof pinfo);
    KD_TRY(kd_sweep_point_kept_(st, r, p, &pres, &pinfo, &done)); /* a failed collective */
    kd_err perr = KD_OK;
    if (!done && st->spec.summary_only) {
      char path[1100];
      perr = kd_err_set(KD_ERR_FILE, __FILE__, __LINE__,
                        "%s is missing, unreadable or from another configuration "
                        "(sweep.summary_only computes nothing: run the point first)",
                        kd_sweep_point_path(&st->spec, p, path, sizeof path));
    } else if (!done) {
      perr = kd_sweep_run_point_(ctx, st, r->gcomm, p, &pres, &pinfo);
    }
    if (perr == KD_ERR_MPI) {
      kd_result_free(&pres);
      KD_FAIL(perr, "%s", kd_err_message()); /* the group's communicator is unusable */
    }
    kd_sweep_point_record_(&st->spec, r, p, perr, done, &pres, &pinfo);
    kd_result_free(&pres);
  }
cleanup:
  return err;
}

/* Phase 2: everyone learns every row (sums of the leaders' values, 0 elsewhere) and the messages
 * of failed points (from their group's leader); *first_fail = the first failure's code.
 * Collective. */
static kd_err kd_sweep_gather_rows_(const kd_task_ctx *ctx, kd_sweep_run_ctx *r,
                                    kd_err *first_fail) {
  kd_err err = KD_OK;
  const int n = r->n;
  KD_TRY(kd_dist_sum_i64(ctx->comm, r->i64, 2 * n));
  KD_TRY(kd_dist_sum(ctx->comm, r->f64, 3 * n));
  KD_TRY(kd_dist_sum_u64(ctx->comm, r->u64, n));
  for (int p = 0; p < n; p++) {
    kd_sweep_row *w = &r->rows[p];
    w->status = r->i64[p];
    w->n_atoms = r->i64[n + p];
    w->mmd = w->status == KD_OK ? r->f64[p] : NAN;
    w->seconds = r->f64[n + p];
    w->kernel_evals = r->u64[p];
  }
  for (int p = 0; p < n; p++) {
    kd_sweep_row *w = &r->rows[p];
    if (w->status == KD_OK) continue;
    if (w->status == KD_ERR_INTERRUPTED) {
      snprintf(w->message, sizeof w->message, "interrupted: not run, or stopped by the signal");
      continue;
    }
    KD_TRY(kd_dist_bcast(ctx->comm, w->message, KD_SWEEP_MSG_LEN,
                         kd_sweep_group_leader(p % r->G, r->size, r->G)));
    if (*first_fail == KD_OK) *first_fail = (kd_err)w->status;
  }
cleanup:
  return err;
}

/* The best point overall: lowest MMD, ties to the lowest point index; -1 if none succeeded. */
static int kd_sweep_best_point_(const kd_sweep_row *rows, int n) {
  int bp = -1;
  for (int p = 0; p < n; p++) {
    if (rows[p].status != KD_OK) continue;
    double m = isnan(rows[p].mmd) ? INFINITY : rows[p].mmd;
    double mb = bp < 0 ? INFINITY : (isnan(rows[bp].mmd) ? INFINITY : rows[bp].mmd);
    if (bp < 0 || m < mb) bp = p;
  }
  return bp;
}

/* Phase 3: the task's result = the best point's (from its group's leader), with the sweep's
 * metrics and the summary columns as extras. Collective. */
static kd_err kd_sweep_result_(const kd_task_ctx *ctx, const kd_sweep_spec *sp, kd_sweep_run_ctx *r,
                               int bp, kd_result *res, kd_task_info *info) {
  kd_err err = KD_OK;
  const int n = r->n;
  if (bp >= 0) {
    /* within the best point's group, best_p == bp (same rule, same values) */
    int root = kd_sweep_group_leader(bp % r->G, r->size, r->G);
    if (r->rank != root) kd_result_free(&r->best);
    if (r->rank == root) *info = r->best_info;
    KD_TRY(kd_sweep_bcast_result_(ctx->comm, root, &r->best, info));
    *res = r->best;
    memset(&r->best, 0, sizeof r->best);
    KD_TRY(kd_result_set_count(res, "sweep_best_point", bp));
  } else {
    KD_TRY(kd_result_alloc(res, 0, 1));
    res->mmd = NAN;
    snprintf(info->algorithm, sizeof info->algorithm, "sweep");
  }
  int64_t nfail = 0;
  uint64_t evals = 0;
  for (int p = 0; p < n; p++) {
    nfail += r->rows[p].status != KD_OK;
    evals += r->rows[p].kernel_evals;
  }
  KD_TRY(kd_result_set_count(res, "sweep_points", n));
  KD_TRY(kd_result_set_count(res, "sweep_failed", (int64_t)nfail));
  KD_TRY(kd_result_set_count(res, "sweep_groups", r->G));
  res->kernel_evals = evals;
  KD_TRY(kd_sweep_add_extras_(sp, r->rows, res));
cleanup:
  return err;
}

/* The configuration recorded in the summary: the sweep's own resolved configuration without the
 * keys that say how the points were run (sweep.groups, resume, point, summary_only: lines of the
 * emitted block-style `sweep:` section), so the summary is the same file whether one allocation
 * ran the sweep or an array of jobs plus a summary step. */
static kd_err kd_sweep_summary_yaml_(const kd_config *cfg, char **yaml) {
  kd_err err = KD_OK;
  static const char *const modes[] = {"  groups:", "  resume:", "  point:", "  summary_only:"};
  KD_TRY(kd_config_emit_resolved(cfg, yaml));
  char *in = *yaml, *out = *yaml;
  int in_sweep = 0;
  while (*in) {
    char *eol = strchr(in, '\n');
    const size_t len = eol ? (size_t)(eol - in) + 1 : strlen(in);
    int drop = 0;
    if (in[0] != ' ' && in[0] != '\n') in_sweep = strncmp(in, "sweep:", 6) == 0;
    for (size_t i = 0; in_sweep && i < sizeof modes / sizeof modes[0]; i++)
      drop |= strncmp(in, modes[i], strlen(modes[i])) == 0;
    if (!drop) memmove(out, in, len);
    out += drop ? 0 : len;
    in += len;
  }
  *out = '\0';
cleanup:
  return err;
}

/* Array mode (sweep.point = K): the point ran on all ranks (one group) and wrote its point file;
 * its result becomes the task's (the job writes no output.path), or its error the task's.
 * Collective. */
static kd_err kd_sweep_point_only_(const kd_task_ctx *ctx, const kd_sweep_spec *sp,
                                   kd_sweep_run_ctx *r, kd_result *res, kd_task_info *info) {
  kd_err err = KD_OK;
  const int p = (int)sp->point;
  char path[1100];
  int64_t code = r->i64[p]; /* the leader's (rank 0's) record */
  KD_TRY(kd_dist_bcast(ctx->comm, &code, sizeof code, 0));
  if (r->best_p != p) {
    if (code == KD_ERR_INTERRUPTED || code == KD_OK)
      KD_FAIL(KD_ERR_INTERRUPTED, "sweep point %d: interrupted before it ran; nothing written", p);
    KD_FAIL((kd_err)code, "%s", r->rows[p].message);
  }
  *res = r->best;
  memset(&r->best, 0, sizeof r->best);
  *info = r->best_info;
  info->no_output = 1;
  kd_log_info(
      "sweep: point %d of %d written to %s; run with sweep.summary_only=true once every "
      "point is written",
      p, r->n, kd_sweep_point_path(sp, p, path, sizeof path));
cleanup:
  return err;
}

static kd_err kd_sweep_run_(const kd_task_ctx *ctx, void *state, kd_result *res,
                            kd_task_info *info) {
  kd_err err = KD_OK, first_fail = KD_OK;
  kd_sweep_state *st = state;
  kd_sweep_spec *sp = &st->spec;
  kd_sweep_run_ctx r;
  char *yaml = NULL;
  memset(&r, 0, sizeof r);
  r.gcomm = MPI_COMM_NULL;
  r.best_mmd = INFINITY;
  r.best_p = -1;
  r.size = kd_dist_size(ctx->comm);
  r.rank = kd_dist_rank(ctx->comm);
  r.n = sp->n_points;
  r.G = sp->point >= 0 ? 1 : kd_sweep_n_groups(r.size, r.n, sp->groups);
  r.g = kd_sweep_group_of(r.rank, r.size, r.G);
  r.t0 = kd_dist_wtime();
  const int n = r.n;
  if (sp->groups > r.size)
    kd_log_warn("sweep.groups = %lld exceeds the %d ranks; using %d groups", (long long)sp->groups,
                r.size, r.G);
  KD_TRY(kd_sweep_make_dir_(ctx->comm, sp->dir));
  KD_TRY(kd_dist_split(ctx->comm, r.g, &r.gcomm));
  r.grank = kd_dist_rank(r.gcomm);
  if (sp->point >= 0)
    kd_log_info("sweep: point %lld of %d (task %s) on %d ranks (sweep.point)", (long long)sp->point,
                n, sp->task, r.size);
  else
    kd_log_info("sweep: %d points of task %s over %d group(s) of ranks (%d ranks)%s", n, sp->task,
                r.G, r.size, sp->summary_only ? ", reading the point files (summary_only)" : "");
  KD_ALLOC(r.rows, n);
  KD_ALLOC(r.i64, 2 * (size_t)n);
  KD_ALLOC(r.f64, 3 * (size_t)n);
  KD_ALLOC(r.u64, n);
  KD_TRY(kd_sweep_run_points_(ctx, st, &r));
  if (sp->point >= 0) {
    KD_TRY(kd_sweep_point_only_(ctx, sp, &r, res, info));
    goto cleanup;
  }
  KD_TRY(kd_sweep_gather_rows_(ctx, &r, &first_fail));
  const int bp = kd_sweep_best_point_(r.rows, n);
  if (r.rank == 0) {
    KD_TRY(kd_sweep_summary_yaml_(ctx->cfg, &yaml));
    err = kd_sweep_write_summary(sp, r.rows, yaml);
  }
  KD_TRY(kd_dist_agreed(ctx->comm, err));
  kd_log_info("sweep: summary in %s/summary.csv and %s/summary.h5", sp->dir, sp->dir);
  KD_TRY(kd_sweep_result_(ctx, sp, &r, bp, res, info));
  res->seconds = kd_dist_wtime() - r.t0;
  for (int p = 0; p < n; p++)
    if (r.rows[p].status == KD_ERR_INTERRUPTED) {
      KD_FAIL(KD_ERR_INTERRUPTED,
              "sweep interrupted: points not run are marked status %d in %s/summary.csv",
              (int)KD_ERR_INTERRUPTED, sp->dir);
    }
  if (first_fail != KD_OK && (!sp->allow_failures || bp < 0)) {
    int fp = 0;
    while (r.rows[fp].status == KD_OK) fp++;
    KD_FAIL(first_fail, "%s (summary with every point's status in %s/summary.csv)",
            r.rows[fp].message, sp->dir);
  }
cleanup:
  kd_sweep_run_free_(&r);
  free(yaml);
  return err;
}

const kd_task_desc kd_task_sweep = {.name = "sweep",
                                    .summary =
                                        "run a base task over a list or product of parameter "
                                        "values (one output per point + summary)",
                                    .setup = kd_sweep_setup_,
                                    .run = kd_sweep_run_,
                                    .destroy = kd_sweep_destroy_};
