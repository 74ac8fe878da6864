/* log.c - logging on the bound context (kd_ctx_bind): rank 0 of its communicator formats one line
 * per call and hands it to the context's sink (default: stderr, flushed). Silent when no context
 * is bound. Progress lines are rate-limited per context. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctx_impl.h"

void kd_log_init(MPI_Comm comm, kd_log_level level) {
  kd_ctx *c = kd_ctx_current();
  (void)comm; /* the rank is the bound context's */
  if (!c) return;
  c->level = level;
  c->t0 = MPI_Wtime();
  c->log_last = -1e300;
}

kd_log_level kd_log_get_level(void) { return kd_ctx_log_level(kd_ctx_current()); }

double kd_log_elapsed(void) { return kd_ctx_elapsed(kd_ctx_current()); }

void kd_log_set_interval(double seconds) { kd_ctx_set_log_interval(kd_ctx_current(), seconds); }

void kd_log_set_total(int64_t total) { kd_log_set_total_from(total, 0); }

void kd_log_set_total_from(int64_t total, int64_t done) {
  kd_ctx *c = kd_ctx_current();
  if (!c) return;
  c->log_total = total;
  c->log_done = done;
  c->log_phase_t0 = kd_ctx_elapsed(c);
}

/* The context that would print a line of level min, or NULL. */
static kd_ctx *kd_log_ctx_(kd_log_level min) {
  kd_ctx *c = kd_ctx_current();
  return (c && c->rank == 0 && c->level >= min) ? c : NULL;
}

static void kd_log_emit_(kd_ctx *c, kd_log_level level, const char *line) {
  if (c->sink) {
    c->sink(c->sink_user, level, line);
    return;
  }
  /* the line and its newline in one fwrite, i.e. one write to the unbuffered stderr: under mpirun
   * another stream's output (stdout) cannot land between them */
  const size_t len = strlen(line);
  char small[1024], *buf = len < sizeof small ? small : malloc(len + 1);
  if (buf) {
    memcpy(buf, line, len);
    buf[len] = '\n';
    fwrite(buf, 1, len + 1, stderr);
    if (buf != small) free(buf);
  } else {
    fputs(line, stderr);
    fputc('\n', stderr);
  }
  fflush(stderr);
}

static void kd_log_v_(kd_log_level min, const char *prefix, const char *fmt, va_list ap) {
  kd_ctx *c = kd_log_ctx_(min);
  char small[1024], *line = small, *big = NULL;
  if (!c) return;
  va_list ap2;
  va_copy(ap2, ap);
  int n = snprintf(small, sizeof small, "%s", prefix);
  int m = vsnprintf(small + n, sizeof small - (size_t)n, fmt, ap);
  if (m >= 0 && (size_t)(n + m) >= sizeof small) { /* a long line: format it again, whole */
    big = malloc((size_t)(n + m) + 1);
    if (big) {
      snprintf(big, (size_t)n + 1, "%s", prefix);
      vsnprintf(big + n, (size_t)m + 1, fmt, ap2);
      line = big;
    }
  }
  va_end(ap2);
  kd_log_emit_(c, min, line);
  free(big);
}

void kd_log_info(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  kd_log_v_(KD_LOG_NORMAL, "kdistill: ", fmt, ap);
  va_end(ap);
}

void kd_log_verbose(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  kd_log_v_(KD_LOG_VERBOSE, "kdistill: ", fmt, ap);
  va_end(ap);
}

void kd_log_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  kd_log_v_(KD_LOG_NORMAL, "kdistill: warning: ", fmt, ap);
  va_end(ap);
}

void kd_log_progress(const char *phase, int64_t iter, double mmd, int64_t atoms, int force) {
  kd_ctx *c = kd_log_ctx_(KD_LOG_NORMAL);
  if (!c) return;
  double now = kd_ctx_elapsed(c);
  if (!force && now - c->log_last < c->log_interval) return;
  c->log_last = now;
  char eta[48] = ""; /* the mean time per step so far times the steps left: not a bound (a
                      * thinning step can cost more than those before it) */
  if (c->log_total > 0 && iter > c->log_done && iter < c->log_total)
    snprintf(
        eta, sizeof eta, "  eta ~ %.1f s (estimate)",
        (now - c->log_phase_t0) * (double)(c->log_total - iter) / (double)(iter - c->log_done));
  char m[40] = ""; /* no MMD known at this step (tree levels, replicates): left out */
  if (!isnan(mmd)) snprintf(m, sizeof m, "  mmd %.6e", mmd);
  char line[512];
  snprintf(line, sizeof line, "kdistill: [%s] iter %lld%s  atoms %lld  elapsed %.2f s%s", phase,
           (long long)iter, m, (long long)atoms, now, eta);
  kd_log_emit_(c, KD_LOG_NORMAL, line);
}

void kd_log_fraction(const char *phase, double done, double total, const char *unit, double t0,
                     double *last) {
  kd_ctx *c = kd_log_ctx_(KD_LOG_NORMAL);
  if (!c || total <= 0) return;
  const double now = kd_ctx_elapsed(c);
  if (now - *last < (c->log_interval > 0 ? c->log_interval : 1.0)) return;
  *last = now;
  char line[512], eta[48] = "";
  if (done > 0 && done < total)
    snprintf(eta, sizeof eta, ", eta %.1f s", (now - t0) * (total - done) / done);
  snprintf(line, sizeof line, "kdistill: [%s] %.1f%% of %.3g %s, elapsed %.2f s%s", phase,
           100.0 * done / total, total, unit, now, eta);
  kd_log_emit_(c, KD_LOG_NORMAL, line);
}
