/* kd_test.c - see kd_test.h. */
#include "kd_test.h"

#include <stdarg.h>
#include <stdlib.h>

#include "la/la_impl.h"

static long kd_test_pass_ = 0, kd_test_fail_ = 0;
static int kd_test_rank_ = 0, kd_test_size_ = 1;
static kd_ctx *kd_test_ctx_ = NULL;

void kd_test_init(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &kd_test_rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &kd_test_size_);
  if (kd_ctx_create(MPI_COMM_WORLD, &kd_test_ctx_) != KD_OK) {
    fprintf(stderr, "kd_test_init: cannot create the test context\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  kd_ctx_set_log_level(kd_test_ctx_, KD_LOG_QUIET);
  kd_ctx_bind(kd_test_ctx_);
  kd_la_single_thread();
}

int kd_test_rank(void) { return kd_test_rank_; }
int kd_test_size(void) { return kd_test_size_; }
kd_ctx *kd_test_ctx(void) { return kd_test_ctx_; }

int kd_test_check_(int cond, const char *expr, const char *file, int line, const char *fmt, ...) {
  if (cond) {
    kd_test_pass_++;
    return 1;
  }
  kd_test_fail_++;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL [rank %d] %s:%d: %s: ", kd_test_rank_, file, line, expr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 0;
}

int kd_test_finish(void) {
  long c[2] = {kd_test_pass_, kd_test_fail_};
  MPI_Allreduce(MPI_IN_PLACE, c, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (kd_test_rank_ == 0) printf("%ld passed, %ld failed\n", c[0], c[1]);
  kd_ctx_unbind(NULL);
  kd_ctx_destroy(&kd_test_ctx_);
  MPI_Finalize();
  return c[1] == 0 && c[0] > 0 ? 0 : 1;
}

kd_kernel *kd_test_gaussian(int d, double ls) {
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  p.ls = ls;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, d, &k));
  return k;
}

kd_pointset *kd_test_mixture_target(MPI_Comm c, kd_gidx N, int d, uint64_t seed, int wmod,
                                    double *Y, double *v) {
  static const double m1[3] = {1.5, -1.0, 0.5}, s1[3] = {0.4, 0.8, 0.5};
  double *means = calloc((size_t)2 * d, sizeof(double)),
         *sds = calloc((size_t)2 * d, sizeof(double));
  double mw[2] = {0.6, 0.4};
  for (int j = 0; j < d; j++) {
    sds[j] = 0.6;
    means[d + j] = m1[j % 3];
    sds[d + j] = s1[j % 3];
  }
  kd_measure mu = {0};
  mu.type = KD_MEASURE_GAUSSIAN_MIXTURE;
  mu.d = d;
  mu.n_comp = 2;
  mu.means = means;
  mu.sds = sds;
  mu.mix_w = mw;
  kd_pointset *ps = NULL;
  KD_TEST_OK(kd_pointset_generate(c, &mu, N, seed, &ps));
  KD_TEST_OK(kd_measure_sample(&mu, seed, 0, N, Y));
  double s = 0;
  for (kd_gidx g = 0; g < N; g++) s += (v[g] = wmod > 0 ? 1.0 + (double)(g % wmod) : 1.0);
  for (kd_gidx g = 0; g < N; g++) v[g] /= s;
  if (wmod > 0) {
    kd_lidx nl = kd_pointset_n_local(ps);
    kd_gidx off = kd_pointset_offset(ps);
    double *wl = malloc(sizeof(double) * (nl + 1));
    for (kd_lidx i = 0; i < nl; i++) wl[i] = 1.0 + (double)((off + i) % wmod);
    KD_TEST_OK(kd_pointset_set_weights(ps, wl));
    free(wl);
  }
  free(means);
  free(sds);
  return ps;
}
