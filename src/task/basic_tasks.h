/* basic_tasks.h - herd / thin / quad (task/task_generic.c). */
