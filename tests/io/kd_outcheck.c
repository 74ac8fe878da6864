/* kd_outcheck.c - checks on kdistill output files for the script tests (not a test itself):
 *   kd_outcheck same A.h5 B.h5         coresets identical bit for bit, MMDs within 1e-12 rel.
 *   kd_outcheck mmd A.h5 REF RTOL      |mmd - REF| <= RTOL * |REF|
 *   kd_outcheck valid A.h5 N D         n = N, d = D, weights >= 0 summing to 1 (1e-12), finite
 * Exit 0 if the check holds, 1 otherwise (with a message). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"

static int load(const char *p, kd_result *r) {
  if (kd_output_read(p, r, NULL, NULL, NULL) != KD_OK) {
    fprintf(stderr, "kd_outcheck: %s\n", kd_err_message());
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  kd_result a = KD_RESULT_INIT, b = KD_RESULT_INIT;
  int ok = 0;
  if (argc >= 4 && !strcmp(argv[1], "same") && load(argv[2], &a) && load(argv[3], &b)) {
    ok = a.n == b.n && a.d == b.d &&
         !memcmp(a.points, b.points, sizeof(double) * (size_t)(a.n * a.d)) &&
         !memcmp(a.weights, b.weights, sizeof(double) * (size_t)a.n) &&
         !memcmp(a.indices, b.indices, sizeof(int64_t) * (size_t)a.n) &&
         fabs(a.mmd - b.mmd) <= 1e-12 * fabs(a.mmd);
    if (!ok)
      fprintf(stderr, "kd_outcheck: %s and %s differ (n %lld/%lld, mmd %.17g/%.17g)\n", argv[2],
              argv[3], (long long)a.n, (long long)b.n, a.mmd, b.mmd);
  } else if (argc >= 5 && !strcmp(argv[1], "mmd") && load(argv[2], &a)) {
    double ref = atof(argv[3]), rtol = atof(argv[4]);
    ok = fabs(a.mmd - ref) <= rtol * fabs(ref);
    printf("mmd %.17g reference %.17g rel diff %.3e (rtol %g)\n", a.mmd, ref,
           fabs(a.mmd - ref) / fabs(ref), rtol);
  } else if (argc >= 5 && !strcmp(argv[1], "valid") && load(argv[2], &a)) {
    double s = 0;
    int good = 1;
    for (kd_gidx i = 0; i < a.n; i++) {
      s += a.weights[i];
      if (!(a.weights[i] >= 0)) good = 0;
    }
    for (kd_gidx i = 0; i < a.n * a.d; i++)
      if (!isfinite(a.points[i])) good = 0;
    ok = good && a.n == atol(argv[3]) && a.d == atoi(argv[4]) && fabs(s - 1) <= 1e-12 && a.mmd >= 0;
    if (!ok)
      fprintf(stderr, "kd_outcheck: %s invalid (n %lld d %d weight sum %.17g mmd %g)\n", argv[2],
              (long long)a.n, a.d, s, a.mmd);
  } else if (argc < 4) {
    fprintf(stderr, "usage: kd_outcheck same A B | mmd A REF RTOL | valid A N D\n");
  }
  kd_result_free(&a);
  kd_result_free(&b);
  return ok ? 0 : 1;
}
