/* job_registry.h - every task the entry points (kd_job.h) run: the task registry (task/task_list.h)
 * plus the tasks above task/ (job/job_tasks.h: the sweep, which runs other tasks). */
#ifndef KDISTILL_JOB_REGISTRY_H
#define KDISTILL_JOB_REGISTRY_H

#include "task/task_impl.h"

/** Task by name: the task registry first, then the tasks above task/; NULL if unknown. Local. */
const kd_task_desc *kd_job_task_find(const char *name);
/** The '|'-separated names of every task into buf[len] (task registry order, then the tasks above
 *  task/). Local. */
void kd_job_task_choices(char *buf, int len);

#endif
