/* kd_algo.h - results and the algorithm descriptor every algorithm file exports. */
#ifndef KDISTILL_KD_ALGO_H
#define KDISTILL_KD_ALGO_H

#include "kd_ctx.h"
#include "kd_kernel.h"
#include "kd_pointset.h"
#include "kd_target.h"
#include "kd_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------- results ---------------- */
/** Extra output dataset (copied in). path like "/test/p_value"; rank 0 writes it. */
typedef struct {
  char *path;
  int is_int; /* 0: float64 data, 1: int64 data */
  int rank;   /* 0 (scalar) .. 2 */
  int64_t dims[2];
  double *f64;
  int64_t *i64;
} kd_result_dataset;

/** Named scalar written as an attribute of /metrics (e.g. "lmo_calls", "mmd_before_reweight"). */
typedef struct {
  char *name;
  double value;
  int is_count; /* 1: an integer count or code, written as a 64-bit integer attribute */
} kd_result_metric;

/** What an algorithm returns. Every field is replicated (identical) on all ranks; arrays are owned.
 *  Zero-initialise with KD_RESULT_INIT, free with kd_result_free. */
typedef struct {
  kd_gidx n; /* number of output points */
  int d;
  double *points;        /* [n*d] */
  double *weights;       /* [n], sum 1, >= 0 (sc/lsc with weights: constant may be negative) */
  int64_t *indices;      /* [n], 0-based source row, -1 if not a row */
  double mmd;            /* exact MMD against the target (filled by the task layer if NaN) */
  double seconds;        /* wall time of run() */
  uint64_t kernel_evals; /* summed over ranks */
  /* trace for iterative algorithms */
  int64_t n_trace, cap_trace;
  int64_t *trace_iter, *trace_atoms;
  double *trace_mmd, *trace_seconds;
  /* extras */
  int n_metrics;
  kd_result_metric *metrics;
  int n_datasets;
  kd_result_dataset *datasets;
} kd_result;

#define KD_RESULT_INIT \
  { 0 }

/** Allocate points/weights/indices for n rows of dimension d (weights uniform, indices -1). */
kd_err kd_result_alloc(kd_result *r, kd_gidx n, int d);
/** Append one trace row. Local. */
kd_err kd_result_trace_push(kd_result *r, int64_t iter, int64_t atoms, double mmd, double seconds);
/** Why an iterative algorithm stopped: /metrics stop_reason holds the code. */
typedef enum {
  KD_STOP_NONE = 0,       /* not recorded */
  KD_STOP_MAX_ITER = 1,   /* the iteration limit (max_iter) */
  KD_STOP_MAX_ATOMS = 2,  /* the rule has max_atoms atoms */
  KD_STOP_TOL_MMD = 3,    /* MMD <= tol_mmd (also an MMD of 0) */
  KD_STOP_TOL_GAP = 4,    /* Frank-Wolfe gap <= tol_gap: optimal on the candidate set */
  KD_STOP_NO_DESCENT = 5, /* no ascent direction left (accelerated herding) */
  KD_STOP_COMPLETE = 6    /* ran to completion: the output size is fixed by construction (thin,
                             quad, ctt; every algorithm that is not iterative until a rule) */
} kd_stop_reason;
/** The name of a kd_stop_reason ("max_iter", ...; "none" for unknown codes). */
const char *kd_stop_reason_name(int reason);

/** Remove the points of weight exactly 0 (and their rows of /coreset/ datasets of n rows);
 *  *dropped = how many. Keeps everything when all weights are 0. Local. */
kd_err kd_result_drop_zero_weights(kd_result *r, kd_gidx *dropped);
/** Set (or overwrite) a /metrics attribute. Local. */
kd_err kd_result_set_metric(kd_result *r, const char *name, double value);
/** Set a count (iterations, rows, a code): kept as value = (double)v with is_count = 1, written as
 *  an int64 attribute. Local. */
kd_err kd_result_set_count(kd_result *r, const char *name, int64_t v);
/** Look up a metric; returns 1 and sets *value if present. */
int kd_result_get_metric(const kd_result *r, const char *name, double *value);
/** Add an extra dataset (data copied). rank 0..2, dims[rank]. Local. */
kd_err kd_result_add_f64(kd_result *r, const char *path, int rank, const int64_t *dims,
                         const double *data);
kd_err kd_result_add_i64(kd_result *r, const char *path, int rank, const int64_t *dims,
                         const int64_t *data);
/** Find an extra dataset by path (NULL if absent). */
const kd_result_dataset *kd_result_find(const kd_result *r, const char *path);
void kd_result_free(kd_result *r);

/* ---------------- algorithms ---------------- */
typedef struct kd_ckpt kd_ckpt; /* kd_ckpt.h */

/** Inputs of run(). All pointers borrowed. Fields a task does not use are NULL. */
typedef struct {
  MPI_Comm comm; /* pass only to comm/ helpers */
  kd_kernel *kernel;
  kd_pointset *points;     /* candidates (herd), input (thin), sample pool (quad) */
  kd_target *target;       /* mu: closed form or empirical */
  const kd_params *params; /* this algorithm's keys, resolved */
  uint64_t seed;
  const void *task_in; /* task-specific extra inputs (e.g. CTT's second sample) */
  /** Checkpointing (kd_ckpt.h), NULL = off (zero-initialised callers stay valid). An iterative
   *  algorithm asks at each safe point whether a checkpoint is due (every `every` steps, or once an
   *  interrupt was agreed over ranks), writes its state as /state/... datasets in global order
   *  (independent of the rank count) plus its trace, and after a signal-driven checkpoint returns
   *  KD_ERR_INTERRUPTED; on resume it reads its state back with the typed getters. Every
   *  algorithm that does so has a row in tests/conformance/checkpoint/. Borrowed. */
  kd_ckpt *ckpt;
  /** The context the run belongs to (log level, interrupt flag, ...), set by the task layer; the
   *  same context is bound to the thread during run(). NULL from callers that build kd_algo_in
   *  themselves (tests). Borrowed. */
  kd_ctx *ctx;
} kd_algo_in;

typedef struct {
  const char *name;    /* algorithm.name */
  const char *task;    /* "herd", "thin", "quad", ... */
  const char *summary; /* one line for --help / README */
  const kd_param_spec *params;
  int n_params;
  kd_err (*run)(const kd_algo_in *in, kd_result *out); /* Collective over in->comm */
} kd_algo_desc;

/** Registry lookup by (task, name); NULL if unknown. Local. */
const kd_algo_desc *kd_algo_find(const char *task, const char *name);
/** Iterate the registry: returns NULL past the end. */
const kd_algo_desc *kd_algo_at(int i);
/** 1 if the algorithm reads its input rows bin by bin through kd_pointset_rows_at, so it accepts
 *  a lazy (generated on demand) point set: the thinning tree's algorithms. Local. */
int kd_algo_accepts_lazy(const kd_algo_desc *a);

#ifdef __cplusplus
}
#endif
#endif
