/* test_thin_resume.c - checkpoint / restart of the thinning tree through the algorithms' run()
 * (src/algo/thinning/thin_ckpt.c), at 1, 2 and 4 ranks, without files: the checkpoint hook keeps
 * every state in memory (replicated, as --resume gives it). n_in = 5000 (K = 6, F = 1, leaf height
 * 3, 64 bins with 904 remainder rows), n_out = 16.
 *  - periodic checkpoints at every step do not change the coreset; the steps are consecutive
 *    (Compress: h_leaf..K+rounds; plain halving: K..K+rounds) with the documented node counts;
 *  - resuming from each of them gives the uninterrupted coreset bit for bit (points, indices,
 *    weights and the metrics);
 *  - a signal flag raised on the last rank only, before the run or inside the hook at step s,
 *    is agreed at the next safe point: every rank returns KD_ERR_INTERRUPTED after one state with
 *    interrupted = 1 at that step; resuming from it gives the same coreset;
 *  - damaged states (another tree, wrong node counts, a row index out of range, a missing dataset,
 *    a step outside the tree, a coordinate that differs from the input row it names) give
 *    KD_ERR_INPUT on every rank, naming the problem. */
#include "thinning/thin_test_util.h"

#define MAX_ST 64

typedef struct {
  kd_result st[MAX_ST];
  int n;
  int raise_at; /* > 0: raise the interrupt flag on the last rank in the hook of this step */
} capture;

/* Copy of a state, replicated from rank 0 (what --resume hands to every rank). Collective. */
static kd_err copy_state(const kd_result *s, kd_result *c) {
  kd_err err = KD_OK;
  int nd = s->n_datasets;
  MPI_Bcast(&nd, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int i = 0; i < nd; i++) {
    const kd_result_dataset *x = &s->datasets[i];
    int64_t hdr[4] = {x->is_int, x->rank, x->rank > 0 ? x->dims[0] : 0,
                      x->rank > 1 ? x->dims[1] : 0};
    MPI_Bcast(hdr, 4, MPI_INT64_T, 0, MPI_COMM_WORLD);
    int64_t cnt = 1;
    for (int r = 0; r < hdr[1]; r++) cnt *= hdr[2 + r];
    void *buf = calloc((size_t)(cnt + 1), 8);
    if (kd_test_rank() == 0 && cnt > 0)
      memcpy(buf, x->is_int ? (void *)x->i64 : (void *)x->f64, (size_t)cnt * 8);
    MPI_Bcast(buf, (int)cnt, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    const char *path = kd_test_rank() == 0 ? x->path : NULL;
    char pb[128] = "";
    if (path) snprintf(pb, sizeof pb, "%s", path);
    MPI_Bcast(pb, (int)sizeof pb, MPI_CHAR, 0, MPI_COMM_WORLD);
    err = hdr[0] ? kd_result_add_i64(c, pb, (int)hdr[1], hdr + 2, buf)
                 : kd_result_add_f64(c, pb, (int)hdr[1], hdr + 2, buf);
    free(buf);
    if (err != KD_OK) return err;
  }
  for (int i = 0; i < s->n_metrics && err == KD_OK; i++)
    err = kd_result_set_metric(c, s->metrics[i].name, s->metrics[i].value);
  c->seconds = s->seconds;
  c->kernel_evals = s->kernel_evals;
  return err;
}

static kd_err hook(void *ctx, const kd_result *state) {
  capture *c = ctx;
  if (c->n >= MAX_ST) return kd_err_set(KD_ERR_INTERNAL, __FILE__, __LINE__, "too many states");
  kd_result *dst = &c->st[c->n++];
  kd_err e = copy_state(state, dst);
  double it = 0;
  kd_result_get_metric(dst, "iteration", &it);
  if (c->raise_at > 0 && (int)it == c->raise_at && kd_test_rank() == kd_test_size() - 1)
    kd_interrupt_set(1);
  return e;
}

static void capture_free(capture *c) {
  for (int i = 0; i < c->n; i++) kd_result_free(&c->st[i]);
  c->n = 0;
}

/* run algorithm `name` with settings kv[], checkpoint hook (every, NULL = off) and resume state */
static kd_err run(const char *name, const char *const *kv, kd_pointset *ps, kd_kernel *k,
                  kd_target *t, capture *cap, int64_t every, const kd_result *resume,
                  kd_result *out) {
  kd_algo_kv_opts opt = {0};
  if (cap) {
    opt.checkpoint = hook;
    opt.checkpoint_ctx = cap;
    opt.checkpoint_every = every;
  }
  opt.resume = resume;
  return kd_algo_run_kv(MPI_COMM_WORLD, "thin", name, kv, k, ps, t, 11, &opt, out);
}

static int same_result(const kd_result *a, const kd_result *b, int d) {
  if (a->n != b->n || a->n < 1) return 0;
  if (memcmp(a->indices, b->indices, sizeof(int64_t) * a->n) ||
      memcmp(a->points, b->points, sizeof(double) * a->n * d) ||
      memcmp(a->weights, b->weights, sizeof(double) * a->n))
    return 0;
  if (a->n_metrics != b->n_metrics) return 0;
  for (int i = 0; i < a->n_metrics; i++) {
    double v = NAN;
    if (!kd_result_get_metric(b, a->metrics[i].name, &v)) return 0;
    if (memcmp(&v, &a->metrics[i].value, sizeof v) != 0) return 0;
  }
  return 1;
}

static int64_t state_i64(const kd_result *s, const char *path, int i) {
  const kd_result_dataset *x = kd_result_find(s, path);
  return x && x->is_int ? x->i64[i] : -999;
}

/* Resume from a damaged copy of st: KD_ERR_INPUT with `what` in the message on every rank. */
static void expect_bad(const char *name, const char *const *kv, kd_pointset *ps, kd_kernel *k,
                       kd_target *t, const kd_result *bad, const char *what) {
  kd_result r = KD_RESULT_INIT;
  kd_err e = run(name, kv, ps, k, t, NULL, 0, bad, &r);
  KD_TEST(e == KD_ERR_INPUT && strstr(kd_err_message(), what), "damaged state (%s): %s", what,
          kd_err_message());
  kd_err_clear();
  kd_result_free(&r);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const int d = 2;
  const kd_lidx n = 5000;
  kd_measure mu = thin_test_mixture(d);
  kd_pointset *ps = NULL;
  KD_TEST_OK(kd_pointset_generate(MPI_COMM_WORLD, &mu, n, 42, &ps));
  kd_kernel *k = thin_test_gauss(d);
  kd_target *t = NULL;
  KD_TEST_OK(kd_target_create_empirical(k, ps, 0, &t));
  static capture cap, cap2;
  kd_result ref = KD_RESULT_INIT, r = KD_RESULT_INIT;

  /* refine keys pinned (rank 0 halves while L >= 8 n_out), not kt_compress's defaults */
  const char *const kvkt[] = {"n_out=16", "g=2", "refine_pool=2", "refine_target=input", NULL};
  const char *const kvktc[] = {"n_out=16", "g=2", "refine_pool=2", "refine_target=compress", NULL};
  const char *const kvrkh[] = {"n_out=16", NULL};
  /* steps: first safe point, last step, rows per node at the first safe point */
  struct {
    const char *name;
    const char *const *kv;
    int first, last;
    int64_t nodes0, rows0;
  } cases[] = {
      /* Compress, g = 2: leaf level 3 = 64 nodes of 2^(g+3) = 32 rows; 256 rows at the root;
       * kt (refine_pool 2) halves on rank 0 while L >= 8 n_out (2 rounds), kh while L >= 4 n_out
       * (3 rounds) */
      {"kt_compress", kvkt, 3, 8, 64, 32},
      {"kt_compress", kvktc, 3, 8, 64, 32},
      {"kh_compress", kvkt, 3, 9, 64, 32},
      /* plain halving: safe from K = 6 on (one node of 4^6 rows), 4096 -> 32 in 7 rounds */
      {"rkh", kvrkh, 6, 13, 1, 4096},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const char *nm = cases[c].name;
    const char *const *kv = cases[c].kv;
    KD_TEST_OK(run(nm, kv, ps, k, t, NULL, 0, NULL, &ref));
    KD_TEST_OK(run(nm, kv, ps, k, t, &cap, 1, NULL, &r));
    KD_TEST(same_result(&ref, &r, d), "%s: periodic checkpoints leave the output unchanged", nm);
    const int nst = cases[c].last - cases[c].first + 1;
    KD_TEST(cap.n == nst, "%s: %d states (steps %d..%d), got %d", nm, nst, cases[c].first,
            cases[c].last, cap.n);
    for (int i = 0; i < cap.n; i++) {
      double it = -1, intr = -1;
      kd_result_get_metric(&cap.st[i], "iteration", &it);
      kd_result_get_metric(&cap.st[i], "interrupted", &intr);
      KD_TEST(it == cases[c].first + i && intr == 0 &&
                  state_i64(&cap.st[i], "/state/level", 0) == cases[c].first + i,
              "%s: state %d is periodic at step %g", nm, i, it);
      KD_TEST_OK(run(nm, kv, ps, k, t, NULL, 0, &cap.st[i], &r));
      KD_TEST(same_result(&ref, &r, d), "%s: resumed after step %g: the same coreset bit for bit",
              nm, it);
    }
    if (cap.n > 0) {
      const kd_result_dataset *nc = kd_result_find(&cap.st[0], "/state/node_counts");
      KD_TEST(nc && nc->dims[0] == cases[c].nodes0 && nc->i64[0] == cases[c].rows0,
              "%s: first state: %lld nodes of %lld rows", nm, nc ? (long long)nc->dims[0] : -1LL,
              nc ? (long long)nc->i64[0] : -1LL);
      const kd_result_dataset *co = kd_result_find(&cap.st[cap.n - 1], "/state/compress_output");
      KD_TEST((co != NULL) == (kv == kvktc) && (!co || co->dims[0] == 256),
              "%s: /state/compress_output [256, 2] only with refine_target compress", nm);
    }
    /* a signal on the last rank before the run: agreed at the first safe point */
    capture_free(&cap);
    if (kd_test_rank() == kd_test_size() - 1) kd_interrupt_set(1);
    kd_err e = run(nm, kv, ps, k, t, &cap, 0, NULL, &r);
    kd_interrupt_set(0);
    double it = -1, intr = -1;
    if (cap.n == 1) {
      kd_result_get_metric(&cap.st[0], "iteration", &it);
      kd_result_get_metric(&cap.st[0], "interrupted", &intr);
    }
    KD_TEST(e == KD_ERR_INTERRUPTED && cap.n == 1 && it == cases[c].first && intr == 1,
            "%s: signal before the run: KD_ERR_INTERRUPTED after step %g (want %d)", nm, it,
            cases[c].first);
    kd_err_clear();
    if (cap.n == 1) {
      KD_TEST_OK(run(nm, kv, ps, k, t, NULL, 0, &cap.st[0], &r));
      KD_TEST(same_result(&ref, &r, d), "%s: resumed after the signal: the same coreset", nm);
    }
    /* a signal raised during step s (in its periodic hook) is agreed at step s + 1 */
    for (int s = cases[c].first; s < cases[c].last; s += 2) {
      capture_free(&cap);
      cap.raise_at = s;
      e = run(nm, kv, ps, k, t, &cap, 1, NULL, &r);
      kd_interrupt_set(0);
      cap.raise_at = 0;
      it = intr = -1;
      if (cap.n > 0) {
        kd_result_get_metric(&cap.st[cap.n - 1], "iteration", &it);
        kd_result_get_metric(&cap.st[cap.n - 1], "interrupted", &intr);
      }
      KD_TEST(e == KD_ERR_INTERRUPTED && it == s + 1 && intr == 1,
              "%s: signal during step %d: interrupted after step %g", nm, s, it);
      kd_err_clear();
      if (cap.n > 0) {
        KD_TEST_OK(run(nm, kv, ps, k, t, &cap2, 1, &cap.st[cap.n - 1], &r));
        KD_TEST(same_result(&ref, &r, d) && cap2.n == cases[c].last - s - 1,
                "%s: resumed after step %d: the same coreset, %d more states", nm, s + 1, cap2.n);
        capture_free(&cap2);
      }
    }
    capture_free(&cap);
  }

  /* GS-Compress (cubic) on 300 rows: K = 4, leaf height 1, 64 bins of 4 (with 44 remainder
   * rows), g = 1: steps 1..4, 32 = n_out rows at the root (no round on rank 0) */
  {
    kd_pointset *p3 = NULL;
    kd_target *t3 = NULL;
    KD_TEST_OK(kd_pointset_generate(MPI_COMM_WORLD, &mu, 300, 5, &p3));
    KD_TEST_OK(kd_target_create_empirical(k, p3, 0, &t3));
    const char *const kvgs32[] = {"n_out=32", "g=1", NULL};
    KD_TEST_OK(run("gs_compress", kvgs32, p3, k, t3, NULL, 0, NULL, &ref));
    KD_TEST_OK(run("gs_compress", kvgs32, p3, k, t3, &cap, 1, NULL, &r));
    KD_TEST(same_result(&ref, &r, d) && cap.n == 4, "gs_compress: %d periodic states", cap.n);
    for (int i = 0; i < cap.n; i++) {
      KD_TEST_OK(run("gs_compress", kvgs32, p3, k, t3, NULL, 0, &cap.st[i], &r));
      KD_TEST(same_result(&ref, &r, d), "gs_compress: resumed from state %d: the same coreset", i);
    }
    capture_free(&cap);
    kd_target_destroy(&t3);
    kd_pointset_destroy(&p3);
  }

  /* damaged states (from a kt_compress state at step 5: 4 nodes of 2^(2+5) = 128 rows) */
  KD_TEST_OK(run("kt_compress", kvkt, ps, k, t, &cap, 1, NULL, &r));
  if (cap.n >= 3) {
    const kd_result *good = &cap.st[2];
    kd_result bad = KD_RESULT_INIT;
    struct {
      const char *path;
      int64_t index;
      double value;
      const char *what;
    } harm[] = {
        {"/state/tree", 0, 4999, "written for a tree of n_in = 4999"},
        {"/state/tree", 5, 3, "g = 3"},
        {"/state/node_counts", 3, 127, "node 3 holds 127 rows at step 5, expected 128"},
        {"/state/rows", 3 * 100, 5000, "row 100 of /state/rows has global index 5000"},
        {"/state/rows", 3 * 7, -1, "row 7 of /state/rows has global index -1"},
        {"/state/level", 0, 2, "step 2 outside the steps 3..8"},
        {"/state/level", 0, 9, "step 9 outside the steps 3..8"},
        {"/state/level", 0, 4, "4 nodes at step 4, the tree has 16"},
        {"/state/rows", -1, 0, "the thinning state is incomplete"},
        /* a coordinate of state row 300 (node 2: input rows near 3000, one rank sees it) */
        {"/state/rows", 3 * 300 + 2, 1e6, "row 300 of /state/rows differs from input row"},
    };
    for (size_t h = 0; h < sizeof harm / sizeof harm[0]; h++) {
      kd_result_free(&bad);
      for (int i = 0; i < good->n_datasets; i++) {
        const kd_result_dataset *x = &good->datasets[i];
        if (harm[h].index < 0 && !strcmp(x->path, harm[h].path)) continue; /* drop it */
        if (x->is_int)
          KD_TEST_OK(kd_result_add_i64(&bad, x->path, x->rank, x->dims, x->i64));
        else
          KD_TEST_OK(kd_result_add_f64(&bad, x->path, x->rank, x->dims, x->f64));
        kd_result_dataset *y = &bad.datasets[bad.n_datasets - 1];
        if (!strcmp(x->path, harm[h].path) && harm[h].index >= 0) {
          if (y->is_int)
            y->i64[harm[h].index] = (int64_t)harm[h].value;
          else
            y->f64[harm[h].index] = harm[h].value;
        }
      }
      expect_bad("kt_compress", kvkt, ps, k, t, &bad, harm[h].what);
    }
    kd_result_free(&bad);
  } else {
    KD_TEST(0, "kt_compress: no states to damage");
  }
  capture_free(&cap);

  kd_result_free(&ref);
  kd_result_free(&r);
  kd_target_destroy(&t);
  kd_pointset_destroy(&ps);
  kd_kernel_destroy(&k);
  kd_measure_free(&mu);
  return kd_test_finish();
}
