/* kd_result.h - what a run returns (kd_job_run, kd_output_read): the rule or coreset, its metrics,
 * trace and extra datasets. User tier; the functions that build a result are in
 * author/kd_algo.h. */
#ifndef KDISTILL_KD_RESULT_H
#define KDISTILL_KD_RESULT_H

#include <stdint.h>

#include "kd_api.h"
#include "kd_err.h"
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
KD_API const char *kd_stop_reason_name(int reason);

/** Look up a metric; returns 1 and sets *value if present. */
KD_API int kd_result_get_metric(const kd_result *r, const char *name, double *value);
/** Find an extra dataset by path (NULL if absent). */
KD_API const kd_result_dataset *kd_result_find(const kd_result *r, const char *path);
KD_API void kd_result_free(kd_result *r);

#ifdef __cplusplus
}
#endif
#endif
