/* stein_trust.c - when a score-based coreset cannot be trusted (docs/stein.md, "When the answer
 * cannot be trusted"): the KSD does not see the relative weights of well-separated modes.
 *
 * On at most KD_TRUST_SAMPLE input rows (x, s) taken at a fixed stride (the same rows at any rank
 * count):
 *   1. each row's mode estimate m = x + s / F_jj per coordinate (F_jj = mean s_j^2, p's local
 *      precision): for a mixture of Gaussians of that precision, m is the responsibility-weighted
 *      mean of the component means, so the rows of one mode collapse onto its mean while rows
 *      between modes spread thinly. Measured in units of the local sd, rows with at least
 *      KD_TRUST_CORE % of the rows within KD_TRUST_TAU are cores, and cores within KD_TRUST_TAU of
 *      each other are one group (at most KD_TRUST_MAXC groups, largest first);
 *   2. G_cd = the mean Stein kernel k_p between the rows of groups c and d (U-statistic within a
 *      group), so KSD^2 of a rule with proportions a over the groups is a^T G a; a* minimises it
 *      on the simplex (the proportions the KSD prefers);
 *   3. resolution = min over moves of t = min(a*_c, 1/2) of the mass from group c to group d of
 *      (KSD^2 after - KSD^2 at a*) / (mean k_p(x, x) / n_out), the KSD^2 of an exact n_out-point
 *      sample: below 1, moving half the mass between groups changes the KSD less than an exact
 *      coreset's own noise, and the proportions are not determined by the scores.
 * /metrics: debias_groups, debias_resolution, debias_untrusted (groups >= 2 and resolution < 1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/dist_impl.h"
#include "task/task_impl.h"

enum { KD_TRUST_SAMPLE = 1024, KD_TRUST_MAXC = 16 };
#define KD_TRUST_TAU 0.5
#define KD_TRUST_CORE 0.02

static int kd_trust_root_(int *par, int i) {
  while (par[i] != i) i = par[i] = par[par[i]];
  return i;
}

/* the mode estimates in local-sd units: (x_j + s_j / F_jj) sqrt(F_jj) into mo[m * dx] */
static void kd_trust_modes_(const double *rows, int m, int dx, double *mo) {
  for (int j = 0; j < dx; j++) {
    double f = 0.0;
    for (int i = 0; i < m; i++)
      f = fma(rows[(size_t)i * 2 * dx + dx + j], rows[(size_t)i * 2 * dx + dx + j], f);
    f /= m;
    const double r = f > 0 ? sqrt(f) : 1.0;
    for (int i = 0; i < m; i++) {
      const double *a = rows + (size_t)i * 2 * dx;
      mo[(size_t)i * dx + j] = f > 0 ? a[j] * r + a[dx + j] / r : a[j];
    }
  }
}

static double kd_trust_d2_(const double *a, const double *b, int dx) {
  double r = 0.0;
  for (int j = 0; j < dx; j++) r = fma(a[j] - b[j], a[j] - b[j], r);
  return r;
}

/* group label per row (-1: not in a kept group); returns the number of groups (largest first) */
static int kd_trust_groups_(const double *mo, int m, int dx, int *par, int *lab) {
  const double tau2 = KD_TRUST_TAU * KD_TRUST_TAU;
  const int core = (int)ceil(KD_TRUST_CORE * m) > 3 ? (int)ceil(KD_TRUST_CORE * m) : 3;
  int nc = 0;
  for (int i = 0; i < m; i++) {
    int nb = 0;
    for (int j = 0; j < m; j++)
      nb += kd_trust_d2_(mo + (size_t)i * dx, mo + (size_t)j * dx, dx) <= tau2;
    lab[i] = nb >= core; /* 1: a core row */
    par[i] = i;
  }
  for (int i = 0; i < m; i++)
    for (int j = i + 1; j < m && lab[i]; j++)
      if (lab[j] && kd_trust_d2_(mo + (size_t)i * dx, mo + (size_t)j * dx, dx) <= tau2)
        par[kd_trust_root_(par, j)] = kd_trust_root_(par, i);
  for (int i = 0; i < m; i++) par[i] = lab[i] ? kd_trust_root_(par, i) : -1;
  /* keep the KD_TRUST_MAXC largest roots (ties: the first row), label rows by rank of size */
  for (int i = 0; i < m; i++) lab[i] = -1;
  for (;;) {
    int best = -1, bs = 0;
    for (int r = 0; r < m; r++) {
      if (par[r] != r) continue;
      int s = 0;
      for (int i = 0; i < m; i++) s += par[i] == r;
      if (s >= core && s > bs) best = r, bs = s;
    }
    if (best < 0 || nc == KD_TRUST_MAXC) break;
    for (int i = 0; i < m; i++)
      if (par[i] == best) lab[i] = nc, par[i] = -2;
    nc++;
  }
  return nc;
}

/* a* = argmin a^T G a over the simplex (multiplicative weights, a fixed number of steps) */
static void kd_trust_best_(const double *G, int nc, double *a) {
  double L = 0.0, g[KD_TRUST_MAXC];
  for (int c = 0; c < nc * nc; c++) L = fabs(G[c]) > L ? fabs(G[c]) : L;
  for (int c = 0; c < nc; c++) a[c] = 1.0 / nc;
  if (!(L > 0)) return;
  for (int it = 0; it < 3000; it++) {
    double z = 0.0;
    for (int c = 0; c < nc; c++) {
      g[c] = 0.0;
      for (int d = 0; d < nc; d++) g[c] += G[c * nc + d] * a[d];
    }
    for (int c = 0; c < nc; c++) z += a[c] *= exp(-g[c] / L);
    for (int c = 0; c < nc; c++) a[c] /= z;
  }
}

static double kd_trust_quad_(const double *G, int nc, const double *a) {
  double q = 0.0;
  for (int c = 0; c < nc; c++)
    for (int d = 0; d < nc; d++) q += a[c] * G[c * nc + d] * a[d];
  return q;
}

/* G (nc x nc) and the mean diagonal over the m rows */
static void kd_trust_gram_(kd_kernel *k, const double *rows, int m, int d, const int *lab, int nc,
                           double *G, double *diag) {
  double cnt[KD_TRUST_MAXC * KD_TRUST_MAXC];
  memset(G, 0, sizeof(double) * (size_t)nc * nc);
  memset(cnt, 0, sizeof cnt);
  *diag = 0.0;
  for (int i = 0; i < m; i++) {
    *diag += kd_kernel_eval(k, rows + (size_t)i * d, rows + (size_t)i * d) / m;
    if (lab[i] < 0) continue;
    for (int j = i + 1; j < m; j++) {
      if (lab[j] < 0) continue;
      const double v = kd_kernel_eval(k, rows + (size_t)i * d, rows + (size_t)j * d);
      G[lab[i] * nc + lab[j]] += v, cnt[lab[i] * nc + lab[j]] += 1;
      if (lab[i] != lab[j]) G[lab[j] * nc + lab[i]] += v, cnt[lab[j] * nc + lab[i]] += 1;
    }
  }
  for (int c = 0; c < nc * nc; c++) G[c] = cnt[c] > 0 ? G[c] / cnt[c] : 0.0;
}

kd_err kd_task_stein_trust(kd_kernel *k, const kd_pointset *ps, kd_result *res) {
  kd_err err = KD_OK;
  kd_gidx *idx = NULL;
  double *rows = NULL, *mo = NULL;
  int *par = NULL, *lab = NULL;
  if (!k || !ps || !kd_kernel_has(k, KD_KCAP_STEIN) || res->n < 1) return KD_OK;
  const kd_gidx n = kd_pointset_n_global(ps);
  const int d = kd_pointset_dim(ps), dx = d / 2;
  const int m = n < KD_TRUST_SAMPLE ? (int)n : KD_TRUST_SAMPLE;
  if (m < 8 || d != kd_kernel_dim(k)) return KD_OK;
  const MPI_Comm comm = kd_pointset_comm(ps);
  KD_ALLOC_AGREED(comm, idx, m);
  KD_ALLOC_AGREED(comm, rows, (size_t)m * d);
  KD_ALLOC_AGREED(comm, mo, (size_t)m * dx);
  KD_ALLOC_AGREED(comm, par, m);
  KD_ALLOC_AGREED(comm, lab, m);
  for (int i = 0; i < m; i++) idx[i] = (kd_gidx)((double)i * (double)n / (double)m);
  KD_TRY(kd_pointset_gather_rows(ps, idx, m, rows));
  kd_trust_modes_(rows, m, dx, mo);
  const int nc = kd_trust_groups_(mo, m, dx, par, lab);
  double G[KD_TRUST_MAXC * KD_TRUST_MAXC], a[KD_TRUST_MAXC], b[KD_TRUST_MAXC], diag = 0.0;
  double resol = INFINITY;
  if (nc >= 2) {
    kd_trust_gram_(k, rows, m, d, lab, nc, G, &diag);
    kd_trust_best_(G, nc, a);
    const double q0 = kd_trust_quad_(G, nc, a), noise = diag / (double)res->n;
    for (int c = 0; c < nc; c++)
      for (int e = 0; e < nc; e++) {
        const double t = a[c] < 0.5 ? a[c] : 0.5;
        if (c == e || t < 0.05) continue;
        memcpy(b, a, sizeof(double) * (size_t)nc);
        b[c] -= t, b[e] += t;
        const double r = (kd_trust_quad_(G, nc, b) - q0) / noise;
        resol = r < resol ? r : resol;
      }
  }
  const int untrusted = nc >= 2 && resol < 1.0;
  KD_TRY(kd_result_set_count(res, "debias_groups", nc));
  KD_TRY(kd_result_set_metric(res, "debias_resolution", isfinite(resol) ? resol : -1.0));
  KD_TRY(kd_result_set_count(res, "debias_untrusted", untrusted));
  if (untrusted)
    kd_log_warn(
        "the sample has %d well-separated groups of modes whose proportions the KSD does "
        "not resolve (moving half the mass between two changes KSD^2 by %.2g of a "
        "%lld-point exact sample's): the coreset's weights between them are not "
        "determined by the scores (docs/stein.md, \"When the answer cannot be trusted\")",
        nc, resol, (long long)res->n);
cleanup:
  free(idx);
  free(rows);
  free(mo);
  free(par);
  free(lab);
  return err;
}
