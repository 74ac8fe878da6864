/* registry.c - the algorithm registry generated from algo_list.h. */
#include <stdio.h>
#include <string.h>

#include "kdistill/author/kd_algo.h"

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

const kd_algo_desc *kd_algo_find(const char *task, const char *name) {
  for (int i = 0; kd_algos_[i]; i++)
    if (strcmp(kd_algos_[i]->name, name) == 0 && (!task || strcmp(kd_algos_[i]->task, task) == 0))
      return kd_algos_[i];
  return NULL;
}
