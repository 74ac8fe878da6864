/* driver.c - the distributed driver behind every `thin` algorithm (Low-Rank Thinning App. B / H).
 *
 * Size rule (n_in arbitrary; no row is dropped unseen):
 *   K = floor(log4 n_in), F = floor(n_in / 4^K) in {1,2,3}: the input is F Compress trees of 4^K
 *   logical slots. Trees are cut at the leaf height h_leaf = max(0, K-3) into nb = F 4^(K-h_leaf)
 *   leaf bins; bin j takes the global rows [floor(j n_in/nb), floor((j+1) n_in/nb)), i.e. between B
 *   and 2B-1 rows for B = 4^h_leaf. A bin with B+e rows first kernel-halves its last 2e rows
 *   (remainder rule, kd_thin_absorb_remainder), so every input row takes part in a halving
 * decision. Each bin is then compressed locally (Compress, Alg. B.4/B.8; or passed through for the
 * plain halving algorithms); the upper levels are merged up a tree of ranks (4 children gathered to
 * the owner of the first one, halved, passed up). The F tree outputs (L points) are gathered to
 * rank 0, which halves while L >= 2 n_out (RKH, Alg. B.3) and finally maps L in (n_out, 2 n_out) to
 *   n_out with the same remainder rule. The last step is optionally followed by KH-Refine against
 *   z over P_in (kd_target_embed_rows).
 * Every random draw is keyed by (seed, node id, level), node ids by logical position, so the output
 * is identical for any rank count. A rank sends only to lower ranks (the owner of a bin or node is
 * the owner of its first row), and sends before it receives, so the blocking point-to-point
 * exchange cannot deadlock. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/thinning/thin_impl.h"
#include "dist/dist_impl.h"
#include "la/la_impl.h"

#define KD_TAG_LEAF 4101
#define KD_TAG_TREE 4201

kd_err kd_thin_plan_from_params(const kd_params *p, kd_thin_plan *plan) {
  kd_err err = KD_OK;
  kd_thin_params tp;
  memset(&tp, 0, sizeof tp);
  memset(plan, 0, sizeof *plan);
  KD_TRY(kd_params_fill(p, &tp));
  plan->n_out = tp.n_out;
  plan->delta = tp.delta;
  plan->g = (int)tp.g;
  plan->refine = tp.refine;
  plan->reweight = tp.reweight == 1;
  plan->refine_target = tp.refine_target;
  plan->refine_pool = (int)tp.refine_pool;
  plan->refine_passes = (int)tp.refine_passes;
  plan->tight = tp.threshold == KD_THIN_THRESHOLD_TIGHT;
  plan->adaptive = tp.threshold == KD_THIN_THRESHOLD_ADAPTIVE;
  plan->pairing_local = tp.pairing == KD_THIN_PAIRING_LOCAL;
  plan->progress = 1;
cleanup:
  return err;
}

/* A node's output: cnt packed rows [gidx, x_1..x_d]. */
typedef struct {
  kd_lidx cnt;
  double *p;
} kd_pk_;

static void kd_pk_free_(kd_pk_ *a) {
  free(a->p);
  a->p = NULL;
  a->cnt = 0;
}

/* coords of packed rows into X */
static void kd_unpack_(const double *P, kd_lidx cnt, int d, double *X) {
  for (kd_lidx i = 0; i < cnt; i++) memcpy(X + i * d, P + i * (d + 1) + 1, sizeof(double) * d);
}

/* Halve a packed set with the plan's rule: cnt even; out gets cnt/2 rows. */
static kd_err kd_pk_halve_(kd_kernel *k, const kd_thin_plan *pl, const kd_pk_ *in, int d,
                           double delta, uint64_t seed, uint64_t stream, kd_pk_ *out) {
  kd_err err = KD_OK;
  double *X = NULL;
  kd_lidx *keep = NULL;
  const int w = d + 1;
  KD_ALLOC(X, in->cnt * d);
  KD_ALLOC(keep, in->cnt / 2 + 1);
  kd_unpack_(in->p, in->cnt, d, X);
  KD_TRY(kd_thin_halve(k, pl->kind, X, in->cnt, d, delta, seed, stream, keep));
  KD_ALLOC(out->p, (in->cnt / 2) * w);
  out->cnt = in->cnt / 2;
  for (kd_lidx i = 0; i < out->cnt; i++)
    memcpy(out->p + i * w, in->p + keep[i] * w, sizeof(double) * w);
cleanup:
  free(X);
  free(keep);
  return err;
}

/* Leaf bin: s packed rows -> remainder rule -> B rows -> Compress of height h (or pass through). */
static kd_err kd_leaf_(kd_kernel *k, const kd_thin_plan *pl, const double *P, kd_lidx s, kd_lidx B,
                       int h, int d, double delta_rem, double den, uint64_t seed, uint64_t bin,
                       double dsign, kd_pk_ *out) {
  kd_err err = KD_OK;
  double *X = NULL, *R = NULL;
  kd_lidx *keep = NULL, *o = NULL;
  const int w = d + 1;
  KD_ALLOC(X, s * d);
  KD_ALLOC(keep, s);
  kd_unpack_(P, s, d, X);
  KD_TRY(kd_thin_absorb_remainder(k, pl->kind, X, s, B, d, delta_rem, seed, bin, keep));
  kd_lidx no = B;
  KD_ALLOC(o, B);
  if (pl->compress) {
    KD_ALLOC(R, B * d);
    for (kd_lidx i = 0; i < B; i++) memcpy(R + i * d, X + keep[i] * d, sizeof(double) * d);
    KD_TRY(kd_thin_compress_node(k, pl->kind, R, d, h, pl->g, dsign * pl->delta, den, seed, bin, 0,
                                 o, &no));
  } else {
    for (kd_lidx i = 0; i < B; i++) o[i] = i;
  }
  KD_ALLOC(out->p, no * w);
  out->cnt = no;
  for (kd_lidx i = 0; i < no; i++) memcpy(out->p + i * w, P + keep[o[i]] * w, sizeof(double) * w);
cleanup:
  free(X);
  free(R);
  free(keep);
  free(o);
  return err;
}

/* sum over j of (sel x sel kernel) and z: MMD^2 - zz of the uniform coreset sel[m] of C. */
static kd_err kd_mmd2_rel_(kd_kernel *k, const double *C, int d, const double *zc,
                           const kd_lidx *sel, kd_lidx m, double *v) {
  kd_err err = KD_OK;
  double *S = NULL, *Ks = NULL;
  KD_ALLOC(S, m * d);
  KD_ALLOC(Ks, m * m);
  double zs = 0.0, ks = 0.0;
  for (kd_lidx i = 0; i < m; i++) {
    memcpy(S + i * d, C + sel[i] * d, sizeof(double) * d);
    zs += zc[sel[i]];
  }
  KD_TRY(kd_kernel_eval_block(k, S, m, S, m, Ks, m));
  for (kd_lidx i = 0; i < m * m; i++) ks += Ks[i];
  *v = -2.0 * zs / (double)m + ks / ((double)m * (double)m);
cleanup:
  free(S);
  free(Ks);
  return err;
}

/* End of tree step s (thin_ckpt.c): agree the local error (a pending signal folded in), print the
 * progress line and, when a checkpoint is due, write this rank's nodes[n_nodes] (logical order).
 * Collective. */
static kd_err kd_tree_step_(const kd_algo_in *in, const kd_thin_tree *t, int s, kd_err lerr,
                            const kd_pk_ *nodes, kd_gidx n_nodes, const double *cout, double t0) {
  kd_err err = KD_OK;
  double *buf = NULL;
  const int w = t->d + 1;
  int write = 0;
  KD_TRY(kd_thin_ckpt_agree(in, t, s, lerr, &write));
  kd_thin_progress(t, s);
  if (write) {
    kd_lidx tot = 0;
    for (kd_gidx c = 0; c < n_nodes; c++) tot += nodes[c].cnt;
    buf = malloc(sizeof(double) * (size_t)(tot * w + 1));
    KD_TRY(kd_dist_agreed(
        in->comm, buf ? KD_OK
                      : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                   "checkpoint: cannot allocate %lld rows", (long long)tot)));
    tot = 0;
    for (kd_gidx c = 0; c < n_nodes; c++) {
      memcpy(buf + tot * w, nodes[c].p, sizeof(double) * (size_t)(nodes[c].cnt * w));
      tot += nodes[c].cnt;
    }
    KD_TRY(kd_thin_ckpt_save(in, t, s, write == 2, buf, tot, cout, t0));
  }
cleanup:
  free(buf);
  return err;
}

kd_err kd_thin_run(const kd_algo_in *in, const kd_thin_plan *plan, kd_result *out) {
  kd_err err = KD_OK, lerr = KD_OK;
  /* threshold: adaptive turns every KH round into KD_HALVE_KHA */
  kd_thin_plan plc = *plan;
  if (plc.adaptive && !plc.tight && plc.kind == KD_HALVE_KH) plc.kind = KD_HALVE_KHA;
  const kd_thin_plan *pl = &plc;
  MPI_Comm comm = in->comm;
  kd_kernel *k = in->kernel;
  const kd_pointset *ps = in->points;
  const int rank = kd_dist_rank(comm), size = kd_dist_size(comm);
  const double t0 = kd_dist_wtime();
  const kd_gidx n = kd_pointset_n_global(ps);
  const int d = kd_pointset_dim(ps), w = d + 1;
  const kd_gidx off = kd_pointset_offset(ps), nl = kd_pointset_n_local(ps);
  const uint64_t seed = in->seed;
  const uint64_t ev0 = kd_kernel_evals(k);
  uint64_t ev_skip = 0, ev_embed = 0;
  kd_pk_ *nodes = NULL, *up = NULL, root = {0, NULL}, tmp = {0, NULL};
  kd_gidx n_nodes = 0, n_up = 0; /* entries of nodes / up (freed in cleanup on error) */
  double *Rall = NULL;           /* refine_target compress: the Compress output (rank 0) */
  double *buf = NULL, *C = NULL, *zc = NULL, *all = NULL, *Q = NULL, *zs = NULL, *wq = NULL;
  kd_lidx *sel = NULL, *keep = NULL;
  kd_gidx *offs = NULL;
  const double *rows = kd_pointset_rows_const(ps);
  kd_thin_tree tr;
  int s0 = -1, r0 = 0; /* resume: the step of the checkpoint, rank-0 rounds it had done */
  const double *rrows = NULL, *rcout = NULL;

  /* ---- checks every rank makes identically ---- */
  const kd_gidx n_out = pl->n_out;
  KD_CHECK(n_out >= 1, KD_ERR_CONFIG, "algorithm.n_out = %lld: must be >= 1", (long long)n_out);
  KD_CHECK(n_out <= n, KD_ERR_CONFIG, "algorithm.n_out = %lld exceeds the %lld input points",
           (long long)n_out, (long long)n);
  /* GS-Halve has no threshold (GS algorithms declare no delta) */
  KD_CHECK(KD_HALVE_RULE(pl->kind) == KD_HALVE_GS || (pl->delta > 0 && pl->delta < 1),
           KD_ERR_CONFIG, "algorithm.delta = %g: must lie strictly between 0 and 1", pl->delta);
  KD_CHECK(kd_kernel_dim(k) == d, KD_ERR_ARG, "kernel dimension %d != data dimension %d",
           kd_kernel_dim(k), d);
  kd_thin_tree_init(&tr, n, d, pl);
  const int K = tr.K;
  const kd_gidx F = tr.F;
  if (pl->compress) {
    KD_CHECK(pl->g >= 0 && K > pl->g, KD_ERR_CONFIG,
             "algorithm.g = %d too large for n_in = %lld: Compress needs 4^(g+1) <= n_in "
             "(g <= %d)",
             pl->g, (long long)n, K - 1);
    KD_CHECK(F << (pl->g + K) >= n_out, KD_ERR_CONFIG,
             "algorithm.n_out = %lld exceeds the Compress output %lld (= %lld * 2^(g+%d)); raise "
             "algorithm.g",
             (long long)n_out, (long long)(F << (pl->g + K)), (long long)F, K);
  }
  KD_TRY(kd_pointset_validate(ps, "data"));

  const int hl = tr.hl;
  const kd_gidx B = (kd_gidx)1 << (2 * hl);
  const kd_gidx nb = tr.nb;
  const double den = pl->compress ? (double)(F << (2 * K)) * pow(4.0, pl->g + 1) * (K - pl->g) : 1;
  /* a negative delta tells kd_thin_halve to use the tight KH threshold */
  const double dsign = (pl->tight && pl->kind == KD_HALVE_KH) ? -1.0 : 1.0;
  /* pairing: local - every halving below pairs close points (halve.c) */
  if (plc.pairing_local) plc.kind = (kd_halve_kind)((int)plc.kind | KD_HALVE_LOCAL);
  const double delta_rem = dsign * pl->delta * 0.5 / (double)nb;
#define KD_BIN_START(j) ((kd_gidx)(j) * (n / nb) + ((kd_gidx)(j) * (n % nb)) / nb) /* nb <= 192 */
  KD_ALLOC(offs, size + 1);
  for (int r = 0; r <= size; r++) offs[r] = kd_pointset_rank_offset(ps, r);
    /* owner of global row g */
#define KD_OWNER(gr) kd_pointset_owner(ps, (gr))

  /* n_out > F 4^K (only plain halving with n_out > n_in / 2): the remainder rule at the bins would
   * leave fewer than n_out rows, so all rows go to rank 0 and the root step maps n_in -> n_out */
  const int direct = tr.direct;
  if (in->resume) {
    KD_TRY(kd_thin_ckpt_restore(in, &tr, &s0, &rrows, &rcout));
    KD_TRY(kd_thin_ckpt_check_data(in, rrows,
                                   kd_thin_tree_nodes(&tr, s0) * kd_thin_tree_node_rows(&tr, s0)));
    kd_log_info("thin: resuming after step %d of %d", s0, K + tr.rounds);
  }
  if (pl->progress) kd_log_set_total_from(direct ? 0 : K + tr.rounds, in->resume ? s0 : 0);
  if (direct) {
    KD_ALLOC(buf, nl * w + 1);
    for (kd_lidx i = 0; i < nl; i++) {
      buf[i * w] = (double)(off + i);
      memcpy(buf + i * w + 1, rows + i * d, sizeof(double) * d);
    }
    KD_ALLOC(root.p, n * w + 1);
    root.cnt = n;
    KD_TRY(kd_dist_gatherv(comm, buf, nl * w, root.p, 0));
    free(buf);
    buf = NULL;
    goto phase_e;
  }
  kd_gidx c0 = 0, c1 = -1; /* nodes held here at the current height (logical indices) */
  if (s0 > K) {
    /* resume after rank-0 round s0 - K: rank 0 holds the set, the tree is done */
    r0 = s0 - K;
    if (rank == 0) {
      root.cnt = kd_thin_tree_node_rows(&tr, s0);
      KD_ALLOC(root.p, root.cnt * w);
      memcpy(root.p, rrows, sizeof(double) * (size_t)(root.cnt * w));
    }
    goto phase_e;
  }
  if (s0 >= 0) {
    /* resume at height s0: take the nodes owned here (owner of the node's first leaf bin) */
    const int sh = 2 * (s0 - hl);
    const kd_gidx nn = kd_thin_tree_nodes(&tr, s0), cnt = kd_thin_tree_node_rows(&tr, s0);
    for (kd_gidx c = 0; c < nn; c++)
      if (KD_OWNER(KD_BIN_START(c << sh)) == rank) {
        if (c1 < c0) c0 = c;
        c1 = c;
      }
    KD_ALLOC(nodes, c1 >= c0 ? c1 - c0 + 1 : 1);
    n_nodes = c1 >= c0 ? c1 - c0 + 1 : 0;
    for (kd_gidx c = 0; c < n_nodes; c++) {
      KD_ALLOC(nodes[c].p, cnt * w);
      nodes[c].cnt = cnt;
      memcpy(nodes[c].p, rrows + (c0 + c) * cnt * w, sizeof(double) * (size_t)(cnt * w));
    }
    goto phase_c;
  }
  /* ---- phase A: each leaf bin collects its rows on its owner (sends go to lower ranks) ---- */
  kd_gidx jfirst = 0, jlast = -1; /* bins owned here: start row in [off, off+nl) */
  if (nl > 0) {
    kd_gidx j = (kd_gidx)((off * nb) / n);
    while (j > 0 && KD_BIN_START(j) > off) j--;
    while (j + 1 < nb && KD_BIN_START(j + 1) <= off) j++;
    /* j = bin containing row off */
    if (KD_BIN_START(j) < off) {
      kd_gidx e = KD_BIN_START(j + 1) < off + nl ? KD_BIN_START(j + 1) : off + nl;
      KD_ALLOC(buf, (e - off) * w);
      for (kd_gidx gr = off; gr < e; gr++) {
        buf[(gr - off) * w] = (double)gr;
        memcpy(buf + (gr - off) * w + 1, rows + (gr - off) * d, sizeof(double) * d);
      }
      KD_TRY(kd_dist_send(comm, buf, (e - off) * w, KD_OWNER(KD_BIN_START(j)), KD_TAG_LEAF));
      free(buf);
      buf = NULL;
      jfirst = j + 1;
    } else {
      jfirst = j;
    }
    jlast = jfirst - 1;
    while (jlast + 1 < nb && KD_BIN_START(jlast + 1) < off + nl) jlast++;
  }
  const kd_gidx nown = jlast - jfirst + 1;
  KD_ALLOC(nodes, nown > 0 ? nown : 1);
  n_nodes = nown > 0 ? nown : 0;
  /* after a local error (e.g. GS-Halve on duplicate rows) keep receiving, so that no sender is
   * left blocked, and agree below */
  for (kd_gidx j = jfirst; j <= jlast; j++) {
    kd_gidx a = KD_BIN_START(j), b = KD_BIN_START(j + 1);
    KD_ALLOC(buf, (b - a) * w);
    for (kd_gidx gr = a; gr < b && gr < off + nl; gr++) {
      buf[(gr - a) * w] = (double)gr;
      memcpy(buf + (gr - a) * w + 1, rows + (gr - off) * d, sizeof(double) * d);
    }
    /* rows past this rank come from the next ranks, in order */
    for (int q = rank + 1; q < size && b > offs[q]; q++) {
      kd_gidx lo = offs[q], hi = offs[q + 1] < b ? offs[q + 1] : b;
      if (hi <= lo) continue;
      int64_t got = 0;
      KD_TRY(kd_dist_recv(comm, buf + (lo - a) * w, (hi - lo) * w, &got, q, KD_TAG_LEAF));
      KD_CHECK(got == (hi - lo) * w, KD_ERR_INTERNAL, "leaf exchange: size mismatch");
    }
    /* ---- phase B: remainder rule + local Compress of the bin ---- */
    if (lerr == KD_OK)
      lerr = kd_leaf_(k, pl, buf, b - a, B, hl, d, delta_rem, den, seed, (uint64_t)j, dsign,
                      &nodes[j - jfirst]);
    free(buf);
    buf = NULL;
  }
  c0 = jfirst;
  c1 = jlast;
  KD_TRY(kd_tree_step_(in, &tr, hl, lerr, nodes, n_nodes, NULL, t0));

phase_c:
  /* ---- phase C: merge levels hl+1..K up the tree of ranks ---- */
  {
    for (int h = (s0 >= 0 ? s0 : hl) + 1; h <= K; h++) {
      const int sh = 2 * (h - 1 - hl); /* child index -> first leaf bin: << sh */
      /* children held here whose parent's first child is elsewhere: send down */
      kd_gidx p0 = -1, p1 = -2;
      if (c1 >= c0) {
        kd_gidx pfirst = c0 / 4;
        if (c0 % 4 != 0) {
          int dest = KD_OWNER(KD_BIN_START((pfirst * 4) << sh));
          for (kd_gidx c = c0; c <= c1 && c / 4 == pfirst; c++)
            KD_TRY(
                kd_dist_send(comm, nodes[c - c0].p, nodes[c - c0].cnt * w, dest, KD_TAG_TREE + h));
          p0 = pfirst + 1;
        } else {
          p0 = pfirst;
        }
        p1 = c1 / 4;
        if (p0 * 4 > c1) p1 = p0 - 1; /* owns no parent */
      }
      kd_gidx np = p1 - p0 + 1;
      if (np < 0) np = 0;
      KD_ALLOC(up, np > 0 ? np : 1);
      n_up = np;
      for (kd_gidx q = p0; q <= p1; q++) { /* receive even after a local error (see phase A) */
        kd_pk_ cat = {0, NULL};
        kd_lidx tot = 0, cap = 0;
        /* output size of a child of height h-1 */
        const kd_lidx csz = (pl->compress && h - 1 > pl->g) ? ((kd_lidx)1 << (pl->g + h - 1))
                                                            : ((kd_lidx)1 << (2 * (h - 1)));
        cap = 4 * csz;
        cat.p = malloc(sizeof(double) * (size_t)(cap * w + 1));
        if (!cat.p) {
          lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "tree merge: cannot allocate");
          break;
        }
        for (int c = 0; c < 4; c++) {
          kd_gidx ci = 4 * q + c;
          if (ci <= c1) {
            memcpy(cat.p + tot * w, nodes[ci - c0].p, sizeof(double) * nodes[ci - c0].cnt * w);
            tot += nodes[ci - c0].cnt;
          } else {
            int src = KD_OWNER(KD_BIN_START(ci << sh));
            int64_t got = 0;
            KD_TRY(
                kd_dist_recv(comm, cat.p + tot * w, (cap - tot) * w, &got, src, KD_TAG_TREE + h));
            tot += got / w;
          }
        }
        cat.cnt = tot;
        if (lerr != KD_OK) {
          kd_pk_free_(&cat);
        } else if (pl->compress && h > pl->g) {
          double dl = pl->delta * (double)tot * (double)tot / den;
          if (dl >= 1.0) dl = 0.999999;
          lerr = kd_pk_halve_(k, pl, &cat, d, dsign * dl, seed, KD_THIN_STREAM(q, h), &up[q - p0]);
          kd_pk_free_(&cat);
        } else {
          up[q - p0] = cat;
        }
      }
      /* (after a local error the new nodes are partly empty: freed in cleanup) */
      for (kd_gidx c = 0; c < n_nodes; c++) kd_pk_free_(&nodes[c]);
      free(nodes);
      nodes = up;
      n_nodes = n_up;
      up = NULL;
      n_up = 0;
      c0 = p0;
      c1 = p1;
      KD_TRY(kd_tree_step_(in, &tr, h, lerr, nodes, n_nodes, NULL, t0));
    }
    /* ---- phase D: the F tree outputs to rank 0 (rank order = logical order) ---- */
    kd_lidx mine = 0;
    for (kd_gidx c = 0; c < c1 - c0 + 1; c++) mine += nodes[c].cnt;
    KD_ALLOC(buf, mine * w + 1);
    mine = 0;
    for (kd_gidx c = 0; c < c1 - c0 + 1; c++) {
      memcpy(buf + mine * w, nodes[c].p, sizeof(double) * nodes[c].cnt * w);
      mine += nodes[c].cnt;
    }
    int64_t tot = mine;
    KD_TRY(kd_dist_sum_i64(comm, &tot, 1));
    KD_ALLOC(root.p, tot * w + 1);
    root.cnt = tot;
    KD_TRY(kd_dist_gatherv(comm, buf, mine * w, root.p, 0));
    free(buf);
    buf = NULL;
    for (kd_gidx c = 0; c < c1 - c0 + 1; c++) kd_pk_free_(&nodes[c]);
  }

phase_e:;
  /* ---- phase E: rank 0 halves while L >= 2^(pool+1) n_out; the last `pool` halvings, the
   * remainder step and KH-Refine (candidates = the input of those steps) run on every rank ---- */
  const int pool = pl->refine && pl->refine_pool > 1 ? pl->refine_pool : 1;
  const kd_lidx L0 = tr.L0; /* rows gathered to rank 0 (root.cnt unless resumed after a round) */
  const int rounds = tr.rounds; /* while L >= 2^(pool+1) n_out */
  int nsteps = 0;
  KD_CHECK(r0 > 0 || root.cnt == L0, KD_ERR_INTERNAL, "thin: %lld rows at the root, expected %lld",
           (long long)root.cnt, (long long)L0);
  {
    kd_lidx Ls = L0 >> rounds;
    nsteps = rounds;
    while (Ls >= 2 * n_out) {
      Ls /= 2;
      nsteps++;
    }
    if (Ls > n_out) nsteps++;
  }
  const double dstep = dsign * pl->delta / (nsteps > 0 ? nsteps : 1);
  if (rank == 0 && pl->refine && pl->refine_target == 1) {
    Rall = malloc(sizeof(double) * (size_t)(L0 * d + 1));
    if (!Rall)
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "refine: cannot allocate");
    else if (r0 > 0)
      memcpy(Rall, rcout, sizeof(double) * (size_t)(L0 * d));
    else
      kd_unpack_(root.p, L0, d, Rall);
  }
  /* the rounds of rank 0 are steps K+1..K+rounds (each one a safe point of thin_ckpt.c) */
  for (int rr = r0; rr < rounds; rr++) {
    if (rank == 0 && lerr == KD_OK) {
      lerr = kd_pk_halve_(k, pl, &root, d, dstep, seed, KD_THIN_STREAM(0, KD_THIN_LEVEL_FINAL + rr),
                          &tmp);
      kd_pk_free_(&root);
      root = tmp;
      tmp.p = NULL;
      tmp.cnt = 0;
    }
    KD_TRY(kd_tree_step_(in, &tr, K + rr + 1, lerr, &root, rank == 0 ? 1 : 0, Rall, t0));
  }
  if (r0 >= rounds) { /* no round ran here: agree the allocation above */
    KD_TRY(kd_dist_agree(comm, &lerr));
    KD_TRY(lerr);
  }
  /* broadcast the candidates of the last steps (n_out <= nc < 2^(pool+1) n_out) */
  int64_t nc = root.cnt;
  KD_TRY(kd_dist_bcast(comm, &nc, sizeof nc, 0));
  if (rank != 0) {
    free(root.p);
    root.p = NULL;
    KD_ALLOC(root.p, nc * w);
    root.cnt = nc;
  }
  KD_TRY(kd_dist_bcast(comm, root.p, (int64_t)sizeof(double) * nc * w, 0));
  /* the last steps on every rank (deterministic); kernel evaluations counted on rank 0 only */
  const uint64_t ev1 = kd_kernel_evals(k);
  KD_ALLOC(C, nc * d);
  kd_unpack_(root.p, nc, d, C);
  KD_ALLOC(sel, nc);
  KD_ALLOC(keep, nc);
  kd_lidx m = nc;
  for (kd_lidx i = 0; i < nc; i++) sel[i] = i;
  if (pl->refine) {
    KD_ALLOC(zc, nc);
    if (pl->refine_target == 1) {
      /* z over the Compress output (uniform weights), computed on rank 0 and broadcast */
      if (rank == 0) {
        lerr = kd_kernel_matvec(k, C, nc, Rall, L0, NULL, 0.0, zc);
        for (kd_lidx i = 0; i < nc; i++) zc[i] /= (double)L0;
      }
      KD_TRY(kd_dist_agree(comm, &lerr));
      KD_TRY(lerr);
      KD_TRY(kd_dist_bcast(comm, zc, (int64_t)sizeof(double) * nc, 0));
    } else {
      /* distributed over the ranks (ring): these evaluations are not redundant */
      const uint64_t e0 = kd_kernel_evals(k);
      KD_TRY(kd_target_embed_rows(in->target, C, nc, zc));
      ev_embed = kd_kernel_evals(k) - e0;
    }
  }
  {
    /* KT-Split style (Dwivedi & Mackey 2024, Alg. 1a): with refine, both halves of every round
     * are kept (branch 2b = the KH output S1 of branch b, 2b+1 = its complement S2), so the last
     * rounds yield up to 2^pool coresets; the best against P_in is refined (KT-Swap). Branch 0
     * is exactly the plain KH chain. */
    const int maxb = pl->refine ? (1 << pool) : 1;
    kd_lidx *br = NULL, *nbr = NULL;
    int nbch = 1;
    KD_ALLOC(br, (size_t)maxb * nc);
    KD_ALLOC(nbr, (size_t)maxb * nc);
    for (kd_lidx i = 0; i < nc; i++) br[i] = i;
    double *Cs = NULL;
    KD_ALLOC(Cs, nc * d);
    for (int rr = rounds; m >= 2 * n_out && err == KD_OK; rr++) {
      const int split = 2 * nbch <= maxb;
      kd_lidx mm = m;
      for (int bi = 0; bi < nbch && err == KD_OK; bi++) {
        kd_lidx *sb = br + (size_t)bi * nc;
        mm = m;
        if (mm % 2 == 1) {
          /* odd count (n_in < 4, or F odd with n_out = 1): remainder rule to m - 1 first */
          for (kd_lidx i = 0; i < mm; i++) memcpy(Cs + i * d, C + sb[i] * d, sizeof(double) * d);
          err = kd_thin_absorb_remainder(k, pl->kind, Cs, mm, mm - 1, d, dstep, seed,
                                         (uint64_t)nb + 9 + (uint64_t)rr * 64 + (uint64_t)bi, keep);
          if (err != KD_OK) break;
          for (kd_lidx i = 0; i < mm - 1; i++) keep[i] = sb[keep[i]];
          for (kd_lidx i = 0; i < mm - 1; i++) sb[i] = keep[i];
          mm -= 1;
        }
        for (kd_lidx i = 0; i < mm; i++) memcpy(Cs + i * d, C + sb[i] * d, sizeof(double) * d);
        err = kd_thin_halve(k, pl->kind, Cs, mm, d, dstep, seed,
                            KD_THIN_STREAM(bi, KD_THIN_LEVEL_FINAL + rr), keep);
        if (err != KD_OK) break;
        kd_lidx *o1 = nbr + (size_t)(split ? 2 * bi : bi) * nc;
        for (kd_lidx i = 0; i < mm / 2; i++) o1[i] = sb[keep[i]];
        if (split) {
          kd_lidx *o2 = nbr + (size_t)(2 * bi + 1) * nc;
          /* the other half (S2): the rows not kept, in order (keep is increasing) */
          kd_lidx j = 0, c2 = 0;
          for (kd_lidx i = 0; i < mm; i++) {
            if (j < mm / 2 && keep[j] == i)
              j++;
            else
              o2[c2++] = sb[i];
          }
        }
      }
      if (split) nbch *= 2;
      kd_lidx *t = br;
      br = nbr;
      nbr = t;
      m = mm / 2;
    }
    for (int bi = 0; bi < nbch && err == KD_OK && m > n_out; bi++) {
      /* remainder step on each selection */
      kd_lidx *sb = br + (size_t)bi * nc;
      for (kd_lidx i = 0; i < m; i++) memcpy(Cs + i * d, C + sb[i] * d, sizeof(double) * d);
      err = kd_thin_absorb_remainder(k, pl->kind, Cs, m, n_out, d, dstep, seed,
                                     (uint64_t)nb + 7 + (uint64_t)bi * 64, keep);
      if (err == KD_OK) {
        for (kd_lidx i = 0; i < n_out; i++) keep[i] = sb[keep[i]];
        for (kd_lidx i = 0; i < n_out; i++) sb[i] = keep[i];
      }
    }
    if (m > n_out) m = n_out;
    /* pick the best branch against P_in (ties: lowest branch) */
    int best = 0;
    double bestv = 0.0, before = 0.0;
    for (int bi = 0; bi < nbch && err == KD_OK && pl->refine; bi++) {
      double v = 0.0;
      err = kd_mmd2_rel_(k, C, d, zc, br + (size_t)bi * nc, m, &v);
      if (bi == 0) before = v;
      if (err == KD_OK && (bi == 0 || v < bestv)) {
        bestv = v;
        best = bi;
      }
    }
    for (kd_lidx i = 0; i < m && err == KD_OK; i++) sel[i] = br[(size_t)best * nc + i];
    free(Cs);
    free(br);
    free(nbr);
    KD_TRY(err);
    if (pl->refine) {
      double after = 0;
      kd_lidx swaps = 0;
      KD_TRY(kd_thin_refine(k, C, nc, d, zc, sel, m, pl->refine_passes, &swaps));
      KD_TRY(kd_mmd2_rel_(k, C, d, zc, sel, m, &after));
      KD_TRY(kd_result_set_metric(out, "refine_branches", (double)nbch));
      KD_TRY(kd_result_set_metric(out, "refine_swaps", (double)swaps));
      KD_TRY(kd_result_set_metric(out, "refine_mmd2_before_minus_self", before));
      KD_TRY(kd_result_set_metric(out, "refine_mmd2_after_minus_self", after));
      /* the measure the two values above refer to: 0 = P_in, 1 = the Compress output */
      KD_TRY(kd_result_set_metric(out, "refine_target_compress", (double)pl->refine_target));
    }
  }
  if (rank != 0) ev_skip += kd_kernel_evals(k) - ev1 - ev_embed;

  /* ---- phase F: result ---- */
  KD_TRY(kd_result_alloc(out, m, d));
  for (kd_lidx i = 0; i < m; i++) {
    out->indices[i] = (int64_t)root.p[sel[i] * w];
    memcpy(out->points + i * d, C + sel[i] * d, sizeof(double) * d);
  }
  uint64_t ev = kd_kernel_evals(k) - ev0 - ev_skip;
  out->seconds = kd_dist_wtime() - t0;
  KD_TRY(kd_dist_sum_u64(comm, &ev, 1));
  out->kernel_evals = ev;
  out->mmd = NAN; /* the task layer fills it (kd_mmd) unless reweighting needs it here */
  if (pl->reweight) {
    double mmd = NAN, mmd2 = NAN, zz = NAN;
    int avail = 0;
    KD_TRY(kd_mmd(in->target, out->points, out->weights, m, &mmd, &mmd2));
    KD_TRY(kd_target_self(in->target, &zz, &avail));
    KD_TRY(kd_result_set_metric(out, "mmd_uniform_weights", mmd));
    KD_TRY(kd_result_set_metric(out, "mmd2_minus_self_uniform_weights", avail ? mmd2 - zz : mmd2));
    KD_ALLOC(Q, m * m);
    KD_ALLOC(zs, m);
    KD_ALLOC(wq, m);
    KD_TRY(kd_kernel_eval_block(k, out->points, m, out->points, m, Q, m));
    KD_TRY(kd_target_embed_rows(in->target, out->points, m, zs));
    for (kd_lidx i = 0; i < m; i++) wq[i] = 1.0 / (double)m;
    KD_TRY(kd_simplex_qp((int)m, Q, zs, 1e-12, 10000, wq));
    double s = 0.0;
    for (kd_lidx i = 0; i < m; i++) s += wq[i] > 0 ? wq[i] : 0.0;
    KD_CHECK(s > 0, KD_ERR_NUMERIC, "reweight: QP returned zero weights");
    for (kd_lidx i = 0; i < m; i++) out->weights[i] = (wq[i] > 0 ? wq[i] : 0.0) / s;
    KD_TRY(kd_mmd(in->target, out->points, out->weights, m, &mmd, &mmd2));
    KD_TRY(kd_result_set_metric(out, "mmd_convex_weights", mmd));
    out->mmd = mmd;
    if (!avail) KD_TRY(kd_result_set_metric(out, "mmd2_minus_self", mmd2));
  }
  KD_TRY(kd_result_set_metric(out, "n_in", (double)n));
  KD_TRY(kd_result_set_metric(out, "compress_output", (double)nc));
#undef KD_BIN_START
#undef KD_OWNER
cleanup:
  if (pl->progress) kd_log_set_total(0);
  for (kd_gidx c = 0; nodes && c < n_nodes; c++) kd_pk_free_(&nodes[c]);
  for (kd_gidx c = 0; up && c < n_up; c++) kd_pk_free_(&up[c]);
  free(nodes);
  free(up);
  kd_pk_free_(&root);
  kd_pk_free_(&tmp);
  free(buf);
  free(C);
  free(zc);
  free(all);
  free(Q);
  free(zs);
  free(wq);
  free(sel);
  free(keep);
  free(offs);
  free(Rall);
  return err;
}
