/* quad_common.c - convex kernel quadrature via test functions + recombination (Hayakawa, Oberhauser
 * & Lyons): Alg. 1 (steps 1-4), Nystrom test functions u_i^T k(Z,.)/sqrt(lambda_i) of eq.
 * (10)-(11), Mercer test functions of §2.2 for the periodic Sobolev kernel on the torus, and the "+
 * opt" convex weights minimising the worst-case error (14) over the simplex.
 *
 * Layout: the N sample rows are cut into n_leaves contiguous leaves (a number fixed by N and n
 * only), leaves are split in blocks over ranks; each rank evaluates the test functions on its own
 * rows only and the recombination tree merges leaves in an order that does not depend on the rank
 * count, so the rule is the same at any rank count up to round-off. */
#include "algo/quadrature/quad_common.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/quadrature/recombination.h"
#include "kdistill/author/kd_ckpt.h"
#include "comm/dist_impl.h"
#include "la/la_dist_impl.h"
#include "la/la_impl.h"

/* random streams (seed, stream, counter) used here */
#define KD_QSTREAM_SAMPLE 0x51a1u /* derived seed of the N-point sample (generator) */
#define KD_QSTREAM_NYS 0x51a2u    /* derived seed of the Nystrom points (generator) */
#define KD_QSTREAM_KEYS 0x51a3u   /* subsampling keys of an empirical target */

/* The parameters of both algorithms, filled once from kd_quad_params by kd_params_fill. */
typedef enum { KD_QUAD_RD_WARN = 0, KD_QUAD_RD_ERROR = 1 } kd_quad_rd_mode_;     /* "warn|error" */
typedef enum { KD_QUAD_OPT_CONVEX = 0, KD_QUAD_OPT_NONE = 1 } kd_quad_opt_mode_; /* "convex|none" */
typedef struct {
  int64_t n, sample_size, nystrom_points, eig_parallel_min, block_size;
  double eig_rtol;
  int rank_deficient; /* kd_quad_rd_mode_ */
  int64_t leaves;
  int overlap;
  int opt; /* kd_quad_opt_mode_ */
  double qp_tol;
  int64_t qp_max_iter;
} kd_quad_cfg_;

kd_err kd_quad_size_keys_of(const kd_params *p, kd_quad_size_keys *out) {
  kd_err err = KD_OK;
  kd_quad_cfg_ c;
  memset(&c, 0, sizeof c);
  KD_TRY(kd_params_fill(p, &c));
  *out = (kd_quad_size_keys){c.n, c.sample_size, c.nystrom_points, c.eig_parallel_min};
cleanup:
  return err;
}

#define KD_QAT_(m) KD_PARAM_AT(kd_quad_cfg_, m)
const kd_param_spec kd_quad_params[KD_QUAD_N_PARAMS] = {
    {"n", KD_PARAM_INT, 64, NULL, 2, 1e6, NULL, "number of quadrature points", KD_QAT_(n)},
    {"sample_size", KD_PARAM_INT, 0, NULL, 0, 1e12, NULL,
     "N, size of the sample recombined (0: n^2; empirical targets: at most the data size)",
     KD_QAT_(sample_size)},
    {"nystrom_points", KD_PARAM_INT, 0, NULL, 0, 1e7, NULL,
     "l, Nystrom points (0: 10 n); nystrom_recombination only", KD_QAT_(nystrom_points)},
    {"eig_parallel_min", KD_PARAM_INT, 8192, NULL, 1, 1e9, NULL,
     "use ScaLAPACK pdsyevr when l >= this (else LAPACK dsyevr on rank 0)",
     KD_QAT_(eig_parallel_min)},
    {"block_size", KD_PARAM_INT, 64, NULL, 1, 4096, NULL, "ScaLAPACK block-cyclic block size",
     KD_QAT_(block_size)},
    {"eig_rtol", KD_PARAM_F64, 1e-12, NULL, 0, 1, NULL,
     "eigenvalues <= eig_rtol * lambda_1 are dropped (fewer test functions, with a warning)",
     KD_QAT_(eig_rtol)},
    {"rank_deficient", KD_PARAM_STR, 0, "warn", 0, 0, "warn|error",
     "what to do when W has fewer than n-1 usable eigenvalues",
     KD_PARAM_AT_INDEX(kd_quad_cfg_, rank_deficient)},
    {"leaves", KD_PARAM_INT, 0, NULL, 0, 1e6, NULL,
     "leaves of the recombination tree (0: auto, min(16, N / (8(n+1)))); >= ranks to use all "
     "ranks",
     KD_QAT_(leaves)},
    {"overlap", KD_PARAM_BOOL, 0, NULL, 0, 1, NULL,
     "LAPACK eigen path on > 1 rank: the other ranks evaluate k(Y,Z) while rank 0 solves the "
     "eigenproblem (rank 0 gets fewer leaves; same result)",
     KD_QAT_(overlap)},
    {"opt", KD_PARAM_STR, 0, "convex", 0, 0, "convex|none",
     "convex: re-optimise weights on the simplex against the target (eq. 14); none: keep",
     KD_PARAM_AT_INDEX(kd_quad_cfg_, opt)},
    {"qp_tol", KD_PARAM_F64, 1e-10, NULL, 0, 1, NULL, "KKT tolerance of the simplex QP",
     KD_QAT_(qp_tol)},
    {"qp_max_iter", KD_PARAM_INT, 10000, NULL, 1, 1e9, NULL, "iteration cap of the simplex QP",
     KD_QAT_(qp_max_iter)},
};
#undef KD_QAT_

/* ---------------- Mercer basis of the periodic Sobolev kernel ---------------- */
typedef struct {
  double lam;
  int code[8]; /* 1-D indices mapped to 0, 1, 2, ... as 0, +1, -1, +2, -2, ... */
} kd_mterm_;

static int kd_mterm_cmp_(const void *a, const void *b) {
  const kd_mterm_ *x = a, *y = b;
  if (x->lam != y->lam) return x->lam > y->lam ? -1 : 1;
  for (int j = 0; j < 8; j++)
    if (x->code[j] != y->code[j]) return x->code[j] < y->code[j] ? -1 : 1;
  return 0;
}

/* enumerate multi-indices with prod max(1,|k_j|) <= P; returns count (writes if out != NULL) */
static int64_t kd_menum_(int d, int j, int64_t prod, int64_t P, int *cur, kd_mterm_ *out, int64_t n,
                         int r) {
  if (j == d) {
    if (out) {
      kd_mterm_ *t = &out[n];
      memset(t, 0, sizeof *t);
      t->lam = pow((double)prod, -2.0 * r);
      for (int i = 0; i < d; i++) t->code[i] = cur[i] > 0 ? 2 * cur[i] - 1 : -2 * cur[i];
    }
    return 1;
  }
  int64_t c = 0;
  for (int64_t k = 0; prod * (k > 0 ? k : 1) <= P; k++) {
    for (int sg = (k == 0 ? 1 : -1); sg <= 1; sg += 2) {
      cur[j] = (int)(sg * k);
      c += kd_menum_(d, j + 1, prod * (k > 0 ? k : 1), P, cur, out, n + c, r);
    }
  }
  return c;
}

kd_err kd_quad_mercer_basis(int d, int r, int s, int *idx, double *lambda) {
  kd_err err = KD_OK;
  kd_mterm_ *t = NULL;
  int cur[8];
  KD_CHECK(d >= 1 && d <= 8, KD_ERR_UNSUPPORTED, "mercer_recombination supports d <= 8 (got %d)",
           d);
  int64_t P = 1, cnt = 0;
  while ((cnt = kd_menum_(d, 0, 1, P, cur, NULL, 0, r)) < s) P *= 2;
  KD_ALLOC(t, cnt);
  kd_menum_(d, 0, 1, P, cur, t, 0, r);
  qsort(t, (size_t)cnt, sizeof *t, kd_mterm_cmp_);
  for (int i = 0; i < s; i++) {
    lambda[i] = t[i].lam;
    for (int j = 0; j < d; j++) {
      int c = t[i].code[j];
      idx[i * d + j] = (c % 2) ? (c + 1) / 2 : -(c / 2);
    }
  }
cleanup:
  free(t);
  return err;
}

/* ---------------- Nystrom Gram fill ---------------- */
typedef struct {
  kd_kernel *k;
  const double *Z;
  int d;
} kd_gram_ctx_;

/* A[i + j*lda] = k(Z_{i0+i}, Z_{j0+j}): by symmetry this is the row-major block k(Z_J, Z_I) */
static kd_err kd_gram_fill_(void *vctx, int i0, int ni, int j0, int nj, double *A, int lda) {
  kd_gram_ctx_ *c = vctx;
  return kd_kernel_eval_block(c->k, c->Z + (size_t)j0 * c->d, nj, c->Z + (size_t)i0 * c->d, ni, A,
                              lda);
}

/* ---------------- sampling ---------------- */
static int kd_i64_cmp_(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Choose k of the M rows of ps (k < M): the k smallest keys (seed, stream, g), ties by index;
 * idx[k] ascending on every rank. Collective. */
static kd_err kd_choose_rows_(const kd_pointset *ps, uint64_t seed, uint64_t stream, int64_t k,
                              int64_t *idx) {
  kd_err err = KD_OK;
  KD_TRY(kd_pointset_choose_keyed(ps, seed, stream, k, idx));
  qsort(idx, (size_t)k, sizeof *idx, kd_i64_cmp_);
cleanup:
  return err;
}

/* Weights of the global rows idx[k] of ps (uniform 1/M if the set is unweighted), replicated. */
static kd_err kd_gather_weights_(MPI_Comm comm, const kd_pointset *ps, const int64_t *idx,
                                 int64_t k, double *w) {
  kd_err err = KD_OK;
  const double *wl = kd_pointset_weights_const(ps);
  const kd_gidx off = kd_pointset_offset(ps), M = kd_pointset_n_global(ps);
  const kd_lidx nl = kd_pointset_n_local(ps);
  for (int64_t i = 0; i < k; i++) {
    int64_t l = idx[i] - off;
    w[i] = (l >= 0 && l < nl) ? (wl ? wl[l] : 1.0 / (double)M) : 0.0;
  }
  KD_TRY(kd_dist_sum(comm, w, (int)k));
cleanup:
  return err;
}

/* ---------------- test functions on this rank's leaves ---------------- */
typedef struct {
  kd_kernel *k;
  kd_quad_kind kind;
  int d, s, m;
  int64_t ell;
  const double *Z, *U, *lambda;
  const int *midx;
  const double *Y; /* rows [row0, ...) */
  int64_t row0;
  const double *wall;
  int64_t N, n_leaves;
  const double *Kpre, *dpre; /* optional precomputed k(Y, Z) [nmine x l] and k(y, y) [nmine] */
} kd_qfeat_;

/* F = (phi_1 .. phi_s, k1,diag) with phi_t = u_t^T k(Z, .) / sqrt(lambda_t) (eq. 11) or
 * sqrt(sigma_t) e_t (Mercer), k1,diag = k(x,x) - sum_t phi_t(x)^2. Local. */
static kd_err kd_features_(const kd_qfeat_ *q, int64_t lo, int64_t hi, kd_recomb_set *leaves,
                           int64_t chunk, double *kdiag, double *Kyz, double *Phi) {
  kd_err err = KD_OK;
  kd_kernel *k = q->k;
  const int d = q->d, s = q->s, m = q->m;
  const int64_t ell = q->ell, N = q->N, n_leaves = q->n_leaves, row0 = q->row0;
  const double *Z = q->Z, *U = q->U, *lambda = q->lambda, *Y = q->Y, *wall = q->wall;
  const int *midx = q->midx;
  const kd_quad_kind kind = q->kind;
  for (int64_t leaf = lo; leaf < hi; leaf++) {
    kd_recomb_set *ls = &leaves[leaf - lo];
    const int64_t a = N * leaf / n_leaves, b = N * (leaf + 1) / n_leaves;
    KD_TRY(kd_recomb_set_alloc(ls, b - a, m));
    ls->n = b - a;
    for (int64_t c0 = a; c0 < b; c0 += chunk) {
      const int64_t cn = (b - c0) < chunk ? (b - c0) : chunk;
      const double *Yc = Y + (size_t)(c0 - row0) * d;
      KD_TRY(kd_kernel_diag(k, Yc, cn, kdiag));
      double *Fc = ls->F + (size_t)(c0 - a) * m;
      if (kind == KD_QUAD_NYSTROM) {
        KD_TRY(kd_kernel_eval_block(k, Yc, cn, Z, ell, Kyz, ell));
        if (s > 0)
          cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)cn, s, (int)ell, 1.0, Kyz,
                      (int)ell, U, s, 0.0, Phi, s);
        for (int64_t i = 0; i < cn; i++) {
          double k0 = 0;
          for (int t = 0; t < s; t++) {
            double v = Phi[i * s + t] / sqrt(lambda[t]);
            Fc[i * m + t] = v;
            k0 += v * v;
          }
          Fc[i * m + s] = kdiag[i] - k0;
        }
      } else {
        const double twopi = 2.0 * 3.14159265358979323846;
        for (int64_t i = 0; i < cn; i++) {
          const double *y = Yc + (size_t)i * d;
          double k0 = 0;
          for (int t = 0; t < s; t++) {
            double v = sqrt(lambda[t]);
            for (int j = 0; j < d; j++) {
              int kk = midx[t * d + j];
              if (kk > 0)
                v *= sqrt(2.0) * cos(twopi * kk * y[j]);
              else if (kk < 0)
                v *= sqrt(2.0) * sin(twopi * (-kk) * y[j]);
            }
            Fc[i * m + t] = v;
            k0 += v * v;
          }
          Fc[i * m + s] = kdiag[i] - k0;
        }
      }
      for (int64_t i = 0; i < cn; i++) {
        ls->gid[c0 - a + i] = c0 + i;
        ls->w[c0 - a + i] = wall[c0 - row0 + i];
      }
    }
  }
cleanup:
  return err;
}

/* ---------------- the pipeline ---------------- */
typedef struct {
  double sampling, nystrom, eigensolve, test_functions, recombination, opt;
} kd_qtimes_;

/* ---------------- checkpoint / restart (docs/quadrature.md) ----------------
 * Safe points: after the Nystrom eigen step (/state/level -1, iteration 0) and after tree level L
 * = 0 .. levels-1 (iteration L + 1); none after the root level (the output follows at once). The
 * state is in global order: the eigenpairs as solved (before the eig_rtol cut), or the nodes of the
 * tree level in node order (points, weights, test-function rows: the continuation is bitwise
 * identical at any rank count). The sample is re-drawn on resume: it is keyed by (seed, global row)
 * and costs far less than the eigenproblem and the test functions it lets the resume skip. */
#define KD_QPLAN_N 6 /* /state/plan: kind, N, n, l (0: Mercer), leaves, eig_scalapack */

typedef struct {
  const kd_algo_in *in;
  int64_t plan[KD_QPLAN_N];
  double t_start;  /* this run's start (wall clock) */
  double times[6]; /* stage times restored from the checkpoint (max over ranks) */
  int interrupted; /* agreed: a rank saw SIGTERM/SIGUSR1 */
} kd_qckpt_;

/* The tree's or the eigen step's state, written through in->ckpt. tree == NULL: the eigen step,
 * lam [s] and U [l x s] (replicated). Collective. */
static kd_err kd_quad_checkpoint_(kd_qckpt_ *q, int64_t level, const kd_qtimes_ *tm,
                                  const kd_recomb_tree_state *tree, int s, const double *lam,
                                  const double *U) {
  kd_err err = KD_OK;
  const kd_algo_in *in = q->in;
  kd_ckpt *ck = in->ckpt;
  MPI_Comm comm = in->comm;
  const int root = kd_dist_rank(comm) == 0;
  int64_t *count = NULL, *gid = NULL, total = 0;
  double *w = NULL, *F = NULL;
  uint64_t ev = kd_kernel_evals(in->kernel);
  double tv[6] = {tm->sampling,       tm->nystrom,       tm->eigensolve,
                  tm->test_functions, tm->recombination, tm->opt};
  KD_TRY(kd_dist_sum_u64(comm, &ev, 1));
  KD_TRY(kd_dist_max(comm, tv, 6));
  if (tree) KD_TRY(kd_recomb_tree_gather(tree, 0, &count, &total, &gid, &w, &F));
  {
    /* local from here on (rank 0 holds the arrays): kd_ckpt_commit agrees the puts */
    const int64_t six = 6, np = KD_QPLAN_N;
    for (int i = 0; i < 6; i++) tv[i] += q->times[i];
    kd_ckpt_put_i64(ck, "/state/level", 0, NULL, &level);
    kd_ckpt_put_i64(ck, "/state/plan", 1, &np, q->plan);
    kd_ckpt_put_f64(ck, "/state/times", 1, &six, tv);
    if (tree) {
      const int m = tree->m;
      int64_t dc[1] = {root ? tree->cnt : 0}, dn[1] = {root ? total : 0},
              dF[2] = {root ? total : 0, m};
      kd_ckpt_put_i64(ck, "/state/node_points", 1, dc, count);
      kd_ckpt_put_i64(ck, "/state/gid", 1, dn, gid);
      kd_ckpt_put_f64(ck, "/state/weights", 1, dn, w);
      kd_ckpt_put_f64(ck, "/state/features", 2, dF, F);
    } else {
      int64_t dl[1] = {root ? s : 0}, dU[2] = {root ? q->plan[3] : 0, s};
      kd_ckpt_put_f64(ck, "/state/eig_values", 1, dl, lam);
      kd_ckpt_put_f64(ck, "/state/eig_vectors", 2, dU, U);
    }
  }
  KD_TRY(kd_ckpt_commit(ck, level + 1, kd_dist_wtime() - q->t_start + kd_ckpt_resume_seconds(ck),
                        ev + kd_ckpt_resume_evals(ck)));
cleanup:
  free(count);
  free(gid);
  free(w);
  free(F);
  return err;
}

/* Is a checkpoint due at safe point `step`? The interrupt flag was agreed inside the step's own
 * reduction (kd_recomb_agree_stop, the tree steps). Local. */
static int kd_quad_due_(kd_qckpt_ *q, int64_t step) {
  kd_ckpt_set_interrupted(q->in->ckpt, q->interrupted);
  return kd_ckpt_due_agreed(q->in->ckpt, step);
}

/* Validate a checkpoint against the plan of this configuration; *level = its safe point, *m = the
 * test functions + 1 of a tree level. The state is replicated, so every rank fails alike. Local. */
static kd_err kd_quad_resume_check_(const kd_ckpt *ck, const int64_t *plan, int64_t levels,
                                    int64_t *level, int *m) {
  kd_err err = KD_OK;
  static const char *const pn[KD_QPLAN_N] = {"algorithm",        "sample size N", "n",
                                             "Nystrom points l", "tree leaves",   "eig_scalapack"};
  const int64_t *lv, *pl, *cnt, *gid;
  const double *tm, *w, *F;
  int64_t dp[1] = {KD_QPLAN_N}, dt[1] = {6};
  KD_TRY(kd_ckpt_get_i64(ck, "/state/level", 0, NULL, &lv));
  KD_TRY(kd_ckpt_get_i64(ck, "/state/plan", 1, dp, &pl));
  KD_TRY(kd_ckpt_get_f64(ck, "/state/times", 1, dt, &tm));
  for (int i = 0; i < KD_QPLAN_N - 1; i++)
    KD_CHECK(pl[i] == plan[i], KD_ERR_INPUT,
             "checkpoint: written for %s = %lld, the configuration gives %lld", pn[i],
             (long long)pl[i], (long long)plan[i]);
  const int64_t L = lv[0], N = plan[1], n = plan[2], lmin = plan[0] == KD_QUAD_NYSTROM ? -1 : 0;
  KD_CHECK(L >= lmin && L < levels, KD_ERR_INPUT,
           "checkpoint: level %lld outside the safe points [%lld, %lld] of this tree (%lld leaves)",
           (long long)L, (long long)lmin, (long long)(levels - 1), (long long)plan[4]);
  *level = L;
  *m = 0;
  if (L < 0) {
    int64_t de[1] = {n - 1}, dU[2] = {plan[3], n - 1};
    KD_TRY(kd_ckpt_get_f64(ck, "/state/eig_values", 1, de, &tm));
    for (int64_t i = 0; i < de[0]; i++)
      KD_CHECK(isfinite(tm[i]) && tm[i] > 0.0, KD_ERR_INPUT,
               "checkpoint: Nystrom eigenvalue %lld is %g (expected positive)", (long long)i,
               tm[i]);
    KD_TRY(kd_ckpt_get_f64(ck, "/state/eig_vectors", 2, dU, &tm));
    for (int64_t i = 0; i < dU[0] * dU[1]; i++)
      KD_CHECK(isfinite(tm[i]), KD_ERR_INPUT, "checkpoint: Nystrom eigenvector entry %lld is %g",
               (long long)i, tm[i]);
    goto cleanup;
  }
  int64_t dc[1] = {-1}, dg[1] = {-1}, dw[1] = {-1}, dF[2] = {-1, -1};
  KD_TRY(kd_ckpt_get_i64(ck, "/state/node_points", 1, dc, &cnt));
  KD_TRY(kd_ckpt_get_i64(ck, "/state/gid", 1, dg, &gid));
  dw[0] = dF[0] = dg[0];
  KD_TRY(kd_ckpt_get_f64(ck, "/state/weights", 1, dw, &w));
  KD_TRY(kd_ckpt_get_f64(ck, "/state/features", 2, dF, &F));
  const int64_t tot = dg[0], mm = dF[1];
  KD_CHECK(mm >= 2 && mm <= n && (plan[0] == KD_QUAD_NYSTROM || mm == n), KD_ERR_INPUT,
           "checkpoint: malformed tree state (features %lld x %lld, n = %lld)", (long long)tot,
           (long long)mm, (long long)n);
  int64_t sum = 0;
  for (int64_t j = 0; j < dc[0]; j++) sum += cnt[j];
  KD_CHECK(sum == tot, KD_ERR_INPUT, "checkpoint: the tree nodes hold %lld points, not %lld",
           (long long)sum, (long long)tot);
  double wsum = 0.0;
  for (int64_t i = 0; i < tot; i++) {
    KD_CHECK(gid[i] >= 0 && gid[i] < N && isfinite(w[i]) && w[i] >= 0, KD_ERR_INPUT,
             "checkpoint: tree point %lld: sample row %lld (of N = %lld), weight %g", (long long)i,
             (long long)gid[i], (long long)N, w[i]);
    wsum += w[i];
    for (int64_t j = 0; j < mm; j++)
      KD_CHECK(isfinite(F[i * mm + j]), KD_ERR_INPUT,
               "checkpoint: tree point %lld: test function %lld is %g", (long long)i, (long long)j,
               F[i * mm + j]);
  }
  /* recombination keeps the total mass of the sample (1): the weights are a probability vector */
  KD_CHECK(fabs(wsum - 1.0) <= 1e-9, KD_ERR_INPUT,
           "checkpoint: the tree weights sum to %.17g, not 1 (the state was altered)", wsum);
  *m = (int)mm;
cleanup:
  return err;
}

/* ---------------- the driver: phases over one state ----------------
 * kd_quad_run = setup, leaf placement, plan (and resume check), sample, test functions (eigen step
 * or Mercer basis), their values on this rank's rows, the recombination tree, the rule, + opt,
 * metrics. Every phase reads and fills the driver below and ends agreed over ranks. */
typedef struct {
  const kd_algo_in *in;
  kd_quad_kind kind;
  kd_quad_cfg_ cfg;
  MPI_Comm comm;
  int rank, size, d;
  kd_kernel *k;
  kd_target *tg;
  const kd_measure *meas;
  const kd_pointset *emp; /* the sample pool (task candidates or empirical target), or NULL */
  int64_t n, N, ell;      /* rule size, sample size, Nystrom points */
  int s;                  /* test functions phi (besides k1,diag) */
  int64_t n_leaves, levels, lo, hi, row0, nmine;
  int64_t *lstart; /* leaf placement [size + 1] */
  int lapack_path, overlap, ck;
  uint64_t seedY, seedZ;
  double *Y, *wall, *Z; /* my sample rows, their weights, the Nystrom points */
  int64_t *sel, *zsel;  /* target rows of the sample / of the Nystrom points (empirical) */
  double *lambda, *U, *Kpre, *dpre;
  int *midx;
  kd_recomb_set *leaves, rule;
  kd_recomb_tree_state tree;
  kd_qtimes_ tm;
  kd_qckpt_ q;
  int64_t rlevel; /* resumed at: -2 no resume, -1 after the eigen step, L >= 0 tree level L */
  int mstate;     /* test functions + 1 of a resumed tree level */
} kd_quad_drv_;

/* Set up the driver and fill its parameters (once). Local. */
static kd_err kd_quad_drv_init_(kd_quad_drv_ *D, const kd_algo_in *in, kd_quad_kind kind) {
  memset(D, 0, sizeof *D);
  D->in = in;
  D->kind = kind;
  D->comm = in->comm;
  D->rank = kd_dist_rank(in->comm);
  D->size = kd_dist_size(in->comm);
  D->k = in->kernel;
  D->tg = in->target;
  D->meas = kd_target_measure(in->target);
  /* the sample pool: the task's candidates if given, else an empirical target's rows; with
   * neither, rows are drawn from the target's generator */
  D->emp = in->points ? in->points : kd_target_points(in->target);
  D->d = kd_kernel_dim(in->kernel);
  D->ck = kd_ckpt_on(in->ckpt);
  D->rlevel = -2;
  D->q.in = in;
  D->q.t_start = kd_dist_wtime();
  return kd_params_fill(in->params, &D->cfg);
}

static void kd_quad_drv_free_(kd_quad_drv_ *D) {
  kd_log_set_total(0);
  kd_recomb_tree_state_free(&D->tree);
  if (D->leaves)
    for (int64_t j = 0; j < D->hi - D->lo; j++) kd_recomb_set_free(&D->leaves[j]);
  free(D->leaves);
  kd_recomb_set_free(&D->rule);
  free(D->Z);
  free(D->wall);
  free(D->Y);
  free(D->lambda);
  free(D->U);
  free(D->midx);
  free(D->sel);
  free(D->zsel);
  free(D->lstart);
  free(D->Kpre);
  free(D->dpre);
}

/* Resolve N, l and s and check what the algorithm needs of kernel, target and pool. Local. */
static kd_err kd_quad_setup_(kd_quad_drv_ *D) {
  kd_err err = KD_OK;
  const kd_pointset *emp = D->emp;
  const kd_measure *meas = D->meas;
  const int d = D->d;
  const int64_t n = D->cfg.n;
  int64_t N = D->cfg.sample_size, ell = D->cfg.nystrom_points;
  KD_CHECK(meas || emp, KD_ERR_UNSUPPORTED,
           "quadrature needs a generator target, an empirical target or a sample pool");
  KD_CHECK(!emp || kd_pointset_dim(emp) == d, KD_ERR_INPUT,
           "quadrature: the sample pool has dimension %d but the kernel %d",
           emp ? kd_pointset_dim(emp) : 0, d);
  const kd_gidx n_emp = emp ? kd_pointset_n_global(emp) : 0;
  kd_quad_sizes(n, N, ell, n_emp, &N, &ell);
  KD_TRY(kd_quad_check_sizes(D->kind, n, N, ell, D->cfg.nystrom_points > 0, n_emp));
  if (D->kind == KD_QUAD_MERCER) {
    KD_CHECK(kd_kernel_has(D->k, KD_KCAP_MERCER) && meas &&
                 (meas->type == KD_MEASURE_TORUS ||
                  (meas->type == KD_MEASURE_UNIFORM_BOX && meas->lo && meas->hi)),
             KD_ERR_UNSUPPORTED,
             "mercer_recombination needs kernel sobolev and target torus (uniform on [0,1)^d)");
    if (meas->type == KD_MEASURE_UNIFORM_BOX)
      for (int j = 0; j < d; j++)
        KD_CHECK(meas->lo[j] == 0 && meas->hi[j] == 1, KD_ERR_UNSUPPORTED,
                 "mercer_recombination needs the uniform measure on [0,1)^d");
  }
  D->n = n;
  D->N = N;
  D->ell = ell;
  D->s = (int)(n - 1);
cleanup:
  return err;
}

/* Leaf placement (distribution logistics): the merge tree depends on n_leaves only; the placement
 * only decides who computes what. With the LAPACK eigen path on > 1 rank, rank 0 is busy with the
 * eigenproblem while the others evaluate k(Y, Z) for their rows, so rank 0 gets fewer leaves: the
 * eigen solve costs about 1.5 l^2 / (c_k + 2s) rows' worth of test functions (c_k ~ 64 flops per
 * kernel value), by a flop model of dsyevr vs. kernel tile + GEMM. Local (same on every rank). */
static kd_err kd_quad_place_leaves_(kd_quad_drv_ *D) {
  kd_err err = KD_OK;
  const int64_t N = D->N, n = D->n, ell = D->ell, leaves_p = D->cfg.leaves;
  const int size = D->size;
  int64_t n_leaves = leaves_p > 0 ? leaves_p : N / (8 * (n + 1));
  if (leaves_p == 0 && n_leaves > 16) n_leaves = 16;
  if (n_leaves < 1) n_leaves = 1;
  if (n_leaves > N) n_leaves = N;
  KD_ALLOC(D->lstart, size + 1);
  int64_t *lstart = D->lstart;
  D->lapack_path = D->kind == KD_QUAD_NYSTROM && !(ell >= D->cfg.eig_parallel_min && size > 1);
  int overlap = D->cfg.overlap && D->lapack_path && size > 1 && n_leaves >= 2;
  if (overlap) {
    const double erows = 1.5 * (double)ell * (double)ell / (64.0 + 2.0 * (double)D->s);
    double rows0 = (double)N / size - erows * (size - 1) / size;
    if (rows0 < 0) rows0 = 0;
    int64_t L0 = (int64_t)floor(rows0 * (double)n_leaves / (double)N + 0.5);
    if (L0 > n_leaves / size) L0 = n_leaves / size;
    lstart[0] = 0;
    for (int r = 1; r <= size; r++) lstart[r] = L0 + (n_leaves - L0) * (r - 1) / (size - 1);
    /* memory for the precomputed tiles: the largest share x l doubles, at most 1 GiB */
    int64_t maxrows = 0;
    for (int r = 0; r < size; r++) {
      int64_t rr = N * lstart[r + 1] / n_leaves - N * lstart[r] / n_leaves;
      if (rr > maxrows) maxrows = rr;
    }
    if ((double)maxrows * (double)ell * 8.0 > 1073741824.0) overlap = 0;
  }
  if (!overlap)
    for (int r = 0; r <= size; r++) {
      int64_t a, b;
      kd_recomb_leaf_range(n_leaves, r < size ? r : size - 1, size, &a, &b);
      lstart[r] = r < size ? a : n_leaves;
    }
  D->overlap = overlap;
  D->n_leaves = n_leaves;
  D->levels = kd_recomb_tree_levels(n_leaves);
  D->lo = lstart[D->rank];
  D->hi = lstart[D->rank + 1];
  D->row0 = N * D->lo / n_leaves;
  D->nmine = N * D->hi / n_leaves - D->row0;
cleanup:
  return err;
}

/* The checkpoint plan of this configuration and, on resume, the state checked against it. Local
 * (the state is replicated). */
static kd_err kd_quad_plan_(kd_quad_drv_ *D) {
  kd_err err = KD_OK;
  const kd_algo_in *in = D->in;
  int64_t *plan = D->q.plan;
  plan[0] = D->kind;
  plan[1] = D->N;
  plan[2] = D->n;
  plan[3] = D->kind == KD_QUAD_NYSTROM ? D->ell : 0;
  plan[4] = D->n_leaves;
  plan[5] = D->kind == KD_QUAD_NYSTROM && D->ell >= D->cfg.eig_parallel_min && D->size > 1;
  if (kd_ckpt_resume(in->ckpt)) {
    const int64_t *dp;
    const double *dt;
    int64_t np[1] = {KD_QPLAN_N}, nt[1] = {6};
    KD_TRY(kd_quad_resume_check_(in->ckpt, plan, D->levels, &D->rlevel, &D->mstate));
    KD_TRY(kd_ckpt_get_i64(in->ckpt, "/state/plan", 1, np, &dp));
    KD_TRY(kd_ckpt_get_f64(in->ckpt, "/state/times", 1, nt, &dt));
    plan[KD_QPLAN_N - 1] = dp[KD_QPLAN_N - 1]; /* the path of the run that solved */
    memcpy(D->q.times, dt, sizeof D->q.times);
  }
cleanup:
  return err;
}

/* The Nystrom points Z [l x d]: drawn from the generator or chosen among the pool's rows. */
static kd_err kd_quad_nystrom_points_(kd_quad_drv_ *D, kd_err *lerr) {
  kd_err err = KD_OK;
  const int64_t ell = D->ell;
  KD_ALLOC(D->Z, (size_t)ell * D->d);
  if (!D->emp) {
    if (*lerr == KD_OK) *lerr = kd_measure_sample(D->meas, D->seedZ, 0, ell, D->Z);
  } else {
    KD_ALLOC(D->zsel, ell);
    const int64_t M = kd_pointset_n_global(D->emp);
    if (ell < M) {
      KD_TRY(kd_choose_rows_(D->emp, D->in->seed, KD_QSTREAM_KEYS + 1, ell, D->zsel));
    } else {
      for (int64_t i = 0; i < ell; i++) D->zsel[i] = i;
    }
    KD_TRY(kd_pointset_gather_rows(D->emp, D->zsel, ell, D->Z));
  }
cleanup:
  return err;
}

/* Sample rows of a pool: N of its rows chosen by key (all if N is its size; the N row ids are
 * kept on every rank), this rank's rows [row0, row0 + nmine) fetched rank by rank (one rank's rows
 * in transit at a time) and their weights normalised by the total over all N rows, summed in row
 * order over chunks (the same sum whatever the rank count). Collective. */
static kd_err kd_quad_pool_rows_(kd_quad_drv_ *D) {
  kd_err err = KD_OK;
  const int64_t N = D->N, M = kd_pointset_n_global(D->emp), n_leaves = D->n_leaves;
  const int64_t row0 = D->row0, nmine = D->nmine;
  const int d = D->d;
  const int64_t C = (int64_t)1 << 20;
  double *buf = NULL, *chunk = NULL;
  KD_ALLOC(D->sel, N);
  if (N < M) {
    KD_TRY(kd_choose_rows_(D->emp, D->in->seed, KD_QSTREAM_KEYS, N, D->sel));
  } else {
    for (int64_t i = 0; i < N; i++) D->sel[i] = i;
  }
  int64_t most = 0;
  for (int r = 0; r < D->size; r++) {
    const int64_t a = N * D->lstart[r] / n_leaves, b = N * D->lstart[r + 1] / n_leaves;
    if (b - a > most) most = b - a;
  }
  KD_ALLOC(buf, (size_t)(most > 0 ? most : 1) * d);
  for (int r = 0; r < D->size; r++) {
    const int64_t a = N * D->lstart[r] / n_leaves, b = N * D->lstart[r + 1] / n_leaves;
    if (b <= a) continue;
    KD_TRY(
        kd_pointset_gather_rows(D->emp, D->sel + a, (kd_lidx)(b - a), r == D->rank ? D->Y : buf));
  }
  KD_ALLOC(chunk, C < N ? C : N);
  double tot = 0;
  for (int64_t c0 = 0; c0 < N; c0 += C) {
    const int64_t k = N - c0 < C ? N - c0 : C;
    KD_TRY(kd_gather_weights_(D->comm, D->emp, D->sel + c0, k, chunk));
    for (int64_t i = 0; i < k; i++) tot += chunk[i];
    for (int64_t i = c0 > row0 ? c0 : row0; i < c0 + k && i < row0 + nmine; i++)
      D->wall[i - row0] = chunk[i - c0];
  }
  KD_CHECK(tot > 0, KD_ERR_INPUT, "quadrature: the sampled target rows have zero total weight");
  for (int64_t i = 0; i < nmine; i++) D->wall[i] /= tot;
cleanup:
  free(buf);
  free(chunk);
  return err;
}

/* Phase 1: the N-point sample (this rank's rows), its weights and the l Nystrom points, checked
 * finite (agreed). Collective. */
static kd_err kd_quad_sample_(kd_quad_drv_ *D) {
  kd_err err = KD_OK, lerr = KD_OK;
  const int64_t N = D->N, nmine = D->nmine, row0 = D->row0, ell = D->ell;
  const int d = D->d;
  D->seedY = kd_rng_u64(D->in->seed, KD_QSTREAM_SAMPLE, 0);
  D->seedZ = kd_rng_u64(D->in->seed, KD_QSTREAM_NYS, 0);
  KD_ALLOC(D->Y, (size_t)(nmine > 0 ? nmine : 1) * d);
  KD_ALLOC(D->wall, nmine > 0 ? nmine : 1); /* the weights of my rows */
  if (!D->emp) {
    lerr = kd_measure_sample(D->meas, D->seedY, row0, nmine, D->Y);
    for (int64_t i = 0; i < nmine; i++) D->wall[i] = 1.0 / (double)N;
  } else {
    KD_TRY(kd_quad_pool_rows_(D));
  }
  if (D->kind == KD_QUAD_NYSTROM) KD_TRY(kd_quad_nystrom_points_(D, &lerr));
  /* non-finite coordinates (a bad data row) are a clear input error, agreed over ranks */
  for (int64_t i = 0; lerr == KD_OK && i < nmine * d; i++)
    if (!isfinite(D->Y[i])) {
      const int64_t g = row0 + i / d;
      lerr = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__,
                        "quadrature: non-finite coordinate in target row %lld",
                        (long long)(D->emp ? D->sel[g] + 1 : g + 1));
    }
  for (int64_t i = 0; D->Z && lerr == KD_OK && i < ell * d; i++)
    if (!isfinite(D->Z[i]))
      lerr = kd_err_set(KD_ERR_INPUT, __FILE__, __LINE__,
                        "quadrature: non-finite coordinate in target row %lld (Nystrom point)",
                        (long long)(D->emp ? D->zsel[i / d] + 1 : i / d + 1));
  KD_TRY(kd_dist_agreed(D->comm, lerr));
  D->tm.sampling = kd_dist_wtime() - D->q.t_start;
  kd_log_info("quad: sample of N = %lld rows in %lld leaves (%lld tree levels): %.2f s",
              (long long)N, (long long)D->n_leaves, (long long)D->levels, D->tm.sampling);
  if (D->rlevel == -1) kd_log_info("quad: resuming after iteration 0 (the eigen step)");
  if (D->rlevel >= 0)
    kd_log_info("quad: resuming after iteration %lld (recombination tree level %lld of %lld)",
                (long long)(D->rlevel + 1), (long long)D->rlevel, (long long)D->levels);
cleanup:
  return err;
}

/* k(Y, Z) and k(y, y) of my rows, precomputed while rank 0 solves (overlap). Local. */
static kd_err kd_quad_precompute_(kd_quad_drv_ *D) {
  const double tk = kd_dist_wtime();
  kd_err err = kd_kernel_eval_block(D->k, D->Y, D->nmine, D->Z, D->ell, D->Kpre, D->ell);
  if (err == KD_OK) err = kd_kernel_diag(D->k, D->Y, D->nmine, D->dpre);
  D->tm.test_functions += kd_dist_wtime() - tk;
  return err;
}

/* The top s eigenpairs of W = k(Z, Z): ScaLAPACK over all ranks, or LAPACK on rank 0 (then
 * broadcast) with, under overlap, the other ranks precomputing their k(Y, Z). A stop request is
 * folded into the step's agreement when checkpointing. Collective. */
static kd_err kd_quad_eig_solve_(kd_quad_drv_ *D, double t0) {
  kd_err err = KD_OK, lerr = KD_OK;
  const MPI_Comm comm = D->comm;
  const int64_t ell = D->ell, nmine = D->nmine;
  const int rank = D->rank, s = D->s;
  kd_gram_ctx_ gctx = {D->k, D->Z, D->d};
  if (D->overlap) {
    D->Kpre = malloc(sizeof(double) * (size_t)(nmine > 0 ? nmine : 1) * ell);
    D->dpre = malloc(sizeof(double) * (size_t)(nmine > 0 ? nmine : 1));
    if (!D->Kpre || !D->dpre)
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "k(Y,Z) tiles: %lld x %lld",
                        (long long)nmine, (long long)ell);
  }
  if (D->overlap && rank != 0 && lerr == KD_OK) lerr = kd_quad_precompute_(D);
  if (ell >= D->cfg.eig_parallel_min && D->size > 1) {
    KD_TRY(kd_dist_agreed(comm, lerr));
    KD_TRY(kd_la_eig_top_dist(comm, (int)ell, kd_gram_fill_, &gctx, s, (int)D->cfg.block_size,
                              D->lambda, D->U));
    /* the ScaLAPACK path ends without an agreement of ours: one, only when checkpointing */
    if (D->ck)
      KD_TRY(kd_recomb_agree_stop(comm, KD_OK, kd_ckpt_pending(D->in->ckpt), &D->q.interrupted));
  } else {
    if (rank == 0 && lerr == KD_OK)
      lerr = kd_la_eig_top_local((int)ell, kd_gram_fill_, &gctx, s, D->lambda, D->U);
    if (rank == 0) D->tm.eigensolve = kd_dist_wtime() - t0;
    if (D->overlap && rank == 0 && lerr == KD_OK) lerr = kd_quad_precompute_(D);
    KD_TRY(kd_recomb_agree_stop(comm, lerr, kd_ckpt_pending(D->in->ckpt), &D->q.interrupted));
    KD_TRY(kd_dist_bcast(comm, D->lambda, (int64_t)sizeof(double) * s, 0));
    KD_TRY(kd_dist_bcast(comm, D->U, (int64_t)sizeof(double) * ell * s, 0));
  }
cleanup:
  return err;
}

/* Nystrom: the eigen step (or its state on resume), then a safe point. Collective. */
static kd_err kd_quad_eigen_(kd_quad_drv_ *D) {
  kd_err err = KD_OK;
  const kd_algo_in *in = D->in;
  const int64_t ell = D->ell;
  const int s = D->s;
  const double t0 = kd_dist_wtime();
  KD_ALLOC(D->U, (size_t)ell * (s > 0 ? s : 1));
  if (D->rlevel == -1) {
    const double *lam, *U;
    int64_t dl[1] = {s}, dU[2] = {ell, s};
    KD_TRY(kd_ckpt_get_f64(in->ckpt, "/state/eig_values", 1, dl, &lam));
    KD_TRY(kd_ckpt_get_f64(in->ckpt, "/state/eig_vectors", 2, dU, &U));
    memcpy(D->lambda, lam, sizeof(double) * (size_t)s);
    memcpy(D->U, U, sizeof(double) * (size_t)ell * s);
    goto cleanup;
  }
  KD_TRY(kd_quad_eig_solve_(D, t0));
  if (!D->lapack_path || !D->overlap) D->tm.eigensolve = kd_dist_wtime() - t0;
  kd_log_info("quad: top %d eigenpairs of the %lld x %lld Nystrom Gram matrix (%s): %.2f s", s,
              (long long)ell, (long long)ell,
              D->lapack_path ? "LAPACK dsyevr on rank 0" : "ScaLAPACK pdsyevr",
              kd_dist_wtime() - t0);
  /* safe point: the eigenpairs as solved (before the eig_rtol cut) */
  if (kd_quad_due_(&D->q, 0)) {
    KD_TRY(kd_quad_checkpoint_(&D->q, -1, &D->tm, NULL, s, D->lambda, D->U));
    KD_CHECK(!D->q.interrupted, KD_ERR_INTERRUPTED, "interrupted after the eigen step");
  }
cleanup:
  return err;
}

/* The eig_rtol cut: keep the eigenpairs above eig_rtol * lambda_1 (compacting U). Local. */
static kd_err kd_quad_eig_cut_(kd_quad_drv_ *D) {
  kd_err err = KD_OK;
  const double *lambda = D->lambda, eig_rtol = D->cfg.eig_rtol;
  const int s = D->s;
  int keep = 0;
  while (keep < s && isfinite(lambda[keep]) && lambda[keep] > eig_rtol * lambda[0] &&
         lambda[keep] > 0)
    keep++;
  KD_CHECK(isfinite(lambda[0]) && lambda[0] > 0, KD_ERR_NUMERIC,
           "Nystrom: the Gram matrix of the %lld Nystrom points has no positive eigenvalue",
           (long long)D->ell);
  if (keep < s) {
    KD_CHECK(D->cfg.rank_deficient != KD_QUAD_RD_ERROR, KD_ERR_NUMERIC,
             "Nystrom: W = k(Z,Z) has only %d eigenvalues above %g * lambda_1, need n - 1 = %d "
             "(algorithm.rank_deficient: error)",
             keep, eig_rtol, s);
    kd_log_warn(
        "Nystrom: W has only %d usable eigenvalues (need n - 1 = %d); using %d test "
        "functions, the rule may have fewer than n points",
        keep, s, keep);
    for (int64_t i = 0; i < D->ell; i++)
      memmove(D->U + (size_t)i * keep, D->U + (size_t)i * s, sizeof(double) * keep);
    D->s = keep;
  }
cleanup:
  return err;
}

/* Phase 2: the test functions, Nystrom eigenpairs or the Mercer basis (on a resume from a tree
 * level the state carries their values: nothing to do). Collective. */
static kd_err kd_quad_basis_(kd_quad_drv_ *D) {
  kd_err err = KD_OK;
  KD_ALLOC(D->lambda, D->s > 0 ? D->s : 1);
  if (D->rlevel >= 0) {
    D->s = D->mstate - 1;
  } else if (D->kind == KD_QUAD_NYSTROM) {
    KD_TRY(kd_quad_eigen_(D));
    KD_TRY(kd_quad_eig_cut_(D));
  } else {
    KD_ALLOC(D->midx, (size_t)(D->s > 0 ? D->s : 1) * D->d);
    KD_TRY(kd_quad_mercer_basis(D->d, kd_kernel_get_params(D->k)->order, D->s, D->midx, D->lambda));
  }
cleanup:
  return err;
}

/* Phase 3: F = (phi_1 .. phi_s, k1,diag) on this rank's leaves (skipped on a tree resume).
 * Collective (agreed). */
static kd_err kd_quad_test_functions_(kd_quad_drv_ *D) {
  kd_err err = KD_OK, lerr = KD_OK;
  double *kdiag = NULL, *Kyz = NULL, *Phi = NULL;
  const double t0 = kd_dist_wtime();
  const int64_t chunk = 512, nl = D->hi - D->lo;
  if (D->rlevel >= 0) goto cleanup;
  KD_ALLOC(D->leaves, nl > 0 ? nl : 1);
  KD_ALLOC(kdiag, chunk);
  if (D->kind == KD_QUAD_NYSTROM) {
    KD_ALLOC(Kyz, (size_t)chunk * D->ell);
    KD_ALLOC(Phi, (size_t)chunk * (D->s > 0 ? D->s : 1));
  }
  {
    kd_qfeat_ fc = {D->k,    D->kind, D->d,        D->s,    D->s + 1, D->ell,
                    D->Z,    D->U,    D->lambda,   D->midx, D->Y,     D->row0,
                    D->wall, D->N,    D->n_leaves, D->Kpre, D->dpre};
    lerr = kd_features_(&fc, D->lo, D->hi, D->leaves, chunk, kdiag, Kyz, Phi);
  }
  KD_TRY(kd_dist_agreed(D->comm, lerr));
  D->tm.test_functions += kd_dist_wtime() - t0;
  kd_log_info("quad: %d test functions on the %lld sample rows: %.2f s", D->s + 1, (long long)D->N,
              kd_dist_wtime() - t0);
cleanup:
  if (D->kind == KD_QUAD_NYSTROM) D->tm.nystrom = D->tm.eigensolve + D->tm.test_functions;
  free(kdiag);
  free(Kyz);
  free(Phi);
  return err;
}

/* The tree at its first level here: restored from the checkpoint, or level 0 from the leaves. */
static kd_err kd_quad_tree_start_(kd_quad_drv_ *D) {
  kd_err err = KD_OK;
  const int m = D->s + 1;
  if (D->rlevel >= 0) {
    const kd_ckpt *ck = D->in->ckpt;
    const int64_t *cnt, *gid;
    const double *w, *F;
    int64_t dc[1] = {-1}, dn[1] = {-1}, dF[2] = {-1, m};
    KD_TRY(kd_ckpt_get_i64(ck, "/state/node_points", 1, dc, &cnt));
    KD_TRY(kd_ckpt_get_i64(ck, "/state/gid", 1, dn, &gid));
    dF[0] = dn[0];
    KD_TRY(kd_ckpt_get_f64(ck, "/state/weights", 1, dn, &w));
    KD_TRY(kd_ckpt_get_f64(ck, "/state/features", 2, dF, &F));
    KD_TRY(kd_recomb_tree_restore(D->comm, m, D->n_leaves, D->lstart, D->rlevel, dc[0], cnt, gid, w,
                                  F, &D->tree));
    kd_log_set_total_from(D->levels + 1, D->rlevel + 1); /* ETA from the levels run here */
  } else {
    const int ask = D->levels > 0 && kd_ckpt_pending(D->in->ckpt);
    /* progress lines carry the iteration of the level's checkpoint (level + 1) and, from the mean
     * time per level so far, an upper estimate of the time left (level 0, the leaves, costs most)
     */
    kd_log_set_total(D->levels + 1);
    KD_TRY(kd_recomb_tree_begin(D->comm, m, D->n_leaves, D->lstart, D->leaves, ask,
                                &D->q.interrupted, &D->tree));
  }
cleanup:
  return err;
}

/* Phase 4: the recombination tree over the leaves (a safe point after every level but the root),
 * then Alg. 1 steps 2-4. Collective. */
static kd_err kd_quad_recombine_(kd_quad_drv_ *D) {
  kd_err err = KD_OK;
  kd_recomb_tree_state *tree = &D->tree;
  double t0 = kd_dist_wtime();
  KD_TRY(kd_quad_tree_start_(D));
  for (;;) {
    const int64_t L = tree->level;
    int64_t alive = kd_recomb_tree_local_points(tree);
    KD_TRY(kd_dist_sum_i64(D->comm, &alive, 1));
    kd_log_progress("recombine", L + 1, NAN, alive, 1);
    if (tree->cnt <= 1) break;
    /* safe point: level L is complete on every rank (not the level a resume starts from) */
    if (L != D->rlevel && kd_quad_due_(&D->q, L + 1)) {
      D->tm.recombination += kd_dist_wtime() - t0;
      t0 = kd_dist_wtime();
      KD_TRY(kd_quad_checkpoint_(&D->q, L, &D->tm, tree, D->s, NULL, NULL));
      KD_CHECK(!D->q.interrupted, KD_ERR_INTERRUPTED, "interrupted at tree level %lld",
               (long long)L);
    }
    /* a stop request is folded into the level's agreement; none at the root (no safe point) */
    const int ask = (tree->cnt + 1) / 2 > 1 && kd_ckpt_pending(D->in->ckpt);
    KD_TRY(kd_recomb_tree_step(tree, ask, &D->q.interrupted));
  }
  KD_TRY(kd_recomb_tree_finish(tree, &D->rule));
  KD_TRY(kd_recomb_drop_one(&D->rule));
  D->tm.recombination += kd_dist_wtime() - t0;
  KD_CHECK(D->rule.n >= 1 && D->rule.n <= D->n, KD_ERR_INTERNAL,
           "recombination returned %lld points for n = %lld", (long long)D->rule.n,
           (long long)D->n);
cleanup:
  return err;
}

/* Phase 5: the rule: coordinates of the chosen rows (replicated), normalised weights, MMD. */
static kd_err kd_quad_rule_(kd_quad_drv_ *D, kd_result *out) {
  kd_err err = KD_OK;
  const kd_recomb_set *rule = &D->rule;
  const int64_t nq = rule->n;
  const int d = D->d;
  KD_TRY(kd_result_alloc(out, nq, d));
  double wsum = 0;
  for (int64_t i = 0; i < nq; i++) wsum += rule->w[i];
  for (int64_t i = 0; i < nq; i++) {
    out->indices[i] = D->emp ? D->sel[rule->gid[i]] : rule->gid[i];
    out->weights[i] = rule->w[i] / wsum;
    if (!D->emp)
      KD_TRY(kd_measure_sample(D->meas, D->seedY, rule->gid[i], 1, out->points + (size_t)i * d));
  }
  /* the pool rows of the nodes (the rule is the same on every rank) */
  if (D->emp) KD_TRY(kd_pointset_gather_rows(D->emp, out->indices, (kd_lidx)nq, out->points));
  double mmd_rec = NAN, mmd2_rec = NAN;
  KD_TRY(kd_mmd(D->tg, out->points, out->weights, nq, &mmd_rec, &mmd2_rec));
  KD_TRY(kd_result_set_metric(out, "mmd_recombination", mmd_rec));
  out->mmd = mmd_rec;
  kd_log_info("quad: recombination: %lld points, mmd %.6e", (long long)nq, mmd_rec);
cleanup:
  return err;
}

/* Phase 6, + opt: min_w w^T K w - 2 w^T z over the simplex (eq. 14). Local (replicated). */
static kd_err kd_quad_opt_(kd_quad_drv_ *D, kd_result *out) {
  kd_err err = KD_OK;
  double *Q = NULL, *z = NULL, *wopt = NULL;
  const int64_t nq = out->n;
  const double t0 = kd_dist_wtime();
  if (D->cfg.opt != KD_QUAD_OPT_CONVEX) goto cleanup;
  KD_ALLOC(Q, (size_t)nq * nq);
  KD_ALLOC(z, nq);
  KD_ALLOC(wopt, nq);
  KD_TRY(kd_kernel_eval_block(D->k, out->points, nq, out->points, nq, Q, nq));
  KD_TRY(kd_target_embed_rows(D->tg, out->points, nq, z));
  memcpy(wopt, out->weights, sizeof(double) * nq);
  KD_TRY(kd_simplex_qp((int)nq, Q, z, D->cfg.qp_tol, (int)D->cfg.qp_max_iter, wopt));
  double ws = 0;
  for (int64_t i = 0; i < nq; i++) ws += (wopt[i] > 0 ? wopt[i] : 0);
  KD_CHECK(ws > 0, KD_ERR_NUMERIC, "+opt: the simplex QP returned zero weights");
  for (int64_t i = 0; i < nq; i++) out->weights[i] = (wopt[i] > 0 ? wopt[i] : 0) / ws;
  double mmd_opt = NAN;
  KD_TRY(kd_mmd(D->tg, out->points, out->weights, nq, &mmd_opt, NULL));
  KD_TRY(kd_result_set_metric(out, "mmd_opt", mmd_opt));
  out->mmd = mmd_opt;
  kd_log_info("quad: +opt (simplex QP, eq. 14): mmd %.6e", mmd_opt);
cleanup:
  D->tm.opt = kd_dist_wtime() - t0;
  free(Q);
  free(z);
  free(wopt);
  return err;
}

/* Metrics (stage times: max over ranks, so every rank reports the same). Collective. */
static kd_err kd_quad_metrics_(kd_quad_drv_ *D, kd_result *out) {
  kd_err err = KD_OK;
  const kd_qtimes_ *tm = &D->tm;
  double tv[6] = {tm->sampling,       tm->nystrom,       tm->eigensolve,
                  tm->test_functions, tm->recombination, tm->opt};
  static const char *const tnames[6] = {"time_sampling",      "time_nystrom",
                                        "time_eigensolve",    "time_test_functions",
                                        "time_recombination", "time_opt"};
  KD_TRY(kd_dist_max(D->comm, tv, 6));
  for (int i = 0; i < 6; i++) tv[i] += D->q.times[i]; /* the stages of the interrupted runs */
  for (int i = 0; i < 6; i++) KD_TRY(kd_result_set_metric(out, tnames[i], tv[i]));
  KD_TRY(kd_result_set_count(out, "sample_size", (int64_t)D->N));
  KD_TRY(kd_result_set_count(out, "test_functions", (int64_t)D->s));
  KD_TRY(kd_result_set_count(out, "leaves", (int64_t)D->n_leaves));
  KD_TRY(kd_result_set_count(out, "leaves_rank0", (int64_t)(D->lstart[1] - D->lstart[0])));
  if (D->kind == KD_QUAD_NYSTROM) {
    KD_TRY(kd_result_set_count(out, "nystrom_points", (int64_t)D->ell));
    KD_TRY(kd_result_set_count(out, "eig_scalapack", (int64_t)D->q.plan[KD_QPLAN_N - 1]));
  }
cleanup:
  return err;
}

kd_err kd_quad_run(const kd_algo_in *in, kd_result *out, kd_quad_kind kind) {
  kd_err err = KD_OK;
  kd_quad_drv_ D;
  KD_TRY(kd_quad_drv_init_(&D, in, kind));
  KD_TRY(kd_quad_setup_(&D));
  KD_TRY(kd_quad_place_leaves_(&D));
  KD_TRY(kd_quad_plan_(&D));
  KD_TRY(kd_quad_sample_(&D));
  KD_TRY(kd_quad_basis_(&D));
  KD_TRY(kd_quad_test_functions_(&D));
  KD_TRY(kd_quad_recombine_(&D));
  KD_TRY(kd_quad_rule_(&D, out));
  KD_TRY(kd_quad_opt_(&D, out));
  KD_TRY(kd_quad_metrics_(&D, out));
cleanup:
  kd_quad_drv_free_(&D);
  return err;
}
