/* quad_outcheck.c - checks on quad / recombine output files for run_quad_cli.sh (not a test):
 *   quad_outcheck rule A.h5 MAXN D        1 <= n <= MAXN, d = D, weights >= 0 summing to 1,
 *                                          distinct indices >= 0, finite points
 *   quad_outcheck same A.h5 B.h5          identical coresets (bits) and metrics within 1e-12
 *   quad_outcheck metric A.h5 NAME LO HI  LO <= /metrics NAME <= HI
 * Exit 0 if the check holds, 1 otherwise (with a message). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"

static int load(const char *p, kd_result *r) {
  if (kd_output_read(p, r, NULL, NULL, NULL) != KD_OK) {
    fprintf(stderr, "quad_outcheck: %s\n", kd_err_message());
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  kd_result a = KD_RESULT_INIT, b = KD_RESULT_INIT;
  int ok = 0;
  if (argc >= 5 && !strcmp(argv[1], "rule") && load(argv[2], &a)) {
    double s = 0;
    int good = a.n >= 1 && a.n <= atol(argv[3]) && a.d == atoi(argv[4]);
    for (kd_gidx i = 0; i < a.n; i++) {
      s += a.weights[i];
      good &= a.weights[i] >= 0 && a.indices[i] >= 0;
      for (kd_gidx j = 0; j < i; j++) good &= a.indices[i] != a.indices[j];
    }
    for (kd_gidx i = 0; i < a.n * a.d; i++) good &= isfinite(a.points[i]) ? 1 : 0;
    ok = good && fabs(s - 1) <= 1e-12;
    if (!ok)
      fprintf(stderr, "quad_outcheck: %s invalid (n %lld d %d weight sum %.17g)\n", argv[2],
              (long long)a.n, a.d, s);
  } else if (argc >= 4 && !strcmp(argv[1], "same") && load(argv[2], &a) && load(argv[3], &b)) {
    ok = a.n == b.n && a.d == b.d &&
         !memcmp(a.points, b.points, sizeof(double) * (size_t)(a.n * a.d)) &&
         !memcmp(a.weights, b.weights, sizeof(double) * (size_t)a.n) &&
         !memcmp(a.indices, b.indices, sizeof(int64_t) * (size_t)a.n);
    if (!ok)
      fprintf(stderr, "quad_outcheck: %s and %s differ (n %lld/%lld)\n", argv[2], argv[3],
              (long long)a.n, (long long)b.n);
  } else if (argc >= 6 && !strcmp(argv[1], "metric") && load(argv[2], &a)) {
    double v = NAN;
    ok = kd_result_get_metric(&a, argv[3], &v) && v >= atof(argv[4]) && v <= atof(argv[5]);
    printf("%s %s = %.6g (want [%s, %s])\n", argv[2], argv[3], v, argv[4], argv[5]);
  } else if (argc < 4) {
    fprintf(stderr, "usage: quad_outcheck rule A MAXN D | same A B | metric A NAME LO HI\n");
  }
  kd_result_free(&a);
  kd_result_free(&b);
  return ok ? 0 : 1;
}
