/* registry.c - the algorithm registry generated from algo_list.h. */
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

int kd_algo_accepts_lazy(const kd_algo_desc *a) {
#define KD_ALGO(sym) \
  if (a == &sym) return 1;
#include "algo/thinning/thinning_list.h"
#undef KD_ALGO
  return 0;
}

const kd_algo_desc *kd_algo_find(const char *task, const char *name) {
  for (int i = 0; kd_algos_[i]; i++)
    if (strcmp(kd_algos_[i]->name, name) == 0 && (!task || strcmp(kd_algos_[i]->task, task) == 0))
      return kd_algos_[i];
  return NULL;
}
