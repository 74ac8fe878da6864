/* sweep_tasks.h - KD_TASK(symbol) lines of the sweep task (issue 7). */
