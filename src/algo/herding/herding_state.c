/* herding_state.c - the distributed herding state of herding_impl.h: per-candidate z and nu
 * blocks, the replicated active set with its Gram matrix, the LMO, atom bookkeeping, the
 * fully-corrective weight solve, tracing and output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/herding/herding_impl.h"
#include "comm/dist_impl.h"
#include "la/la_impl.h"

/* Keep the first local failure for the next collective; the caller continues in step. */
static void kd_herd_defer_(kd_herd *h, kd_err e) {
  if (e != KD_OK && h->pending_err == KD_OK) h->pending_err = e;
}

kd_err kd_herd_params_read(const kd_params *p, kd_herd_params *hp) {
  kd_err err = KD_OK;
  memset(hp, 0, sizeof *hp);
  KD_TRY(kd_params_fill(p, hp));
  kd_herd_stop *st = &hp->stop;
  if (st->max_iter == 0) /* automatic: enough iterations for max_atoms atoms */
    st->max_iter = st->max_atoms > 0 && 100 * st->max_atoms > 1000 ? 100 * st->max_atoms : 1000;
cleanup:
  return err;
}

int kd_herd_stop_reason(const kd_herd *h, const kd_herd_stop *st, int64_t it, double gap) {
  if (st->max_atoms > 0 && h->n >= st->max_atoms) return KD_STOP_MAX_ATOMS;
  if (h->mmd <= st->tol_mmd) return KD_STOP_TOL_MMD;
  if (!isnan(gap) && gap <= st->tol_gap) return KD_STOP_TOL_GAP;
  if (it >= st->max_iter) return KD_STOP_MAX_ITER;
  return h->done ? KD_STOP_NO_DESCENT : KD_STOP_NONE;
}

/* Second phase of kd_herd_init: the target embedding at the candidates and zz. Collective. */
static kd_err kd_herd_init_target_(kd_herd *h) {
  kd_err err = KD_OK;
  int avail = 0;
  KD_TRY(kd_target_embed(h->target, h->cand, h->z));
  for (kd_lidx c = 0; c < h->nl; c++) h->g[c] = -h->z[c]; /* nu = 0 */
  KD_TRY(kd_target_self(h->target, &h->zz, &avail));
  KD_CHECK(avail, KD_ERR_UNSUPPORTED,
           "herd: herding needs the target's exact double integral for its MMD trace; set "
           "target.self to auto or exact (it costs about half the target embedding herding "
           "computes anyway)");
cleanup:
  return err;
}

kd_err kd_herd_init(const kd_algo_in *in, double cache_mb, kd_herd *h) {
  kd_err err = KD_OK;
  memset(h, 0, sizeof *h);
  h->lmo_pay_g = -1;
  h->in = in;
  h->kernel = in->kernel;
  h->cand = in->points;
  h->target = in->target;
  h->t0 = kd_dist_wtime();
  KD_CHECK(h->kernel && h->cand && h->target, KD_ERR_ARG,
           "herd: kernel, candidates and target are required");
  h->d = kd_pointset_dim(h->cand);
  h->m = kd_pointset_n_global(h->cand);
  h->nl = kd_pointset_n_local(h->cand);
  h->off = kd_pointset_offset(h->cand);
  h->rows = kd_pointset_rows_const(h->cand);
  KD_CHECK(h->m >= 2, KD_ERR_INPUT,
           "candidates: herding needs at least 2 candidate points, got %lld", (long long)h->m);
  KD_CHECK(kd_kernel_dim(h->kernel) == h->d && kd_target_dim(h->target) == h->d, KD_ERR_INPUT,
           "herd: dimension mismatch (candidates d = %d, kernel d = %d, target d = %d)", h->d,
           kd_kernel_dim(h->kernel), kd_target_dim(h->target));
  KD_ALLOC(h->z, h->nl);
  KD_ALLOC(h->g, h->nl);
  KD_ALLOC(h->kdiag, h->nl);
  KD_ALLOC(h->col, h->nl);
  KD_ALLOC(h->col2, h->nl);
  h->cap = 16;
  KD_ALLOC(h->idx, h->cap);
  KD_ALLOC(h->x, (size_t)h->cap * h->d);
  KD_ALLOC(h->w, h->cap);
  KD_ALLOC(h->zs, h->cap);
  KD_ALLOC(h->kw, h->cap);
  KD_ALLOC(h->slot, h->cap);
  KD_ALLOC(h->K, (size_t)h->cap * h->cap);
  {
    double per_col = 8.0 * (double)(h->nl > 0 ? h->nl : 1);
    double ns = floor(cache_mb * 1048576.0 / per_col);
    h->n_slots = ns > 1e6 ? 1000000 : (int)ns;
    h->cache_mb = cache_mb;
  }
  KD_TRY(kd_kernel_diag(h->kernel, h->rows, h->nl, h->kdiag));
  KD_TRY(kd_kernel_pack(h->kernel, h->rows, h->nl, &h->rows_p));
cleanup:
  /* allocation failures are local: agree before the collectives of the second phase */
  if (kd_dist_agree(h->in->comm, &err) != KD_OK && err == KD_OK) err = KD_ERR_MPI;
  if (err != KD_OK) return err;
  return kd_herd_init_target_(h);
}

void kd_herd_free(kd_herd *h) {
  free(h->z);
  free(h->g);
  free(h->kdiag);
  free(h->col);
  free(h->col2);
  free(h->idx);
  free(h->x);
  free(h->w);
  free(h->zs);
  free(h->kw);
  free(h->slot);
  free(h->K);
  free(h->cache);
  free(h->slot_used);
  free(h->gap_trace);
  kd_kernel_packed_free(&h->rows_p);
  memset(h, 0, sizeof *h);
}

/* The LMO reduction (argmin of (v, idx) with ties to the smallest index) with a pending signal
 * folded in: while checkpointing is on, a rank that saw SIGTERM/SIGUSR1 passes KD_ERR_INTERRUPTED
 * as its error, so every rank learns of it in the reduction it does anyway. When that code is the
 * agreed outcome, every rank marks h->interrupted (the driver checkpoints at the end of this
 * iteration) and the reduction is repeated once without the flag to finish the iteration. npay
 * doubles of pay travel with the winner into pout (kd_dist_argmin_pay; npay 0: none). */
static kd_err kd_herd_reduce_(kd_herd *h, double v, kd_gidx idx, kd_err lerr, const double *pay,
                              int npay, double *val, kd_gidx *g, double *pout) {
  const int ask = lerr == KD_OK && !h->interrupted && kd_ckpt_pending(h->in->ckpt);
  kd_err err = kd_dist_argmin_pay(h->in->comm, v, idx, ask ? KD_ERR_INTERRUPTED : lerr, pay, npay,
                                  val, g, pout);
  if (err == KD_ERR_INTERRUPTED && !h->interrupted) {
    h->interrupted = 1;
    kd_err_clear();
    err = kd_dist_argmin_pay(h->in->comm, v, idx, lerr, pay, npay, val, g, pout);
  }
  return err;
}

/* kd_herd_reduce_ for the LMO: with d <= 64 the local winner's row and z value travel with the
 * reduction, and the agreed winner's are kept for kd_herd_fetch (one collective per FW step,
 * not two; the same values the broadcast would bring). */
static kd_err kd_herd_reduce_lmo_(kd_herd *h, double v, kd_gidx idx, kd_err lerr, double *val,
                                  kd_gidx *g) {
  double pay[65] = {0};
  const int npay = h->d <= 64 ? h->d + 1 : 0;
  if (npay > 0 && idx >= h->off && idx < h->off + h->nl) {
    memcpy(pay, h->rows + (size_t)(idx - h->off) * h->d, sizeof(double) * (size_t)h->d);
    pay[h->d] = h->z[idx - h->off];
  }
  h->lmo_pay_g = -1;
  const kd_err err = kd_herd_reduce_(h, v, idx, lerr, pay, npay, val, g, h->lmo_pay);
  if (err == KD_OK && npay > 0) h->lmo_pay_g = *g;
  return err;
}

static kd_err kd_herd_argbest_(kd_herd *h, const double *score, kd_err local_err, int sign,
                               double *val, kd_gidx *g) {
  double best = INFINITY;
  kd_gidx bi = -1;
  for (kd_lidx i = 0; i < h->nl; i++) {
    double s = sign * score[i];
    if (isnan(s)) {
      if (local_err == KD_OK)
        local_err =
            kd_err_set(KD_ERR_NUMERIC, __FILE__, __LINE__, "herd: NaN score at candidate row %lld",
                       (long long)(h->off + i + 1));
      continue;
    }
    if (bi < 0 || s < best) {
      best = s;
      bi = h->off + i;
    }
  }
  if (bi < 0) best = INFINITY;
  if (local_err == KD_OK) local_err = h->pending_err;
  kd_err err = kd_herd_reduce_(h, best, bi, local_err, NULL, 0, val, g, NULL);
  h->pending_err = KD_OK; /* delivered (or it is now the agreed error of every rank) */
  *val *= sign;
  return err;
}

kd_err kd_herd_argmin(kd_herd *h, const double *score, kd_err local_err, double *val, kd_gidx *g) {
  return kd_herd_argbest_(h, score, local_err, 1, val, g);
}

kd_err kd_herd_argmax(kd_herd *h, const double *score, kd_err local_err, double *val, kd_gidx *g) {
  return kd_herd_argbest_(h, score, local_err, -1, val, g);
}

kd_err kd_herd_lmo(kd_herd *h, double *val, kd_gidx *g) {
  kd_err lerr = KD_OK;
  h->lmo_calls++;
  if (!h->lmin_valid) {
    double best = INFINITY;
    kd_lidx bi = -1;
    int nan = 0;
    for (kd_lidx c = 0; c < h->nl; c++) {
      const double s = h->g[c];
      if (s < best) {
        best = s;
        bi = c;
      } else if (s != s) {
        nan = 1;
      }
    }
    h->lmin_val = best;
    h->lmin_idx = bi < 0 ? -1 : h->off + bi;
    h->lmin_nan = nan;
    h->lmin_valid = 1;
  }
  if (h->pending_err != KD_OK)
    lerr = h->pending_err;
  else if (h->lmin_nan)
    lerr =
        kd_err_set(KD_ERR_NUMERIC, __FILE__, __LINE__,
                   "herd: NaN in nu - z on the candidates of rank %d", kd_dist_rank(h->in->comm));
  h->pending_err = KD_OK;
  return kd_herd_reduce_lmo_(h, h->lmin_idx < 0 ? INFINITY : h->lmin_val, h->lmin_idx, lerr, val,
                             g);
}

kd_err kd_herd_lmo_gap(kd_herd *h, double *gap, kd_gidx *g) {
  kd_err err = KD_OK;
  double val;
  KD_TRY(kd_herd_lmo(h, &val, g));
  *gap = kd_herd_wgrad(h) - val;
  if (*gap <= h->tol_gap) h->done = 1;
cleanup:
  return err;
}

kd_err kd_herd_fetch(kd_herd *h, kd_gidx g, double *x, double *zx) {
  kd_err err = KD_OK;
  double buf[64 + 1];
  double *b = buf, *heap = NULL;
  if (g >= 0 && g == h->lmo_pay_g) { /* the LMO's winner: its row came with the reduction */
    memcpy(x, h->lmo_pay, sizeof(double) * (size_t)h->d);
    *zx = h->lmo_pay[h->d];
    return KD_OK;
  }
  if (h->d + 1 > 65) { /* same branch on every rank: agree on the allocation */
    heap = malloc(sizeof(double) * (size_t)(h->d + 1));
    KD_TRY(kd_dist_agreed(
        h->in->comm,
        heap ? KD_OK : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "herd: cannot allocate a row")));
    b = heap;
  }
  int owner = kd_pointset_owner(h->cand, g);
  if (g >= h->off && g < h->off + h->nl) {
    memcpy(b, h->rows + (size_t)(g - h->off) * h->d, sizeof(double) * h->d);
    b[h->d] = h->z[g - h->off];
  }
  KD_TRY(kd_dist_bcast(h->in->comm, b, (int64_t)sizeof(double) * (h->d + 1), owner));
  memcpy(x, b, sizeof(double) * h->d);
  *zx = b[h->d];
cleanup:
  free(heap);
  return err;
}

kd_err kd_herd_column(kd_herd *h, const double *x, double *out) {
  if (h->nl == 0) return KD_OK;
  /* one row (x) against the candidate panel: the block kernel's panels run over the candidates,
   * so nothing is padded or reduced (k is symmetric bit for bit); the candidates were packed
   * once (kd_herd_init), not on every call (8 nl d bytes written per column otherwise) */
  kd_err e = kd_kernel_eval_block_packed(h->kernel, x, 1, h->rows_p, out, h->nl);
  if (e != KD_OK) {
    kd_herd_defer_(h, e);
    for (kd_lidx c = 0; c < h->nl; c++) out[c] = NAN;
  }
  return KD_OK;
}

kd_err kd_herd_atom_column(kd_herd *h, int i, double *scratch, const double **col) {
  if (h->slot[i] >= 0) {
    *col = h->cache + (size_t)h->slot[i] * h->nl;
    return KD_OK;
  }
  *col = scratch;
  h->col_misses++;
  return kd_herd_column(h, h->x + (size_t)i * h->d, scratch);
}

int kd_herd_find(const kd_herd *h, kd_gidx g) {
  for (int i = 0; i < h->n; i++)
    if (h->idx[i] == g) return i;
  return -1;
}

static kd_err kd_herd_grow_local_(kd_herd *h) {
  kd_err err = KD_OK;
  int nc = 2 * h->cap;
  double *K = NULL;
  void *p;
  KD_ALLOC(K, (size_t)nc * nc);
  for (int i = 0; i < h->n; i++)
    memcpy(K + (size_t)i * nc, h->K + (size_t)i * h->cap, sizeof(double) * h->n);
  free(h->K);
  h->K = K;
#define KD_HERD_GROW_(arr, count)                                              \
  p = realloc(arr, sizeof(*(arr)) * (size_t)(count));                          \
  KD_CHECK(p, KD_ERR_MEM, "herd: cannot grow the active set to %d atoms", nc); \
  arr = p;
  KD_HERD_GROW_(h->idx, nc);
  KD_HERD_GROW_(h->x, (size_t)nc * h->d);
  KD_HERD_GROW_(h->w, nc);
  KD_HERD_GROW_(h->zs, nc);
  KD_HERD_GROW_(h->kw, nc);
  KD_HERD_GROW_(h->slot, nc);
#undef KD_HERD_GROW_
  h->cap = nc;
cleanup:
  return err;
}

/* Every rank grows at the same moment (the active set is replicated), so a local allocation
 * failure is agreed here, before any rank can enter the next collective. Collective. */
static kd_err kd_herd_grow_(kd_herd *h) {
  return kd_dist_agreed(h->in->comm, kd_herd_grow_local_(h));
}

/* A free cache slot (growing the cache up to n_slots), or -1. Growing may move h->cache, so
 * column pointers into the cache must be re-read after adding an atom. Failure to grow is not an
 * error (the column is then recomputed when needed). */
static int kd_herd_take_slot_(kd_herd *h) {
  for (int s = 0; s < h->slots_alloc; s++)
    if (!h->slot_used[s]) {
      h->slot_used[s] = 1;
      return s;
    }
  if (h->slots_alloc >= h->n_slots) return -1;
  int ns = h->slots_alloc ? 2 * h->slots_alloc : 8;
  if (ns > h->n_slots) ns = h->n_slots;
  double *c = realloc(h->cache, sizeof(double) * (size_t)ns * (size_t)h->nl);
  if (!c) return -1;
  h->cache = c;
  char *u = realloc(h->slot_used, (size_t)ns);
  if (!u) return -1;
  h->slot_used = u;
  memset(u + h->slots_alloc, 0, (size_t)(ns - h->slots_alloc));
  int s = h->slots_alloc;
  h->slots_alloc = ns;
  h->slot_used[s] = 1;
  return s;
}

kd_err kd_herd_add_atom(kd_herd *h, kd_gidx g, const double *x, double zx, const double *col,
                        int *pos) {
  kd_err err = KD_OK;
  if (h->n == h->cap) KD_TRY(kd_herd_grow_(h));
  int n = h->n, cap = h->cap;
  h->idx[n] = g;
  memcpy(h->x + (size_t)n * h->d, x, sizeof(double) * h->d);
  h->w[n] = 0.0;
  h->zs[n] = zx;
  h->kw[n] = 0.0;
  h->slot[n] = -1;
  if (n > 0) {
    kd_err e = kd_kernel_eval_block(h->kernel, x, 1, h->x, n, h->K + (size_t)n * cap, n);
    if (e != KD_OK) {
      kd_herd_defer_(h, e);
      for (int j = 0; j < n; j++) h->K[(size_t)n * cap + j] = NAN;
    }
  }
  for (int j = 0; j < n; j++) h->K[(size_t)j * cap + n] = h->K[(size_t)n * cap + j];
  h->K[(size_t)n * cap + n] = kd_kernel_eval(h->kernel, x, x);
  for (int j = 0; j < n; j++) h->kw[n] += h->K[(size_t)n * cap + j] * h->w[j];
  if (col && h->nl > 0) {
    int s = kd_herd_take_slot_(h);
    if (s >= 0) {
      memcpy(h->cache + (size_t)s * h->nl, col, sizeof(double) * h->nl);
      h->slot[n] = s;
    }
  }
  h->n = n + 1;
  if (h->n > h->n_peak) h->n_peak = h->n;
  *pos = n;
cleanup:
  return err;
}

kd_err kd_herd_ensure_atom(kd_herd *h, kd_gidx g, double *scratch, const double **col_out,
                           int *pos) {
  kd_err err = KD_OK;
  double xb[64], *x = xb, *heap = NULL, zx = 0.0;
  int p = kd_herd_find(h, g);
  if (p >= 0) {
    if (col_out) KD_TRY(kd_herd_atom_column(h, p, scratch, col_out));
    *pos = p;
    goto cleanup;
  }
  if (h->d > 64) { /* same branch on every rank: agree on the allocation */
    heap = malloc(sizeof(double) * (size_t)h->d);
    KD_TRY(kd_dist_agreed(
        h->in->comm,
        heap ? KD_OK : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "herd: cannot allocate a row")));
    x = heap;
  }
  KD_TRY(kd_herd_fetch(h, g, x, &zx));
  {
    /* evaluate the column straight into a free cache slot (no copy), else into scratch */
    int s = h->nl > 0 ? kd_herd_take_slot_(h) : -1;
    double *dst = s >= 0 ? h->cache + (size_t)s * h->nl : scratch;
    kd_err ce = kd_herd_column(h, x, dst);
    if (ce == KD_OK) ce = kd_herd_add_atom(h, g, x, zx, NULL, pos);
    if (ce != KD_OK && s >= 0) h->slot_used[s] = 0;
    KD_TRY(ce);
    h->slot[*pos] = s;
    if (col_out) *col_out = dst;
  }
cleanup:
  free(heap);
  return err;
}

void kd_herd_remove_atom(kd_herd *h, int i) {
  int n = h->n, cap = h->cap, d = h->d;
  if (h->slot[i] >= 0 && h->slot_used) h->slot_used[h->slot[i]] = 0;
  for (int r = 0; r < n; r++) {
    if (r == i) continue;
    double *dst = h->K + (size_t)(r > i ? r - 1 : r) * cap;
    const double *src = h->K + (size_t)r * cap;
    for (int c = 0, cc = 0; c < n; c++)
      if (c != i) dst[cc++] = src[c];
  }
  memmove(h->idx + i, h->idx + i + 1, sizeof(*h->idx) * (size_t)(n - i - 1));
  memmove(h->x + (size_t)i * d, h->x + (size_t)(i + 1) * d,
          sizeof(double) * (size_t)(n - i - 1) * d);
  memmove(h->w + i, h->w + i + 1, sizeof(double) * (size_t)(n - i - 1));
  memmove(h->zs + i, h->zs + i + 1, sizeof(double) * (size_t)(n - i - 1));
  memmove(h->kw + i, h->kw + i + 1, sizeof(double) * (size_t)(n - i - 1));
  memmove(h->slot + i, h->slot + i + 1, sizeof(int) * (size_t)(n - i - 1));
  h->n = n - 1;
}

void kd_herd_prune(kd_herd *h) {
  for (int i = h->n - 1; i >= 0; i--)
    if (!(h->w[i] > 0.0)) kd_herd_remove_atom(h, i);
}

void kd_herd_refresh(kd_herd *h) {
  double wkw = 0.0, wz = 0.0;
  for (int i = 0; i < h->n; i++) {
    double s = 0.0;
    const double *Ki = h->K + (size_t)i * h->cap;
    for (int j = 0; j < h->n; j++) s += Ki[j] * h->w[j];
    h->kw[i] = s;
    wkw += h->w[i] * s;
    wz += h->w[i] * h->zs[i];
  }
  h->wkw = wkw;
  h->wz = wz;
  h->mmd2 = h->zz - 2.0 * wz + wkw;
  h->mmd = isfinite(h->mmd2) ? sqrt(fmax(h->mmd2, 0.0)) : NAN; /* overflow: evaluated again */
}

kd_err kd_herd_rebuild_nu(kd_herd *h) {
  kd_err err = KD_OK;
  h->lmin_valid = 0;
  for (kd_lidx c = 0; c < h->nl; c++) h->g[c] = 0.0;
  for (int i = 0; i < h->n; i++) {
    const double *col;
    KD_TRY(kd_herd_atom_column(h, i, h->col, &col));
    const double wi = h->w[i];
    for (kd_lidx c = 0; c < h->nl; c++) h->g[c] += wi * col[c];
  }
  for (kd_lidx c = 0; c < h->nl; c++) h->g[c] -= h->z[c];
cleanup:
  return err;
}

kd_err kd_herd_replicate(kd_herd *h, kd_err local, double *v, int n, double *buf) {
  kd_err err = KD_OK;
  for (int i = 0; i < n; i++) buf[i] = v[i];
  buf[n] = (double)local;
  KD_TRY(kd_dist_bcast(h->in->comm, buf, (int64_t)sizeof(double) * (n + 1), 0));
  for (int i = 0; i < n; i++) v[i] = buf[i];
  err = (kd_err)(int)buf[n];
  if (err != KD_OK) {
    /* every rank takes this branch: install rank 0's message everywhere */
    kd_err mine = local != KD_OK ? local : err;
    if (kd_dist_agree(h->in->comm, &mine) != KD_OK) err = KD_ERR_MPI;
  }
cleanup:
  return err;
}

kd_err kd_herd_fc_weights(kd_herd *h, kd_qp_fac *fac) {
  kd_err err = KD_OK;
  const int n = h->n;
  double *Q = malloc(sizeof(double) * ((size_t)n * n + 2));
  /* a local allocation failure must be agreed before the broadcast below */
  KD_TRY(kd_dist_agreed(h->in->comm, Q ? KD_OK
                                       : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                                    "herd: cannot allocate the %d x %d QP", n, n)));
  for (int i = 0; i < n; i++)
    memcpy(Q + (size_t)i * n, h->K + (size_t)i * h->cap, sizeof(double) * n);
  /* The QP runs on every rank; rank 0's weights and outcome are broadcast so the replicated active
   * set stays identical even where LAPACK could round differently (heterogeneous nodes). A stalled
   * solve still leaves a feasible point no worse than the start: keep it, warn once. */
  kd_err qe = kd_simplex_qp_fac(n, Q, h->zs, 1e-12, 20 * n + 100, h->w, fac);
  if (qe == KD_ERR_NUMERIC) {
    double s = 0.0;
    for (int i = 0; i < n; i++) {
      if (!(h->w[i] > 0)) h->w[i] = 0.0;
      s += h->w[i];
    }
    if (s > 0 && isfinite(s)) {
      for (int i = 0; i < n; i++) h->w[i] /= s;
      if (!h->qp_warned)
        kd_log_warn("herd: fully-corrective QP stalled (%s); keeping its last feasible weights",
                    kd_err_message());
      h->qp_warned = 1;
      kd_err_clear();
      qe = KD_OK;
    }
  }
  KD_TRY(kd_herd_replicate(h, qe, h->w, n, Q));
  kd_qp_fac_compact(fac, n, h->w);
  kd_herd_prune(h);
  KD_TRY(kd_herd_rebuild_nu(h));
  kd_herd_refresh(h);
cleanup:
  free(Q);
  return err;
}

/* One row of the gap trace (beside a trace row). Local; a failure is deferred. */
static void kd_herd_gap_push_(kd_herd *h, double gap) {
  if (h->n_gap == h->cap_gap) {
    const int64_t cap = h->cap_gap ? 2 * h->cap_gap : 64;
    double *g = realloc(h->gap_trace, sizeof(double) * (size_t)cap);
    if (!g) {
      kd_herd_defer_(h,
                     kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "herd: cannot grow the gap trace"));
      return;
    }
    h->gap_trace = g;
    h->cap_gap = cap;
  }
  h->gap_trace[h->n_gap++] = gap;
}

kd_err kd_herd_record(kd_herd *h, const kd_herd_stop *st, int64_t it, double gap, int force,
                      kd_result *out, int *stop) {
  int s = 0;
  for (int i = 0; i < h->n; i++)
    if (it == 0 || h->w[i] < h->wmin_seen) h->wmin_seen = h->w[i];
  if (it >= st->max_iter) s = 1;
  if (st->max_atoms > 0 && h->n >= st->max_atoms) s = 1;
  if (h->mmd <= st->tol_mmd) s = 1;
  if (!isnan(gap) && gap <= st->tol_gap) s = 1;
  if (force || s || it % st->trace_every == 0) {
    int64_t last = out->n_trace > 0 ? out->trace_iter[out->n_trace - 1] : -1;
    if (last != it) {
      kd_herd_defer_(h, kd_result_trace_push(out, it, h->n, h->mmd, kd_dist_wtime() - h->t0));
      kd_herd_gap_push_(h, gap);
    }
  }
  kd_log_progress("herd", it, h->mmd, h->n, s);
  *stop = s;
  return KD_OK;
}

/* One warning (rank 0) when the column cache cost the run more column evaluations than its
 * atoms: cache_mb too small for the active set's columns (nl doubles each), as with 10^7
 * candidates per rank under the default 256 MB (3 columns: bpcg took 3.9x as long,
 * bench/results/herding.md). local_ev: this rank's kernel evaluations. */
static void kd_herd_warn_cache_(const kd_herd *h, uint64_t local_ev) {
  if (h->nl == 0 || h->col_misses <= h->n_peak) return;
  const int p = kd_dist_size(h->in->comm);
  const double nl_max = (double)((h->m + p - 1) / p);
  const double need_mb = ceil((double)h->n_peak * 8.0 * nl_max / 1048576.0);
  const double share = local_ev > 0 ? (double)h->col_misses * (double)h->nl / (double)local_ev : 0;
  kd_log_warn(
      "herd: algorithm.cache_mb = %g has room for %d kernel column%s of %lld candidates "
      "per rank, so %lld columns of active atoms were evaluated again (%.0f%% of the "
      "kernel evaluations); cache_mb: %.0f would hold the %d atoms' columns (more ranks "
      "make each column shorter); the result is the same either way",
      h->cache_mb, h->n_slots, h->n_slots == 1 ? "" : "s", (long long)h->nl,
      (long long)h->col_misses, 100.0 * fmin(share, 1.0), need_mb, h->n_peak);
}

kd_err kd_herd_output(kd_herd *h, int64_t iterations, double gap, kd_result *out) {
  kd_err err = h->pending_err;
  h->pending_err = KD_OK;
  KD_TRY(kd_dist_agreed(h->in->comm, err));
  uint64_t ev = kd_kernel_evals(h->kernel);
  kd_herd_warn_cache_(h, ev);
  KD_TRY(kd_dist_sum_u64(h->in->comm, &ev, 1));
  KD_TRY(kd_result_alloc(out, h->n, h->d));
  memcpy(out->points, h->x, sizeof(double) * (size_t)h->n * h->d);
  double s = 0.0;
  for (int i = 0; i < h->n; i++) s += h->w[i];
  for (int i = 0; i < h->n; i++) {
    out->weights[i] = h->w[i] / s;
    out->indices[i] = h->idx[i];
  }
  out->mmd = h->mmd;
  out->kernel_evals = ev;
  out->seconds = kd_dist_wtime() - h->t0;
  KD_TRY(kd_result_set_count(out, "lmo_calls", (int64_t)h->lmo_calls));
  KD_TRY(kd_result_set_count(out, "iterations", (int64_t)iterations));
  KD_TRY(kd_result_set_metric(out, "fw_gap", gap));
  KD_TRY(kd_result_set_metric(out, "min_weight_seen", h->wmin_seen));
  KD_TRY(kd_result_set_count(out, "fw_steps", (int64_t)h->n_fw_steps));
  KD_TRY(kd_result_set_count(out, "pairwise_steps", (int64_t)h->n_pair_steps));
  KD_TRY(kd_result_set_count(out, "away_steps", (int64_t)h->n_away_steps));
  KD_TRY(kd_result_set_count(out, "drop_steps", (int64_t)h->n_drop_steps));
  KD_TRY(kd_result_set_count(out, "stop_reason", (int64_t)h->stop_reason));
  if (h->n_gap > 0 && h->n_gap == out->n_trace) {
    const int64_t dg[1] = {h->n_gap};
    KD_TRY(kd_result_add_f64(out, "/herding/fw_gap", 1, dg, h->gap_trace));
  }
cleanup:
  return err;
}

/* ---------------- checkpoint / restart ---------------- */

/* Write the state of the end of iteration `it` through in->ckpt. Collective. */
static kd_err kd_herd_checkpoint_(kd_herd *h, int64_t it, double last_gap, const kd_result *out,
                                  const kd_herd_ctx_io *io, void *ctx) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_ckpt *ck = h->in->ckpt;
  double *grad = NULL, *tmp = NULL;
  const int root = kd_dist_rank(h->in->comm) == 0;
  const int n = h->n, d = h->d;
  uint64_t ev = kd_kernel_evals(h->kernel);
  KD_TRY(kd_dist_agreed(h->in->comm, h->pending_err));
  h->pending_err = KD_OK;
  KD_TRY(kd_dist_sum_u64(h->in->comm, &ev, 1));
  grad = malloc(sizeof(double) * (size_t)(root ? h->m : 1));
  KD_TRY(kd_dist_agreed(
      h->in->comm, grad ? KD_OK
                        : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                     "checkpoint: cannot allocate %lld values", (long long)h->m)));
  KD_TRY(kd_dist_gatherv(h->in->comm, h->g, h->nl, grad, 0));
  {
    /* local from here on: kd_ckpt_commit agrees the puts */
    lerr = kd_ckpt_put_trace(ck, out);
    int64_t dn[2] = {n, d}, dg[1] = {root ? h->m : 0}, dk[2] = {n, n}, dc[1] = {7}, ds[1] = {2};
    int64_t counters[7] = {h->lmo_calls,    h->n_fw_steps, h->n_pair_steps, h->n_away_steps,
                           h->n_drop_steps, h->qp_warned,  h->n_gap};
    double scalars[2] = {h->wmin_seen, last_gap};
    int64_t *atoms = malloc(sizeof(int64_t) * (size_t)(n + 1));
    tmp = malloc(sizeof(double) * ((size_t)n * n + 1));
    if (!atoms || !tmp)
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "checkpoint: cannot allocate the state");
    if (lerr == KD_OK) {
      for (int i = 0; i < n; i++) {
        atoms[i] = h->idx[i];
        memcpy(tmp + (size_t)i * n, h->K + (size_t)i * h->cap, sizeof(double) * n);
      }
      kd_ckpt_put_i64(ck, "/state/iteration", 0, NULL, &it);
      kd_ckpt_put_i64(ck, "/state/atoms", 1, dn, atoms);
      kd_ckpt_put_f64(ck, "/state/weights", 1, dn, h->w);
      kd_ckpt_put_f64(ck, "/state/points", 2, dn, h->x);
      kd_ckpt_put_f64(ck, "/state/z_atoms", 1, dn, h->zs);
      kd_ckpt_put_f64(ck, "/state/gram", 2, dk, tmp);
      kd_ckpt_put_f64(ck, "/state/grad", 1, dg, grad);
      kd_ckpt_put_i64(ck, "/state/counters", 1, dc, counters);
      kd_ckpt_put_f64(ck, "/state/scalars", 1, ds, scalars);
      const int64_t dgt[1] = {h->n_gap};
      const double none = NAN;
      lerr =
          kd_ckpt_put_f64(ck, "/state/fw_gap_trace", 1, dgt, h->gap_trace ? h->gap_trace : &none);
    }
    if (lerr == KD_OK && io && io->save) lerr = io->save(ctx, ck);
    free(atoms);
  }
  KD_TRY(kd_dist_agreed(h->in->comm, lerr));
  kd_ckpt_set_interrupted(ck, h->interrupted);
  KD_TRY(kd_ckpt_commit(ck, it, kd_dist_wtime() - h->t0, ev + kd_ckpt_resume_evals(ck)));
cleanup:
  free(grad);
  free(tmp);
  return err;
}

/* Restore the state of a checkpoint (after kd_herd_init). Every rank holds the same replicated
 * state, so the checks below fail identically everywhere (only the growth is agreed).
 * Collective. */
/* Range checks of the restored iteration and weights (the checksum only proves the file is what
 * was written; these catch a checkpoint rewritten with a valid checksum). The state is replicated,
 * so every rank fails identically. */
static kd_err kd_herd_check_ranges_(int64_t iter, int64_t max_iter, const double *w, int64_t n) {
  kd_err err = KD_OK;
  double sum = 0;
  KD_CHECK(iter >= 0 && iter <= max_iter, KD_ERR_INPUT,
           "checkpoint: /state/iteration = %lld outside [0, max_iter = %lld]", (long long)iter,
           (long long)max_iter);
  for (int64_t i = 0; i < n; i++) {
    KD_CHECK(isfinite(w[i]) && w[i] >= 0, KD_ERR_INPUT,
             "checkpoint: /state/weights[%lld] = %g is not a weight (finite and >= 0)",
             (long long)i, w[i]);
    sum += w[i];
  }
  KD_CHECK(fabs(sum - 1) <= 1e-9, KD_ERR_INPUT,
           "checkpoint: /state/weights sum to %.17g, not 1 (off the simplex)", sum);
cleanup:
  return err;
}

static int kd_herd_cmp_i64_(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Stored and recomputed values agree to round-off (a forged value differs by far more). */
static int kd_herd_close_(double stored, double now) {
  return isfinite(stored) && fabs(stored - now) <= 1e-9 * (1.0 + fabs(now));
}

/* The restored atoms against this run's candidates, kernel and target (a checkpoint rewritten
 * with a valid checksum): distinct candidates in range whose rows are the stored points bit for
 * bit, a Gram matrix and z(x_i) as the kernel and the target give them (to round-off; the whole
 * Gram matrix up to 2048 atoms, its diagonal beyond), a finite gradient. Each rank checks the
 * atoms among its own candidates; the outcome is agreed. Collective. */
static kd_err kd_herd_check_atoms_(const kd_herd *h, const int64_t *atoms, const double *x,
                                   const double *zs, const double *gram, const double *grad,
                                   int64_t n) {
  kd_err err = KD_OK, lerr = KD_OK;
  int64_t *sorted = NULL;
  double *row = NULL;
  for (int64_t i = 0; i < n; i++)
    KD_CHECK(atoms[i] >= 0 && atoms[i] < h->m, KD_ERR_INPUT,
             "checkpoint: atom %lld is candidate %lld, outside [0, %lld)", (long long)i,
             (long long)atoms[i], (long long)h->m);
  KD_ALLOC(sorted, n);
  KD_ALLOC(row, n);
  memcpy(sorted, atoms, sizeof(int64_t) * (size_t)n);
  qsort(sorted, (size_t)n, sizeof *sorted, kd_herd_cmp_i64_);
  for (int64_t i = 1; i < n; i++)
    KD_CHECK(sorted[i] != sorted[i - 1], KD_ERR_INPUT,
             "checkpoint: /state/atoms holds candidate %lld twice (an atom is a distinct "
             "candidate)",
             (long long)sorted[i]);
  /* first what each rank holds (the candidate rows, the target at them, the gradient), agreed,
   * so that a forged point is named as such and not by the Gram entries it spoils */
  for (int64_t i = 0; i < n && !lerr; i++) {
    const kd_gidx c = atoms[i] - h->off;
    if (c < 0 || c >= h->nl) continue;
    if (memcmp(x + (size_t)i * (size_t)h->d, h->rows + (size_t)c * (size_t)h->d,
               sizeof(double) * (size_t)h->d) != 0)
      lerr = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__,
                        "checkpoint: /state/points row %lld is not candidate %lld's row",
                        (long long)i, (long long)atoms[i]);
    else if (!kd_herd_close_(zs[i], h->z[c]))
      lerr = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__,
                        "checkpoint: /state/z_atoms[%lld] = %g, the target gives %.17g",
                        (long long)i, zs[i], h->z[c]);
  }
  for (kd_lidx c = 0; c < h->nl && !lerr; c++)
    if (!isfinite(grad[h->off + c]))
      lerr = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__, "checkpoint: /state/grad[%lld] = %g",
                        (long long)(h->off + c), grad[h->off + c]);
  KD_TRY(kd_dist_agreed(h->in->comm, lerr));
  /* then the Gram matrix, the same on every rank */
  for (int64_t i = 0; i < n && !lerr; i++) {
    const double *xi = x + (size_t)i * (size_t)h->d, *gi = gram + (size_t)i * (size_t)n;
    const int64_t nj = n <= 2048 ? i : 0;
    if (nj > 0) lerr = kd_kernel_eval_block(h->kernel, xi, 1, x, (kd_lidx)nj, row, (kd_lidx)nj);
    for (int64_t j = 0; j < nj && !lerr; j++)
      if (!kd_herd_close_(gi[j], row[j]))
        lerr = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__,
                          "checkpoint: /state/gram[%lld, %lld] = %g, the kernel gives %.17g",
                          (long long)i, (long long)j, gi[j], row[j]);
    if (!lerr && !kd_herd_close_(gi[i], kd_kernel_eval(h->kernel, xi, xi)))
      lerr = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__,
                        "checkpoint: /state/gram[%lld, %lld] = %g is not k(x, x)", (long long)i,
                        (long long)i, gi[i]);
  }
  KD_TRY(kd_dist_agreed(h->in->comm, lerr));
cleanup:
  free(sorted);
  free(row);
  return err;
}

static kd_err kd_herd_restore_(kd_herd *h, const kd_ckpt *ck, int64_t max_iter, int64_t *it,
                               double *last_gap, kd_result *out) {
  kd_err err = KD_OK;
  const kd_result *rs = kd_ckpt_resume(ck);
  const int64_t *iter, *atoms, *counters;
  const double *w, *x, *zs, *gram, *grad, *scalars, *gt;
  int64_t dn[1] = {-1}, dx[2] = {-1, h->d}, dk[2] = {-1, -1}, dg[1] = {-1}, dc[1] = {-1},
          ds[1] = {-1}, dgt[1] = {-1};
  KD_TRY(kd_ckpt_get_i64(ck, "/state/iteration", 0, NULL, &iter));
  KD_TRY(kd_ckpt_get_i64(ck, "/state/atoms", 1, dn, &atoms));
  const int64_t n = dn[0];
  KD_CHECK(n >= 1 && n <= 100000000, KD_ERR_FILE, "checkpoint: /state/atoms holds %lld atoms",
           (long long)n);
  dx[0] = dk[0] = dk[1] = n;
  KD_TRY(kd_ckpt_get_f64(ck, "/state/weights", 1, dn, &w));
  KD_TRY(kd_ckpt_get_f64(ck, "/state/points", 2, dx, &x));
  KD_TRY(kd_ckpt_get_f64(ck, "/state/z_atoms", 1, dn, &zs));
  KD_TRY(kd_ckpt_get_f64(ck, "/state/gram", 2, dk, &gram));
  KD_TRY(kd_ckpt_get_f64(ck, "/state/grad", 1, dg, &grad));
  KD_TRY(kd_ckpt_get_i64(ck, "/state/counters", 1, dc, &counters));
  KD_TRY(kd_ckpt_get_f64(ck, "/state/scalars", 1, ds, &scalars));
  KD_TRY(kd_ckpt_get_f64(ck, "/state/fw_gap_trace", 1, dgt, &gt));
  KD_TRY(kd_herd_check_ranges_(iter[0], max_iter, w, n));
  KD_CHECK(dc[0] >= 7 && ds[0] >= 2, KD_ERR_FILE,
           "checkpoint: /state/counters [%lld] or /state/scalars [%lld] too short (7 and 2)",
           (long long)dc[0], (long long)ds[0]);
  KD_CHECK(dgt[0] == counters[6], KD_ERR_FILE,
           "checkpoint: /state/fw_gap_trace has %lld rows, /state/counters says %lld",
           (long long)dgt[0], (long long)counters[6]);
  KD_CHECK(dg[0] == h->m, KD_ERR_INPUT,
           "checkpoint: written for %lld candidates, the configuration gives %lld",
           (long long)dg[0], (long long)h->m);
  KD_TRY(kd_herd_check_atoms_(h, atoms, x, zs, gram, grad, n));
  while (h->cap < n) KD_TRY(kd_herd_grow_(h));
  h->n = (int)n;
  for (int i = 0; i < h->n; i++) {
    h->idx[i] = atoms[i];
    h->w[i] = w[i];
    h->zs[i] = zs[i];
    h->slot[i] = -1;
    memcpy(h->K + (size_t)i * h->cap, gram + (size_t)i * n, sizeof(double) * (size_t)n);
  }
  memcpy(h->x, x, sizeof(double) * (size_t)n * h->d);
  for (kd_lidx c = 0; c < h->nl; c++) h->g[c] = grad[h->off + c];
  /* per-rank caches: the atoms' columns (the same block evaluation as during the run) */
  for (int i = 0; i < h->n && h->nl > 0; i++) {
    int s = kd_herd_take_slot_(h);
    if (s < 0) break;
    KD_TRY(kd_herd_column(h, h->x + (size_t)i * h->d, h->cache + (size_t)s * h->nl));
    h->slot[i] = s;
  }
  h->lmo_calls = counters[0];
  h->n_fw_steps = counters[1];
  h->n_pair_steps = counters[2];
  h->n_away_steps = counters[3];
  h->n_drop_steps = counters[4];
  h->qp_warned = (int)counters[5];
  h->wmin_seen = scalars[0];
  *last_gap = scalars[1];
  h->lmin_valid = 0;
  h->lmo_pay_g = -1;
  kd_herd_refresh(h);
  h->t0 = kd_dist_wtime() - rs->seconds;
  for (int64_t r = 0; r < rs->n_trace; r++) {
    KD_TRY(kd_result_trace_push(out, rs->trace_iter[r], rs->trace_atoms[r], rs->trace_mmd[r],
                                rs->trace_seconds[r]));
    /* informational rows: a trace longer than the gap rows gets NaN (a failure to grow stays
     * pending: the next LMO reduction agrees it) */
    kd_herd_gap_push_(h, r < dgt[0] ? gt[r] : NAN);
  }
  *it = iter[0];
cleanup:
  return err;
}

/* One line when the rule has fewer atoms than max_atoms asked for, saying why. Local. */
static void kd_herd_explain_stop_(const kd_herd *h, const kd_herd_stop *st, int64_t it,
                                  double gap) {
  if (st->max_atoms <= 0 || h->n >= st->max_atoms) return;
  const char *why = "";
  switch (h->stop_reason) {
    case KD_STOP_MAX_ITER:
      why = "the iteration limit came first; raise algorithm.max_iter";
      break;
    case KD_STOP_TOL_MMD:
      why = "the MMD reached algorithm.tol_mmd";
      break;
    case KD_STOP_TOL_GAP:
      why =
          "the rule is optimal on this candidate set (Frank-Wolfe gap <= tol_gap): more atoms "
          "would not lower the MMD";
      break;
    default:
      why = "no ascent direction is left on this candidate set";
      break;
  }
  kd_log_warn(
      "herd: stopped after %lld iterations with %d of the %lld atoms asked for (max_atoms; "
      "Frank-Wolfe gap %.3g, mmd %.6e): %s",
      (long long)it, h->n, (long long)st->max_atoms, gap, h->mmd, why);
}

kd_err kd_herd_drive(const kd_algo_in *in, kd_result *out, kd_herd_iter_fn fn, void *ctx,
                     const kd_herd_ctx_io *io) {
  kd_err err = KD_OK;
  kd_herd h;
  memset(&h, 0, sizeof h);
  kd_herd_params hp;
  int64_t it = 0;
  double gap = NAN, last_gap = NAN;
  int stop = 0;
  KD_TRY(kd_herd_params_read(in->params, &hp));
  const kd_herd_stop st = hp.stop;
  if (in->kernel) kd_kernel_reset_evals(in->kernel); /* count setup (diag, embedding) too */
  KD_TRY(kd_herd_init(in, st.cache_mb, &h));
  KD_CHECK_KEY(
      st.max_atoms <= kd_pointset_n_global(in->points), KD_ERR_CONFIG, "algorithm.max_atoms",
      "algorithm.max_atoms = %lld: more than the %lld candidates (a rule has at most one atom "
      "per candidate)",
      (long long)st.max_atoms, (long long)kd_pointset_n_global(in->points));
  h.tol_gap = st.tol_gap;
  if (kd_ckpt_resume(in->ckpt)) {
    KD_TRY(kd_herd_restore_(&h, in->ckpt, st.max_iter, &it, &last_gap, out));
    if (io && io->load) KD_TRY(io->load(ctx, in->ckpt));
    kd_log_info("herd: resumed at iteration %lld (%d atoms, mmd %.6e)", (long long)it, h.n, h.mmd);
  } else {
    KD_TRY(kd_herd_start(&h));
    KD_TRY(kd_herd_record(&h, &st, 0, NAN, 1, out, &stop));
  }
  /* progress lines carry an upper bound of the time left, from the iterations run here */
  kd_log_set_total_from(st.max_iter, it);
  while (!stop) {
    it++;
    gap = NAN;
    KD_TRY(fn(&h, ctx, it, &gap));
    if (!isnan(gap)) last_gap = gap;
    KD_TRY(kd_herd_record(&h, &st, it, gap, h.done, out, &stop));
    if (h.done || stop) break;
    /* safe point: the state is that of the end of iteration it on every rank */
    kd_ckpt_set_interrupted(in->ckpt, h.interrupted); /* agreed in the LMO reduction */
    if (kd_ckpt_due_agreed(in->ckpt, it)) {
      KD_TRY(kd_herd_checkpoint_(&h, it, last_gap, out, io, ctx));
      KD_CHECK(!h.interrupted, KD_ERR_INTERRUPTED, "interrupted at iteration %lld", (long long)it);
    }
  }
  h.stop_reason = kd_herd_stop_reason(&h, &st, it, gap);
  kd_herd_explain_stop_(&h, &st, it, last_gap);
  KD_TRY(kd_herd_output(&h, it, last_gap, out));
cleanup:
  kd_log_set_total(0);
  kd_herd_free(&h);
  return err;
}
