/* herding_accel.c - accelerated kernel herding (Tsuji & Tanaka Alg. 4): nu_{t+1} = nu_t + gamma g_t
 * with g_t = d / Lambda a positive combination of vertex directions k(v_i, .) - nu_t, built by
 *   PMP      positive matching pursuit (Alg. 5, with the backward direction -d/||d||),
 *   GCOS     greedy maximisation of cos theta (Alg. 6: c_k from Prop. 9, c = (q b - p g)/(p b - q
 * a)), FC_PMP   PMP's vertex choice, coefficients re-solved by the nonnegative LS (3.9) every
 * round, FC_GCOS  Alg. 7 (gcos vertex choice, coefficients from (3.9)). A round is accepted while
 * align(mu - nu, d') - align(mu - nu, d) > delta (at most K_max rounds); gamma is the exact line
 * search over [0, 1]. Every direction vertex becomes an atom (weight 0 until the step), so every
 * inner product of directions comes from the replicated Gram matrix: A_i = <mu - nu, k(v_i,.) - nu>
 * = z_i - nu_i - w^T z_S + w^T K w, G_ij = <k(v_i,.) - nu, k(v_j,.) - nu> = K_ij - nu_i - nu_j +
 * w^T K w. Candidate-side scores use the same formulas with z(y), nu(y), k(y,y) and D(y) = sum_i
 * c_i k(y, v_i) (rebuilt from the direction's columns). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/herding/herding_accel.h"
#include "comm/dist_impl.h"

typedef struct {
  kd_herd_accel_mode mode;
  int kmax;
  double delta;
  int nd;        /* direction size */
  int *pos;      /* [kmax] atom positions of the direction vertices */
  double *c;     /* [kmax] coefficients */
  double *cn;    /* [kmax] trial coefficients */
  double *G;     /* [kmax*kmax] scratch */
  double *b;     /* [kmax] scratch */
  double *dcols; /* [kmax*nl] columns of the direction vertices */
  double *D;     /* [nl] sum_i c_i column_i */
  double *score; /* [nl] */
  /* cos trace rows (t, k, cos) */
  int64_t n_cos, cap_cos;
  double *cos_rows;
  int64_t rounds;
} kd_accel_ctx_;

static double kd_acc_A_(const kd_herd *h, int i) { return h->zs[i] - h->kw[i] - h->wz + h->wkw; }
static double kd_acc_G_(const kd_herd *h, int i, int j) {
  return h->K[(size_t)i * h->cap + j] - h->kw[i] - h->kw[j] + h->wkw;
}

/* <mu - nu, d> and ||d||^2 for coefficients c over the direction vertices */
static void kd_acc_dir_(const kd_herd *h, const kd_accel_ctx_ *x, const double *c, double *q,
                        double *dd) {
  double sq = 0.0, s2 = 0.0;
  for (int i = 0; i < x->nd; i++) {
    sq += c[i] * kd_acc_A_(h, x->pos[i]);
    for (int j = 0; j < x->nd; j++) s2 += c[i] * c[j] * kd_acc_G_(h, x->pos[i], x->pos[j]);
  }
  *q = sq;
  *dd = s2;
}

static double kd_acc_align_(double q, double dd, double r0) {
  if (!(dd > 0) || !(r0 > 0)) return -1.0;
  return q / (r0 * sqrt(dd));
}

static void kd_acc_rebuild_D_(const kd_herd *h, kd_accel_ctx_ *x) {
  for (kd_lidx y = 0; y < h->nl; y++) x->D[y] = 0.0;
  for (int i = 0; i < x->nd; i++) {
    const double *col = x->dcols + (size_t)i * h->nl;
    for (kd_lidx y = 0; y < h->nl; y++) x->D[y] += x->c[i] * col[y];
  }
}

/* Add candidate g to the direction (as an atom and a column); returns its index in the direction
 * (an existing entry if g is already there). */
static kd_err kd_acc_add_vertex_(kd_herd *h, kd_accel_ctx_ *x, kd_gidx g, int *k) {
  kd_err err = KD_OK;
  const double *col;
  int pos;
  KD_TRY(kd_herd_ensure_atom(h, g, h->col, &col, &pos));
  for (int i = 0; i < x->nd; i++)
    if (x->pos[i] == pos) {
      *k = i;
      goto cleanup;
    }
  KD_CHECK(x->nd < x->kmax, KD_ERR_INTERNAL, "herd: direction overflow");
  memcpy(x->dcols + (size_t)x->nd * h->nl, col, sizeof(double) * (size_t)h->nl);
  x->pos[x->nd] = pos;
  x->c[x->nd] = 0.0;
  *k = x->nd++;
cleanup:
  return err;
}

/* Fully-corrective coefficients: (3.9) min_{c >= 0} ||(mu - nu) - sum c_i (k(v_i,.) - nu)||^2 */
static kd_err kd_acc_nnls_(kd_herd *h, kd_accel_ctx_ *x, double *c) {
  const int n = x->nd;
  for (int i = 0; i < n; i++) {
    x->b[i] = kd_acc_A_(h, x->pos[i]);
    for (int j = 0; j < n; j++) x->G[i * n + j] = kd_acc_G_(h, x->pos[i], x->pos[j]);
  }
  kd_err e = kd_nonneg_qp(n, x->G, x->b, 1e-13, 50 * n + 50, c);
  /* rank 0's coefficients everywhere (G is free scratch now) */
  return kd_herd_replicate(h, e, c, n, x->G);
}

static kd_err kd_acc_push_cos_(kd_accel_ctx_ *x, int64_t t, int k, double cosv) {
  kd_err err = KD_OK;
  if (x->n_cos == x->cap_cos) {
    int64_t nc = x->cap_cos ? 2 * x->cap_cos : 256;
    double *p = realloc(x->cos_rows, sizeof(double) * 3 * (size_t)nc);
    KD_CHECK(p, KD_ERR_MEM, "herd: cannot grow the cos trace");
    x->cos_rows = p;
    x->cap_cos = nc;
  }
  x->cos_rows[3 * x->n_cos] = (double)t;
  x->cos_rows[3 * x->n_cos + 1] = (double)k;
  x->cos_rows[3 * x->n_cos + 2] = cosv;
  x->n_cos++;
cleanup:
  return err;
}

/* gcos vertex choice (Alg. 6 line 4 / Alg. 7 line 3): maximise g(c, y) over c > 0 and y. */
static void kd_acc_gcos_scores_(const kd_herd *h, kd_accel_ctx_ *x, double q, double dd) {
  double cs = 0.0, lam = 0.0;
  for (int i = 0; i < x->nd; i++) {
    cs += x->c[i] * h->kw[x->pos[i]];
    lam += x->c[i];
  }
  const double g0 = q / sqrt(dd);
  for (kd_lidx y = 0; y < h->nl; y++) {
    double nuy = h->g[y] + h->z[y];
    double p = -h->g[y] - h->wz + h->wkw;
    double al = h->kdiag[y] - 2.0 * nuy + h->wkw;
    double be = x->D[y] - cs - lam * nuy + lam * h->wkw;
    double den = p * be - q * al, sc = -INFINITY;
    if (den != 0.0) {
      double cst = (q * be - p * dd) / den;
      double rad = al * cst * cst + 2.0 * be * cst + dd;
      if (cst > 0 && rad > 0) {
        double gv = (cst * p + q) / sqrt(rad);
        if (gv > g0) sc = gv;
      }
    }
    x->score[y] = sc;
  }
}

/* PMP coefficients of the direction with the new vertex kk (Alg. 5 lines 5-10): the forward step
 * along k(v,.) - nu or the backward step along -d/||d||, whichever aligns more with the residual
 * r_k = (mu - nu) - d. *stop = 1 when neither improves (the direction keeps nd_before vertices). */
static void kd_acc_pmp_coeffs_(const kd_herd *h, kd_accel_ctx_ *x, int kk, int nd_before,
                               int *stop) {
  double q, dd;
  int v = x->pos[kk];
  double fr = kd_acc_A_(h, v), fn2 = kd_acc_G_(h, v, v);
  for (int i = 0; i < x->nd; i++) fr -= x->c[i] * kd_acc_G_(h, x->pos[i], v);
  double fval = fr, bval = -INFINITY, dn = 0.0;
  if (nd_before > 0) {
    kd_acc_dir_(h, x, x->c, &q, &dd);
    dn = sqrt(dd);
    if (dn > 0) bval = (dd - q) / dn;
  }
  if (bval > fval) {
    double fac = 1.0 - bval / dn; /* lambda = bval, ||u|| = 1 */
    if (!(fac >= 0)) {
      *stop = 1;
      return;
    }
    for (int i = 0; i < x->nd; i++) x->cn[i] = x->c[i] * fac;
  } else {
    if (!(fr > 0) || !(fn2 > 0)) {
      x->nd = nd_before;
      *stop = 1;
      return;
    }
    x->cn[kk] += fr / fn2;
  }
}

/* Accept the trial coefficients cn when they raise cos theta by more than delta (else drop the
 * round's vertex: the direction keeps nd_before vertices, *stop = 1). */
static void kd_acc_accept_(const kd_herd *h, kd_accel_ctx_ *x, int nd_before, double r0,
                           double *cos_cur, int *stop) {
  double q, dd;
  kd_acc_dir_(h, x, x->cn, &q, &dd);
  double cos_new = kd_acc_align_(q, dd, r0);
  if (!(cos_new - *cos_cur > x->delta)) {
    x->nd = nd_before;
    *stop = 1;
    return;
  }
  memcpy(x->c, x->cn, sizeof(double) * (size_t)x->nd);
  *cos_cur = cos_new;
}

/* One PMP / FC-PMP round (Alg. 5): v_k = argmax_y <r_k, delta_y>, r_k = (mu - nu) - d, with
 * <d, delta_y> = D(y) - Lambda nu(y). Collective. */
static kd_err kd_acc_round_pmp_(kd_herd *h, kd_accel_ctx_ *x, int fc, double r0, double *cos_cur,
                                int *stop) {
  kd_err err = KD_OK;
  double val, lam = 0.0;
  kd_gidx g;
  int kk;
  for (int i = 0; i < x->nd; i++) lam += x->c[i];
  for (kd_lidx y = 0; y < h->nl; y++)
    x->score[y] = -h->g[y] - (x->D[y] - lam * (h->g[y] + h->z[y]));
  h->lmo_calls++;
  KD_TRY(kd_herd_argmax(h, x->score, KD_OK, &val, &g));
  int nd_before = x->nd;
  KD_TRY(kd_acc_add_vertex_(h, x, g, &kk));
  memcpy(x->cn, x->c, sizeof(double) * (size_t)x->nd);
  if (fc) {
    KD_TRY(kd_acc_nnls_(h, x, x->cn));
  } else {
    kd_acc_pmp_coeffs_(h, x, kk, nd_before, stop);
    if (*stop) goto cleanup;
  }
  kd_acc_accept_(h, x, nd_before, r0, cos_cur, stop);
cleanup:
  return err;
}

/* First GCOS round (Alg. 6 line 1): d_1 = argmax_y cos(mu - nu, k(y,.) - nu). Collective. */
static kd_err kd_acc_round_gcos_first_(kd_herd *h, kd_accel_ctx_ *x, double r0, double *cos_cur,
                                       int *stop) {
  kd_err err = KD_OK;
  double val, q, dd;
  kd_gidx g;
  int kk;
  for (kd_lidx y = 0; y < h->nl; y++) {
    double nuy = h->g[y] + h->z[y];
    double al = h->kdiag[y] - 2.0 * nuy + h->wkw;
    double p = -h->g[y] - h->wz + h->wkw;
    x->score[y] = al > 1e-14 * (h->kdiag[y] + fabs(h->wkw)) ? p / sqrt(al) : -INFINITY;
  }
  h->lmo_calls++;
  KD_TRY(kd_herd_argmax(h, x->score, KD_OK, &val, &g));
  if (!(val > -INFINITY)) {
    *stop = 1;
    goto cleanup;
  }
  KD_TRY(kd_acc_add_vertex_(h, x, g, &kk));
  x->c[kk] = 1.0;
  kd_acc_dir_(h, x, x->c, &q, &dd);
  *cos_cur = kd_acc_align_(q, dd, r0);
cleanup:
  return err;
}

/* A later GCOS / FC-GCOS round (Alg. 6 lines 4-6, Alg. 7): the vertex maximising g(c, y), c_k
 * recomputed from the replicated Gram (Prop. 9), then (FC) the coefficients from (3.9).
 * Collective. */
static kd_err kd_acc_round_gcos_(kd_herd *h, kd_accel_ctx_ *x, int fc, double r0, double *cos_cur,
                                 int *stop) {
  kd_err err = KD_OK;
  double val, q, dd;
  kd_gidx g;
  int kk;
  kd_acc_dir_(h, x, x->c, &q, &dd);
  kd_acc_gcos_scores_(h, x, q, dd);
  h->lmo_calls++;
  KD_TRY(kd_herd_argmax(h, x->score, KD_OK, &val, &g));
  if (!(val > -INFINITY)) {
    *stop = 1;
    goto cleanup;
  }
  int nd_before = x->nd;
  KD_TRY(kd_acc_add_vertex_(h, x, g, &kk));
  int v = x->pos[kk];
  double p = kd_acc_A_(h, v), al = kd_acc_G_(h, v, v), be = 0.0;
  for (int i = 0; i < x->nd; i++) be += x->c[i] * kd_acc_G_(h, x->pos[i], v);
  double den = p * be - q * al;
  double cst = den != 0.0 ? (q * be - p * dd) / den : 0.0;
  if (!(cst > 0)) {
    x->nd = nd_before;
    *stop = 1;
    goto cleanup;
  }
  memcpy(x->cn, x->c, sizeof(double) * (size_t)x->nd);
  x->cn[kk] += cst;
  if (fc) KD_TRY(kd_acc_nnls_(h, x, x->cn));
  kd_acc_accept_(h, x, nd_before, r0, cos_cur, stop);
cleanup:
  return err;
}

/* The step of Alg. 4 along the built direction: rho = sum (c_i / Lambda) k(v_i, .),
 * nu <- (1 - gamma) nu + gamma rho with the exact line search over [0, 1]. Local. */
static void kd_acc_step_(kd_herd *h, kd_accel_ctx_ *x) {
  double lam = 0.0;
  for (int i = 0; i < x->nd; i++) lam += x->c[i];
  if (x->nd == 0 || !(lam > 0)) {
    kd_herd_prune(h);
    kd_herd_refresh(h);
    h->done = 1; /* no ascent direction: nothing more to gain on this candidate set */
    return;
  }
  for (int i = 0; i < x->nd; i++) x->cn[i] = x->c[i] / lam;
  double q, dd;
  kd_acc_dir_(h, x, x->cn, &q, &dd);
  double gamma = q > 0 ? (dd > 0 ? fmin(1.0, q / dd) : 1.0) : 0.0;
  if (gamma > 0) {
    const double om = 1.0 - gamma, sc = gamma / lam;
    /* nu' = (1-gamma) nu + (gamma/Lambda) D  =>  g' = (1-gamma) g + (gamma/Lambda) D - gamma z */
    for (kd_lidx y = 0; y < h->nl; y++) h->g[y] = om * h->g[y] + sc * x->D[y] - gamma * h->z[y];
    h->lmin_valid = 0;
    for (int i = 0; i < h->n; i++) h->w[i] *= om;
    for (int i = 0; i < x->nd; i++) h->w[x->pos[i]] += gamma * x->cn[i];
  }
  kd_herd_prune(h);
  kd_herd_refresh(h);
}

/* One iteration of Alg. 4: the FW gap, up to K_max direction rounds of the mode, the step. */
static kd_err kd_acc_iter_(kd_herd *h, void *vctx, int64_t it, double *gap) {
  kd_err err = KD_OK;
  kd_accel_ctx_ *x = vctx;
  double val;
  kd_gidx g;
  const int fc = x->mode == KD_HERD_FC_PMP || x->mode == KD_HERD_FC_GCOS;
  const int is_pmp = x->mode == KD_HERD_PMP || x->mode == KD_HERD_FC_PMP;
  x->nd = 0;
  for (kd_lidx y = 0; y < h->nl; y++) x->D[y] = 0.0;
  /* FW gap (reported / tol_gap) from the plain LMO */
  KD_TRY(kd_herd_lmo(h, &val, &g));
  *gap = kd_herd_wgrad(h) - val;
  const double r0 = h->mmd;
  if (*gap <= h->tol_gap || !(r0 > 0)) {
    h->done = 1;
    goto cleanup;
  }
  double cos_cur = -1.0;
  for (int k = 0; k < x->kmax; k++) {
    int stop = 0;
    if (is_pmp)
      KD_TRY(kd_acc_round_pmp_(h, x, fc, r0, &cos_cur, &stop));
    else if (k == 0)
      KD_TRY(kd_acc_round_gcos_first_(h, x, r0, &cos_cur, &stop));
    else
      KD_TRY(kd_acc_round_gcos_(h, x, fc, r0, &cos_cur, &stop));
    if (stop) break;
    kd_acc_rebuild_D_(h, x);
    x->rounds++;
    kd_err pe = kd_acc_push_cos_(x, it, k, cos_cur); /* local: deliver at the next LMO */
    if (pe != KD_OK && h->pending_err == KD_OK) h->pending_err = pe;
  }
  kd_acc_step_(h, x);
cleanup:
  return err;
}

/* checkpoint / restart: the cos trace rows and the round counter are all that crosses iterations */
static kd_err kd_acc_save_(void *vctx, kd_ckpt *ck) {
  kd_err err = KD_OK;
  const kd_accel_ctx_ *x = vctx;
  const int64_t dims[2] = {x->n_cos, 3};
  KD_TRY(kd_ckpt_put_f64(ck, "/state/algo/cos_theta", 2, dims, x->cos_rows));
  KD_TRY(kd_ckpt_put_i64(ck, "/state/algo/rounds", 0, NULL, &x->rounds));
cleanup:
  return err;
}

static kd_err kd_acc_load_(void *vctx, const kd_ckpt *ck) {
  kd_err err = KD_OK;
  kd_accel_ctx_ *x = vctx;
  const double *c;
  const int64_t *r;
  int64_t dc[2] = {-1, 3};
  KD_TRY(kd_ckpt_get_f64(ck, "/state/algo/cos_theta", 2, dc, &c));
  KD_TRY(kd_ckpt_get_i64(ck, "/state/algo/rounds", 0, NULL, &r));
  /* one cos-theta row per direction round */
  KD_CHECK(dc[0] == r[0], KD_ERR_FILE,
           "checkpoint: /state/algo/cos_theta holds %lld rows, /state/algo/rounds counts %lld",
           (long long)dc[0], (long long)r[0]);
  x->n_cos = 0;
  for (int64_t i = 0; i < dc[0]; i++)
    KD_TRY(kd_acc_push_cos_(x, (int64_t)c[3 * i], (int)c[3 * i + 1], c[3 * i + 2]));
  x->rounds = r[0];
cleanup:
  return err;
}

kd_err kd_herd_accel_run(const kd_algo_in *in, kd_result *out, kd_herd_accel_mode mode) {
  kd_err err = KD_OK;
  kd_accel_ctx_ x;
  memset(&x, 0, sizeof x);
  x.mode = mode;
  kd_herd_params hp;
  KD_TRY(kd_herd_params_read(in->params, &hp));
  const int64_t kmax = hp.K_max;
  x.delta = hp.delta;
  KD_CHECK_KEY(kmax >= 1 && kmax <= 100000, KD_ERR_CONFIG, "algorithm.K_max",
               "algorithm.K_max must be in [1, 100000] (Alg. 5/6), got %lld", (long long)kmax);
  KD_CHECK_KEY(x.delta < 1.0 && x.delta >= -1.0, KD_ERR_CONFIG, "algorithm.delta",
               "algorithm.delta must be in [-1, 1), got %g", x.delta);
  x.kmax = (int)kmax;
  KD_CHECK(in->points, KD_ERR_ARG, "herd: candidates are required");
  const kd_lidx nl = kd_pointset_n_local(in->points);
  KD_ALLOC(x.pos, x.kmax);
  KD_ALLOC(x.c, x.kmax);
  KD_ALLOC(x.cn, x.kmax);
  KD_ALLOC(x.b, x.kmax);
  KD_ALLOC(x.G, (size_t)x.kmax * x.kmax + 2);
  KD_ALLOC(x.dcols, (size_t)x.kmax * nl);
  KD_ALLOC(x.D, nl);
  KD_ALLOC(x.score, nl);
cleanup:
  if (kd_dist_agree(in->comm, &err) != KD_OK && err == KD_OK) err = KD_ERR_MPI;
  const kd_herd_ctx_io io = {kd_acc_save_, kd_acc_load_};
  if (err == KD_OK) err = kd_herd_drive(in, out, kd_acc_iter_, &x, &io);
  if (err == KD_OK && x.n_cos > 0) {
    int64_t dims[2] = {x.n_cos, 3};
    err = kd_result_add_f64(out, "/herding/cos_theta", 2, dims, x.cos_rows);
  }
  if (err == KD_OK) err = kd_result_set_count(out, "direction_rounds", (int64_t)x.rounds);
  free(x.pos);
  free(x.c);
  free(x.cn);
  free(x.b);
  free(x.G);
  free(x.dcols);
  free(x.D);
  free(x.score);
  free(x.cos_rows);
  return err;
}
