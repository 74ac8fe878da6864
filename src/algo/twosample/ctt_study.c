/* ctt_study.c - level / power / time studies of Compress Then Test (paper 003, Sec. 6, Fig. 2):
 * T seeded replicates of two generator samples, each tested on one rank (a one-rank communicator
 * split off comm) by CTT at every requested g, by the exact permutation test, by the
 * baselines of Fig. 2 (subsample_test at each n_out, wblock at each block size), by lrctt at each
 * r and by actt at each g, on the same data. Replicate t runs on rank t mod p; its data seeds are
 * kd_rng_u64(seed, STUDY, 3t) (X) and
 * (.., 3t+1) (Y), its test seed (.., 3t+2), so the table does not depend on the rank count
 * (wall times aside). Per-replicate rows are summed over ranks (each row non-zero on one rank).
 * Checkpointing (the kd_ckpt given to kd_ctt_study_run, docs/checkpoint.md): the replicates run in
 * rounds of p (replicates done0 + j p + rank, done0 = replicates finished before a --resume); after
 * every `every` rounds, or once an interrupt was agreed over ranks at a round boundary, the
 * finished prefix of replicates is written through the kd_ckpt as /state/{reject, p_value,
 * statistic, seconds} [done * n_conf] in global order and metric "iteration" = done. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/twosample/ctt_impl.h"
#include "comm/dist_impl.h"
#include "kdistill/author/kd_ckpt.h"

extern const kd_algo_desc kd_algo_ctt, kd_algo_ctt_exact, kd_algo_subsample_test, kd_algo_wblock,
    kd_algo_actt;

/* The parameters of algorithm desc at their defaults (its spec table states them once). Local. */
static kd_err kd_study_defaults_(const kd_algo_desc *desc, kd_ctt_params *out) {
  kd_err err = KD_OK;
  kd_params p = {0};
  memset(out, 0, sizeof *out);
  KD_TRY(kd_params_defaults(desc->params, desc->n_params, &p));
  KD_TRY(kd_params_fill(&p, out));
cleanup:
  kd_params_free(&p);
  return err;
}

void kd_ctt_study_free(kd_ctt_study_out *o) {
  if (!o) return;
  free(o->g);
  free(o->method);
  free(o->size);
  free(o->rejections);
  free(o->rate);
  free(o->se);
  free(o->mean_seconds);
  free(o->reject);
  free(o->p_value);
  free(o->statistic);
  free(o->seconds);
  memset(o, 0, sizeof *o);
}

/* The checkpoint state: rows [0, done) = the resumed prefix (replicated) then rows [done0, done)
 * summed over ranks, written through ck. Collective. */
static kd_err kd_study_ckpt_(MPI_Comm comm, const kd_ctt_study_out *o, int64_t done0, int64_t done,
                             double seconds, kd_ckpt *ck) {
  kd_err err = KD_OK;
  const int64_t nc = o->n_conf, n = done * nc, n0 = done0 * nc;
  int64_t *rj = NULL;
  double *pv = NULL, *sta = NULL, *sec = NULL;
  KD_ALLOC(rj, n ? n : 1);
  KD_ALLOC(pv, n ? n : 1);
  KD_ALLOC(sta, n ? n : 1);
  KD_ALLOC(sec, n ? n : 1);
  memcpy(rj, o->reject, (size_t)n * sizeof *rj);
  memcpy(pv, o->p_value, (size_t)n * sizeof *pv);
  memcpy(sta, o->statistic, (size_t)n * sizeof *sta);
  memcpy(sec, o->seconds, (size_t)n * sizeof *sec);
  if (n > n0) {
    KD_TRY(kd_dist_sum_i64(comm, rj + n0, (int)(n - n0)));
    KD_TRY(kd_dist_sum(comm, pv + n0, (int)(n - n0)));
    KD_TRY(kd_dist_sum(comm, sta + n0, (int)(n - n0)));
    KD_TRY(kd_dist_sum(comm, sec + n0, (int)(n - n0)));
  }
  const int64_t dims[1] = {n};
  kd_ckpt_put_i64(ck, "/state/reject", 1, dims, rj);
  kd_ckpt_put_f64(ck, "/state/p_value", 1, dims, pv);
  kd_ckpt_put_f64(ck, "/state/statistic", 1, dims, sta);
  kd_ckpt_put_f64(ck, "/state/seconds", 1, dims, sec);
  KD_TRY(kd_ckpt_commit(ck, done, seconds, 0));
cleanup:
  free(rj);
  free(pv);
  free(sta);
  free(sec);
  return err;
}

/* Restore the finished prefix from the resume state; *done0 = its length. A p-value is in [0, 1],
 * or NaN for actt's configurations (a decision only). Local (replicated). */
static kd_err kd_study_restore_(const kd_ckpt *ck, kd_ctt_study_out *o, int64_t *done0) {
  kd_err err = KD_OK;
  const int64_t nc = o->n_conf;
  const int64_t *rj;
  const double *pv, *sta, *sec;
  int64_t dims[1] = {-1};
  KD_TRY(kd_ckpt_get_i64(ck, "/state/reject", 1, dims, &rj));
  KD_CHECK(dims[0] % nc == 0 && dims[0] / nc <= o->T, KD_ERR_FILE,
           "checkpoint: /state/reject has %lld entries, not a multiple of %lld configurations "
           "up to %lld replicates",
           (long long)dims[0], (long long)nc, (long long)o->T);
  KD_TRY(kd_ckpt_get_f64(ck, "/state/p_value", 1, dims, &pv));
  KD_TRY(kd_ckpt_get_f64(ck, "/state/statistic", 1, dims, &sta));
  KD_TRY(kd_ckpt_get_f64(ck, "/state/seconds", 1, dims, &sec));
  const int64_t n = dims[0];
  for (int64_t i = 0; i < n; i++)
    KD_CHECK((rj[i] == 0 || rj[i] == 1) &&
                 (o->method[i % nc] == KD_STUDY_ACTT
                      ? isnan(pv[i])
                      : isfinite(pv[i]) && pv[i] >= 0.0 && pv[i] <= 1.0) &&
                 isfinite(sta[i]) && isfinite(sec[i]) && sec[i] >= 0.0,
             KD_ERR_FILE,
             "checkpoint: replicate entry %lld: reject %lld, p-value %g, statistic %g, seconds %g "
             "(expected 0/1, a p-value in [0, 1] (NaN for actt), finite values)",
             (long long)i, (long long)rj[i], pv[i], sta[i], sec[i]);
  memcpy(o->reject, rj, (size_t)n * sizeof *o->reject);
  memcpy(o->p_value, pv, (size_t)n * sizeof *o->p_value);
  memcpy(o->statistic, sta, (size_t)n * sizeof *o->statistic);
  memcpy(o->seconds, sec, (size_t)n * sizeof *o->seconds);
  *done0 = n / nc;
cleanup:
  return err;
}

/* The study's state between its phases: spec, results, the per-configuration parameters, the
 * kernel, the one-rank communicator and the checkpoint hook. */
typedef struct {
  MPI_Comm comm, self;
  int rank, p, nc;
  const kd_ctt_study_spec *sp;
  kd_ctt_study_out *o;
  kd_ctt_params pc, pe; /* ctt (g set per configuration) and ctt_exact */
  kd_ctt_params ps, pw; /* subsample_test and wblock (n_out, block set per configuration) */
  kd_ctt_params pa;     /* actt (g set per configuration) */
  kd_kernel *k;
  kd_ckpt *ck;           /* NULL: no checkpointing */
  int64_t done0, rounds; /* replicates finished before a resume, rounds run here */
  double t_start;
} kd_study_drv_;

/* The study's keys of the compressing tests (ctt, lrctt, actt): s, B, delta, alpha. Local. */
static void kd_study_compress_keys_(const kd_ctt_study_spec *sp, kd_ctt_params *p) {
  p->s = sp->s;
  p->B = sp->B;
  p->delta = sp->delta;
  p->alpha = sp->alpha;
}

/* Check the spec, allocate the results, fix the parameters of both tests, the kernel and the
 * one-rank communicator, and restore a resumed prefix. Collective (kd_dist_split). */
static kd_err kd_study_setup_(kd_study_drv_ *S) {
  kd_err err = KD_OK;
  const kd_ctt_study_spec *sp = S->sp;
  kd_ctt_study_out *o = S->o;
  const int nc = sp->n_g + (sp->exact ? 1 : 0) + sp->n_sub + sp->n_wb + sp->n_lr + sp->n_actt;
  const int64_t T = sp->T;
  KD_CHECK(nc >= 1, KD_ERR_CONFIG,
           "study: nothing to run (no g values, exact: false and no baselines)");
  KD_CHECK(T >= 1, KD_ERR_CONFIG, "study.replicates must be >= 1");
  KD_CHECK(sp->mx->d == sp->my->d, KD_ERR_CONFIG,
           "study: x has dimension %d but y has dimension %d", sp->mx->d, sp->my->d);
  S->nc = nc;
  o->n_conf = nc;
  o->T = T;
  KD_ALLOC(o->g, nc);
  KD_ALLOC(o->method, nc);
  KD_ALLOC(o->size, nc);
  KD_ALLOC(o->rejections, nc);
  KD_ALLOC(o->rate, nc);
  KD_ALLOC(o->se, nc);
  KD_ALLOC(o->mean_seconds, nc);
  KD_ALLOC(o->reject, T * nc);
  KD_ALLOC(o->p_value, T * nc);
  KD_ALLOC(o->statistic, T * nc);
  KD_ALLOC(o->seconds, T * nc);
  for (int c = 0, ce = sp->n_g + (sp->exact ? 1 : 0); c < nc; c++) {
    /* the first subsample_test, wblock, lrctt and actt configuration */
    const int cs = ce + sp->n_sub, cw = cs + sp->n_wb, cl = cw + sp->n_lr;
    o->method[c] = c < sp->n_g ? KD_STUDY_CTT
                   : c < ce    ? KD_STUDY_EXACT
                   : c < cs    ? KD_STUDY_SUBSAMPLE
                   : c < cw    ? KD_STUDY_WBLOCK
                   : c < cl    ? KD_STUDY_LRCTT
                               : KD_STUDY_ACTT;
    o->size[c] = c < sp->n_g ? sp->g_list[c]
                 : c < ce    ? 0
                 : c < cs    ? sp->n_out_list[c - ce]
                 : c < cw    ? sp->block_list[c - cs]
                 : c < cl    ? sp->r_list[c - cw]
                             : sp->actt_g_list[c - cl];
    o->g[c] = o->method[c] == KD_STUDY_CTT || o->method[c] == KD_STUDY_ACTT ? o->size[c] : -1;
  }
  KD_TRY(kd_study_defaults_(&kd_algo_ctt, &S->pc));
  KD_TRY(kd_study_defaults_(&kd_algo_ctt_exact, &S->pe));
  KD_TRY(kd_study_defaults_(&kd_algo_subsample_test, &S->ps));
  KD_TRY(kd_study_defaults_(&kd_algo_wblock, &S->pw));
  KD_TRY(kd_study_defaults_(&kd_algo_actt, &S->pa));
  if (sp->n_actt > 0) { /* the grid's keys, read (and defaulted) by the task */
    S->pa.n_ls = sp->actt_n_ls;
    S->pa.ls_ratio = sp->actt_ls_ratio;
    S->pa.B2 = sp->actt_B2;
    S->pa.B3 = sp->actt_B3;
    S->pa.compression = sp->actt_compression;
  }
  kd_study_compress_keys_(sp, &S->pa);
  S->ps.B = S->pw.B = sp->B;
  S->ps.alpha = S->pw.alpha = sp->alpha;
  if (sp->exact_tile > 0) S->ps.tile = S->pw.tile = sp->exact_tile;
  kd_study_compress_keys_(sp, &S->pc);
  S->pe.B = sp->B;
  S->pe.alpha = sp->alpha;
  if (sp->exact_tile > 0) S->pe.tile = sp->exact_tile;
  KD_TRY(kd_kernel_create(sp->kp, sp->mx->d, &S->k));
  KD_TRY(kd_dist_split(S->comm, S->rank, &S->self));
  if (kd_ckpt_resume(S->ck)) KD_TRY(kd_study_restore_(S->ck, o, &S->done0));
cleanup:
  return err;
}

/* Replicate t on this rank alone: its two samples, then every configuration on them, results in
 * row t. Local (on the one-rank communicator). */
static kd_err kd_study_replicate_(kd_study_drv_ *S, int64_t t) {
  kd_err err = KD_OK;
  const kd_ctt_study_spec *sp = S->sp;
  kd_ctt_study_out *o = S->o;
  const int nc = S->nc;
  kd_pointset *X = NULL, *Y = NULL;
  kd_result r = KD_RESULT_INIT;
  const uint64_t sx = kd_rng_u64(sp->seed, KD_CTT_STREAM_STUDY, 3 * (uint64_t)t);
  const uint64_t sy = kd_rng_u64(sp->seed, KD_CTT_STREAM_STUDY, 3 * (uint64_t)t + 1);
  const uint64_t st = kd_rng_u64(sp->seed, KD_CTT_STREAM_STUDY, 3 * (uint64_t)t + 2);
  KD_TRY(kd_pointset_generate(S->self, sp->mx, sp->m, sx, &X));
  KD_TRY(kd_pointset_generate(S->self, sp->my, sp->n, sy, &Y));
  for (int c = 0; c < nc; c++) {
    kd_ctt_in ti = {.y = Y};
    kd_algo_in in;
    memset(&in, 0, sizeof in);
    in.comm = S->self;
    in.kernel = S->k;
    in.points = X;
    in.seed = st;
    in.task_in = &ti;
    if (o->method[c] == KD_STUDY_CTT) {
      S->pc.g = o->size[c];
      KD_TRY(kd_ctt_test(&in, &S->pc, &r));
    } else if (o->method[c] == KD_STUDY_EXACT) {
      KD_TRY(kd_ctt_exact_test(&in, &S->pe, &r));
    } else if (o->method[c] == KD_STUDY_SUBSAMPLE) {
      S->ps.n_out = o->size[c];
      KD_TRY(kd_ctt_subsample_test(&in, &S->ps, &r));
    } else if (o->method[c] == KD_STUDY_WBLOCK) {
      S->pw.block = o->size[c];
      KD_TRY(kd_ctt_wblock_test(&in, &S->pw, &r));
    } else if (o->method[c] == KD_STUDY_LRCTT) { /* ctt's parameters, g = lr_g, r features */
      kd_ctt_params pl = S->pc;
      pl.g = sp->lr_g;
      pl.rank = o->size[c];
      KD_TRY(kd_ctt_test(&in, &pl, &r));
    } else {
      S->pa.g = o->size[c];
      ti.ls_list = sp->actt_ls_list;
      ti.n_ls_list = sp->n_actt_ls_list;
      ti.weights = sp->actt_weights;
      ti.n_weights = sp->n_actt_weights;
      KD_TRY(kd_ctt_actt_test(&in, &S->pa, &r));
    }
    o->reject[t * nc + c] = kd_result_find(&r, "/test/reject")->i64[0];
    o->p_value[t * nc + c] = kd_result_find(&r, "/test/p_value")->f64[0];
    o->statistic[t * nc + c] = kd_result_find(&r, "/test/statistic")->f64[0];
    o->seconds[t * nc + c] = r.seconds;
    kd_result_free(&r);
  }
cleanup:
  kd_result_free(&r);
  kd_pointset_destroy(&X);
  kd_pointset_destroy(&Y);
  return err;
}

/* After a round ending at replicate `done` (< T): the interrupt flag agreed at the round boundary
 * (every rank checkpoints or none), then a checkpoint every `every` rounds or when interrupted
 * (then KD_ERR_INTERRUPTED). Collective. */
static kd_err kd_study_safe_point_(kd_study_drv_ *S, int64_t done) {
  kd_err err = KD_OK;
  int due = 0;
  KD_TRY(kd_ckpt_due(S->ck, S->rounds, &due));
  if (due) {
    double el = kd_dist_wtime() - S->t_start;
    KD_TRY(kd_dist_max(S->comm, &el, 1));
    KD_TRY(
        kd_study_ckpt_(S->comm, S->o, S->done0, done, el + kd_ckpt_resume_seconds(S->ck), S->ck));
    KD_CHECK(!kd_ckpt_interrupted(S->ck), KD_ERR_INTERRUPTED,
             "study interrupted after %lld replicates", (long long)done);
  }
cleanup:
  return err;
}

/* The replicates in rounds of p: replicate base + rank of each round, agreed, progress, and the
 * round's safe point. Collective. */
static kd_err kd_study_rounds_(kd_study_drv_ *S) {
  kd_err err = KD_OK;
  const int64_t T = S->sp->T, p = S->p;
  S->t_start = kd_dist_wtime();
  /* progress lines: replicates finished, with an ETA from the replicates run in this process */
  kd_log_set_total_from(T, S->done0);
  for (int64_t base = S->done0; base < T; base += p) {
    const int64_t t = base + S->rank, done = base + p < T ? base + p : T;
    /* the last round may have fewer replicates than ranks */
    KD_TRY(kd_dist_agreed(S->comm, t < T ? kd_study_replicate_(S, t) : KD_OK));
    S->rounds++;
    kd_log_progress("ctt_study", done, NAN, done, base + p >= T);
    if (kd_ckpt_on(S->ck) && base + p < T) KD_TRY(kd_study_safe_point_(S, base + p));
  }
cleanup:
  return err;
}

/* The replicates run here summed over ranks (each row non-zero on one rank), then the rates.
 * Collective. */
static kd_err kd_study_finish_(kd_study_drv_ *S) {
  kd_err err = KD_OK;
  kd_ctt_study_out *o = S->o;
  const int nc = S->nc;
  const int64_t T = S->sp->T;
  if (S->done0 < T) {
    const int64_t n0 = S->done0 * nc, nr = (T - S->done0) * nc;
    KD_TRY(kd_dist_sum_i64(S->comm, o->reject + n0, (int)nr));
    KD_TRY(kd_dist_sum(S->comm, o->p_value + n0, (int)nr));
    KD_TRY(kd_dist_sum(S->comm, o->statistic + n0, (int)nr));
    KD_TRY(kd_dist_sum(S->comm, o->seconds + n0, (int)nr));
  }
  for (int c = 0; c < nc; c++) {
    int64_t rj = 0;
    double sec = 0.0;
    for (int64_t t = 0; t < T; t++) {
      rj += o->reject[t * nc + c];
      sec += o->seconds[t * nc + c];
    }
    o->rejections[c] = rj;
    o->rate[c] = (double)rj / (double)T;
    o->se[c] = sqrt(o->rate[c] * (1.0 - o->rate[c]) / (double)T);
    o->mean_seconds[c] = sec / (double)T;
  }
cleanup:
  return err;
}

kd_err kd_ctt_study_run(MPI_Comm comm, const kd_ctt_study_spec *sp, kd_ckpt *ck,
                        kd_ctt_study_out *o) {
  kd_err err = KD_OK;
  kd_study_drv_ S;
  memset(&S, 0, sizeof S);
  memset(o, 0, sizeof *o);
  S.comm = comm;
  S.self = MPI_COMM_NULL;
  S.rank = kd_dist_rank(comm);
  S.p = kd_dist_size(comm);
  S.sp = sp;
  S.o = o;
  S.ck = ck;
  KD_TRY(kd_study_setup_(&S));
  KD_TRY(kd_study_rounds_(&S));
  KD_TRY(kd_study_finish_(&S));
cleanup:
  kd_log_set_total(0);
  if (err != KD_OK) kd_ctt_study_free(o);
  kd_kernel_destroy(&S.k);
  kd_dist_comm_free(&S.self);
  return err;
}

kd_err kd_ctt_study_add_outputs(const kd_ctt_study_out *st, kd_result *r) {
  kd_err err = KD_OK;
  const int64_t d1[1] = {st->n_conf}, d2[2] = {st->T, st->n_conf};
  KD_TRY(kd_result_add_i64(r, "/study/g", 1, d1, st->g));
  KD_TRY(kd_result_add_i64(r, "/study/rejections", 1, d1, st->rejections));
  KD_TRY(kd_result_add_f64(r, "/study/rejection_rate", 1, d1, st->rate));
  KD_TRY(kd_result_add_f64(r, "/study/se", 1, d1, st->se));
  KD_TRY(kd_result_add_f64(r, "/study/mean_seconds", 1, d1, st->mean_seconds));
  KD_TRY(kd_result_add_i64(r, "/study/reject", 2, d2, st->reject));
  KD_TRY(kd_result_add_f64(r, "/study/p_value", 2, d2, st->p_value));
  KD_TRY(kd_result_add_f64(r, "/study/statistic", 2, d2, st->statistic));
  KD_TRY(kd_result_add_f64(r, "/study/seconds", 2, d2, st->seconds));
  int baselines = 0;
  for (int c = 0; c < st->n_conf; c++) baselines |= st->method[c] >= KD_STUDY_SUBSAMPLE;
  if (baselines) { /* only then: a study of CTT and the exact test keeps its datasets */
    KD_TRY(kd_result_add_i64(r, "/study/method", 1, d1, st->method));
    KD_TRY(kd_result_add_i64(r, "/study/size", 1, d1, st->size));
  }
cleanup:
  return err;
}
