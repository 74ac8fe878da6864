/* test_thin_team.c - the ranks halving one sequence together (kd_thin_halve_team) and running
 * KH-Refine together (kd_thin_refine_team) give, on every rank, exactly what one rank alone gives
 * (kd_thin_halve, kd_thin_refine):
 *  - halvings of 1000, 4096 and 8192 rows of the 8-component mixture (the last two with several
 *    chunks in which the screened coins need the exact rows; not 8192 under the sanitizers),
 *    KH(delta), KH with adaptive thresholds, the tight heuristic, local pairing, LKH, and GS on
 *    256 rows; length scales 0.3 and 2; screening on, off, and on with the fast Gauss transform
 *    forced (halve_fgt.c: every rank keeps the expansions, the rows shared like the screened
 *    ones). Without screening the evaluations
 *    the ranks make, less those each rank other than 0 made alike (team.skip), are exactly those
 *    of the one-rank halving;
 *  - KH-Refine over 1500 candidates (kept columns) and 3000 (a column per step), Gaussian and
 *    Matern 5/2, 2 - 3 passes: the same swaps (at least one) and the same coreset, index for
 *    index; the ranks' evaluations add up to the one-rank count plus at most two per step and
 *    rank (the next point's update); the same with the candidates split over groups of two
 *    ranks, and with every rank running the pass alone (fewer than 2048 candidates per rank, the
 *    default), whose distinct evaluations are exactly the one-rank count.
 *  - a team larger than its halving group (groups of two ranks at 3 and 4 ranks): the same rows
 *    and, without screening, the one-rank evaluations;
 *  - tight clusters, where the halvings screen the pairs' differences: the same rows, with at
 *    least 90% of the mat-vec values screened (KH(0.5), KHA);
 *  - d = 64, where the screened rows come from sgemm: the team's rows, the screened ones and the
 *    unscreened ones are the same;
 * Run at 1, 2, 3 and 4 ranks. */
#include "algo/thinning/thin_impl.h"
#include "thin_test_util.h"

static kd_thin_team team_world(void) {
  kd_thin_team t = {MPI_COMM_WORLD, kd_test_rank(), kd_test_size(), 0, 0, 0, 0, MPI_COMM_NULL};
  return t;
}

static uint64_t sum_u64(uint64_t v) {
  uint64_t s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

static void halvings(void) {
  const int d = 2;
  kd_measure mu = thin_test_mixture(d);
  const kd_lidx sizes[] = {1000, 4096, 8192, 256};
  const double lss[] = {0.3, 2.0};
  const kd_halve_kind kinds[] = {KD_HALVE_KH,  KD_HALVE_KHA,
                                 KD_HALVE_KH,  (kd_halve_kind)(KD_HALVE_KH | KD_HALVE_LOCAL),
                                 KD_HALVE_LKH, KD_HALVE_GS};
  const double deltas[] = {0.5, 0.5, -1.0, 0.5, 0.5, 0.5};
  int cases = 0, differ = 0, counted = 0, miscounted = 0;
  for (int si = 0; si < 4; si++) {
    if (KD_TEST_SANITIZED && si == 2) continue; /* 8192 rows: 4096 has the same paths */
    const kd_lidx n = sizes[si];
    double *X = malloc(sizeof(double) * (size_t)(n * d));
    kd_lidx *a = malloc(sizeof(kd_lidx) * (size_t)n), *b = malloc(sizeof(kd_lidx) * (size_t)n);
    KD_TEST_OK(kd_measure_sample(&mu, 91, (uint64_t)si, n, X));
    for (int li = 0; li < 2; li++) {
      kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
      p.ls = lss[li];
      kd_kernel *k = NULL;
      KD_TEST_OK(kd_kernel_create(&p, d, &k));
      for (int ki = 0; ki < 6; ki++) {
        if ((kinds[ki] == KD_HALVE_GS) != (n == 256)) continue; /* GS is cubic: 256 rows only */
        for (int scr = 0; scr < 3; scr++) {
          kd_thin_team t = team_world();
          kd_kernel_set_screening(k, scr);
          kd_kernel_reset_evals(k);
          KD_TEST_OK(kd_thin_halve(k, kinds[ki], X, n, d, deltas[ki], 3, 17, a));
          const uint64_t one = kd_kernel_evals(k);
          kd_kernel_reset_evals(k);
          KD_TEST_OK(kd_thin_halve_team(k, kinds[ki], X, n, d, deltas[ki], 3, 17, &t, b));
          const uint64_t all = sum_u64(kd_kernel_evals(k) - t.skip);
          cases++;
          if (memcmp(a, b, sizeof(kd_lidx) * (size_t)(n / 2)) != 0) {
            differ++;
            KD_TEST(0, "n %lld ls %g kind %d screening %d: the team keeps other rows", (long long)n,
                    lss[li], (int)kinds[ki], scr);
          }
          if (!scr) {
            counted++;
            if (all != one) {
              miscounted++;
              KD_TEST(0, "n %lld kind %d: %llu evaluations by the team, %llu by one rank",
                      (long long)n, (int)kinds[ki], (unsigned long long)all,
                      (unsigned long long)one);
            }
          }
        }
      }
      kd_kernel_destroy(&k);
    }
    free(X), free(a), free(b);
  }
  const int want = KD_TEST_SANITIZED ? 66 : 96; /* 30 per mixture size, 6 GS */
  KD_TEST(cases == want && differ == 0 && 3 * counted == want && miscounted == 0,
          "%d team halvings (%d ranks) keep the rows of one rank's, %d counted alike", cases,
          kd_test_size(), counted - miscounted);
  kd_measure_free(&mu);
}

/* A halving's inputs: n rows of the mixture (draw `seed`), index buffers a and b of n, and a
 * Gaussian kernel (default length scale) */
typedef struct {
  kd_measure mu;
  double *X;
  kd_lidx *a, *b;
  kd_kernel *k;
} halve_case;

static halve_case case_new(kd_lidx n, uint64_t seed) {
  const int d = 2;
  halve_case c = {thin_test_mixture(d), malloc(sizeof(double) * (size_t)(n * d)),
                  malloc(sizeof(kd_lidx) * (size_t)n), malloc(sizeof(kd_lidx) * (size_t)n), NULL};
  KD_TEST_OK(kd_measure_sample(&c.mu, seed, 0, n, c.X));
  kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
  KD_TEST_OK(kd_kernel_create(&p, d, &c.k));
  return c;
}

static void case_free(halve_case *c) {
  kd_kernel_destroy(&c->k);
  free(c->X), free(c->a), free(c->b);
  kd_measure_free(&c->mu);
}

/* A team larger than its halving group (halve_group 2: at 3 and 4 ranks, groups of 1 + 2 and
 * 2 + 2 ranks, split once and kept in the team) halves in groups that each make the same halving:
 * the rows one rank keeps, and without screening the distinct evaluations (the first group's,
 * the others' in team.skip) exactly one rank's. */
static void groups(void) {
  const int d = 2;
  const kd_lidx n = 4096;
  halve_case hc = case_new(n, 94);
  double *X = hc.X;
  kd_lidx *a = hc.a, *b = hc.b;
  kd_kernel *k = hc.k;
  const kd_halve_kind kinds[] = {KD_HALVE_KH, (kd_halve_kind)(KD_HALVE_KHA | KD_HALVE_LOCAL),
                                 KD_HALVE_LKH};
  kd_thin_team t = team_world();
  t.halve_group = 2;
  int cases = 0, same = 0, counted = 0;
  for (int ki = 0; ki < 3; ki++)
    for (int scr = 0; scr < 3; scr += 2) {
      kd_kernel_set_screening(k, scr);
      kd_kernel_reset_evals(k);
      KD_TEST_OK(kd_thin_halve(k, kinds[ki], X, n, d, 0.5, 7, 29 + (uint64_t)ki, a));
      const uint64_t one = kd_kernel_evals(k);
      kd_kernel_reset_evals(k);
      t.skip = 0;
      KD_TEST_OK(kd_thin_halve_team(k, kinds[ki], X, n, d, 0.5, 7, 29 + (uint64_t)ki, &t, b));
      const uint64_t all = sum_u64(kd_kernel_evals(k) - t.skip);
      cases++;
      same += memcmp(a, b, sizeof(kd_lidx) * (size_t)(n / 2)) == 0;
      counted += scr != 0 || all == one;
      KD_TEST(scr != 0 || all == one, "groups, kind %d: %llu distinct evaluations, one rank %llu",
              (int)kinds[ki], (unsigned long long)all, (unsigned long long)one);
    }
  KD_TEST(cases == 6 && same == 6 && counted == 6 && t.ngroups == (kd_test_size() > 2 ? 2 : 0),
          "%d of %d halvings in groups of at most 2 of %d ranks keep one rank's rows (%d groups)",
          same, cases, kd_test_size(), t.ngroups);
  kd_thin_team_free(&t);
  case_free(&hc);
}

/* Tight clusters (the mixture shrunk 500-fold, ls = 1, 8192 rows): the rows' bounds leave most
 * coins open, so the halvings screen the pairs' differences (kernel_screen_pair.c; a team switches
 * sooner than one rank): the team keeps one rank's rows, and with KH(0.5) and KHA at least 90% of
 * the values of the halving's mat-vecs (n^2 / 2 in all) are screened over the ranks. (The tight
 * heuristic's small thresholds leave more coins open: a team of 4 drops screening there.) */
static void clusters(void) {
  const int d = 2;
  const kd_lidx n = 8192;
  halve_case hc = case_new(n, 92);
  double *X = hc.X;
  kd_lidx *a = hc.a, *b = hc.b;
  kd_kernel *k = hc.k;
  for (kd_lidx i = 0; i < n * d; i++) X[i] *= 0.002;
  kd_kernel_set_screening(k,
                          3); /* the single-precision screening alone (no fast Gauss transform) */
  const kd_halve_kind kinds[] = {KD_HALVE_KH, KD_HALVE_KHA, KD_HALVE_KH};
  const double deltas[] = {0.5, 0.5, -1.0};
  double least = 1.0;
  for (int ki = 0; ki < 3; ki++) {
    kd_thin_team t = team_world();
    KD_TEST_OK(kd_thin_halve(k, kinds[ki], X, n, d, deltas[ki], 5, 23, a));
    kd_kernel_reset_evals(k);
    KD_TEST_OK(kd_thin_halve_team(k, kinds[ki], X, n, d, deltas[ki], 5, 23, &t, b));
    const double scr = (double)sum_u64(kd_kernel_screened_evals(k)) / (0.5 * (double)n * n);
    if (deltas[ki] > 0) least = scr < least ? scr : least; /* tight: see above */
    KD_TEST(memcmp(a, b, sizeof(kd_lidx) * (size_t)(n / 2)) == 0,
            "tight cluster, kind %d delta %g: the team keeps other rows", (int)kinds[ki],
            deltas[ki]);
  }
  if (kd_test_rank() == 0)
    printf("tight clusters (%d ranks): at least %.1f%% of the values screened\n", kd_test_size(),
           100.0 * least);
  KD_TEST(least >= 0.9, "tight clusters: %.1f%% of the values screened (test >= 90%%)",
          100.0 * least);
  case_free(&hc);
}

/* KH-Refine alone and over the team, whose groups hold at least `rows` candidates per rank (1:
 * the whole team shares the candidates; 0: the default, kd_thin_refine_team) */
static void refine(kd_kernel_type kt, kd_lidx nc, kd_lidx m, int passes, kd_lidx rows, int dup) {
  const int d = 2;
  kd_measure mu = thin_test_mixture(d);
  double *X = malloc(sizeof(double) * (size_t)(nc * d)), *z = malloc(sizeof(double) * (size_t)nc);
  double *row = malloc(sizeof(double) * (size_t)nc);
  KD_TEST_OK(kd_measure_sample(&mu, 43, (uint64_t)nc, nc, X));
  if (dup) /* the second half repeats the first: exact ties between ranks' candidates */
    memcpy(X + (nc / 2) * d, X, sizeof(double) * (size_t)((nc / 2) * d));
  kd_kernel_params p = kd_kernel_params_default(kt);
  p.ls = 2.0;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, d, &k));
  for (kd_lidx c = 0; c < nc; c++) { /* z: the candidates' own empirical measure */
    KD_TEST_OK(kd_kernel_eval_block(k, X + c * d, 1, X, nc, row, nc));
    double s = 0.0;
    for (kd_lidx j = 0; j < nc; j++) s += row[j];
    z[c] = s / (double)nc;
  }
  kd_lidx *a = malloc(sizeof(kd_lidx) * (size_t)m), *b = malloc(sizeof(kd_lidx) * (size_t)m);
  kd_lidx sa = 0, sb = 0;
  for (kd_lidx i = 0; i < m; i++) a[i] = b[i] = (i * 7919) % nc; /* distinct: 7919 prime > nc */
  kd_kernel_reset_evals(k);
  KD_TEST_OK(kd_thin_refine(k, X, nc, d, z, a, m, passes, &sa));
  const uint64_t one = kd_kernel_evals(k);
  kd_thin_team t = team_world();
  t.refine_rows = rows;
  kd_kernel_reset_evals(k);
  KD_TEST_OK(kd_thin_refine_team(k, X, nc, d, z, b, m, passes, &t, &sb));
  /* the distinct evaluations: those of the first group (the others' are in t.skip) */
  const uint64_t all = sum_u64(kd_kernel_evals(k) - t.skip);
  const uint64_t steps = (uint64_t)passes * (uint64_t)m, extra = 2 * steps * kd_test_size();
  const kd_lidx q = nc / (rows > 0 ? rows : 2048); /* the group's size, as documented */
  const int alone = kd_test_size() == 1 || q <= 1;
  KD_TEST(sa == sb && sa > 0 && !memcmp(a, b, sizeof(kd_lidx) * (size_t)m),
          "%s nc %lld m %lld rows %lld: %lld swaps together (%d ranks), %lld alone, the same "
          "coreset",
          kd_kernel_name(kt), (long long)nc, (long long)m, (long long)rows, (long long)sb,
          kd_test_size(), (long long)sa);
  /* every rank alone: exactly the one-rank evaluations; shared: at most two more per step and
   * rank of the group (the next point's update) */
  KD_TEST(alone ? all == one : (all >= one && all <= one + extra),
          "rows %lld: %llu evaluations together, %llu alone", (long long)rows,
          (unsigned long long)all, (unsigned long long)one);
  /* the ranks outside the first group made the pass too, and say so (team.skip also holds the
   * scans a team made again after a swap, kd_rf_team_) */
  const uint64_t skipped = sum_u64(t.skip);
  const kd_lidx qq = q < 1 ? 1 : (q < kd_test_size() ? q : kd_test_size());
  KD_TEST(skipped > 0 || qq == kd_test_size(),
          "rows %lld: %llu evaluations of other groups (group of %lld of %d ranks)",
          (long long)rows, (unsigned long long)skipped, (long long)qq, kd_test_size());
  kd_kernel_destroy(&k);
  kd_measure_free(&mu);
  free(X), free(z), free(row), free(a), free(b);
}

/* d = 64 (the screening's sgemm form, kernel_screen_gemm.c): N(0, I) rows with duplicates, KH,
 * KHA and the tight heuristic with local pairing, ls 8 and 3: the team keeps the rows of one
 * rank's halving, and those of the unscreened one. */
static void high_d(void) {
  const int d = 64;
  const kd_lidx n = KD_TEST_SANITIZED ? 1024 : 4096;
  const kd_halve_kind kinds[] = {KD_HALVE_KH, KD_HALVE_KHA,
                                 (kd_halve_kind)(KD_HALVE_KH | KD_HALVE_LOCAL)};
  const double deltas[] = {0.5, 0.5, -1.0}, lss[] = {8.0, 3.0};
  double *X = malloc(sizeof(double) * (size_t)(n * d));
  kd_lidx *a = malloc(sizeof(kd_lidx) * (size_t)n), *b = malloc(sizeof(kd_lidx) * (size_t)n),
          *c = malloc(sizeof(kd_lidx) * (size_t)n);
  for (kd_lidx i = 0; i < n * d; i++) X[i] = kd_rng_normal(92, 0, (uint64_t)i);
  for (kd_lidx i = 7; i < n; i += 8) memcpy(X + i * d, X + (i - 1) * d, sizeof(double) * d);
  int cases = 0, differ = 0;
  for (int li = 0; li < 2; li++) {
    kd_kernel_params p = kd_kernel_params_default(KD_KERNEL_GAUSSIAN);
    p.ls = lss[li];
    kd_kernel *k = NULL;
    KD_TEST_OK(kd_kernel_create(&p, d, &k));
    for (int ki = 0; ki < 3; ki++) {
      kd_thin_team t = team_world();
      kd_kernel_set_screening(k, 0);
      KD_TEST_OK(kd_thin_halve(k, kinds[ki], X, n, d, deltas[ki], 4, 17, a));
      kd_kernel_set_screening(k, 1);
      KD_TEST_OK(kd_thin_halve(k, kinds[ki], X, n, d, deltas[ki], 4, 17, b));
      KD_TEST_OK(kd_thin_halve_team(k, kinds[ki], X, n, d, deltas[ki], 4, 17, &t, c));
      cases++;
      if (memcmp(a, b, sizeof(kd_lidx) * (size_t)(n / 2)) != 0 ||
          memcmp(a, c, sizeof(kd_lidx) * (size_t)(n / 2)) != 0) {
        differ++;
        KD_TEST(0, "d 64 ls %g kind %d: other rows screened or in a team", lss[li], (int)kinds[ki]);
      }
    }
    kd_kernel_destroy(&k);
  }
  KD_TEST(cases == 6 && differ == 0,
          "d = 64: %d halvings, screened (sgemm) and in a team of %d ranks, keep the unscreened "
          "rows",
          cases, kd_test_size());
  free(X), free(a), free(b), free(c);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  high_d();
  halvings();
  groups();
  clusters();
  refine(KD_KERNEL_GAUSSIAN, 1500, 80, 3, 1, 0);
  refine(KD_KERNEL_MATERN52, 3000, 150, 2, 1, 0);
  refine(KD_KERNEL_GAUSSIAN, 1500, 80, 3, 0, 0);     /* every rank alone */
  refine(KD_KERNEL_MATERN52, 3000, 150, 2, 1500, 0); /* groups of two ranks */
  refine(KD_KERNEL_GAUSSIAN, 1500, 80, 3, 1, 1);     /* duplicated candidates */
  return kd_test_finish();
}
