/* apps_tasks.h - KD_TASK(symbol) lines of the apps family's tasks. */
