/* test_algo_conformance.c - every entry of the algorithm registry (kd_algo_at(i) until NULL) runs
 * on a small problem chosen by its task, on the job's communicator (1, 2, 4 ranks) and, on rank 0,
 * on MPI_COMM_SELF in the same program (the one-rank reference). An entry whose task has no case
 * in kCases fails the suite, so an algorithm cannot be registered without joining it.
 *
 * Problems (all closed form or exact double sums written here, independent of src/embed/):
 *   herd: Gaussian kernel ls = 0.5, 200 candidates uniform on [-1,1]^2, target uniform on [-1,1]^2
 *         with z(x) = prod_j ls sqrt(pi/2)/2 [erf((1-x_j)/(ls sqrt2)) + erf((1+x_j)/(ls sqrt2))]
 *         and zz = prod_j (1/4)(2 ls sqrt(2 pi) erf(2/(ls sqrt2)) + 2 ls^2 (exp(-2/ls^2) - 1));
 *   thin: 320 seeded draws of N(0, I_2) (not a power of 4: remainder rows), Gaussian ls = 1,
 *         target their empirical measure, n_out = 16;
 *   quad: periodic Sobolev r = 1 on the torus [0,1)^2 (z = 1, zz = 1), n = 10;
 *   ctt:  X ~ N(0, I_2), Y ~ N((1.5, 0), I_2), 64 rows each, s = 16 bins of 8 rows, each
 *         KT-Compressed to 4 (g = 0), B = 39, alpha = 0.05; subsample_test draws n_out = 64
 *         (all rows), wblock cuts 2 blocks of 32, lrctt uses r = 4096 features, actt its 5
 *         length scales (output rows: the coresets of the middle one, ls = 1).
 * Checks, per entry:
 *   - output: dimension, finite points, size (thin: n_out = 16, or floor(n_in/2) = 160 for an
 *     algorithm without n_out (kh); quad: 1..n; herd: 1..200 atoms; ctt: 16 x 4 coreset rows,
 *     ctt_exact: none); weights >= 0 summing to 1 (thinning without reweighting: exactly 1/n);
 *     indices distinct input rows whose coordinates are the output points (herd: candidates,
 *     thin: data, quad: its internal sample, ctt: the pooled (X, Y) rows); the result replicated
 *     bit for bit on every rank;
 *   - reported MMD = kd_mmd of the output and = the direct double sum, to round-off of the
 *     summed terms: |MMD_a^2 - MMD_b^2| <= 1e-12 (zz + w^T K w); ctt: the reported statistic =
 *     the MMD between the X- and Y-labelled (coreset) averages by a direct double sum (wblock:
 *     the mean of the two blocks' double sums; lrctt: within 5 % of it, its features' error);
 *   - MMD below its baseline on the problem: herd and quad below the closed-form root mean
 *     square MMD of Monte Carlo with as many points, sqrt((k(x,x) - zz)/n); thin below the
 *     closed-form rms MMD of uniform subsampling without replacement,
 *     sqrt((N-n)/(n(N-1)) (mean_i k(x_i,x_i) - zz)); ctt: the shifted samples are rejected with
 *     a p-value in [1/(B+1), alpha] (actt, without a p-value: u_alpha in [0, 5]). The
 *     baselines themselves (uniform, monte_carlo): the mean of MMD^2 over 32 seeds lies within
 *     4 standard errors of that closed form;
 *   - the same seed gives identical bits; another seed changes the output of the randomised
 *     tasks (thin, quad, ctt) and leaves the deterministic herding output unchanged;
 *   - the result on the job's communicator equals the MPI_COMM_SELF reference: indices and points
 *     bit for bit, weights bit for bit (thin, ctt) or to 1e-12 (herd, quad: their reductions run
 *     in rank-count dependent order, docs/herding.md, docs/quadrature.md), MMD^2 to 1e-12, ctt's
 *     statistic, p-value and permutation statistics bit for bit. */
#include <stdlib.h>
#include <string.h>

#include "algo/twosample/ctt_impl.h"
#include "kd_algo_kv.h"
#include "kd_test.h"

static const double kPi = 3.14159265358979323846;

/* ---------------- problems ---------------- */
typedef struct {
  MPI_Comm comm;
  kd_kernel *k;
  kd_pointset *pts; /* candidates (herd), data (thin), X (ctt); NULL (quad) */
  kd_pointset *y;   /* ctt: Y */
  kd_ctt_in ctt_in;
  kd_target *t;
  kd_measure mu;
  double *rows; /* replicated rows of pts then y (N*d) */
  kd_gidx N, m; /* rows in rows[]; m = rows of pts (ctt: of X) */
  int d;
  double ls;
  double zz; /* herd, thin, quad: int int k dmu dmu (closed form or exact double sum) */
} problem;

static void problem_free(problem *p) {
  kd_target_destroy(&p->t);
  kd_pointset_destroy(&p->pts);
  kd_pointset_destroy(&p->y);
  kd_kernel_destroy(&p->k);
  kd_measure_free(&p->mu);
  free(p->rows);
  memset(p, 0, sizeof *p);
}

static double gauss_k(const double *x, const double *y, int d, double ls) {
  double s = 0;
  for (int j = 0; j < d; j++) s += (x[j] - y[j]) * (x[j] - y[j]);
  return exp(-s / (2 * ls * ls));
}

/* periodic Sobolev r = 1: prod_j (1 + 2 pi^2 B_2({x_j - y_j})), B_2(t) = t^2 - t + 1/6 */
static double sobolev1_k(const double *x, const double *y, int d) {
  double v = 1;
  for (int j = 0; j < d; j++) {
    double t = x[j] - y[j];
    t -= floor(t);
    v *= 1 + 2 * kPi * kPi * (t * t - t + 1.0 / 6.0);
  }
  return v;
}

/* uniform on [-1,1]^d, Gaussian kernel: z(x) and zz (header) */
static double box_z(const double *x, int d, double ls) {
  double v = 1;
  for (int j = 0; j < d; j++)
    v *= ls * sqrt(kPi / 2) / 2 *
         (erf((1 - x[j]) / (ls * sqrt(2.0))) + erf((1 + x[j]) / (ls * sqrt(2.0))));
  return v;
}

static double box_zz(int d, double ls) {
  const double L = 2;
  double one = (L * ls * sqrt(2 * kPi) * erf(L / (ls * sqrt(2.0))) +
                2 * ls * ls * (exp(-L * L / (2 * ls * ls)) - 1)) /
               (L * L);
  return pow(one, d);
}

static kd_err make_kernel(kd_kernel_type type, double ls, int d, kd_kernel **k) {
  kd_kernel_params kp = kd_kernel_params_default(type);
  kp.ls = ls;
  kp.order = 1;
  return kd_kernel_create(&kp, d, k);
}

static kd_err gather_rows(problem *p) {
  kd_err err = KD_OK;
  KD_ALLOC(p->rows, p->N * p->d);
  if (p->pts) KD_TRY(kd_pointset_allgather(p->pts, p->rows));
  if (p->y) KD_TRY(kd_pointset_allgather(p->y, p->rows + p->m * p->d));
cleanup:
  return err;
}

static kd_err setup_herd(MPI_Comm comm, problem *p) {
  kd_err err = KD_OK;
  p->comm = comm;
  p->d = 2;
  p->ls = 0.5;
  p->N = p->m = 200;
  p->mu.type = KD_MEASURE_UNIFORM_BOX;
  p->mu.d = 2;
  KD_ALLOC(p->mu.lo, 2);
  KD_ALLOC(p->mu.hi, 2);
  for (int j = 0; j < 2; j++) p->mu.lo[j] = -1, p->mu.hi[j] = 1;
  KD_TRY(make_kernel(KD_KERNEL_GAUSSIAN, p->ls, 2, &p->k));
  KD_TRY(kd_pointset_generate(comm, &p->mu, p->N, 31, &p->pts));
  KD_TRY(kd_target_create_closed(comm, p->k, &p->mu, &p->t));
  KD_TRY(gather_rows(p));
  p->zz = box_zz(2, p->ls);
cleanup:
  return err;
}

static kd_err normal_measure(kd_measure *mu, double shift) {
  kd_err err = KD_OK;
  mu->type = KD_MEASURE_GAUSSIAN;
  mu->d = 2;
  KD_ALLOC(mu->mean, 2);
  KD_ALLOC(mu->sd, 2);
  mu->mean[0] = shift;
  mu->sd[0] = mu->sd[1] = 1;
cleanup:
  return err;
}

static kd_err setup_thin(MPI_Comm comm, problem *p) {
  kd_err err = KD_OK;
  p->comm = comm;
  p->d = 2;
  p->ls = 1.0;
  p->N = p->m = 320;
  KD_TRY(normal_measure(&p->mu, 0.0));
  KD_TRY(make_kernel(KD_KERNEL_GAUSSIAN, p->ls, 2, &p->k));
  KD_TRY(kd_pointset_generate(comm, &p->mu, p->N, 32, &p->pts));
  KD_TRY(kd_target_create_empirical(p->k, p->pts, 0, &p->t));
  KD_TRY(gather_rows(p));
  double s = 0;
  for (kd_gidx i = 0; i < p->N; i++)
    for (kd_gidx j = 0; j < p->N; j++) s += gauss_k(p->rows + i * 2, p->rows + j * 2, 2, p->ls);
  p->zz = s / ((double)p->N * (double)p->N);
cleanup:
  return err;
}

static kd_err setup_quad(MPI_Comm comm, problem *p) {
  kd_err err = KD_OK;
  p->comm = comm;
  p->d = 2;
  p->mu.type = KD_MEASURE_TORUS;
  p->mu.d = 2;
  KD_TRY(make_kernel(KD_KERNEL_SOBOLEV, 1.0, 2, &p->k));
  KD_TRY(kd_target_create_closed(comm, p->k, &p->mu, &p->t));
  p->zz = 1.0;
cleanup:
  return err;
}

static kd_err setup_ctt(MPI_Comm comm, problem *p) {
  kd_err err = KD_OK;
  kd_measure my;
  memset(&my, 0, sizeof my);
  p->comm = comm;
  p->d = 2;
  p->ls = 1.0;
  p->m = 64;
  p->N = 128;
  KD_TRY(normal_measure(&p->mu, 0.0));
  KD_TRY(normal_measure(&my, 1.5));
  KD_TRY(make_kernel(KD_KERNEL_GAUSSIAN, p->ls, 2, &p->k));
  KD_TRY(kd_pointset_generate(comm, &p->mu, p->m, 33, &p->pts));
  KD_TRY(kd_pointset_generate(comm, &my, p->N - p->m, 34, &p->y));
  p->ctt_in.y = p->y;
  KD_TRY(gather_rows(p));
cleanup:
  kd_measure_free(&my);
  return err;
}

/* ---------------- independent MMDs ---------------- */
/* MMD^2 of the rule (X, w) against the problem's target by direct sums; *scale = zz + w^T K w
 * (the size of the terms that cancel). */
static double direct_mmd2(const char *task, const problem *p, const kd_result *r, double *scale) {
  const int d = p->d;
  double wkw = 0, wz = 0;
  for (int64_t i = 0; i < r->n; i++) {
    const double *xi = r->points + i * d;
    for (int64_t j = 0; j < r->n; j++) {
      const double *xj = r->points + j * d;
      double kij = strcmp(task, "quad") ? gauss_k(xi, xj, d, p->ls) : sobolev1_k(xi, xj, d);
      wkw += r->weights[i] * r->weights[j] * kij;
    }
    double zi = 1.0; /* quad: Sobolev on the torus, z = 1 */
    if (!strcmp(task, "herd")) zi = box_z(xi, d, p->ls);
    if (!strcmp(task, "thin")) {
      zi = 0;
      for (kd_gidx j = 0; j < p->N; j++) zi += gauss_k(xi, p->rows + j * d, d, p->ls);
      zi /= (double)p->N;
    }
    wz += r->weights[i] * zi;
  }
  *scale = p->zz + wkw;
  return p->zz - 2 * wz + wkw;
}

/* ctt: squared MMD between the X-labelled and the Y-labelled averages. ctt (coresets): each
 * coreset row has its output weight 1/(s |coreset|); X-coresets (bin < s_m) count +, Y -, each
 * side rescaled to sum 1. ctt_exact: the full samples with 1/m and -1/n. */
static double ctt_direct_mmd2(const problem *p, const kd_result *r) {
  const int d = p->d;
  int64_t n = r->n;
  double *w = NULL;
  const double *X = r->points;
  double nblk = 0;
  if (n == 0 && kd_result_get_metric(r, "blocks", &nblk)) { /* wblock: mean of the blocks' */
    const int64_t bl = p->m / (int64_t)nblk;                /* MMD^2 (rows j bl .. of X, Y) */
    double v = 0;
    for (int64_t j = 0; j < (int64_t)nblk; j++)
      for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
          for (int64_t i = 0; i < bl; i++)
            for (int64_t l = 0; l < bl; l++)
              v += (a == b ? 1.0 : -1.0) / ((double)bl * bl * nblk) *
                   gauss_k(p->rows + (a * p->m + j * bl + i) * d,
                           p->rows + (b * p->m + j * bl + l) * d, d, p->ls);
    return v;
  }
  if (n == 0) { /* ctt_exact, subsample_test with n_out = m = n: the full samples */
    n = p->N;
    X = p->rows;
    w = malloc(sizeof(double) * n);
    for (int64_t i = 0; i < n; i++) w[i] = i < p->m ? 1.0 / p->m : -1.0 / (p->N - p->m);
  } else {
    const kd_result_dataset *cb = kd_result_find(r, "/test/coreset_bin");
    const kd_result_dataset *bins = kd_result_find(r, "/test/bins");
    if (!cb || !bins) return NAN;
    const double s = (double)(bins->i64[0] + bins->i64[1]);
    w = malloc(sizeof(double) * n);
    for (int64_t i = 0; i < n; i++)
      w[i] = cb->i64[i] < bins->i64[0] ? r->weights[i] * s / (double)bins->i64[0]
                                       : -r->weights[i] * s / (double)bins->i64[1];
  }
  double v = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) v += w[i] * w[j] * gauss_k(X + i * d, X + j * d, d, p->ls);
  free(w);
  return v;
}

/* ---------------- the case table: one row per task ---------------- */
typedef struct {
  const char *task;
  kd_err (*setup)(MPI_Comm comm, problem *p);
  const char *const *kv; /* settings, applied when the algorithm declares the key */
  int randomised;        /* 1: another seed must change the output */
  int bitwise_weights;   /* 1: weights identical to the COMM_SELF reference bit for bit */
} task_case;

static const char *const kHerdKv[] = {"max_iter=30", NULL};
static const char *const kThinKv[] = {"n_out=16", "g=1", "replacement=false", NULL};
static const char *const kQuadKv[] = {"n=10", NULL};
static const char *const kCttKv[] = {"s=16",     "g=0",      "B=39", "alpha=0.05",
                                     "n_out=64", "block=32", NULL};

static const task_case kCases[] = {
    {"herd", setup_herd, kHerdKv, 0, 0},
    {"thin", setup_thin, kThinKv, 1, 1},
    {"quad", setup_quad, kQuadKv, 1, 0},
    {"ctt", setup_ctt, kCttKv, 1, 1},
};

/* baselines: their own MMD is checked against the closed-form expectation instead */
static int is_baseline(const char *name) {
  return !strcmp(name, "uniform") || !strcmp(name, "monte_carlo");
}

/* the settings of kv[] whose key desc declares (out[] NULL-terminated, at most 15) */
static void declared_kv(const kd_algo_desc *desc, const char *const *kv, const char **out) {
  int n = 0;
  for (int i = 0; kv[i] && n < 15; i++) {
    size_t l = (size_t)(strchr(kv[i], '=') - kv[i]);
    for (int j = 0; j < desc->n_params; j++)
      if (strlen(desc->params[j].key) == l && !strncmp(desc->params[j].key, kv[i], l))
        out[n++] = kv[i];
  }
  out[n] = NULL;
}

static kd_err run(const kd_algo_desc *desc, const task_case *tc, problem *p, uint64_t seed,
                  kd_result *r) {
  const char *kv[16];
  declared_kv(desc, tc->kv, kv);
  kd_algo_kv_opts opt = {0};
  opt.fill_mmd = 1;
  if (!strcmp(tc->task, "ctt")) opt.task_in = &p->ctt_in;
  return kd_algo_run_kv(p->comm, desc->task, desc->name, kv, p->k, p->pts, p->t, seed, &opt, r);
}

/* the output bits (rows, weights, indices, mmd, extra datasets); metrics hold timings: left out */
static int same_bits(const kd_result *a, const kd_result *b) {
  if (a->n != b->n || a->d != b->d || a->n_datasets != b->n_datasets) return 0;
  if (a->n && (memcmp(a->points, b->points, sizeof(double) * a->n * a->d) ||
               memcmp(a->weights, b->weights, sizeof(double) * a->n) ||
               memcmp(a->indices, b->indices, sizeof(int64_t) * a->n)))
    return 0;
  if (memcmp(&a->mmd, &b->mmd, sizeof a->mmd)) return 0;
  for (int i = 0; i < a->n_datasets; i++) {
    const kd_result_dataset *x = &a->datasets[i], *y = kd_result_find(b, x->path);
    if (!y || y->is_int != x->is_int || y->rank != x->rank) return 0;
    int64_t cnt = 1;
    for (int j = 0; j < x->rank; j++) cnt *= x->dims[j];
    if (cnt && memcmp(x->is_int ? (const void *)x->i64 : (const void *)x->f64,
                      y->is_int ? (const void *)y->i64 : (const void *)y->f64, (size_t)cnt * 8))
      return 0;
  }
  return 1;
}

static uint64_t fnv(uint64_t h, const void *data, size_t len) {
  const unsigned char *c = data;
  for (size_t i = 0; i < len; i++) h = (h ^ c[i]) * 1099511628211ULL;
  return h;
}

/* the result is the same on every rank (hash of its bits, min = max over ranks) */
static int replicated(const kd_result *r) {
  uint64_t h = fnv(1469598103934665603ULL, &r->n, sizeof r->n);
  if (r->n) {
    h = fnv(h, r->points, sizeof(double) * r->n * r->d);
    h = fnv(h, r->weights, sizeof(double) * r->n);
    h = fnv(h, r->indices, sizeof(int64_t) * r->n);
  }
  h = fnv(h, &r->mmd, sizeof r->mmd);
  uint64_t lo = h, hi = h;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

static int declares(const kd_algo_desc *desc, const char *key) {
  for (int j = 0; j < desc->n_params; j++)
    if (!strcmp(desc->params[j].key, key)) return 1;
  return 0;
}

/* output size: thin n_out = 16 (kh, without the key: floor(n_in/2) = 160); quad at most n = 10;
 * herd at most the 200 candidates; ctt 16 coresets of 4, ctt_exact no rows */
static void check_size(const kd_algo_desc *desc, const problem *p, const kd_result *r) {
  const char *task = desc->task;
  if (!strcmp(task, "thin")) {
    kd_gidx want = declares(desc, "n_out") ? 16 : p->N / 2;
    KD_TEST(r->n == want, "%s: %lld rows, want %lld", desc->name, (long long)r->n, (long long)want);
  } else if (!strcmp(task, "quad")) {
    KD_TEST(r->n >= 1 && r->n <= 10, "%s: %lld points <= n = 10", desc->name, (long long)r->n);
  } else if (!strcmp(task, "herd")) {
    KD_TEST(r->n >= 1 && r->n <= p->m, "%s: %lld atoms of %lld candidates", desc->name,
            (long long)r->n, (long long)p->m);
  } else if (!strcmp(task, "ctt")) {
    kd_gidx want = declares(desc, "s") ? 64 : 0;
    KD_TEST(r->n == want, "%s: %lld coreset rows, want %lld", desc->name, (long long)r->n,
            (long long)want);
  }
}

/* shape, weights, indices and rows */
static void check_output(const char *name, const char *task, const problem *p, const kd_result *r) {
  const int exact_ctt = !strcmp(task, "ctt") && r->n == 0;
  KD_TEST(r->d == p->d, "%s: dimension %d", name, r->d);
  KD_TEST(r->n >= 1 || exact_ctt, "%s: %lld output rows", name, (long long)r->n);
  if (r->n < 1) return;
  double s = 0, wmin = INFINITY;
  int finite = 1, unif = 1;
  for (int64_t i = 0; i < r->n; i++) {
    s += r->weights[i];
    wmin = fmin(wmin, r->weights[i]);
    unif &= r->weights[i] == 1.0 / (double)r->n;
    for (int j = 0; j < r->d; j++) finite &= isfinite(r->points[i * r->d + j]) ? 1 : 0;
  }
  KD_TEST(finite, "%s: finite points", name);
  /* sc / lsc's constant-preserving weights (Li et al. 2024) only sum to 1 */
  double rw = 0;
  const int signed_w = kd_result_get_metric(r, "signed_weights", &rw) && rw == 1.0;
  KD_TEST(wmin >= 0 || signed_w, "%s: weights >= 0 (min %g)", name, wmin);
  KD_TEST_NEAR(s, 1.0, 1e-12, name);
  if (!strcmp(task, "thin") && !signed_w && !kd_result_get_metric(r, "mmd_convex_weights", &rw))
    KD_TEST(unif, "%s: thinning weights are exactly 1/n = 1/%lld", name, (long long)r->n);
  /* indices: distinct; rows of the input (quad: of its internal sample, monte_carlo: -1) */
  int distinct = 1, rows_ok = 1, n_idx = 0;
  for (int64_t i = 0; i < r->n; i++) {
    if (r->indices[i] < 0) continue;
    n_idx++;
    for (int64_t j = 0; j < i; j++) distinct &= r->indices[i] != r->indices[j];
    if (p->rows) {
      rows_ok &= r->indices[i] < p->N;
      if (r->indices[i] < p->N)
        rows_ok &=
            !memcmp(r->points + i * r->d, p->rows + r->indices[i] * p->d, sizeof(double) * p->d);
    }
  }
  /* skt and lskt resample their reweighted input, so the coreset is a multiset (Li et al. 2024) */
  if (strcmp(name, "skt") && strcmp(name, "lskt")) KD_TEST(distinct, "%s: distinct rows", name);
  KD_TEST(rows_ok, "%s: indices name input rows equal to the output points", name);
  if (strcmp(task, "quad")) KD_TEST(n_idx == r->n, "%s: every output row is an input row", name);
}

/* reported MMD vs kd_mmd and the direct sums; the baseline comparison */
static void check_mmd(const kd_algo_desc *desc, problem *p, const kd_result *r) {
  const char *name = desc->name, *task = desc->task;
  if (!strcmp(task, "ctt")) {
    double st = NAN, pv = NAN;
    const kd_result_dataset *ds = kd_result_find(r, "/test/statistic");
    kd_result_get_metric(r, "statistic", &st);
    kd_result_get_metric(r, "p_value", &pv);
    KD_TEST(ds && ds->f64[0] == r->mmd && st == r->mmd, "%s: statistic reported consistently",
            name);
    double v = ctt_direct_mmd2(p, r);
    /* lrctt's statistic is the random-feature approximation (r = 4096) of that double sum */
    const double tol = declares(desc, "r") ? 0.05 * v : 1e-12 * fmax(1.0, v);
    KD_TEST(fabs(r->mmd * r->mmd - v) <= tol, "%s: statistic^2 %.17g vs direct %.17g", name,
            r->mmd * r->mmd, v);
    if (isnan(pv)) { /* actt decides without a p-value; at B = 39 over its 5 length scales */
      /* the calibration may leave u_alpha at 0 (no rejection): its power is in test_actt */
      const kd_result_dataset *u = kd_result_find(r, "/test/u_alpha");
      KD_TEST(u && u->f64[0] >= 0.0 && u->f64[0] <= 5.0, "%s: u_alpha in [0, 5]", name);
      return;
    }
    /* Y shifted by 1.5 sd: the observed statistic is among the largest of the B+1 */
    KD_TEST(pv >= 1.0 / 40.0 && pv <= 0.05, "%s: p-value %g in [1/(B+1), alpha] under the shift",
            name, pv);
    double rej = 0;
    kd_result_get_metric(r, "reject", &rej);
    KD_TEST(rej == 1.0, "%s: the shifted samples are rejected", name);
    return;
  }
  double mmd = NAN, mmd2 = NAN, scale = 0;
  KD_TEST_OK(kd_mmd(p->t, r->points, r->weights, r->n, &mmd, &mmd2));
  double direct = direct_mmd2(task, p, r, &scale);
  double rep2 = r->mmd * r->mmd;
  KD_TEST(fabs(rep2 - fmax(mmd2, 0)) <= 1e-12 * scale, "%s: reported MMD %.17g vs kd_mmd %.17g",
          name, r->mmd, mmd);
  KD_TEST(fabs(rep2 - fmax(direct, 0)) <= 1e-12 * scale,
          "%s: reported MMD^2 %.17g vs direct double sum %.17g", name, rep2, direct);
  /* closed-form baseline of the same size */
  double base2;
  if (!strcmp(task, "thin")) {
    const double N = (double)p->N, n = (double)r->n;
    base2 = (N - n) / (n * (N - 1)) * (1.0 - p->zz); /* Gaussian: k(x,x) = 1 */
  } else {
    const double kxx = !strcmp(task, "quad") ? pow(1 + kPi * kPi / 3, p->d) : 1.0;
    base2 = (kxx - p->zz) / (double)r->n;
  }
  if (is_baseline(name)) {
    /* mean MMD^2 over 32 seeds = the closed form, within 4 standard errors */
    const int T = 32;
    double s1 = 0, s2 = 0;
    for (int t = 0; t < T; t++) {
      kd_result rr = KD_RESULT_INIT;
      const task_case *tc = NULL;
      for (size_t c = 0; c < sizeof kCases / sizeof *kCases; c++)
        if (!strcmp(kCases[c].task, task)) tc = &kCases[c];
      KD_TEST_OK(run(desc, tc, p, 1000 + (uint64_t)t, &rr));
      s1 += rr.mmd * rr.mmd;
      s2 += pow(rr.mmd, 4);
      kd_result_free(&rr);
    }
    double mean = s1 / T, se = sqrt(fmax(s2 / T - mean * mean, 0) / (T - 1));
    KD_TEST(fabs(mean - base2) <= 4 * se, "%s: mean MMD^2 %.4e vs closed form %.4e (se %.2e)", name,
            mean, base2, se);
  } else {
    KD_TEST(r->mmd < sqrt(base2), "%s: MMD %.4e below the %s baseline %.4e", name, r->mmd,
            !strcmp(task, "thin") ? "uniform-subsampling" : "Monte Carlo", sqrt(base2));
  }
  if (kd_test_rank() == 0)
    printf("%-22s %-5s n %4lld  MMD %.4e  baseline %.4e\n", name, task, (long long)r->n, r->mmd,
           sqrt(base2));
}

/* the job's result vs the MPI_COMM_SELF reference (rank 0) */
static void check_self(const char *name, const task_case *tc, const kd_result *a,
                       const kd_result *b) {
  int same = a->n == b->n && a->d == b->d;
  double dw = 0;
  for (int64_t i = 0; same && i < a->n; i++) {
    same &= a->indices[i] == b->indices[i];
    same &= !memcmp(a->points + i * a->d, b->points + i * b->d, sizeof(double) * a->d);
    dw = fmax(dw, fabs(a->weights[i] - b->weights[i]));
  }
  KD_TEST(same, "%s: same rows and indices at %d ranks as on MPI_COMM_SELF", name, kd_test_size());
  if (tc->bitwise_weights)
    KD_TEST(same && (a->n == 0 || !memcmp(a->weights, b->weights, sizeof(double) * a->n)),
            "%s: weights bit for bit", name);
  else
    KD_TEST(dw <= 1e-12, "%s: weights agree to %.3g", name, dw);
  KD_TEST(fabs(a->mmd * a->mmd - b->mmd * b->mmd) <= 1e-12 * fmax(1.0, a->mmd * a->mmd),
          "%s: MMD %.17g vs %.17g on one rank", name, a->mmd, b->mmd);
  if (!strcmp(tc->task, "ctt")) {
    const char *paths[3] = {"/test/statistic", "/test/p_value", "/test/permutation_statistics"};
    for (int i = 0; i < 3; i++) {
      const kd_result_dataset *x = kd_result_find(a, paths[i]), *y = kd_result_find(b, paths[i]);
      int64_t cnt = x && x->rank ? x->dims[0] : 1;
      KD_TEST(x && y && (!x->rank || y->dims[0] == cnt) &&
                  !memcmp(x->f64, y->f64, sizeof(double) * (size_t)cnt),
              "%s: %s bit for bit", name, paths[i]);
    }
  }
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const int rank = kd_test_rank();
  int n_algos = 0;
  for (int i = 0; kd_algo_at(i); i++) {
    const kd_algo_desc *desc = kd_algo_at(i);
    const task_case *tc = NULL;
    for (size_t c = 0; c < sizeof kCases / sizeof *kCases; c++)
      if (!strcmp(kCases[c].task, desc->task)) tc = &kCases[c];
    KD_TEST(tc != NULL, "algorithm %s of task %s has no conformance case (add one to kCases)",
            desc->name, desc->task);
    if (!tc) continue;
    n_algos++;
    problem pw, ps;
    memset(&pw, 0, sizeof pw);
    memset(&ps, 0, sizeof ps);
    kd_result r = KD_RESULT_INIT, r2 = KD_RESULT_INIT, rd = KD_RESULT_INIT, rs = KD_RESULT_INIT;
    KD_TEST_OK(tc->setup(MPI_COMM_WORLD, &pw));
    if (KD_TEST_OK(run(desc, tc, &pw, 7, &r))) {
      KD_TEST(replicated(&r), "%s: result replicated bit for bit on every rank", desc->name);
      check_output(desc->name, desc->task, &pw, &r);
      check_size(desc, &pw, &r);
      check_mmd(desc, &pw, &r);
      KD_TEST_OK(run(desc, tc, &pw, 7, &r2));
      KD_TEST(same_bits(&r, &r2), "%s: the same seed gives the same bits", desc->name);
      KD_TEST_OK(run(desc, tc, &pw, 8, &rd));
      if (tc->randomised && strcmp(desc->name, "stein_thin")) /* greedy: no randomness */
        KD_TEST(!same_bits(&r, &rd), "%s: another seed gives another output", desc->name);
      else
        KD_TEST(same_bits(&r, &rd), "%s: deterministic: the seed changes nothing", desc->name);
      if (rank == 0) {
        KD_TEST_OK(tc->setup(MPI_COMM_SELF, &ps));
        if (KD_TEST_OK(run(desc, tc, &ps, 7, &rs))) check_self(desc->name, tc, &r, &rs);
      }
    }
    kd_result_free(&r);
    kd_result_free(&r2);
    kd_result_free(&rd);
    kd_result_free(&rs);
    problem_free(&pw);
    problem_free(&ps);
  }
  KD_TEST(n_algos >= 1 && kd_algo_at(n_algos) == NULL, "all %d registered algorithms ran", n_algos);
  return kd_test_finish();
}
