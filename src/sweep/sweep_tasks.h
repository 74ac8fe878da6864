/* sweep_tasks.h - KD_TASK(symbol) lines of the sweep task (issue 7; src/sweep/sweep.c). Listed in
 * job/job_tasks.h, not in task/task_list.h: the sweep runs other tasks, so it sits above task/. */
KD_TASK(kd_task_sweep)
