/* ctt_bench.c - benchmark driver for CTT (not a registered test; run by bench/ctt.sh).
 *   ctt_bench time  key=value...   one distributed test per configuration on all ranks, repeated
 *                                  `reps` times; prints the median wall time per test
 *   ctt_bench study key=value...   a kd_ctt_study (replicates split over ranks, one rank each):
 *                                  rejection rate +- SE and mean seconds per test
 * Keys: m n d shift (mean of Y along axis 0) s g (comma list) B T exact (0/1) ls kernel
 *       (gaussian|laplace|imq|matern32|...) reps seed alpha delta tile. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctt_test_util.h"
#include "comm/dist_impl.h"

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  kd_ctx *ctx = NULL; /* errors and logging act on a bound context */
  if (kd_ctx_create(MPI_COMM_WORLD, &ctx) != KD_OK) MPI_Abort(MPI_COMM_WORLD, 2);
  kd_ctx_set_log_level(ctx, KD_LOG_QUIET);
  kd_ctx_bind(ctx);
  const int rank = kd_dist_rank(MPI_COMM_WORLD), np = kd_dist_size(MPI_COMM_WORLD);
  int64_t m = 4096, n = 4096, s = 32, B = 100, T = 50, reps = 3, tile = 256;
  int d = 2, exact = 1, n_g = 1;
  int64_t g_list[16] = {1};
  double shift = 0.0, ls = 1.0, alpha = 0.05, delta = 0.5;
  uint64_t seed = 1;
  const char *kname = "gaussian", *mode = argc > 1 ? argv[1] : "time";
  for (int i = 2; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (!eq) continue;
    *eq = 0;
    const char *k = argv[i], *v = eq + 1;
    if (!strcmp(k, "m"))
      m = atoll(v);
    else if (!strcmp(k, "n"))
      n = atoll(v);
    else if (!strcmp(k, "d"))
      d = atoi(v);
    else if (!strcmp(k, "s"))
      s = atoll(v);
    else if (!strcmp(k, "B"))
      B = atoll(v);
    else if (!strcmp(k, "T"))
      T = atoll(v);
    else if (!strcmp(k, "reps"))
      reps = atoll(v);
    else if (!strcmp(k, "tile"))
      tile = atoll(v);
    else if (!strcmp(k, "exact"))
      exact = atoi(v);
    else if (!strcmp(k, "shift"))
      shift = atof(v);
    else if (!strcmp(k, "ls"))
      ls = atof(v);
    else if (!strcmp(k, "alpha"))
      alpha = atof(v);
    else if (!strcmp(k, "delta"))
      delta = atof(v);
    else if (!strcmp(k, "seed"))
      seed = strtoull(v, NULL, 10);
    else if (!strcmp(k, "kernel"))
      kname = v;
    else if (!strcmp(k, "g")) {
      n_g = 0;
      for (char *tok = strtok((char *)v, ","); tok && n_g < 16; tok = strtok(NULL, ","))
        g_list[n_g++] = atoll(tok);
    }
  }
  kd_kernel_params kp = kd_kernel_params_default(kd_kernel_from_name(kname));
  kp.ls = ls;
  double *mean = calloc((size_t)d, sizeof(double)), *sd = calloc((size_t)d, sizeof(double));
  for (int j = 0; j < d; j++) sd[j] = 1.0;
  int status = 0;
  if (!strcmp(mode, "study")) {
    kd_measure mx, my;
    memset(&mx, 0, sizeof mx);
    mx.type = KD_MEASURE_GAUSSIAN;
    mx.d = d;
    mx.mean = calloc((size_t)d, sizeof(double));
    mx.sd = sd;
    my = mx;
    my.mean = mean;
    mean[0] = shift;
    kd_ctt_study_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.mx = &mx;
    sp.my = &my;
    sp.m = m;
    sp.n = n;
    sp.T = T;
    sp.seed = seed;
    sp.kp = &kp;
    sp.s = s;
    sp.B = B;
    sp.delta = delta;
    sp.alpha = alpha;
    sp.g_list = g_list;
    sp.n_g = n_g;
    sp.exact = exact;
    sp.exact_tile = tile;
    kd_ctt_study_out st;
    double t0 = kd_dist_wtime();
    kd_err e = kd_ctt_study_run(MPI_COMM_WORLD, &sp, NULL, &st);
    if (e != KD_OK) {
      if (rank == 0) fprintf(stderr, "study failed: %s\n", kd_err_message());
      status = 1;
    } else if (rank == 0) {
      printf(
          "# study m=%lld n=%lld d=%d shift=%g s=%lld B=%lld T=%lld kernel=%s ls=%g ranks=%d "
          "total %.1f s\n",
          (long long)m, (long long)n, d, shift, (long long)s, (long long)B, (long long)T, kname, ls,
          np, kd_dist_wtime() - t0);
      printf("%-8s %4s %9s %8s %12s\n", "method", "g", "rate", "se", "sec/test");
      for (int c = 0; c < st.n_conf; c++)
        printf("%-8s %4lld %9.4f %8.4f %12.5f\n", st.g[c] < 0 ? "exact" : "ctt", (long long)st.g[c],
               st.rate[c], st.se[c], st.mean_seconds[c]);
      kd_ctt_study_free(&st);
    }
    free(mx.mean);
  } else {
    kd_kernel *k = NULL;
    kd_pointset *X = NULL, *Y = NULL;
    mean[0] = shift;
    kd_err e = kd_kernel_create(&kp, d, &k);
    if (e == KD_OK) e = ctt_test_gauss(MPI_COMM_WORLD, m, d, NULL, seed, &X);
    if (e == KD_OK) e = ctt_test_gauss(MPI_COMM_WORLD, n, d, mean, seed + 1, &Y);
    double *times = calloc((size_t)reps, sizeof(double));
    double *cpu = calloc((size_t)reps, sizeof(double));
    for (int c = 0; c < n_g + (exact ? 1 : 0) && e == KD_OK; c++) {
      char sb[32], gb[32], bb[32], tb[32], db[32];
      snprintf(sb, sizeof sb, "s=%lld", (long long)s);
      snprintf(gb, sizeof gb, "g=%lld", (long long)(c < n_g ? g_list[c] : 0));
      snprintf(bb, sizeof bb, "B=%lld", (long long)B);
      snprintf(tb, sizeof tb, "tile=%lld", (long long)tile);
      snprintf(db, sizeof db, "delta=%g", delta);
      const char *sc[] = {sb, gb, bb, db, NULL}, *se[] = {bb, tb, NULL};
      double stat = 0, pv = 0, ph[3] = {0, 0, 0};
      int64_t rej = 0;
      for (int64_t r = 0; r < reps && e == KD_OK; r++) {
        kd_result res = KD_RESULT_INIT;
        kd_dist_barrier(MPI_COMM_WORLD);
        double t0 = kd_dist_wtime();
        clock_t c0 = clock();
        e = ctt_test_run(MPI_COMM_WORLD, c < n_g ? "ctt" : "ctt_exact", k, X, Y, seed + 7,
                         c < n_g ? sc : se, &res);
        times[r] = kd_dist_wtime() - t0;
        cpu[r] = (double)(clock() - c0) / CLOCKS_PER_SEC;
        kd_dist_max(MPI_COMM_WORLD, &times[r], 1);
        kd_dist_max(MPI_COMM_WORLD, &cpu[r], 1);
        if (e == KD_OK) {
          stat = ctt_test_f64(&res, "/test/statistic");
          pv = ctt_test_f64(&res, "/test/p_value");
          rej = ctt_test_i64(&res, "/test/reject");
          kd_result_get_metric(&res, "seconds_distribute", &ph[0]);
          kd_result_get_metric(&res, "seconds_compress", &ph[1]);
          kd_result_get_metric(&res, "seconds_coreset_kernel", &ph[2]);
        }
        kd_result_free(&res);
      }
      if (e != KD_OK) break;
      qsort(times, (size_t)reps, sizeof(double), cmp_dbl);
      qsort(cpu, (size_t)reps, sizeof(double), cmp_dbl);
      if (rank == 0)
        printf(
            "time %-9s g=%-3lld m=%lld n=%lld d=%d s=%lld B=%lld ranks=%d median %.4f s "
            "(min %.4f max %.4f, %lld runs) cpu %.4f s stat %.6g p %.4f reject %lld [last run: "
            "distribute %.4f "
            "compress %.4f coreset-kernel %.4f]\n",
            c < n_g ? "ctt" : "exact", (long long)(c < n_g ? g_list[c] : -1), (long long)m,
            (long long)n, d, (long long)s, (long long)B, np, times[reps / 2], times[0],
            times[reps - 1], (long long)reps, cpu[reps / 2], stat, pv, (long long)rej, ph[0], ph[1],
            ph[2]);
    }
    if (e != KD_OK) {
      if (rank == 0) fprintf(stderr, "failed: %s\n", kd_err_message());
      status = 1;
    }
    free(times);
    free(cpu);
    kd_pointset_destroy(&X);
    kd_pointset_destroy(&Y);
    kd_kernel_destroy(&k);
  }
  free(mean);
  free(sd);
  kd_ctx_unbind(NULL);
  kd_ctx_destroy(&ctx);
  MPI_Finalize();
  return status;
}
