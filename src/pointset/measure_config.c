/* measure_config.c - a measure's section of a configuration (data, target, x, y, a score's
 * measure), read beside the measure: its type, dimension, per-coordinate vectors (a single number
 * or a one-element list broadcasts), a mixture's components, a grid's size; then
 * kd_measure_validate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "io/io_impl.h"
#include "kdistill/author/kd_io.h"
#include "kdistill/author/kd_pointset.h"

/* A per-coordinate vector key: absent -> default broadcast (inserted as a list of length d);
 * a single number or a list of length 1 broadcasts (a one-element list sets d = 1 unless d or a
 * longer list says otherwise: kd_vec_len_); otherwise the length must be d. */
static kd_err kd_read_vec_(const kd_section *s, const char *name, int d, double def, double lo,
                           double hi, double **out) {
  kd_err err = KD_OK;
  char key[256], where[512];
  double *v = NULL, *in = NULL;
  int n = 0;
  *out = NULL;
  kd_section_key(s, name, key, sizeof key);
  KD_ALLOC(v, d);
  KD_TRY(kd_config_get_f64_list(s->cfg, key, 0, &n, &in));
  if (n == 0) {
    for (int j = 0; j < d; j++) v[j] = def;
    KD_TRY(kd_config_default_f64_list(s->cfg, key, d, v));
  } else {
    KD_CHECK(n == 1 || n == d, KD_ERR_CONFIG, "%s: %s: has %d values but d = %d",
             kd_config_where(s->cfg, key, where, sizeof where), key, n, d);
    for (int j = 0; j < d; j++) {
      v[j] = in[n == 1 ? 0 : j];
      KD_CHECK(v[j] >= lo && v[j] <= hi, KD_ERR_CONFIG, "%s: %s: value %g is out of range",
               kd_config_where(s->cfg, key, where, sizeof where), key, v[j]);
    }
  }
  *out = v;
  v = NULL;
cleanup:
  free(v);
  free(in);
  return err;
}

/* Length of a vector key if it is a list, one-element lists included (0 for a number or when
 * absent: those broadcast to whatever d is). Without d, the longest list gives d. */
static int kd_vec_len_(const kd_section *s, const char *name) {
  char key[256];
  kd_section_key(s, name, key, sizeof key);
  return kd_config_count(s->cfg, key);
}

/* The gaussian_mixture keys of a measure section: means (lists), sds, weights, d. */
static kd_err kd_read_mixture_(const kd_section *sec, kd_measure *m) {
  kd_config *cfg = sec->cfg;
  const char *section = sec->prefix;
  kd_err err = KD_OK;
  char key[256], sub[300], where[512];
  double *tmp = NULL;
  int64_t iv = 0;
  kd_section_key(sec, "means", key, sizeof key);
  int nc = kd_config_count(cfg, key);
  KD_CHECK(nc >= 1, KD_ERR_CONFIG, "%s: %s: required: a list of component means (lists)",
           kd_config_where(cfg, key, where, sizeof where), key);
  snprintf(sub, sizeof sub, "%s.0", key);
  int d0 = 0;
  KD_TRY(kd_config_get_f64_list(cfg, sub, 1, &d0, &tmp));
  free(tmp);
  tmp = NULL;
  kd_section_key(sec, "d", key, sizeof key);
  KD_TRY(kd_config_get_int(cfg, key, d0, d0, d0, &iv));
  const int d = (int)iv;
  m->d = d;
  m->n_comp = nc;
  KD_ALLOC(m->means, (size_t)nc * d);
  KD_ALLOC(m->sds, (size_t)nc * d);
  KD_ALLOC(m->mix_w, nc);
  for (int c = 0; c < nc; c++) {
    int n = 0;
    snprintf(sub, sizeof sub, "%s.means.%d", section, c);
    KD_TRY(kd_config_get_f64_list(cfg, sub, 1, &n, &tmp));
    KD_CHECK(n == d, KD_ERR_CONFIG, "%s: %s: has %d values, component 0 has %d",
             kd_config_where(cfg, sub, where, sizeof where), sub, n, d);
    memcpy(m->means + (size_t)c * d, tmp, (size_t)d * sizeof(double));
    free(tmp);
    tmp = NULL;
  }
  kd_section_key(sec, "sds", key, sizeof key);
  int ns = kd_config_count(cfg, key);
  if (!kd_config_has(cfg, key)) {
    double one = 1.0;
    KD_TRY(kd_config_get_f64(cfg, key, one, 1e-300, INFINITY, &one));
    for (size_t i = 0; i < (size_t)nc * d; i++) m->sds[i] = 1.0;
  } else if (ns == 0) {
    double s = 1.0;
    KD_TRY(kd_config_get_f64(cfg, key, 1.0, 1e-300, INFINITY, &s));
    for (size_t i = 0; i < (size_t)nc * d; i++) m->sds[i] = s;
  } else {
    KD_CHECK(ns == nc, KD_ERR_CONFIG, "%s: %s: has %d entries for %d components",
             kd_config_where(cfg, key, where, sizeof where), key, ns, nc);
    for (int c = 0; c < nc; c++) {
      int n = 0;
      snprintf(sub, sizeof sub, "%s.sds.%d", section, c);
      KD_TRY(kd_config_get_f64_list(cfg, sub, 1, &n, &tmp));
      KD_CHECK(n == 1 || n == d, KD_ERR_CONFIG, "%s: %s: has %d values but d = %d",
               kd_config_where(cfg, sub, where, sizeof where), sub, n, d);
      for (int j = 0; j < d; j++) m->sds[(size_t)c * d + j] = tmp[n == 1 ? 0 : j];
      free(tmp);
      tmp = NULL;
    }
  }
  kd_section_key(sec, "weights", key, sizeof key);
  int nw = 0;
  KD_TRY(kd_config_get_f64_list(cfg, key, 0, &nw, &tmp));
  if (nw == 0) {
    for (int c = 0; c < nc; c++) m->mix_w[c] = 1.0 / nc;
    KD_TRY(kd_config_default_f64_list(cfg, key, nc, m->mix_w));
  } else {
    KD_CHECK(nw == nc, KD_ERR_CONFIG, "%s: %s: has %d values for %d components",
             kd_config_where(cfg, key, where, sizeof where), key, nw, nc);
    double s = 0;
    for (int c = 0; c < nc; c++) s += tmp[c];
    KD_CHECK(s > 0, KD_ERR_CONFIG, "%s: %s: must have a positive sum",
             kd_config_where(cfg, key, where, sizeof where), key);
    for (int c = 0; c < nc; c++) m->mix_w[c] = tmp[c] / s;
  }
cleanup:
  free(tmp);
  return err;
}

kd_err kd_measure_read(const kd_section *s, int d_default, kd_measure *m) {
  kd_err err = KD_OK;
  kd_config *cfg = s->cfg;
  const char *section = s->prefix;
  char key[256];
  const char *type = NULL;
  int64_t iv = 0;
  memset(m, 0, sizeof *m);
  kd_section_key(s, "type", key, sizeof key);
  KD_TRY(kd_config_get_str(cfg, key, NULL, KD_MEASURE_CHOICES, 1, &type));
  m->type = kd_measure_from_name(type);
  if (m->type == KD_MEASURE_GAUSSIAN_MIXTURE) {
    KD_TRY(kd_read_mixture_(s, m));
  } else {
    int dl = 0;
    static const char *const vecs[] = {"lo", "hi", "mean", "sd"};
    for (int i = 0; i < 4; i++) {
      int l = kd_vec_len_(s, vecs[i]);
      if (l > dl) dl = l;
    }
    const int ddef =
        dl > 0 ? dl : (d_default > 0 ? d_default : (m->type == KD_MEASURE_SPHERE ? 3 : 2));
    kd_section_key(s, "d", key, sizeof key);
    KD_TRY(kd_config_get_int(cfg, key, ddef, 1, 1000000, &iv));
    const int d = (int)iv;
    m->d = d;
    switch (m->type) {
      case KD_MEASURE_UNIFORM_BOX:
      case KD_MEASURE_GRID:
        KD_TRY(kd_read_vec_(s, "lo", d, 0.0, -INFINITY, INFINITY, &m->lo));
        KD_TRY(kd_read_vec_(s, "hi", d, 1.0, -INFINITY, INFINITY, &m->hi));
        if (m->type == KD_MEASURE_GRID) {
          kd_section_key(s, "grid_n", key, sizeof key);
          KD_TRY(kd_config_get_int(cfg, key, 10, 1, 100000000, &m->grid_n));
        }
        break;
      case KD_MEASURE_GAUSSIAN:
      case KD_MEASURE_TRUNC_GAUSSIAN:
        KD_TRY(kd_read_vec_(s, "mean", d, 0.0, -INFINITY, INFINITY, &m->mean));
        KD_TRY(kd_read_vec_(s, "sd", d, 1.0, 1e-300, INFINITY, &m->sd));
        if (m->type == KD_MEASURE_TRUNC_GAUSSIAN) {
          KD_TRY(kd_read_vec_(s, "lo", d, -1.0, -INFINITY, INFINITY, &m->lo));
          KD_TRY(kd_read_vec_(s, "hi", d, 1.0, -INFINITY, INFINITY, &m->hi));
        }
        break;
      default:
        break;
    }
  }
  KD_TRY(kd_measure_validate(m, section));
cleanup:
  if (err) kd_measure_free(m);
  return err;
}
