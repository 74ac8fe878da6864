/* bench_herding_rate.c - MMD-vs-atoms rate of a herding algorithm on the Matern experiments of the
 * papers (not a test): kernel matern32 (ls = sqrt 3) or matern52 (ls = sqrt 5), target = the
 * empirical measure of a g x g tensor midpoint grid on [-1,1]^2, candidates = the same grid.
 * Prints (atoms, best MMD at that atom count) at a few counts and the least-squares slope of
 * log MMD against log atoms over atoms in [nmin, final]. With a 5th argument G2 > 0 it also prints
 * the MMD between the g-grid and a finer G2-grid (the discretisation error of the target).
 * usage: bench_herding_rate [matern32|matern52] [g=120] [algo=bpcg] [max_iter=3000] [G2=0]
 *        [nmin=20] */
#include <stdlib.h>
#include <string.h>

#include "herd_util.h"

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const char *kn = argc > 1 ? argv[1] : "matern32";
  const int g = argc > 2 ? atoi(argv[2]) : 120;
  const char *algo = argc > 3 ? argv[3] : "bpcg";
  const char *iters = argc > 4 ? argv[4] : "3000";
  const int g2 = argc > 5 ? atoi(argv[5]) : 0;
  const int nmin = argc > 6 ? atoi(argv[6]) : 20;
  MPI_Comm c = MPI_COMM_WORLD;
  herd_problem p;
  memset(&p, 0, sizeof p);
  kd_kernel_params kp = kd_kernel_params_default(kd_kernel_from_name(kn));
  kp.ls = strcmp(kn, "matern52") == 0 ? sqrt(5.0) : sqrt(3.0);
  double lo[2] = {-1, -1}, hi[2] = {1, 1};
  kd_measure grid = {0};
  grid.type = KD_MEASURE_GRID;
  grid.d = 2;
  grid.lo = lo;
  grid.hi = hi;
  grid.grid_n = g;
  double t0 = MPI_Wtime();
  if (kd_kernel_create(&kp, 2, &p.k) ||
      kd_pointset_generate(c, &grid, (kd_gidx)g * g, 1, &p.cand) ||
      kd_target_create_empirical(p.k, p.cand, 0, &p.t)) {
    fprintf(stderr, "setup: %s\n", kd_err_message());
    MPI_Abort(c, 1);
  }
  char it[48];
  snprintf(it, sizeof it, "max_iter=%s", iters);
  const char *kv[] = {it, NULL};
  kd_result r = KD_RESULT_INIT;
  if (herd_run(c, &p, algo, kv, &r)) {
    fprintf(stderr, "run: %s\n", kd_err_message());
    MPI_Abort(c, 1);
  }
  /* best MMD at each atom count, then the LS fit over atoms >= nmin */
  int64_t nmax = 0;
  for (int64_t i = 0; i < r.n_trace; i++)
    if (r.trace_atoms[i] > nmax) nmax = r.trace_atoms[i];
  double *best = malloc(sizeof(double) * (nmax + 1));
  for (int64_t n = 0; n <= nmax; n++) best[n] = INFINITY;
  for (int64_t i = 0; i < r.n_trace; i++)
    if (r.trace_mmd[i] < best[r.trace_atoms[i]]) best[r.trace_atoms[i]] = r.trace_mmd[i];
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int cnt = 0;
  for (int64_t n = nmin; n <= nmax; n++)
    if (isfinite(best[n])) {
      double x = log((double)n), y = log(best[n]);
      sx += x, sy += y, sxx += x * x, sxy += x * y;
      cnt++;
    }
  double slope = (cnt * sxy - sx * sy) / (cnt * sxx - sx * sx);
  if (kd_test_rank() == 0) {
    printf("%s grid %dx%d algo %s: %lld iterations, %lld atoms, final MMD %.4e, %.1f s\n", kn, g, g,
           algo, (long long)r.trace_iter[r.n_trace - 1], (long long)r.n, r.mmd, MPI_Wtime() - t0);
    for (int64_t n = 10; n <= nmax; n *= 2)
      if (isfinite(best[n])) printf("  atoms %4lld  MMD %.4e\n", (long long)n, best[n]);
    printf("  fitted slope of log MMD vs log atoms over atoms %d..%lld (%d counts): %.3f\n", nmin,
           (long long)nmax, cnt, slope);
  }
  if (g2 > 0) {
    /* discretisation error of the target: MMD between the g-grid and a finer g2-grid */
    kd_pointset *fine = NULL;
    kd_target *tf = NULL;
    grid.grid_n = g2;
    double *pts = malloc(sizeof(double) * 2 * g * g), *w = malloc(sizeof(double) * g * g), mmd = 0;
    for (int i = 0; i < g * g; i++) w[i] = 1.0 / (g * g);
    kd_measure_sample(
        &(kd_measure){.type = KD_MEASURE_GRID, .d = 2, .lo = lo, .hi = hi, .grid_n = g}, 0, 0,
        (kd_lidx)g * g, pts);
    if (kd_pointset_generate(c, &grid, (kd_gidx)g2 * g2, 1, &fine) ||
        kd_target_create_empirical(p.k, fine, 0, &tf) ||
        kd_mmd(tf, pts, w, (kd_lidx)g * g, &mmd, NULL)) {
      fprintf(stderr, "grid mmd: %s\n", kd_err_message());
      MPI_Abort(c, 1);
    }
    if (kd_test_rank() == 0) printf("  MMD(grid %d, grid %d) = %.3e\n", g, g2, mmd);
    kd_target_destroy(&tf);
    kd_pointset_destroy(&fine);
    free(pts);
    free(w);
  }
  free(best);
  kd_result_free(&r);
  kd_target_destroy(&p.t);
  kd_pointset_destroy(&p.cand);
  kd_kernel_destroy(&p.k);
  kd_test_finish();
  return 0;
}
