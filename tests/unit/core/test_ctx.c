/* test_ctx.c - two library contexts in one process (issue 11): one on MPI_COMM_WORLD, one on
 * MPI_COMM_SELF, each running a real herding job through the entry point kd_job_run.
 * Checked at 1, 2 and 4 ranks:
 *   - each context's log level and sink: lines land in that context's buffer only, verbose lines
 *     only where the level asks for them, world lines on world rank 0 only, none when quiet;
 *   - an error raised in one context leaves the other's message empty (and the binding of the
 *     caller is restored after every entry point);
 *   - kd_ctx_interrupt on one context (before a run, mid-run from its sink, or from another
 *     thread) stops only that context's run: the other runs to the end;
 *   - herding is rank-invariant, so the MPI_COMM_SELF run picks the same atoms in the same order
 *     as the world run, with weights and MMD equal to round-off (bit-identical at 1 rank);
 *   - with no context bound the helpers are harmless: codes returned, messages dropped, no logs. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/io_impl.h"
#include "kd_test.h"

/* A sink that keeps the lines it receives. */
typedef struct {
  char line[256][256];
  kd_log_level level[256];
  int n;
  size_t longest;                /* strlen of the longest line received */
  kd_ctx *interrupt_on_progress; /* if set: interrupt this context at the first progress line */
} capture;

static void capture_sink(void *user, kd_log_level level, const char *line) {
  capture *c = user;
  if (strlen(line) > c->longest) c->longest = strlen(line);
  if (c->n < 256) {
    snprintf(c->line[c->n], sizeof c->line[0], "%s", line);
    c->level[c->n] = level;
    c->n++;
  }
  if (c->interrupt_on_progress && strstr(line, "] iter "))
    kd_ctx_interrupt(c->interrupt_on_progress);
}

static int count_lines(const capture *c, const char *needle) {
  int k = 0;
  for (int i = 0; i < c->n; i++) k += strstr(c->line[i], needle) != NULL;
  return k;
}

static const char kHerd[] =
    "task: herd\n"
    "candidates: {type: gaussian, d: 2, mean: [0.0, 0.0], sd: [1.0, 1.0], n: 1500}\n"
    "target: {type: gaussian, d: 2, mean: [0.0, 0.0], sd: [1.0, 1.0]}\n"
    "kernel: {name: gaussian, ls: 1.0}\n"
    "algorithm: {name: bpcg, max_iter: 60}\n"
    "run: {seed: 7}\n";

static kd_job_opts herd_opts(const char *name, const char *const *sets, int n_sets) {
  kd_job_opts o;
  memset(&o, 0, sizeof o);
  o.config = name;
  o.config_text = kHerd;
  o.sets = sets;
  o.n_sets = n_sets;
  o.no_output = 1;
  return o;
}

static void *interrupt_thread(void *arg) {
  kd_ctx *c = arg;
  /* the binding is per thread: nothing is bound here */
  if (kd_ctx_current() != NULL) return arg;
  kd_ctx_interrupt(c);
  return NULL;
}

/* No context bound: errors keep their code, messages and logs go nowhere. */
static void check_unbound(void) {
  kd_ctx *prev = kd_ctx_bind(NULL);
  KD_TEST(kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__, "dropped %d", 1) == KD_ERR_INPUT,
          "kd_err_set returns its code unbound");
  KD_TEST(strcmp(kd_err_message(), "") == 0, "no message unbound");
  kd_err_set_message("also dropped");
  kd_err_clear();
  kd_log_info("silent %d", 1);
  kd_log_progress("x", 1, 0.5, 1, 1);
  KD_TEST(kd_log_get_level() == KD_LOG_QUIET, "quiet unbound");
  KD_TEST(kd_interrupt_pending() == 0, "no interrupt unbound");
  KD_TEST(kd_checkpoint_session_get() == NULL, "no checkpoint session unbound");
  KD_TEST(kd_job_run(NULL, NULL, NULL, NULL) == KD_ERR_ARG, "entry point refuses a NULL context");
  kd_ctx_unbind(prev);
  KD_TEST(kd_ctx_current() == kd_test_ctx(), "binding restored");
}

/* Helpers called with a context bound: a line longer than any fixed buffer arrives whole. */
static void check_bound_helpers(kd_ctx *s, capture *cs) {
  char big[3001];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  kd_ctx *prev = kd_ctx_bind(s);
  kd_log_warn("%s", big);
  kd_log_verbose("not at level NORMAL");
  KD_TEST(kd_checkpoint_session_get() != NULL, "a bound context has a checkpoint session");
  kd_ctx_unbind(prev);
  KD_TEST(cs->n == 1 && cs->longest == strlen("kdistill: warning: ") + 3000 &&
              !strncmp(cs->line[0], "kdistill: warning: xxx", 22),
          "long warning delivered whole (%d lines, %zu chars)", cs->n, cs->longest);
  cs->n = 0;
  cs->longest = 0;
}

/* Runs on both contexts; the SELF result equals the world one. */
static void check_runs(kd_ctx *w, kd_ctx *s, capture *cw, capture *cs) {
  const int rank = kd_test_rank(), size = kd_test_size();
  kd_job_opts ow = herd_opts("world.yaml", NULL, 0), os = herd_opts("self.yaml", NULL, 0);
  kd_job_summary sw, ss;
  kd_result rw = KD_RESULT_INIT, rs = KD_RESULT_INIT;
  KD_TEST(kd_job_run(w, &ow, &sw, &rw) == KD_OK, "world run: %s", kd_ctx_message(w));
  KD_TEST(kd_ctx_current() == kd_test_ctx(), "binding restored after kd_job_run");
  KD_TEST(kd_job_run(s, &os, &ss, &rs) == KD_OK, "self run: %s", kd_ctx_message(s));
  KD_TEST(sw.n_ranks == size && ss.n_ranks == 1, "ranks %d / %d", sw.n_ranks, ss.n_ranks);
  KD_TEST(!strcmp(sw.task, "herd") && !strcmp(sw.algorithm, "bpcg") && sw.output[0] == '\0',
          "summary: %s %s '%s'", sw.task, sw.algorithm, sw.output);
  int same = rw.n == rs.n && rw.n > 1 && rw.n == sw.n;
  double dw = 0;
  for (int64_t i = 0; same && i < rw.n; i++) {
    same &= rw.indices[i] == rs.indices[i];
    dw = fmax(dw, fabs(rw.weights[i] - rs.weights[i]));
  }
  KD_TEST(same, "same atoms in the same order (%lld vs %lld)", (long long)rw.n, (long long)rs.n);
  KD_TEST(dw <= 1e-12, "weights agree to %.3g", dw);
  KD_TEST_NEAR(rw.mmd, rs.mmd, 1e-12, "mmd world vs self");
  if (size == 1)
    KD_TEST(same && memcmp(rw.weights, rs.weights, sizeof(double) * rw.n) == 0 && rw.mmd == rs.mmd,
            "bit-identical at 1 rank");
  kd_result_free(&rw);
  kd_result_free(&rs);
  /* logs: world VERBOSE -> its sink on world rank 0 only, with the verbose timing line; self
   * NORMAL -> its sink on every rank (each is rank 0 of its own communicator), no verbose line */
  if (rank == 0) {
    KD_TEST(count_lines(cw, "running bpcg") == 1, "world: one 'running' line (%d)", cw->n);
    KD_TEST(count_lines(cw, "timings over") == 1, "world: verbose timing line");
    int verbose = 0;
    for (int i = 0; i < cw->n; i++) verbose += cw->level[i] == KD_LOG_VERBOSE;
    KD_TEST(verbose >= 1, "world: a line at level VERBOSE");
  } else {
    KD_TEST(cw->n == 0, "world: no lines off rank 0 (%d)", cw->n);
  }
  KD_TEST(count_lines(cs, "running bpcg") == 1, "self: one 'running' line (%d)", cs->n);
  KD_TEST(count_lines(cs, "timings over") == 0, "self: no verbose line");
  for (int i = 0; i < cs->n; i++)
    KD_TEST(!strncmp(cs->line[i], "kdistill: ", 10) && cs->level[i] == KD_LOG_NORMAL,
            "self line %d: '%s'", i, cs->line[i]);
  /* quiet: nothing more */
  int before = cs->n;
  kd_ctx_set_log_level(s, KD_LOG_QUIET);
  KD_TEST(kd_job_run(s, &os, NULL, NULL) == KD_OK, "quiet self run: %s", kd_ctx_message(s));
  KD_TEST(cs->n == before, "quiet: no lines (%d -> %d)", before, cs->n);
  kd_ctx_set_log_level(s, KD_LOG_NORMAL);
}

/* An error on one context leaves the other's message empty. */
static void check_errors(kd_ctx *w, kd_ctx *s) {
  const char *bad[] = {"algorithm.max_iter=-1"};
  kd_job_opts os = herd_opts("self.yaml", bad, 1), ow = herd_opts("world.yaml", NULL, 0);
  kd_err e = kd_job_run(s, &os, NULL, NULL);
  KD_TEST(e == KD_ERR_CONFIG && strstr(kd_ctx_message(s), "max_iter"), "self error: %d '%s'",
          (int)e, kd_ctx_message(s));
  KD_TEST(strcmp(kd_ctx_message(w), "") == 0, "world message stays empty: '%s'", kd_ctx_message(w));
  KD_TEST(strcmp(kd_err_message(), "") == 0, "the caller's (bound) message stays empty");
  /* a file error on the world context: agreed on every rank; the self context keeps its own */
  kd_job_opts of = ow;
  of.config_text = NULL;
  of.config = "/nonexistent/kd_ctx.yaml";
  e = kd_job_run(w, &of, NULL, NULL);
  KD_TEST(e == KD_ERR_FILE, "world file error agreed: %d", (int)e);
  if (kd_test_rank() == 0)
    KD_TEST(strstr(kd_ctx_message(w), "kd_ctx.yaml") != NULL, "world message: '%s'",
            kd_ctx_message(w));
  KD_TEST(strstr(kd_ctx_message(s), "max_iter") != NULL, "self message unchanged: '%s'",
          kd_ctx_message(s));
  kd_ctx_clear_error(s);
  KD_TEST(strcmp(kd_ctx_message(s), "") == 0, "kd_ctx_clear_error");
  /* the next successful call starts with a clean message */
  KD_TEST(kd_job_run(w, &ow, NULL, NULL) == KD_OK && !strcmp(kd_ctx_message(w), ""),
          "world message cleared by the next run: '%s'", kd_ctx_message(w));
}

/* The key an error is about, and an unknown key's section keys, agreed on every rank; the typed
 * values of the resolved configuration. */
static void check_error_keys(kd_ctx *w) {
  const char *unknown[] = {"algorithm.foo=1"}, *range[] = {"algorithm.max_iter=-1"};
  char buf[64];
  kd_job_opts o = herd_opts("keys.yaml", unknown, 1);
  KD_TEST(kd_job_run(w, &o, NULL, NULL) == KD_ERR_CONFIG, "unknown key: %s", kd_ctx_message(w));
  KD_TEST(!strcmp(kd_ctx_error_key(w), "algorithm.foo"), "key '%s'", kd_ctx_error_key(w));
  int n = 0, has_max_iter = 0, has_foo = 0;
  while (kd_ctx_error_known(w, n, buf, sizeof buf)) {
    has_max_iter += !strcmp(buf, "max_iter");
    has_foo += !strcmp(buf, "foo");
    n++;
  }
  KD_TEST(n >= 2 && has_max_iter == 1 && !has_foo && buf[0] == '\0', "known keys: %d", n);
  KD_TEST(kd_ctx_error_known(w, 0, buf, 4) && strlen(buf) <= 3, "truncated to the buffer");
  o = herd_opts("keys.yaml", range, 1);
  KD_TEST(kd_job_run(w, &o, NULL, NULL) == KD_ERR_CONFIG, "range: %s", kd_ctx_message(w));
  KD_TEST(!strcmp(kd_ctx_error_key(w), "algorithm.max_iter") && !kd_ctx_error_known(w, 0, buf, 64),
          "range key '%s'", kd_ctx_error_key(w));
  o = herd_opts("keys.yaml", NULL, 0);
  char *yaml = NULL;
  KD_TEST(kd_job_run_resolved(w, &o, NULL, NULL, &yaml) == KD_OK, "run: %s", kd_ctx_message(w));
  KD_TEST(!strcmp(kd_ctx_error_key(w), "") && !kd_ctx_error_known(w, 0, buf, 64), "no key");
  double x = 0;
  int64_t i = 0;
  KD_TEST(
      kd_job_config_value(yaml, "run.seed", &x, &i, buf, 64) == KD_VALUE_INT && i == 7 && x == 7.0,
      "run.seed %lld", (long long)i);
  KD_TEST(kd_job_config_value(yaml, "kernel.ls", &x, NULL, NULL, 0) == KD_VALUE_REAL && x == 1.0,
          "kernel.ls %g", x);
  KD_TEST(kd_job_config_value(yaml, "kernel.name", NULL, NULL, buf, 64) == KD_VALUE_TEXT &&
              !strcmp(buf, "gaussian"),
          "kernel.name '%s'", buf);
  KD_TEST(
      kd_job_config_value(yaml, "target.mean.1", &x, NULL, NULL, 0) == KD_VALUE_REAL && x == 0.0,
      "a list element");
  KD_TEST(kd_job_config_value(yaml, "kernel", NULL, NULL, buf, 64) == KD_VALUE_NONE &&
              kd_job_config_value(yaml, "kernel.nope", NULL, NULL, buf, 64) == KD_VALUE_NONE &&
              kd_job_config_value("a: [", "a", NULL, NULL, buf, 64) == KD_VALUE_NONE &&
              kd_job_config_value(NULL, "a", NULL, NULL, buf, 64) == KD_VALUE_NONE,
          "absent, a section, unparsable text");
  KD_TEST(kd_job_config_value("a: {b: true}", "a.b", NULL, &i, NULL, 0) == KD_VALUE_BOOL && i == 1,
          "a boolean");
  int k = 0, has_name = 0;
  while (kd_job_config_key_at(yaml, "kernel", k, buf, sizeof buf)) {
    has_name += !strcmp(buf, "name");
    k++;
  }
  KD_TEST(k >= 2 && has_name == 1 && !kd_job_config_key_at(yaml, "nope", 0, buf, 64) && !buf[0],
          "kernel keys: %d", k);
  KD_TEST(!strcmp(kd_ctx_message(w), ""), "the accessors record no message");
  kd_free(yaml);
}

/* An interrupt on one context stops only that context's runs. */
static void check_interrupts(kd_ctx *w, kd_ctx *s, capture *cw) {
  char out[256], ckpt[300], set_out[300];
  kd_job_opts ow = herd_opts("world.yaml", NULL, 0), os = herd_opts("self.yaml", NULL, 0);
  /* before the run: refused on every rank of the world context; the self context runs */
  kd_ctx_interrupt(w);
  KD_TEST(kd_ctx_interrupted(w) && !kd_ctx_interrupted(s), "flags are per context");
  kd_err e = kd_job_run(w, &ow, NULL, NULL);
  KD_TEST(e == KD_ERR_INTERRUPTED && strstr(kd_ctx_message(w), "before the run started"),
          "interrupted world run: %d '%s'", (int)e, kd_ctx_message(w));
  KD_TEST(kd_job_run(s, &os, NULL, NULL) == KD_OK, "self run unaffected: %s", kd_ctx_message(s));
  kd_ctx_clear_interrupt(w);
  KD_TEST(!kd_ctx_interrupted(w), "kd_ctx_clear_interrupt");
  /* from another thread */
  pthread_t th;
  void *ret = &th;
  KD_TEST(pthread_create(&th, NULL, interrupt_thread, s) == 0 && pthread_join(th, &ret) == 0 &&
              ret == NULL,
          "interrupting thread ran with no context bound");
  KD_TEST(kd_ctx_interrupted(s) && !kd_ctx_interrupted(w), "thread interrupted the self context");
  KD_TEST(kd_job_run(w, &ow, NULL, NULL) == KD_OK, "world run unaffected: %s", kd_ctx_message(w));
  KD_TEST(kd_job_run(s, &os, NULL, NULL) == KD_ERR_INTERRUPTED, "self run interrupted");
  kd_ctx_clear_interrupt(s);
  /* mid-run: the world sink interrupts at the first progress line (world rank 0 only); the
   * algorithm agrees the flag at its next safe point, checkpoints and stops */
  long pid = (long)getpid(); /* rank 0's: one path for every rank, unique per test process */
  MPI_Bcast(&pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  snprintf(out, sizeof out, "/tmp/kd_test_ctx_np%d_%ld.h5", kd_test_size(), pid);
  snprintf(ckpt, sizeof ckpt, "%s.ckpt.h5", out);
  snprintf(set_out, sizeof set_out, "output.path=%s", out);
  const char *sets[] = {set_out};
  kd_job_opts om = herd_opts("world.yaml", sets, 1);
  cw->interrupt_on_progress = w;
  e = kd_job_run(w, &om, NULL, NULL);
  cw->interrupt_on_progress = NULL;
  KD_TEST(e == KD_ERR_INTERRUPTED && strstr(kd_ctx_message(w), "interrupted at iteration") &&
              strstr(kd_ctx_message(w), "checkpoint written"),
          "mid-run interrupt: %d '%s'", (int)e, kd_ctx_message(w));
  KD_TEST(!kd_ctx_interrupted(s), "self flag untouched");
  KD_TEST(kd_job_run(s, &os, NULL, NULL) == KD_OK, "self runs after the world interrupt: %s",
          kd_ctx_message(s));
  kd_ctx_clear_interrupt(w);
  MPI_Barrier(MPI_COMM_WORLD);
  if (kd_test_rank() == 0) remove(ckpt);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  kd_ctx *w = NULL, *s = NULL;
  capture *cw = calloc(1, sizeof *cw), *cs = calloc(1, sizeof *cs);
  KD_TEST_OK(kd_ctx_create(MPI_COMM_WORLD, &w));
  KD_TEST_OK(kd_ctx_create(MPI_COMM_SELF, &s));
  int cmp = MPI_UNEQUAL;
  MPI_Comm_compare(kd_ctx_comm(w), MPI_COMM_WORLD, &cmp);
  KD_TEST(cmp == MPI_CONGRUENT, "the world context owns a duplicate of MPI_COMM_WORLD");
  KD_TEST(kd_ctx_size(w) == kd_test_size() && kd_ctx_rank(w) == kd_test_rank() &&
              kd_ctx_size(s) == 1 && kd_ctx_rank(s) == 0,
          "rank and size");
  kd_ctx_set_log_level(w, KD_LOG_VERBOSE);
  kd_ctx_set_log_interval(w, 0.0);
  kd_ctx_set_log_sink(w, capture_sink, cw);
  kd_ctx_set_log_sink(s, capture_sink, cs);
  KD_TEST(kd_ctx_log_level(w) == KD_LOG_VERBOSE && kd_ctx_log_level(s) == KD_LOG_NORMAL &&
              kd_ctx_log_interval(w) == 0.0 && kd_ctx_log_interval(s) == 1.0,
          "levels and intervals per context");
  check_unbound();
  check_bound_helpers(s, cs);
  check_runs(w, s, cw, cs);
  KD_TEST(kd_ctx_log_interval(w) == 0.0, "a job's run.log_interval does not outlive the job");
  check_errors(w, s);
  check_error_keys(w);
  check_interrupts(w, s, cw);
  KD_TEST(kd_ctx_comm_seconds(w) >= 0.0 && kd_ctx_elapsed(w) > 0.0, "timers");
  kd_ctx_destroy(&w);
  kd_ctx_destroy(&s);
  kd_ctx_destroy(&s); /* NULL-safe */
  KD_TEST(w == NULL && s == NULL, "destroy sets NULL");
  free(cw);
  free(cs);
  return kd_test_finish();
}
