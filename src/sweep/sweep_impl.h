/* sweep_impl.h - parameter sweeps (task: sweep). A sweep runs one base task (herd, thin, quad, ...)
 * at many points of a parameter space, each point being the base configuration with a few
 * --set-style overrides, as independent jobs over groups of ranks (kd_dist_split): one output
 * HDF5 per point plus a summary table (CSV and HDF5). Config (docs/hpc.md):
 *
 *   task: sweep
 *   sweep:
 *     task: herd                 # the base task run at every point (required; not sweep)
 *     product:                   # Cartesian product of axes; the last axis varies fastest
 *       - {key: algorithm.n_out, values: [16, 32, 64]}
 *       - {key: run.seed, values: [1, 2]}
 *     # or zip: (same form, equal lengths, varied together)
 *     # or points: [[algorithm.n_out=16, kernel.ls=0.5], [algorithm.name=uniform]]
 *     groups: 0                  # rank groups; 0 = min(ranks, points)
 *     dir: sweep_out             # point files <dir>/<prefix>_NNNN.h5, <dir>/summary.{csv,h5}
 *     prefix: point
 *     allow_failures: false      # true: a failed point is reported, the sweep still succeeds
 *     resume: false              # true: keep points already written by an earlier run (same
 *                                #   base config and overrides: /sweep_point/hash matches)
 *     point: -1                  # K >= 0: run point K only, on all ranks, and write its point
 *                                #   file; no summary, no output.path (one SLURM array task per
 *                                #   point: --set sweep.point=$SLURM_ARRAY_TASK_ID)
 *     summary_only: false        # true: compute nothing; read every point file (each must exist
 *                                #   with the matching /sweep_point/hash) and write the summary
 *                                #   and output.path exactly as the whole sweep does
 *   data: ... kernel: ... algorithm: ... (the base configuration, as for the base task)
 */
#ifndef KDISTILL_SWEEP_IMPL_H
#define KDISTILL_SWEEP_IMPL_H

#include "kdistill/author.h"
#include "task/task_impl.h"

/** The sweep task (registered with the entry points: job/job_tasks.h, not in task/). */
extern const kd_task_desc kd_task_sweep;

/** The parsed sweep section. Owned strings; free with kd_sweep_spec_free. */
typedef struct {
  char *task; /* base task name */
  char *mode; /* "product", "zip" or "points" */
  int n_keys;
  char **keys; /* [n_keys] parameter keys, in order of first appearance */
  int n_points;
  char **vals;    /* [n_points * n_keys] value texts (YAML scalar or flow sequence); NULL: the
                     point leaves that key at its base value */
  int64_t groups; /* 0: auto */
  char *dir, *prefix;
  int allow_failures;
  int resume;       /* skip points whose output exists with the same point hash */
  int64_t point;    /* >= 0: run this point only (array mode); -1: all */
  int summary_only; /* read the point files, compute nothing, write the summary */
} kd_sweep_spec;

#define KD_SWEEP_MAX_POINTS 100000
#define KD_SWEEP_MSG_LEN 384

/** Read and check the `sweep:` section of cfg (marks its keys read). Local: every rank parses the
 *  same config. Errors: KD_ERR_CONFIG naming file:line: key. */
kd_err kd_sweep_spec_read(kd_config *cfg, kd_sweep_spec *sp);
/** Free a spec (accepts a zeroed one). Local. */
void kd_sweep_spec_free(kd_sweep_spec *sp);
/** "k1=v1, k2=v2" for point p into buf[len] (for messages and logs). Local. */
const char *kd_sweep_point_label(const kd_sweep_spec *sp, int p, char *buf, int len);

/** Build the configuration of point p: a clone of base (the whole base configuration, e.g. the
 *  sweep's own config before anything is marked read; kd_config_clone) named "<base_name> (sweep
 *  point p)", with task set to the base task, the point's overrides applied with kd_config_set and
 *  output.path = out_path (if not NULL). The sweep section of the copy is read (marked used).
 *  *out owned by the caller. Local. */
kd_err kd_sweep_point_config(const kd_config *base, const char *base_name, const kd_sweep_spec *sp,
                             int p, const char *out_path, kd_config **out);

/** Number of rank groups for size ranks and n points given the requested count (0 = auto). */
int kd_sweep_n_groups(int size, int n_points, int64_t requested);
/** Group of a rank: contiguous blocks, group g holds ranks [leader(g), leader(g+1)). */
int kd_sweep_group_of(int rank, int size, int n_groups);
/** Lowest rank of group g (g = n_groups gives size). */
int kd_sweep_group_leader(int g, int size, int n_groups);

/** One row of the summary table (filled on every rank after the sweep). */
typedef struct {
  int64_t status; /* kd_err code of the point (0 ok); KD_ERR_INTERRUPTED: not run */
  double mmd, seconds;
  int64_t n_atoms;
  uint64_t kernel_evals;
  char message[KD_SWEEP_MSG_LEN];
} kd_sweep_row;

/** FNV-1a 64 of text, continuing from h (start with KD_SWEEP_FNV_OFFSET). Local, pure. */
#define KD_SWEEP_FNV_OFFSET 14695981039346656037ULL
uint64_t kd_sweep_fnv1a(uint64_t h, const char *text);
/** 1 if `path` is a point output whose /sweep_point/hash equals hash, else 0 (also when the file
 *  is missing or unreadable). Local. */
int kd_sweep_point_done(const char *path, uint64_t hash);

/** Path of point p's output file into buf. Local. */
const char *kd_sweep_point_path(const kd_sweep_spec *sp, int p, char *buf, int len);
/** Write <dir>/summary.csv and <dir>/summary.h5 (atomically: temporary then rename). Call on one
 *  rank only. Local. */
kd_err kd_sweep_write_summary(const kd_sweep_spec *sp, const kd_sweep_row *rows,
                              const char *config_yaml);

#endif
