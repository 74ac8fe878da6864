/* tree.c - the distributed tree / bin primitive of tree_impl.h: node owners from a leaf placement,
 * one level of a merge up the tree (children to their parent's owner), the gather of a level, and
 * the collection of contiguous row ranges on their owners. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "comm/tree_impl.h"

/* tags on the caller's communicator: the tree's messages (every one is received within the call
 * that sends it, even after a local error, so none outlives a call) and the bins' */
#define KD_TREE_TAG 7301
#define KD_BINS_TAG 7302

struct kd_dist_tree {
  MPI_Comm comm; /* the caller's (borrowed) */
  int rank, size, arity;
  int64_t n_leaves;
  int64_t *start; /* [size + 1] leaf placement */
};

void kd_dist_block_free(kd_dist_block *b) {
  if (!b) return;
  free(b->v);
  b->v = NULL;
  b->n = 0;
}

/* leaves per node at level l, capped at n_leaves (one node from there on) */
static int64_t kd_tree_width_(const kd_dist_tree *t, int level) {
  int64_t w = 1;
  for (int l = 0; l < level && w < t->n_leaves; l++) w *= t->arity;
  return w;
}

static int64_t kd_ceil_div_(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* the rank owning leaf j: the largest r < size with start[r] <= j (skips empty ranks) */
static int kd_tree_leaf_owner_(const kd_dist_tree *t, int64_t j) {
  int lo = 0, hi = t->size - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (t->start[mid] <= j)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

kd_err kd_dist_tree_create(MPI_Comm comm, int arity, int64_t n_leaves, const int64_t *leaf_start,
                           kd_dist_tree **out) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_dist_tree *t = NULL;
  const int size = kd_dist_size(comm);
  *out = NULL;
  KD_CHECK(arity >= 2 && n_leaves >= 1, KD_ERR_ARG, "tree: arity %d, %lld leaves", arity,
           (long long)n_leaves);
  if (leaf_start) {
    KD_CHECK(leaf_start[0] == 0 && leaf_start[size] == n_leaves, KD_ERR_ARG,
             "tree: the leaf placement must run from 0 to %lld", (long long)n_leaves);
    for (int r = 0; r < size; r++)
      KD_CHECK(leaf_start[r] <= leaf_start[r + 1], KD_ERR_ARG,
               "tree: the leaf placement decreases at rank %d", r);
  }
  t = calloc(1, sizeof *t);
  if (t) t->start = malloc(sizeof(int64_t) * (size_t)(size + 1));
  if (!t || !t->start) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "tree: out of memory");
  KD_TRY(kd_dist_agreed(comm, lerr));
  t->rank = kd_dist_rank(comm);
  t->size = size;
  t->arity = arity;
  t->n_leaves = n_leaves;
  for (int r = 0; r <= size; r++)
    t->start[r] = leaf_start ? leaf_start[r] : kd_ceil_div_(n_leaves * r, size);
  /* no duplicate: MPI_Comm_dup is a collective that simulators charge heavily (0.64 s at 256
   * SimGrid ranks) and the tags above keep the tree's messages apart */
  t->comm = comm;
  *out = t;
  t = NULL;
cleanup:
  kd_dist_tree_destroy(&t);
  return err;
}

void kd_dist_tree_destroy(kd_dist_tree **t) {
  if (!t || !*t) return;
  free((*t)->start);
  free(*t);
  *t = NULL;
}

int64_t kd_dist_tree_nodes(const kd_dist_tree *t, int level) {
  return kd_ceil_div_(t->n_leaves, kd_tree_width_(t, level));
}

int kd_dist_tree_levels(const kd_dist_tree *t) {
  int L = 0;
  while (kd_dist_tree_nodes(t, L) > 1) L++;
  return L;
}

int kd_dist_tree_owner(const kd_dist_tree *t, int level, int64_t i) {
  return kd_tree_leaf_owner_(t, i * kd_tree_width_(t, level));
}

void kd_dist_tree_range(const kd_dist_tree *t, int level, int64_t *lo, int64_t *hi) {
  const int64_t w = kd_tree_width_(t, level);
  *lo = kd_ceil_div_(t->start[t->rank], w);
  *hi = kd_ceil_div_(t->start[t->rank + 1], w);
}

/* Receive the next block from src (size learnt by a probe). On allocation failure the message is
 * still consumed (into a scratch double, truncated) and *lerr records KD_ERR_MEM. */
static kd_err kd_tree_recv_(const kd_dist_tree *t, int src, kd_dist_block *b, kd_err *lerr) {
  kd_err err = KD_OK;
  MPI_Status st;
  int cnt = 0;
  double scratch = 0.0;
  KD_MPI(MPI_Probe(src, KD_TREE_TAG, t->comm, &st));
  KD_MPI(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
  b->v = malloc(sizeof(double) * (size_t)(cnt > 0 ? cnt : 1));
  if (!b->v) {
    if (*lerr == KD_OK)
      *lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "tree: cannot receive %d values", cnt);
    (void)MPI_Recv(&scratch, cnt > 0 ? 1 : 0, MPI_DOUBLE, src, KD_TREE_TAG, t->comm,
                   MPI_STATUS_IGNORE);
    goto cleanup;
  }
  KD_MPI(MPI_Recv(b->v, cnt, MPI_DOUBLE, src, KD_TREE_TAG, t->comm, MPI_STATUS_IGNORE));
  kd_dist_comm_count(t->comm, 8 * (int64_t)cnt);
  b->n = cnt;
cleanup:
  return err;
}

kd_err kd_dist_tree_up(const kd_dist_tree *t, int level, kd_dist_block *mine, kd_dist_block *kids) {
  const double t0 = MPI_Wtime();
  kd_err err = KD_OK, lerr = KD_OK;
  const int a = t->arity;
  const int64_t cnt = kd_dist_tree_nodes(t, level);
  int64_t lo, hi, plo, phi;
  kd_dist_tree_range(t, level, &lo, &hi);
  kd_dist_tree_range(t, level + 1, &plo, &phi);
  for (int64_t k = 0; k < (phi - plo) * a; k++) kids[k] = (kd_dist_block){0, NULL};
  /* sends first (always to a lower rank), in node order */
  for (int64_t i = lo; i < hi; i++) {
    const int64_t p = i / a;
    const int dest = kd_dist_tree_owner(t, level + 1, p);
    if (dest == t->rank) {
      kids[(p - plo) * a + i % a] = mine[i - lo];
    } else {
      /* an oversized node is reported on this rank only (agreed at the caller's next phase
       * boundary); an empty message still goes out so the receiver is never left waiting */
      const int too_big = mine[i - lo].n > INT_MAX;
      if (too_big && lerr == KD_OK)
        lerr = kd_err_set(KD_ERR_ARG, __FILE__, __LINE__, "tree: node of %lld values too large",
                          (long long)mine[i - lo].n);
      KD_MPI(MPI_Send(mine[i - lo].v, too_big ? 0 : (int)mine[i - lo].n, MPI_DOUBLE, dest,
                      KD_TREE_TAG, t->comm));
      kd_dist_comm_count(t->comm, too_big ? 0 : 8 * mine[i - lo].n);
      kd_dist_block_free(&mine[i - lo]);
    }
    mine[i - lo] = (kd_dist_block){0, NULL};
  }
  /* then the children held elsewhere, per source in child order (MPI keeps a source's order) */
  for (int64_t p = plo; p < phi; p++)
    for (int c = 0; c < a; c++) {
      const int64_t ch = p * a + c;
      if (ch >= cnt) break;
      const int src = kd_dist_tree_owner(t, level, ch);
      if (src != t->rank) KD_TRY(kd_tree_recv_(t, src, &kids[(p - plo) * a + c], &lerr));
    }
  err = lerr;
cleanup:
  kd_dist_comm_add(t0);
  return err;
}

kd_err kd_dist_tree_gather(const kd_dist_tree *t, int level, const kd_dist_block *mine, int root,
                           double **all, int64_t *n_all) {
  const double t0 = MPI_Wtime();
  kd_err err = KD_OK, lerr = KD_OK;
  double *buf = NULL;
  int64_t lo, hi, n = 0;
  *all = NULL;
  *n_all = 0;
  kd_dist_tree_range(t, level, &lo, &hi);
  for (int64_t i = lo; i < hi; i++) n += mine[i - lo].n;
  int64_t tot = n;
  KD_TRY(kd_dist_sum_i64(t->comm, &tot, 1));
  buf = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (t->rank == root) *all = malloc(sizeof(double) * (size_t)(tot > 0 ? tot : 1));
  if (!buf || (t->rank == root && !*all))
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "tree: cannot gather %lld values",
                      (long long)tot);
  KD_TRY(kd_dist_agreed(t->comm, lerr));
  for (int64_t i = lo, at = 0; i < hi; at += mine[i - lo].n, i++)
    if (mine[i - lo].n > 0)
      memcpy(buf + at, mine[i - lo].v, sizeof(double) * (size_t)mine[i - lo].n);
  KD_TRY(kd_dist_gatherv(t->comm, buf, n, *all, root));
  *n_all = tot;
cleanup:
  kd_dist_comm_add(t0);
  if (err != KD_OK) {
    free(*all);
    *all = NULL;
  }
  free(buf);
  return err;
}

/* rows of bin j held by rank q: [*a, *e) (empty when *a >= *e) */
static void kd_bins_overlap_(const int64_t *row_offs, const int64_t *bound, int64_t j, int q,
                             int64_t *a, int64_t *e) {
  *a = bound[j] > row_offs[q] ? bound[j] : row_offs[q];
  *e = bound[j + 1] < row_offs[q + 1] ? bound[j + 1] : row_offs[q + 1];
}

/* allocate the bins owned here (with views, not those inside this rank's rows: {n, NULL});
 * KD_ERR_MEM agreed over comm */
static kd_err kd_bins_alloc_(MPI_Comm comm, int rank, int width, int64_t nbins,
                             const int64_t *row_offs, const int64_t *bound, const int *owner,
                             int views, kd_dist_block *bins) {
  kd_err lerr = KD_OK;
  for (int64_t j = 0; j < nbins; j++) bins[j] = (kd_dist_block){0, NULL};
  for (int64_t j = 0; j < nbins && lerr == KD_OK; j++) {
    if (owner[j] != rank) continue;
    const int64_t n = (bound[j + 1] - bound[j]) * width;
    bins[j].n = n;
    if (views && bound[j] >= row_offs[rank] && bound[j + 1] <= row_offs[rank + 1]) continue;
    bins[j].v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!bins[j].v)
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "bins: cannot allocate bin %lld",
                        (long long)j);
  }
  return kd_dist_agreed(comm, lerr);
}

kd_err kd_dist_bins_collect(MPI_Comm comm, const int64_t *row_offs, const double *rows, int width,
                            int64_t nbins, const int64_t *bound, const int *owner, int views,
                            kd_dist_block *bins) {
  const double t0 = MPI_Wtime();
  kd_err err = KD_OK;
  MPI_Request *req = NULL;
  const int rank = kd_dist_rank(comm), size = kd_dist_size(comm);
  int nreq = 0;
  int64_t a, e;
  for (int64_t j = 0; j < nbins; j++) /* the same on every rank */
    KD_CHECK((bound[j + 1] - bound[j]) * width <= INT_MAX, KD_ERR_ARG,
             "bins: bin %lld of %lld rows is too large to move", (long long)j,
             (long long)(bound[j + 1] - bound[j]));
  KD_TRY(kd_bins_alloc_(comm, rank, width, nbins, row_offs, bound, owner, views, bins));
  /* every receive is posted before any send, so the blocking sends below cannot deadlock */
  for (int64_t j = 0; j < nbins; j++)
    for (int q = 0; owner[j] == rank && q < size; q++) {
      kd_bins_overlap_(row_offs, bound, j, q, &a, &e);
      nreq += q != rank && a < e;
    }
  req = malloc(sizeof *req * (size_t)(nreq > 0 ? nreq : 1));
  KD_TRY(kd_dist_agreed(comm, req ? KD_OK
                                  : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                               "bins: cannot allocate %d requests", nreq)));
  nreq = 0;
  for (int64_t j = 0; j < nbins; j++)
    for (int q = 0; owner[j] == rank && bins[j].v && q < size; q++) {
      kd_bins_overlap_(row_offs, bound, j, q, &a, &e);
      if (a >= e) continue;
      double *dst = bins[j].v + (a - bound[j]) * width;
      if (q == rank)
        memcpy(dst, rows + (a - row_offs[rank]) * width,
               sizeof(double) * (size_t)((e - a) * width));
      else
        KD_MPI(
            MPI_Irecv(dst, (int)((e - a) * width), MPI_DOUBLE, q, KD_BINS_TAG, comm, &req[nreq++]));
      if (q != rank) kd_dist_comm_count(comm, 8 * (e - a) * width);
    }
  for (int64_t j = 0; j < nbins; j++) {
    kd_bins_overlap_(row_offs, bound, j, rank, &a, &e);
    if (owner[j] == rank || a >= e) continue;
    KD_MPI(MPI_Send(rows + (a - row_offs[rank]) * width, (int)((e - a) * width), MPI_DOUBLE,
                    owner[j], KD_BINS_TAG, comm));
    kd_dist_comm_count(comm, 8 * (e - a) * width);
  }
  KD_MPI(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
cleanup:
  kd_dist_comm_add(t0);
  if (err != KD_OK)
    for (int64_t j = 0; j < nbins; j++) kd_dist_block_free(&bins[j]);
  free(req);
  return err;
}

kd_err kd_dist_bins_allgather(MPI_Comm comm, int64_t nbins, const int *owner,
                              const kd_dist_block *bins, double **all, int64_t *offs) {
  const double t0 = MPI_Wtime();
  kd_err err = KD_OK, lerr = KD_OK;
  double *mine = NULL, *got = NULL;
  const int rank = kd_dist_rank(comm), size = kd_dist_size(comm);
  int64_t nmine = 0;
  *all = NULL;
  for (int64_t j = 0; j <= nbins; j++) offs[j] = 0;
  for (int64_t j = 0; j < nbins; j++)
    if (owner[j] == rank) offs[j + 1] = bins[j].n;
  KD_TRY(kd_dist_sum_i64(comm, offs + 1, (int)nbins));
  for (int64_t j = 0; j < nbins; j++) {
    if (owner[j] == rank) nmine += offs[j + 1];
    offs[j + 1] += offs[j];
  }
  mine = malloc(sizeof(double) * (size_t)(nmine > 0 ? nmine : 1));
  got = malloc(sizeof(double) * (size_t)(offs[nbins] > 0 ? offs[nbins] : 1));
  *all = malloc(sizeof(double) * (size_t)(offs[nbins] > 0 ? offs[nbins] : 1));
  if (!mine || !got || !*all)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "bins: cannot gather %lld values",
                      (long long)offs[nbins]);
  KD_TRY(kd_dist_agreed(comm, lerr));
  for (int64_t j = 0, at = 0; j < nbins; j++)
    if (owner[j] == rank && bins[j].n > 0) {
      memcpy(mine + at, bins[j].v, sizeof(double) * (size_t)bins[j].n);
      at += bins[j].n;
    }
  KD_TRY(kd_dist_allgatherv(comm, mine, nmine, got));
  /* rank r contributed its bins in bin order, after those of ranks < r */
  for (int r = 0, at = 0; r < size; r++)
    for (int64_t j = 0; j < nbins; j++)
      if (owner[j] == r) {
        const int64_t len = offs[j + 1] - offs[j];
        if (len > 0) memcpy(*all + offs[j], got + at, sizeof(double) * (size_t)len);
        at += len;
      }
cleanup:
  kd_dist_comm_add(t0);
  if (err != KD_OK) {
    free(*all);
    *all = NULL;
  }
  free(mine);
  free(got);
  return err;
}
