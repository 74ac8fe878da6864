/* thinning_tasks.h - KD_TASK(symbol) lines of the thinning family's tasks. */
