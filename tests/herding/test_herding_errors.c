/* test_herding_errors.c - bad input gives one clear error on every rank (no hang): empty and
 * 1-point candidate sets, J < 1, K_sc < 1, K_max < 1, a target without a closed form or without zz;
 * degenerate inputs terminate: duplicated candidates (ties to the smallest index, bounded
 * iterations, the optimum over the distinct points) and a set of identical points. */
#include <stdlib.h>
#include <string.h>

#include "algo/herding/herding_impl.h"
#include "herd_util.h"
#include "kd_algo_kv.h"
#include "la/la_impl.h"

static const char *const kAlgos[] = {"fw_eq", "fw_linesearch", "fcfw",      "afw",
                                     "pfw",   "bpcg",          "bpcg_lazy", "pmp",
                                     "gcos",  "fc_pmp",        "fc_gcos"};

/* every rank got the same code */
static int same_everywhere(kd_err e) {
  int lo = (int)e, hi = (int)e;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

/* run with a parameter forced past the table's range check (as a hand-built kd_params would) */
static kd_err run_forced(const herd_problem *p, const char *algo, const char *key, double v) {
  const kd_algo_desc *a = kd_algo_find("herd", algo);
  kd_params par = {0};
  kd_algo_params_kv(a, NULL, &par);
  for (int i = 0; i < par.n; i++)
    if (strcmp(par.spec[i].key, key) == 0) {
      par.v[i].f = v;
      par.v[i].i = (int64_t)v;
    }
  kd_algo_in in = {.comm = MPI_COMM_WORLD,
                   .kernel = p->k,
                   .points = p->cand,
                   .target = p->t,
                   .params = &par,
                   .seed = 1};
  kd_result r = KD_RESULT_INIT;
  kd_err e = a->run(&in, &r);
  kd_result_free(&r);
  kd_params_free(&par);
  return e;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  MPI_Comm c = MPI_COMM_WORLD;
  herd_problem p;
  /* empty and 1-point candidate sets */
  KD_TEST_OK(herd_problem_gauss(c, 2, 1.0, 0, 1, &p));
  for (int n = 0; n <= 1; n++) {
    double row[2] = {0.1, -0.2};
    if (n == 0)
      KD_TEST_OK(kd_pointset_create(c, 0, 2, &p.cand));
    else
      KD_TEST_OK(kd_pointset_from_replicated(c, 1, 2, row, NULL, &p.cand));
    for (size_t a = 0; a < sizeof kAlgos / sizeof *kAlgos; a++) {
      kd_result r = KD_RESULT_INIT;
      kd_err e = herd_run(c, &p, kAlgos[a], NULL, &r);
      KD_TEST(e == KD_ERR_INPUT && same_everywhere(e), "%s on %d points: KD_ERR_INPUT (%d)",
              kAlgos[a], n, (int)e);
      KD_TEST(strstr(kd_err_message(), "at least 2 candidate points") != NULL, "message: %s",
              kd_err_message());
      KD_TEST(r.n == 0 && r.points == NULL, "nothing returned");
      kd_err_clear();
      kd_result_free(&r);
    }
    kd_pointset_destroy(&p.cand);
  }
  herd_problem_free(&p);

  KD_TEST_OK(herd_problem_gauss(c, 2, 1.0, 256, 3, &p));
  /* parameter ranges: rejected by the table (config path) and by run() itself */
  {
    struct {
      const char *algo, *key, *text;
      double forced;
    } bad[] = {{"bpcg_lazy", "J", "0.5", 0.5}, {"bpcg_lazy", "K_sc", "0.9", 0.9},
               {"bpcg", "K_sc", "0", 0.0},     {"gcos", "K_max", "0", 0},
               {"pmp", "K_max", "-3", -3},     {"fc_gcos", "K_max", "0", 0},
               {"fc_pmp", "delta", "1.5", 1.5}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
      char kv[64];
      snprintf(kv, sizeof kv, "%s=%s", bad[i].key, bad[i].text);
      const char *kvl[] = {kv, NULL};
      kd_result r = KD_RESULT_INIT;
      kd_err e = herd_run(c, &p, bad[i].algo, kvl, &r);
      KD_TEST(e == KD_ERR_CONFIG, "%s %s: config error (%d: %s)", bad[i].algo, kv, (int)e,
              kd_err_message());
      KD_TEST(strstr(kd_err_message(), bad[i].key) != NULL, "message names %s: %s", bad[i].key,
              kd_err_message());
      kd_err_clear();
      kd_result_free(&r);
      e = run_forced(&p, bad[i].algo, bad[i].key, bad[i].forced);
      KD_TEST(e == KD_ERR_CONFIG && same_everywhere(e), "%s %s forced: run() rejects (%d)",
              bad[i].algo, kv, (int)e);
      KD_TEST(strstr(kd_err_message(), bad[i].key) != NULL, "message names %s: %s", bad[i].key,
              kd_err_message());
      kd_err_clear();
    }
  }
  /* a fault only the last rank sees (NaN in its candidate rows; the task layer would reject it
   * earlier): folded into the LMO reduction, every rank returns the same error, nobody hangs */
  {
    double *rows;
    kd_pointset_get_rows(p.cand, &rows);
    const kd_gidx off = kd_pointset_offset(p.cand), bad = 200;
    if (bad >= off && bad < off + kd_pointset_n_local(p.cand)) rows[(bad - off) * 2] = NAN;
    kd_pointset_restore_rows(p.cand, &rows);
    for (size_t a = 0; a < sizeof kAlgos / sizeof *kAlgos; a++) {
      kd_result r = KD_RESULT_INIT;
      kd_err e = herd_run(c, &p, kAlgos[a], NULL, &r);
      KD_TEST(e == KD_ERR_NUMERIC && same_everywhere(e), "%s: NaN candidate -> numeric error (%d)",
              kAlgos[a], (int)e);
      KD_TEST(strstr(kd_err_message(), "NaN") != NULL, "message: %s", kd_err_message());
      kd_err_clear();
      kd_result_free(&r);
    }
    kd_pointset_get_rows(p.cand, &rows);
    if (bad >= off && bad < off + kd_pointset_n_local(p.cand)) rows[(bad - off) * 2] = 0.5;
    kd_pointset_restore_rows(p.cand, &rows);
  }
  /* no closed form for (gaussian, sphere); an empirical target without zz */
  {
    kd_measure sph = {0};
    sph.type = KD_MEASURE_SPHERE;
    sph.d = 2;
    kd_target *t = NULL;
    kd_err e = kd_target_create_closed(c, p.k, &sph, &t);
    KD_TEST(e == KD_ERR_UNSUPPORTED && t == NULL, "gaussian x sphere unsupported (%d)", (int)e);
    kd_err_clear();
    kd_target *emp = NULL;
    KD_TEST_OK(kd_target_create_empirical(p.k, p.cand, 1, &emp));
    herd_problem q = p;
    q.t = emp;
    kd_result r = KD_RESULT_INIT;
    e = herd_run(c, &q, "bpcg", NULL, &r);
    KD_TEST(e == KD_ERR_UNSUPPORTED && same_everywhere(e), "empirical target without zz (%d)",
            (int)e);
    kd_err_clear();
    kd_result_free(&r);
    /* with zz the empirical target works (herding a sample onto itself) */
    kd_target_destroy(&emp);
    KD_TEST_OK(kd_target_create_empirical(p.k, p.cand, 0, &emp));
    q.t = emp;
    const char *kv[] = {"max_iter=50", NULL};
    KD_TEST_OK(herd_run(c, &q, "bpcg", kv, &r));
    KD_TEST(r.mmd < 0.05, "empirical target: MMD %.3g", r.mmd);
    kd_result_free(&r);
    kd_target_destroy(&emp);
  }
  herd_problem_free(&p);

  /* 3 candidates: at 4 ranks one rank holds none; every algorithm still reaches the optimum over
   * the 3 points (computed with kd_simplex_qp) */
  {
    double rows3[6] = {0.5, 0.0, -0.4, 0.3, 0.1, -0.6}, Q3[9], z3[3], w3[3] = {0}, best3 = 0;
    KD_TEST_OK(herd_problem_gauss(c, 2, 1.0, 0, 1, &p));
    KD_TEST_OK(kd_pointset_from_replicated(c, 3, 2, rows3, NULL, &p.cand));
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) Q3[i * 3 + j] = kd_kernel_eval(p.k, rows3 + 2 * i, rows3 + 2 * j);
    KD_TEST_OK(kd_target_embed_rows(p.t, rows3, 3, z3));
    KD_TEST_OK(kd_simplex_qp(3, Q3, z3, 1e-15, 100, w3));
    KD_TEST_OK(kd_mmd(p.t, rows3, w3, 3, &best3, NULL));
    for (size_t a = 0; a < sizeof kAlgos / sizeof *kAlgos; a++) {
      kd_result r = KD_RESULT_INIT;
      const char *kv[] = {"max_iter=300", "tol_gap=1e-12", NULL};
      KD_TEST_OK(herd_run(c, &p, kAlgos[a], kv, &r));
      KD_TEST(r.n >= 1 && r.n <= 3 && r.mmd >= best3 - 1e-12 && r.mmd <= best3 + 2e-3,
              "%s on 3 points: MMD %.6g vs optimum %.6g (%lld atoms)", kAlgos[a], r.mmd, best3,
              (long long)r.n);
      kd_result_free(&r);
    }
    herd_problem_free(&p);
  }

  /* duplicated candidates: 4 distinct points, each repeated 60 times (rows g and g + 4j equal) */
  {
    enum { ND = 4, REP = 60 };
    double base[ND * 2] = {0.3, 0.1, -0.8, 0.4, 0.2, -1.1, -0.1, -0.2};
    double *rows = malloc(sizeof(double) * ND * REP * 2);
    for (int j = 0; j < REP; j++) memcpy(rows + 2 * ND * j, base, sizeof base);
    KD_TEST_OK(herd_problem_gauss(c, 2, 1.0, 0, 1, &p));
    KD_TEST_OK(kd_pointset_from_replicated(c, ND * REP, 2, rows, NULL, &p.cand));
    /* optimum over the distinct points */
    double Q[ND * ND], z[ND], w[ND] = {0}, best = 0;
    for (int i = 0; i < ND; i++)
      for (int j = 0; j < ND; j++) Q[i * ND + j] = kd_kernel_eval(p.k, base + 2 * i, base + 2 * j);
    KD_TEST_OK(kd_target_embed_rows(p.t, base, ND, z));
    KD_TEST_OK(kd_simplex_qp(ND, Q, z, 1e-15, 100, w));
    KD_TEST_OK(kd_mmd(p.t, base, w, ND, &best, NULL));
    for (size_t a = 0; a < sizeof kAlgos / sizeof *kAlgos; a++) {
      kd_result r = KD_RESULT_INIT;
      const char *kv[] = {"max_iter=400", "tol_gap=1e-10", NULL};
      KD_TEST_OK(herd_run(c, &p, kAlgos[a], kv, &r));
      double it = -1;
      kd_result_get_metric(&r, "iterations", &it);
      KD_TEST(it >= 1 && it <= 400, "%s: bounded iterations (%g)", kAlgos[a], it);
      int low = 1;
      for (int64_t i = 0; i < r.n; i++) low &= r.indices[i] < ND;
      KD_TEST(low && r.n <= ND, "%s: ties go to the first copy (%lld atoms)", kAlgos[a],
              (long long)r.n);
      KD_TEST(r.mmd >= best - 1e-12, "%s: MMD %.6g not below the optimum %.6g", kAlgos[a], r.mmd,
              best);
      if (strcmp(kAlgos[a], "fw_eq") && strcmp(kAlgos[a], "fw_linesearch") &&
          strcmp(kAlgos[a], "pmp") && strcmp(kAlgos[a], "gcos"))
        KD_TEST(r.mmd <= best + 1e-6 && it < 400,
                "%s: reaches the optimum over the distinct points (%.8g vs %.8g) early (%g it)",
                kAlgos[a], r.mmd, best, it);
      kd_result_free(&r);
    }
    kd_pointset_destroy(&p.cand);
    /* all candidates identical: the start is optimal, the FW gap is 0 */
    for (int j = 0; j < ND * REP; j++) memcpy(rows + 2 * j, base, sizeof(double) * 2);
    KD_TEST_OK(kd_pointset_from_replicated(c, ND * REP, 2, rows, NULL, &p.cand));
    for (size_t a = 0; a < sizeof kAlgos / sizeof *kAlgos; a++) {
      kd_result r = KD_RESULT_INIT;
      const char *kv[] = {"max_iter=100000", NULL};
      KD_TEST_OK(herd_run(c, &p, kAlgos[a], kv, &r));
      double it = -1;
      kd_result_get_metric(&r, "iterations", &it);
      KD_TEST(it <= 2 && r.n == 1 && r.indices[0] == 0 && r.weights[0] == 1.0,
              "%s: identical candidates stop at once (%g it, %lld atoms)", kAlgos[a], it,
              (long long)r.n);
      kd_result_free(&r);
    }
    free(rows);
    herd_problem_free(&p);
  }
  return kd_test_finish();
}
