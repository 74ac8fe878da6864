/* recombine_rows.c - Caratheodory recombination (Hayakawa, Oberhauser & Lyons, Remark 1) of a
 * distributed weighted point set against any test-function matrix (recombine_rows.h): the rows are
 * moved to the leaves of a fixed tree, then reduced by kd_recomb_tree (recombination.c). */
#include "algo/quadrature/recombine_rows.h"

#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"

kd_err kd_recomb_rows(MPI_Comm comm, const kd_pointset *data, const kd_pointset *F, int64_t T,
                      kd_recomb_set *rule, double *sums) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_recomb_set *leaves = NULL;
  double *blk = NULL;
  int64_t lo = 0, hi = 0;
  const int rank = kd_dist_rank(comm), size = kd_dist_size(comm);
  const int m = kd_pointset_dim(F);
  const int64_t N = kd_pointset_n_global(data);
  kd_recomb_leaf_range(T, rank, size, &lo, &hi);
  const int64_t row0 = N * lo / T, row1 = N * hi / T;
  KD_ALLOC(leaves, hi - lo > 0 ? hi - lo : 1);
  for (int64_t j = lo; j < hi; j++) {
    KD_TRY(kd_recomb_set_alloc(&leaves[j - lo], N * (j + 1) / T - N * j / T, m));
    leaves[j - lo].n = N * (j + 1) / T - N * j / T;
  }
  /* local weighted sums (for the check) and the packed block [w, F] of this rank */
  const kd_lidx nl = kd_pointset_n_local(F);
  const double *Fl = kd_pointset_rows_const(F), *wl = kd_pointset_weights_const(data);
  for (int q = 0; q <= m; q++) sums[q] = 0.0;
  /* move every rank's block to the owners of its leaves: one broadcast per rank */
  for (int r = 0; r < size; r++) {
    const int64_t a = kd_pointset_rank_offset(F, r), b = kd_pointset_rank_offset(F, r + 1);
    free(blk);
    blk = malloc(sizeof(double) * (size_t)((b - a) * (m + 1) > 0 ? (b - a) * (m + 1) : 1));
    if (!blk)
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "recombine: block of %lld rows",
                        (long long)(b - a));
    KD_TRY(kd_dist_agreed(comm, lerr));
    if (r == rank)
      for (kd_lidx i = 0; i < nl; i++) {
        blk[i * (m + 1)] = wl ? wl[i] : 1.0 / (double)N;
        memcpy(blk + i * (m + 1) + 1, Fl + (size_t)i * m, sizeof(double) * m);
      }
    KD_TRY(kd_dist_bcast(comm, blk, (int64_t)sizeof(double) * (b - a) * (m + 1), r));
    const int64_t c0 = a > row0 ? a : row0, c1 = b < row1 ? b : row1;
    for (int64_t g = c0; g < c1; g++) {
      /* leaf of row g: the j with N*j/T <= g < N*(j+1)/T */
      int64_t j = (g * T) / N;
      while (N * (j + 1) / T <= g) j++;
      while (N * j / T > g) j--;
      kd_recomb_set *ls = &leaves[j - lo];
      const int64_t i = g - N * j / T;
      ls->gid[i] = g;
      ls->w[i] = blk[(g - a) * (m + 1)];
      memcpy(ls->F + i * m, blk + (g - a) * (m + 1) + 1, sizeof(double) * m);
    }
    if (r == rank)
      for (kd_lidx i = 0; i < nl; i++) {
        const double w = blk[i * (m + 1)];
        sums[m] += w;
        for (int q = 0; q < m; q++) sums[q] += w * blk[i * (m + 1) + 1 + q];
      }
  }
  KD_TRY(kd_dist_sum(comm, sums, m + 1));
  KD_TRY(kd_recomb_tree(comm, m, T, leaves, rule));
cleanup:
  if (leaves)
    for (int64_t j = 0; j < hi - lo; j++) kd_recomb_set_free(&leaves[j]);
  free(leaves);
  free(blk);
  return err;
}
