/* test_checkpoint_conformance.c - one table, one row per checkpointing algorithm or task, and the
 * same checks for every row (docs/checkpoint.md). Joining the table is the only way a family
 * checkpoints: the test walks the algorithm registry and fails for an algorithm of a task that can
 * resume which has no row (bar the baselines without a safe point and the families still listed
 * as pending), and walks the task registry and fails for a task that can resume but has no row.
 *
 * For every row, at the rank count of the run (p), through the kd_ckpt object (states kept in
 * memory by a capturing sink; rank 0's copy of each dataset broadcast, as rank 0 writes the file):
 *  (a) checkpoint_every = 1 writes a state at every safe point without changing the result;
 *      resuming from each of them gives the uninterrupted result bitwise;
 *  (b) the state saved at p ranks resumed at 1 rank (MPI_COMM_SELF) gives the 1-rank result
 *      (bitwise where the row says its continuation is rank-count independent);
 *  (c) damaged states are refused on every rank alike with one message: each /state dataset
 *      removed (the message names it) and each one with a wrong leading extent, plus the row's own
 *      semantic damages (e.g. a tree level out of range, another sample size); the state written
 *      to a checkpoint file and read back with another configuration is refused by its config
 *      hash (KD_ERR_CONFIG naming the key), and read back with the same one resumes bitwise;
 *  (d) an interrupt raised on the last rank only, after safe point k, stops every rank with
 *      KD_ERR_INTERRUPTED at the next safe point (the same on every rank, its state marked
 *      interrupted), and resuming from that state gives the uninterrupted result; raised after
 *      the last safe point it is ignored (the run ends normally); a flag pending before the run
 *      (checkpoint_every = 0) stops every rank at the first safe point. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/twosample/ctt_impl.h"
#include "io/io_impl.h"
#include "kd_algo_kv.h"
#include "kd_test.h"
#include "task/task_impl.h"
#include "thinning/thin_test_util.h"

#define MAXST 64

/* ---------------- the table ---------------- */
/* A row's own semantic damage: element `index` of dataset `path` of its periodic state `at`
 * (-1: the last) set to `value` (add: increased by it) must be refused with `code` and a message
 * containing `want` (the generic checks only remove or shorten datasets). */
typedef struct {
  int at;
  const char *path;
  int64_t index;
  double value;
  int add;
  kd_err code;
  const char *want;
} damage_t;

typedef struct row row_t;
struct row {
  const char *name; /* shown in messages */
  const char *task; /* task of the row (the registry's) */
  const char *algo; /* registered algorithm, or NULL for a task-level row (the CTT study) */
  const char *const *kv;
  int cross_bitwise; /* 1: resumed at another rank count equals that rank count's run bitwise */
  kd_err (*run)(const row_t *r, MPI_Comm comm, kd_ckpt *ck, kd_result *out);
  const damage_t *damage; /* NULL-path terminated, or NULL */
  int64_t first;          /* iteration of the first safe point (-1: depends on the rank count) */
  int n_safe;             /* safe points with checkpoint_every = 1 (0: depends on the rank count) */
  int64_t n_in;           /* thinning rows: input size and data seed */
  uint64_t data_seed;
};

/* the herding rows: Gaussian kernel, N(0, I_2) target in closed form, 200 candidates from it */
static kd_err run_herd(const row_t *r, MPI_Comm comm, kd_ckpt *ck, kd_result *out) {
  kd_err err = KD_OK;
  kd_kernel *k = NULL;
  kd_target *t = NULL;
  kd_pointset *cand = NULL;
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  double mean[2] = {0, 0}, sd[2] = {1, 1};
  kd_measure mu = {0};
  kd_algo_kv_opts opt = {0};
  mu.type = KD_MEASURE_GAUSSIAN;
  mu.d = 2;
  mu.mean = mean;
  mu.sd = sd;
  KD_TRY(kd_kernel_create(&kp, 2, &k));
  KD_TRY(kd_pointset_generate(comm, &mu, 200, 7, &cand));
  KD_TRY(kd_target_create_closed(comm, k, &mu, &t));
  opt.ckpt = ck;
  KD_TRY(kd_algo_run_kv(comm, r->task, r->algo, r->kv, k, cand, t, 1, &opt, out));
cleanup:
  kd_target_destroy(&t);
  kd_pointset_destroy(&cand);
  kd_kernel_destroy(&k);
  return err;
}

/* the quadrature rows: periodic Sobolev kernel on the torus, closed-form target */
static kd_err run_quad(const row_t *r, MPI_Comm comm, kd_ckpt *ck, kd_result *out) {
  kd_err err = KD_OK;
  kd_kernel *k = NULL;
  kd_target *t = NULL;
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_SOBOLEV);
  kd_measure mu = {0};
  kd_algo_kv_opts opt = {0};
  mu.type = KD_MEASURE_TORUS;
  mu.d = 2;
  if (!strcmp(r->algo, "mercer_recombination")) kp.order = 2;
  KD_TRY(kd_kernel_create(&kp, 2, &k));
  KD_TRY(kd_target_create_closed(comm, k, &mu, &t));
  opt.ckpt = ck;
  KD_TRY(kd_algo_run_kv(comm, r->task, r->algo, r->kv, k, NULL, t, 3, &opt, out));
cleanup:
  kd_target_destroy(&t);
  kd_kernel_destroy(&k);
  return err;
}

/* the CTT study: 2 g values and the exact test on small Gaussian samples */
static kd_err run_ctt_study(const row_t *r, MPI_Comm comm, kd_ckpt *ck, kd_result *out) {
  kd_err err = KD_OK;
  double mx[2] = {0, 0}, my[2] = {0.3, 0}, sd[2] = {1, 1};
  kd_measure gx = {0}, gy = {0};
  kd_kernel_params kp = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  const int64_t g_list[2] = {0, 1};
  kd_ctt_study_spec sp;
  kd_ctt_study_out st;
  (void)r;
  memset(&sp, 0, sizeof sp);
  memset(&st, 0, sizeof st);
  gx.type = gy.type = KD_MEASURE_GAUSSIAN;
  gx.d = gy.d = 2;
  gx.mean = mx;
  gy.mean = my;
  gx.sd = gy.sd = sd;
  sp.mx = &gx;
  sp.my = &gy;
  sp.m = sp.n = 64;
  sp.T = 9;
  sp.seed = 4;
  sp.kp = &kp;
  sp.s = 4;
  sp.B = 20;
  sp.delta = 0.5;
  sp.alpha = 0.05;
  sp.g_list = g_list;
  sp.n_g = 2;
  sp.exact = 1;
  kd_result_free(out);
  KD_TRY(kd_ctt_study_run(comm, &sp, ck, &st));
  KD_TRY(kd_ctt_study_add_outputs(&st, out));
cleanup:
  kd_ctt_study_free(&st);
  return err;
}

static const char *const kv_herd[] = {"max_iter=12", NULL};
static const char *const kv_nystrom[] = {"n=12", "sample_size=1024", "leaves=8", NULL};
static const char *const kv_mercer[] = {"n=10", "sample_size=1024", "leaves=8", NULL};

/* the thinning rows: an 8-component Gaussian mixture in 2-D, its empirical measure as target */
static kd_err run_thin(const row_t *r, MPI_Comm comm, kd_ckpt *ck, kd_result *out) {
  kd_err err = KD_OK;
  kd_measure mu = thin_test_mixture(2);
  kd_kernel *k = thin_test_gauss(2);
  kd_pointset *ps = NULL;
  kd_target *t = NULL;
  kd_algo_kv_opts opt = {0};
  KD_TRY(kd_pointset_generate(comm, &mu, r->n_in, r->data_seed, &ps));
  KD_TRY(kd_target_create_empirical(k, ps, 0, &t));
  opt.ckpt = ck;
  KD_TRY(kd_algo_run_kv(comm, r->task, r->algo, r->kv, k, ps, t, 11, &opt, out));
cleanup:
  kd_target_destroy(&t);
  kd_pointset_destroy(&ps);
  kd_kernel_destroy(&k);
  kd_measure_free(&mu);
  return err;
}

static const damage_t quad_damage[] = {
    {-1, "/state/level", 0, 7, 0, KD_ERR_INPUT, "level 7 outside the safe points"},
    {-1, "/state/plan", 1, 4000, 0, KD_ERR_INPUT,
     "sample size N = 4000, the configuration gives 1024"},
    {-1, "/state/node_points", 0, 1, 1, KD_ERR_INPUT, "tree nodes hold"},
    {-1, "/state/gid", 0, 1024, 0, KD_ERR_INPUT, "sample row 1024 (of N = 1024)"},
    {0, NULL, 0, 0, 0, KD_OK, NULL}};

/* kt_compress, n_in = 5000 (K = 6, leaf height 3, 64 bins), at step 5: 4 nodes of 128 rows */
static const damage_t thin_damage[] = {
    {2, "/state/tree", 0, 4999, 0, KD_ERR_INPUT, "written for a tree of n_in = 4999"},
    {2, "/state/tree", 5, 3, 0, KD_ERR_INPUT, "g = 3"},
    {2, "/state/node_counts", 3, 127, 0, KD_ERR_INPUT,
     "node 3 holds 127 rows at step 5, expected 128"},
    {2, "/state/rows", 3 * 100, 5000, 0, KD_ERR_INPUT,
     "row 100 of /state/rows has global index 5000"},
    {2, "/state/rows", 3 * 7, -1, 0, KD_ERR_INPUT, "row 7 of /state/rows has global index -1"},
    {2, "/state/level", 0, 2, 0, KD_ERR_INPUT, "step 2 outside the steps 3..8"},
    {2, "/state/level", 0, 9, 0, KD_ERR_INPUT, "step 9 outside the steps 3..8"},
    {2, "/state/level", 0, 4, 0, KD_ERR_INPUT, "4 nodes at step 4, the tree has 16"},
    /* a coordinate of state row 300 (node 2: input rows near 3000, one rank sees it) */
    {2, "/state/rows", 3 * 300 + 2, 1e6, 0, KD_ERR_INPUT,
     "row 300 of /state/rows differs from input row"},
    {0, NULL, 0, 0, 0, KD_OK, NULL}};

/* refine keys pinned (rank 0 halves while L >= 8 n_out), not kt_compress's defaults */
static const char *const kv_kt[] = {"n_out=16", "g=2", "refine_pool=2", "refine_target=input",
                                    NULL};
static const char *const kv_ktc[] = {"n_out=16", "g=2", "refine_pool=2", "refine_target=compress",
                                     NULL};
static const char *const kv_rkh[] = {"n_out=16", NULL};
static const char *const kv_gs[] = {"n_out=32", "g=1", NULL};
static const char *const kv_gs1[] = {"n_out=32", NULL};

#define HERD_ROW(a) \
  { "herding " a, "herd", a, kv_herd, 0, run_herd, NULL, 1, 11, 0, 0 }
/* the thinning tree: Compress (g = 2, leaf level 3 .. K = 6, then rounds on rank 0), plain
 * halving (safe from K = 6 on), GS-Compress (300 rows: K = 4, leaf height 1, g = 1) */
#define THIN_ROW(name, a, kv, dmg, first, nsafe, n, seed) \
  { "thinning tree " name, "thin", a, kv, 1, run_thin, dmg, first, nsafe, n, seed }
static const row_t rows[] = {
    HERD_ROW("fw_eq"),
    HERD_ROW("fw_linesearch"),
    HERD_ROW("fcfw"),
    HERD_ROW("afw"),
    HERD_ROW("pfw"),
    HERD_ROW("bpcg"),
    HERD_ROW("bpcg_lazy"),
    HERD_ROW("pmp"),
    HERD_ROW("gcos"),
    HERD_ROW("fc_pmp"),
    HERD_ROW("fc_gcos"),
    THIN_ROW("(kt_compress)", "kt_compress", kv_kt, thin_damage, 3, 6, 5000, 42),
    THIN_ROW("(kt_compress, refine_target compress)", "kt_compress", kv_ktc, NULL, 3, 6, 5000, 42),
    THIN_ROW("(kh_compress)", "kh_compress", kv_kt, NULL, 3, 7, 5000, 42),
    THIN_ROW("(rkh)", "rkh", kv_rkh, NULL, 6, 8, 5000, 42),
    THIN_ROW("(gs_compress)", "gs_compress", kv_gs, NULL, 1, 4, 300, 5),
    THIN_ROW("(kh)", "kh", NULL, NULL, 6, 1, 5000, 42),
    THIN_ROW("(lkh)", "lkh", kv_rkh, NULL, 6, 8, 5000, 42),
    THIN_ROW("(kh_refine)", "kh_refine", kv_rkh, NULL, 6, 7, 5000, 42),
    THIN_ROW("(gs_thin)", "gs_thin", kv_gs1, NULL, 4, 3, 300, 5),
    {"recombination tree (Nystrom)", "quad", "nystrom_recombination", kv_nystrom, 1, run_quad,
     quad_damage, 0, 4, 0, 0},
    {"recombination tree (Mercer)", "quad", "mercer_recombination", kv_mercer, 1, run_quad,
     quad_damage, 1, 3, 0, 0},
    {"CTT study", "ctt_study", NULL, NULL, 1, run_ctt_study, NULL, -1, 0, 0, 0},
};
#define NROWS ((int)(sizeof rows / sizeof *rows))

/* Tasks that resume but have no row yet (none: every family checkpoints through kd_ckpt). */
static const char *const pending_tasks[] = {NULL};

/* ---------------- capturing sink ---------------- */
typedef struct {
  MPI_Comm comm;
  kd_result st[MAXST];
  int n;
  int64_t interrupt_at; /* raise the flag on the last rank after this iteration (-1: never) */
} cap_t;

static double metric(const kd_result *r, const char *name) {
  double v = NAN;
  kd_result_get_metric(r, name, &v);
  return v;
}

/* keep a copy of the state; rank 0's datasets (those the file would hold) broadcast */
static kd_err capture(void *vctx, const kd_result *s) {
  cap_t *c = vctx;
  int rank, size;
  MPI_Comm_rank(c->comm, &rank);
  MPI_Comm_size(c->comm, &size);
  if (c->n >= MAXST) return KD_ERR_INTERNAL;
  kd_result *d = &c->st[c->n++];
  memset(d, 0, sizeof *d);
  d->kernel_evals = s->kernel_evals;
  d->seconds = s->seconds;
  MPI_Bcast(&d->kernel_evals, 1, MPI_UINT64_T, 0, c->comm);
  for (int i = 0; i < s->n_metrics; i++)
    kd_result_set_metric(d, s->metrics[i].name, s->metrics[i].value);
  for (int64_t i = 0; i < s->n_trace; i++)
    kd_result_trace_push(d, s->trace_iter[i], s->trace_atoms[i], s->trace_mmd[i],
                         s->trace_seconds[i]);
  for (int i = 0; i < s->n_datasets; i++) {
    const kd_result_dataset *x = &s->datasets[i];
    int64_t dims[2] = {x->dims[0], x->dims[1]}, cnt = 1;
    MPI_Bcast(dims, 2, MPI_INT64_T, 0, c->comm);
    for (int r = 0; r < x->rank; r++) cnt *= dims[r];
    void *buf = malloc(8 * (size_t)(cnt > 0 ? cnt : 1));
    if (rank == 0 && cnt > 0)
      memcpy(buf, x->is_int ? (void *)x->i64 : (void *)x->f64, 8 * (size_t)cnt);
    MPI_Bcast(buf, (int)cnt, x->is_int ? MPI_INT64_T : MPI_DOUBLE, 0, c->comm);
    if (x->is_int)
      kd_result_add_i64(d, x->path, x->rank, dims, buf);
    else
      kd_result_add_f64(d, x->path, x->rank, dims, buf);
    free(buf);
  }
  if (c->interrupt_at >= 0 && (int64_t)metric(s, "iteration") == c->interrupt_at &&
      rank == size - 1)
    kd_interrupt_set(1);
  return KD_OK;
}

static void cap_free(cap_t *c) {
  for (int i = 0; i < c->n; i++) kd_result_free(&c->st[i]);
  c->n = 0;
}

/* run row r on comm: checkpoint every `every` safe points into c (c NULL: no sink), from resume */
static kd_err run_row(const row_t *r, MPI_Comm comm, cap_t *c, int64_t every,
                      const kd_result *resume, kd_result *out) {
  kd_ckpt *ck = NULL;
  kd_err err = kd_ckpt_create(comm, every, c ? capture : NULL, c, resume, &ck);
  if (c) c->comm = comm;
  if (err == KD_OK) err = r->run(r, comm, ck, out);
  kd_ckpt_destroy(&ck);
  return err;
}

/* ---------------- comparisons ---------------- */
static int skip_name(const char *name) {
  return strstr(name, "seconds") || strstr(name, "time") || strstr(name, "rank0");
}

/* the result bitwise: rule, mmd, datasets; metrics too unless across rank counts; wall times
 * excluded */
static int same_result(const kd_result *a, const kd_result *b, int metrics) {
  if (a->n != b->n || a->d != b->d) return 0;
  if (a->n > 0 && (memcmp(a->points, b->points, sizeof(double) * a->n * a->d) ||
                   memcmp(a->weights, b->weights, sizeof(double) * a->n) ||
                   memcmp(a->indices, b->indices, sizeof(int64_t) * a->n)))
    return 0;
  if (memcmp(&a->mmd, &b->mmd, sizeof a->mmd)) return 0;
  if (a->n_datasets != b->n_datasets) return 0;
  for (int i = 0; i < a->n_datasets; i++) {
    const kd_result_dataset *x = &a->datasets[i], *y = kd_result_find(b, x->path);
    if (skip_name(x->path)) continue;
    if (!y || y->is_int != x->is_int || y->rank != x->rank) return 0;
    int64_t cnt = 1;
    for (int r = 0; r < x->rank; r++) {
      if (x->dims[r] != y->dims[r]) return 0;
      cnt *= x->dims[r];
    }
    if (cnt > 0 && memcmp(x->is_int ? (void *)x->i64 : (void *)x->f64,
                          y->is_int ? (void *)y->i64 : (void *)y->f64, 8 * (size_t)cnt))
      return 0;
  }
  for (int i = 0; metrics && i < a->n_metrics; i++) {
    double v = NAN;
    if (skip_name(a->metrics[i].name)) continue;
    if (!kd_result_get_metric(b, a->metrics[i].name, &v) ||
        memcmp(&v, &a->metrics[i].value, sizeof v))
      return 0;
  }
  return 1;
}

/* the same rule to round-off (another rank count where the continuation is not bitwise) */
static int close_result(const kd_result *a, const kd_result *b) {
  if (a->n != b->n || a->d != b->d) return 0;
  for (kd_gidx i = 0; i < a->n; i++)
    if (a->indices[i] != b->indices[i] || fabs(a->weights[i] - b->weights[i]) > 1e-12) return 0;
  return fabs(a->mmd - b->mmd) <= 1e-12 * (1 + fabs(a->mmd)) || (isnan(a->mmd) && isnan(b->mmd));
}

/* the same error code on every rank */
static int agreed(kd_err e) {
  int lo = (int)e, hi = (int)e;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

/* a copy of s with dataset `path` removed (shrink 0), its leading extent one smaller (shrink 1) or
 * changed as dm says (dm != NULL) */
static void damaged(const kd_result *s, const char *path, int shrink, const damage_t *dm,
                    kd_result *d) {
  memset(d, 0, sizeof *d);
  d->seconds = s->seconds;
  d->kernel_evals = s->kernel_evals;
  for (int i = 0; i < s->n_metrics; i++)
    kd_result_set_metric(d, s->metrics[i].name, s->metrics[i].value);
  for (int i = 0; i < s->n_datasets; i++) {
    const kd_result_dataset *x = &s->datasets[i];
    int64_t dims[2] = {x->dims[0], x->dims[1]};
    const int hit = !strcmp(x->path, path);
    if (hit && !dm) {
      if (!shrink) continue;
      dims[0] -= 1;
    }
    if (x->is_int)
      kd_result_add_i64(d, x->path, x->rank, dims, x->i64);
    else
      kd_result_add_f64(d, x->path, x->rank, dims, x->f64);
    if (hit && dm) {
      kd_result_dataset *y = &d->datasets[d->n_datasets - 1];
      if (y->is_int)
        y->i64[dm->index] = (dm->add ? y->i64[dm->index] : 0) + (int64_t)dm->value;
      else
        y->f64[dm->index] = (dm->add ? y->f64[dm->index] : 0) + dm->value;
    }
  }
}

/* ---------------- the checks ---------------- */
/* (a) every safe point, resumed bitwise; returns the states in *c (iterations in order) */
static void check_every_safe_point(const row_t *r, const kd_result *ref, cap_t *c) {
  kd_result out = KD_RESULT_INIT;
  c->interrupt_at = -1;
  KD_TEST_OK(run_row(r, MPI_COMM_WORLD, c, 1, NULL, &out));
  KD_TEST(same_result(ref, &out, 1), "%s: checkpoint_every = 1 leaves the result unchanged",
          r->name);
  KD_TEST(c->n >= 1 && (!r->n_safe || c->n == r->n_safe),
          "%s: %d safe points with checkpoint_every = 1 (got %d)", r->name, r->n_safe, c->n);
  KD_TEST(r->first < 0 || (c->n > 0 && metric(&c->st[0], "iteration") == (double)r->first),
          "%s: the first safe point is iteration %lld", r->name, (long long)r->first);
  for (int i = 0; i < c->n; i++) {
    KD_TEST(metric(&c->st[i], "interrupted") == 0 &&
                (i == 0 || metric(&c->st[i], "iteration") > metric(&c->st[i - 1], "iteration")),
            "%s: periodic state %d at increasing iterations, not interrupted", r->name, i);
    KD_TEST_OK(run_row(r, MPI_COMM_WORLD, NULL, 0, &c->st[i], &out));
    KD_TEST(same_result(ref, &out, 1), "%s: resumed from iteration %g: bitwise the uninterrupted",
            r->name, metric(&c->st[i], "iteration"));
  }
  kd_result_free(&out);
}

/* (b) saved at p ranks, resumed at 1 */
static void check_other_rank_count(const row_t *r, const cap_t *c) {
  kd_result ref1 = KD_RESULT_INIT, out = KD_RESULT_INIT;
  KD_TEST_OK(run_row(r, MPI_COMM_SELF, NULL, 0, NULL, &ref1));
  for (int i = 0; i < c->n; i++) {
    KD_TEST_OK(run_row(r, MPI_COMM_SELF, NULL, 0, &c->st[i], &out));
    KD_TEST(r->cross_bitwise ? same_result(&ref1, &out, 0) : close_result(&ref1, &out),
            "%s: saved at %d ranks (iteration %g), resumed at 1: the 1-rank result %s", r->name,
            kd_test_size(), metric(&c->st[i], "iteration"),
            r->cross_bitwise ? "bitwise" : "to 1e-12");
  }
  kd_result_free(&ref1);
  kd_result_free(&out);
}

/* (c) damaged states: every dataset missing, every dataset one row short; with c, the row's own */
static void check_damaged(const row_t *r, const kd_result *s, const cap_t *c) {
  kd_result d = KD_RESULT_INIT, out = KD_RESULT_INIT;
  for (int i = 0; i < s->n_datasets; i++) {
    const kd_result_dataset *x = &s->datasets[i];
    for (int shrink = 0; shrink <= (x->rank > 0 && x->dims[0] > 0); shrink++) {
      damaged(s, x->path, shrink, NULL, &d);
      kd_err e = run_row(r, MPI_COMM_WORLD, NULL, 0, &d, &out);
      const char *m = kd_err_message();
      KD_TEST(e != KD_OK && e != KD_ERR_INTERRUPTED && e != KD_ERR_INTERNAL && agreed(e) &&
                  !strchr(m, '\n') && (shrink || strstr(m, x->path)),
              "%s: %s %s refused with one line%s: %s", r->name, x->path,
              shrink ? "one row short" : "missing", shrink ? "" : " naming it", m);
      kd_err_clear();
      kd_result_free(&d);
    }
  }
  for (const damage_t *dm = c ? r->damage : NULL; dm && dm->path; dm++) {
    const int at = dm->at < 0 ? c->n - 1 : dm->at;
    if (!KD_TEST(at < c->n, "%s: a periodic state %d to damage", r->name, at)) continue;
    damaged(&c->st[at], dm->path, 0, dm, &d);
    kd_err e = run_row(r, MPI_COMM_WORLD, NULL, 0, &d, &out);
    KD_TEST(e == dm->code && agreed(e) && strstr(kd_err_message(), dm->want),
            "%s: damaged %s refused with %s naming '%s': %s", r->name, dm->path,
            kd_err_string(dm->code), dm->want, kd_err_message());
    kd_err_clear();
    kd_result_free(&d);
  }
  kd_result_free(&out);
}

/* (c) through a checkpoint file: another configuration is refused by the hash, the same one
 * resumes bitwise */
static void check_config_hash(const row_t *r, const kd_result *s, const kd_result *ref) {
  static const char yaml_a[] = "task: x\nkernel:\n  name: gaussian\n  ls: 1\nrun:\n  seed: 3\n";
  static const char yaml_b[] = "task: x\nkernel:\n  name: gaussian\n  ls: 2\nrun:\n  seed: 3\n";
  char path[256];
  const char *algo = r->algo ? r->algo : r->task;
  kd_result back = KD_RESULT_INIT, out = KD_RESULT_INIT;
  int64_t it = -1;
  snprintf(path, sizeof path, "ckconf_%s_np%d.h5", algo, kd_test_size());
  char *inputs = NULL;
  kd_checkpoint_meta meta = {r->task,    algo,           yaml_a, (int64_t)metric(s, "iteration"),
                             "periodic", kd_test_size(), NULL,   0};
  KD_TEST_OK(kd_checkpoint_write(MPI_COMM_WORLD, path, &meta, s));
  kd_err e = kd_checkpoint_read(MPI_COMM_WORLD, path, r->task, algo, yaml_b, &back, &it, &inputs);
  KD_TEST(e == KD_ERR_CONFIG && agreed(e) &&
              strstr(kd_err_message(), "kernel.ls: 1 in the checkpoint, 2 now"),
          "%s: another configuration refused by the config hash: %s", r->name, kd_err_message());
  kd_err_clear();
  kd_result_free(&back);
  KD_TEST_OK(kd_checkpoint_read(MPI_COMM_WORLD, path, r->task, algo, yaml_a, &back, &it, &inputs));
  KD_TEST(it == (int64_t)metric(s, "iteration"), "%s: the file's iteration", r->name);
  KD_TEST(inputs && !inputs[0], "%s: no input fingerprints written, none read back", r->name);
  free(inputs);
  KD_TEST_OK(run_row(r, MPI_COMM_WORLD, NULL, 0, &back, &out));
  KD_TEST(same_result(ref, &out, 1), "%s: resumed through the file: bitwise", r->name);
  if (kd_test_rank() == 0) remove(path);
  kd_result_free(&back);
  kd_result_free(&out);
}

static int safe_point(const cap_t *c, double it) {
  for (int i = 0; i < c->n; i++)
    if (metric(&c->st[i], "iteration") == it) return 1;
  return 0;
}

/* (d) an interrupt on the last rank after safe point k stops every rank at the next safe point
 * (an algorithm whose steps do no reduction, e.g. bpcg_lazy's lazy steps, at a later one: the
 * flag travels with its next reduction) */
static void check_interrupts(const row_t *r, const kd_result *ref, const cap_t *c) {
  kd_result out = KD_RESULT_INIT;
  for (int i = 0; i < c->n; i++) {
    const int64_t k = (int64_t)metric(&c->st[i], "iteration");
    cap_t ci;
    memset(&ci, 0, sizeof ci);
    ci.interrupt_at = k;
    kd_err e = run_row(r, MPI_COMM_WORLD, &ci, 1, NULL, &out);
    kd_interrupt_set(0);
    if (i == c->n - 1) {
      KD_TEST(e == KD_OK && agreed(e) && same_result(ref, &out, 1),
              "%s: interrupt after the last safe point (%lld) is ignored", r->name, (long long)k);
    } else {
      const kd_result *s = ci.n ? &ci.st[ci.n - 1] : NULL;
      double lo = s ? metric(s, "iteration") : -1, hi = lo;
      MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      KD_TEST(e == KD_ERR_INTERRUPTED && agreed(e) && s && lo == hi && safe_point(c, lo) &&
                  lo >= metric(&c->st[i + 1], "iteration") && metric(s, "interrupted") == 1,
              "%s: interrupt on the last rank after %lld: every rank stops at the same safe "
              "point from %g on (%g): %s",
              r->name, (long long)k, metric(&c->st[i + 1], "iteration"), lo, kd_err_message());
      kd_err_clear();
      if (s) {
        KD_TEST_OK(run_row(r, MPI_COMM_WORLD, NULL, 0, s, &out));
        KD_TEST(same_result(ref, &out, 1), "%s: resumed after the interrupt at %g: bitwise",
                r->name, lo);
      }
    }
    cap_free(&ci);
  }
  kd_result_free(&out);
}

/* (d) a flag pending on the last rank before the run, signal-only checkpointing: every rank stops
 * at the first safe point */
static void check_pending_at_start(const row_t *r, const cap_t *c) {
  kd_result out = KD_RESULT_INIT;
  cap_t ci;
  memset(&ci, 0, sizeof ci);
  ci.interrupt_at = -1;
  if (kd_test_rank() == kd_test_size() - 1) kd_interrupt_set(1);
  kd_err e = run_row(r, MPI_COMM_WORLD, &ci, 0, NULL, &out);
  kd_interrupt_set(0);
  KD_TEST(e == KD_ERR_INTERRUPTED && agreed(e) && ci.n == 1 &&
              safe_point(c, metric(&ci.st[0], "iteration")) &&
              metric(&ci.st[0], "interrupted") == 1,
          "%s: a flag pending on the last rank at the start stops every rank at a safe point "
          "(%g): %s",
          r->name, ci.n ? metric(&ci.st[0], "iteration") : -1, kd_err_message());
  kd_err_clear();
  cap_free(&ci);
  kd_result_free(&out);
}

/* Joining the table is the only way to checkpoint: every algorithm of a task that can resume has
 * a row, or is a baseline without a safe point (it runs to the end), or belongs to a pending
 * family; every task that can resume has a row (or is pending). */
/* run to the end without a safe point (the score-based family: checkpointing not written yet) */
static const char *const no_safe_point[] = {"uniform", "monte_carlo", "stein_thin", "rpcholesky",
                                            "skt",     "sr",          "lskt",       "lsr",
                                            "sc",      "lsc",         NULL};

static int listed(const char *const *list, const char *name) {
  for (int j = 0; list[j]; j++)
    if (!strcmp(list[j], name)) return 1;
  return 0;
}

static void check_registry(void) {
  for (int i = 0; kd_algo_at(i); i++) {
    const kd_algo_desc *a = kd_algo_at(i);
    const kd_task_desc *t = kd_task_find(a->task);
    int found = 0;
    for (int j = 0; j < NROWS; j++)
      found |= rows[j].algo && !strcmp(rows[j].algo, a->name) && !strcmp(rows[j].task, a->task);
    KD_TEST(!t || !t->can_resume || found || listed(no_safe_point, a->name) ||
                listed(pending_tasks, a->task),
            "algorithm %s of task %s (which resumes) has no row in the checkpoint conformance "
            "table",
            a->name, a->task);
    /* the descriptor's flag says the same as this table */
    KD_TEST(!(a->flags & KD_ALGO_RESUMABLE) == !found,
            "algorithm %s: flag KD_ALGO_RESUMABLE is %d but it %s a row here", a->name,
            !!(a->flags & KD_ALGO_RESUMABLE), found ? "has" : "has no");
  }
  for (int j = 0; j < NROWS; j++)
    KD_TEST(!rows[j].algo || kd_algo_find(rows[j].task, rows[j].algo), "row %s: %s is registered",
            rows[j].name, rows[j].algo);
  for (int i = 0; kd_task_at(i); i++) {
    const kd_task_desc *t = kd_task_at(i);
    int found = listed(pending_tasks, t->name);
    for (int j = 0; j < NROWS; j++) found |= !strcmp(rows[j].task, t->name);
    KD_TEST(!t->can_resume || found,
            "task %s can resume but has no row in the checkpoint conformance table", t->name);
  }
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  check_registry();
  for (int j = 0; j < NROWS; j++) {
    const row_t *r = &rows[j];
    kd_result ref = KD_RESULT_INIT;
    cap_t c;
    memset(&c, 0, sizeof c);
    KD_TEST_OK(run_row(r, MPI_COMM_WORLD, NULL, 0, NULL, &ref));
    check_every_safe_point(r, &ref, &c);
    if (c.n >= 1) {
      check_other_rank_count(r, &c);
      check_damaged(r, &c.st[c.n - 1], &c);
      check_damaged(r, &c.st[0], NULL);
      check_pending_at_start(r, &c);
      check_config_hash(r, &c.st[c.n - 1], &ref);
      check_interrupts(r, &ref, &c);
    }
    if (kd_test_rank() == 0)
      printf("checkpoint conformance: %s: %d safe points from iteration %g\n", r->name, c.n,
             c.n ? metric(&c.st[0], "iteration") : -1.0);
    cap_free(&c);
    kd_result_free(&ref);
  }
  return kd_test_finish();
}
