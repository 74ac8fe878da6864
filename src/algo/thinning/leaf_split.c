/* leaf_split.c - the leaf bins of the thinning tree over more ranks than there are bins.
 *
 * The tree has nb = 64 F leaf bins (driver.c), so with more ranks than bins most ranks would wait
 * while the bins' owners compress them. Here every bin is split into its 4^j descendants of height
 * hs = h_leaf - j (sub-nodes; sub-node q = 4^j bin + c is the Compress node of that id, whose rows
 * are the bin's slots [c 4^hs, (c + 1) 4^hs) after the remainder rule), the S = nb 4^j sub-nodes
 * are compressed by the ranks in contiguous runs (sub-node q on rank floor(q p / S)), their outputs
 * go to the bin's owner, which makes the halvings above them (kd_thin_compress_join): the output of
 * kd_thin_compress_node(_src) on the bin, bit for bit, whatever the split.
 *
 * Rows. Stored input: the owner holds the bin (kd_dist_bins_collect), applies the remainder rule
 * and sends each sub-node's slots to its rank (one all-to-all). Generated input (lazy): each rank
 * generates its sub-nodes' rows itself; a sub-node reaching into the bin's halved tail halves the
 * tail too (the remainder rule's own halving, the same bits on every rank; counted once). Both
 * exchanges are all-to-alls over the job's communicator, agreed before each. */
#include <stdlib.h>
#include <string.h>

#include "algo/thinning/thin_impl.h"
#include "comm/dist_impl.h"

int kd_thin_leaf_split_depth(int req, kd_gidx nb, int size, int hl, int g) {
  if (req >= 0) return req < hl ? req : hl;
  int j = 0;
  while (j + 1 <= hl - g - 1 && (nb << (2 * j)) < (kd_gidx)size) j++;
  return j;
}

/* the split's sizes: S sub-nodes of per slots and so output rows each, rec doubles per record */
typedef struct {
  kd_gidx S;
  int hs;
  kd_lidx per, so, rec;
  kd_gidx qlo, qhi; /* this rank's sub-nodes */
  int64_t *scnt, *rcnt;
} kd_ls_geom_;

static int kd_ls_rank_(const kd_leaf_split *L, const kd_ls_geom_ *G, kd_gidx q) {
  return (int)((q * (kd_gidx)L->size) / G->S);
}

static kd_gidx kd_ls_first_(const kd_ls_geom_ *G, int r, int size) {
  return (G->S * (kd_gidx)r + size - 1) / size; /* the first q with floor(q size / S) >= r */
}

/* A bin's rows after the remainder rule: the first nf from the input, then the e kept rows of the
 * halved tail T (kk: indices into T). */
typedef struct {
  kd_lidx e, nf;
  double *T;
  kd_lidx *kk;
  double *R; /* stored input, on the owner: the bin's B slots */
} kd_ls_bin_;

static void kd_ls_bin_free_(kd_ls_bin_ *b) {
  free(b->T);
  free(b->kk);
  free(b->R);
  memset(b, 0, sizeof *b);
}

/* The remainder rule's tail of bin b (generated rows): T, kk. *ev: its evaluations. Local. */
static kd_err kd_ls_tail_(const kd_leaf_split *L, kd_gidx b, kd_ls_bin_ *t, uint64_t *ev) {
  kd_err err = KD_OK;
  const kd_gidx g0 = L->bstart[b];
  const kd_lidx s = (kd_lidx)(L->bstart[b + 1] - g0), d = L->d;
  t->e = s - L->B;
  t->nf = L->B - t->e;
  KD_CHECK(t->e >= 0 && 2 * t->e <= s, KD_ERR_INTERNAL,
           "remainder: bin of %lld rows for %lld slots", (long long)s, (long long)L->B);
  if (t->e == 0) goto cleanup;
  const uint64_t e0 = kd_kernel_evals(L->k);
  KD_ALLOC(t->T, 2 * t->e * d);
  KD_ALLOC(t->kk, t->e);
  KD_TRY(kd_pointset_rows_at(L->ps, g0 + t->nf, 2 * t->e, t->T));
  KD_TRY(kd_thin_remainder_halve(L->k, L->pl->kind, t->T, t->e, (int)d, L->delta_rem, L->seed,
                                 (uint64_t)b, t->kk));
  *ev += kd_kernel_evals(L->k) - e0;
cleanup:
  return err;
}

/* Stored input, on the owner of bin b: the remainder rule (kd_thin_absorb_remainder) on the bin's
 * rows X, the B slots into t->R and the slot -> bin row map into t->kk (B entries). Local. */
static kd_err kd_ls_slots_(const kd_leaf_split *L, kd_gidx b, const double *X, kd_ls_bin_ *t) {
  kd_err err = KD_OK;
  const kd_lidx s = (kd_lidx)(L->bstart[b + 1] - L->bstart[b]), d = L->d;
  KD_ALLOC(t->kk, s);
  KD_ALLOC(t->R, L->B * d);
  KD_TRY(kd_thin_absorb_remainder(L->k, L->pl->kind, X, s, L->B, (int)d, L->delta_rem, L->seed,
                                  (uint64_t)b, t->kk));
  for (kd_lidx i = 0; i < L->B; i++)
    memcpy(t->R + i * d, X + t->kk[i] * d, sizeof(double) * (size_t)d);
cleanup:
  return err;
}

kd_err kd_thin_bin_rows_get(void *ctx, kd_lidx i0, kd_lidx cnt, double *dst) {
  kd_err err = KD_OK;
  const kd_thin_bin_rows *b = ctx;
  const kd_lidx ng = i0 < b->nf ? (b->nf - i0 < cnt ? b->nf - i0 : cnt) : 0;
  if (ng > 0) KD_TRY(kd_pointset_rows_at(b->ps, b->g0 + i0, ng, dst));
  for (kd_lidx i = i0 + ng; i < i0 + cnt; i++)
    memcpy(dst + (i - i0) * b->d, b->T + b->kk[i - b->nf] * b->d, sizeof(double) * (size_t)b->d);
cleanup:
  return err;
}

/* One sub-node's Compress (generated rows), as kd_leaf_sample_run runs it */
typedef struct {
  const kd_leaf_split *L;
  const kd_ls_geom_ *G;
  kd_thin_bin_rows src;
  kd_lidx r0;
  uint64_t node;
  kd_lidx *o;
  double *ox;
} kd_ls_job_;

static kd_err kd_ls_job_run_(void *arg) {
  const kd_ls_job_ *J = arg;
  const kd_leaf_split *L = J->L;
  const kd_thin_rows rows = {kd_thin_bin_rows_get, (void *)&J->src};
  kd_lidx no = 0;
  return kd_thin_compress_node_src(L->k, L->pl->kind, &rows, J->r0, L->d, J->G->hs, L->pl->g + 1,
                                   L->pl->g, L->dsign * L->pl->delta, L->den, L->seed, J->node,
                                   J->o, J->ox, &no);
}

/* Sub-node q into the record rec = [slot, x] x so: from its slots X (stored input) or generated
 * (tail t of its bin). A timing-only SMPI run may skip it (kd_leaf_sample_run): its first so slots
 * then stand in. Local. */
static kd_err kd_ls_sub_(const kd_leaf_split *L, const kd_ls_geom_ *G, kd_gidx q, const double *X,
                         const kd_ls_bin_ *t, double *rec) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_lidx *o = NULL, no = 0;
  double *ox = NULL;
  const int d = L->d, w = d + 1;
  const kd_gidx b = q >> (2 * (L->j)), c = q - (b << (2 * L->j));
  KD_ALLOC(o, G->so);
  KD_ALLOC(ox, G->so * d);
  if (X) {
    KD_TRY(kd_thin_compress_node(L->k, L->pl->kind, X, d, G->hs, L->pl->g, L->dsign * L->pl->delta,
                                 L->den, L->seed, (uint64_t)q, 0, o, &no));
    for (kd_lidx i = 0; i < no; i++) memcpy(ox + i * d, X + o[i] * d, sizeof(double) * (size_t)d);
  } else {
    const kd_ls_job_ J = {
        L, G, {L->ps, L->bstart[b], t->nf, t->T, t->kk, d}, (kd_lidx)c * G->per, (uint64_t)q,
        o, ox};
    if (!kd_leaf_sample_run(kd_ls_job_run_, (void *)&J, &lerr) && lerr == KD_OK) {
      for (kd_lidx i = 0; i < G->so; i++) o[i] = i; /* placeholder (timing only) */
      lerr = kd_thin_bin_rows_get((void *)&J.src, J.r0, G->so, ox);
    }
    KD_TRY(lerr);
  }
  for (kd_lidx i = 0; i < G->so; i++) {
    rec[i * w] = (double)((kd_lidx)c * G->per + o[i]);
    memcpy(rec + i * w + 1, ox + i * d, sizeof(double) * (size_t)d);
  }
cleanup:
  free(o);
  free(ox);
  return err;
}

/* The bin's output from its descendants' records (rec, in q order) into node: packed [global
 * row, x] as kd_leaf_ packs it. Local. */
static kd_err kd_ls_join_(const kd_leaf_split *L, const kd_ls_geom_ *G, kd_gidx b,
                          const kd_ls_bin_ *t, const double *rec, kd_dist_block *node) {
  kd_err err = KD_OK;
  const int d = L->d, w = d + 1;
  const kd_lidx m = ((kd_lidx)1 << (2 * L->j)) * G->so;
  const kd_lidx no_max = kd_thin_node_out(L->hl, L->pl->g);
  kd_lidx *sidx = NULL, *out = NULL, no = 0;
  double *sx = NULL, *outx = NULL;
  KD_ALLOC(sidx, m);
  KD_ALLOC(sx, m * d);
  KD_ALLOC(out, no_max);
  KD_ALLOC(outx, no_max * d);
  for (kd_lidx i = 0; i < m; i++) {
    sidx[i] = (kd_lidx)rec[i * w];
    memcpy(sx + i * d, rec + i * w + 1, sizeof(double) * (size_t)d);
  }
  KD_TRY(kd_thin_compress_join(L->k, L->pl->kind, d, L->hl, G->hs, L->pl->g,
                               L->dsign * L->pl->delta, L->den, L->seed, (uint64_t)b, sidx, sx, out,
                               outx, &no));
  KD_ALLOC(node->v, no * w);
  node->n = no * w;
  const kd_gidx g0 = L->bstart[b];
  for (kd_lidx i = 0; i < no; i++) {
    const kd_lidx s = out[i];
    const kd_lidx row = t->R ? t->kk[s] : (s < t->nf ? s : t->nf + t->kk[s - t->nf]);
    node->v[i * w] = (double)(g0 + row);
    memcpy(node->v + i * w + 1, outx + i * d, sizeof(double) * (size_t)d);
  }
cleanup:
  free(sidx);
  free(sx);
  free(out);
  free(outx);
  return err;
}

/* The counts (scnt, rcnt) of an all-to-all of one block of `unit` doubles per sub-node between
 * its bin's owner and its rank: from the owners to the ranks (to_helpers: the slots), or back
 * (the records). Sub-nodes on their bin's owner move nothing. */
static void kd_ls_counts_(const kd_leaf_split *L, const kd_ls_geom_ *G, int to_helpers,
                          kd_lidx unit) {
  for (int r = 0; r < L->size; r++) G->scnt[r] = G->rcnt[r] = 0;
  const kd_gidx Q = (kd_gidx)1 << (2 * L->j);
  for (kd_gidx q = L->lo * Q; q < L->hi * Q; q++) {
    const int r = kd_ls_rank_(L, G, q);
    if (r != L->rank) (to_helpers ? G->scnt : G->rcnt)[r] += unit;
  }
  for (kd_gidx q = G->qlo; q < G->qhi; q++) {
    const int r = L->owner[q / Q];
    if (r != L->rank) (to_helpers ? G->rcnt : G->scnt)[r] += unit;
  }
}

/* Every sub-node of this rank: its records into mine (in q order); the slots of a stored bin's
 * sub-node from its owner (slots, in q order) or from the owner's own copy. The tails of other
 * ranks' generated bins are halved here when a sub-node reaches into them (*ev_skip: their
 * evaluations, which the owner makes too). Local. */
static kd_err kd_ls_subs_(const kd_leaf_split *L, const kd_ls_geom_ *G, const kd_ls_bin_ *own,
                          const double *slots, double *mine, uint64_t *ev_skip) {
  kd_err err = KD_OK;
  kd_ls_bin_ h = {0, 0, NULL, NULL, NULL};
  kd_gidx hb = -1; /* the bin whose tail h holds */
  const kd_gidx Q = (kd_gidx)1 << (2 * L->j);
  const kd_lidx pd = G->per * L->d;
  kd_lidx used = 0;
  for (kd_gidx q = G->qlo; q < G->qhi; q++) {
    const kd_gidx b = q / Q, c = q - b * Q;
    const int mine_bin = L->owner[b] == L->rank;
    const kd_ls_bin_ *t = mine_bin ? &own[b - L->lo] : NULL;
    const double *X = NULL;
    if (!L->lazy) {
      X = mine_bin ? t->R + (kd_lidx)c * pd : slots + (used++) * pd;
    } else if (!mine_bin) {
      if (hb != b) {
        kd_ls_bin_free_(&h);
        hb = b;
        const kd_lidx s = (kd_lidx)(L->bstart[b + 1] - L->bstart[b]);
        const kd_gidx last = (G->qhi < (b + 1) * Q ? G->qhi : (b + 1) * Q) - b * Q;
        h.e = s - L->B;
        h.nf = L->B - h.e;
        if ((kd_lidx)last * G->per > h.nf) /* a sub-node here reaches into the tail */
          KD_TRY(kd_ls_tail_(L, b, &h, ev_skip));
      }
      t = &h;
    }
    KD_TRY(kd_ls_sub_(L, G, q, X, t, mine + (q - G->qlo) * G->rec));
  }
cleanup:
  kd_ls_bin_free_(&h);
  return err;
}

/* Every record of this rank's bins, in q order: its own sub-nodes' from mine, the others' from
 * recv (in q order), then the joins into nodes. Local. */
static kd_err kd_ls_joins_(const kd_leaf_split *L, const kd_ls_geom_ *G, const kd_ls_bin_ *own,
                           const double *mine, const double *recv, kd_dist_block *nodes) {
  kd_err err = KD_OK;
  double *rec = NULL;
  const kd_gidx Q = (kd_gidx)1 << (2 * L->j);
  kd_lidx got = 0;
  KD_ALLOC(rec, (kd_lidx)Q * G->rec);
  for (kd_gidx b = L->lo; b < L->hi; b++) {
    for (kd_gidx q = b * Q; q < (b + 1) * Q; q++) {
      const double *src =
          kd_ls_rank_(L, G, q) == L->rank ? mine + (q - G->qlo) * G->rec : recv + (got++) * G->rec;
      memcpy(rec + (q - b * Q) * G->rec, src, sizeof(double) * (size_t)G->rec);
    }
    KD_TRY(kd_ls_join_(L, G, b, &own[b - L->lo], rec, &nodes[b - L->lo]));
  }
cleanup:
  free(rec);
  return err;
}

/* the send buffer of the slots: this rank's stored bins' sub-nodes held elsewhere, in q order */
static void kd_ls_pack_slots_(const kd_leaf_split *L, const kd_ls_geom_ *G, const kd_ls_bin_ *own,
                              double *buf) {
  const kd_gidx Q = (kd_gidx)1 << (2 * L->j);
  const kd_lidx pd = G->per * L->d;
  kd_lidx k = 0;
  for (kd_gidx q = L->lo * Q; q < L->hi * Q; q++)
    if (kd_ls_rank_(L, G, q) != L->rank)
      memcpy(buf + (k++) * pd, own[q / Q - L->lo].R + (q % Q) * pd, sizeof(double) * (size_t)pd);
}

static int64_t kd_ls_total_(const int64_t *c, int size) {
  int64_t t = 0;
  for (int r = 0; r < size; r++) t += c[r];
  return t;
}

kd_err kd_thin_leaves_split(const kd_leaf_split *L, kd_dist_block *nodes, uint64_t *ev_skip) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_ls_bin_ *own = NULL;
  double *sbuf = NULL, *rbuf = NULL, *mine = NULL;
  const int g = L->pl->g, w = L->d + 1;
  kd_ls_geom_ G = {L->nb << (2 * L->j), L->hl - L->j, 0, 0, 0, 0, 0, NULL, NULL};
  G.per = (kd_lidx)1 << (2 * G.hs);
  G.so = kd_thin_node_out(G.hs, g);
  G.rec = G.so * w;
  G.qlo = kd_ls_first_(&G, L->rank, L->size);
  G.qhi = kd_ls_first_(&G, L->rank + 1, L->size);
  own = calloc((size_t)(L->hi - L->lo + 1), sizeof *own);
  G.scnt = calloc((size_t)L->size, sizeof(int64_t));
  G.rcnt = calloc((size_t)L->size, sizeof(int64_t));
  mine = malloc(sizeof(double) * (size_t)((G.qhi - G.qlo) * G.rec + 1));
  if (!own || !G.scnt || !G.rcnt || !mine)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "thin: cannot allocate the split leaf bins");
  /* the owners: the remainder rule of their bins */
  for (kd_gidx b = L->lo; b < L->hi && lerr == KD_OK; b++)
    lerr = L->lazy ? kd_ls_tail_(L, b, &own[b - L->lo], &(uint64_t){0})
                   : kd_ls_slots_(L, b, L->bins[b - L->lo], &own[b - L->lo]);
  if (!L->lazy) { /* the slots to the sub-nodes' ranks */
    KD_TRY(kd_dist_agreed(L->comm, lerr));
    kd_ls_counts_(L, &G, 1, G.per * L->d);
    sbuf = malloc(sizeof(double) * (size_t)(kd_ls_total_(G.scnt, L->size) + 1));
    rbuf = malloc(sizeof(double) * (size_t)(kd_ls_total_(G.rcnt, L->size) + 1));
    KD_TRY(kd_dist_agreed(L->comm, sbuf && rbuf ? KD_OK
                                                : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                                             "thin: cannot allocate the slots")));
    kd_ls_pack_slots_(L, &G, own, sbuf);
    KD_TRY(kd_dist_alltoallv(L->comm, sbuf, G.scnt, rbuf, G.rcnt));
    free(sbuf);
    sbuf = NULL;
  }
  if (lerr == KD_OK) lerr = kd_ls_subs_(L, &G, own, rbuf, mine, ev_skip);
  free(rbuf);
  rbuf = NULL;
  /* the records to the bins' owners (this rank's sub-nodes are in q order, so are the owners) */
  KD_TRY(kd_dist_agreed(L->comm, lerr));
  kd_ls_counts_(L, &G, 0, G.rec);
  sbuf = malloc(sizeof(double) * (size_t)(kd_ls_total_(G.scnt, L->size) + 1));
  rbuf = malloc(sizeof(double) * (size_t)(kd_ls_total_(G.rcnt, L->size) + 1));
  KD_TRY(kd_dist_agreed(L->comm, sbuf && rbuf ? KD_OK
                                              : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                                           "thin: cannot allocate the records")));
  {
    kd_lidx k = 0;
    for (kd_gidx q = G.qlo; q < G.qhi; q++)
      if (L->owner[q >> (2 * L->j)] != L->rank)
        memcpy(sbuf + (k++) * G.rec, mine + (q - G.qlo) * G.rec, sizeof(double) * (size_t)G.rec);
  }
  KD_TRY(kd_dist_alltoallv(L->comm, sbuf, G.scnt, rbuf, G.rcnt));
  KD_TRY(kd_dist_agreed(L->comm, kd_ls_joins_(L, &G, own, mine, rbuf, nodes)));
cleanup:
  for (kd_gidx b = L->lo; own && b < L->hi; b++) kd_ls_bin_free_(&own[b - L->lo]);
  free(own);
  free(G.scnt);
  free(G.rcnt);
  free(sbuf);
  free(rbuf);
  free(mine);
  return err;
}
