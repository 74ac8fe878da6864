/* kd_check.h - (author tier) recording errors and the checking macros used everywhere in the
 * library.
 *
 * Convention in every fallible function:
 *
 *   kd_err f(...) {
 *     kd_err err = KD_OK;
 *     double *buf = NULL;            // owned resources start NULL / -1
 *     KD_TRY(g(...));                // propagate
 *     KD_CHECK(n > 0, KD_ERR_INPUT, "data: n must be > 0, got %ld", n);
 *   cleanup:
 *     free(buf);                     // destroy unconditionally
 *     return err;
 *   }
 */
#ifndef KDISTILL_KD_CHECK_H
#define KDISTILL_KD_CHECK_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../kd_err.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Record a formatted message for code on the bound context (kd_ctx.h; the first message since
 *  kd_err_clear wins) and return code. Without a bound context the message is dropped and code is
 *  still returned. Local. Used through KD_CHECK; call directly only when no goto is wanted. */
kd_err kd_err_set(kd_err code, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/** kd_err_set that also records the configuration key the error is about ("algorithm.n_out"),
 *  so the task layer can point at the key's file and line (kd_err_key) without reading it back
 *  out of the text. Used through KD_CHECK_KEY / KD_FAIL_KEY. Local. */
kd_err kd_err_set_key(kd_err code, const char *key, const char *file, int line, const char *fmt,
                      ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/** The key recorded with the bound context's message ("" if none). Local. */
const char *kd_err_key(void);
/** Replace the recorded key (kd_dist_agree installs the failing rank's). Local. */
void kd_err_put_key(const char *key);
/** For an unknown key: record the keys its section used (", " between) with the message, if the
 *  recorded key is key (the first message wins, so a list never joins another error's message).
 *  The user tier reads them one by one (kd_ctx_error_known). Local. */
void kd_err_set_known(const char *key, const char *known);
/** The list kd_err_set_known recorded ("" if none). Local. */
const char *kd_err_known(void);
/** Message recorded on the bound context ("" if none or no context). Local; the string is owned
 *  by the context. */
const char *kd_err_message(void);
/** Replace the bound context's message (used by kd_dist_agree to install the failing rank's
 *  text). Local. */
void kd_err_set_message(const char *msg);
/** Forget the bound context's message. Local. */
void kd_err_clear(void);
/** Record an MPI failure with MPI_Error_string text; returns KD_ERR_MPI. Local. */
kd_err kd_err_set_mpi(int mpi_code, const char *file, int line, const char *what);

#define KD_TRY(expr)           \
  do {                         \
    kd_err kd_try_e_ = (expr); \
    if (kd_try_e_ != KD_OK) {  \
      err = kd_try_e_;         \
      goto cleanup;            \
    }                          \
  } while (0)

#define KD_CHECK(cond, code, ...)                                \
  do {                                                           \
    if (!(cond)) {                                               \
      err = kd_err_set((code), __FILE__, __LINE__, __VA_ARGS__); \
      goto cleanup;                                              \
    }                                                            \
  } while (0)

/** KD_CHECK whose message is about the configuration key `key` (kd_err_set_key). */
#define KD_CHECK_KEY(cond, code, key, ...)                                  \
  do {                                                                      \
    if (!(cond)) {                                                          \
      err = kd_err_set_key((code), (key), __FILE__, __LINE__, __VA_ARGS__); \
      goto cleanup;                                                         \
    }                                                                       \
  } while (0)

/** Jump to cleanup with code and message (unconditional KD_CHECK). */
#define KD_FAIL_KEY(code, key, ...)                                       \
  do {                                                                    \
    err = kd_err_set_key((code), (key), __FILE__, __LINE__, __VA_ARGS__); \
    goto cleanup;                                                         \
  } while (0)
#define KD_FAIL(code, ...)                                     \
  do {                                                         \
    err = kd_err_set((code), __FILE__, __LINE__, __VA_ARGS__); \
    goto cleanup;                                              \
  } while (0)

#define KD_MPI(call)                                               \
  do {                                                             \
    int kd_mpi_rc_ = (call);                                       \
    if (kd_mpi_rc_ != MPI_SUCCESS) {                               \
      err = kd_err_set_mpi(kd_mpi_rc_, __FILE__, __LINE__, #call); \
      goto cleanup;                                                \
    }                                                              \
  } while (0)

/** ScaLAPACK/LAPACK info check. */
#define KD_LA(info)                                                                               \
  do {                                                                                            \
    int kd_la_info_ = (int)(info);                                                                \
    if (kd_la_info_ != 0) {                                                                       \
      err = kd_err_set(KD_ERR_LA, __FILE__, __LINE__, "%s returned info=%d", #info, kd_la_info_); \
      goto cleanup;                                                                               \
    }                                                                                             \
  } while (0)

/** Allocate n elements of *ptr's type, zeroed; fails with KD_ERR_MEM naming what was being
 *  allocated (the expression ptr). n may be 0 (allocates 1). */
#define KD_ALLOC(ptr, n)                                                                      \
  do {                                                                                        \
    size_t kd_alloc_n_ = (size_t)(n);                                                         \
    (ptr) = calloc(kd_alloc_n_ ? kd_alloc_n_ : 1, sizeof(*(ptr)));                            \
    if (!(ptr)) {                                                                             \
      err = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,                                        \
                       "cannot allocate %zu x %zu bytes for %s (try more ranks or a smaller " \
                       "problem)",                                                            \
                       kd_alloc_n_, sizeof(*(ptr)), #ptr);                                    \
      goto cleanup;                                                                           \
    }                                                                                         \
  } while (0)

/** Overflow-checked size: *out = a * b * elem bytes (a, b >= 0). Returns 0 when the product does
 *  not fit in size_t or exceeds KD_SIZE_MAX_BYTES (2^60: more than any machine holds, so that
 *  sums of a few such sizes cannot wrap either), non-zero otherwise. Local. */
#define KD_SIZE_MAX_BYTES ((uint64_t)1 << 60)
static inline int kd_size_ok(int64_t a, int64_t b, size_t elem, size_t *out) {
  if (a < 0 || b < 0) return 0;
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b, ue = (uint64_t)elem, lim = KD_SIZE_MAX_BYTES;
  if (ua && ub > lim / ua) return 0;
  uint64_t ab = ua * ub;
  if (ue && ab > lim / ue) return 0;
  if (out) *out = (size_t)(ab * ue);
  return 1;
}

/** Debug assertion: aborts all ranks (never for user errors). */
#define KD_ASSERT(cond)                                       \
  do {                                                        \
    if (!(cond)) kd_abort_assert_(#cond, __FILE__, __LINE__); \
  } while (0)
void kd_abort_assert_(const char *what, const char *file, int line);

#ifdef __cplusplus
}
#endif
#endif
