/* basic_tasks.h - herd / thin / quad (task/task_generic.c). */
KD_TASK(kd_task_herd)
KD_TASK(kd_task_thin)
KD_TASK(kd_task_quad)
