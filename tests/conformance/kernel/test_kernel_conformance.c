/* test_kernel_conformance.c - every registered kernel family, in several dimensions (covering the
 * d = 1, 2, 3 fused loops, the register-blocked d >= 4 path and its one-row remainder):
 *   tile == pointwise (bitwise), any sub-tile == the same entries of a larger tile (bitwise),
 *   symmetry (bitwise), mat-vec == tile . w (to round-off) and row-independent (bitwise),
 *   w = NULL == w = 1 (bitwise), diag == pointwise (bitwise), agreement with the textbook formula,
 *   PSD Gram matrix of 60 random points (LAPACK dsyev), exact evaluation counts. Serial. */
#include <stdlib.h>
#include <string.h>

#include "kd_test.h"
#include "kernel/kernel_impl.h"

extern void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
                   double *w, double *work, const int *lwork, int *info);

/* points of family t in dimension d: row i of a seeded set (domain the kernel is PSD on) */
static void points(kd_kernel_type t, int d, kd_lidx n, uint64_t seed, double *X) {
  for (kd_lidx i = 0; i < n; i++) {
    double nrm = 0.0;
    for (int j = 0; j < d; j++) {
      uint64_t c = (uint64_t)(i * d + j);
      double v;
      if (t == KD_KERNEL_SOBOLEV)
        v = 2.0 * kd_rng_uniform(seed, 0, c) - 0.5; /* periodic: outside [0,1) too */
      else if (t == KD_KERNEL_ATTENTION)
        v = 0.5 * kd_rng_normal(seed, 0, c);
      else
        v = kd_rng_normal(seed, 0, c);
      X[i * d + j] = v;
      nrm += v * v;
    }
    if (t == KD_KERNEL_ENERGY) /* the energy kernel is PSD on the unit sphere */
      for (int j = 0; j < d; j++) X[i * d + j] /= sqrt(nrm);
  }
}

static kd_kernel_params params_for(kd_kernel_type t, int d) {
  kd_kernel_params p = kd_kernel_params_default(t);
  p.ls = 0.8 + 0.1 * d;
  p.degree = 3;
  p.c = 0.5;
  p.order = 1 + d % 3;
  p.dk = d / 2 > 0 ? d / 2 : 1;
  if (t == KD_KERNEL_IMQ && d % 2) p.beta = 0.7; /* the pow branch as well as the sqrt one */
  if (t == KD_KERNEL_DEEP) { /* rows (x, u): splits at 1 .. d-1, eps from 0 to 1 */
    p.dx = d == 200 ? 190 : (d + 1) / 2 < d ? (d + 1) / 2 : 1;
    p.ls_phi = 0.5 + 0.05 * d;
    p.eps = d == 2 ? 0.0 : d == 3 ? 1.0 : 0.25;
  }
  if (t == KD_KERNEL_GAUSSIAN_SUM) { /* one scale (ratio 1) to the most, 64 */
    p.n_ls = d == 1 ? 1 : d == 2 ? 2 : d == 200 ? 64 : 5;
    p.ls_ratio = d == 1 ? 1.0 : d == 200 ? 1.1 : 1.5 + 0.1 * d;
  }
  if (t == KD_KERNEL_STEIN) { /* rows (x, score): every base, and imq's pow branch at d = 200 */
    p.base = d == 4 ? KD_KERNEL_GAUSSIAN : d == 12 ? KD_KERNEL_MATERN52 : KD_KERNEL_IMQ;
    if (d == 200) p.beta = 0.7;
  }
  return p;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  const int dims[7] = {1, 2, 3, 4, 5, 12, 200}; /* 200: panels narrower than 256 */
  const kd_lidx na = 37, nb = 300, ldk = nb + 3, ng = 60;
  double *A = malloc(sizeof(double) * na * 200), *B = malloc(sizeof(double) * nb * 200);
  double *K = malloc(sizeof(double) * na * ldk), *Kt = malloc(sizeof(double) * nb * na);
  double *S = malloc(sizeof(double) * 5 * 161), *w = malloc(sizeof(double) * nb);
  double *ones = malloc(sizeof(double) * nb), *y = malloc(sizeof(double) * na);
  double *y2 = malloc(sizeof(double) * na), *y3 = malloc(sizeof(double) * na);
  double *G = malloc(sizeof(double) * ng * ng), *ev = malloc(sizeof(double) * ng);
  double *dg = malloc(sizeof(double) * na);
  double *Abig = malloc(sizeof(double) * 600 * 200), *Kbig = malloc(sizeof(double) * 600 * 40);
  double *ybig = malloc(sizeof(double) * 600), *ybig2 = malloc(sizeof(double) * 600);
  for (kd_lidx j = 0; j < nb; j++) w[j] = kd_rng_normal(77, 0, (uint64_t)j), ones[j] = 1.0;

  for (int ti = 0; ti < KD_KERNEL_COUNT_; ti++) {
    const kd_kernel_type t = (kd_kernel_type)ti;
    const char *nm = kd_kernel_name(t);
    for (int di = 0; di < 7; di++) {
      const int d = dims[di];
      if ((t == KD_KERNEL_ATTENTION || t == KD_KERNEL_DEEP) && d < 2) continue;
      if (t == KD_KERNEL_STEIN && d % 2) continue; /* (x, score) rows have even width */
      kd_kernel_params p = params_for(t, d);
      kd_kernel *k = NULL;
      if (!KD_TEST_OK(kd_kernel_create(&p, d, &k))) continue;
      kd_kernel *k1 = NULL; /* Sobolev: the one-coordinate kernel, for error scales */
      if (t == KD_KERNEL_SOBOLEV) KD_TEST_OK(kd_kernel_create(&p, 1, &k1));
      points(t, d, na, 1000 + (uint64_t)d, A);
      points(t, d, nb, 2000 + (uint64_t)d, B);

      /* tile == pointwise, symmetric, and == the textbook formula */
      KD_TEST_OK(kd_kernel_eval_block(k, A, na, B, nb, K, ldk));
      KD_TEST_OK(kd_kernel_eval_block(k, B, nb, A, na, Kt, na));
      int same = 1, sym = 1, fin = 1;
      double maxrel = 0.0;
      for (kd_lidx i = 0; i < na; i++)
        for (kd_lidx j = 0; j < nb; j++) {
          double v = kd_kernel_eval(k, A + i * d, B + j * d), kij = K[i * ldk + j];
          same &= memcmp(&v, &kij, sizeof v) == 0;
          sym &= memcmp(&kij, &Kt[j * na + i], sizeof v) == 0;
          fin &= isfinite(kij);
          double ref = kd_kernel_ref_(k, A + i * d, B + j * d);
          double scale = fmax(1.0, fabs(ref));
          if (k1) { /* Sobolev: a product of factors that can pass through 0; its round-off
                     * scale is prod_i max(|f_i|, 1), not |k| */
            scale = 1.0;
            for (int c = 0; c < d; c++)
              scale *= fmax(1.0, fabs(kd_kernel_ref_(k1, A + i * d + c, B + j * d + c)));
          }
          double rel = fabs(kij - ref) / scale;
          if (rel > maxrel) maxrel = rel;
        }
      KD_TEST(same, "%s d=%d: tile == pointwise bitwise", nm, d);
      KD_TEST(sym, "%s d=%d: K(B,A) == K(A,B)^T bitwise", nm, d);
      KD_TEST(fin, "%s d=%d: finite values", nm, d);
      /* Sobolev: the expanded textbook Bernoulli polynomials lose digits to cancellation (the
       * order-3 factor 1 + 85.4 B6(t) is -0.97 at t = 1/2): a looser bound, growing with d. */
      const double rtol = k1 ? 1e-13 * d + 2e-12 : 1e-13;
      kd_kernel_destroy(&k1);
      KD_TEST(maxrel <= rtol, "%s d=%d: matches the textbook formula (max rel %.3g)", nm, d,
              maxrel);

      /* a sub-tile at another position equals the same entries */
      KD_TEST_OK(kd_kernel_eval_block(k, A + 5 * d, 5, B + 99 * d, 161, S, 161));
      same = 1;
      for (int i = 0; i < 5; i++)
        same &= memcmp(S + i * 161, K + (5 + i) * ldk + 99, sizeof(double) * 161) == 0;
      KD_TEST(same, "%s d=%d: sub-tile bitwise equal", nm, d);

      /* mat-vec == tile . w; rows independent of the other rows; w = NULL == ones */
      KD_TEST_OK(kd_kernel_matvec(k, A, na, B, nb, w, 0.0, y));
      double maxerr = 0.0;
      for (kd_lidx i = 0; i < na; i++) {
        long double s = 0.0L, sa = 0.0L;
        for (kd_lidx j = 0; j < nb; j++) {
          s += (long double)K[i * ldk + j] * w[j];
          sa += fabsl((long double)K[i * ldk + j] * w[j]);
        }
        double e = fabs(y[i] - (double)s) / (double)(sa > 0 ? sa : 1.0L);
        if (e > maxerr) maxerr = e;
      }
      KD_TEST(maxerr <= 1e-14, "%s d=%d: matvec == tile . w (rel %.3g)", nm, d, maxerr);
      KD_TEST_OK(kd_kernel_matvec(k, A + 6 * d, 7, B, nb, w, 0.0, y2));
      KD_TEST(memcmp(y2, y + 6, sizeof(double) * 7) == 0, "%s d=%d: matvec rows independent", nm,
              d);
      KD_TEST_OK(kd_kernel_matvec(k, A + 3 * d, 1, B, nb, w, 0.0, y2));
      KD_TEST(memcmp(y2, y + 3, sizeof(double)) == 0, "%s d=%d: single-row matvec", nm, d);
      KD_TEST_OK(kd_kernel_matvec(k, A, na, B, nb, NULL, 0.0, y2));
      KD_TEST_OK(kd_kernel_matvec(k, A, na, B, nb, ones, 0.0, y3));
      KD_TEST(memcmp(y2, y3, sizeof(double) * na) == 0, "%s d=%d: w NULL == ones", nm, d);
      for (kd_lidx i = 0; i < na; i++) y2[i] = y[i];
      KD_TEST_OK(kd_kernel_matvec(k, A, na, B, nb, w, -0.5, y2));
      maxerr = 0.0;
      for (kd_lidx i = 0; i < na; i++) {
        double e = fabs(y2[i] - 0.5 * y[i]);
        if (e > maxerr) maxerr = e;
      }
      KD_TEST(maxerr <= 1e-12 * (1 + fabs(y[0])), "%s d=%d: beta y + K w", nm, d);

      /* few columns (the row-wise path for nb < 4 <= 16 <= na; nb = 9 takes the general path)
       * against pointwise values and against the general path (7 < 16 rows) */
      {
        const kd_lidx nbs[3] = {1, 3, 9};
        for (int q = 0; q < 3; q++) {
          const kd_lidx m = nbs[q];
          KD_TEST_OK(kd_kernel_eval_block(k, A, na, B, m, K, ldk));
          same = 1;
          for (kd_lidx i = 0; i < na; i++)
            for (kd_lidx j = 0; j < m; j++) {
              double v = kd_kernel_eval(k, A + i * d, B + j * d);
              same &= memcmp(&v, &K[i * ldk + j], sizeof v) == 0;
            }
          KD_TEST(same, "%s d=%d nb=%lld: few-column tile == pointwise bitwise", nm, d,
                  (long long)m);
          KD_TEST_OK(kd_kernel_matvec(k, A, na, B, m, w, 0.0, y));
          KD_TEST_OK(kd_kernel_matvec(k, A + 30 * d, 7, B, m, w, 0.0, y2));
          KD_TEST(memcmp(y2, y + 30, sizeof(double) * 7) == 0,
                  "%s d=%d nb=%lld: few-column matvec == general path bitwise", nm, d,
                  (long long)m);
          double e = 0.0;
          for (kd_lidx i = 0; i < na; i++) {
            double r = 0.0, ra = 0.0;
            for (kd_lidx j = 0; j < m; j++) {
              r += K[i * ldk + j] * w[j];
              ra += fabs(K[i * ldk + j] * w[j]);
            }
            e = fmax(e, fabs(y[i] - r) / (ra > 0 ? ra : 1.0));
          }
          KD_TEST(e <= 1e-14, "%s d=%d nb=%lld: few-column matvec == tile . w", nm, d,
                  (long long)m);
        }
      }

      /* many rows, few columns: several 256-row chunks of the row-wise path and several
       * 64-row blocks of the general one; matvec with beta != 0 */
      {
        const kd_lidx nr = 600;
        points(t, d, nr, 3000 + (uint64_t)d, Abig);
        for (int q = 0; q < 2; q++) {
          const kd_lidx m = q ? 40 : 2;
          KD_TEST_OK(kd_kernel_eval_block(k, Abig, nr, B, m, Kbig, m));
          same = 1;
          for (kd_lidx i = 0; i < nr; i++)
            for (kd_lidx j = 0; j < m; j++) {
              double v = kd_kernel_eval(k, Abig + i * d, B + j * d);
              same &= memcmp(&v, &Kbig[i * m + j], sizeof v) == 0;
            }
          KD_TEST(same, "%s d=%d 600 x %lld: tile == pointwise bitwise", nm, d, (long long)m);
          for (kd_lidx i = 0; i < nr; i++) ybig[i] = ybig2[i] = (double)i;
          KD_TEST_OK(kd_kernel_matvec(k, Abig, nr, B, m, w, 0.25, ybig));
          for (kd_lidx i0 = 0; i0 < nr; i0 += 150) /* in pieces: same bits */
            KD_TEST_OK(kd_kernel_matvec(k, Abig + i0 * d, 150, B, m, w, 0.25, ybig2 + i0));
          KD_TEST(memcmp(ybig, ybig2, sizeof(double) * nr) == 0,
                  "%s d=%d 600 x %lld: matvec in pieces bitwise equal", nm, d, (long long)m);
          double e = 0.0;
          for (kd_lidx i = 0; i < nr; i++) {
            double r = 0.25 * (double)i, ra = fabs(r);
            for (kd_lidx j = 0; j < m; j++) {
              r += Kbig[i * m + j] * w[j];
              ra += fabs(Kbig[i * m + j] * w[j]);
            }
            e = fmax(e, fabs(ybig[i] - r) / (ra > 0 ? ra : 1.0));
          }
          KD_TEST(e <= 1e-14, "%s d=%d 600 x %lld: beta y + K w (rel %.3g)", nm, d, (long long)m,
                  e);
        }
      }

      /* every micro-kernel this CPU has (portable, AVX2, AVX-512) gives the same bits */
      {
        const int top = kd_kernel_isa_();
        KD_TEST_OK(kd_kernel_eval_block(k, A, na, B, nb, K, ldk));
        KD_TEST_OK(kd_kernel_matvec(k, A, na, B, nb, w, 0.0, y));
        for (int isa = 0; isa <= top; isa++) {
          k->isa = isa;
          KD_TEST_OK(kd_kernel_eval_block(k, A, na, B, nb, Kt, nb));
          KD_TEST_OK(kd_kernel_matvec(k, A, na, B, nb, w, 0.0, y2));
          same = memcmp(y, y2, sizeof(double) * na) == 0;
          for (kd_lidx i = 0; i < na; i++)
            same &= memcmp(K + i * ldk, Kt + i * nb, sizeof(double) * nb) == 0;
          KD_TEST(same, "%s d=%d: micro-kernel %d gives the same bits as %d", nm, d, isa, top);
        }
        k->isa = top;
      }

      /* diagonal == pointwise */
      KD_TEST_OK(kd_kernel_diag(k, A, na, dg));
      same = 1;
      for (kd_lidx i = 0; i < na; i++) {
        double v = kd_kernel_eval(k, A + i * d, A + i * d);
        same &= memcmp(&v, &dg[i], sizeof v) == 0;
      }
      KD_TEST(same, "%s d=%d: diag == pointwise bitwise", nm, d);

      /* PSD: Gram matrix of 60 points */
      KD_TEST_OK(kd_kernel_eval_block(k, B, ng, B, ng, G, ng));
      double tr = 0.0;
      for (kd_lidx i = 0; i < ng; i++) tr += G[i * ng + i];
      int n = (int)ng, lwork = -1, info = 0;
      double wq;
      dsyev_("N", "U", &n, G, &n, ev, &wq, &lwork, &info);
      lwork = (int)wq;
      double *work = malloc(sizeof(double) * (size_t)lwork);
      dsyev_("N", "U", &n, G, &n, ev, work, &lwork, &info);
      free(work);
      KD_TEST(info == 0 && ev[0] >= -1e-10 * tr, "%s d=%d: PSD (min eigenvalue %.3g, trace %.3g)",
              nm, d, ev[0], tr);

      /* evaluation counts */
      kd_kernel_reset_evals(k);
      KD_TEST_OK(kd_kernel_eval_block(k, A, na, B, nb, K, ldk));
      KD_TEST_OK(kd_kernel_matvec(k, A, 11, B, nb, w, 0.0, y));
      KD_TEST_OK(kd_kernel_diag(k, A, na, dg));
      (void)kd_kernel_eval(k, A, B);
      KD_TEST(kd_kernel_evals(k) == (uint64_t)(na * nb + 11 * nb + na + 1),
              "%s d=%d: eval count %llu", nm, d, (unsigned long long)kd_kernel_evals(k));
      kd_kernel_destroy(&k);
    }
  }
  free(A);
  free(B);
  free(K);
  free(Kt);
  free(S);
  free(w);
  free(ones);
  free(y);
  free(y2);
  free(y3);
  free(G);
  free(ev);
  free(dg);
  free(Abig);
  free(Kbig);
  free(ybig);
  free(ybig2);
  return kd_test_finish();
}
