/* testing_tasks.h - KD_TASK(symbol) lines of the testing family's tasks. */
