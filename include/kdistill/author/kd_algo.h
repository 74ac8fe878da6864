/* kd_algo.h - (author tier) building a result, and the algorithm descriptor every algorithm file
 * exports. */
#ifndef KDISTILL_KD_ALGO_H
#define KDISTILL_KD_ALGO_H

#include "../kd_ctx.h"
#include "../kd_result.h"
#include "kd_kernel.h"
#include "kd_pointset.h"
#include "kd_target.h"
#include "kd_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------- building a result (kd_result.h) ---------------- */
/** Allocate points/weights/indices for n rows of dimension d (weights uniform, indices -1). */
kd_err kd_result_alloc(kd_result *r, kd_gidx n, int d);
/** Append one trace row. Local. */
kd_err kd_result_trace_push(kd_result *r, int64_t iter, int64_t atoms, double mmd, double seconds);
/** Remove the points of weight exactly 0 (and their rows of /coreset/ datasets of n rows);
 *  *dropped = how many. Keeps everything when all weights are 0. Local. */
kd_err kd_result_drop_zero_weights(kd_result *r, kd_gidx *dropped);
/** Set (or overwrite) a /metrics attribute. Local. */
kd_err kd_result_set_metric(kd_result *r, const char *name, double value);
/** Set a count (iterations, rows, a code): kept as value = (double)v with is_count = 1, written as
 *  an int64 attribute. Local. */
kd_err kd_result_set_count(kd_result *r, const char *name, int64_t v);
/** Add an extra dataset (data copied). rank 0..2, dims[rank]. Local. */
kd_err kd_result_add_f64(kd_result *r, const char *path, int rank, const int64_t *dims,
                         const double *data);
kd_err kd_result_add_i64(kd_result *r, const char *path, int rank, const int64_t *dims,
                         const int64_t *data);

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

/** Capabilities of an algorithm (kd_algo_desc.flags): what the task layer asks of it, so that no
 *  task tests algorithm names. */
enum {
  KD_ALGO_LAZY_INPUT = 1 << 0, /* reads its rows bin by bin (kd_pointset_rows_at): accepts lazy
                                  (generated on demand) data */
  KD_ALGO_N_OUT = 1 << 1,      /* has a key n_out that may not exceed the input rows (checked by
                                  the task before anything is computed, and by validate) */
  KD_ALGO_SCORE = 1 << 2,      /* built for the Stein kernel: its rows carry the score grad log p
                                  (kernel: {name: stein}); docs/stein.md */
  KD_ALGO_WEIGHTED = 1 << 3,   /* returns non-uniform weights (a quadrature rule, not a coreset) */
  KD_ALGO_RESUMABLE = 1 << 4   /* writes checkpoints at safe points (run.checkpoint_*; it has a
                                  row in tests/conformance/checkpoint/) */
};

/** What a task knows about the inputs before anything is computed (every rank the same). */
typedef struct {
  kd_gidx n_in;     /* rows of the input (thin), candidates (herd) or sample pool (quad); 0: none */
  kd_gidx n_target; /* rows of an empirical target; 0 for a closed-form target */
  int d;            /* dimension of the rows */
  int n_ranks;      /* ranks of the run */
  kd_gidx n_second; /* rows of the second sample (ctt: y); 0 for one-sample tasks */
} kd_algo_shape;

/** An algorithm's own memory estimate for one rank (kd_algo_desc.mem). */
typedef struct {
  double bytes;    /* per rank, beyond the rank's block of the input rows */
  char what[160];  /* what is estimated, for the refusal ("quad with n = 40 nodes ...") */
  const char *key; /* the key(s) to change, e.g. "algorithm.n or algorithm.sample_size" */
} kd_algo_mem;

typedef struct {
  const char *name;    /* algorithm.name */
  const char *task;    /* "herd", "thin", "quad", ... */
  const char *summary; /* one line for --help / README */
  const kd_param_spec *params;
  int n_params;
  kd_err (*run)(const kd_algo_in *in, kd_result *out); /* Collective over in->comm */
  unsigned flags;                                      /* KD_ALGO_* */
  /** The checks of the parameters against the inputs' shape that the key ranges cannot express
   *  (g against n_in, n_out against the Compress output, ...), made by the task before anything
   *  is computed and by validate; run() makes the same checks through the same function. Errors
   *  KD_ERR_CONFIG with the key recorded (KD_CHECK_KEY). NULL: none. Local (every rank agrees:
   *  parameters and shape are replicated). */
  kd_err (*check)(const kd_params *p, const kd_algo_shape *s);
  /** The memory estimate of one rank that the up-front refusal and validate use. NULL: the task's
   *  generic estimate for its family. Local. */
  kd_err (*mem)(const kd_params *p, const kd_algo_shape *s, kd_algo_mem *out);
} kd_algo_desc;

/** Registry lookup by (task, name); NULL if unknown. Local. */
const kd_algo_desc *kd_algo_find(const char *task, const char *name);
/** The checks every algorithm gets from its descriptor, before anything is computed: with
 *  KD_ALGO_N_OUT, the n_out row (KD_PARAM_N_OUT) may not exceed the n_in input rows
 *  (KD_ERR_CONFIG naming algorithm.n_out). Local; every rank passes the same p and n_in. */
kd_err kd_algo_check_n_out(const kd_algo_desc *desc, const kd_params *p, kd_gidx n_in);
/** Run an algorithm: kd_algo_check_n_out on in->points' rows, then desc->run. The task layer,
 *  composite algorithms (a stage run by another) and tests run every algorithm through this.
 *  Collective (as desc->run). */
kd_err kd_algo_run(const kd_algo_desc *desc, const kd_algo_in *in, kd_result *out);
/** Iterate the registry: returns NULL past the end. */
const kd_algo_desc *kd_algo_at(int i);
/** 1 if the algorithm reads its input rows bin by bin through kd_pointset_rows_at, so it accepts
 *  a lazy (generated on demand) point set (flag KD_ALGO_LAZY_INPUT). Local. */
int kd_algo_accepts_lazy(const kd_algo_desc *a);
/** The names of the algorithms of `task` with every flag of `flags`, comma separated, into
 *  buf[len] (for messages). Local. */
const char *kd_algo_names_with(const char *task, unsigned flags, char *buf, int len);

#ifdef __cplusplus
}
#endif
#endif
