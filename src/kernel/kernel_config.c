/* kernel_config.c - the kernel section of a configuration, read beside the kernel: its name, the
 * length scale (a positive number or 'median', resolved on the data later by
 * kd_kernel_set_median_ls), the median heuristic's sample size, the family's table of keys
 * (kd_kernel_family.keys, stored into kd_kernel_params), and the keys that depend on the data,
 * read by the family's own hook (kd_kernel_family.read_keys): attention's split dk, the deep
 * kernel's dx and ls_phi, the Stein kernel's base, beta and preconditioner. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdistill/author/kd_io.h"
#include "kernel/kernel_impl.h"

static void kd_kernel_choices_(char *buf, size_t len) {
  buf[0] = '\0';
  for (int i = 0; i < KD_KERNEL_COUNT_; i++) {
    size_t l = strlen(buf);
    snprintf(buf + l, len - l, "%s%s", i ? "|" : "", kd_kernel_name((kd_kernel_type)i));
  }
}

kd_err kd_kernel_read_ls(const kd_section *s, const char *name, const char *def, double *ls,
                         int *median) {
  kd_err err = KD_OK;
  const char *v = NULL;
  char key[256], where[512];
  const int can_auto = !strcmp(def, "auto"); /* 'auto' where it is the family's default */
  kd_section_key(s, name, key, sizeof key);
  KD_TRY(kd_config_get_str(s->cfg, key, def, NULL, 0, &v));
  if (!strcmp(v, "median") || (can_auto && !strcmp(v, "auto"))) {
    *median = strcmp(v, "median") ? 2 : 1;
  } else {
    char *end = NULL;
    double x = strtod(v, &end);
    KD_CHECK_KEY(end != v && *end == '\0' && isfinite(x) && x > 0, KD_ERR_CONFIG, key,
                 "%s: %s: expected a positive number or %s, got '%s'",
                 kd_config_where(s->cfg, key, where, sizeof where), key,
                 can_auto ? "'auto' or 'median'" : "'median'", v);
    KD_TRY(kd_config_get_f64(s->cfg, key, 1.0, 1e-300, INFINITY, ls));
  }
cleanup:
  return err;
}

kd_err kd_kernel_read(const kd_section *s, int d, kd_kernel **out) {
  kd_err err = KD_OK;
  char key[256], choices[512];
  const char *name = NULL;
  *out = NULL;
  kd_kernel_choices_(choices, sizeof choices);
  KD_TRY(kd_config_get_str(s->cfg, kd_section_key(s, "name", key, sizeof key), "gaussian", choices,
                           0, &name));
  const kd_kernel_type t = kd_kernel_from_name(name);
  const kd_kernel_family *f = kd_kernel_family_of_(t);
  kd_kernel_params p = kd_kernel_params_default(t);
  if (f->ls_default) {
    KD_TRY(kd_kernel_read_ls(s, "ls", f->ls_default, &p.ls, &p.ls_median));
    KD_TRY(kd_config_get_int(s->cfg, kd_section_key(s, "median_sample", key, sizeof key), 1000, 2,
                             100000000, &p.median_sample));
  }
  if (f->n_keys > 0) {
    kd_params kp = {NULL, 0, NULL};
    KD_TRY(kd_config_get_params(s->cfg, s->prefix, f->keys, f->n_keys, &kp));
    err = kd_params_fill(&kp, &p);
    kd_params_free(&kp);
    KD_TRY(err);
  }
  if (f->read_keys) KD_TRY(f->read_keys(s, d, &p)); /* the keys that depend on the data */
  KD_TRY(kd_kernel_create(&p, d, out));
cleanup:
  return err;
}

/* attention: rows (k, v), split at dk (default d / 2) */
kd_err kd_attention_read_keys_(const kd_section *s, int d, kd_kernel_params *p) {
  kd_err err = KD_OK;
  char key[256], where[512];
  int64_t iv = 0;
  kd_section_key(s, "dk", key, sizeof key);
  KD_CHECK(d >= 2, KD_ERR_CONFIG,
           "%s: %s: the attention kernel needs points (k, v) of dimension >= 2, the data has d = "
           "%d",
           kd_config_where(s->cfg, key, where, sizeof where), key, d);
  KD_TRY(kd_config_get_int(s->cfg, key, d / 2, 1, d - 1, &iv));
  p->dk = (int)iv;
cleanup:
  return err;
}

/* deep: rows (x, phi(x)): the split is the data's, so it has no default */
kd_err kd_deep_read_keys_(const kd_section *s, int d, kd_kernel_params *p) {
  kd_err err = KD_OK;
  char key[256], where[512];
  int64_t iv = 0;
  KD_TRY(kd_kernel_read_ls(s, "ls_phi", "median", &p->ls_phi, &p->ls_phi_median));
  kd_section_key(s, "dx", key, sizeof key);
  KD_CHECK(d >= 2 && kd_config_has(s->cfg, key), KD_ERR_CONFIG,
           "%s: %s: the deep kernel needs the number of input columns of its rows (x, phi(x)): "
           "set %s in 1 .. d-1 (the data has d = %d)",
           kd_config_where(s->cfg, s->prefix, where, sizeof where), key, key, d);
  KD_TRY(kd_config_get_int(s->cfg, key, 1, 1, d - 1, &iv));
  p->dx = (int)iv;
cleanup:
  return err;
}

kd_err kd_energy_read_keys_(const kd_section *s, int d, kd_kernel_params *p) {
  kd_err err = KD_OK;
  (void)p;
  KD_CHECK(d >= 1, KD_ERR_CONFIG, "%s: energy kernel needs d >= 1", s->prefix);
cleanup:
  return err;
}

/* stein: the base kernel, beta, the preconditioner's key (applied on the data later), and the
 * scores the rows must carry (a score subsection of the data or the candidates) */
kd_err kd_stein_read_keys_(const kd_section *s, int d, kd_kernel_params *p) {
  kd_err err = KD_OK;
  char key[256], where[512];
  const char *base = NULL, *pre = NULL;
  KD_TRY(kd_config_get_str(s->cfg, kd_section_key(s, "base", key, sizeof key), "imq",
                           "imq|gaussian|matern52", 0, &base));
  p->base = kd_kernel_from_name(base);
  KD_TRY(kd_config_get_f64(s->cfg, kd_section_key(s, "beta", key, sizeof key), 0.5, 1e-12, 1e6,
                           &p->beta));
  KD_TRY(kd_config_get_str(s->cfg, kd_section_key(s, "precondition", key, sizeof key), "auto",
                           "auto|none|diag|matrix", 0, &pre));
  kd_section_key(s, "name", key, sizeof key);
  KD_CHECK(d % 2 == 0 &&
               (kd_config_has(s->cfg, "data.score") || kd_config_has(s->cfg, "candidates.score")),
           KD_ERR_CONFIG,
           "%s: %s: stein needs the score grad log p at every point: add a score section to the "
           "data (or candidates), e.g. score: {type: hdf5, path: chain.h5, dataset: score}",
           kd_config_where(s->cfg, key, where, sizeof where), key);
cleanup:
  return err;
}
