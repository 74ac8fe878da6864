/* test_spec.c - the typed C user API (kdistill/kd_spec.h) at 1, 2 and 4 ranks:
 *   - a thinning job built from typed settings with in-memory rows gives the coreset (points,
 *     weights, rows, MMD) of the same job written as YAML text, bit for bit, and the same coreset
 *     on MPI_COMM_SELF (rank invariance);
 *   - list settings (a mixture target's means and weights) equal their YAML form;
 *   - settings override a configuration given beside the spec;
 *   - a bad setting (not finite, a key below a value, a malformed key) fails at once and makes the
 *     job fail with its message and key; an unknown key or a value out of range fails the job
 *     with a message naming kd_spec and the key (kd_ctx_error_key). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"

enum { N = 2048, D = 2 };

static double *g_rows;
static kd_data_array g_arr;

/* this rank's block of a deterministic N x D sample (row i the same at any rank count) */
static void make_rows(MPI_Comm comm) {
  int r = 0, p = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  const int64_t lo = (int64_t)N * r / p, hi = (int64_t)N * (r + 1) / p;
  free(g_rows);
  g_rows = malloc((size_t)(hi - lo + 1) * D * sizeof *g_rows);
  for (int64_t i = lo; i < hi; i++) {
    const double t = 0.61803398874989485 * (double)i;
    g_rows[(i - lo) * D] = sin(t) * (1.0 + 0.001 * (double)i);
    g_rows[(i - lo) * D + 1] = cos(2.3 * t);
  }
  g_arr = (kd_data_array){"X", g_rows, hi - lo, D, KD_DTYPE_F64, D, 1};
}

static const char kThinText[] =
    "task: thin\n"
    "data: {type: memory, name: X}\n"
    "kernel: {name: gaussian, ls: 0.7}\n"
    "algorithm: {name: kt_compress, n_out: 32, g: 3}\n"
    "run: {seed: 11}\n";

static kd_spec *thin_spec(void) {
  kd_spec *s = NULL;
  KD_TEST_OK(kd_spec_create("thin", &s));
  KD_TEST_OK(kd_spec_set_text(s, "data.type", "memory"));
  KD_TEST_OK(kd_spec_set_text(s, "data.name", "X"));
  KD_TEST_OK(kd_spec_set_text(s, "kernel.name", "gaussian"));
  KD_TEST_OK(kd_spec_set_real(s, "kernel.ls", 0.7));
  KD_TEST_OK(kd_spec_set_text(s, "algorithm.name", "kt_compress"));
  KD_TEST_OK(kd_spec_set_int(s, "algorithm.n_out", 32));
  KD_TEST_OK(kd_spec_set_int(s, "algorithm.g", 3));
  KD_TEST_OK(kd_spec_set_int(s, "run.seed", 11));
  return s;
}

static int same_result(const kd_result *a, const kd_result *b) {
  if (a->n != b->n || a->d != b->d || a->n <= 0) return 0;
  return !memcmp(a->points, b->points, (size_t)a->n * a->d * sizeof(double)) &&
         !memcmp(a->weights, b->weights, (size_t)a->n * sizeof(double)) &&
         !memcmp(a->indices, b->indices, (size_t)a->n * sizeof(int64_t)) &&
         !memcmp(&a->mmd, &b->mmd, sizeof a->mmd);
}

static void check_same_as_text(kd_ctx *w, kd_ctx *self) {
  kd_spec *s = thin_spec();
  kd_result rs = KD_RESULT_INIT, rt = KD_RESULT_INIT, r1 = KD_RESULT_INIT;
  kd_job_summary sum;
  make_rows(MPI_COMM_WORLD);
  kd_job_opts os = {.spec = s, .arrays = &g_arr, .n_arrays = 1, .no_output = 1};
  kd_job_opts ot = {.config = "thin.yaml",
                    .config_text = kThinText,
                    .arrays = &g_arr,
                    .n_arrays = 1,
                    .no_output = 1};
  KD_TEST(kd_job_run(w, &os, &sum, &rs) == KD_OK, "spec run: %s", kd_ctx_message(w));
  KD_TEST(sum.n == 32 && sum.mmd_method == 0 && sum.mmd > 0 && sum.mmd < 0.1,
          "spec run: n %lld mmd %g method %d", (long long)sum.n, sum.mmd, sum.mmd_method);
  KD_TEST(kd_job_run(w, &ot, NULL, &rt) == KD_OK, "text run: %s", kd_ctx_message(w));
  KD_TEST(same_result(&rs, &rt), "the spec's coreset is the YAML text's, bit for bit");
  /* every row on one rank: the same coreset */
  make_rows(MPI_COMM_SELF);
  os.arrays = &g_arr;
  KD_TEST(kd_job_run(self, &os, NULL, &r1) == KD_OK, "self run: %s", kd_ctx_message(self));
  KD_TEST(same_result(&rs, &r1), "the same coreset on MPI_COMM_SELF");
  kd_result_free(&rs);
  kd_result_free(&rt);
  kd_result_free(&r1);
  kd_spec_destroy(&s);
  KD_TEST(s == NULL, "destroy clears the pointer");
  kd_spec_destroy(&s); /* accepts NULL */
}

/* a quadrature rule for a mixture target: the means and weights as typed lists */
static void check_lists(kd_ctx *w) {
  static const char text[] =
      "task: quad\n"
      "target: {type: gaussian_mixture, d: 2, means: [[0, 0], [2.5, -1]],\n"
      "         sds: [[1, 1], [0.5, 0.75]], weights: [0.25, 0.75]}\n"
      "kernel: {name: gaussian, ls: 1.5}\n"
      "algorithm: {name: nystrom_recombination, n: 12, opt: convex}\n"
      "run: {seed: 3}\n";
  const double means[4] = {0, 0, 2.5, -1}, sds[4] = {1, 1, 0.5, 0.75}, wts[2] = {0.25, 0.75};
  kd_spec *s = NULL;
  kd_result a = KD_RESULT_INIT, b = KD_RESULT_INIT;
  KD_TEST_OK(kd_spec_create("quad", &s));
  KD_TEST_OK(kd_spec_set_text(s, "target.type", "gaussian_mixture"));
  KD_TEST_OK(kd_spec_set_int(s, "target.d", 2));
  KD_TEST_OK(kd_spec_set_reals(s, "target.means", means, 2, 2));
  KD_TEST_OK(kd_spec_set_reals(s, "target.sds", sds, 2, 2));
  KD_TEST_OK(kd_spec_set_reals(s, "target.weights", wts, 2, 0));
  KD_TEST_OK(kd_spec_set_text(s, "kernel.name", "gaussian"));
  KD_TEST_OK(kd_spec_set_real(s, "kernel.ls", 1.5));
  KD_TEST_OK(kd_spec_set_text(s, "algorithm.name", "nystrom_recombination"));
  KD_TEST_OK(kd_spec_set_int(s, "algorithm.n", 12));
  KD_TEST_OK(kd_spec_set_text(s, "algorithm.opt", "convex"));
  KD_TEST_OK(kd_spec_set_int(s, "run.seed", 3));
  kd_job_opts os = {.spec = s, .no_output = 1};
  kd_job_opts ot = {.config = "quad.yaml", .config_text = text, .no_output = 1};
  KD_TEST(kd_job_run(w, &os, NULL, &a) == KD_OK, "quad spec run: %s", kd_ctx_message(w));
  KD_TEST(kd_job_run(w, &ot, NULL, &b) == KD_OK, "quad text run: %s", kd_ctx_message(w));
  KD_TEST(same_result(&a, &b), "typed lists give the YAML lists' rule, bit for bit");
  KD_TEST(kd_spec_set_reals(s, "target.sds", sds, 0, 2) == KD_ERR_ARG, "0 rows refused");
  kd_result_free(&a);
  kd_result_free(&b);
  kd_spec_destroy(&s);
}

static void check_override(kd_ctx *w) {
  kd_spec *s = NULL;
  kd_job_summary sum = {0};
  make_rows(MPI_COMM_WORLD);
  KD_TEST_OK(kd_spec_create(NULL, &s));
  KD_TEST_OK(kd_spec_set_int(s, "algorithm.n_out", 16));
  kd_job_opts o = {.config = "thin.yaml",
                   .config_text = kThinText,
                   .arrays = &g_arr,
                   .n_arrays = 1,
                   .no_output = 1,
                   .spec = s};
  const kd_err e = kd_job_run(w, &o, &sum, NULL);
  KD_TEST(e == KD_OK && sum.n == 16, "the spec overrides the text's n_out 32: n %lld %s",
          (long long)sum.n, kd_ctx_message(w));
  kd_spec_destroy(&s);
}

static void check_errors(kd_ctx *w) {
  kd_spec *s = thin_spec();
  make_rows(MPI_COMM_WORLD);
  kd_job_opts o = {.spec = s, .arrays = &g_arr, .n_arrays = 1, .no_output = 1};
  /* unknown key: named as the spec's, with the key */
  KD_TEST_OK(kd_spec_set_int(s, "algorithm.n_outt", 3));
  KD_TEST(kd_job_run(w, &o, NULL, NULL) == KD_ERR_CONFIG && strstr(kd_ctx_message(w), "kd_spec") &&
              !strcmp(kd_ctx_error_key(w), "algorithm.n_outt"),
          "unknown key: '%s' key '%s'", kd_ctx_message(w), kd_ctx_error_key(w));
  kd_spec_destroy(&s);
  s = thin_spec();
  o.spec = s;
  KD_TEST_OK(kd_spec_set_int(s, "algorithm.n_out", 4096));
  KD_TEST(kd_job_run(w, &o, NULL, NULL) == KD_ERR_CONFIG &&
              !strcmp(kd_ctx_error_key(w), "algorithm.n_out"),
          "n_out > n: '%s' key '%s'", kd_ctx_message(w), kd_ctx_error_key(w));
  kd_spec_destroy(&s);
  /* bad settings fail at once; the job then fails with the first one's message and key */
  s = thin_spec();
  o.spec = s;
  KD_TEST(kd_spec_set_real(s, "kernel.ls", NAN) == KD_ERR_ARG, "NaN refused at once");
  KD_TEST(kd_spec_set_int(s, "kernel.ls.x", 1) == KD_ERR_CONFIG, "a key below a value refused");
  KD_TEST(kd_spec_set_int(s, "bad key", 1) == KD_ERR_ARG, "a malformed key refused");
  KD_TEST(kd_spec_set_text(s, "data.name", NULL) == KD_ERR_ARG, "NULL text refused");
  KD_TEST(kd_job_run(w, &o, NULL, NULL) == KD_ERR_ARG &&
              strstr(kd_ctx_message(w), "kernel.ls: nan is not a finite number") &&
              !strcmp(kd_ctx_error_key(w), "kernel.ls"),
          "the first bad setting fails the job: '%s' key '%s'", kd_ctx_message(w),
          kd_ctx_error_key(w));
  kd_spec_destroy(&s);
  /* the spec's own name in messages */
  s = thin_spec();
  o.spec = s;
  KD_TEST_OK(kd_spec_set_name(s, "<prog>"));
  KD_TEST(kd_spec_set_name(s, "") == KD_ERR_ARG, "empty name refused");
  KD_TEST_OK(kd_spec_set_int(s, "algorithm.n_out", 4096));
  KD_TEST(kd_job_run(w, &o, NULL, NULL) == KD_ERR_CONFIG &&
              !strcmp(kd_ctx_message(w),
                      "<prog>: algorithm.n_out = 4096 exceeds the 2048 input points"),
          "named spec: '%s'", kd_ctx_message(w));
  kd_spec_destroy(&s);
  KD_TEST(kd_spec_create("", &s) == KD_ERR_ARG && s == NULL, "empty task name refused");
  kd_job_opts none = {.no_output = 1};
  KD_TEST(kd_job_run(w, &none, NULL, NULL) == KD_ERR_ARG, "no config and no spec: %s",
          kd_ctx_message(w));
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  kd_ctx *w = NULL, *self = NULL;
  KD_TEST_OK(kd_ctx_create(MPI_COMM_WORLD, &w));
  KD_TEST_OK(kd_ctx_create(MPI_COMM_SELF, &self));
  kd_ctx_set_log_level(w, KD_LOG_QUIET);
  kd_ctx_set_log_level(self, KD_LOG_QUIET);
  check_same_as_text(w, self);
  check_lists(w);
  check_override(w);
  check_errors(w);
  kd_ctx_destroy(&self);
  kd_ctx_destroy(&w);
  free(g_rows);
  return kd_test_finish();
}
