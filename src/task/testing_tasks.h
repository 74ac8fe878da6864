/* testing_tasks.h - KD_TASK(symbol) lines of the testing family's tasks (ctt_task.c). */
KD_TASK(kd_task_ctt)
KD_TASK(kd_task_ctt_study)
