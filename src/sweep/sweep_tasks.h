/* sweep_tasks.h - KD_TASK(symbol) lines of the sweep task (issue 7; src/sweep/sweep.c). */
KD_TASK(kd_task_sweep)
