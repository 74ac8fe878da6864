/* thinning_tasks.h - KD_TASK(symbol) lines of the thinning family's tasks. The `thin` task itself
 * is the generic one (task/task_generic.c); the thinning algorithms register as KD_ALGO lines in
 * thinning_list.h. */
