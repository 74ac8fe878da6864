/* log.c - rank-0 logging to stderr, one line per progress step. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "kdistill/kd_types.h"

static int kd_log_rank_ = 0;
static kd_log_level kd_log_level_ = KD_LOG_NORMAL;
static double kd_log_t0_ = 0.0;
static double kd_log_interval_ = 1.0;
static double kd_log_last_ = -1e300;
static int64_t kd_log_total_ = 0;
static double kd_log_phase_t0_ = 0.0;
static int64_t kd_log_done_ = 0; /* iterations done before this phase's clock started (resume) */

void kd_log_init(MPI_Comm comm, kd_log_level level) {
  if (MPI_Comm_rank(comm, &kd_log_rank_) != MPI_SUCCESS) kd_log_rank_ = 0;
  kd_log_level_ = level;
  kd_log_t0_ = MPI_Wtime();
  kd_log_last_ = -1e300;
}

kd_log_level kd_log_get_level(void) { return kd_log_level_; }

double kd_log_elapsed(void) { return MPI_Wtime() - kd_log_t0_; }

void kd_log_set_interval(double seconds) { kd_log_interval_ = seconds; }

void kd_log_set_total(int64_t total) { kd_log_set_total_from(total, 0); }

void kd_log_set_total_from(int64_t total, int64_t done) {
  kd_log_total_ = total;
  kd_log_done_ = done;
  kd_log_phase_t0_ = kd_log_elapsed();
}

static void kd_log_v_(kd_log_level min, const char *prefix, const char *fmt, va_list ap) {
  if (kd_log_rank_ != 0 || kd_log_level_ < min) return;
  fputs(prefix, stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  fflush(stderr);
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
  if (kd_log_rank_ != 0 || kd_log_level_ < KD_LOG_NORMAL) return;
  double now = kd_log_elapsed();
  if (!force && now - kd_log_last_ < kd_log_interval_) return;
  kd_log_last_ = now;
  char eta[48] = "";
  if (kd_log_total_ > 0 && iter > kd_log_done_ && iter < kd_log_total_)
    snprintf(
        eta, sizeof eta, "  eta <= %.1f s",
        (now - kd_log_phase_t0_) * (double)(kd_log_total_ - iter) / (double)(iter - kd_log_done_));
  char m[40] = ""; /* no MMD known at this step (tree levels, replicates): left out */
  if (!isnan(mmd)) snprintf(m, sizeof m, "  mmd %.6e", mmd);
  fprintf(stderr, "kdistill: [%s] iter %lld%s  atoms %lld  elapsed %.2f s%s\n", phase,
          (long long)iter, m, (long long)atoms, now, eta);
  fflush(stderr);
}
