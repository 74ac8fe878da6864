/* ckpt.c - the checkpoint object algorithms get through kd_algo_in.ckpt
 * (include/kdistill/author/kd_ckpt.h): due / state writer / typed reader over one communicator.
 * Files are the sink's business (the task layer publishes them with io/checkpoint.c); this file
 * does no I/O.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "core/ctx_impl.h"
#include "io/io_impl.h"
#include "kdistill/author/kd_ckpt.h"

struct kd_ckpt {
  MPI_Comm comm; /* borrowed */
  int64_t every;
  kd_ckpt_sink sink;
  void *user;
  const kd_result *resume; /* borrowed */
  int interrupted;         /* agreed */
  kd_result state;         /* the state being written */
  kd_err put_err;          /* first local failure of a put, agreed at commit */
};

kd_err kd_ckpt_create(MPI_Comm comm, int64_t every, kd_ckpt_sink sink, void *user,
                      const kd_result *resume, kd_ckpt **out) {
  kd_err err = KD_OK;
  kd_ckpt *ck = NULL;
  *out = NULL;
  KD_ALLOC(ck, 1);
  ck->comm = comm;
  ck->every = every;
  ck->sink = sink;
  ck->user = user;
  ck->resume = resume;
  *out = ck;
cleanup:
  return err;
}

void kd_ckpt_destroy(kd_ckpt **ck) {
  if (!ck || !*ck) return;
  kd_result_free(&(*ck)->state);
  free(*ck);
  *ck = NULL;
}

int kd_ckpt_on(const kd_ckpt *ck) { return ck && ck->sink; }
int64_t kd_ckpt_every(const kd_ckpt *ck) { return kd_ckpt_on(ck) ? ck->every : 0; }
int kd_ckpt_pending(const kd_ckpt *ck) { return kd_ckpt_on(ck) && kd_interrupt_pending() != 0; }
void kd_ckpt_set_interrupted(kd_ckpt *ck, int agreed) {
  if (!ck) return;
  ck->interrupted = agreed != 0;
  if (ck->interrupted && kd_ckpt_on(ck)) kd_ctx_safe_stop_mark();
}
int kd_ckpt_interrupted(const kd_ckpt *ck) { return ck && ck->interrupted; }

int kd_ckpt_due_agreed(const kd_ckpt *ck, int64_t step) {
  if (!kd_ckpt_on(ck)) return 0;
  return ck->interrupted || (ck->every > 0 && step % ck->every == 0);
}

kd_err kd_ckpt_due(kd_ckpt *ck, int64_t step, int *due) {
  kd_err err = KD_OK;
  *due = 0;
  if (!kd_ckpt_on(ck)) return KD_OK;
  int64_t intr = kd_ckpt_pending(ck) ? 1 : 0;
  KD_TRY(kd_dist_sum_i64(ck->comm, &intr, 1));
  if (intr) kd_ckpt_set_interrupted(ck, 1);
  *due = kd_ckpt_due_agreed(ck, step);
cleanup:
  return err;
}

/* ---- writer ---- */
kd_err kd_ckpt_put_f64(kd_ckpt *ck, const char *path, int rank, const int64_t *dims,
                       const double *v) {
  if (!kd_ckpt_on(ck)) return KD_OK;
  if (ck->put_err == KD_OK) ck->put_err = kd_result_add_f64(&ck->state, path, rank, dims, v);
  return ck->put_err;
}

kd_err kd_ckpt_put_i64(kd_ckpt *ck, const char *path, int rank, const int64_t *dims,
                       const int64_t *v) {
  if (!kd_ckpt_on(ck)) return KD_OK;
  if (ck->put_err == KD_OK) ck->put_err = kd_result_add_i64(&ck->state, path, rank, dims, v);
  return ck->put_err;
}

kd_err kd_ckpt_put_trace(kd_ckpt *ck, const kd_result *r) {
  if (!kd_ckpt_on(ck)) return KD_OK;
  for (int64_t i = 0; i < r->n_trace && ck->put_err == KD_OK; i++)
    ck->put_err = kd_result_trace_push(&ck->state, r->trace_iter[i], r->trace_atoms[i],
                                       r->trace_mmd[i], r->trace_seconds[i]);
  return ck->put_err;
}

kd_err kd_ckpt_commit(kd_ckpt *ck, int64_t iteration, double seconds, uint64_t kernel_evals) {
  kd_err err = KD_OK, lerr;
  if (!kd_ckpt_on(ck)) return KD_OK;
  lerr = ck->put_err;
  ck->state.seconds = seconds;
  ck->state.kernel_evals = kernel_evals;
  if (lerr == KD_OK) lerr = kd_result_set_metric(&ck->state, "iteration", (double)iteration);
  if (lerr == KD_OK)
    lerr = kd_result_set_metric(&ck->state, "interrupted", ck->interrupted ? 1.0 : 0.0);
  KD_TRY(kd_dist_agreed(ck->comm, lerr));
  KD_TRY(ck->sink(ck->user, &ck->state));
cleanup:
  kd_result_free(&ck->state);
  ck->put_err = KD_OK;
  return err;
}

/* ---- reader ---- */
const kd_result *kd_ckpt_resume(const kd_ckpt *ck) { return ck ? ck->resume : NULL; }
double kd_ckpt_resume_seconds(const kd_ckpt *ck) {
  return kd_ckpt_resume(ck) ? ck->resume->seconds : 0.0;
}
uint64_t kd_ckpt_resume_evals(const kd_ckpt *ck) {
  return kd_ckpt_resume(ck) ? ck->resume->kernel_evals : 0;
}
int kd_ckpt_has(const kd_ckpt *ck, const char *path) {
  return kd_ckpt_resume(ck) && kd_result_find(ck->resume, path) != NULL;
}

/* "scalar", "[3]", "[3 x 4]"; a negative extent (any) prints as "?". */
static void kd_ckpt_shape_(int rank, const int64_t *dims, char *buf, size_t len) {
  char e[2][24];
  for (int i = 0; i < 2; i++) {
    if (i < rank && dims[i] >= 0)
      snprintf(e[i], sizeof e[i], "%lld", (long long)dims[i]);
    else
      snprintf(e[i], sizeof e[i], "?");
  }
  if (rank == 0)
    snprintf(buf, len, "scalar");
  else if (rank == 1)
    snprintf(buf, len, "[%s]", e[0]);
  else
    snprintf(buf, len, "[%s x %s]", e[0], e[1]);
}

static kd_err kd_ckpt_get_(const kd_ckpt *ck, const char *path, int is_int, int rank, int64_t *dims,
                           const kd_result_dataset **out) {
  kd_err err = KD_OK;
  const kd_result_dataset *x = kd_ckpt_resume(ck) ? kd_result_find(ck->resume, path) : NULL;
  char want[64], got[64];
  int64_t wd[2] = {dims && rank > 0 ? dims[0] : 0, dims && rank > 1 ? dims[1] : 0};
  int ok = x && x->is_int == is_int && x->rank == rank;
  *out = NULL;
  KD_CHECK(kd_ckpt_resume(ck), KD_ERR_INTERNAL, "checkpoint: %s read while not resuming", path);
  KD_CHECK(x, KD_ERR_FILE, "checkpoint: %s is missing", path);
  for (int i = 0; ok && i < rank; i++) ok = wd[i] < 0 || wd[i] == x->dims[i];
  kd_ckpt_shape_(rank, wd, want, sizeof want);
  kd_ckpt_shape_(x->rank, x->dims, got, sizeof got);
  KD_CHECK(ok, KD_ERR_FILE, "checkpoint: %s is %s %s, expected %s %s", path,
           x->is_int ? "int64" : "float64", got, is_int ? "int64" : "float64", want);
  for (int i = 0; i < rank; i++) dims[i] = x->dims[i];
  *out = x;
cleanup:
  return err;
}

kd_err kd_ckpt_get_f64(const kd_ckpt *ck, const char *path, int rank, int64_t *dims,
                       const double **v) {
  const kd_result_dataset *x = NULL;
  kd_err err = kd_ckpt_get_(ck, path, 0, rank, dims, &x);
  *v = x ? x->f64 : NULL;
  return err;
}

kd_err kd_ckpt_get_i64(const kd_ckpt *ck, const char *path, int rank, int64_t *dims,
                       const int64_t **v) {
  const kd_result_dataset *x = NULL;
  kd_err err = kd_ckpt_get_(ck, path, 1, rank, dims, &x);
  *v = x ? x->i64 : NULL;
  return err;
}

/* the job's checkpoint session (io_impl.h): here, apart from the HDF5 files of checkpoint.c */
kd_checkpoint_session *kd_checkpoint_session_get(void) {
  kd_ctx *c = kd_ctx_current();
  return c ? &c->ckpt : NULL;
}

/* ---- input fingerprints (the text of checkpoint.c: "section\tn\td\tdtype\thash\tpath" lines) */

/* Field i (0-based) of a tab-separated line [s, e) into buf. */
static void kd_ckpt_field_(const char *s, const char *e, int i, char *buf, size_t len) {
  for (; i > 0 && s < e; s++)
    if (*s == '\t') i--;
  const char *t = s;
  while (t < e && *t != '\t') t++;
  size_t n = (size_t)(t - s) < len - 1 ? (size_t)(t - s) : len - 1;
  memcpy(buf, s, n);
  buf[n] = '\0';
}

/* The stored line of `section` ([*s, *e)), or 0. */
static int kd_ckpt_find_input_(const char *stored, const char *section, const char **s,
                               const char **e) {
  char sec[64];
  for (const char *p = stored; p && *p;) {
    const char *q = strchr(p, '\n');
    if (!q) q = p + strlen(p);
    kd_ckpt_field_(p, q, 0, sec, sizeof sec);
    if (!strcmp(sec, section)) {
      *s = p;
      *e = q;
      return 1;
    }
    p = *q ? q + 1 : q;
  }
  return 0;
}

kd_err kd_checkpoint_inputs_check(const char *file, const char *stored, const kd_input_print *now,
                                  int n) {
  kd_err err = KD_OK;
  char f[5][1100], shape_now[96];
  int count = 0;
  for (const char *p = stored; p && *p; p++) count += *p == '\n';
  for (int i = 0; i < n; i++) {
    const kd_input_print *x = &now[i];
    const char *s = NULL, *e = NULL;
    KD_CHECK(kd_ckpt_find_input_(stored, x->section, &s, &e), KD_ERR_CONFIG,
             "%s: the checkpoint has no fingerprint of input %s (%s); rerun without --resume", file,
             x->section, x->path);
    for (int k = 0; k < 5; k++) kd_ckpt_field_(s, e, k + 1, f[k], sizeof f[k]);
    snprintf(shape_now, sizeof shape_now, "%lld x %lld %s", (long long)x->n, (long long)x->d,
             x->dtype);
    char shape_then[96], hash[17];
    snprintf(shape_then, sizeof shape_then, "%.20s x %.20s %.15s", f[0], f[1], f[2]);
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)x->hash);
    KD_CHECK(!strcmp(shape_then, shape_now), KD_ERR_CONFIG,
             "%s: input %s (%s) changed since the checkpoint was written (%s then, %s now); rerun "
             "without --resume",
             file, x->section, x->path, shape_then, shape_now);
    KD_CHECK(!strcmp(f[3], hash), KD_ERR_CONFIG,
             "%s: input %s (%s) changed since the checkpoint was written (the same shape %s, other "
             "values); rerun without --resume",
             file, x->section, x->path, shape_now);
  }
  KD_CHECK(count == n, KD_ERR_CONFIG,
           "%s: written for %d input files, this run reads %d; rerun without --resume", file, count,
           n);
cleanup:
  return err;
}
