/* quadrature_tasks.h - KD_TASK(symbol) lines of the quadrature family's tasks. */
KD_TASK(kd_task_recombine)
