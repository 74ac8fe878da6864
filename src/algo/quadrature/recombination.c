/* recombination.c - Caratheodory recombination (Hayakawa, Oberhauser & Lyons, Remark 1 and Alg. 1
 * steps 1-4): a tree of null-space reductions on group sums, and its distributed version over a
 * fixed binary tree of leaves. */
#include "algo/quadrature/recombination.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "la/la_dist_impl.h"

kd_err kd_recomb_set_alloc(kd_recomb_set *s, int64_t cap, int m) {
  kd_err err = KD_OK;
  memset(s, 0, sizeof *s);
  s->m = m;
  KD_ALLOC(s->gid, cap);
  KD_ALLOC(s->w, cap);
  KD_ALLOC(s->F, (size_t)cap * (m > 0 ? m : 1));
cleanup:
  if (err != KD_OK) kd_recomb_set_free(s);
  return err;
}

void kd_recomb_set_free(kd_recomb_set *s) {
  if (!s) return;
  free(s->gid);
  free(s->w);
  free(s->F);
  memset(s, 0, sizeof *s);
}

/* Caratheodory on K columns of the r x K column-major matrix M (destroyed): coefficients c >= 0
 * (in/out) keep M c fixed while all but at most rank(M) of them become zero. V: K*K scratch. */
static kd_err kd_caratheodory_(int r, int K, double *M, double *c, double *V) {
  kd_err err = KD_OK;
  int q = 0;
  KD_TRY(kd_la_null_space(r, K, M, KD_RECOMB_RTOL, V, &q));
  for (int t = 0; t < q; t++) {
    double *v = V + (size_t)t * K;
    int jbest = -1;
    double best = 0;
    for (int pass = 0; pass < 2 && jbest < 0; pass++) {
      if (pass == 1)
        for (int j = 0; j < K; j++) v[j] = -v[j];
      for (int j = 0; j < K; j++)
        if (v[j] > 0 && c[j] > 0) {
          double ratio = c[j] / v[j];
          if (jbest < 0 || ratio < best) {
            best = ratio;
            jbest = j;
          }
        }
    }
    if (jbest < 0) continue; /* null vector supported on zero coefficients only */
    for (int j = 0; j < K; j++) {
      c[j] -= best * v[j];
      if (c[j] < 0) c[j] = 0;
    }
    c[jbest] = 0;
    /* make the remaining null vectors vanish at jbest (rank-1 update) */
    const int rest = q - t - 1;
    if (rest > 0) {
      double *Vr = V + (size_t)(t + 1) * K;
      const double piv = v[jbest];
      double *f = NULL;
      KD_ALLOC(f, rest);
      for (int u = 0; u < rest; u++) f[u] = Vr[(size_t)u * K + jbest] / piv;
      cblas_dger(CblasColMajor, K, rest, -1.0, v, 1, f, 1, Vr, K);
      for (int u = 0; u < rest; u++) Vr[(size_t)u * K + jbest] = 0;
      free(f);
    }
  }
cleanup:
  return err;
}

kd_err kd_recomb_reduce(kd_recomb_set *s) {
  kd_err err = KD_OK;
  double *M = NULL, *V = NULL, *c = NULL;
  int64_t *start = NULL;
  const int m = s->m, r = m + 1;
  /* drop zero weights, check finiteness */
  int64_t na = 0;
  for (int64_t i = 0; i < s->n; i++) {
    int ok = isfinite(s->w[i]) && s->w[i] >= 0;
    for (int j = 0; j < m; j++) ok &= isfinite(s->F[i * m + j]) ? 1 : 0;
    KD_CHECK(ok, KD_ERR_NUMERIC,
             "recombination: non-finite or negative value at point %lld (test functions or weight)",
             (long long)s->gid[i]);
    if (s->w[i] > 0) {
      s->gid[na] = s->gid[i];
      s->w[na] = s->w[i];
      if (na != i) memmove(s->F + na * m, s->F + i * m, sizeof(double) * m);
      na++;
    }
  }
  s->n = na;
  if (s->n <= r) goto cleanup;
  const int Kmax = 2 * r;
  KD_ALLOC(M, (size_t)r * Kmax);
  KD_ALLOC(V, (size_t)Kmax * Kmax);
  KD_ALLOC(c, Kmax);
  KD_ALLOC(start, Kmax + 1);
  while (s->n > r) {
    const int64_t n = s->n;
    const int K = n <= Kmax ? (int)n : Kmax;
    for (int g = 0; g <= K; g++) start[g] = n * g / K;
    /* group sums: column g = sum_{i in g} w_i [1; F_i] */
    memset(M, 0, sizeof(double) * (size_t)r * K);
    for (int g = 0; g < K; g++) {
      double *col = M + (size_t)g * r;
      for (int64_t i = start[g]; i < start[g + 1]; i++) {
        col[0] += s->w[i];
        cblas_daxpy(m, s->w[i], s->F + i * m, 1, col + 1, 1);
      }
      c[g] = 1.0;
    }
    KD_TRY(kd_caratheodory_(r, K, M, c, V));
    int64_t keep = 0;
    for (int g = 0; g < K; g++) {
      if (!(c[g] > 0)) continue;
      for (int64_t i = start[g]; i < start[g + 1]; i++) {
        s->gid[keep] = s->gid[i];
        s->w[keep] = s->w[i] * c[g];
        if (keep != i) memmove(s->F + keep * m, s->F + i * m, sizeof(double) * m);
        keep++;
      }
    }
    KD_CHECK(keep < n, KD_ERR_NUMERIC, "recombination made no progress on %lld points",
             (long long)n);
    s->n = keep;
  }
cleanup:
  free(M);
  free(V);
  free(c);
  free(start);
  return err;
}

kd_err kd_recomb_drop_one(kd_recomb_set *s) {
  kd_err err = KD_OK;
  double *M = NULL, *V = NULL;
  const int m = s->m;
  if (s->n <= m || m < 1) return KD_OK;
  const int K = (int)s->n, r = m; /* rows: 1, phi_1 .. phi_{m-1} */
  KD_ALLOC(M, (size_t)r * K);
  KD_ALLOC(V, (size_t)K * K);
  for (int j = 0; j < K; j++) {
    M[(size_t)j * r] = 1.0;
    for (int i = 1; i < r; i++) M[(size_t)j * r + i] = s->F[(int64_t)j * m + (i - 1)];
  }
  int q = 0;
  KD_TRY(kd_la_null_space(r, K, M, KD_RECOMB_RTOL, V, &q));
  if (q == 0) goto cleanup;
  double *u = V, dk = 0;
  for (int j = 0; j < K; j++) dk += s->F[(int64_t)j * m + (m - 1)] * u[j];
  if (dk < 0)
    for (int j = 0; j < K; j++) u[j] = -u[j];
  int jbest = -1;
  double best = 0;
  for (int j = 0; j < K; j++)
    if (u[j] > 0 && (jbest < 0 || s->w[j] / u[j] < best)) {
      best = s->w[j] / u[j];
      jbest = j;
    }
  KD_CHECK(jbest >= 0, KD_ERR_NUMERIC, "recombination: null direction without a positive entry");
  int64_t keep = 0;
  for (int j = 0; j < K; j++) {
    double wj = s->w[j] - best * u[j];
    if (j == jbest || !(wj > 0)) continue;
    s->gid[keep] = s->gid[j];
    s->w[keep] = wj;
    if (keep != j) memmove(s->F + keep * m, s->F + (int64_t)j * m, sizeof(double) * m);
    keep++;
  }
  s->n = keep;
cleanup:
  free(M);
  free(V);
  return err;
}

void kd_recomb_leaf_range(int64_t n_leaves, int rank, int size, int64_t *lo, int64_t *hi) {
  /* leaf j lives on rank floor(j * size / n_leaves): leaf 0 (the root) is always on rank 0 */
  *lo = (n_leaves * rank + size - 1) / size;
  *hi = (n_leaves * (rank + 1) + size - 1) / size;
}

/* pack: [n, (gid, w, F[m]) x n] */
static int64_t kd_pack_(const kd_recomb_set *s, double *buf) {
  const int m = s->m;
  buf[0] = (double)s->n;
  for (int64_t i = 0; i < s->n; i++) {
    double *p = buf + 1 + i * (m + 2);
    p[0] = (double)s->gid[i];
    p[1] = s->w[i];
    memcpy(p + 2, s->F + i * m, sizeof(double) * m);
  }
  return 1 + s->n * (m + 2);
}

/* append the packed set buf to s (capacity must suffice) */
static void kd_unpack_append_(kd_recomb_set *s, const double *buf) {
  const int m = s->m;
  const int64_t n = (int64_t)buf[0];
  for (int64_t i = 0; i < n; i++) {
    const double *p = buf + 1 + i * (m + 2);
    s->gid[s->n] = (int64_t)p[0];
    s->w[s->n] = p[1];
    memcpy(s->F + s->n * m, p + 2, sizeof(double) * m);
    s->n++;
  }
}

/* Grow s to capacity 2(m+1) and append b (b freed). */
static kd_err kd_merge_(kd_recomb_set *a, kd_recomb_set *b) {
  kd_err err = KD_OK;
  kd_recomb_set t = {0};
  const int m = a->m;
  KD_TRY(kd_recomb_set_alloc(&t, a->n + b->n, m));
  memcpy(t.gid, a->gid, sizeof(int64_t) * a->n);
  memcpy(t.gid + a->n, b->gid, sizeof(int64_t) * b->n);
  memcpy(t.w, a->w, sizeof(double) * a->n);
  memcpy(t.w + a->n, b->w, sizeof(double) * b->n);
  memcpy(t.F, a->F, sizeof(double) * a->n * m);
  memcpy(t.F + a->n * m, b->F, sizeof(double) * b->n * m);
  t.n = a->n + b->n;
  KD_TRY(kd_recomb_reduce(&t));
  kd_recomb_set_free(a);
  kd_recomb_set_free(b);
  *a = t;
  memset(&t, 0, sizeof t);
cleanup:
  kd_recomb_set_free(&t);
  return err;
}

int64_t kd_recomb_tree_levels(int64_t n_leaves) {
  int64_t L = 0;
  for (int64_t c = n_leaves; c > 1; c = (c + 1) / 2) L++;
  return L;
}

int64_t kd_recomb_tree_count(int64_t n_leaves, int64_t level) {
  int64_t c = n_leaves;
  for (int64_t l = 0; l < level && c > 1; l++) c = (c + 1) / 2;
  return c;
}

kd_err kd_recomb_agree_stop(MPI_Comm comm, kd_err lerr, int ask, int *stop) {
  kd_err err = kd_dist_agreed(comm, (ask && lerr == KD_OK) ? KD_ERR_INTERRUPTED : lerr);
  if (err == KD_ERR_INTERRUPTED) {
    /* the lowest failing rank asked to stop: every rank stops, but a real error still wins */
    if (stop) *stop = 1;
    kd_err_clear();
    err = kd_dist_agreed(comm, lerr);
  }
  return err;
}

/* The packed node j as a tree block (allocated). Local. */
static kd_err kd_node_block_(const kd_recomb_set *s, kd_dist_block *b) {
  kd_err err = KD_OK;
  KD_ALLOC(b->v, 1 + s->n * (s->m + 2));
  b->n = kd_pack_(s, b->v);
cleanup:
  return err;
}

/* The set packed in block b, appended to the empty set *s of m test functions. Local. */
static kd_err kd_block_node_(const kd_dist_block *b, int m, kd_recomb_set *s) {
  kd_err err = KD_OK;
  KD_TRY(kd_recomb_set_alloc(s, (int64_t)b->v[0], m));
  kd_unpack_append_(s, b->v);
cleanup:
  return err;
}

/* Common set-up of begin / restore: the tree (owners, moves: comm/tree_impl.h), the node array
 * and the buffer of the root's broadcast. Collective; local allocation errors go to *lerr. */
static kd_err kd_tree_setup_(MPI_Comm comm, int m, int64_t n_leaves, const int64_t *leaf_start,
                             kd_recomb_tree_state *t, kd_err *lerr) {
  kd_err err = KD_OK;
  int64_t *start = NULL;
  memset(t, 0, sizeof *t);
  t->comm = comm;
  t->m = m;
  t->rank = kd_dist_rank(comm);
  t->n_leaves = n_leaves;
  t->cnt = n_leaves;
  t->cap = 1 + (int64_t)(m + 1) * (m + 2);
  const int size = kd_dist_size(comm);
  KD_ALLOC(start, size + 1);
  for (int r = 0; r <= size; r++) {
    if (leaf_start) {
      start[r] = leaf_start[r];
    } else {
      int64_t a, b;
      kd_recomb_leaf_range(n_leaves, r < size ? r : size - 1, size, &a, &b);
      start[r] = r < size ? a : n_leaves;
    }
  }
  KD_TRY(kd_dist_tree_create(comm, 2, n_leaves, start, &t->tree));
  t->node = calloc((size_t)(n_leaves > 0 ? n_leaves : 1), sizeof *t->node);
  t->buf = malloc(sizeof(double) * (size_t)t->cap);
  if (!t->node || !t->buf)
    *lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "recombination tree of %lld leaves",
                       (long long)n_leaves);
cleanup:
  free(start);
  return err;
}

kd_err kd_recomb_tree_begin(MPI_Comm comm, int m, int64_t n_leaves, const int64_t *leaf_start,
                            kd_recomb_set *leaves, int ask, int *stop, kd_recomb_tree_state *t) {
  kd_err err = KD_OK, lerr = KD_OK;
  KD_TRY(kd_tree_setup_(comm, m, n_leaves, leaf_start, t, &lerr));
  if (lerr == KD_OK) {
    int64_t lo, hi;
    kd_dist_tree_range(t->tree, 0, &lo, &hi);
    for (int64_t j = lo; lerr == KD_OK && j < hi; j++) {
      t->node[j] = leaves[j - lo];
      memset(&leaves[j - lo], 0, sizeof leaves[j - lo]);
      t->node[j].m = m;
      lerr = kd_recomb_reduce(&t->node[j]);
    }
  }
  err = kd_recomb_agree_stop(t->comm, lerr, ask, stop);
cleanup:
  return err;
}

kd_err kd_recomb_tree_restore(MPI_Comm comm, int m, int64_t n_leaves, const int64_t *leaf_start,
                              int64_t level, int64_t n_nodes, const int64_t *count,
                              const int64_t *gid, const double *w, const double *F,
                              kd_recomb_tree_state *t) {
  kd_err err = KD_OK, lerr = KD_OK;
  KD_TRY(kd_tree_setup_(comm, m, n_leaves, leaf_start, t, &lerr));
  /* the inputs are replicated: these checks fail alike on every rank */
  const int64_t levels = kd_recomb_tree_levels(n_leaves);
  KD_CHECK(level >= 0 && level <= levels, KD_ERR_INPUT,
           "checkpoint: tree level %lld outside [0, %lld] for %lld leaves", (long long)level,
           (long long)levels, (long long)n_leaves);
  KD_CHECK(n_nodes == kd_recomb_tree_count(n_leaves, level), KD_ERR_INPUT,
           "checkpoint: %lld tree nodes at level %lld, the tree of %lld leaves has %lld",
           (long long)n_nodes, (long long)level, (long long)n_leaves,
           (long long)kd_recomb_tree_count(n_leaves, level));
  for (int64_t j = 0; j < n_nodes; j++)
    KD_CHECK(count[j] >= 0 && count[j] <= m + 1, KD_ERR_INPUT,
             "checkpoint: tree node %lld holds %lld points (at most m + 1 = %d)", (long long)j,
             (long long)count[j], m + 1);
  t->level = level;
  t->cnt = n_nodes;
  for (int64_t j = 0, off = 0; lerr == KD_OK && j < n_nodes; off += count[j], j++) {
    if (kd_dist_tree_owner(t->tree, (int)level, j) != t->rank) continue;
    lerr = kd_recomb_set_alloc(&t->node[j], count[j] > 0 ? count[j] : 1, m);
    if (lerr != KD_OK) break;
    t->node[j].n = count[j];
    memcpy(t->node[j].gid, gid + off, sizeof(int64_t) * (size_t)count[j]);
    memcpy(t->node[j].w, w + off, sizeof(double) * (size_t)count[j]);
    memcpy(t->node[j].F, F + off * m, sizeof(double) * (size_t)(count[j] * m));
  }
  err = kd_dist_agreed(comm, lerr);
cleanup:
  return err;
}

/* This rank's nodes [lo, hi) of the current level packed into blocks mine[hi - lo]. Local;
 * allocation errors returned (agree them). */
static kd_err kd_tree_pack_level_(const kd_recomb_tree_state *t, int64_t lo, int64_t hi,
                                  kd_dist_block *mine) {
  kd_err err = KD_OK;
  for (int64_t j = lo; j < hi; j++) KD_TRY(kd_node_block_(&t->node[j], &mine[j - lo]));
cleanup:
  return err;
}

/* The parents [plo, phi) of the next level from their children kids[2 (p - plo) + c]: the left
 * child merged with the right one and reduced (a lone child is kept as it is). Local. */
static kd_err kd_tree_merge_kids_(kd_recomb_tree_state *t, int64_t plo, int64_t phi,
                                  kd_dist_block *kids) {
  kd_err err = KD_OK;
  kd_recomb_set b = {0};
  for (int64_t p = plo; p < phi; p++) {
    const kd_dist_block *kl = &kids[2 * (p - plo)], *kr = &kids[2 * (p - plo) + 1];
    KD_TRY(kd_block_node_(kl, t->m, &t->node[p]));
    if (!kr->v) continue;
    KD_TRY(kd_block_node_(kr, t->m, &b));
    KD_TRY(kd_merge_(&t->node[p], &b));
  }
cleanup:
  kd_recomb_set_free(&b);
  return err;
}

kd_err kd_recomb_tree_step(kd_recomb_tree_state *t, int ask, int *stop) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_dist_block *mine = NULL, *kids = NULL;
  const int L = (int)t->level;
  int64_t lo = 0, hi = 0, plo = 0, phi = 0;
  KD_CHECK(t->cnt > 1, KD_ERR_INTERNAL, "recombination tree: step past the root");
  kd_dist_tree_range(t->tree, L, &lo, &hi);
  kd_dist_tree_range(t->tree, L + 1, &plo, &phi);
  mine = calloc((size_t)(hi > lo ? hi - lo : 1), sizeof *mine);
  kids = calloc((size_t)(phi > plo ? 2 * (phi - plo) : 1), sizeof *kids);
  if (!mine || !kids)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "recombination tree level %d", L + 1);
  if (lerr == KD_OK) lerr = kd_tree_pack_level_(t, lo, hi, mine);
  KD_TRY(kd_dist_agreed(t->comm, lerr));
  for (int64_t j = lo; j < hi; j++) kd_recomb_set_free(&t->node[j]);
  /* children to their parent's owner, then merged there in child order */
  lerr = kd_dist_tree_up(t->tree, L, mine, kids);
  if (lerr == KD_OK) lerr = kd_tree_merge_kids_(t, plo, phi, kids);
  t->cnt = (t->cnt + 1) / 2;
  t->level++;
  KD_TRY(kd_recomb_agree_stop(t->comm, lerr, ask, stop));
cleanup:
  for (int64_t j = 0; mine && j < hi - lo; j++) kd_dist_block_free(&mine[j]);
  for (int64_t j = 0; kids && j < 2 * (phi - plo); j++) kd_dist_block_free(&kids[j]);
  free(mine);
  free(kids);
  return err;
}

int64_t kd_recomb_tree_local_points(const kd_recomb_tree_state *t) {
  int64_t n = 0;
  for (int64_t j = 0; t->node && j < t->cnt; j++) n += t->node[j].n;
  return n;
}

kd_err kd_recomb_tree_gather(const kd_recomb_tree_state *t, int root, int64_t **count,
                             int64_t *total, int64_t **gid, double **w, double **F) {
  kd_err err = KD_OK, lerr = KD_OK;
  const int m = t->m;
  kd_dist_block *mine = NULL;
  double *all = NULL;
  int64_t lo = 0, hi = 0, n_all = 0;
  *count = *gid = NULL;
  *w = *F = NULL;
  *total = 0;
  kd_dist_tree_range(t->tree, (int)t->level, &lo, &hi);
  mine = calloc((size_t)(hi > lo ? hi - lo : 1), sizeof *mine);
  if (!mine) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "tree gather");
  if (lerr == KD_OK) lerr = kd_tree_pack_level_(t, lo, hi, mine);
  KD_TRY(kd_dist_agreed(t->comm, lerr));
  KD_TRY(kd_dist_tree_gather(t->tree, (int)t->level, mine, root, &all, &n_all));
  if (t->rank == root) {
    int64_t npts = 0;
    for (int64_t j = 0, p = 0; j < t->cnt; j++) {
      const int64_t n = (int64_t)all[p];
      npts += n;
      p += 1 + n * (m + 2);
    }
    KD_ALLOC(*count, t->cnt > 0 ? t->cnt : 1);
    KD_ALLOC(*gid, npts > 0 ? npts : 1);
    KD_ALLOC(*w, npts > 0 ? npts : 1);
    KD_ALLOC(*F, npts > 0 ? npts * m : 1);
    for (int64_t j = 0, p = 0, i = 0; j < t->cnt; j++) {
      const int64_t n = (int64_t)all[p++];
      (*count)[j] = n;
      for (int64_t q = 0; q < n; q++, i++, p += m + 2) {
        (*gid)[i] = (int64_t)all[p];
        (*w)[i] = all[p + 1];
        memcpy(*F + i * m, all + p + 2, sizeof(double) * m);
      }
    }
    *total = npts;
  }
cleanup:
  if (err != KD_OK) {
    free(*count);
    free(*gid);
    free(*w);
    free(*F);
    *count = *gid = NULL;
    *w = *F = NULL;
  }
  for (int64_t j = 0; mine && j < hi - lo; j++) kd_dist_block_free(&mine[j]);
  free(mine);
  free(all);
  return err;
}

kd_err kd_recomb_tree_finish(kd_recomb_tree_state *t, kd_recomb_set *out) {
  kd_err err = KD_OK;
  memset(out, 0, sizeof *out);
  KD_CHECK(t->cnt == 1, KD_ERR_INTERNAL, "recombination tree: finish at %lld nodes",
           (long long)t->cnt);
  /* the root lives on the owner of leaf 0: broadcast it */
  const int root = kd_dist_tree_owner(t->tree, (int)t->level, 0);
  int64_t len = 0;
  if (t->rank == root) len = kd_pack_(&t->node[0], t->buf);
  KD_TRY(kd_dist_bcast(t->comm, &len, sizeof len, root));
  KD_TRY(kd_dist_bcast(t->comm, t->buf, (int64_t)sizeof(double) * len, root));
  KD_TRY(kd_recomb_set_alloc(out, (int64_t)t->buf[0], t->m));
  kd_unpack_append_(out, t->buf);
cleanup:
  return err;
}

void kd_recomb_tree_state_free(kd_recomb_tree_state *t) {
  if (!t) return;
  if (t->node)
    for (int64_t j = 0; j < t->n_leaves; j++) kd_recomb_set_free(&t->node[j]);
  free(t->node);
  free(t->buf);
  kd_dist_tree_destroy(&t->tree);
  memset(t, 0, sizeof *t);
}

kd_err kd_recomb_tree(MPI_Comm comm, int m, int64_t n_leaves, kd_recomb_set *leaves,
                      kd_recomb_set *out) {
  return kd_recomb_tree_map(comm, m, n_leaves, NULL, leaves, out);
}

kd_err kd_recomb_tree_map(MPI_Comm comm, int m, int64_t n_leaves, const int64_t *leaf_start,
                          kd_recomb_set *leaves, kd_recomb_set *out) {
  kd_err err = KD_OK;
  kd_recomb_tree_state t;
  memset(out, 0, sizeof *out);
  KD_TRY(kd_recomb_tree_begin(comm, m, n_leaves, leaf_start, leaves, 0, NULL, &t));
  while (t.cnt > 1) KD_TRY(kd_recomb_tree_step(&t, 0, NULL));
  KD_TRY(kd_recomb_tree_finish(&t, out));
cleanup:
  kd_recomb_tree_state_free(&t);
  return err;
}
