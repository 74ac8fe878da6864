/* empirical.c - an empirical target: the weighted point set (y_j, v_j), j < N, with rows split in
 * contiguous blocks over the ranks (weights v from the point set, or 1/N when uniform):
 *   z(x) = sum_j v_j k(x, y_j),   zz = sum_i sum_j v_i v_j k(y_i, y_j).
 * Everything is summed over fixed global chunks of 2048 target rows (see "chunk-aligned sets"
 * below), which makes z, zz and the MMD bitwise independent of the rank count in practice.
 * z at a distributed X: every rank keeps its X rows and the chunk-aligned target sets travel around
 * the ring (p - 1 shifts), so each rank does N n_local kernel evaluations and holds two packed
 * sets (the ring buffers): O(N m / p) work and O(N d / p) memory per rank. z at replicated rows
 * and the estimate read this rank's own set in place (a view on the point set's rows plus one
 * packed chunk), with no copy of the block.
 * zz: the same ring over half of the set pairs (steps 0 .. p/2), using symmetry: set pairs at ring
 * distance s and p - s are the same pair, within the own set only chunk pairs c < c' and each
 * chunk with itself by blocks (kd_emp_diag_) are evaluated, and at distance p/2 (p even) the two
 * ranks of a pair take half of the lower set's chunks each. Work N^2 / (2p) per rank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "embed/target_impl.h"

/* Progress of a long pass on this rank: kernel evaluations done of about `total`; rank 0 prints
 * (kd_log_fraction) the share of the global work `shown` of the phase. */
typedef struct {
  const char *phase;
  double done, total, shown, t0, last;
} kd_emp_prog_;

static void kd_emp_prog_init_(kd_emp_prog_ *g, const char *phase, double total, double shown) {
  g->phase = phase;
  g->done = 0.0;
  g->total = total > 1.0 ? total : 1.0;
  g->shown = shown;
  g->t0 = kd_log_elapsed();
  g->last = g->t0;
}

static void kd_emp_tick_(kd_emp_prog_ *g, double evals) {
  if (!g) return;
  g->done += evals;
  const double f = g->done < g->total ? g->done / g->total : 0.999;
  kd_log_fraction(g->phase, f * g->shown, g->shown, "kernel evaluations", g->t0, &g->last);
}

/* ---- chunk-aligned sets: bitwise rank-count independence of z ----
 * z(x) is the sum over fixed global chunks c = [cC, (c+1)C) of the target of the partials
 * P_c(x) = sum_{j in c} v_j k(x, y_j). Each P_c comes from one kernel mat-vec over exactly that
 * chunk, whose row results depend only on the row and the chunk (kd_kernel_matvec contract), so
 * P_c(x) has the same bits at any rank count. The partials are added with Neumaier compensation,
 * whose result is the correctly rounded sum except when the exact sum lies within ~k eps^2 of a
 * rounding boundary, so z is bitwise independent of p and of the order of addition in practice
 * (differences, if ever, of one ulp).
 * Rank r owns the chunks [S_r, E_r): S_r = floor_C(o_r), E_r = floor_C(o_{r+1}) (E = N on the last
 * rank), o_r its first row. It lacks the prefix [S_r, o_r) (fewer than C rows, at the end of the
 * previous ranks' blocks), which arrives by ring shifts before first use. */
enum { KD_EMP_CHUNK = 2048 };

static kd_gidx kd_emp_floor_(kd_gidx x) { return x / KD_EMP_CHUNK * KD_EMP_CHUNK; }

static void kd_emp_range_(const kd_pointset *pts, int r, int p, kd_gidx *S, kd_gidx *E) {
  *S = kd_emp_floor_(kd_pointset_rank_offset(pts, r));
  *E = r == p - 1 ? kd_pointset_n_global(pts) : kd_emp_floor_(kd_pointset_rank_offset(pts, r + 1));
}

/* Pack rows [a, b) of (prefix P, np rows as [rows | weights]) ++ (local block L, weights wl or
 * uniform wu) into dst = [rows | weights]. */
static void kd_emp_pack_(int d, const double *P, kd_lidx np, const double *L, const double *wl,
                         double wu, kd_lidx a, kd_lidx b, double *dst) {
  const kd_lidx n = b - a;
  for (kd_lidx i = a; i < b; i++) {
    const double *src = i < np ? P + i * d : L + (i - np) * d;
    memcpy(dst + (i - a) * d, src, (size_t)d * sizeof(double));
    dst[n * d + (i - a)] = i < np ? P[np * d + i] : (wl ? wl[i - np] : wu);
  }
}

/* A chunk-aligned set of n rows: the first nh (0, or the first chunk) packed in head as
 * [rows | weights]; row i >= nh at rows + (i - off) d with weight w[i - off] (w == NULL: wu[]). */
typedef struct {
  kd_lidx n, nh, off;
  const double *head, *rows, *w, *wu;
} kd_emp_set_;

/* The chunk of s starting at row j0 (a multiple of the chunk length): rows *X, weights *w. */
static kd_lidx kd_emp_get_(const kd_emp_set_ *s, int d, kd_lidx j0, const double **X,
                           const double **w) {
  if (j0 < s->nh) {
    *X = s->head;
    *w = s->head + s->nh * d;
    return s->nh;
  }
  *X = s->rows + (j0 - s->off) * d;
  *w = s->w ? s->w + (j0 - s->off) : s->wu;
  return s->n - j0 < KD_EMP_CHUNK ? s->n - j0 : KD_EMP_CHUNK;
}

/* A packed set [n*d rows | n weights] (a ring buffer). */
static kd_emp_set_ kd_emp_packed_(const double *B, kd_lidx n, int d) {
  kd_emp_set_ s = {n, 0, 0, NULL, B, B + n * d, NULL};
  return s;
}

/* This rank's chunk-aligned set: the packed first chunk, then a view on the local rows. */
static kd_emp_set_ kd_emp_own_set_(const kd_target *t) {
  kd_emp_set_ s = {t->own_n,
                   t->own_nh,
                   t->own_pre,
                   t->own_head,
                   kd_pointset_rows_const(t->pts),
                   kd_pointset_weights_const(t->pts),
                   t->own_wu};
  return s;
}

/* Copy the set s into dst = [n*d rows | n weights]. */
static void kd_emp_pack_set_(const kd_emp_set_ *s, int d, double *dst) {
  for (kd_lidx j0 = 0; j0 < s->n; j0 += KD_EMP_CHUNK) {
    const double *X, *w;
    const kd_lidx nc = kd_emp_get_(s, d, j0, &X, &w);
    memcpy(dst + j0 * d, X, (size_t)nc * d * sizeof(double));
    memcpy(dst + s->n * d + j0, w, (size_t)nc * sizeof(double));
  }
}

kd_lidx kd_target_emp_chunk_(const kd_target *t, kd_lidx j0, const double **X, const double **w) {
  const kd_emp_set_ s = kd_emp_own_set_(t);
  return kd_emp_get_(&s, kd_pointset_dim(t->pts), j0, X, w);
}

/* Build this rank's set (collective, once): the prefix rows [S, o) of the previous ranks arrive
 * by ring shifts and go, with the first local rows, into the packed first chunk; the rest of the
 * set is the local rows themselves (no copy of the block). */
kd_err kd_target_emp_own_(kd_target *t) {
  kd_err err = KD_OK, lerr = KD_OK;
  MPI_Comm comm = t->comm;
  const kd_pointset *pts = t->pts;
  const int p = kd_dist_size(comm), rank = kd_dist_rank(comm), d = kd_pointset_dim(pts);
  const kd_lidx nl = kd_pointset_n_local(pts);
  const kd_gidx o = kd_pointset_offset(pts), N = kd_pointset_n_global(pts);
  const double *L = kd_pointset_rows_const(pts), *wl = kd_pointset_weights_const(pts);
  const double wu = 1.0 / (double)N;
  const int64_t cap = (int64_t)KD_EMP_CHUNK * (d + 1);
  double *pre = NULL, *sb = NULL, *rb = NULL, *head = NULL, *wun = NULL;
  kd_lidx npre = 0, nh = 0;
  if (t->own_done) return KD_OK;
  kd_gidx S, E;
  kd_emp_range_(pts, rank, p, &S, &E);
  /* rounds of shifts: rank q needs O_{q-1}, which contains O_{q-2} when E_{q-1} < o_{q-1} */
  int H = 0, R = 0;
  for (int q = 1; q < p; q++) {
    kd_gidx Sq, Eq;
    kd_emp_range_(pts, q - 1, p, &Sq, &Eq);
    R = 1 + (Eq < kd_pointset_rank_offset(pts, q - 1) ? R : 0);
    if (R > H) H = R;
  }
  if (o > S && E > S) nh = (kd_lidx)(E - S < KD_EMP_CHUNK ? E - S : KD_EMP_CHUNK);
  pre = calloc((size_t)cap + 1, sizeof(double));
  sb = calloc((size_t)cap + 1, sizeof(double));
  rb = calloc((size_t)cap + 1, sizeof(double));
  head = calloc((size_t)nh * (d + 1) + 1, sizeof(double));
  wun = wl ? NULL : malloc(KD_EMP_CHUNK * sizeof(double));
  if (!pre || !sb || !rb || !head || (!wl && !wun))
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "target: cannot allocate the chunk sets");
  KD_TRY(kd_dist_agreed(comm, lerr));
  for (int h = 0; h < H; h++) {
    /* O_r = rows [E, o + nl) of (prefix ++ block), as positions in that concatenation */
    kd_lidx a = (kd_lidx)(E - (o - npre)), b = npre + nl, ns = 0;
    if (rank < p - 1 && a >= 0 && b > a && b - a <= KD_EMP_CHUNK) {
      kd_emp_pack_(d, pre, npre, L, wl, wu, a, b, sb);
      ns = b - a;
    }
    int64_t nr = 0;
    KD_TRY(kd_dist_ring_shift(comm, sb, ns * (d + 1), rb, cap, &nr));
    if (rank > 0) {
      npre = (kd_lidx)(nr / (d + 1));
      memcpy(pre, rb, (size_t)nr * sizeof(double));
    }
  }
  if (rank > 0 && npre != (kd_lidx)(o - S))
    lerr = kd_err_set(KD_ERR_INTERNAL, __FILE__, __LINE__,
                      "target: chunk prefix of %lld rows, expected %lld", (long long)npre,
                      (long long)(o - S));
  if (!lerr && nh > 0) kd_emp_pack_(d, pre, npre, L, wl, wu, 0, nh, head);
  if (wun)
    for (int i = 0; i < KD_EMP_CHUNK; i++) wun[i] = wu;
  KD_TRY(kd_dist_agreed(comm, lerr));
  t->own_head = head;
  t->own_wu = wun;
  t->own_n = (kd_lidx)(E - S);
  t->own_pre = npre;
  t->own_nh = nh;
  t->own_done = 1;
  head = wun = NULL;
cleanup:
  free(pre);
  free(sb);
  free(rb);
  free(head);
  free(wun);
  return err;
}

/* sum_i w[i] y[i] in increasing i: a chunk pair's term of zz (kd_emp_pair_ and kd_emp_own_sym_
 * add the same bits) */
static double kd_emp_wdot_(kd_lidx n, const double *w, const double *y) {
  double s = 0.0;
  for (kd_lidx i = 0; i < n; i++) s += w[i] * y[i];
  return s;
}

static kd_err kd_emp_diag_(kd_kernel *k, int d, const kd_emp_set_ *A, kd_lidx a, double *y,
                           double *acc, double *comp, kd_emp_prog_ *pg);

/* 1 when the first ring step of kd_target_emp_embed_ may take kd_emp_own_sym_: the rows Xl[nl]
 * are this rank's own chunk-aligned set (no prefix from the previous ranks, none lent to the
 * next: block boundaries on chunk boundaries, always so on one rank) and the kernel's values are
 * symmetric bit for bit. */
static int kd_emp_own_rows_(const kd_target *t, const double *Xl, kd_lidx nl) {
  return t->own_nh == 0 && t->own_pre == 0 && t->own_n == nl && nl > 0 &&
         Xl == kd_pointset_rows_const(t->pts) && kd_kernel_matvec_pair_ok(t->k);
}

/* The first ring step of kd_target_emp_embed_ when the rows are the own set (kd_emp_own_rows_):
 * z's partials of the own chunks, each pair evaluated once. Chunk c's rows receive the partials
 * of chunks c' < c as the column sums of the pairs (c', c) (kd_kernel_matvec_pair), then their own
 * (kd_kernel_matvec_sym), then those of c' > c as row sums: each partial has kd_kernel_matvec's
 * bits (kernel_sym.c) and they arrive in increasing c', the order of kd_emp_chunks_, so z has the
 * bits of the general path. With want_zz, also the own set's part of zz exactly as
 * kd_target_emp_self_'s first step adds it (its diagonal terms, then the pair terms 2 v_c^T y
 * from the same row sums, in the same order) into t->zz0: half of the evaluations the embedding
 * and zz took apart. y: 3 KD_EMP_CHUNK doubles. */
static kd_err kd_emp_own_sym_(kd_target *t, int d, int want_zz, double *z, double *comp, double *y,
                              kd_emp_prog_ *pg) {
  kd_err err = KD_OK;
  const kd_emp_set_ L = kd_emp_own_set_(t);
  double acc = 0.0, ac = 0.0, *ya = y, *yb = y + KD_EMP_CHUNK;
  for (kd_lidx a = 0; a < L.n; a += KD_EMP_CHUNK) {
    const double *Ax, *wa, *Bx, *wb;
    const kd_lidx ma = kd_emp_get_(&L, d, a, &Ax, &wa);
    KD_TRY(kd_kernel_matvec_sym(t->k, Ax, ma, wa, ya));
    for (kd_lidx i = 0; i < ma; i++) kd_neu_add_(&z[a + i], &comp[a + i], ya[i]);
    kd_emp_tick_(pg, (double)ma * (double)ma);
    if (want_zz) KD_TRY(kd_emp_diag_(t->k, d, &L, a, y, &acc, &ac, NULL));
    for (kd_lidx b = a + KD_EMP_CHUNK; b < L.n; b += KD_EMP_CHUNK) {
      const kd_lidx mb = kd_emp_get_(&L, d, b, &Bx, &wb);
      KD_TRY(kd_kernel_matvec_pair(t->k, Ax, ma, Bx, mb, wa, wb, ya, yb));
      for (kd_lidx i = 0; i < ma; i++) kd_neu_add_(&z[a + i], &comp[a + i], ya[i]);
      for (kd_lidx j = 0; j < mb; j++) kd_neu_add_(&z[b + j], &comp[b + j], yb[j]);
      if (want_zz) kd_neu_add_(&acc, &ac, 2.0 * kd_emp_wdot_(ma, wa, ya));
      kd_emp_tick_(pg, 2.0 * (double)ma * (double)mb);
    }
  }
  t->zz0[0] = acc;
  t->zz0[1] = ac;
  t->zz0_ls = kd_kernel_get_params(t->k)->ls;
  t->zz0_done = want_zz;
cleanup:
  return err;
}

/* Add the partials of the chunks of the set B at the rows A[na] into (z, comp); y is scratch of
 * na doubles. */
static kd_err kd_emp_chunks_(kd_kernel *k, const double *A, kd_lidx na, const kd_emp_set_ *B, int d,
                             double *y, double *z, double *comp, kd_emp_prog_ *pg) {
  kd_err err = KD_OK;
  if (na <= 0) return KD_OK;
  for (kd_lidx j0 = 0; j0 < B->n; j0 += KD_EMP_CHUNK) {
    const double *Bx, *Bw;
    const kd_lidx nc = kd_emp_get_(B, d, j0, &Bx, &Bw);
    KD_TRY(kd_kernel_matvec(k, A, na, Bx, nc, Bw, 0.0, y));
    for (kd_lidx i = 0; i < na; i++) kd_neu_add_(&z[i], &comp[i], y[i]);
    kd_emp_tick_(pg, (double)na * (double)nc);
  }
cleanup:
  return err;
}

kd_err kd_target_emp_embed_(kd_target *t, const double *Xl, kd_lidx nl, double *z) {
  kd_err err = KD_OK, lerr = KD_OK;
  MPI_Comm comm = t->comm;
  const int p = kd_dist_size(comm), d = kd_pointset_dim(t->pts);
  double *cur = NULL, *nxt = NULL, *tmp = NULL, *comp = NULL;
  int64_t cap = 0, ncur = 0, nr = 0;
  KD_TRY(kd_target_emp_own_(t));
  for (int q = 0; q < p; q++) {
    kd_gidx S, E;
    kd_emp_range_(t->pts, q, p, &S, &E);
    if ((int64_t)(E - S) * (d + 1) > cap) cap = (int64_t)(E - S) * (d + 1);
  }
  cur = calloc((size_t)cap + 1, sizeof(double));
  nxt = calloc((size_t)cap + 1, sizeof(double));
  tmp = calloc((size_t)(nl > 3 * KD_EMP_CHUNK ? nl : 3 * KD_EMP_CHUNK) + 1, sizeof(double));
  comp = calloc((size_t)nl + 1, sizeof(double));
  if (!cur || !nxt || !tmp || !comp)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "target: cannot allocate ring buffers");
  KD_TRY(kd_dist_agreed(comm, lerr));
  /* the own set's part of zz alongside (kd_emp_own_sym_) where kd_target_self will want it and
   * its pair terms are kd_kernel_matvec's (not the dgemm path's) */
  const int sym = kd_emp_own_rows_(t, Xl, nl),
            want_zz = sym && !kd_kernel_matvec_gemm_active(t->k) &&
                      (t->self_mode == KD_SELF_AUTO || t->self_mode == KD_SELF_EXACT);
  ncur = (int64_t)t->own_n * (d + 1);
  const kd_emp_set_ own = kd_emp_own_set_(t);
  kd_emp_pack_set_(&own, d, cur);
  for (kd_lidx i = 0; i < nl; i++) z[i] = 0.0;
  const double Nt = (double)kd_pointset_n_global(t->pts);
  kd_emp_prog_ pg;
  kd_emp_prog_init_(&pg, "target embedding", (double)nl * Nt, (double)nl * p * Nt);
  for (int s = 0; s < p; s++) {
    const kd_emp_set_ B = kd_emp_packed_(cur, (kd_lidx)(ncur / (d + 1)), d);
    if (!lerr && s == 0 && sym)
      lerr = kd_emp_own_sym_(t, d, want_zz, z, comp, tmp, &pg);
    else if (!lerr)
      lerr = kd_emp_chunks_(t->k, Xl, nl, &B, d, tmp, z, comp, &pg);
    if (s + 1 < p) {
      KD_TRY(kd_dist_ring_shift(comm, cur, ncur, nxt, cap, &nr));
      double *sw = cur;
      cur = nxt;
      nxt = sw;
      ncur = nr;
    }
  }
  for (kd_lidx i = 0; i < nl; i++) z[i] += comp[i];
  KD_TRY(kd_dist_agreed(comm, lerr));
cleanup:
  free(cur);
  free(nxt);
  free(tmp);
  free(comp);
  return err;
}

kd_err kd_target_sum_pairs_(MPI_Comm comm, const double *s, const double *c, int64_t n,
                            double *out) {
  kd_err err = KD_OK, lerr = KD_OK;
  const int p = kd_dist_size(comm);
  double *y = NULL, *G = NULL;
  /* batches, so the gathered pairs (2 p per value) stay within ~2^22 doubles */
  int64_t nbt = ((int64_t)1 << 21) / p;
  if (nbt < 1) nbt = 1;
  if (nbt > n) nbt = n;
  y = calloc((size_t)2 * nbt + 1, sizeof(double));
  G = calloc((size_t)2 * nbt * p + 1, sizeof(double));
  if (!y || !G)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "target: cannot allocate %lld sums",
                      (long long)n);
  KD_TRY(kd_dist_agreed(comm, lerr));
  for (int64_t b0 = 0; b0 < n; b0 += nbt) {
    const int64_t nb = n - b0 < nbt ? n - b0 : nbt;
    memcpy(y, s + b0, (size_t)nb * sizeof(double));
    memcpy(y + nb, c + b0, (size_t)nb * sizeof(double));
    KD_TRY(kd_dist_allgatherv(comm, y, 2 * nb, G));
    for (int64_t i = 0; i < nb; i++) {
      double a = 0.0, e = 0.0;
      for (int r = 0; r < p; r++) {
        kd_neu_add_(&a, &e, G[(size_t)r * 2 * nb + i]);
        kd_neu_add_(&a, &e, G[(size_t)r * 2 * nb + nb + i]);
      }
      out[b0 + i] = a + e;
    }
  }
cleanup:
  free(y);
  free(G);
  return err;
}

kd_err kd_target_emp_embed_rows_(kd_target *t, const double *X, kd_lidx n, double *z) {
  kd_err err = KD_OK, lerr = KD_OK;
  MPI_Comm comm = t->comm;
  const int d = kd_pointset_dim(t->pts);
  double *s = NULL, *c = NULL, *y = NULL;
  KD_TRY(kd_target_emp_own_(t));
  s = calloc((size_t)n + 1, sizeof(double));
  c = calloc((size_t)n + 1, sizeof(double));
  y = calloc((size_t)n + 1, sizeof(double));
  if (!s || !c || !y)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "target: cannot allocate %lld rows",
                      (long long)n);
  const kd_emp_set_ own = kd_emp_own_set_(t);
  if (!lerr) lerr = kd_emp_chunks_(t->k, X, n, &own, d, y, s, c, NULL);
  KD_TRY(kd_dist_agreed(comm, lerr));
  /* the (sum, compensation) pairs of all ranks in rank order, compensated again */
  KD_TRY(kd_target_sum_pairs_(comm, s, c, n, z));
cleanup:
  free(s);
  free(c);
  free(y);
  return err;
}

/* Chunk-pair term 2 v_c^T K(c, c') v_c' for the distinct chunks starting at rows a of set A and
 * b of set B, A the lower global chunk. The mat-vec and the dot product see only the two
 * chunks, so the term has the same bits wherever and whenever it is computed. The mat-vec is
 * kd_kernel_matvec_gemm (dgemm for the Gaussian kernel at d >= 96): its call shapes are the global
 * chunks', whatever the rank count. */
static kd_err kd_emp_pair_(kd_kernel *k, int d, const kd_emp_set_ *A, kd_lidx a,
                           const kd_emp_set_ *B, kd_lidx b, double *y, double *acc, double *comp,
                           kd_emp_prog_ *pg) {
  kd_err err = KD_OK;
  const double *Ax, *wa, *Bx, *wb;
  const kd_lidx ma = kd_emp_get_(A, d, a, &Ax, &wa), mb = kd_emp_get_(B, d, b, &Bx, &wb);
  KD_TRY(kd_kernel_matvec_gemm(k, Ax, ma, Bx, mb, wb, y));
  kd_neu_add_(acc, comp, 2.0 * kd_emp_wdot_(ma, wa, y));
  kd_emp_tick_(pg, (double)ma * (double)mb);
cleanup:
  return err;
}

/* The diagonal term v_c^T K(c, c) v_c of the chunk at row a of set A, by halves: over sub-blocks u
 * of S = KD_EMP_SUB rows, the sum of v_u^T K(u, [u, end)) v' with v' = v on u and 2 v after u
 * (doubling is exact), one mat-vec each: C^2 / 2 + C S / 2 evaluations instead of C^2 (only the
 * pairs inside a block are evaluated twice). Like kd_emp_pair_, the term has the same bits
 * wherever and whenever it is computed. y: 2 KD_EMP_CHUNK doubles. */
enum { KD_EMP_SUB = 256 };
static kd_err kd_emp_diag_(kd_kernel *k, int d, const kd_emp_set_ *A, kd_lidx a, double *y,
                           double *acc, double *comp, kd_emp_prog_ *pg) {
  kd_err err = KD_OK;
  const double *X, *w;
  const kd_lidx m = kd_emp_get_(A, d, a, &X, &w);
  double *v = y + KD_EMP_CHUNK;
  for (kd_lidx u0 = 0; u0 < m; u0 += KD_EMP_SUB) {
    const kd_lidx nu = m - u0 < KD_EMP_SUB ? m - u0 : KD_EMP_SUB;
    for (kd_lidx j = u0; j < m; j++) v[j - u0] = j < u0 + nu ? w[j] : 2.0 * w[j];
    KD_TRY(kd_kernel_matvec_gemm(k, X + u0 * d, nu, X + u0 * d, m - u0, v, y));
    double s = 0.0;
    for (kd_lidx i = 0; i < nu; i++) s += w[u0 + i] * y[i];
    kd_neu_add_(acc, comp, s);
    kd_emp_tick_(pg, (double)nu * (double)(m - u0));
  }
cleanup:
  return err;
}

/* All chunk pairs between sets L (local, global chunks of rank `rank`) and R (remote, of rank q),
 * restricted to chunks [l0, l1) of L and [r0, r1) of R (chunk indices), weight 2, computed with the
 * lower global chunk as A. */
static kd_err kd_emp_cross_(kd_kernel *k, int d, const kd_emp_set_ *L, kd_lidx l0, kd_lidx l1,
                            const kd_emp_set_ *R, kd_lidx r0, kd_lidx r1, int remote_lower,
                            double *y, double *acc, double *comp, kd_emp_prog_ *pg) {
  kd_err err = KD_OK;
  for (kd_lidx i = l0; i < l1; i++)
    for (kd_lidx j = r0; j < r1; j++) {
      if (remote_lower)
        KD_TRY(kd_emp_pair_(k, d, R, j * KD_EMP_CHUNK, L, i * KD_EMP_CHUNK, y, acc, comp, pg));
      else
        KD_TRY(kd_emp_pair_(k, d, L, i * KD_EMP_CHUNK, R, j * KD_EMP_CHUNK, y, acc, comp, pg));
    }
cleanup:
  return err;
}

static kd_lidx kd_emp_nchunks_(kd_lidx n) { return (n + KD_EMP_CHUNK - 1) / KD_EMP_CHUNK; }

kd_err kd_target_emp_self_(kd_target *t, double *zz) {
  kd_err err = KD_OK, lerr = KD_OK;
  MPI_Comm comm = t->comm;
  const int p = kd_dist_size(comm), rank = kd_dist_rank(comm), d = kd_pointset_dim(t->pts);
  double *cur = NULL, *nxt = NULL, *y = NULL, *G = NULL;
  int64_t cap = 0, ncur = 0, nr = 0;
  double acc = 0.0, comp = 0.0;
  KD_TRY(kd_target_emp_own_(t));
  for (int q = 0; q < p; q++) {
    kd_gidx S, E;
    kd_emp_range_(t->pts, q, p, &S, &E);
    if ((int64_t)(E - S) * (d + 1) > cap) cap = (int64_t)(E - S) * (d + 1);
  }
  cur = calloc((size_t)cap + 1, sizeof(double));
  nxt = calloc((size_t)cap + 1, sizeof(double));
  y = calloc(2 * KD_EMP_CHUNK, sizeof(double));
  G = calloc((size_t)2 * p, sizeof(double));
  if (!cur || !nxt || !y || !G)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "target: cannot allocate ring buffers");
  KD_TRY(kd_dist_agreed(comm, lerr));
  const kd_emp_set_ L = kd_emp_own_set_(t);
  const kd_lidx nl = t->own_n, ncl = kd_emp_nchunks_(nl);
  const double Nt = (double)kd_pointset_n_global(t->pts);
  kd_emp_prog_ pg;
  kd_emp_prog_init_(&pg, "target double sum", 0.5 * Nt * Nt / p, 0.5 * Nt * Nt);
  ncur = (int64_t)nl * (d + 1);
  kd_emp_pack_set_(&L, d, cur);
  /* step 0: chunk pairs c <= c' of the own set (c = c' by halves), or the same sum kept by the
   * symmetric embedding (kd_emp_own_sym_) */
  const int kept = t->zz0_done && t->zz0_ls == kd_kernel_get_params(t->k)->ls;
  if (kept) {
    acc = t->zz0[0];
    comp = t->zz0[1];
    kd_emp_tick_(&pg, 0.5 * (double)nl * (double)nl);
  }
  for (kd_lidx i = 0; i < ncl && !lerr && !kept; i++) {
    lerr = kd_emp_diag_(t->k, d, &L, i * KD_EMP_CHUNK, y, &acc, &comp, &pg);
    for (kd_lidx j = i + 1; j < ncl && !lerr; j++)
      lerr = kd_emp_pair_(t->k, d, &L, i * KD_EMP_CHUNK, &L, j * KD_EMP_CHUNK, y, &acc, &comp, &pg);
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  /* steps 1 .. p/2: the set of rank q = (rank - s) mod p */
  for (int s = 1; 2 * s <= p; s++) {
    KD_TRY(kd_dist_ring_shift(comm, cur, ncur, nxt, cap, &nr));
    double *sw = cur;
    cur = nxt;
    nxt = sw;
    ncur = nr;
    const kd_lidx nb = (kd_lidx)(ncur / (d + 1)), ncb = kd_emp_nchunks_(nb);
    const kd_emp_set_ R = kd_emp_packed_(cur, nb, d);
    const int q = (rank - s + p) % p, remote_lower = q < rank;
    if (lerr) continue;
    if (2 * s < p) /* the pair (rank, q) */
      lerr = kd_emp_cross_(t->k, d, &L, 0, ncl, &R, 0, ncb, remote_lower, y, &acc, &comp, &pg);
    else if (rank < p / 2) /* pair (rank, rank + p/2): the first half of my chunks */
      lerr = kd_emp_cross_(t->k, d, &L, 0, ncl / 2, &R, 0, ncb, 0, y, &acc, &comp, &pg);
    else /* pair (rank - p/2, rank): the second half of the partner's chunks */
      lerr = kd_emp_cross_(t->k, d, &L, 0, ncl, &R, ncb / 2, ncb, 1, y, &acc, &comp, &pg);
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  /* the (sum, compensation) pairs of all ranks, added in rank order, compensated again */
  double v[2] = {acc, comp}, a = 0.0, e = 0.0;
  KD_TRY(kd_dist_allgatherv(comm, v, 2, G));
  for (int r = 0; r < 2 * p; r++) kd_neu_add_(&a, &e, G[r]);
  *zz = a + e;
cleanup:
  free(cur);
  free(nxt);
  free(y);
  free(G);
  return err;
}
