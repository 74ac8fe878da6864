/* stein_tune.c - the Stein kernel chosen for the sample (kernel.ls: auto, kernel.precondition:
 * auto; docs/stein.md, "Choosing ls and the preconditioner").
 *
 * The scores carry p's local scale: by Stein's identity E_p |s|^2 = E_p[-tr grad s] = tr F, the
 * Fisher information of p, which for a Gaussian N(mu, S) is tr S^-1 whatever mu is, and for a
 * mixture of well-separated modes is the average of the modes' own (it does not depend on how
 * the sample spreads over the modes, which the median heuristic's distances do). With
 * F^ = mean s s^T over the sample:
 *   - precondition: auto takes M = diag(1 / F^_jj) (each coordinate in units of p's local width)
 *     when the coordinates' local scales differ by more than 2x (max F^_jj / min F^_jj > 4), and
 *     no preconditioner otherwise (the plain kernel is 3-5x cheaper and a common scale goes into
 *     ls);
 *   - ls: auto takes ls^2 = 2 d^2 / tr(M F^) (M = I without a preconditioner): the mean squared
 *     distance between two draws of an isotropic Gaussian of p's local curvature, i.e. the median
 *     heuristic of one mode of p, where the median of the sample's distances measures the
 *     distance between modes.
 * The rows are the preconditioner's: at most KD_TUNE_SAMPLE at a fixed stride (rows i n / m),
 * gathered on every rank and summed in one order, so the choice is the same at any rank count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "kernel/kernel_impl.h"

enum { KD_TUNE_SAMPLE = 20000 };
#define KD_TUNE_ANISOTROPY 4.0

/* mean s^T M s over the m gathered rows (x, s) of width 2 dx; M = NULL: the identity. */
static double kd_tune_fisher_trace_(const double *rows, kd_lidx m, int dx, const double *M) {
  double q = 0.0;
  for (kd_lidx i = 0; i < m; i++) {
    const double *s = rows + (size_t)i * 2 * dx + dx;
    double v = 0.0;
    for (int a = 0; a < dx; a++) {
      if (!M) {
        v = fma(s[a], s[a], v);
        continue;
      }
      double r = 0.0;
      for (int b = 0; b < dx; b++) r = fma(M[a * dx + b], s[b], r);
      v = fma(s[a], r, v);
    }
    q += v;
  }
  return q / (double)m;
}

/* diag(1 / F^_jj) into M (dx x dx) when max F^_jj / min F^_jj > KD_TUNE_ANISOTROPY; returns the
 * ratio (inf if a coordinate's scores are all 0: then no preconditioner either). */
static double kd_tune_diag_(const double *rows, kd_lidx m, int dx, double *M, int *use) {
  double lo = INFINITY, hi = 0.0;
  *use = 0;
  memset(M, 0, sizeof(double) * (size_t)dx * dx);
  for (int a = 0; a < dx; a++) {
    double f = 0.0;
    for (kd_lidx i = 0; i < m; i++) {
      const double s = rows[(size_t)i * 2 * dx + dx + a];
      f = fma(s, s, f);
    }
    f /= (double)m;
    M[a * dx + a] = f > 0 ? 1.0 / f : 0.0;
    lo = f < lo ? f : lo;
    hi = f > hi ? f : hi;
  }
  if (!(lo > 0) || !isfinite(hi)) return INFINITY;
  *use = hi / lo > KD_TUNE_ANISOTROPY;
  return hi / lo;
}

kd_err kd_kernel_stein_autotune(kd_kernel *k, const kd_pointset *ps, const double *M, int tune_ls,
                                int tune_pre, kd_stein_tune *out) {
  kd_err err = KD_OK;
  kd_gidx *idx = NULL;
  double *rows = NULL, *Md = NULL;
  memset(out, 0, sizeof *out);
  KD_CHECK(k && ps && k->p.type == KD_KERNEL_STEIN, KD_ERR_ARG,
           "kernel: autotune needs a stein kernel and its rows");
  const kd_gidx n = kd_pointset_n_global(ps);
  const int d = kd_pointset_dim(ps), dx = d / 2;
  KD_CHECK(d == k->d && n >= 1, KD_ERR_INPUT, "kernel: autotune on %lld rows of dimension %d",
           (long long)n, d);
  const kd_lidx m = n < KD_TUNE_SAMPLE ? (kd_lidx)n : KD_TUNE_SAMPLE;
  const MPI_Comm comm = kd_pointset_comm(ps);
  KD_ALLOC_AGREED(comm, idx, m);
  KD_ALLOC_AGREED(comm, rows, (size_t)m * d);
  KD_ALLOC_AGREED(comm, Md, (size_t)dx * dx);
  for (kd_lidx i = 0; i < m; i++) idx[i] = (kd_gidx)((double)i * (double)n / (double)m);
  KD_TRY(kd_pointset_gather_rows(ps, idx, m, rows));
  out->rows = m;
  if (tune_pre) {
    int use = 0;
    out->anisotropy = kd_tune_diag_(rows, m, dx, Md, &use);
    if (use) {
      KD_TRY(kd_kernel_set_stein_precond(k, Md));
      M = Md;
      out->precondition = 1;
    }
  }
  if (!tune_ls) goto cleanup;
  out->fisher_trace = kd_tune_fisher_trace_(rows, m, dx, M);
  if (!(out->fisher_trace > 0) || !isfinite(out->fisher_trace)) goto cleanup; /* median instead */
  k->p.ls = sqrt(2.0 * (double)dx * (double)dx / out->fisher_trace);
  out->ls = k->p.ls;
  k->ls_pending = 0;
  kd_kernel_refresh_(k);
  kd_kernel_update_desc_(k);
cleanup:
  free(idx);
  free(rows);
  free(Md);
  return err;
}
