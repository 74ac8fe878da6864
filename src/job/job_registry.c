/* job_registry.c - task lookup for the entry points: the task registry of task/ (kd_task_find)
 * followed by the tasks of the layers above it (job/job_tasks.h: the sweep). */
#include "job/job_registry.h"

#include <stdio.h>
#include <string.h>

#define KD_TASK(sym) extern const kd_task_desc sym;
#include "job/job_tasks.h"
#undef KD_TASK

static const kd_task_desc *const kd_job_tasks_[] = {
#define KD_TASK(sym) &sym,
#include "job/job_tasks.h"
#undef KD_TASK
    NULL};

const kd_task_desc *kd_job_task_find(const char *name) {
  const kd_task_desc *t = kd_task_find(name);
  for (int i = 0; !t && kd_job_tasks_[i]; i++)
    if (strcmp(kd_job_tasks_[i]->name, name) == 0) t = kd_job_tasks_[i];
  return t;
}

void kd_job_task_choices(char *buf, int len) {
  kd_task_choices(buf, len);
  for (int i = 0; kd_job_tasks_[i]; i++) {
    size_t l = strlen(buf);
    if (l + 1 >= (size_t)len) break;
    snprintf(buf + l, (size_t)len - l, "%s%s", l ? "|" : "", kd_job_tasks_[i]->name);
  }
}
