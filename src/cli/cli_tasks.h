/* cli_tasks.h - the CLI's task list: every task of the task registry (task/task_list.h) plus the
 * tasks of the layers above task/, which run other tasks and so cannot be registered in task/
 * (layer order: ... <- task <- cli/sweep). KD_TASK(symbol) lines, one list file per family. */
#include "sweep/sweep_tasks.h"
