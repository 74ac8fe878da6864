/* eig.c - top-s eigenpairs of a symmetric matrix (LAPACK dsyevr on one rank, ScaLAPACK pdsyevr on a
 * block-cyclic BLACS layout) and a rank-revealing null space (dgeqp3). Used for the Nystrom test
 * functions of eq. (10)-(11) and the Caratheodory steps of Remark 1 (Hayakawa, Oberhauser & Lyons).
 */
#include <cblas.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "la/la_dist_impl.h"

/* Fortran LAPACK / ScaLAPACK (gfortran ABI: hidden string lengths last). */
void dsyevr_(const char *jobz, const char *range, const char *uplo, const int *n, double *a,
             const int *lda, const double *vl, const double *vu, const int *il, const int *iu,
             const double *abstol, int *m, double *w, double *z, const int *ldz, int *isuppz,
             double *work, const int *lwork, int *iwork, const int *liwork, int *info, size_t,
             size_t, size_t);
void dgeqp3_(const int *m, const int *n, double *a, const int *lda, int *jpvt, double *tau,
             double *work, const int *lwork, int *info);
void pdsyevr_(const char *jobz, const char *range, const char *uplo, const int *n, double *a,
              const int *ia, const int *ja, const int *desca, const double *vl, const double *vu,
              const int *il, const int *iu, int *m, int *nz, double *w, double *z, const int *iz,
              const int *jz, const int *descz, double *work, const int *lwork, int *iwork,
              const int *liwork, int *info, size_t, size_t, size_t);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);

/* Reverse the ascending eigenpairs of a solver into descending order with a sign convention. */
/* A NaN or infinite matrix entry is the user's input (a length scale whose square over- or
 * underflows, a data value of 1e308), not a failure of LAPACK: reported as such (exit 1). */
static kd_err kd_eig_check_finite_(const double *A, size_t n) {
  kd_err err = KD_OK;
  for (size_t i = 0; i < n; i++)
    KD_CHECK(isfinite(A[i]), KD_ERR_NUMERIC,
             "the kernel matrix has a non-finite entry (%g): kernel.ls or the data are out of "
             "the range this kernel can be evaluated in",
             A[i]);
cleanup:
  return err;
}

static void kd_eig_finish_(int l, int s, const double *w_asc, const double *Zc, int ldz,
                           double *lambda, double *U) {
  for (int t = 0; t < s; t++) {
    const int src = s - 1 - t;
    const double *z = Zc + (size_t)src * ldz;
    double amax = 0.0;
    for (int i = 0; i < l; i++) amax = fmax(amax, fabs(z[i]));
    double sign = 1.0;
    for (int i = 0; i < l; i++)
      if (fabs(z[i]) >= (1.0 - 1e-8) * amax) {
        sign = z[i] < 0 ? -1.0 : 1.0;
        break;
      }
    lambda[t] = w_asc[src];
    for (int i = 0; i < l; i++) U[(size_t)i * s + t] = sign * z[i];
  }
}

kd_err kd_la_eig_top_local(int l, kd_la_fill_fn fill, void *ctx, int s, double *lambda, double *U) {
  kd_err err = KD_OK;
  double *A = NULL, *w = NULL, *Z = NULL, *work = NULL;
  int *isuppz = NULL, *iwork = NULL;
  KD_CHECK(l >= 1 && s >= 1 && s <= l, KD_ERR_ARG, "eigensolver: need 1 <= s <= l (s=%d, l=%d)", s,
           l);
  KD_ALLOC(A, (size_t)l * l);
  KD_TRY(fill(ctx, 0, l, 0, l, A, l));
  KD_TRY(kd_eig_check_finite_(A, (size_t)l * l));
  KD_ALLOC(w, l);
  KD_ALLOC(Z, (size_t)l * s);
  KD_ALLOC(isuppz, 2 * s);
  const int il = l - s + 1, iu = l;
  const double vl = 0, vu = 0, abstol = 0;
  int m = 0, info = 0, lwork = -1, liwork = -1, iwq = 0;
  double wq = 0;
  dsyevr_("V", "I", "U", &l, A, &l, &vl, &vu, &il, &iu, &abstol, &m, w, Z, &l, isuppz, &wq, &lwork,
          &iwq, &liwork, &info, 1, 1, 1);
  KD_LA(info);
  lwork = (int)wq + 1;
  liwork = iwq + 1;
  KD_ALLOC(work, lwork);
  KD_ALLOC(iwork, liwork);
  dsyevr_("V", "I", "U", &l, A, &l, &vl, &vu, &il, &iu, &abstol, &m, w, Z, &l, isuppz, work, &lwork,
          iwork, &liwork, &info, 1, 1, 1);
  KD_LA(info);
  KD_CHECK(m == s, KD_ERR_LA, "dsyevr returned %d of the %d requested eigenpairs", m, s);
  kd_eig_finish_(l, s, w, Z, l, lambda, U);
cleanup:
  free(A);
  free(w);
  free(Z);
  free(work);
  free(isuppz);
  free(iwork);
  return err;
}

/* pdsyevr hands its back-transformation PDORMTR a fixed slice of its workspace, max(18 l,
 * NP00 MQ00) (NP00 = rows of l on grid row 0, MQ00 = columns of s on grid column 0), whatever
 * LWORK the caller passes; PDORMTR (uplo U) needs max(nb(nb-1)/2, (MpC0 + NqC0) nb) + nb^2. When
 * the slice is smaller, PDORMTR refuses, pdsyevr still returns info = 0 and the eigenvectors come
 * back untransformed (seen: l = 240, s = 40, nb = 64 on 2 ranks). Returns 1 if nb is safe. */
static int kd_pdsyevr_nb_ok_(int l, int s, int nb, int nprow, int npcol) {
  const int zero = 0, lm1 = l - 1;
  const long np00 = numroc_(&l, &nb, &zero, &zero, &nprow);
  const long mq00 = numroc_(&s, &nb, &zero, &zero, &npcol);
  const long mp = numroc_(&lm1, &nb, &zero, &zero, &nprow);
  long size1 = 18L * l, need = (mp + mq00) * nb, tri = (long)nb * (nb - 1) / 2;
  if (np00 * mq00 > size1) size1 = np00 * mq00;
  if (tri > need) need = tri;
  return size1 >= need + (long)nb * nb;
}

kd_err kd_la_eig_top_dist(MPI_Comm comm, int l, kd_la_fill_fn fill, void *ctx, int s, int nb,
                          double *lambda, double *U) {
  kd_err err = KD_OK, lerr = KD_OK;
  kd_la_grid *g = NULL;
  double *A = NULL, *Zl = NULL, *w = NULL, *work = NULL, *Uc = NULL, *blk = NULL;
  int *iwork = NULL;
  KD_CHECK(l >= 1 && s >= 1 && s <= l, KD_ERR_ARG, "eigensolver: need 1 <= s <= l (s=%d, l=%d)", s,
           l);
  KD_CHECK(nb >= 1, KD_ERR_ARG, "eigensolver: block size must be >= 1 (got %d)", nb);
  KD_TRY(kd_la_grid_create(comm, &g));
  /* the largest block size <= nb that pdsyevr's back-transformation accepts (same on every rank) */
  while (nb > 1 && !kd_pdsyevr_nb_ok_(l, s, nb, g->nprow, g->npcol)) nb--;
  const int zero = 0, one = 1;
  const int mloc = numroc_(&l, &nb, &g->myrow, &zero, &g->nprow);
  const int nloc = numroc_(&l, &nb, &g->mycol, &zero, &g->npcol);
  const int lld = mloc > 1 ? mloc : 1;
  int desc[9], info = 0;
  descinit_(desc, &l, &l, &nb, &nb, &zero, &zero, &g->ctxt, &lld, &info);
  if (info != 0)
    lerr = kd_err_set(KD_ERR_LA, __FILE__, __LINE__, "descinit_ returned info=%d", info);
  /* local blocks of the block-cyclic layout: local block (bi, bj) holds global block
   * (bi*nprow + myrow, bj*npcol + mycol) */
  if (lerr == KD_OK) {
    A = calloc((size_t)lld * (nloc > 0 ? nloc : 1), sizeof *A);
    Zl = calloc((size_t)lld * (nloc > 0 ? nloc : 1), sizeof *Zl);
    w = calloc((size_t)l, sizeof *w);
    if (!A || !Zl || !w)
      lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "eigensolver: out of memory");
  }
  for (int lj = 0; lerr == KD_OK && lj < nloc; lj += nb) {
    const int gj = ((lj / nb) * g->npcol + g->mycol) * nb;
    const int nj = (l - gj) < nb ? (l - gj) : nb;
    for (int li = 0; lerr == KD_OK && li < mloc; li += nb) {
      const int gi = ((li / nb) * g->nprow + g->myrow) * nb;
      const int ni = (l - gi) < nb ? (l - gi) : nb;
      lerr = fill(ctx, gi, ni, gj, nj, A + li + (size_t)lj * lld, lld);
    }
  }
  if (lerr == KD_OK && nloc > 0) lerr = kd_eig_check_finite_(A, (size_t)lld * (size_t)nloc);
  KD_TRY(kd_dist_agreed(comm, lerr));
  const int il = l - s + 1, iu = l;
  const double vl = 0, vu = 0;
  int m = 0, nz = 0, lwork = -1, liwork = -1, iwq = 0;
  double wq = 0;
  pdsyevr_("V", "I", "U", &l, A, &one, &one, desc, &vl, &vu, &il, &iu, &m, &nz, w, Zl, &one, &one,
           desc, &wq, &lwork, &iwq, &liwork, &info, 1, 1, 1);
  KD_LA(info); /* a workspace query fails (or not) identically on every rank */
  lwork = (int)wq + 1;
  liwork = iwq + 1;
  work = malloc(sizeof *work * (size_t)lwork);
  iwork = malloc(sizeof *iwork * (size_t)liwork);
  if (!work || !iwork) lerr = kd_err_set(KD_ERR_MEM, __FILE__, __LINE__, "pdsyevr workspace");
  KD_TRY(kd_dist_agreed(comm, lerr));
  pdsyevr_("V", "I", "U", &l, A, &one, &one, desc, &vl, &vu, &il, &iu, &m, &nz, w, Zl, &one, &one,
           desc, work, &lwork, iwork, &liwork, &info, 1, 1, 1);
  KD_LA(info);
  KD_CHECK(m == s && nz == s, KD_ERR_LA, "pdsyevr returned %d eigenvalues and %d vectors of %d", m,
           nz, s);
  /* assemble the s eigenvector columns (global columns 0..s-1 of Z, ascending order) on every
   * rank: each entry lives on exactly one rank, so a sum is an exact gather */
  KD_ALLOC(Uc, (size_t)l * s);
  for (int lj = 0; lj < nloc; lj++) {
    const int gj = ((lj / nb) * g->npcol + g->mycol) * nb + lj % nb;
    if (gj >= s) continue;
    for (int li = 0; li < mloc; li++) {
      const int gi = ((li / nb) * g->nprow + g->myrow) * nb + li % nb;
      Uc[(size_t)gj * l + gi] = Zl[li + (size_t)lj * lld];
    }
  }
  KD_TRY(kd_dist_sum(comm, Uc, l * s));
  kd_eig_finish_(l, s, w, Uc, l, lambda, U);
cleanup:
  free(A);
  free(Zl);
  free(w);
  free(work);
  free(iwork);
  free(Uc);
  free(blk);
  kd_la_grid_destroy(&g);
  return err;
}

kd_err kd_la_null_space(int r, int K, double *M, double rtol, double *V, int *q) {
  kd_err err = KD_OK;
  int *jpvt = NULL;
  double *tau = NULL, *work = NULL;
  *q = 0;
  if (K <= 0) return KD_OK;
  const int mn = r < K ? r : K;
  KD_ALLOC(jpvt, K);
  KD_ALLOC(tau, mn > 0 ? mn : 1);
  int info = 0, lwork = -1;
  double wq = 0;
  const int lda = r > 1 ? r : 1;
  int k = 0;
  if (r > 0) {
    dgeqp3_(&r, &K, M, &lda, jpvt, tau, &wq, &lwork, &info);
    KD_LA(info);
    lwork = (int)wq + 1;
    KD_ALLOC(work, lwork);
    dgeqp3_(&r, &K, M, &lda, jpvt, tau, work, &lwork, &info);
    KD_LA(info);
    const double r11 = fabs(M[0]);
    while (k < mn && r11 > 0 && fabs(M[k + (size_t)k * lda]) > rtol * r11) k++;
  } else {
    for (int j = 0; j < K; j++) jpvt[j] = j + 1;
  }
  const int nq = K - k;
  /* null vectors: P [ -R11^{-1} R12 ; I ]; R12 (k x nq) sits right of R11 in M, solved in place */
  if (k > 0 && nq > 0)
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, k, nq, 1.0, M,
                lda, M + (size_t)k * lda, lda);
  memset(V, 0, sizeof(double) * (size_t)K * nq);
  for (int t = 0; t < nq; t++) {
    const double *x = M + (size_t)(k + t) * lda;
    double *v = V + (size_t)t * K;
    for (int i = 0; i < k; i++) v[jpvt[i] - 1] = -x[i];
    v[jpvt[k + t] - 1] = 1.0;
  }
  *q = nq;
cleanup:
  free(jpvt);
  free(tau);
  free(work);
  return err;
}
