/* driver.c - the distributed driver behind every `thin` algorithm (Low-Rank Thinning App. B / H).
 *
 * Size rule (n_in arbitrary; no row is dropped unseen):
 *   K = floor(log4 n_in), F = floor(n_in / 4^K) in {1,2,3}: the input is F Compress trees of 4^K
 *   logical slots. Trees are cut at the leaf height h_leaf = max(0, K-3) into nb = F 4^(K-h_leaf)
 *   leaf bins; bin j takes the global rows [floor(j n_in/nb), floor((j+1) n_in/nb)), i.e. between B
 *   and 2B-1 rows for B = 4^h_leaf. A bin with B+e rows first kernel-halves its last 2e rows
 *   (remainder rule, kd_thin_absorb_remainder), so every input row takes part in a halving
 * decision. Each bin is then compressed locally (Compress, Alg. B.4/B.8; or passed through for the
 * plain halving algorithms; with generated (lazy) rows Compress asks for them 4^(g+1) at a time,
 * so a bin is never held whole); the upper levels are merged up a tree of ranks (4 children
 * gathered to the owner of the first one, halved, passed up). The F tree outputs (L points) are
 * gathered to rank 0, which halves while L >= 2 n_out (RKH, Alg. B.3) and finally maps L in (n_out,
 * 2 n_out) to n_out with the same remainder rule. The last step is optionally followed by KH-Refine
 * against z over P_in (kd_target_embed_rows). Every random draw is keyed by (seed, node id, level),
 * node ids by logical position, so the output is identical for any rank count. Who owns a bin or a
 * node, and moving rows to their owners, is the distributed tree / bin primitive of
 * comm/tree_impl.h (a tree of arity 4 over the leaf bins; the owner of a bin or node is the owner
 * of its first row).
 *
 * kd_thin_run is a sequence of phases over one driver state (kd_thin_drv_): set-up, resume or leaf
 * bins, merge levels, the gather to rank 0, the rank-0 halving rounds, the last steps on every rank
 * (KT-Split branches, remainder, KH-Refine), the result and the optional reweighting. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/thinning/thin_impl.h"
#include "comm/dist_impl.h"
#include "comm/tree_impl.h"
#include "la/la_impl.h"

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
  plan->refine_group_rows = (kd_lidx)tp.refine_group_rows;
  plan->leaf_split = (int)tp.leaf_split;
  plan->halve_group = (int)tp.halve_group;
  plan->tight = tp.threshold == KD_THIN_THRESHOLD_TIGHT;
  plan->adaptive = tp.threshold == KD_THIN_THRESHOLD_ADAPTIVE;
  plan->pairing_local = tp.pairing == KD_THIN_PAIRING_LOCAL;
  plan->progress = 1;
cleanup:
  return err;
}

kd_err kd_thin_plan_check(kd_thin_plan *pl, kd_gidx n, int log) {
  kd_err err = KD_OK;
  const kd_gidx n_out = pl->n_out;
  KD_CHECK_KEY(n_out >= 1, KD_ERR_CONFIG, "algorithm.n_out", "algorithm.n_out = %lld: must be >= 1",
               (long long)n_out);
  KD_CHECK_KEY(n_out <= n, KD_ERR_CONFIG, "algorithm.n_out",
               "algorithm.n_out = %lld exceeds the %lld input points", (long long)n_out,
               (long long)n);
  /* GS-Halve has no threshold (GS algorithms declare no delta) */
  KD_CHECK_KEY(KD_HALVE_RULE(pl->kind) == KD_HALVE_GS || (pl->delta > 0 && pl->delta < 1),
               KD_ERR_CONFIG, "algorithm.delta",
               "algorithm.delta = %g: must lie strictly between 0 and 1", pl->delta);
  if (pl->compress && pl->g < 0) { /* automatic: 4, or the largest g with 4^(g+1) <= n_in */
    int K0 = 0;
    while (((kd_gidx)1 << (2 * (K0 + 1))) <= n) K0++;
    pl->g = K0 - 1 < 4 ? (K0 > 0 ? K0 - 1 : 0) : 4;
    if (log && pl->g < 4)
      kd_log_info("algorithm.g: %d for n_in = %lld (4 needs 4^5 = 1024 input rows)", pl->g,
                  (long long)n);
  }
  if (pl->compress) {
    kd_thin_tree t;
    kd_thin_tree_init(&t, n, 0, pl);
    KD_CHECK_KEY(pl->g >= 0 && t.K > pl->g, KD_ERR_CONFIG, "algorithm.g",
                 "algorithm.g = %d too large for n_in = %lld: Compress needs 4^(g+1) <= n_in "
                 "(g <= %d)",
                 pl->g, (long long)n, t.K - 1);
    KD_CHECK_KEY(t.F << (pl->g + t.K) >= n_out, KD_ERR_CONFIG, "algorithm.n_out",
                 "algorithm.n_out = %lld exceeds the Compress output %lld (= %lld * 2^(g+%d)); "
                 "raise algorithm.g",
                 (long long)n_out, (long long)(t.F << (pl->g + t.K)), (long long)t.F, t.K);
  }
cleanup:
  return err;
}

kd_err kd_thin_plan_make(const kd_params *p, const kd_thin_variant *v, kd_gidx n,
                         kd_thin_plan *plan) {
  kd_err err = kd_thin_plan_from_params(p, plan);
  if (err) return err;
  plan->kind = v->kind;
  plan->compress = v->compress;
  if (v->refine) plan->refine = 1; /* else as the key `refine` says (when declared) */
  if (v->half) plan->n_out = n / 2;
  return KD_OK;
}

kd_err kd_thin_run_variant(const kd_algo_in *in, const kd_thin_variant *v, kd_result *out) {
  kd_err err = KD_OK;
  kd_thin_plan plan;
  KD_TRY(kd_thin_plan_make(in->params, v, kd_pointset_n_global(in->points), &plan));
  KD_TRY(kd_thin_run(in, &plan, out));
cleanup:
  return err;
}

kd_err kd_thin_check_variant(const kd_params *p, const kd_algo_shape *s, const kd_thin_variant *v) {
  kd_err err = KD_OK;
  kd_thin_plan plan;
  KD_TRY(kd_thin_plan_make(p, v, s->n_in, &plan));
  KD_TRY(kd_thin_plan_check(&plan, s->n_in, 0));
cleanup:
  return err;
}

/* A node's output is a kd_dist_block of packed rows [gidx, x_1..x_d] (n = rows * (d+1)). */

/* coords of packed rows into X */
static void kd_unpack_(const double *P, kd_lidx cnt, int d, double *X) {
  for (kd_lidx i = 0; i < cnt; i++) memcpy(X + i * d, P + i * (d + 1) + 1, sizeof(double) * d);
}

/* Halve a packed set of cnt rows with the plan's rule: cnt even; out gets cnt/2 rows. team: the
 * ranks that halve it together (kd_thin_halve_team; collective over them), or NULL (Local). */
static kd_err kd_pk_halve_(kd_kernel *k, const kd_thin_plan *pl, const double *in, kd_lidx cnt,
                           int d, double delta, uint64_t seed, uint64_t stream, kd_thin_team *team,
                           kd_dist_block *out) {
  kd_err err = KD_OK, lerr = KD_OK;
  const int w = d + 1;
  double *X = malloc(sizeof(double) * (size_t)(cnt * d + 1));
  kd_lidx *keep = malloc(sizeof(kd_lidx) * (size_t)(cnt / 2 + 1));
  if (!X || !keep)
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                      "thin: cannot allocate a halving of %lld rows", (long long)cnt);
  if (team) KD_TRY(kd_dist_agreed(team->comm, lerr));
  KD_TRY(lerr);
  kd_unpack_(in, cnt, d, X);
  KD_TRY(kd_thin_halve_team(k, pl->kind, X, cnt, d, delta, seed, stream, team, keep));
  out->v = malloc(sizeof(double) * (size_t)((cnt / 2) * w + 1));
  lerr = out->v ? KD_OK
                : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "thin: cannot allocate %lld rows",
                             (long long)(cnt / 2));
  if (team) KD_TRY(kd_dist_agreed(team->comm, lerr)); /* the team goes on together or stops */
  KD_TRY(lerr);
  out->n = (cnt / 2) * w;
  for (kd_lidx i = 0; i < cnt / 2; i++)
    memcpy(out->v + i * w, in + keep[i] * w, sizeof(double) * w);
cleanup:
  free(X);
  free(keep);
  return err;
}

/* Leaf bin: s packed rows -> remainder rule -> B rows -> Compress of height h (or pass through). */
static kd_err kd_leaf_(kd_kernel *k, const kd_thin_plan *pl, const double *X, kd_gidx g0, kd_lidx s,
                       kd_lidx B, int h, int d, double delta_rem, double den, uint64_t seed,
                       uint64_t bin, double dsign, kd_dist_block *out) {
  kd_err err = KD_OK;
  double *R = NULL;
  kd_lidx *keep = NULL, *o = NULL;
  const int w = d + 1;
  KD_ALLOC(keep, s);
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
  KD_ALLOC(out->v, no * w);
  out->n = no * w;
  for (kd_lidx i = 0; i < no; i++) { /* packed [global row, x] */
    out->v[i * w] = (double)(g0 + keep[o[i]]);
    memcpy(out->v + i * w + 1, X + keep[o[i]] * d, sizeof(double) * d);
  }
cleanup:
  free(R);
  free(keep);
  free(o);
  return err;
}

/* kd_leaf_ for generated (lazy) rows and a Compress plan: the bin's s rows are never held at once.
 * The remainder rule halves the generated tail (its last 2e rows), then Compress runs on rows
 * generated 4^(g+1) at a time (kd_thin_compress_node_src): bitwise kd_leaf_'s output, in
 * O(e d + 2^(g+h) d) memory instead of O(s d). */
static kd_err kd_leaf_lazy_(kd_kernel *k, const kd_thin_plan *pl, const kd_pointset *ps, kd_gidx g0,
                            kd_lidx s, kd_lidx B, int h, int d, double delta_rem, double den,
                            uint64_t seed, uint64_t bin, double dsign, kd_dist_block *out) {
  kd_err err = KD_OK;
  double *T = NULL, *ox = NULL;
  kd_lidx *kk = NULL, *o = NULL;
  const int w = d + 1;
  const kd_lidx e = s - B, nf = B - e;
  KD_CHECK(e >= 0 && 2 * e <= s, KD_ERR_INTERNAL, "remainder: bin of %lld rows for %lld slots",
           (long long)s, (long long)B);
  KD_ALLOC(T, 2 * e * d + 1);
  KD_ALLOC(kk, e + 1);
  if (e > 0) {
    KD_TRY(kd_pointset_rows_at(ps, g0 + nf, 2 * e, T));
    KD_TRY(kd_thin_remainder_halve(k, pl->kind, T, e, d, delta_rem, seed, bin, kk));
  }
  const kd_thin_bin_rows lb = {ps, g0, nf, T, kk, d};
  const kd_thin_rows src = {kd_thin_bin_rows_get, (void *)&lb};
  kd_lidx no = 0;
  KD_ALLOC(o, B);
  KD_ALLOC(ox, B * d);
  KD_TRY(kd_thin_compress_node_src(k, pl->kind, &src, 0, d, h, pl->g + 1, pl->g, dsign * pl->delta,
                                   den, seed, bin, o, ox, &no));
  KD_ALLOC(out->v, no * w);
  out->n = no * w;
  for (kd_lidx i = 0; i < no; i++) { /* packed [global row, x], rows as kd_leaf_ numbers them */
    out->v[i * w] = (double)(g0 + (o[i] < nf ? o[i] : nf + kk[o[i] - nf]));
    memcpy(out->v + i * w + 1, ox + i * d, sizeof(double) * d);
  }
cleanup:
  free(T);
  free(ox);
  free(kk);
  free(o);
  return err;
}

/* sum over j of (sel x sel kernel) and z: MMD^2 - zz of the uniform coreset sel[m] of C. */
static kd_err kd_mmd2_rel_(kd_kernel *k, const double *C, int d, const double *zc,
                           const kd_lidx *sel, kd_lidx m, double *v) {
  kd_err err = KD_OK;
  double *S = NULL, *Ks = NULL;
  const kd_lidx R = 256; /* rows of K(S, S) per block: O(m) memory, the same sum order */
  KD_ALLOC(S, m * d);
  KD_ALLOC(Ks, R * m);
  double zs = 0.0, ks = 0.0;
  for (kd_lidx i = 0; i < m; i++) {
    memcpy(S + i * d, C + sel[i] * d, sizeof(double) * d);
    zs += zc[sel[i]];
  }
  for (kd_lidx a0 = 0; a0 < m; a0 += R) {
    const kd_lidx nr = m - a0 < R ? m - a0 : R;
    KD_TRY(kd_kernel_eval_block(k, S + a0 * d, nr, S, m, Ks, m));
    for (kd_lidx i = 0; i < nr * m; i++) ks += Ks[i];
  }
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
                            const kd_dist_block *nodes, kd_gidx n_nodes, const double *cout,
                            double t0) {
  kd_err err = KD_OK;
  double *buf = NULL;
  const int w = t->d + 1;
  int write = 0;
  KD_TRY(kd_thin_ckpt_agree(in, t, s, lerr, &write));
  kd_thin_progress(t, s);
  if (write) {
    kd_lidx tot = 0;
    for (kd_gidx c = 0; c < n_nodes; c++) tot += nodes[c].n / w;
    buf = malloc(sizeof(double) * (size_t)(tot * w + 1));
    KD_TRY(kd_dist_agreed(
        in->comm, buf ? KD_OK
                      : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                   "checkpoint: cannot allocate %lld rows", (long long)tot)));
    tot = 0;
    for (kd_gidx c = 0; c < n_nodes; c++) {
      memcpy(buf + tot * w, nodes[c].v, sizeof(double) * (size_t)nodes[c].n);
      tot += nodes[c].n / w;
    }
    KD_TRY(kd_thin_ckpt_save(in, t, s, write == 2, buf, tot, cout, t0));
  }
cleanup:
  free(buf);
  return err;
}

/* ---------------- the driver state and its phases ---------------- */

typedef struct {
  const kd_algo_in *in;
  kd_thin_plan pl; /* resolved: KHA for threshold adaptive, KD_HALVE_LOCAL for pairing local */
  kd_kernel *k;
  MPI_Comm comm;
  int rank, d, w;
  kd_gidx n, n_out;
  kd_thin_tree tr;
  double t0, den, dsign, delta_rem;
  uint64_t seed, ev0, ev_skip; /* ev_skip: evaluations another rank also made (not counted) */
  kd_gidx *bstart;             /* [nb + 1] first global row of each leaf bin */
  kd_dist_tree *tree;          /* arity 4 over the leaf bins (NULL for a direct plan) */
  /* this rank's nodes at tree level `level` (height hl + level) */
  int level;
  kd_dist_block *nodes;
  kd_gidx n_nodes;
  /* resume: the step of the checkpoint (-1: none), its rows and Compress output (borrowed) */
  int s0, r0;
  const double *rrows, *rcout;
  /* the set at the root: rows (root.v on rank 0, then on every rank after the broadcast) */
  kd_dist_block root;
  kd_lidx root_rows;
  double *Rall; /* refine_target compress: the Compress output (rank 0) */
  int nsteps;
  double dstep;
  /* the last steps: candidates C[nc*d], z at them, the selection sel[m] into C */
  kd_lidx nc, m;
  double *C, *zc;
  kd_lidx *sel, *keep;
  kd_thin_team team; /* every rank: the halvings at the root and the last steps run together */
} kd_thin_drv_;

/* A lazy leaf bin of kd_thin_leaves_, as the job kd_leaf_sample_run runs. */
typedef struct {
  const kd_thin_drv_ *D;
  const kd_pointset *ps;
  kd_gidx g0, j;
  kd_lidx s, B;
  kd_dist_block *out;
} kd_leaf_job_;

static kd_err kd_leaf_job_run_(void *arg) {
  const kd_leaf_job_ *b = arg;
  const kd_thin_drv_ *D = b->D;
  return kd_leaf_lazy_(D->k, &D->pl, b->ps, b->g0, b->s, b->B, D->tr.hl, D->d, D->delta_rem, D->den,
                       D->seed, (uint64_t)b->j, D->dsign, b->out);
}

/* The placeholder of a leaf bin that a timing-only run skipped (kd_leaf_sample_run): its first
 * rows, as many as Compress keeps of it (2^(g+h) of the 4^h, all of them when h <= g), packed as
 * kd_leaf_lazy_ packs its output. Local. */
static kd_err kd_leaf_placeholder_(const kd_leaf_job_ *b) {
  kd_err err = KD_OK;
  const int d = b->D->d, w = d + 1, h = b->D->tr.hl, g = b->D->pl.g;
  const kd_lidx no = kd_thin_node_out(h, g);
  double *x = NULL;
  KD_ALLOC(x, no * d);
  KD_TRY(kd_pointset_rows_at(b->ps, b->g0, no, x));
  KD_ALLOC(b->out->v, no * w);
  b->out->n = no * w;
  for (kd_lidx i = 0; i < no; i++) {
    b->out->v[i * w] = (double)(b->g0 + i);
    memcpy(b->out->v + i * w + 1, x + i * d, sizeof(double) * d);
  }
cleanup:
  free(x);
  return err;
}

/* The evaluations since e0 were made by every rank alike: counted on rank 0 only. Local. */
static void kd_thin_redundant_(kd_thin_drv_ *D, uint64_t e0) {
  if (D->rank != 0) D->ev_skip += kd_kernel_evals(D->k) - e0;
}

static void kd_thin_drv_free_(kd_thin_drv_ *D) {
  for (kd_gidx c = 0; D->nodes && c < D->n_nodes; c++) kd_dist_block_free(&D->nodes[c]);
  free(D->nodes);
  kd_dist_block_free(&D->root);
  kd_dist_tree_destroy(&D->tree);
  kd_thin_team_free(&D->team);
  free(D->bstart);
  free(D->Rall);
  free(D->C);
  free(D->zc);
  free(D->sel);
  free(D->keep);
}

/* Replace the nodes held here by nn empty ones. Local. */
static kd_err kd_thin_nodes_reset_(kd_thin_drv_ *D, kd_gidx nn) {
  kd_err err = KD_OK;
  for (kd_gidx c = 0; D->nodes && c < D->n_nodes; c++) kd_dist_block_free(&D->nodes[c]);
  free(D->nodes);
  D->nodes = calloc((size_t)(nn > 0 ? nn : 1), sizeof *D->nodes);
  D->n_nodes = D->nodes ? nn : 0;
  KD_CHECK(D->nodes, KD_ERR_MEM, "thin: cannot allocate %lld nodes", (long long)nn);
cleanup:
  return err;
}

/* Set-up: the resolved plan, the checks every rank makes identically, the tree geometry, the
 * threshold scalings. Collective (kd_pointset_validate). */
static kd_err kd_thin_setup_(kd_thin_drv_ *D, const kd_algo_in *in, const kd_thin_plan *plan) {
  kd_err err = KD_OK;
  kd_thin_plan *pl = &D->pl;
  const kd_pointset *ps = in->points;
  D->in = in;
  D->pl = *plan;
  /* threshold: adaptive turns every KH round into KD_HALVE_KHA */
  if (pl->adaptive && !pl->tight && pl->kind == KD_HALVE_KH) pl->kind = KD_HALVE_KHA;
  D->comm = in->comm;
  D->k = in->kernel;
  D->rank = kd_dist_rank(D->comm);
  D->team =
      (kd_thin_team){D->comm,         D->rank, kd_dist_size(D->comm), 0, pl->refine_group_rows,
                     pl->halve_group, 0,       MPI_COMM_NULL};
  D->t0 = kd_dist_wtime();
  D->n = kd_pointset_n_global(ps);
  D->d = kd_pointset_dim(ps);
  D->w = D->d + 1;
  D->seed = in->seed;
  D->ev0 = kd_kernel_evals(D->k);
  D->s0 = -1;
  D->n_out = pl->n_out;
  const kd_gidx n = D->n;
  KD_TRY(kd_thin_plan_check(pl, n, 1));
  KD_CHECK(kd_kernel_dim(D->k) == D->d, KD_ERR_ARG, "kernel dimension %d != data dimension %d",
           kd_kernel_dim(D->k), D->d);
  kd_thin_tree_init(&D->tr, n, D->d, pl);
  const int K = D->tr.K;
  const kd_gidx F = D->tr.F;
  KD_TRY(kd_pointset_validate(ps, "data"));
  D->den = pl->compress ? (double)(F << (2 * K)) * pow(4.0, pl->g + 1) * (K - pl->g) : 1;
  /* a negative delta tells kd_thin_halve to use the tight KH threshold */
  D->dsign = (pl->tight && pl->kind == KD_HALVE_KH) ? -1.0 : 1.0;
  /* pairing: local - every halving below pairs close points (halve.c) */
  if (pl->pairing_local) pl->kind = (kd_halve_kind)((int)pl->kind | KD_HALVE_LOCAL);
  D->delta_rem = D->dsign * pl->delta * 0.5 / (double)D->tr.nb;
cleanup:
  return err;
}

/* The leaf bins (global row ranges) and the tree of ranks over them: the owner of a bin is the
 * owner of its first row. Collective (creates the tree). */
static kd_err kd_thin_place_(kd_thin_drv_ *D) {
  kd_err err = KD_OK;
  int64_t *lstart = NULL;
  const kd_pointset *ps = D->in->points;
  const int size = kd_dist_size(D->comm);
  const kd_gidx nb = D->tr.nb, n = D->n; /* nb <= 192 */
  KD_ALLOC(D->bstart, nb + 1);
  for (kd_gidx j = 0; j <= nb; j++) D->bstart[j] = j * (n / nb) + (j * (n % nb)) / nb;
  KD_ALLOC(lstart, size + 1);
  for (int r = 0; r <= size; r++) lstart[r] = 0;
  for (kd_gidx j = 0; j < nb; j++)
    for (int r = kd_pointset_owner(ps, D->bstart[j]) + 1; r <= size; r++) lstart[r]++;
  KD_TRY(kd_dist_tree_create(D->comm, 4, nb, lstart, &D->tree));
cleanup:
  free(lstart);
  return err;
}

/* Validate a checkpoint against this tree and the data. Collective. */
static kd_err kd_thin_resume_(kd_thin_drv_ *D) {
  kd_err err = KD_OK;
  const kd_thin_tree *tr = &D->tr;
  KD_TRY(kd_thin_ckpt_restore(D->in, tr, &D->s0, &D->rrows, &D->rcout));
  KD_TRY(kd_thin_ckpt_check_data(
      D->in, D->rrows, kd_thin_tree_nodes(tr, D->s0) * kd_thin_tree_node_rows(tr, D->s0)));
  kd_log_info("thin: resuming after step %d of %d", D->s0, tr->K + tr->rounds);
cleanup:
  return err;
}

/* The resumed state as the nodes held here: after a merge level, the nodes of that level this rank
 * owns; after rank-0 round s0 - K, the whole set on rank 0. Local. */
static kd_err kd_thin_resume_nodes_(kd_thin_drv_ *D) {
  kd_err err = KD_OK;
  const kd_thin_tree *tr = &D->tr;
  const int w = D->w;
  const kd_gidx cnt = kd_thin_tree_node_rows(tr, D->s0);
  if (D->s0 > tr->K) {
    D->r0 = D->s0 - tr->K;
    if (D->rank == 0) {
      KD_ALLOC(D->root.v, cnt * w);
      D->root.n = cnt * w;
      D->root_rows = cnt;
      memcpy(D->root.v, D->rrows, sizeof(double) * (size_t)(cnt * w));
    }
    goto cleanup;
  }
  int64_t lo, hi;
  D->level = D->s0 - tr->hl;
  kd_dist_tree_range(D->tree, D->level, &lo, &hi);
  KD_TRY(kd_thin_nodes_reset_(D, hi - lo));
  for (kd_gidx c = lo; c < hi; c++) {
    kd_dist_block *b = &D->nodes[c - lo];
    KD_ALLOC(b->v, cnt * w);
    b->n = cnt * w;
    memcpy(b->v, D->rrows + c * cnt * w, sizeof(double) * (size_t)(cnt * w));
  }
cleanup:
  return err;
}

/* This rank's rows packed [gidx, x_1..x_d] into *buf (nl * w + 1 doubles). Local. */
static kd_err kd_thin_pack_local_(const kd_thin_drv_ *D, double **buf) {
  kd_err err = KD_OK;
  const kd_pointset *ps = D->in->points;
  const kd_gidx off = kd_pointset_offset(ps), nl = kd_pointset_n_local(ps);
  const double *rows = kd_pointset_rows_const(ps);
  const int d = D->d, w = D->w;
  KD_ALLOC(*buf, nl * w + 1);
  for (kd_lidx i = 0; i < nl; i++) {
    (*buf)[i * w] = (double)(off + i);
    memcpy(*buf + i * w + 1, rows + i * d, sizeof(double) * d);
  }
cleanup:
  return err;
}

/* n_out > F 4^K (only plain halving with n_out > n_in / 2): the remainder rule at the bins would
 * leave fewer than n_out rows, so all rows go to rank 0 and the root step maps n_in -> n_out.
 * Collective. */
static kd_err kd_thin_direct_(kd_thin_drv_ *D) {
  kd_err err = KD_OK;
  double *buf = NULL;
  const kd_lidx nl = kd_pointset_n_local(D->in->points);
  KD_CHECK_KEY(!kd_pointset_is_lazy(D->in->points), KD_ERR_CONFIG, "algorithm.n_out",
               "algorithm.n_out = %lld: above half the input, all rows go to one rank, which lazy "
               "(generated) data does not allow; lower n_out or set data.lazy: false",
               (long long)D->pl.n_out);
  KD_TRY(kd_thin_pack_local_(D, &buf));
  KD_ALLOC(D->root.v, D->n * D->w + 1);
  D->root.n = D->n * D->w;
  D->root_rows = D->n;
  KD_TRY(kd_dist_gatherv(D->comm, buf, nl * D->w, D->root.v, 0));
cleanup:
  free(buf);
  return err;
}

/* The leaf bins [lo, hi) of this rank through kd_thin_leaves_split (split depth j; bins: the
 * collected stored bins, kd_dist_bins_collect). Collective. */
static kd_err kd_thin_leaves_split_(kd_thin_drv_ *D, int j, int64_t lo, int64_t hi,
                                    const int *owner, const kd_dist_block *bins) {
  kd_err err = KD_OK;
  const double **bx = NULL;
  const kd_pointset *ps = D->in->points;
  const double *rows = kd_pointset_rows_const(ps);
  const kd_gidx off = kd_pointset_offset(ps);
  const int lazy = kd_pointset_is_lazy(ps);
  KD_ALLOC_AGREED(D->comm, bx, hi - lo + 1);
  for (int64_t b = lo; b < hi && !lazy; b++)
    bx[b - lo] = bins[b].v ? bins[b].v : rows + (D->bstart[b] - off) * D->d;
  const kd_leaf_split L = {D->k,
                           &D->pl,
                           D->comm,
                           D->rank,
                           kd_dist_size(D->comm),
                           D->d,
                           D->tr.hl,
                           j,
                           lazy,
                           D->tr.nb,
                           lo,
                           hi,
                           D->bstart,
                           owner,
                           bx,
                           ps,
                           (kd_lidx)1 << (2 * D->tr.hl),
                           D->delta_rem,
                           D->den,
                           D->dsign,
                           D->seed};
  KD_TRY(kd_thin_leaves_split(&L, D->nodes, &D->ev_skip));
cleanup:
  free(bx);
  return err;
}

/* Phases A and B: every leaf bin collects its rows on its owner (kd_dist_bins_collect), then the
 * remainder rule and the local Compress of the bin; safe point h_leaf. Collective. */
static kd_err kd_thin_leaves_(kd_thin_drv_ *D) {
  kd_err err = KD_OK, lerr = KD_OK;
  int64_t *offs = NULL, lo, hi;
  int *owner = NULL;
  kd_dist_block *bins = NULL;
  const kd_thin_tree *tr = &D->tr;
  const int size = kd_dist_size(D->comm);
  const kd_gidx nb = tr->nb, B = (kd_gidx)1 << (2 * tr->hl);
  KD_ALLOC(offs, size + 1);
  for (int r = 0; r <= size; r++) offs[r] = kd_pointset_rank_offset(D->in->points, r);
  KD_ALLOC(owner, nb);
  for (kd_gidx j = 0; j < nb; j++) owner[j] = kd_dist_tree_owner(D->tree, 0, j);
  KD_ALLOC(bins, nb);
  /* the bins' rows straight from the point set (no packed copy of the input: a bin's global rows
   * are bstart[j] ...): a bin inside this rank's block is read in place, only a bin that straddles
   * a rank boundary is copied (and freed once compressed) */
  const kd_pointset *ps = D->in->points;
  const double *rows = kd_pointset_rows_const(ps);
  const kd_gidx off = kd_pointset_offset(ps);
  const int lazy = kd_pointset_is_lazy(ps);
  if (!lazy) KD_TRY(kd_dist_bins_collect(D->comm, offs, rows, D->d, nb, D->bstart, owner, 1, bins));
  kd_dist_tree_range(D->tree, 0, &lo, &hi);
  D->level = 0;
  lerr = kd_thin_nodes_reset_(D, hi - lo);
  const int split =
      D->pl.compress ? kd_thin_leaf_split_depth(D->pl.leaf_split, nb, size, tr->hl, D->pl.g) : 0;
  if (split > 0) { /* more ranks than bins: every bin from its descendants on several ranks */
    KD_TRY(kd_dist_agreed(D->comm, lerr));
    KD_TRY(kd_thin_leaves_split_(D, split, lo, hi, owner, bins));
    hi = lo; /* done */
  }
  /* after a local error (e.g. GS-Halve on duplicate rows) the other bins are skipped; agreed below
   */
  for (kd_gidx j = lo; j < hi && lerr == KD_OK; j++) {
    const kd_gidx g0 = D->bstart[j], s = D->bstart[j + 1] - g0;
    if (lazy && D->pl.compress) { /* generated rows, a few 4^(g+1) at a time */
      const kd_leaf_job_ job = {D, ps, g0, j, (kd_lidx)s, B, &D->nodes[j - lo]};
      if (!kd_leaf_sample_run(kd_leaf_job_run_, (void *)&job, &lerr) && lerr == KD_OK)
        lerr = kd_leaf_placeholder_(&job);
      continue;
    }
    if (lazy) { /* generated rows: one bin at a time, never the rank's whole share */
      bins[j].v = malloc(sizeof(double) * (size_t)(s * D->d + 1));
      bins[j].n = s * D->d;
      lerr = bins[j].v ? kd_pointset_rows_at(ps, g0, (kd_lidx)s, bins[j].v)
                       : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                    "thin: cannot allocate leaf bin %lld of %lld rows",
                                    (long long)j, (long long)s);
      if (lerr) break;
    }
    const double *X = bins[j].v ? bins[j].v : rows + (g0 - off) * D->d;
    lerr = kd_leaf_(D->k, &D->pl, X, D->bstart[j], D->bstart[j + 1] - D->bstart[j], B, tr->hl, D->d,
                    D->delta_rem, D->den, D->seed, (uint64_t)j, D->dsign, &D->nodes[j - lo]);
    kd_dist_block_free(&bins[j]);
  }
  KD_TRY(kd_tree_step_(D->in, tr, tr->hl, lerr, D->nodes, D->n_nodes, NULL, D->t0));
cleanup:
  for (kd_gidx j = 0; bins && j < nb; j++) kd_dist_block_free(&bins[j]);
  free(bins);
  free(offs);
  free(owner);
  return err;
}

/* One parent of merge level h: its 4 children kids[4] concatenated, halved when Compress is past
 * the oversampling height, else passed up. Local. */
static kd_err kd_thin_merge_node_(const kd_thin_drv_ *D, int h, kd_gidx q, kd_dist_block *kids,
                                  kd_dist_block *out) {
  kd_err err = KD_OK;
  kd_dist_block cat = {0, NULL};
  const kd_thin_plan *pl = &D->pl;
  kd_lidx tot = 0;
  for (int c = 0; c < 4; c++) tot += kids[c].n;
  KD_ALLOC(cat.v, tot + 1);
  for (int c = 0; c < 4; c++) {
    if (kids[c].n > 0) memcpy(cat.v + cat.n, kids[c].v, sizeof(double) * (size_t)kids[c].n);
    cat.n += kids[c].n;
  }
  tot /= D->w; /* rows */
  if (pl->compress && h > pl->g) {
    double dl = pl->delta * (double)tot * (double)tot / D->den;
    if (dl >= 1.0) dl = 0.999999;
    KD_TRY(kd_pk_halve_(D->k, pl, cat.v, tot, D->d, D->dsign * dl, D->seed, KD_THIN_STREAM(q, h),
                        NULL, out));
  } else {
    *out = cat;
    cat = (kd_dist_block){0, NULL};
  }
cleanup:
  kd_dist_block_free(&cat);
  return err;
}

/* The roots (merge level K) of a Compress run on several ranks: every rank gets all their
 * children (gathered to rank 0, broadcast) and all ranks halve each root together
 * (kd_thin_halve_team), so that no rank waits while one halves the largest sets of the run; the
 * owner of a root keeps it in up[q - plo]. The rows kd_thin_merge_node_ gives. Collective. */
static kd_err kd_thin_merge_roots_(kd_thin_drv_ *D, int h, int64_t plo, int64_t phi,
                                   kd_dist_block *up) {
  kd_err err = KD_OK, lerr = KD_OK;
  double *all = NULL;
  int64_t na = 0;
  const kd_gidx F = D->tr.F;
  lerr = kd_dist_tree_gather(D->tree, D->level, D->nodes, 0, &all, &na);
  if (lerr == KD_OK && D->rank != 0 && !(all = malloc(sizeof(double) * (size_t)(na + 1))))
    lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "tree merge: cannot allocate %lld values",
                      (long long)na);
  KD_TRY(kd_dist_agreed(D->comm, lerr));
  KD_TRY(kd_dist_bcast(D->comm, all, (int64_t)sizeof(double) * na, 0));
  const kd_lidx rows = na / D->w / F; /* every root: 4 children of equal size */
  KD_CHECK(rows * D->w * F == na && rows % 2 == 0, KD_ERR_INTERNAL,
           "tree merge: %lld values for %lld roots", (long long)na, (long long)F);
  double dl = D->pl.delta * (double)rows * (double)rows / D->den;
  if (dl >= 1.0) dl = 0.999999;
  for (kd_gidx q = 0; q < F; q++) {
    kd_dist_block b = {0, NULL};
    KD_TRY(kd_pk_halve_(D->k, &D->pl, all + q * rows * D->w, rows, D->d, D->dsign * dl, D->seed,
                        KD_THIN_STREAM(q, h), &D->team, &b));
    if (q >= plo && q < phi)
      up[q - plo] = b;
    else
      kd_dist_block_free(&b);
  }
cleanup:
  free(all);
  return err;
}

/* Phase C, merge level h (h_leaf < h <= K): the children move to their parent's owner
 * (kd_dist_tree_up), which merges them (the roots of a Compress run on several ranks: all ranks,
 * kd_thin_merge_roots_); safe point h. Collective. */
static kd_err kd_thin_merge_(kd_thin_drv_ *D, int h) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_dist_block *kids = NULL, *up = NULL;
  int64_t plo, phi;
  kd_dist_tree_range(D->tree, D->level + 1, &plo, &phi);
  const kd_gidx np = phi - plo;
  const int together = D->pl.compress && h > D->pl.g && h == D->tr.K && kd_dist_size(D->comm) > 1;
  kids = calloc((size_t)(4 * np + 1), sizeof *kids);
  up = calloc((size_t)(np + 1), sizeof *up);
  KD_TRY(kd_dist_agreed(D->comm, kids && up ? KD_OK
                                            : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                                         "tree merge: cannot allocate")));
  if (together) {
    lerr = kd_thin_merge_roots_(D, h, plo, phi, up);
  } else {
    lerr = kd_dist_tree_up(D->tree, D->level, D->nodes, kids);
    for (kd_gidx q = plo; q < phi && lerr == KD_OK; q++)
      lerr = kd_thin_merge_node_(D, h, q, kids + 4 * (q - plo), &up[q - plo]);
  }
  /* (after a local error the new nodes are partly empty: freed with the driver) */
  for (kd_gidx c = 0; together && c < D->n_nodes; c++) kd_dist_block_free(&D->nodes[c]);
  free(D->nodes);
  D->nodes = up;
  D->n_nodes = np;
  D->level++;
  up = NULL;
  KD_TRY(kd_tree_step_(D->in, &D->tr, h, lerr, D->nodes, D->n_nodes, NULL, D->t0));
cleanup:
  for (kd_gidx c = 0; kids && c < 4 * np; c++) kd_dist_block_free(&kids[c]);
  free(kids);
  free(up);
  return err;
}

/* Phase D: the F tree outputs to rank 0 in logical order. Collective. */
static kd_err kd_thin_gather_root_(kd_thin_drv_ *D) {
  kd_err err = KD_OK;
  double *all = NULL;
  int64_t na = 0;
  KD_TRY(kd_dist_tree_gather(D->tree, D->level, D->nodes, 0, &all, &na));
  D->root.v = all;
  D->root.n = D->rank == 0 ? na : 0;
  D->root_rows = na / D->w;
  KD_TRY(kd_thin_nodes_reset_(D, 0));
cleanup:
  return err;
}

/* The set at the root (rank 0) to every rank, with the local error *lerr agreed first (so the
 * ranks go on together or all stop). Collective. */
static kd_err kd_thin_share_root_(kd_thin_drv_ *D, kd_err *lerr) {
  kd_err err = KD_OK;
  int64_t nr = D->root_rows;
  KD_TRY(kd_dist_agreed(D->comm, *lerr));
  KD_TRY(kd_dist_bcast(D->comm, &nr, sizeof nr, 0));
  if (D->rank != 0) {
    kd_dist_block_free(&D->root);
    D->root.v = malloc(sizeof(double) * (size_t)(nr * D->w + 1));
    D->root.n = nr * D->w;
    D->root_rows = nr;
  }
  KD_TRY(kd_dist_agreed(
      D->comm, D->root.v ? KD_OK
                         : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                      "thin: cannot allocate %lld root rows", (long long)nr)));
  KD_TRY(kd_dist_bcast(D->comm, D->root.v, (int64_t)sizeof(double) * nr * D->w, 0));
cleanup:
  return err;
}

/* Phase E on rank 0: the halving rounds while L >= 2^(pool+1) n_out, each one a safe point
 * (steps K+1..K+rounds of thin_ckpt.c). Also fixes the per-step delta of all remaining steps and,
 * for refine_target compress, keeps the Compress output. Collective. */
static kd_err kd_thin_root_rounds_(kd_thin_drv_ *D) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_dist_block tmp = {0, NULL};
  const kd_thin_plan *pl = &D->pl;
  const kd_thin_tree *tr = &D->tr;
  const int K = tr->K, d = D->d;
  const kd_lidx L0 = tr->L0;     /* rows gathered to rank 0 (unless resumed after a round) */
  const int rounds = tr->rounds; /* while L >= 2^(pool+1) n_out */
  KD_CHECK(D->r0 > 0 || D->root_rows == L0, KD_ERR_INTERNAL,
           "thin: %lld rows at the root, expected %lld", (long long)D->root_rows, (long long)L0);
  {
    kd_lidx Ls = L0 >> rounds;
    D->nsteps = rounds;
    while (Ls >= 2 * D->n_out) {
      Ls /= 2;
      D->nsteps++;
    }
    if (Ls > D->n_out) D->nsteps++;
  }
  D->dstep = D->dsign * pl->delta / (D->nsteps > 0 ? D->nsteps : 1);
  if (D->rank == 0 && pl->refine && pl->refine_target == 1) {
    D->Rall = malloc(sizeof(double) * (size_t)(L0 * d + 1));
    if (!D->Rall)
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "refine: cannot allocate");
    else if (D->r0 > 0)
      memcpy(D->Rall, D->rcout, sizeof(double) * (size_t)(L0 * d));
    else
      kd_unpack_(D->root.v, L0, d, D->Rall);
  }
  /* several ranks: all of them halve together (kd_thin_halve_team), each holding the set */
  const int together = D->team.size > 1;
  if (together && D->r0 < rounds) KD_TRY(kd_thin_share_root_(D, &lerr));
  for (int rr = D->r0; rr < rounds; rr++) {
    if (together || (D->rank == 0 && lerr == KD_OK)) {
      lerr = kd_pk_halve_(D->k, pl, D->root.v, D->root_rows, d, D->dstep, D->seed,
                          KD_THIN_STREAM(0, KD_THIN_LEVEL_FINAL + rr), together ? &D->team : NULL,
                          &tmp);
      kd_dist_block_free(&D->root);
      D->root = tmp;
      D->root_rows = tmp.n / D->w;
      tmp = (kd_dist_block){0, NULL};
    }
    KD_TRY(
        kd_tree_step_(D->in, tr, K + rr + 1, lerr, &D->root, D->rank == 0 ? 1 : 0, D->Rall, D->t0));
  }
  if (D->r0 >= rounds) { /* no round ran here: agree the allocation above */
    KD_TRY(kd_dist_agree(D->comm, &lerr));
    KD_TRY(lerr);
  }
cleanup:
  kd_dist_block_free(&tmp);
  return err;
}

/* Broadcast the candidates of the last steps (n_out <= nc < 2^(pool+1) n_out) and set up the
 * selection over them. Collective. */
static kd_err kd_thin_candidates_(kd_thin_drv_ *D) {
  kd_err err = KD_OK;
  const int w = D->w;
  int64_t nc = D->root_rows;
  KD_TRY(kd_dist_bcast(D->comm, &nc, sizeof nc, 0));
  if (D->rank != 0) {
    kd_dist_block_free(&D->root);
    KD_ALLOC(D->root.v, nc * w);
    D->root.n = nc * w;
    D->root_rows = nc;
  }
  KD_TRY(kd_dist_bcast(D->comm, D->root.v, (int64_t)sizeof(double) * nc * w, 0));
  /* the last steps run on every rank: their halvings and KH-Refine shared (D->team), the rest
   * alike on every rank and counted once (kd_thin_redundant_) */
  D->nc = nc;
  KD_ALLOC(D->C, nc * D->d);
  kd_unpack_(D->root.v, nc, D->d, D->C);
  KD_ALLOC(D->sel, nc);
  KD_ALLOC(D->keep, nc);
  D->m = nc;
  for (kd_lidx i = 0; i < nc; i++) D->sel[i] = i;
cleanup:
  return err;
}

/* z at the candidates for KH-Refine: over the Compress output (uniform weights; the candidates
 * shared over the ranks by rows) or over P_in (distributed ring). Neither is redundant: counted
 * on every rank. Collective. */
static kd_err kd_thin_embed_(kd_thin_drv_ *D) {
  kd_err err = KD_OK, lerr = KD_OK;
  double *part = NULL;
  const kd_lidx nc = D->nc, L0 = D->tr.L0;
  KD_ALLOC(D->zc, nc);
  if (D->pl.refine_target == 1) {
    /* the Compress output (rank 0) to every rank, the candidates' rows shared over the ranks */
    const int size = kd_dist_size(D->comm);
    kd_lidx lo, hi;
    kd_thin_row_share(nc, D->rank, size, &lo, &hi);
    if (D->rank != 0) D->Rall = malloc(sizeof(double) * (size_t)(L0 * D->d + 1));
    part = malloc(sizeof(double) * (size_t)(hi - lo + 1));
    KD_TRY(kd_dist_agreed(D->comm, D->Rall && part ? KD_OK
                                                   : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                                                                "refine: cannot allocate")));
    if (size > 1) KD_TRY(kd_dist_bcast(D->comm, D->Rall, (int64_t)sizeof(double) * L0 * D->d, 0));
    lerr = kd_kernel_matvec(D->k, D->C + lo * D->d, hi - lo, D->Rall, L0, NULL, 0.0, part);
    for (kd_lidx i = 0; i < hi - lo; i++) part[i] /= (double)L0;
    KD_TRY(kd_dist_agreed(D->comm, lerr));
    KD_TRY(kd_dist_allgatherv(D->comm, part, hi - lo, D->zc));
  } else {
    KD_TRY(kd_target_embed_rows(D->in->target, D->C, nc, D->zc));
  }
cleanup:
  free(part);
  return err;
}

/* The selections of the last steps, KT-Split style (Dwivedi & Mackey 2024, Alg. 1a): with refine,
 * both halves of every round are kept (branch 2b = the KH output S1 of branch b, 2b+1 = its
 * complement S2), so the last rounds yield up to 2^pool coresets; the best against P_in is
 * refined (KT-Swap). Branch 0 is exactly the plain KH chain. */
typedef struct {
  kd_lidx *br, *nbr; /* [nc] each: branch bi = br[bi * st ..], current / next */
  double *Cs;        /* [nc * d] scratch rows */
  kd_lidx st;        /* stride of the branches in br: their size at the start of the round; every
                        round at least halves it and at most doubles nbch, so nbch * st <= nc */
  int nbch, maxb;
} kd_thin_branches_;

static void kd_thin_branches_free_(kd_thin_branches_ *b) {
  free(b->br);
  free(b->nbr);
  free(b->Cs);
}

/* One halving round rr of every branch (odd counts first take the remainder rule to m - 1; n_in <
 * 4, or F odd with n_out = 1); splits the branches while there is room. Local. */
static kd_err kd_thin_split_round_(kd_thin_drv_ *D, kd_thin_branches_ *b, int rr) {
  kd_err err = KD_OK;
  const int d = D->d, split = 2 * b->nbch <= b->maxb;
  const kd_lidx ns = (D->m - D->m % 2) / 2; /* every branch's size after this round */
  kd_lidx mm = D->m, *keep = D->keep;
  for (int bi = 0; bi < b->nbch; bi++) {
    kd_lidx *sb = b->br + (size_t)bi * b->st;
    mm = D->m;
    if (mm % 2 == 1) { /* (every rank: agreed before the next halving, which is collective) */
      const uint64_t e0 = kd_kernel_evals(D->k);
      for (kd_lidx i = 0; i < mm; i++) memcpy(b->Cs + i * d, D->C + sb[i] * d, sizeof(double) * d);
      KD_TRY(kd_dist_agreed(D->comm,
                            kd_thin_absorb_remainder(
                                D->k, D->pl.kind, b->Cs, mm, mm - 1, d, D->dstep, D->seed,
                                (uint64_t)D->tr.nb + 9 + (uint64_t)rr * 64 + (uint64_t)bi, keep)));
      kd_thin_redundant_(D, e0);
      for (kd_lidx i = 0; i < mm - 1; i++) keep[i] = sb[keep[i]];
      for (kd_lidx i = 0; i < mm - 1; i++) sb[i] = keep[i];
      mm -= 1;
    }
    for (kd_lidx i = 0; i < mm; i++) memcpy(b->Cs + i * d, D->C + sb[i] * d, sizeof(double) * d);
    KD_TRY(kd_thin_halve_team(D->k, D->pl.kind, b->Cs, mm, d, D->dstep, D->seed,
                              KD_THIN_STREAM(bi, KD_THIN_LEVEL_FINAL + rr), &D->team, keep));
    kd_lidx *o1 = b->nbr + (size_t)(split ? 2 * bi : bi) * ns;
    for (kd_lidx i = 0; i < mm / 2; i++) o1[i] = sb[keep[i]];
    if (split) {
      kd_lidx *o2 = b->nbr + (size_t)(2 * bi + 1) * ns;
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
  if (split) b->nbch *= 2;
  kd_lidx *t = b->br;
  b->br = b->nbr;
  b->nbr = t;
  b->st = ns;
  D->m = mm / 2;
cleanup:
  return err;
}

/* The remainder step of every branch: m in (n_out, 2 n_out) -> n_out. Local. */
static kd_err kd_thin_branch_remainder_(kd_thin_drv_ *D, kd_thin_branches_ *b) {
  kd_err err = KD_OK;
  const int d = D->d;
  const kd_lidx m = D->m, n_out = D->n_out;
  kd_lidx *keep = D->keep;
  for (int bi = 0; bi < b->nbch && m > n_out; bi++) {
    kd_lidx *sb = b->br + (size_t)bi * b->st;
    const uint64_t e0 = kd_kernel_evals(D->k);
    for (kd_lidx i = 0; i < m; i++) memcpy(b->Cs + i * d, D->C + sb[i] * d, sizeof(double) * d);
    /* every rank alike; agreed so that a lone failure leaves no rank in KH-Refine's collectives */
    KD_TRY(kd_dist_agreed(
        D->comm, kd_thin_absorb_remainder(D->k, D->pl.kind, b->Cs, m, n_out, d, D->dstep, D->seed,
                                          (uint64_t)D->tr.nb + 7 + (uint64_t)bi * 64, keep)));
    kd_thin_redundant_(D, e0);
    for (kd_lidx i = 0; i < n_out; i++) keep[i] = sb[keep[i]];
    for (kd_lidx i = 0; i < n_out; i++) sb[i] = keep[i];
  }
  if (D->m > n_out) D->m = n_out;
cleanup:
  return err;
}

/* KH-Refine's metrics into out. Local. */
static kd_err kd_thin_refine_metrics_(kd_result *out, int nbch, kd_lidx swaps, double before,
                                      double after, int target) {
  kd_err err = KD_OK;
  KD_TRY(kd_result_set_count(out, "refine_branches", (int64_t)nbch));
  KD_TRY(kd_result_set_count(out, "refine_swaps", (int64_t)swaps));
  KD_TRY(kd_result_set_metric(out, "refine_mmd2_before_minus_self", before));
  KD_TRY(kd_result_set_metric(out, "refine_mmd2_after_minus_self", after));
  /* the measure the two values above refer to: 0 = P_in, 1 = the Compress output */
  KD_TRY(kd_result_set_count(out, "refine_target_compress", (int64_t)target));
cleanup:
  return err;
}

/* KH-Refine of the best branch against z (ties: lowest branch), with its metrics. Collective. */
static kd_err kd_thin_refine_best_(kd_thin_drv_ *D, const kd_thin_branches_ *b, kd_result *out) {
  kd_err err = KD_OK, lerr = KD_OK;
  double *v = NULL;
  const int d = D->d;
  int best = 0;
  double bestv = 0.0, before = 0.0, after = 0.0;
  kd_lidx swaps = 0;
  /* each branch's value on one rank (branch bi on rank bi mod size), then summed: one term is
   * not zero, so every rank gets its bits */
  KD_ALLOC_AGREED(D->comm, v, b->nbch);
  for (int bi = D->rank; bi < b->nbch && lerr == KD_OK; bi += D->team.size)
    lerr = kd_mmd2_rel_(D->k, D->C, d, D->zc, b->br + (size_t)bi * b->st, D->m, &v[bi]);
  KD_TRY(kd_dist_agreed(D->comm, lerr));
  KD_TRY(kd_dist_sum(D->comm, v, b->nbch));
  for (int bi = 0; bi < b->nbch; bi++) {
    if (bi == 0) before = v[bi];
    if (bi == 0 || v[bi] < bestv) {
      bestv = v[bi];
      best = bi;
    }
  }
  for (kd_lidx i = 0; i < D->m; i++) D->sel[i] = b->br[(size_t)best * b->st + i];
  KD_TRY(kd_thin_refine_team(D->k, D->C, D->nc, d, D->zc, D->sel, D->m, D->pl.refine_passes,
                             &D->team, &swaps));
  const uint64_t e0 = kd_kernel_evals(D->k);
  lerr = kd_mmd2_rel_(D->k, D->C, d, D->zc, D->sel, D->m, &after);
  kd_thin_redundant_(D, e0);
  if (lerr == KD_OK)
    lerr = kd_thin_refine_metrics_(out, b->nbch, swaps, before, after, D->pl.refine_target);
  KD_TRY(kd_dist_agreed(D->comm, lerr)); /* before the result's collectives */
cleanup:
  free(v);
  return err;
}

/* The last steps on every rank: the halving rounds after the root rounds (the input of the last
 * `pool` of them is the KH-Refine candidate set), the remainder step, KH-Refine; the halvings and
 * KH-Refine shared over the ranks. Collective. */
static kd_err kd_thin_last_steps_(kd_thin_drv_ *D, kd_result *out) {
  kd_err err = KD_OK;
  const int pool = D->pl.refine && D->pl.refine_pool > 1 ? D->pl.refine_pool : 1;
  const kd_lidx nc = D->nc;
  kd_thin_branches_ b = {NULL, NULL, NULL, nc, 1, D->pl.refine ? (1 << pool) : 1};
  KD_ALLOC_AGREED(D->comm, b.br, nc);
  KD_ALLOC_AGREED(D->comm, b.nbr, nc);
  for (kd_lidx i = 0; i < nc; i++) b.br[i] = i;
  KD_ALLOC_AGREED(D->comm, b.Cs, nc * D->d);
  for (int rr = D->tr.rounds; D->m >= 2 * D->n_out; rr++) KD_TRY(kd_thin_split_round_(D, &b, rr));
  KD_TRY(kd_thin_branch_remainder_(D, &b));
  if (D->pl.refine)
    KD_TRY(kd_thin_refine_best_(D, &b, out));
  else
    for (kd_lidx i = 0; i < D->m; i++) D->sel[i] = b.br[i];
cleanup:
  kd_thin_branches_free_(&b);
  return err;
}

/* Phase F: the selected rows as the result (uniform weights), kernel evaluations summed over the
 * ranks (those of the redundant last steps counted once). Collective. */
static kd_err kd_thin_result_(kd_thin_drv_ *D, kd_result *out) {
  kd_err err = KD_OK;
  const int d = D->d, w = D->w;
  const kd_lidx m = D->m;
  KD_TRY(kd_dist_agreed(D->comm, kd_result_alloc(out, m, d)));
  for (kd_lidx i = 0; i < m; i++) {
    out->indices[i] = (int64_t)D->root.v[D->sel[i] * w];
    memcpy(out->points + i * d, D->C + D->sel[i] * d, sizeof(double) * d);
  }
  uint64_t ev = kd_kernel_evals(D->k) - D->ev0 - D->ev_skip - D->team.skip;
  out->seconds = kd_dist_wtime() - D->t0;
  KD_TRY(kd_dist_sum_u64(D->comm, &ev, 1));
  out->kernel_evals = ev;
  out->mmd = NAN; /* the task layer fills it (kd_mmd) unless reweighting needs it here */
cleanup:
  return err;
}

/* reweight: convex - the output weights re-optimised over the simplex against P_in
 * (kd_simplex_qp), with the MMD of both weightings. Collective. */
static kd_err kd_thin_reweight_(kd_thin_drv_ *D, kd_result *out) {
  kd_err err = KD_OK, lerr = KD_OK;
  double *Q = NULL, *zs = NULL, *wq = NULL;
  const kd_lidx m = D->m;
  kd_mmd_info info;
  /* the local steps' errors are agreed before the next collective (kd_target_embed_rows,
   * kd_mmd_eval) */
  KD_TRY(kd_mmd_eval(D->in->target, out->points, out->weights, m, &info));
  lerr = kd_result_set_metric(out, "mmd_uniform_weights", info.mmd);
  if (lerr == KD_OK)
    lerr = kd_result_set_metric(out, "mmd2_minus_self_uniform_weights", info.mmd2_minus_self);
  KD_TRY(kd_dist_agreed(D->comm, lerr));
  KD_ALLOC_AGREED(D->comm, Q, m * m);
  KD_ALLOC_AGREED(D->comm, zs, m);
  KD_ALLOC_AGREED(D->comm, wq, m);
  KD_TRY(kd_dist_agreed(D->comm, kd_kernel_eval_block(D->k, out->points, m, out->points, m, Q, m)));
  KD_TRY(kd_target_embed_rows(D->in->target, out->points, m, zs));
  for (kd_lidx i = 0; i < m; i++) wq[i] = 1.0 / (double)m;
  /* the same inputs on every rank: the same outcome; agreed all the same */
  KD_TRY(kd_dist_agreed(D->comm, kd_simplex_qp((int)m, Q, zs, 1e-12, 10000, wq)));
  double s = 0.0;
  for (kd_lidx i = 0; i < m; i++) s += wq[i] > 0 ? wq[i] : 0.0;
  KD_CHECK(s > 0, KD_ERR_NUMERIC, "reweight: QP returned zero weights"); /* alike on all ranks */
  for (kd_lidx i = 0; i < m; i++) out->weights[i] = (wq[i] > 0 ? wq[i] : 0.0) / s;
  KD_TRY(kd_mmd_eval(D->in->target, out->points, out->weights, m, &info));
  KD_TRY(kd_dist_agreed(D->comm, kd_result_set_metric(out, "mmd_convex_weights", info.mmd)));
  out->mmd = info.mmd;
cleanup:
  free(Q);
  free(zs);
  free(wq);
  return err;
}

/* The tree part (phases A-D): leaf bins or the resumed level, the merge levels, the gather to
 * rank 0. Collective. */
static kd_err kd_thin_tree_phases_(kd_thin_drv_ *D) {
  kd_err err = KD_OK;
  if (D->s0 >= 0)
    KD_TRY(kd_thin_resume_nodes_(D));
  else
    KD_TRY(kd_thin_leaves_(D));
  for (int h = D->tr.hl + D->level + 1; h <= D->tr.K; h++) KD_TRY(kd_thin_merge_(D, h));
  KD_TRY(kd_thin_gather_root_(D));
cleanup:
  return err;
}

kd_err kd_thin_run(const kd_algo_in *in, const kd_thin_plan *plan, kd_result *out) {
  kd_err err = KD_OK;
  kd_thin_drv_ D;
  memset(&D, 0, sizeof D);
  D.pl.progress = plan->progress;
  KD_TRY(kd_thin_setup_(&D, in, plan));
  const kd_thin_tree *tr = &D.tr;
  if (!tr->direct) KD_TRY(kd_thin_place_(&D));
  if (kd_ckpt_resume(in->ckpt)) KD_TRY(kd_thin_resume_(&D));
  if (D.pl.progress)
    kd_log_set_total_from(tr->direct ? 0 : tr->K + tr->rounds, kd_ckpt_resume(in->ckpt) ? D.s0 : 0);
  if (tr->direct)
    KD_TRY(kd_thin_direct_(&D));
  else if (D.s0 > tr->K)
    KD_TRY(kd_thin_resume_nodes_(&D)); /* rank 0 holds the set, the tree is done */
  else
    KD_TRY(kd_thin_tree_phases_(&D));
  KD_TRY(kd_thin_root_rounds_(&D));
  KD_TRY(kd_thin_candidates_(&D));
  if (D.pl.refine) KD_TRY(kd_thin_embed_(&D));
  KD_TRY(kd_thin_last_steps_(&D, out));
  KD_TRY(kd_thin_result_(&D, out));
  if (D.pl.reweight) KD_TRY(kd_thin_reweight_(&D, out));
  KD_TRY(kd_result_set_count(out, "n_in", (int64_t)D.n));
  KD_TRY(kd_result_set_count(out, "compress_output", (int64_t)D.nc));
cleanup:
  if (D.pl.progress) kd_log_set_total(0);
  kd_thin_drv_free_(&D);
  return err;
}
