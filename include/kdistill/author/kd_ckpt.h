/* kd_ckpt.h - checkpointing as one capability: the object an iterative algorithm gets through
 * kd_algo_in.ckpt (docs/checkpoint.md). The algorithm asks at each safe point whether a checkpoint
 * is due (the interrupt flag agreed over ranks folded in), writes its state as named datasets in
 * global order (independent of the rank count) plus its trace, and on resume reads them back with
 * typed, shape-checked getters. Where the state goes (a file published atomically by the task, a
 * buffer in a test) is the creator's business: the object hands the finished state to a sink.
 *
 * A NULL kd_ckpt means "checkpointing off": every call below accepts it (due is always 0, nothing
 * is resumed), so a zero-initialised kd_algo_in stays valid.
 *
 *   int due;
 *   KD_TRY(kd_ckpt_due(in->ckpt, iter, &due));        // Collective
 *   if (due) {
 *     KD_TRY(kd_ckpt_put_f64(in->ckpt, "/state/x", 1, &n, x));
 *     KD_TRY(kd_ckpt_commit(in->ckpt, iter, seconds, evals));
 *     KD_CHECK(!kd_ckpt_interrupted(in->ckpt), KD_ERR_INTERRUPTED, "interrupted at %lld", iter);
 *   }
 *   ...
 *   const double *x;
 *   if (kd_ckpt_resume(in->ckpt)) KD_TRY(kd_ckpt_get_f64(in->ckpt, "/state/x", 1, &n, &x));
 */
#ifndef KDISTILL_KD_CKPT_H
#define KDISTILL_KD_CKPT_H

#include <mpi.h>
#include <stdint.h>

#include "kd_algo.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where a finished state goes: the task writes it to its checkpoint file, a test keeps it in
 *  memory. `state` holds the /state/... datasets, the trace, seconds and kernel_evals, and the
 *  metrics "iteration" and "interrupted". Collective over the kd_ckpt's communicator. */
typedef kd_err (*kd_ckpt_sink)(void *user, const kd_result *state);

/** Create a checkpoint object over comm. every > 0: a checkpoint is due every `every` safe points
 *  (the algorithm's step counter); 0: only after an agreed interrupt. sink/user: where states go
 *  (sink NULL = never due, not even on a signal). resume: a state to continue from (a kd_result
 *  read from a checkpoint, replicated on every rank; borrowed, must outlive the object) or NULL.
 *  Local; KD_ERR_MEM. */
kd_err kd_ckpt_create(MPI_Comm comm, int64_t every, kd_ckpt_sink sink, void *user,
                      const kd_result *resume, kd_ckpt **out);
/** Free; accepts NULL, sets *ck to NULL. Local. */
void kd_ckpt_destroy(kd_ckpt **ck);

/** 1 if states are written (a sink is set). Local. */
int kd_ckpt_on(const kd_ckpt *ck);
/** The interval `every` (0 when off). Local. */
int64_t kd_ckpt_every(const kd_ckpt *ck);
/** This rank's interrupt flag (SIGTERM/SIGUSR1 or kd_ctx_interrupt), 0 when off: for algorithms
 *  that fold it into a reduction they already do, then report the agreed value with
 *  kd_ckpt_set_interrupted. Local. */
int kd_ckpt_pending(const kd_ckpt *ck);
/** Record the agreed interrupt flag (the same value on every rank). Local. */
void kd_ckpt_set_interrupted(kd_ckpt *ck, int agreed);
/** 1 once an interrupt was agreed (then the next state written is the last). Local. */
int kd_ckpt_interrupted(const kd_ckpt *ck);
/** At safe point `step`: agree the interrupt flag over ranks (one small sum) and set *due = 1 when
 * a checkpoint must be written now (interrupted, or every > 0 and step % every == 0). *due = 0 and
 *  no communication when off. Collective. */
kd_err kd_ckpt_due(kd_ckpt *ck, int64_t step, int *due);
/** *due without the agreement, for an algorithm that agreed the flag itself (see
 *  kd_ckpt_pending). Local. */
int kd_ckpt_due_agreed(const kd_ckpt *ck, int64_t step);

/** Add a dataset to the state being written (data copied; path under /state/, rank 0..2, dims in
 *  global order). A dataset that only rank 0 holds may be given with zero dims elsewhere: rank 0
 *  writes the file. Local. */
kd_err kd_ckpt_put_f64(kd_ckpt *ck, const char *path, int rank, const int64_t *dims,
                       const double *v);
kd_err kd_ckpt_put_i64(kd_ckpt *ck, const char *path, int rank, const int64_t *dims,
                       const int64_t *v);
/** Copy the trace of `r` into the state. Local. */
kd_err kd_ckpt_put_trace(kd_ckpt *ck, const kd_result *r);
/** Finish the state: iteration, cumulative seconds and kernel evaluations (the resumed runs'
 *  added by the caller or not, as the family always did), "interrupted" from the agreed flag;
 *  a local error of the puts is agreed first, then the state goes to the sink and is cleared.
 *  Collective. */
kd_err kd_ckpt_commit(kd_ckpt *ck, int64_t iteration, double seconds, uint64_t kernel_evals);

/** The state to resume from, or NULL (not resuming / off). Local. */
const kd_result *kd_ckpt_resume(const kd_ckpt *ck);
/** Seconds / kernel evaluations of the resumed runs (0 when not resuming). Local. */
double kd_ckpt_resume_seconds(const kd_ckpt *ck);
uint64_t kd_ckpt_resume_evals(const kd_ckpt *ck);
/** 1 if the resume state has a dataset at path. Local. */
int kd_ckpt_has(const kd_ckpt *ck, const char *path);
/** Typed, shape-checked getters of the resume state: the dataset at path must exist, be float64
 *  (int64) and have rank `rank`; dims[i] >= 0 must match, dims[i] < 0 accepts any extent and
 *  receives the actual one. *v is borrowed from the resume state. Otherwise KD_ERR_FILE with one
 *  line naming the dataset, the expected and the found shape. Local (the state is replicated, so
 *  every rank fails alike). */
kd_err kd_ckpt_get_f64(const kd_ckpt *ck, const char *path, int rank, int64_t *dims,
                       const double **v);
kd_err kd_ckpt_get_i64(const kd_ckpt *ck, const char *path, int rank, int64_t *dims,
                       const int64_t **v);

#ifdef __cplusplus
}
#endif
#endif
