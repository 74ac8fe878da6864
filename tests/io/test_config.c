/* test_config.c - the YAML config layer: typed getters with defaults, ranges and choices, error
 * messages naming file:line: key (libyaml marks), --set overrides, the unknown-key check, the
 * resolved emitter (which must parse back to the same values), and kd_config_load (rank 0 reads,
 * every rank parses) at 1, 2 and 4 ranks. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/io_impl.h"
#include "kd_test.h"

static const char *kYaml =
    "# comment line 1\n"
    "task: thin\n"              /* line 2 */
    "data:\n"                   /* 3 */
    "  type: gaussian\n"        /* 4 */
    "  n: 1000\n"               /* 5 */
    "  mean: [0.5, -1, 2e-3]\n" /* 6 */
    "  quoted: \"12\"\n"        /* 7 */
    "  flag: yes\n"             /* 8 */
    "kernel:\n"                 /* 9 */
    "  ls: 0.25\n"              /* 10 */
    "  means:\n"                /* 11 */
    "    - [1, 2]\n"            /* 12 */
    "    - [3, 4]\n"            /* 13 */
    "  empty:\n";               /* 14 */

static int contains(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

/* Run a getter expected to fail and check the message contains `want`. */
#define EXPECT_FAIL(call, want)                                                           \
  do {                                                                                    \
    kd_err_clear();                                                                       \
    kd_err e_ = (call);                                                                   \
    KD_TEST(e_ == KD_ERR_CONFIG, "%s should fail with KD_ERR_CONFIG, got %d", #call, e_); \
    KD_TEST(contains(kd_err_message(), want), "message '%s' should contain '%s'",         \
            kd_err_message(), want);                                                      \
    kd_err_clear();                                                                       \
  } while (0)

static void test_getters(void) {
  kd_config *cfg = NULL;
  KD_TEST_OK(kd_config_load_string(kYaml, "t.yaml", &cfg));
  if (!cfg) return;
  const char *s = NULL;
  int64_t i = 0;
  double f = 0;
  int b = 0, n = 0;
  double *v = NULL;
  KD_TEST_OK(kd_config_get_str(cfg, "task", NULL, "herd|thin|quad", 1, &s));
  KD_TEST(s && !strcmp(s, "thin"), "task = %s", s ? s : "(null)");
  KD_TEST_OK(kd_config_get_int(cfg, "data.n", 5, 1, 100000, &i));
  KD_TEST(i == 1000, "data.n = %lld", (long long)i);
  KD_TEST_OK(kd_config_get_f64(cfg, "kernel.ls", 1.0, 0.0, 10.0, &f));
  KD_TEST(f == 0.25, "kernel.ls = %g", f);
  KD_TEST_OK(kd_config_get_bool(cfg, "data.flag", 0, &b));
  KD_TEST(b == 1, "data.flag = %d", b);
  KD_TEST_OK(kd_config_get_f64_list(cfg, "data.mean", 1, &n, &v));
  KD_TEST(n == 3 && v && v[0] == 0.5 && v[1] == -1.0 && v[2] == 2e-3, "mean list n=%d", n);
  free(v);
  v = NULL;
  KD_TEST(kd_config_count(cfg, "kernel.means") == 2, "count of kernel.means");
  KD_TEST(kd_config_count(cfg, "data") == 5, "entries of data: %d", kd_config_count(cfg, "data"));
  KD_TEST(!strcmp(kd_config_key_at(cfg, "data", 1), "n"), "key_at(data, 1)");
  KD_TEST(kd_config_key_at(cfg, "data", 5) == NULL, "key_at out of range");
  KD_TEST_OK(kd_config_get_f64_list(cfg, "kernel.means.1", 1, &n, &v));
  KD_TEST(n == 2 && v && v[0] == 3 && v[1] == 4, "kernel.means.1");
  free(v);
  v = NULL;
  KD_TEST_OK(kd_config_get_f64_list(cfg, "kernel.means.0", 1, &n, &v));
  free(v);
  v = NULL;
  /* a quoted number is a string, never a number */
  EXPECT_FAIL(kd_config_get_int(cfg, "data.quoted", 0, 0, 100, &i),
              "t.yaml:7: data.quoted: expected an integer, got '12'");
  KD_TEST_OK(kd_config_get_str(cfg, "data.quoted", NULL, NULL, 1, &s));
  /* defaults: missing key -> default, and has() stays false until read */
  KD_TEST(!kd_config_has(cfg, "run.seed"), "run.seed absent");
  KD_TEST_OK(kd_config_get_int(cfg, "run.seed", 42, 0, 100, &i));
  KD_TEST(i == 42, "default seed %lld", (long long)i);
  KD_TEST(kd_config_has(cfg, "run.seed"), "default recorded");
  /* a null value counts as absent */
  KD_TEST_OK(kd_config_get_f64(cfg, "kernel.empty", 3.5, 0, 10, &f));
  KD_TEST(f == 3.5, "null -> default %g", f);
  /* errors name file:line: key */
  EXPECT_FAIL(kd_config_get_int(cfg, "data.type", 0, 0, 10, &i),
              "t.yaml:4: data.type: expected an integer, got 'gaussian'");
  EXPECT_FAIL(kd_config_get_int(cfg, "data.n", 0, 0, 10, &i),
              "t.yaml:5: data.n: 1000 is out of range [0, 10]");
  EXPECT_FAIL(kd_config_get_f64(cfg, "kernel.ls", 0, 1, 2, &f),
              "t.yaml:10: kernel.ls: 0.25 is out of range [1, 2]");
  EXPECT_FAIL(kd_config_get_str(cfg, "data.type", NULL, "uniform_box|sphere", 1, &s),
              "t.yaml:4: data.type: 'gaussian' is not one of uniform_box|sphere");
  EXPECT_FAIL(kd_config_get_str(cfg, "data.path", NULL, NULL, 1, &s),
              "t.yaml:3: data.path: required key is missing");
  EXPECT_FAIL(kd_config_get_f64(cfg, "data.mean", 0, 0, 1, &f),
              "t.yaml:6: data.mean: expected a single value, got a list");
  EXPECT_FAIL(kd_config_get_bool(cfg, "data.type", 0, &b), "expected true or false");
  EXPECT_FAIL(kd_config_get_f64(cfg, "task.x", 0, 0, 1, &f), "t.yaml:2: task: expected a section");
  KD_TEST_OK(kd_config_get_str(cfg, "data.type", NULL, "gaussian|sphere", 1, &s));
  /* unknown key: kernel.means was read element-wise; data.quoted read; kernel.empty defaulted */
  kd_err_clear();
  kd_err e = kd_config_check_unused(cfg);
  KD_TEST(e == KD_OK, "all keys read: %s", kd_err_message());
  kd_config_destroy(&cfg);
  KD_TEST(cfg == NULL, "destroy sets NULL");
  kd_config_destroy(&cfg); /* accepts NULL */
}

static void test_unused_and_set(void) {
  kd_config *cfg = NULL;
  int64_t i = 0;
  double f = 0;
  KD_TEST_OK(kd_config_load_string("a:\n  x: 1\n  typo: 2\nb:\n  y: 3\n", "u.yaml", &cfg));
  if (!cfg) return;
  KD_TEST_OK(kd_config_get_int(cfg, "a.x", 0, 0, 10, &i));
  kd_err_clear();
  kd_err e = kd_config_check_unused(cfg);
  KD_TEST(e == KD_ERR_CONFIG && contains(kd_err_message(), "u.yaml:3: a.typo: unknown key"),
          "typo reported: %s", kd_err_message());
  kd_err_clear();
  KD_TEST_OK(kd_config_get_int(cfg, "a.typo", 0, 0, 10, &i));
  e = kd_config_check_unused(cfg);
  KD_TEST(
      e == KD_ERR_CONFIG && contains(kd_err_message(), "u.yaml:4: b: unknown or unused section"),
      "section reported: %s", kd_err_message());
  kd_err_clear();
  /* --set replaces, creates, and is named in messages */
  KD_TEST_OK(kd_config_set(cfg, "b.y=7.5"));
  KD_TEST_OK(kd_config_set(cfg, "c.z.w=[1, 2, 3]"));
  KD_TEST_OK(kd_config_get_f64(cfg, "b.y", 0, 0, 10, &f));
  KD_TEST(f == 7.5, "--set b.y -> %g", f);
  int n = 0;
  double *v = NULL;
  KD_TEST_OK(kd_config_get_f64_list(cfg, "c.z.w", 1, &n, &v));
  KD_TEST(n == 3 && v && v[2] == 3.0, "--set list");
  free(v);
  KD_TEST_OK(kd_config_set(cfg, "a.x=oops"));
  EXPECT_FAIL(kd_config_get_int(cfg, "a.x", 0, 0, 10, &i),
              "u.yaml: --set: a.x: expected an integer");
  kd_err_clear();
  KD_TEST(kd_config_set(cfg, "novalue") == KD_ERR_ARG, "--set without '='");
  kd_err_clear();
  KD_TEST(kd_config_set(cfg, "a.x=[1, 2") != KD_OK && contains(kd_err_message(), "YAML syntax"),
          "--set with bad YAML: %s", kd_err_message());
  kd_err_clear();
  kd_config_destroy(&cfg);
}

/* The typed setters: values land without a YAML round trip, and read back exactly. */
static void test_typed_setters(void) {
  kd_config *cfg = NULL;
  const char *s = NULL;
  double f = 0;
  int64_t i = 0;
  int b = 0;
  KD_TEST_OK(kd_config_load_string("a:\n  x: 1\nb:\n  y: 2\n", "t.yaml", &cfg));
  /* a string with every character YAML would treat specially stays that string */
  const char *path = "out dir/it's \"#1\": a\nb\\c.h5";
  KD_TEST_OK(kd_config_set_str(cfg, "output.path", path));
  KD_TEST_OK(kd_config_get_str(cfg, "output.path", NULL, NULL, 1, &s));
  KD_TEST(s && !strcmp(s, path), "set_str path: '%s'", s ? s : "(null)");
  KD_TEST_OK(kd_config_set_str(cfg, "a.x", "1e3")); /* a string, even if it looks like a number */
  KD_TEST(kd_config_value(cfg, "a.x", NULL, NULL, NULL, 0) == KD_VALUE_TEXT, "set_str is text");
  const double v = 0.1 + 0.2;
  KD_TEST_OK(kd_config_set_f64(cfg, "kernel.ls", v));
  KD_TEST_OK(kd_config_get_f64(cfg, "kernel.ls", 1, 0, 10, &f));
  KD_TEST(f == v, "set_f64 reads back as exactly itself: %.17g", f);
  KD_TEST(kd_config_set_f64(cfg, "kernel.ls", INFINITY) == KD_ERR_ARG, "set_f64 inf refused");
  kd_err_clear();
  KD_TEST_OK(kd_config_set_int(cfg, "algorithm.n_out", INT64_MAX));
  KD_TEST_OK(kd_config_get_int(cfg, "algorithm.n_out", 0, 0, INT64_MAX, &i));
  KD_TEST(i == INT64_MAX, "set_int exact");
  KD_TEST_OK(kd_config_set_bool(cfg, "b.flag", 1));
  KD_TEST_OK(kd_config_get_bool(cfg, "b.flag", 0, &b));
  KD_TEST(b == 1, "set_bool");
  KD_TEST_OK(kd_config_set_null(cfg, "b"));
  KD_TEST(!kd_config_has(cfg, "b") && !kd_config_has(cfg, "b.y"), "set_null removes a section");
  KD_TEST(kd_config_set_int(cfg, "a x", 1) == KD_ERR_ARG, "malformed key refused");
  kd_err_clear();
  KD_TEST(kd_config_set_int(cfg, "kernel.ls.sub", 1) == KD_ERR_CONFIG &&
              contains(kd_err_message(), "expected a section"),
          "a value under a value refused: %s", kd_err_message());
  kd_err_clear();
  /* the emitted configuration reads back with the same values */
  char *yaml = NULL;
  kd_config *back = NULL;
  KD_TEST_OK(kd_config_emit_resolved(cfg, &yaml));
  KD_TEST_OK(kd_config_load_string(yaml, "back", &back));
  KD_TEST_OK(kd_config_get_str(back, "output.path", NULL, NULL, 1, &s));
  KD_TEST(s && !strcmp(s, path), "path survives the emitter: '%s'", s ? s : "(null)");
  KD_TEST_OK(kd_config_get_f64(back, "kernel.ls", 1, 0, 10, &f));
  KD_TEST(f == v, "real survives the emitter");
  free(yaml);
  kd_config_destroy(&back);
  kd_config_destroy(&cfg);
}

static void test_syntax_errors(void) {
  kd_config *cfg = NULL;
  kd_err_clear();
  kd_err e = kd_config_load_string("a: 1\nb: [1, 2\nc: 3\n", "s.yaml", &cfg);
  KD_TEST(e == KD_ERR_CONFIG && contains(kd_err_message(), "s.yaml:") &&
              contains(kd_err_message(), "YAML syntax error"),
          "syntax error: %s", kd_err_message());
  KD_TEST(cfg == NULL, "no config on error");
  kd_err_clear();
  e = kd_config_load_string("a: 1\na: 2\n", "d.yaml", &cfg);
  KD_TEST(e == KD_ERR_CONFIG && contains(kd_err_message(), "d.yaml:2: a: duplicate key"),
          "duplicate: %s", kd_err_message());
  kd_err_clear();
  e = kd_config_load_string("- 1\n- 2\n", "l.yaml", &cfg);
  KD_TEST(e == KD_ERR_CONFIG && contains(kd_err_message(), "must be a mapping"), "list root: %s",
          kd_err_message());
  kd_err_clear();
  e = kd_config_load_string("a: &x 1\nb: *x\n", "al.yaml", &cfg);
  KD_TEST(e == KD_ERR_CONFIG && contains(kd_err_message(), "al.yaml:2"), "alias: %s",
          kd_err_message());
  kd_err_clear();
  KD_TEST_OK(kd_config_load_string("", "empty.yaml", &cfg));
  KD_TEST(cfg && kd_config_check_unused(cfg) == KD_OK, "empty file is an empty mapping");
  kd_config_destroy(&cfg);
}

/* The resolved config parses back and gives the same values (including defaults and --set). */
static void test_resolved(void) {
  kd_config *cfg = NULL, *back = NULL;
  char *yaml = NULL, *yaml2 = NULL;
  double f = 0, g = 0;
  int64_t i = 0;
  const char *s = NULL;
  int b = 0;
  KD_TEST_OK(kd_config_load_string("x:\n  a: 0.1\n  s: \"007\"\n", "r.yaml", &cfg));
  if (!cfg) return;
  KD_TEST_OK(kd_config_set(cfg, "x.b=2"));
  KD_TEST_OK(kd_config_get_f64(cfg, "x.a", 0, 0, 1, &f));
  KD_TEST_OK(kd_config_get_int(cfg, "x.b", 0, 0, 9, &i));
  KD_TEST_OK(kd_config_get_str(cfg, "x.s", NULL, NULL, 1, &s));
  KD_TEST_OK(kd_config_get_f64(cfg, "y.third", 1.0 / 3.0, 0, 1, &g));
  KD_TEST_OK(kd_config_get_bool(cfg, "y.on", 1, &b));
  KD_TEST_OK(kd_config_get_str(cfg, "y.empty", "", NULL, 0, &s));
  double lst[3] = {1.5, -2, 1e-300};
  KD_TEST_OK(kd_config_default_f64_list(cfg, "y.list", 3, lst));
  KD_TEST_OK(kd_config_emit_resolved(cfg, &yaml));
  KD_TEST_OK(kd_config_load_string(yaml ? yaml : "", "resolved", &back));
  if (back) {
    double f2 = 0, g2 = 0, *v = NULL;
    int64_t i2 = 0;
    int b2 = 0, n = 0;
    const char *s2 = NULL, *e2 = NULL;
    KD_TEST_OK(kd_config_get_f64(back, "x.a", 9, 0, 1, &f2));
    KD_TEST_OK(kd_config_get_int(back, "x.b", 9, 0, 9, &i2));
    KD_TEST_OK(kd_config_get_str(back, "x.s", NULL, NULL, 1, &s2));
    KD_TEST_OK(kd_config_get_f64(back, "y.third", 9, 0, 1, &g2));
    KD_TEST_OK(kd_config_get_bool(back, "y.on", 0, &b2));
    KD_TEST_OK(kd_config_get_str(back, "y.empty", NULL, NULL, 1, &e2));
    KD_TEST_OK(kd_config_get_f64_list(back, "y.list", 1, &n, &v));
    KD_TEST(f2 == 0.1 && i2 == 2 && g2 == 1.0 / 3.0 && b2 == 1, "values survive: %g %lld %.17g %d",
            f2, (long long)i2, g2, b2);
    KD_TEST(s2 && !strcmp(s2, "007"), "quoted string survives: %s", s2 ? s2 : "(null)");
    KD_TEST(e2 && e2[0] == '\0', "empty string survives");
    KD_TEST(n == 3 && v && v[0] == 1.5 && v[1] == -2 && v[2] == 1e-300, "list default survives");
    free(v);
    KD_TEST_OK(kd_config_check_unused(back));
    KD_TEST_OK(kd_config_emit_resolved(back, &yaml2));
    KD_TEST(yaml && yaml2 && !strcmp(yaml, yaml2), "emit is a fixed point:\n%s---\n%s", yaml,
            yaml2 ? yaml2 : "");
  }
  free(yaml);
  free(yaml2);
  kd_config_destroy(&back);
  kd_config_destroy(&cfg);
}

/* kd_config_load: rank 0 reads, all ranks parse; a missing file is one agreed error. */
static void test_load_file(void) {
  char path[64] = "";
  int64_t i = 0;
  kd_config *cfg = NULL;
  if (kd_test_rank() == 0) {
    snprintf(path, sizeof path, "kd_test_cfg_%ld.yaml", (long)getpid());
    FILE *f = fopen(path, "w");
    if (f) {
      fputs("run:\n  seed: 17\n", f);
      fclose(f);
    }
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  KD_TEST_OK(kd_config_load(MPI_COMM_WORLD, path, &cfg));
  if (cfg) {
    KD_TEST_OK(kd_config_get_int(cfg, "run.seed", 0, 0, 100, &i));
    KD_TEST(i == 17, "seed from file on rank %d: %lld", kd_test_rank(), (long long)i);
    KD_TEST(!strcmp(kd_config_name(cfg), path), "name is the path");
  }
  kd_config_destroy(&cfg);
  MPI_Barrier(MPI_COMM_WORLD);
  if (kd_test_rank() == 0) remove(path);
  kd_err_clear();
  kd_err e = kd_config_load(MPI_COMM_WORLD, "/nonexistent/kd.yaml", &cfg);
  KD_TEST(e == KD_ERR_FILE && contains(kd_err_message(), "/nonexistent/kd.yaml: cannot open"),
          "missing file on every rank: %d %s", e, kd_err_message());
  kd_err_clear();
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  test_getters();
  test_unused_and_set();
  test_typed_setters();
  test_syntax_errors();
  test_resolved();
  test_load_file();
  return kd_test_finish();
}
