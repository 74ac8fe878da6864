/* apps_tasks.h - KD_TASK(symbol) lines of the apps family's tasks. */
KD_TASK(kd_task_attention)
KD_TASK(kd_task_reorder)
