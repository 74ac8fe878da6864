/* kd_util.h - (author tier) the counter-based RNG, logging on the bound context, interruption,
 * and typed parameter tables. */
#ifndef KDISTILL_KD_UTIL_H
#define KDISTILL_KD_UTIL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "../kd_types.h"
#include "kd_check.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------- counter-based random numbers ----------------
 * Every draw is a pure function of (seed, stream, counter): no hidden state, so a value keyed by a
 * global row index is the same whatever the rank count. Streams separate independent uses
 * (e.g. stream = bin id * 64 + level). */

/** 64 random bits for (seed, stream, counter). Local, pure. */
uint64_t kd_rng_u64(uint64_t seed, uint64_t stream, uint64_t counter);
/** Uniform double in [0,1) (53 bits). Local, pure. */
double kd_rng_uniform(uint64_t seed, uint64_t stream, uint64_t counter);
/** Uniform double in (0,1) (never 0 or 1). Local, pure. */
double kd_rng_uniform_open(uint64_t seed, uint64_t stream, uint64_t counter);
/** Standard normal draw (Box-Muller on counters 2*counter, 2*counter+1). Local, pure. */
double kd_rng_normal(uint64_t seed, uint64_t stream, uint64_t counter);

/** A sequential stream for code that draws one value after another. Plain value type. */
typedef struct {
  uint64_t seed, stream, counter;
} kd_rng;
/** Initialise a stream (counter 0). Local. */
kd_rng kd_rng_make(uint64_t seed, uint64_t stream);
uint64_t kd_rng_next_u64(kd_rng *r);
double kd_rng_next_uniform(kd_rng *r);
double kd_rng_next_normal(kd_rng *r);
/** Uniform integer in [0, n) without modulo bias. Local. */
uint64_t kd_rng_next_below(kd_rng *r, uint64_t n);

/* ---------------- logging (on the bound context, kd_ctx.h) ----------------
 * These act on the context bound to the calling thread (kd_ctx_bind; the entry points of kd_job.h
 * bind theirs): rank 0 of its communicator hands each line to the context's sink (default:
 * stderr). With no context bound they do nothing. */

/** Set the bound context's log level and restart its elapsed-time clock (comm is not used: the
 *  rank is the context's). Prefer kd_ctx_set_log_level. Local. */
void kd_log_init(MPI_Comm comm, kd_log_level level);
/** The bound context's log level (KD_LOG_QUIET without one). Local. */
kd_log_level kd_log_get_level(void);
/** Seconds since the bound context's clock started (MPI_Wtime based; 0 without one). Local. */
double kd_log_elapsed(void);
/** One informational line on rank 0 (suppressed by --quiet). Local. */
void kd_log_info(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/** One line on rank 0 only with --verbose. Local. */
void kd_log_verbose(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/** A warning on rank 0 (printed unless --quiet). Local. */
void kd_log_warn(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/** Progress line: "[phase] iter I  mmd M  atoms A  elapsed S s" (mmd left out when NaN: steps
 *  without a known MMD, e.g. tree levels or replicates), rate-limited to the context's interval
 *  (kd_log_set_interval, seconds; 0 = every call). force=1 prints regardless. Local. */
void kd_log_progress(const char *phase, int64_t iter, double mmd, int64_t atoms, int force);
/** A progress line for a long phase that is not an iteration (e.g. a target's double sum):
 *  "[phase] 37.5% of <total> <unit>, elapsed 12.0 s, eta 20.0 s", on rank 0 at most once per
 *  progress interval; *last (caller's, start at 0) keeps the time of the last line. Local. */
void kd_log_fraction(const char *phase, double done, double total, const char *unit, double t0,
                     double *last);
/** Set the bound context's progress interval (kd_ctx_set_log_interval). Local. */
void kd_log_set_interval(double seconds);
/** Announce the iteration budget of the current phase (0 = unknown): progress lines then carry
 *  an upper estimate of the time left ("eta <= S s", from the mean time per iteration so far;
 *  iterative solvers may stop earlier on a tolerance). Local. */
void kd_log_set_total(int64_t total);
/** kd_log_set_total for a resumed phase whose first `done` iterations ran before this process:
 *  the estimate uses the time per iteration done here. Local. */
void kd_log_set_total_from(int64_t total, int64_t done);

/* ---------------- interruption (signals / kd_ctx_interrupt -> checkpoint) ---------------- */
/** Non-zero once the bound context was interrupted (kd_ctx_interrupted: kd_ctx_interrupt, or a
 *  SIGTERM/SIGUSR1 if it listens to signals); 0 without a context. Local. */
int kd_interrupt_pending(void);
/** For computations without a checkpoint: KD_ERR_INTERRUPTED with the message "interrupted
 *  during <what>; nothing was written" once kd_interrupt_pending, if the task running declared
 *  that it has no safe point (kd_interrupt_anywhere), else KD_OK - so a computation that is also
 *  run inside a checkpointing task (ctt in ctt_study) still stops at that task's safe point. Poll
 *  it at bounded intervals inside a local loop whose error is agreed afterwards. Local. */
kd_err kd_interrupt_check(const char *what);
/** A task without checkpoints sets this (1) around its computation so that kd_interrupt_check
 *  reports a pending interrupt anywhere; 0 restores the default. Local (bound context). */
void kd_interrupt_anywhere(int on);
/** Let the bound context listen to SIGTERM/SIGUSR1 (kd_ctx_listen_signals(ctx, 1)). Local. */
void kd_interrupt_install(void);
/** Set or clear the bound context's interrupt flag by hand (tests). Local. */
void kd_interrupt_set(int on);

/* ---------------- configuration sections ----------------
 * The configuration itself (kd_config) and its typed getters and setters are in kd_io.h. */
typedef struct kd_config kd_config;
/** A section of a configuration as the reader beside an object sees it (the kernel's,
 *  kd_kernel_read): the configuration, the section's key path ("kernel", "target", ...), the
 *  ranks that read it, and whether only the keys are checked (validate) or the inputs loaded too.
 *  All borrowed. */
typedef struct {
  kd_config *cfg;
  const char *prefix;
  MPI_Comm comm;
  int validate_only;
} kd_section;
/** "PREFIX.KEY" into buf (len bytes, truncated); returns buf. Local. */
const char *kd_section_key(const kd_section *s, const char *key, char *buf, size_t len);

/* ---------------- typed parameter tables ----------------
 * An algorithm declares its keys (under the config's `algorithm:` section) with defaults and
 * ranges; the config layer fills a kd_params from them, so run() never sees YAML. run() then
 * copies the values once into its own typed struct with kd_params_fill: each spec row names the
 * struct member it lands in (KD_PARAM_AT / KD_PARAM_AT_INDEX), so the defaults are stated once,
 * in the table, and no key is looked up by string inside an algorithm. */
typedef enum { KD_PARAM_INT, KD_PARAM_F64, KD_PARAM_STR, KD_PARAM_BOOL } kd_param_type;

/** What a row means to the harness beside its key: the rows every algorithm shares are made by
 *  one macro each (KD_PARAM_N_OUT, KD_PARAM_G) and found by this mark, never by their name. */
typedef enum {
  KD_PARAM_ROLE_NONE = 0,  /* a key of the algorithm's own */
  KD_PARAM_ROLE_N_OUT = 1, /* the output size (kd_algo_check_n_out) */
  KD_PARAM_ROLE_G = 2      /* Compress's oversampling g: 2^g sqrt(n) rows per node */
} kd_param_role;

typedef struct {
  const char *key; /* key under `algorithm:` */
  kd_param_type type;
  double def;          /* default for INT / F64 / BOOL */
  const char *def_str; /* default for STR (NULL: required) */
  double min, max;     /* inclusive range for INT / F64 */
  const char *choices; /* STR: '|'-separated allowed values, or NULL for any */
  const char *doc;     /* one-line description (README table, --print-defaults) */
  /* where kd_params_fill stores the value: 1 + offsetof(struct, member), 0 = not stored (so a
   * zero-initialised row stays valid); write it with KD_PARAM_AT / KD_PARAM_AT_INDEX /
   * KD_PARAM_NONE. Member types: INT int64_t, F64 double, BOOL int, STR const char * (borrowed from
   * the kd_params), or int (the 0-based position of the value in `choices`) when as_index = 1;
   * an INT row with as_index = 1 (KD_PARAM_AT_INT) is stored into an int. */
  size_t offset;
  int as_index;
  int role; /* kd_param_role (0 when the row is not one of the shared ones) */
} kd_param_spec;

/** Last initialisers of a spec row (offset, as_index, role): store the value in member `m` of
 *  struct type `T`. */
#define KD_PARAM_AT(T, m) (offsetof(T, m) + 1), 0, KD_PARAM_ROLE_NONE
/** Same for a STR row with choices: store the index of the value in `choices` (int member). */
#define KD_PARAM_AT_INDEX(T, m) (offsetof(T, m) + 1), 1, KD_PARAM_ROLE_NONE
/* an INT row stored into an int member (the value range must fit) */
#define KD_PARAM_AT_INT(T, m) (offsetof(T, m) + 1), 1, KD_PARAM_ROLE_NONE
/** Last initialisers of a spec row whose value kd_params_fill does not store. */
#define KD_PARAM_NONE 0, 0, KD_PARAM_ROLE_NONE
/** The output size: key n_out, an integer, default 64, in [lo, hi] (hi: what the algorithm can
 *  hold), stored in the int64_t member m of T. The harness checks it against the input rows for
 *  an algorithm with KD_ALGO_N_OUT (kd_algo_run), so the algorithm does not. */
#define KD_PARAM_N_OUT(T, m, lo, hi, doc)                                        \
  {                                                                              \
    "n_out", KD_PARAM_INT, 64, NULL, lo, hi, NULL, doc, (offsetof(T, m) + 1), 0, \
        KD_PARAM_ROLE_N_OUT                                                      \
  }
/** Compress's oversampling: key g, an integer in [lo, 30] with default def, stored in the int64_t
 *  member m of T. */
#define KD_PARAM_G(T, m, def, lo, doc) \
  { "g", KD_PARAM_INT, def, NULL, lo, 30, NULL, doc, (offsetof(T, m) + 1), 0, KD_PARAM_ROLE_G }

typedef struct {
  int64_t i;
  double f;
  const char *s; /* owned by the kd_params */
  int b;
} kd_param_val;

typedef struct {
  const kd_param_spec *spec;
  int n;
  kd_param_val *v; /* n values, in spec order */
} kd_params;

/** Fill p with the defaults of spec[0..n). Local. Free with kd_params_free. */
kd_err kd_params_defaults(const kd_param_spec *spec, int n, kd_params *p);
void kd_params_free(kd_params *p);
/** Copy every value of p whose spec row has an offset into the typed struct `out` (members not
 *  named by any row are left as they are: zero-initialise `out` first). Strings are borrowed from
 *  p (valid until kd_params_free). Local.
 *  @param[in]  p    filled parameters (kd_params_defaults / the config layer); borrowed.
 *  @param[out] out  the caller's struct of the type the offsets refer to.
 *  @return KD_OK; KD_ERR_CONFIG when an as_index value is not one of the row's choices. */
kd_err kd_params_fill(const kd_params *p, void *out);
/** Typed lookups; aborting KD_ASSERT if the key is not declared (a programming error). Local.
 *  Prefer kd_params_fill inside algorithms. */
int64_t kd_params_int(const kd_params *p, const char *key);
double kd_params_f64(const kd_params *p, const char *key);
const char *kd_params_str(const kd_params *p, const char *key);
int kd_params_bool(const kd_params *p, const char *key);
/** The position of p's integer row with the given role (kd_param_role), its value into *value;
 *  -1 (*value untouched) if p has no such row. Local. */
int kd_params_role_i64(const kd_params *p, kd_param_role role, int64_t *value);
/** Set a typed value with the row's range / choice checks; on error the message names `ctx`
 *  (e.g. "algorithm.n_out"). The key must be declared with that type (KD_ASSERT otherwise: a
 *  programming error). Use these where the library hands a value to another algorithm's table
 *  (a composite algorithm running a stage), never text. Local. */
kd_err kd_params_set_i64(kd_params *p, const char *key, int64_t x, const char *ctx);
kd_err kd_params_set_f64(kd_params *p, const char *key, double x, const char *ctx);
kd_err kd_params_set_bool(kd_params *p, const char *key, int b, const char *ctx);
kd_err kd_params_set_str(kd_params *p, const char *key, const char *s, const char *ctx);
/** Set a value from the user's text (a config scalar) with type/range/choice checks; on error the
 *  message names `ctx` (e.g. "run.yaml:12: algorithm.J"). Local. */
kd_err kd_params_set_text(kd_params *p, const char *key, const char *text, const char *ctx);

#ifdef __cplusplus
}
#endif
#endif
