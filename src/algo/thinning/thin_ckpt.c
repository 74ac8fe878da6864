/* thin_ckpt.c - checkpoint / restart of the thinning tree of driver.c (docs/thinning.md,
 * "Checkpoint and restart"). The steps of a run are the leaf level h_leaf (phase B), every merge
 * level h_leaf < h <= K (phase C) and every halving round r of rank 0 (phase E, step K + r).
 * After a step the state is the outputs of the nodes of that step in global logical order: every
 * node of a step has the same number of rows, so it does not depend on the rank count, and a
 * resumed run repeats exactly the computations of an uninterrupted one (random numbers are keyed
 * by (seed, node, level)), hence the same output bit for bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/thinning/thin_impl.h"
#include "comm/dist_impl.h"

void kd_thin_tree_init(kd_thin_tree *t, kd_gidx n, int d, const kd_thin_plan *pl) {
  memset(t, 0, sizeof *t);
  t->n = n;
  t->d = d;
  while (((kd_gidx)1 << (2 * (t->K + 1))) <= n) t->K++;
  t->F = n >> (2 * t->K);
  t->hl = t->K > 3 ? t->K - 3 : 0;
  t->nb = t->F << (2 * (t->K - t->hl));
  t->g = pl->compress ? pl->g : -1;
  t->direct = !pl->compress && pl->n_out > (t->F << (2 * t->K));
  if (t->direct)
    t->L0 = n;
  else
    t->L0 = pl->compress ? t->F << (pl->g + t->K) : t->F << (2 * t->K);
  const int pool = pl->refine && pl->refine_pool > 1 ? pl->refine_pool : 1;
  for (kd_gidx L = t->L0; pl->n_out >= 1 && L >= ((kd_gidx)2 << pool) * pl->n_out; L /= 2)
    t->rounds++;
  t->refine_c = pl->refine && pl->refine_target == 1;
  t->progress = pl->progress;
}

kd_gidx kd_thin_tree_node_rows(const kd_thin_tree *t, int s) {
  if (s > t->K) return t->L0 >> (s - t->K);
  return (t->g >= 0 && s > t->g) ? (kd_gidx)1 << (t->g + s) : (kd_gidx)1 << (2 * s);
}

kd_gidx kd_thin_tree_nodes(const kd_thin_tree *t, int s) {
  return s > t->K ? 1 : t->F << (2 * (t->K - s));
}

int kd_thin_tree_safe(const kd_thin_tree *t, int s) {
  if (t->direct || s > t->K + t->rounds) return 0;
  return t->g >= 0 ? s >= t->hl : s >= t->K;
}

void kd_thin_progress(const kd_thin_tree *t, int s) {
  if (!t->progress) return;
  kd_log_progress("thin", s, NAN,
                  (int64_t)(kd_thin_tree_nodes(t, s) * kd_thin_tree_node_rows(t, s)), 1);
}

kd_err kd_thin_ckpt_agree(const kd_algo_in *in, const kd_thin_tree *t, int s, kd_err lerr,
                          int *write) {
  kd_err err = KD_OK;
  const int on = kd_ckpt_on(in->ckpt) && kd_thin_tree_safe(t, s);
  kd_err fold = lerr == KD_OK && on && kd_ckpt_pending(in->ckpt) ? KD_ERR_INTERRUPTED : lerr;
  *write = 0;
  KD_TRY(kd_dist_agree(in->comm, &fold));
  if (fold == KD_ERR_INTERRUPTED) {
    /* some rank saw the signal: a real error of another rank (hidden behind a lower rank's
     * flag) still wins, so agree the errors once more (only on this rare path) */
    kd_err_clear();
    KD_TRY(kd_dist_agree(in->comm, &lerr));
    fold = lerr;
    if (fold == KD_OK) *write = 2;
  }
  err = fold;
  if (err == KD_OK && *write == 0 && on && kd_ckpt_every(in->ckpt) > 0 &&
      s % kd_ckpt_every(in->ckpt) == 0)
    *write = 1;
cleanup:
  return err;
}

kd_err kd_thin_ckpt_save(const kd_algo_in *in, const kd_thin_tree *t, int s, int signal,
                         const double *mine, kd_lidx nrows, const double *cout, double t0) {
  kd_err err = KD_OK, lerr = KD_OK;
  MPI_Comm comm = in->comm;
  kd_ckpt *ck = in->ckpt;
  double *all = NULL;
  int64_t *counts = NULL;
  const int root = kd_dist_rank(comm) == 0, w = t->d + 1;
  const kd_gidx nn = kd_thin_tree_nodes(t, s), cnt = kd_thin_tree_node_rows(t, s);
  const int64_t total = nn * cnt;
  int64_t got = nrows;
  uint64_t ev = kd_kernel_evals(in->kernel);
  KD_TRY(kd_dist_sum_u64(comm, &ev, 1));
  KD_TRY(kd_dist_sum_i64(comm, &got, 1));
  KD_CHECK(got == total, KD_ERR_INTERNAL, "checkpoint: %lld rows at step %d, expected %lld",
           (long long)got, s, (long long)total);
  all = malloc(sizeof(double) * (size_t)(root ? total * w + 1 : 1));
  KD_TRY(kd_dist_agreed(
      comm, all ? KD_OK
                : kd_err_set(KD_ERR_MEM, __FILE__, __LINE__,
                             "checkpoint: cannot allocate %lld rows", (long long)total)));
  KD_TRY(kd_dist_gatherv(comm, mine, (int64_t)nrows * w, all, 0));
  {
    /* local from here on (the state matters on rank 0 only): kd_ckpt_commit agrees the puts */
    const int64_t tree[6] = {t->n, t->d, t->K, t->hl, t->nb, t->g};
    const int64_t level = s, d6[1] = {6}, dn[1] = {nn}, dr[2] = {root ? total : 0, w};
    const int64_t dc[2] = {root ? t->L0 : 0, t->d};
    counts = malloc(sizeof(int64_t) * (size_t)(nn + 1));
    if (!counts)
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "checkpoint: cannot allocate the state");
    for (kd_gidx i = 0; counts && i < nn; i++) counts[i] = cnt;
    if (lerr == KD_OK) {
      kd_ckpt_put_i64(ck, "/state/level", 0, NULL, &level);
      kd_ckpt_put_i64(ck, "/state/tree", 1, d6, tree);
      kd_ckpt_put_i64(ck, "/state/node_counts", 1, dn, counts);
      lerr = kd_ckpt_put_f64(ck, "/state/rows", 2, dr, all);
    }
    if (lerr == KD_OK && t->refine_c && s > t->K)
      lerr = kd_ckpt_put_f64(ck, "/state/compress_output", 2, dc, cout);
  }
  KD_TRY(kd_dist_agreed(comm, lerr));
  kd_ckpt_set_interrupted(ck, signal);
  KD_TRY(kd_ckpt_commit(ck, s, kd_dist_wtime() - t0 + kd_ckpt_resume_seconds(ck),
                        ev + kd_ckpt_resume_evals(ck)));
  KD_CHECK(!signal, KD_ERR_INTERRUPTED, "interrupted at step %d", s);
cleanup:
  free(all);
  free(counts);
  return err;
}

kd_err kd_thin_ckpt_restore(const kd_algo_in *in, const kd_thin_tree *t, int *s,
                            const double **rows, const double **cout) {
  kd_err err = KD_OK;
  const kd_ckpt *ck = in->ckpt;
  const int64_t *lvp, *tr, *counts;
  const double *r;
  int64_t d6[1] = {6}, dn[1] = {-1}, dr[2] = {-1, -1};
  const int w = t->d + 1;
  *rows = NULL;
  *cout = NULL;
  KD_TRY(kd_ckpt_get_i64(ck, "/state/level", 0, NULL, &lvp));
  KD_TRY(kd_ckpt_get_i64(ck, "/state/tree", 1, d6, &tr));
  KD_TRY(kd_ckpt_get_i64(ck, "/state/node_counts", 1, dn, &counts));
  KD_TRY(kd_ckpt_get_f64(ck, "/state/rows", 2, dr, &r));
  KD_CHECK(tr[0] == t->n && tr[1] == t->d && tr[2] == t->K && tr[3] == t->hl && tr[4] == t->nb &&
               tr[5] == t->g,
           KD_ERR_INPUT,
           "checkpoint: written for a tree of n_in = %lld, d = %lld (K = %lld, leaf height %lld, "
           "%lld bins, g = %lld); the input and configuration give n_in = %lld, d = %d (K = %d, "
           "leaf height %d, %lld bins, g = %d)",
           (long long)tr[0], (long long)tr[1], (long long)tr[2], (long long)tr[3], (long long)tr[4],
           (long long)tr[5], (long long)t->n, t->d, t->K, t->hl, (long long)t->nb, t->g);
  KD_CHECK(!t->direct, KD_ERR_INPUT,
           "checkpoint: this plan (n_out > n_in / 2 without Compress) has no tree to resume");
  const int64_t lv = lvp[0];
  KD_CHECK(lv >= t->hl && lv <= t->K + t->rounds, KD_ERR_INPUT,
           "checkpoint: step %lld outside the steps %d..%d of this tree", (long long)lv, t->hl,
           t->K + t->rounds);
  *s = (int)lv;
  const kd_gidx nn = kd_thin_tree_nodes(t, *s), cnt = kd_thin_tree_node_rows(t, *s);
  KD_CHECK(dn[0] == nn, KD_ERR_INPUT, "checkpoint: %lld nodes at step %d, the tree has %lld",
           (long long)dn[0], *s, (long long)nn);
  for (kd_gidx i = 0; i < nn; i++)
    KD_CHECK(counts[i] == cnt, KD_ERR_INPUT,
             "checkpoint: node %lld holds %lld rows at step %d, expected %lld", (long long)i,
             (long long)counts[i], *s, (long long)cnt);
  KD_CHECK(dr[0] == nn * cnt && dr[1] == w, KD_ERR_INPUT,
           "checkpoint: /state/rows is [%lld, %lld], expected [%lld, %d]", (long long)dr[0],
           (long long)dr[1], (long long)(nn * cnt), w);
  for (int64_t i = 0; i < nn * cnt; i++) {
    const double gi = r[i * w];
    KD_CHECK(gi >= 0 && gi < (double)t->n && gi == floor(gi), KD_ERR_INPUT,
             "checkpoint: row %lld of /state/rows has global index %g, outside 0..%lld",
             (long long)i, gi, (long long)t->n - 1);
  }
  if (t->refine_c && *s > t->K) {
    int64_t dc[2] = {t->L0, t->d};
    KD_TRY(kd_ckpt_get_f64(ck, "/state/compress_output", 2, dc, cout));
  }
  *rows = r;
cleanup:
  return err;
}

kd_err kd_thin_ckpt_check_data(const kd_algo_in *in, const double *rows, kd_gidx nrows) {
  kd_err lerr = KD_OK;
  const kd_pointset *ps = in->points;
  const int d = kd_pointset_dim(ps), w = d + 1;
  const kd_gidx off = kd_pointset_offset(ps), nl = kd_pointset_n_local(ps);
  const double *X = kd_pointset_rows_const(ps);
  double *x = X ? NULL : malloc(sizeof(double) * (size_t)d); /* lazy data: rows generated again */
  if (!X && !x) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "checkpoint: out of memory");
  for (kd_gidx i = 0; i < nrows && lerr == KD_OK; i++) {
    const kd_gidx g = (kd_gidx)rows[i * w];
    if (g < off || g >= off + nl) continue;
    if (!X) lerr = kd_pointset_rows_at(ps, g, 1, x);
    if (!lerr && memcmp(rows + i * w + 1, X ? X + (g - off) * d : x, sizeof(double) * (size_t)d))
      lerr = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__,
                        "checkpoint: row %lld of /state/rows differs from input row %lld (the data "
                        "changed since the checkpoint was written?)",
                        (long long)i, (long long)g + 1);
  }
  free(x);
  return kd_dist_agreed(in->comm, lerr);
}
