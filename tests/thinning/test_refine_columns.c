/* test_refine_columns.c - KH-Refine (refine.c) evaluates kernel columns as it needs them: above
 * 2048 candidates one per step, up to 2048 kept once computed (the coreset's columns, then one per
 * swap). On 1500, 2500 and 3000 candidates of the 8-component mixture (Gaussian and Matern 5/2
 * kernels, 2 and 3 passes) its swaps and final coreset equal, index for index, a direct
 * transcription of Alg. H.1 over the full Gram matrix, and the MMD to the candidates' empirical
 * measure (direct double sum) never increases. With kept columns the pass evaluates at most
 * nc (m + 1 + swaps) kernel values (the init's block, the diagonal, one column per swap), far
 * fewer than the nc^2 of the whole matrix. Serial (every rank runs the same). */
#include "algo/thinning/thin_impl.h"
#include "thin_test_util.h"

/* the dense transcription: K full, the same delta, tie and stopping rules */
static kd_lidx dense_refine(const double *K, kd_lidx nc, const double *zc, kd_lidx *sel, kd_lidx m,
                            int passes) {
  double *gs = calloc((size_t)nc, sizeof(double));
  char *in = calloc((size_t)nc, 1);
  kd_lidx swaps = 0, last = -1;
  for (kd_lidx j = 0; j < m; j++) in[sel[j]] = 1;
  for (kd_lidx c = 0; c < nc; c++)
    for (kd_lidx j = 0; j < m; j++) gs[c] += K[c * nc + sel[j]];
  for (kd_lidx it = 0; it < (kd_lidx)passes * m; it++) {
    kd_lidx i = it % m, si = sel[i], bc = si;
    if (i == 0 && it > 0 && last < it - m) break;
    double best = 0, scale = 0, fm = (double)m;
    for (kd_lidx c = 0; c < nc; c++) {
      if (in[c]) continue;
      double dt = 2.0 * (gs[c] - K[c * nc + si]) + K[c * nc + c] - 2.0 * gs[si] + K[si * nc + si];
      double delta = -2.0 / fm * (zc[c] - zc[si]) + dt / (fm * fm);
      if (delta < best) best = delta, bc = c;
      scale = fmax(scale, fabs(zc[c]) / fm + fabs(K[c * nc + c]) / (fm * fm));
    }
    if (bc != si && best < -1e-13 * scale) {
      for (kd_lidx c = 0; c < nc; c++) gs[c] += K[c * nc + bc] - K[c * nc + si];
      in[si] = 0, in[bc] = 1, sel[i] = bc, swaps++, last = it;
    }
  }
  free(gs);
  free(in);
  return swaps;
}

static double mmd_to_all(const double *K, kd_lidx nc, const kd_lidx *sel, kd_lidx m) {
  long double a = 0, b = 0, c = 0;
  for (kd_lidx i = 0; i < nc; i++)
    for (kd_lidx j = 0; j < nc; j++) a += K[i * nc + j];
  for (kd_lidx i = 0; i < m; i++)
    for (kd_lidx j = 0; j < nc; j++) b += K[sel[i] * nc + j];
  for (kd_lidx i = 0; i < m; i++)
    for (kd_lidx j = 0; j < m; j++) c += K[sel[i] * nc + sel[j]];
  long double v =
      a / ((long double)nc * nc) - 2 * b / ((long double)nc * m) + c / ((long double)m * m);
  return sqrt((double)(v > 0 ? v : 0));
}

static void one(kd_kernel_type kt, kd_lidx nc, kd_lidx m, int passes) {
  const int d = 2;
  kd_measure mu = thin_test_mixture(d);
  double *X = malloc(sizeof(double) * nc * d), *K = malloc(sizeof(double) * nc * nc),
         *z = malloc(sizeof(double) * nc);
  KD_TEST_OK(kd_measure_sample(&mu, 41, 0, nc, X));
  kd_kernel_params p = kd_kernel_params_default(kt);
  p.ls = 2.0;
  kd_kernel *k = NULL;
  KD_TEST_OK(kd_kernel_create(&p, d, &k));
  KD_TEST_OK(kd_kernel_eval_block(k, X, nc, X, nc, K, nc));
  for (kd_lidx c = 0; c < nc; c++) {
    long double s = 0;
    for (kd_lidx j = 0; j < nc; j++) s += K[c * nc + j];
    z[c] = (double)(s / nc);
  }
  kd_lidx *a = malloc(sizeof(kd_lidx) * m), *b = malloc(sizeof(kd_lidx) * m), swaps = 0;
  for (kd_lidx i = 0; i < m; i++) a[i] = b[i] = (i * 7919) % nc; /* distinct: 7919 prime > nc */
  const double before = mmd_to_all(K, nc, a, m);
  kd_kernel_reset_evals(k);
  KD_TEST_OK(kd_thin_refine(k, X, nc, d, z, a, m, passes, &swaps));
  const uint64_t evals = kd_kernel_evals(k);
  if (nc <= 2048)
    KD_TEST(evals <= (uint64_t)nc * (uint64_t)(m + 1 + swaps) && evals >= (uint64_t)nc * m,
            "nc %lld m %lld: %llu kernel values for %lld swaps (kept columns, not nc^2 = %llu)",
            (long long)nc, (long long)m, (unsigned long long)evals, (long long)swaps,
            (unsigned long long)nc * nc);
  const kd_lidx dswaps = dense_refine(K, nc, z, b, m, passes);
  const double after = mmd_to_all(K, nc, a, m);
  KD_TEST(swaps == dswaps && !memcmp(a, b, sizeof(kd_lidx) * m),
          "%s nc %lld m %lld passes %d: %lld swaps, the dense transcription's %lld, same coreset",
          kd_kernel_name(kt), (long long)nc, (long long)m, passes, (long long)swaps,
          (long long)dswaps);
  KD_TEST(after <= before && swaps > 0, "MMD %.4e -> %.4e after %lld swaps", before, after,
          (long long)swaps);
  kd_kernel_destroy(&k);
  kd_measure_free(&mu);
  free(X), free(K), free(z), free(a), free(b);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  one(KD_KERNEL_GAUSSIAN, 1500, 80, 3);
  one(KD_KERNEL_GAUSSIAN, 2500, 100, 2);
  one(KD_KERNEL_MATERN52, 3000, 150, 3);
  return kd_test_finish();
}
