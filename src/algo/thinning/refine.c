/* refine.c - KH-Refine's swap pass (Low-Rank Thinning App. H, Alg. H.1; the kt-swap step of
 * Dwivedi & Mackey 2024, Alg. 1a). With the coreset S (m points, weights 1/m) and the target
 * embedding z, MMD^2(P_in, S) = zz - (2/m) sum_j z(s_j) + (1/m^2) sum_{j,l} k(s_j, s_l).
 * Replacing s_i by a candidate c changes it by
 *   -(2/m) (z_c - z_{s_i}) + (1/m^2) (2 (g_c - K_{c,s_i}) + K_cc - 2 g_{s_i} + K_{s_i s_i}),
 * g_c = sum_j K_{c, s_j}, which is kept up to date in O(nc) per swap. `passes` sweeps over
 * i = 0..m-1 are made (1 = Alg. H.1 exactly), stopping after a sweep without a replacement. */
#include <math.h>
#include <stdlib.h>

#include "algo/thinning/thin_impl.h"

kd_err kd_thin_refine(kd_kernel *k, const double *C, kd_lidx nc, int d, const double *zc,
                      kd_lidx *sel, kd_lidx m, int passes, kd_lidx *n_swaps) {
  kd_err err = KD_OK;
  double *K = NULL, *gs = NULL;
  char *in = NULL;
  kd_lidx swaps = 0;
  (void)d; /* the kernel knows the dimension */
  if (m == 0) goto cleanup;
  KD_ALLOC(K, nc * nc);
  KD_ALLOC(gs, nc);
  KD_ALLOC(in, nc);
  KD_TRY(kd_kernel_eval_block(k, C, nc, C, nc, K, nc));
  for (kd_lidx j = 0; j < m; j++) {
    KD_CHECK(sel[j] >= 0 && sel[j] < nc && !in[sel[j]], KD_ERR_INTERNAL,
             "refine: coreset indices must be distinct candidates");
    in[sel[j]] = 1;
  }
  for (kd_lidx c = 0; c < nc; c++) {
    double s = 0.0;
    for (kd_lidx j = 0; j < m; j++) s += K[c * nc + sel[j]];
    gs[c] = s;
  }
  const double fm = (double)m;
  kd_lidx last_swap = -1; /* sweep index of the last replacement: stop after a quiet sweep */
  for (kd_lidx it = 0; it < (kd_lidx)passes * m; it++) {
    kd_lidx i = it % m;
    if (i == 0 && it > 0 && last_swap < it - m) break;
    const kd_lidx si = sel[i];
    double best = 0.0, scale = 0.0;
    kd_lidx bc = si;
    for (kd_lidx c = 0; c < nc; c++) {
      if (in[c]) continue;
      double dt = 2.0 * (gs[c] - K[c * nc + si]) + K[c * nc + c] - 2.0 * gs[si] + K[si * nc + si];
      double delta = -2.0 / fm * (zc[c] - zc[si]) + dt / (fm * fm);
      if (delta < best) {
        best = delta;
        bc = c;
      }
      scale = fmax(scale, fabs(zc[c]) / fm + fabs(K[c * nc + c]) / (fm * fm));
    }
    /* only strict improvements beyond round-off are taken, so the MMD never increases */
    if (bc != si && best < -1e-13 * scale) {
      for (kd_lidx c = 0; c < nc; c++) gs[c] += K[c * nc + bc] - K[c * nc + si];
      in[si] = 0;
      in[bc] = 1;
      sel[i] = bc;
      swaps++;
      last_swap = it;
    }
  }
cleanup:
  if (n_swaps) *n_swaps = swaps;
  free(K);
  free(gs);
  free(in);
  return err;
}
