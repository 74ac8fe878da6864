/* job_tasks.h - the tasks of the layers above task/, which run other tasks and so cannot be
 * registered in task/ (layer order: ... <- task <- sweep, job <- cli); the entry points (job/job.c)
 * look them up after the task registry (task/task_list.h). KD_TASK(symbol) lines. */
/* the sweep (sweep/sweep.c, issue 7) */
KD_TASK(kd_task_sweep)
