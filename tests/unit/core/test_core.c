/* test_core.c - error table, RNG statistics and determinism, parameter tables. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "kd_test.h"

/* the typed struct kd_params_fill writes (mode twice: as a string and as its choice index) */
typedef struct {
  double J;
  int64_t max_iter;
  const char *mode;
  int mode_index, flag;
} test_params;

static const kd_param_spec spec[] = {
    {"J", KD_PARAM_F64, 2.0, NULL, 1.0, 1e9, NULL, "accuracy", KD_PARAM_AT(test_params, J)},
    {"max_iter", KD_PARAM_INT, 100, NULL, 1, 1e6, NULL, "iterations",
     KD_PARAM_AT(test_params, max_iter)},
    {"mode", KD_PARAM_STR, 0, "a", 0, 0, "a|b", "mode", KD_PARAM_AT(test_params, mode)},
    {"flag", KD_PARAM_BOOL, 1, NULL, 0, 1, NULL, "flag", KD_PARAM_AT(test_params, flag)},
    {"mode2", KD_PARAM_STR, 0, "b", 0, 0, "a|b", "mode as an index",
     KD_PARAM_AT_INDEX(test_params, mode_index)},
    {"unstored", KD_PARAM_INT, 7, NULL, 0, 9, NULL, "not in the struct", KD_PARAM_NONE},
};

/* The output-size row is found by its role, whatever its key, and checked against the input rows
 * for an algorithm with KD_ALGO_N_OUT only. */
typedef struct {
  int64_t size, g;
} shared_params;

static kd_err never_run(const kd_algo_in *in, kd_result *out) {
  (void)in;
  (void)out;
  return KD_ERR_INTERNAL;
}

static void check_shared_rows(void) {
  static const kd_param_spec rows[] = {
      KD_PARAM_G(shared_params, g, 2, 0, "oversampling"),
      {"size", KD_PARAM_INT, 8, NULL, 1, 100, NULL, "an output size under another key",
       (offsetof(shared_params, size) + 1), 0, KD_PARAM_ROLE_N_OUT},
  };
  kd_algo_desc desc;
  memset(&desc, 0, sizeof desc);
  desc.name = "shared_rows_test";
  desc.run = never_run;
  desc.flags = KD_ALGO_N_OUT;
  kd_params p;
  int64_t v = 0;
  KD_TEST_OK(kd_params_defaults(rows, 2, &p));
  KD_TEST(kd_params_role_i64(&p, KD_PARAM_ROLE_N_OUT, &v) == 1 && v == 8, "n_out row by role");
  KD_TEST(kd_params_role_i64(&p, KD_PARAM_ROLE_G, &v) == 0 && v == 2, "g row by role");
  KD_TEST_OK(kd_params_set_i64(&p, "size", 50, "algorithm.size"));
  KD_TEST_OK(kd_algo_check_n_out(&desc, &p, 50));
  KD_TEST(kd_algo_check_n_out(&desc, &p, 49) == KD_ERR_CONFIG &&
              !strcmp(kd_err_message(), "algorithm.size = 50 exceeds the 49 input points") &&
              !strcmp(kd_err_key(), "algorithm.size"),
          "checked by role: '%s' key '%s'", kd_err_message(), kd_err_key());
  kd_err_clear();
  desc.flags = 0;
  KD_TEST_OK(kd_algo_check_n_out(&desc, &p, 49)); /* no KD_ALGO_N_OUT: not checked */
  kd_params_free(&p);
  static const kd_param_spec plain[] = {
      {"n_out", KD_PARAM_INT, 8, NULL, 1, 100, NULL, "a row named n_out without the role",
       KD_PARAM_AT(shared_params, size)},
  };
  KD_TEST_OK(kd_params_defaults(plain, 1, &p));
  KD_TEST(kd_params_role_i64(&p, KD_PARAM_ROLE_N_OUT, &v) == -1, "the name alone is no role");
  kd_params_free(&p);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  KD_TEST(kd_err_exit_status(KD_ERR_CONFIG) == 1, "config errors exit 1");
  KD_TEST(kd_err_exit_status(KD_ERR_MPI) == 2, "MPI errors exit 2");
  KD_TEST(strcmp(kd_err_string(KD_OK), "success") == 0, "OK message");
  /* first message wins until cleared */
  kd_err_clear();
  kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__, "first %d", 1);
  kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__, "second");
  KD_TEST(strcmp(kd_err_message(), "first 1") == 0, "message '%s'", kd_err_message());
  kd_err_clear();

  /* RNG: pure function of the key; uniform mean/variance and normal moments */
  KD_TEST(kd_rng_u64(1, 2, 3) == kd_rng_u64(1, 2, 3), "deterministic");
  KD_TEST(kd_rng_u64(1, 2, 3) != kd_rng_u64(1, 2, 4), "counter matters");
  KD_TEST(kd_rng_u64(1, 2, 3) != kd_rng_u64(2, 2, 3), "seed matters");
  KD_TEST(kd_rng_u64(1, 2, 3) != kd_rng_u64(1, 3, 3), "stream matters");
  const int N = 200000;
  double s = 0, s2 = 0, n1 = 0, n2 = 0, n4 = 0;
  for (int i = 0; i < N; i++) {
    double u = kd_rng_uniform(42, 0, (uint64_t)i);
    s += u;
    s2 += u * u;
    double z = kd_rng_normal(42, 1, (uint64_t)i);
    n1 += z;
    n2 += z * z;
    n4 += z * z * z * z;
  }
  /* tolerances: 5 standard errors of each sample moment */
  KD_TEST_NEAR(s / N, 0.5, 5 * sqrt(1.0 / 12 / N), "uniform mean");
  KD_TEST_NEAR(s2 / N - (s / N) * (s / N), 1.0 / 12, 5 * sqrt(1.0 / 180 / N), "uniform var");
  KD_TEST_NEAR(n1 / N, 0.0, 5 / sqrt((double)N), "normal mean");
  KD_TEST_NEAR(n2 / N, 1.0, 5 * sqrt(2.0 / N), "normal var");
  KD_TEST_NEAR(n4 / N, 3.0, 5 * sqrt(96.0 / N), "normal 4th moment");
  kd_rng r = kd_rng_make(5, 9);
  int hist[7] = {0};
  for (int i = 0; i < 70000; i++) hist[kd_rng_next_below(&r, 7)]++;
  for (int k = 0; k < 7; k++) KD_TEST_NEAR(hist[k], 10000, 5 * sqrt(10000.0), "below(7) bin");

  /* parameter tables */
  kd_params p;
  KD_TEST_OK(kd_params_defaults(spec, 6, &p));
  KD_TEST(kd_params_f64(&p, "J") == 2.0, "default J");
  KD_TEST(kd_params_int(&p, "max_iter") == 100, "default max_iter");
  KD_TEST(strcmp(kd_params_str(&p, "mode"), "a") == 0, "default mode");
  KD_TEST(kd_params_bool(&p, "flag") == 1, "default flag");
  KD_TEST_OK(kd_params_set_text(&p, "max_iter", "1e3", "t"));
  KD_TEST(kd_params_int(&p, "max_iter") == 1000, "1e3 as integer");
  KD_TEST(kd_params_set_text(&p, "J", "0.5", "cfg:3: algorithm.J") == KD_ERR_CONFIG, "J < 1");
  KD_TEST(strstr(kd_err_message(), "algorithm.J") != NULL, "message names key: %s",
          kd_err_message());
  kd_err_clear();
  KD_TEST(kd_params_set_text(&p, "mode", "c", "m") == KD_ERR_CONFIG, "bad choice");
  kd_err_clear();
  KD_TEST(kd_params_set_text(&p, "max_iter", "2.5", "m") == KD_ERR_CONFIG, "non-integer");
  kd_err_clear();
  KD_TEST(kd_params_set_text(&p, "flag", "maybe", "m") == KD_ERR_CONFIG, "bad bool");
  kd_err_clear();
  /* typed fill: defaults from the table, then the values set above */
  test_params tp;
  memset(&tp, 0, sizeof tp);
  KD_TEST_OK(kd_params_fill(&p, &tp));
  KD_TEST(tp.J == 2.0 && tp.max_iter == 1000 && tp.flag == 1, "filled J, max_iter, flag");
  KD_TEST(tp.mode && strcmp(tp.mode, "a") == 0, "filled mode string");
  KD_TEST(tp.mode_index == 1, "mode2 'b' is choice 1, got %d", tp.mode_index);
  KD_TEST_OK(kd_params_set_text(&p, "mode2", "a", "m"));
  KD_TEST_OK(kd_params_fill(&p, &tp));
  KD_TEST(tp.mode_index == 0, "mode2 'a' is choice 0, got %d", tp.mode_index);
  /* typed setters: the exact value, the row's range and choices, no text in between */
  const double third = 1.0 / 3.0;
  KD_TEST_OK(kd_params_set_f64(&p, "J", 1.0 + third, "algorithm.J"));
  KD_TEST(kd_params_f64(&p, "J") == 1.0 + third, "set_f64 keeps every bit");
  KD_TEST(kd_params_set_f64(&p, "J", 0.5, "algorithm.J") == KD_ERR_CONFIG &&
              strstr(kd_err_message(), "algorithm.J: 0.5 is out of range") != NULL,
          "set_f64 range: %s", kd_err_message());
  kd_err_clear();
  KD_TEST(kd_params_set_f64(&p, "J", NAN, "algorithm.J") == KD_ERR_CONFIG, "set_f64 NaN");
  kd_err_clear();
  KD_TEST_OK(kd_params_set_i64(&p, "max_iter", 999999, "algorithm.max_iter"));
  KD_TEST(kd_params_int(&p, "max_iter") == 999999, "set_i64 exact");
  KD_TEST(kd_params_set_i64(&p, "max_iter", -1, "algorithm.max_iter") == KD_ERR_CONFIG &&
              strstr(kd_err_message(), "algorithm.max_iter: -1 is out of range") != NULL,
          "set_i64 range: %s", kd_err_message());
  kd_err_clear();
  KD_TEST(kd_params_set_i64(&p, "nope", 1, "algorithm.nope") == KD_ERR_CONFIG &&
              strstr(kd_err_message(), "algorithm.nope: unknown key") != NULL,
          "set_i64 unknown key: %s", kd_err_message());
  kd_err_clear();
  KD_TEST_OK(kd_params_set_str(&p, "mode2", "b", "algorithm.mode2"));
  KD_TEST(kd_params_set_str(&p, "mode2", "c", "algorithm.mode2") == KD_ERR_CONFIG,
          "set_str choice");
  kd_err_clear();
  KD_TEST_OK(kd_params_set_bool(&p, "flag", 0, "algorithm.flag"));
  KD_TEST_OK(kd_params_fill(&p, &tp));
  KD_TEST(tp.J == 1.0 + third && tp.max_iter == 999999 && tp.flag == 0 && tp.mode_index == 1,
          "typed values filled");
  kd_params_free(&p);
  check_shared_rows();
  return kd_test_finish();
}
