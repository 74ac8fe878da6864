/* measure.c - generator measures: parameters, validation and seeded sampling where every row is a
 * pure function of (seed, global row index). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kdistill/author/kd_pointset.h"

static const char *const kd_measure_names_[] = {
    "none",   "uniform_box", "gaussian", "gaussian_mixture",
    "sphere", "torus",       "grid",     "trunc_gaussian"};

const char *kd_measure_name(kd_measure_type t) {
  if ((int)t < 0 || (int)t >= (int)(sizeof kd_measure_names_ / sizeof *kd_measure_names_))
    return "?";
  return kd_measure_names_[t];
}

kd_measure_type kd_measure_from_name(const char *name) {
  for (int i = 1; i < (int)(sizeof kd_measure_names_ / sizeof *kd_measure_names_); i++)
    if (strcmp(kd_measure_names_[i], name) == 0) return (kd_measure_type)i;
  return KD_MEASURE_NONE;
}

static kd_err kd_dup_arr_(const double *src, size_t n, double **dst) {
  kd_err err = KD_OK;
  *dst = NULL;
  if (!src) return KD_OK;
  KD_ALLOC(*dst, n);
  memcpy(*dst, src, n * sizeof(double));
cleanup:
  return err;
}

kd_err kd_measure_copy(const kd_measure *s, kd_measure *t) {
  kd_err err = KD_OK;
  memset(t, 0, sizeof *t);
  t->type = s->type;
  t->d = s->d;
  t->n_comp = s->n_comp;
  t->grid_n = s->grid_n;
  size_t d = (size_t)s->d, kd = (size_t)s->n_comp * d;
  KD_TRY(kd_dup_arr_(s->lo, d, &t->lo));
  KD_TRY(kd_dup_arr_(s->hi, d, &t->hi));
  KD_TRY(kd_dup_arr_(s->mean, d, &t->mean));
  KD_TRY(kd_dup_arr_(s->sd, d, &t->sd));
  KD_TRY(kd_dup_arr_(s->means, kd, &t->means));
  KD_TRY(kd_dup_arr_(s->sds, kd, &t->sds));
  KD_TRY(kd_dup_arr_(s->mix_w, (size_t)s->n_comp, &t->mix_w));
cleanup:
  if (err) kd_measure_free(t);
  return err;
}

void kd_measure_free(kd_measure *m) {
  if (!m) return;
  free(m->lo);
  free(m->hi);
  free(m->mean);
  free(m->sd);
  free(m->means);
  free(m->sds);
  free(m->mix_w);
  memset(m, 0, sizeof *m);
}

kd_err kd_measure_validate(const kd_measure *m, const char *ctx) {
  kd_err err = KD_OK;
  KD_CHECK(m->d >= 1, KD_ERR_CONFIG, "%s: dimension must be >= 1 (got %d)", ctx, m->d);
  switch (m->type) {
    case KD_MEASURE_TRUNC_GAUSSIAN:
    case KD_MEASURE_GAUSSIAN:
      KD_CHECK(m->mean && m->sd, KD_ERR_CONFIG, "%s: gaussian needs mean and sd", ctx);
      for (int j = 0; j < m->d; j++)
        KD_CHECK(m->sd[j] > 0 && isfinite(m->sd[j]) && isfinite(m->mean[j]), KD_ERR_CONFIG,
                 "%s: sd[%d] must be > 0 and mean finite", ctx, j);
      if (m->type == KD_MEASURE_GAUSSIAN) break;
      KD_CHECK(m->lo && m->hi, KD_ERR_CONFIG, "%s: needs lo and hi", ctx); /* truncation box */
      for (int j = 0; j < m->d; j++)
        KD_CHECK(m->lo[j] < m->hi[j], KD_ERR_CONFIG, "%s: need lo[%d] < hi[%d]", ctx, j, j);
      break;
    case KD_MEASURE_GRID:
    case KD_MEASURE_UNIFORM_BOX:
      KD_CHECK(m->lo && m->hi, KD_ERR_CONFIG, "%s: needs lo and hi", ctx);
      for (int j = 0; j < m->d; j++)
        KD_CHECK(isfinite(m->lo[j]) && isfinite(m->hi[j]) && m->lo[j] < m->hi[j], KD_ERR_CONFIG,
                 "%s: need lo[%d] < hi[%d] (got %g, %g)", ctx, j, j, m->lo[j], m->hi[j]);
      if (m->type == KD_MEASURE_GRID)
        KD_CHECK(m->grid_n >= 1, KD_ERR_CONFIG, "%s: grid needs n per axis >= 1", ctx);
      break;
    case KD_MEASURE_GAUSSIAN_MIXTURE: {
      KD_CHECK(m->n_comp >= 1 && m->means && m->sds && m->mix_w, KD_ERR_CONFIG,
               "%s: gaussian_mixture needs means, sds and weights", ctx);
      double s = 0;
      for (int k = 0; k < m->n_comp; k++) {
        KD_CHECK(m->mix_w[k] >= 0 && isfinite(m->mix_w[k]), KD_ERR_CONFIG,
                 "%s: weight %d must be >= 0", ctx, k);
        s += m->mix_w[k];
        for (int j = 0; j < m->d; j++)
          KD_CHECK(m->sds[k * m->d + j] > 0, KD_ERR_CONFIG, "%s: component %d sd[%d] must be > 0",
                   ctx, k, j);
      }
      KD_CHECK(fabs(s - 1.0) < 1e-9, KD_ERR_CONFIG, "%s: mixture weights sum to %.15g, not 1", ctx,
               s);
      break;
    }
    case KD_MEASURE_SPHERE:
      KD_CHECK(m->d >= 2, KD_ERR_CONFIG, "%s: sphere needs d >= 2", ctx);
      break;
    case KD_MEASURE_TORUS:
      break;
    default:
      KD_FAIL(KD_ERR_CONFIG, "%s: unknown measure", ctx);
  }
cleanup:
  return err;
}

/* Standard normal CDF and its inverse (Acklam's rational approximation + one Halley step). */
static double kd_phi_(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

static double kd_phi_inv_(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double e[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double q, r, x;
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  if (p < 0.02425) {
    q = sqrt(-2 * log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((e[0] * q + e[1]) * q + e[2]) * q + e[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    q = sqrt(-2 * log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((e[0] * q + e[1]) * q + e[2]) * q + e[3]) * q + 1);
  } else {
    q = p - 0.5;
    r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  double err = kd_phi_(x) - p;
  double u = err * sqrt(2 * 3.14159265358979323846) * exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

enum { KD_STREAM_COORD = 1, KD_STREAM_COMP = 2 };

kd_err kd_measure_sample(const kd_measure *m, uint64_t seed, kd_gidx row0, kd_lidx nrows,
                         double *out) {
  kd_err err = KD_OK;
  const int d = m->d;
  for (kd_lidx i = 0; i < nrows; i++) {
    const uint64_t g = (uint64_t)(row0 + i);
    double *x = out + (size_t)i * d;
    switch (m->type) {
      case KD_MEASURE_UNIFORM_BOX:
        for (int j = 0; j < d; j++)
          x[j] =
              m->lo[j] + (m->hi[j] - m->lo[j]) * kd_rng_uniform(seed, KD_STREAM_COORD, g * d + j);
        break;
      case KD_MEASURE_TORUS:
        for (int j = 0; j < d; j++) x[j] = kd_rng_uniform(seed, KD_STREAM_COORD, g * d + j);
        break;
      case KD_MEASURE_GAUSSIAN:
        for (int j = 0; j < d; j++)
          x[j] = m->mean[j] + m->sd[j] * kd_rng_normal(seed, KD_STREAM_COORD, g * d + j);
        break;
      case KD_MEASURE_TRUNC_GAUSSIAN:
        for (int j = 0; j < d; j++) {
          double a = kd_phi_((m->lo[j] - m->mean[j]) / m->sd[j]);
          double b = kd_phi_((m->hi[j] - m->mean[j]) / m->sd[j]);
          double u = kd_rng_uniform_open(seed, KD_STREAM_COORD, g * d + j);
          double z = kd_phi_inv_(a + u * (b - a));
          double v = m->mean[j] + m->sd[j] * z;
          x[j] = v < m->lo[j] ? m->lo[j] : (v > m->hi[j] ? m->hi[j] : v);
        }
        break;
      case KD_MEASURE_GAUSSIAN_MIXTURE: {
        double u = kd_rng_uniform(seed, KD_STREAM_COMP, g), acc = 0.0;
        int k = m->n_comp - 1;
        for (int c = 0; c < m->n_comp; c++) {
          acc += m->mix_w[c];
          if (u < acc) {
            k = c;
            break;
          }
        }
        for (int j = 0; j < d; j++)
          x[j] = m->means[k * d + j] +
                 m->sds[k * d + j] * kd_rng_normal(seed, KD_STREAM_COORD, g * d + j);
        break;
      }
      case KD_MEASURE_SPHERE: {
        double s2 = 0.0;
        for (int j = 0; j < d; j++) {
          x[j] = kd_rng_normal(seed, KD_STREAM_COORD, g * d + j);
          s2 += x[j] * x[j];
        }
        double s = sqrt(s2);
        KD_CHECK(s > 0, KD_ERR_NUMERIC, "sphere sample of row %llu degenerate",
                 (unsigned long long)g);
        for (int j = 0; j < d; j++) x[j] /= s;
        break;
      }
      case KD_MEASURE_GRID: {
        uint64_t rem = g;
        for (int j = d - 1; j >= 0; j--) {
          uint64_t ij = rem % (uint64_t)m->grid_n;
          rem /= (uint64_t)m->grid_n;
          x[j] = m->lo[j] + ((double)ij + 0.5) * (m->hi[j] - m->lo[j]) / (double)m->grid_n;
        }
        KD_CHECK(rem == 0, KD_ERR_INPUT, "grid row %llu beyond grid_n^d points",
                 (unsigned long long)g);
        break;
      }
      default:
        KD_FAIL(KD_ERR_INTERNAL, "measure %s cannot be sampled", kd_measure_name(m->type));
    }
  }
cleanup:
  return err;
}
