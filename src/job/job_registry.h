/* job_registry.h - every task the entry points (kd_job.h) run: the task registry (task/task_list.h)
 * plus the tasks above task/ (job/job_tasks.h: the sweep, which runs other tasks). */
#ifndef KDISTILL_JOB_REGISTRY_H
#define KDISTILL_JOB_REGISTRY_H

#include "kdistill/kd_job.h"
#include "task/task_impl.h"

/** Task by name: the task registry first, then the tasks above task/; NULL if unknown. Local. */
const kd_task_desc *kd_job_task_find(const char *name);
/** The '|'-separated names of every task into buf[len] (task registry order, then the tasks above
 *  task/). Local. */
void kd_job_task_choices(char *buf, int len);

/** For the command line's `kdistill mmd` (not exported): kd_job_mmd with the job's config o, or,
 *  when data_yaml is not NULL, kd_job_mmd_data against that point-set section (o unused); also
 *  saying what the value is: *method 0 exact, 1 estimate, 2 skipped, 3 bounded, and *mmd_err the
 *  estimate's standard error or the bound (0 when exact), as kd_job_mmd_rule_info. Outputs may
 *  be NULL. Collective. */
kd_err kd_job_mmd_file(kd_ctx *ctx, const char *path, const kd_job_opts *o, const char *data_yaml,
                       double *mmd, double *mmd2, double *stored, int *method, double *mmd_err);

#endif
