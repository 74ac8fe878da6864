/* test_tree.c - the distributed tree / bin primitive (comm/tree_impl.h) at 1/2/4 ranks: the owners
 * of every level cover every node exactly once and a parent lives with its first child; merging a
 * tree level by level delivers every child to its parent's owner in child order, so the root (and
 * every gathered level) is the leaves' concatenation whatever the rank count and placement; bins
 * of rows arrive whole and in row order on any (non-monotone) owner, and gather back in bin
 * order on every rank. */
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "comm/tree_impl.h"
#include "kd_test.h"

/* leaf j's block: 1 + j % 3 values 1000 j + k */
static int64_t leaf_len(int64_t j) { return 1 + j % 3; }

/* placements of n leaves on size ranks: 0 block (NULL), 1 all on the last rank, 2 skewed with an
 * empty rank 1 (when size > 2) */
static void placement(int kind, int64_t n, int size, int64_t *start) {
  for (int r = 0; r <= size; r++) {
    if (kind == 1)
      start[r] = r == size ? n : 0;
    else
      start[r] = (r == size) ? n : (n * r * r) / ((int64_t)size * size);
  }
  if (kind == 2 && size > 2) start[1] = start[2];
}

/* every node of every level owned exactly once, ranges agree with owners, parents with first child
 */
static void check_owners(const kd_dist_tree *t, int a, int rank) {
  for (int l = 0; l <= kd_dist_tree_levels(t); l++) {
    int64_t lo, hi, nn = kd_dist_tree_nodes(t, l);
    kd_dist_tree_range(t, l, &lo, &hi);
    int64_t mine = hi - lo, ok = 1;
    KD_TEST_OK(kd_dist_sum_i64(MPI_COMM_WORLD, &mine, 1));
    KD_TEST(mine == nn, "level %d: %lld nodes owned, %lld exist", l, (long long)mine,
            (long long)nn);
    for (int64_t i = 0; i < nn; i++) {
      const int o = kd_dist_tree_owner(t, l, i);
      if ((o == rank) != (i >= lo && i < hi)) ok = 0;
      if (i > 0 && o < kd_dist_tree_owner(t, l, i - 1)) ok = 0;
      if (l > 0) {
        if (o != kd_dist_tree_owner(t, l - 1, i * a)) ok = 0;
        for (int64_t c = i * a; c < (i + 1) * a && c < kd_dist_tree_nodes(t, l - 1); c++)
          if (kd_dist_tree_owner(t, l - 1, c) < o) ok = 0;
      }
    }
    KD_TEST(ok, "level %d: owners consistent", l);
  }
}

/* the concatenation of all leaf blocks [n_tot] */
static double *expected(int64_t n, int64_t *n_tot) {
  int64_t tot = 0;
  for (int64_t j = 0; j < n; j++) tot += leaf_len(j);
  double *e = malloc(sizeof(double) * (size_t)tot);
  for (int64_t j = 0, at = 0; j < n; j++)
    for (int64_t k = 0; k < leaf_len(j); k++) e[at++] = 1000.0 * (double)j + (double)k;
  *n_tot = tot;
  return e;
}

/* gathered level == the leaves' concatenation (checked on rank 0) */
static void check_gather(const kd_dist_tree *t, int l, const kd_dist_block *nodes, const double *e,
                         int64_t ne) {
  double *all = NULL;
  int64_t na = 0;
  KD_TEST_OK(kd_dist_tree_gather(t, l, nodes, 0, &all, &na));
  KD_TEST(na == ne, "level %d gathers %lld values, expected %lld", l, (long long)na, (long long)ne);
  if (kd_test_rank() == 0)
    KD_TEST(all && na == ne && memcmp(all, e, sizeof(double) * (size_t)ne) == 0,
            "level %d: gathered in leaf order", l);
  free(all);
}

/* merge a tree of n leaves of arity a up to the root: parent = its children concatenated */
static void check_merge(int a, int64_t n, int kind) {
  const int rank = kd_test_rank(), size = kd_test_size();
  int64_t *start = malloc(sizeof(int64_t) * (size_t)(size + 1)), lo, hi, ne = 0;
  placement(kind, n, size, start);
  kd_dist_tree *t = NULL;
  KD_TEST_OK(kd_dist_tree_create(MPI_COMM_WORLD, a, n, kind ? start : NULL, &t));
  if (!t) return;
  check_owners(t, a, rank);
  double *e = expected(n, &ne);
  kd_dist_tree_range(t, 0, &lo, &hi);
  kd_dist_block *nodes = calloc((size_t)(hi - lo + 1), sizeof *nodes);
  for (int64_t j = lo; j < hi; j++) {
    nodes[j - lo].n = leaf_len(j);
    nodes[j - lo].v = malloc(sizeof(double) * (size_t)leaf_len(j));
    for (int64_t k = 0; k < leaf_len(j); k++) nodes[j - lo].v[k] = 1000.0 * (double)j + (double)k;
  }
  check_gather(t, 0, nodes, e, ne);
  for (int l = 0; l < kd_dist_tree_levels(t); l++) {
    int64_t plo, phi;
    kd_dist_tree_range(t, l + 1, &plo, &phi);
    kd_dist_block *kids = calloc((size_t)((phi - plo) * a + 1), sizeof *kids);
    kd_dist_block *up = calloc((size_t)(phi - plo + 1), sizeof *up);
    KD_TEST_OK(kd_dist_tree_up(t, l, nodes, kids));
    for (int64_t p = plo; p < phi; p++) {
      int64_t tot = 0;
      for (int c = 0; c < a; c++) tot += kids[(p - plo) * a + c].n;
      up[p - plo].v = malloc(sizeof(double) * (size_t)(tot + 1));
      for (int c = 0; c < a; c++) {
        kd_dist_block *b = &kids[(p - plo) * a + c];
        if (b->n) memcpy(up[p - plo].v + up[p - plo].n, b->v, sizeof(double) * (size_t)b->n);
        up[p - plo].n += b->n;
        kd_dist_block_free(b);
      }
    }
    free(kids);
    free(nodes);
    nodes = up;
    check_gather(t, l + 1, nodes, e, ne);
  }
  /* the root: on the owner of leaf 0, the whole concatenation */
  kd_dist_tree_range(t, kd_dist_tree_levels(t), &lo, &hi);
  if (rank == kd_dist_tree_owner(t, kd_dist_tree_levels(t), 0))
    KD_TEST(
        hi - lo == 1 && nodes[0].n == ne && memcmp(nodes[0].v, e, sizeof(double) * (size_t)ne) == 0,
        "a=%d n=%lld placement %d: root is the leaves in order", a, (long long)n, kind);
  for (int64_t i = 0; i < hi - lo; i++) kd_dist_block_free(&nodes[i]);
  free(nodes);
  free(e);
  free(start);
  kd_dist_tree_destroy(&t);
  KD_TEST(t == NULL, "destroy resets the pointer");
}

/* bins of a row-distributed array (uneven rows, an empty rank) to non-monotone owners */
static void check_bins(void) {
  const int rank = kd_test_rank(), size = kd_test_size(), w = 2;
  const int64_t n = 101, nbins = 7;
  int64_t *offs = malloc(sizeof(int64_t) * (size_t)(size + 1));
  for (int r = 0; r <= size; r++) offs[r] = (n * r * r) / ((int64_t)size * size);
  if (size > 2) offs[1] = offs[2];
  const int64_t bound[8] = {0, 3, 3, 40, 41, 77, 90, 101};
  int owner[7];
  for (int j = 0; j < nbins; j++) owner[j] = (size - 1 - j % size + size) % size;
  double *rows = malloc(sizeof(double) * (size_t)((offs[rank + 1] - offs[rank]) * w + 1));
  for (int64_t g = offs[rank]; g < offs[rank + 1]; g++)
    for (int c = 0; c < w; c++) rows[(g - offs[rank]) * w + c] = 10.0 * (double)g + c;
  kd_dist_block bins[7];
  /* with views, a bin inside the owner's block stays in place: {count, NULL} */
  KD_TEST_OK(kd_dist_bins_collect(MPI_COMM_WORLD, offs, rows, w, nbins, bound, owner, 1, bins));
  for (int j = 0; j < nbins; j++) {
    const int inside = bound[j] >= offs[rank] && bound[j + 1] <= offs[rank + 1];
    if (owner[j] != rank) {
      KD_TEST(bins[j].v == NULL && bins[j].n == 0, "view: bin %d not held here", j);
      continue;
    }
    const double *v = bins[j].v ? bins[j].v : rows + (bound[j] - offs[rank]) * w;
    int ok = bins[j].n == (bound[j + 1] - bound[j]) * w && (bins[j].v == NULL) == inside;
    for (int64_t g = bound[j]; ok && g < bound[j + 1]; g++)
      for (int c = 0; c < w; c++)
        if (v[(g - bound[j]) * w + c] != 10.0 * (double)g + c) ok = 0;
    KD_TEST(ok, "view: bin %d (inside %d) read in place or copied, rows in order", j, inside);
    kd_dist_block_free(&bins[j]);
  }
  KD_TEST_OK(kd_dist_bins_collect(MPI_COMM_WORLD, offs, rows, w, nbins, bound, owner, 0, bins));
  for (int j = 0; j < nbins; j++) {
    if (owner[j] != rank) {
      KD_TEST(bins[j].v == NULL, "bin %d not held here", j);
      continue;
    }
    int ok = bins[j].n == (bound[j + 1] - bound[j]) * w;
    for (int64_t g = bound[j]; ok && g < bound[j + 1]; g++)
      for (int c = 0; c < w; c++)
        if (bins[j].v[(g - bound[j]) * w + c] != 10.0 * (double)g + c) ok = 0;
    KD_TEST(ok, "bin %d holds its rows in order", j);
  }
  /* and back: every rank gets all bins in bin order, i.e. the rows [0, n) in order */
  double *all = NULL;
  int64_t boffs[8];
  KD_TEST_OK(kd_dist_bins_allgather(MPI_COMM_WORLD, nbins, owner, bins, &all, boffs));
  int ok = all && boffs[nbins] == n * w;
  for (int j = 0; ok && j <= nbins; j++) ok = boffs[j] == bound[j] * w;
  for (int64_t g = 0; ok && g < n; g++)
    for (int c = 0; c < w; c++)
      if (all[g * w + c] != 10.0 * (double)g + c) ok = 0;
  KD_TEST(ok, "bins gathered back in bin order on every rank");
  free(all);
  for (int j = 0; j < nbins; j++) kd_dist_block_free(&bins[j]);
  free(rows);
  free(offs);
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const int arity[3] = {2, 3, 4};
  const int64_t leaves[5] = {1, 5, 17, 64, 192};
  for (int ai = 0; ai < 3; ai++)
    for (int ni = 0; ni < 5; ni++)
      for (int kind = 0; kind < 3; kind++) check_merge(arity[ai], leaves[ni], kind);
  check_bins();
  /* bad arguments fail alike on every rank */
  kd_dist_tree *t = NULL;
  KD_TEST(kd_dist_tree_create(MPI_COMM_WORLD, 1, 4, NULL, &t) == KD_ERR_ARG && t == NULL,
          "arity 1 refused");
  kd_err_clear();
  return kd_test_finish();
}
