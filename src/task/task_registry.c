/* task_registry.c - the task registry generated from task_list.h (KD_TASK lines). */
#include <stdio.h>
#include <string.h>

#include "task/task_impl.h"

#define KD_TASK(sym) extern const kd_task_desc sym;
#include "task/task_list.h"
#undef KD_TASK

static const kd_task_desc *const kd_tasks_[] = {
#define KD_TASK(sym) &sym,
#include "task/task_list.h"
#undef KD_TASK
    NULL};

const kd_task_desc *kd_task_at(int i) {
  int n = (int)(sizeof kd_tasks_ / sizeof kd_tasks_[0]) - 1;
  return (i >= 0 && i < n) ? kd_tasks_[i] : NULL;
}

const kd_task_desc *kd_task_find(const char *name) {
  for (int i = 0; kd_tasks_[i]; i++)
    if (strcmp(kd_tasks_[i]->name, name) == 0) return kd_tasks_[i];
  return NULL;
}

void kd_task_resumable_names(char *buf, int len) {
  int n = 0, k = 0;
  for (int i = 0; kd_tasks_[i]; i++) n += kd_tasks_[i]->can_resume != 0;
  buf[0] = '\0';
  for (int i = 0; kd_tasks_[i]; i++) {
    if (!kd_tasks_[i]->can_resume) continue;
    size_t l = strlen(buf);
    const char *sep = k == 0 ? "" : (k == n - 1 ? " and " : ", ");
    snprintf(buf + l, (size_t)len - l, "%s%s", sep, kd_tasks_[i]->name);
    k++;
  }
}
