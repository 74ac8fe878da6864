/* registry.c - the algorithm registry generated from algo_list.h. */
#include <stdio.h>
#include <string.h>

#include "kdistill/author/kd_algo.h"
#include "kdistill/author/kd_check.h"
#include "kdistill/author/kd_pointset.h"

#define KD_ALGO(sym) extern const kd_algo_desc sym;
#include "algo/algo_list.h"
#undef KD_ALGO

static const kd_algo_desc *const kd_algos_[] = {
#define KD_ALGO(sym) &sym,
#include "algo/algo_list.h"
#undef KD_ALGO
    NULL};

const kd_algo_desc *kd_algo_at(int i) {
  int n = (int)(sizeof kd_algos_ / sizeof kd_algos_[0]) - 1;
  return (i >= 0 && i < n) ? kd_algos_[i] : NULL;
}

int kd_algo_accepts_lazy(const kd_algo_desc *a) { return a && (a->flags & KD_ALGO_LAZY_INPUT); }

const char *kd_algo_names_with(const char *task, unsigned flags, char *buf, int len) {
  int used = 0;
  if (len > 0) buf[0] = '\0';
  for (int i = 0; kd_algos_[i] && len > 0; i++) {
    const kd_algo_desc *a = kd_algos_[i];
    if ((a->flags & flags) != flags || (task && strcmp(a->task, task))) continue;
    int w = snprintf(buf + used, (size_t)(len - used), "%s%s", used ? ", " : "", a->name);
    if (w < 0 || w >= len - used) break;
    used += w;
  }
  return buf;
}

kd_err kd_algo_check_n_out(const kd_algo_desc *desc, const kd_params *p, kd_gidx n_in) {
  kd_err err = KD_OK;
  int64_t n_out = 0;
  char key[160];
  const int i = kd_params_role_i64(p, KD_PARAM_ROLE_N_OUT, &n_out);
  if (!(desc->flags & KD_ALGO_N_OUT) || i < 0) return KD_OK;
  snprintf(key, sizeof key, "algorithm.%s", p->spec[i].key);
  KD_CHECK_KEY(n_out <= n_in, KD_ERR_CONFIG, key, "%s = %lld exceeds the %lld input points", key,
               (long long)n_out, (long long)n_in);
cleanup:
  return err;
}

kd_err kd_algo_run(const kd_algo_desc *desc, const kd_algo_in *in, kd_result *out) {
  kd_err err = KD_OK;
  if (desc->flags & KD_ALGO_N_OUT)
    KD_TRY(kd_algo_check_n_out(desc, in->params, kd_pointset_n_global(in->points)));
  KD_TRY(desc->run(in, out));
cleanup:
  return err;
}

const kd_algo_desc *kd_algo_find(const char *task, const char *name) {
  for (int i = 0; kd_algos_[i]; i++)
    if (strcmp(kd_algos_[i]->name, name) == 0 && (!task || strcmp(kd_algos_[i]->task, task) == 0))
      return kd_algos_[i];
  return NULL;
}
