/* test_quad_ckpt.c - checkpoint / restart of the quadrature pipeline in process (no files, no
 * signals: the interrupt flag is set by hand on the last rank only, which is what a SIGUSR1 to one
 * rank process does). N. + emp + opt and M. + emp + opt (Hayakawa, Oberhauser & Lyons, Alg. 1) for
 * the periodic Sobolev kernel on [0,1)^2, N = 4096 rows in 16 leaves (4 merge levels).
 * Asserted, at every rank count:
 *  - periodic checkpoints (checkpoint_every = 1) come at iterations 0 (eigen step, /state/level
 *    -1), 1 .. 4 (tree levels 0 .. 3), none at the root, and do not change the rule (bitwise);
 *  - resuming from each of them gives the uninterrupted rule bitwise (points, weights, indices,
 *    mmd, mmd_recombination) and the state's kernel_evals count is the sum so far;
 *  - an interrupt raised on the last rank only after iteration k stops every rank at iteration
 *    k + 1 with KD_ERR_INTERRUPTED and a state marked interrupted; resuming from it gives the
 *    same rule; raised after the last safe point it is ignored (the run ends normally);
 *  - a flag pending before the run with checkpoint_every = 0 stops at the eigen step;
 *  - malformed states (level out of range, another N, node sizes that do not add up, a sample row
 *    out of range) fail with KD_ERR_INPUT, a missing dataset or eigenpairs of the wrong shape with
 *    KD_ERR_FILE (the kd_ckpt getters), on every rank with a message naming the problem. */
#include <stdlib.h>
#include <string.h>

#include "kd_algo_kv.h"
#include "kd_test.h"

#define MAXST 16

typedef struct {
  kd_result st[MAXST];
  int n;
  int64_t interrupt_at; /* raise the flag on the last rank after this iteration (-1: never) */
} cap_t;

/* copy the state the hook got; rank 0's arrays (the others hold empty ones) are broadcast */
static kd_err capture(void *vctx, const kd_result *s) {
  cap_t *c = vctx;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (c->n >= MAXST) return KD_ERR_INTERNAL;
  kd_result *d = &c->st[c->n++];
  memset(d, 0, sizeof *d);
  d->kernel_evals = s->kernel_evals;
  d->seconds = s->seconds;
  MPI_Bcast(&d->kernel_evals, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  for (int i = 0; i < s->n_metrics; i++)
    kd_result_set_metric(d, s->metrics[i].name, s->metrics[i].value);
  for (int i = 0; i < s->n_datasets; i++) {
    const kd_result_dataset *x = &s->datasets[i];
    int64_t dims[2] = {x->dims[0], x->dims[1]}, cnt = 1;
    MPI_Bcast(dims, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
    for (int r = 0; r < x->rank; r++) cnt *= dims[r];
    void *buf = malloc(8 * (size_t)(cnt > 0 ? cnt : 1));
    if (rank == 0 && cnt > 0) memcpy(buf, x->is_int ? (void *)x->i64 : (void *)x->f64, 8 * cnt);
    MPI_Bcast(buf, (int)cnt, x->is_int ? MPI_INT64_T : MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (x->is_int)
      kd_result_add_i64(d, x->path, x->rank, dims, buf);
    else
      kd_result_add_f64(d, x->path, x->rank, dims, buf);
    free(buf);
  }
  double it = -1;
  kd_result_get_metric(s, "iteration", &it);
  if (c->interrupt_at >= 0 && (int64_t)it == c->interrupt_at && rank == size - 1)
    kd_interrupt_set(1);
  return KD_OK;
}

static void cap_free(cap_t *c) {
  for (int i = 0; i < c->n; i++) kd_result_free(&c->st[i]);
  c->n = 0;
}

typedef struct {
  kd_kernel *k;
  kd_target *t;
  const char *algo;
  const char *const *kv; /* the algorithm's "key=value" settings */
} prob_t;

static kd_err run(prob_t *pr, cap_t *c, int64_t every, const kd_result *resume, kd_result *out) {
  kd_algo_kv_opts opt = {0};
  if (c) {
    opt.checkpoint = capture;
    opt.checkpoint_ctx = c;
    opt.checkpoint_every = every;
  }
  opt.resume = resume;
  kd_kernel_reset_evals(pr->k);
  return kd_algo_run_kv(MPI_COMM_WORLD, "quad", pr->algo, pr->kv, pr->k, NULL, pr->t, 3, &opt, out);
}

/* the same error code on every rank */
static int agreed(kd_err e) {
  int lo = (int)e, hi = (int)e;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

static int same_rule(const kd_result *a, const kd_result *b) {
  double ra = 0, rb = 1;
  kd_result_get_metric(a, "mmd_recombination", &ra);
  kd_result_get_metric(b, "mmd_recombination", &rb);
  return a->n == b->n && a->d == b->d && a->n > 0 &&
         !memcmp(a->points, b->points, sizeof(double) * a->n * a->d) &&
         !memcmp(a->weights, b->weights, sizeof(double) * a->n) &&
         !memcmp(a->indices, b->indices, sizeof(int64_t) * a->n) && a->mmd == b->mmd && ra == rb;
}

static double metric(const kd_result *r, const char *name) {
  double v = NAN;
  kd_result_get_metric(r, name, &v);
  return v;
}

static int64_t state_level(const kd_result *s) {
  const kd_result_dataset *x = kd_result_find(s, "/state/level");
  return x ? x->i64[0] : -99;
}

/* periodic, resume from every checkpoint, interrupts after every safe point */
static void check_problem(prob_t *pr, int64_t n_ckpt, int64_t first_level) {
  kd_result ref = KD_RESULT_INIT, out = KD_RESULT_INIT;
  cap_t c;
  memset(&c, 0, sizeof c);
  c.interrupt_at = -1;
  KD_TEST_OK(run(pr, NULL, 0, NULL, &ref));

  KD_TEST_OK(run(pr, &c, 1, NULL, &out));
  KD_TEST(same_rule(&ref, &out), "%s: checkpoint_every = 1 does not change the rule", pr->algo);
  KD_TEST(c.n == n_ckpt, "%s: %lld periodic checkpoints (got %d)", pr->algo, (long long)n_ckpt,
          c.n);
  uint64_t prev = 0;
  for (int i = 0; i < c.n; i++) {
    const int64_t first_it = first_level + 1;
    KD_TEST(metric(&c.st[i], "iteration") == (double)(first_it + i) &&
                state_level(&c.st[i]) == first_level + i && metric(&c.st[i], "interrupted") == 0,
            "%s: checkpoint %d at iteration %lld, level %lld", pr->algo, i,
            (long long)(first_it + i), (long long)(first_level + i));
    KD_TEST(c.st[i].kernel_evals >= prev && c.st[i].kernel_evals > 0,
            "%s: kernel_evals so far, non-decreasing (%llu)", pr->algo,
            (unsigned long long)c.st[i].kernel_evals);
    prev = c.st[i].kernel_evals;
  }
  for (int i = 0; i < c.n; i++) {
    KD_TEST_OK(run(pr, NULL, 0, &c.st[i], &out));
    KD_TEST(same_rule(&ref, &out), "%s: resumed at level %lld: the uninterrupted rule bitwise",
            pr->algo, (long long)state_level(&c.st[i]));
  }

  /* an interrupt on the last rank after safe point k: every rank stops at the next one */
  for (int64_t k = first_level + 1; k <= first_level + n_ckpt; k++) {
    cap_t ci;
    memset(&ci, 0, sizeof ci);
    ci.interrupt_at = k;
    kd_err e = run(pr, &ci, 1, NULL, &out);
    const int last = k == first_level + n_ckpt; /* after the last safe point: ignored */
    kd_interrupt_set(0);
    if (last) {
      KD_TEST(e == KD_OK && agreed(e) && same_rule(&ref, &out),
              "%s: interrupt after the last safe point (iteration %lld) is ignored", pr->algo,
              (long long)k);
    } else {
      KD_TEST(e == KD_ERR_INTERRUPTED && agreed(e), "%s: interrupt after iteration %lld: %s",
              pr->algo, (long long)k, kd_err_message());
      kd_err_clear();
      const kd_result *s = &ci.st[ci.n - 1];
      KD_TEST(metric(s, "iteration") == (double)(k + 1) && metric(s, "interrupted") == 1,
              "%s: stopped at iteration %lld with an interrupted state", pr->algo,
              (long long)(k + 1));
      KD_TEST_OK(run(pr, &ci, 1, s, &out));
      KD_TEST(same_rule(&ref, &out), "%s: resumed after the interrupt at iteration %lld: same rule",
              pr->algo, (long long)(k + 1));
    }
    cap_free(&ci);
  }
  /* pending before the run, signal-only checkpointing: stops at the first safe point */
  {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cap_t ci;
    memset(&ci, 0, sizeof ci);
    ci.interrupt_at = -1;
    if (rank == size - 1) kd_interrupt_set(1);
    kd_err e = run(pr, &ci, 0, NULL, &out);
    kd_interrupt_set(0);
    KD_TEST(
        e == KD_ERR_INTERRUPTED && agreed(e) && ci.n == 1 && state_level(&ci.st[0]) == first_level,
        "%s: flag pending at the start: stops at level %lld", pr->algo, (long long)first_level);
    kd_err_clear();
    cap_free(&ci);
  }
  cap_free(&c);
  kd_result_free(&ref);
  kd_result_free(&out);
}

/* a copy of s with one dataset changed by fn (or renamed away with fn == NULL) */
static void bad_state(const kd_result *s, const char *path, void (*fn)(kd_result_dataset *),
                      kd_result *d) {
  memset(d, 0, sizeof *d);
  for (int i = 0; i < s->n_metrics; i++)
    kd_result_set_metric(d, s->metrics[i].name, s->metrics[i].value);
  for (int i = 0; i < s->n_datasets; i++) {
    const kd_result_dataset *x = &s->datasets[i];
    const int hit = !strcmp(x->path, path);
    const char *p = (hit && !fn) ? "/state/renamed" : x->path;
    if (x->is_int)
      kd_result_add_i64(d, p, x->rank, x->dims, x->i64);
    else
      kd_result_add_f64(d, p, x->rank, x->dims, x->f64);
    if (hit && fn) fn(&d->datasets[d->n_datasets - 1]);
  }
}
static void level_7(kd_result_dataset *x) { x->i64[0] = 7; }
static void other_n(kd_result_dataset *x) { x->i64[1] = 4000; }
static void count_up(kd_result_dataset *x) { x->i64[0] += 1; }
static void row_out(kd_result_dataset *x) { x->i64[0] = 4096; }
static void short_vec(kd_result_dataset *x) { x->dims[0] -= 1; }

static void check_bad(prob_t *pr, const kd_result *s, const char *path,
                      void (*fn)(kd_result_dataset *), kd_err code, const char *want) {
  kd_result b = KD_RESULT_INIT, out = KD_RESULT_INIT;
  bad_state(s, path, fn, &b);
  kd_err e = run(pr, NULL, 0, &b, &out);
  KD_TEST(e == code && agreed(e) && strstr(kd_err_message(), want), "bad %s: %s naming '%s': %s",
          path, kd_err_string(code), want, kd_err_message());
  kd_err_clear();
  kd_result_free(&b);
  kd_result_free(&out);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_SOBOLEV);
  kd_measure mu = {0};
  mu.type = KD_MEASURE_TORUS;
  mu.d = 2;
  prob_t pr;
  memset(&pr, 0, sizeof pr);

  /* N. + emp + opt: the eigen step and tree levels 0 .. 3 */
  KD_TEST_OK(kd_kernel_create(&kp, 2, &pr.k));
  KD_TEST_OK(kd_target_create_closed(MPI_COMM_WORLD, pr.k, &mu, &pr.t));
  pr.algo = "nystrom_recombination";
  const char *const kv_nys[] = {"n=24", "sample_size=4096", "leaves=16", NULL};
  pr.kv = kv_nys;
  check_problem(&pr, 5, -1);

  /* malformed states */
  {
    cap_t c;
    memset(&c, 0, sizeof c);
    c.interrupt_at = -1;
    kd_result out = KD_RESULT_INIT;
    KD_TEST_OK(run(&pr, &c, 1, NULL, &out));
    KD_TEST(c.n == 5, "five checkpoints");
    if (c.n == 5) {
      const kd_result *eig = &c.st[0], *lev = &c.st[3]; /* eigen step, tree level 2 */
      check_bad(&pr, lev, "/state/level", level_7, KD_ERR_INPUT,
                "level 7 outside the safe points [-1, 3]");
      check_bad(&pr, lev, "/state/plan", other_n, KD_ERR_INPUT,
                "sample size N = 4000, the configuration gives 4096");
      check_bad(&pr, lev, "/state/node_points", count_up, KD_ERR_INPUT, "tree nodes hold");
      check_bad(&pr, lev, "/state/gid", row_out, KD_ERR_INPUT, "sample row 4096 (of N = 4096)");
      check_bad(&pr, lev, "/state/features", NULL, KD_ERR_FILE, "/state/features is missing");
      check_bad(&pr, eig, "/state/eig_values", short_vec, KD_ERR_FILE,
                "/state/eig_values is float64 [22], expected float64 [23]");
      check_bad(&pr, eig, "/state/times", NULL, KD_ERR_FILE, "/state/times is missing");
    }
    cap_free(&c);
    kd_result_free(&out);
  }

  /* M. + emp + opt (order 2): no eigen step, tree levels 0 .. 3 */
  kd_target_destroy(&pr.t);
  kd_kernel_destroy(&pr.k);
  kp.order = 2;
  KD_TEST_OK(kd_kernel_create(&kp, 2, &pr.k));
  KD_TEST_OK(kd_target_create_closed(MPI_COMM_WORLD, pr.k, &mu, &pr.t));
  pr.algo = "mercer_recombination";
  const char *const kv_mer[] = {"n=20", "sample_size=4096", "leaves=16", NULL};
  pr.kv = kv_mer;
  check_problem(&pr, 4, 0);
  kd_target_destroy(&pr.t);
  kd_kernel_destroy(&pr.k);
  return kd_test_finish();
}
