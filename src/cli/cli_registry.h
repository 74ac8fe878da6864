/* cli_registry.h - the tasks `kdistill run` knows: the task registry (task/task_list.h) plus the
 * tasks above task/ (cli/cli_tasks.h). */
#ifndef KDISTILL_CLI_REGISTRY_H
#define KDISTILL_CLI_REGISTRY_H

#include "task/task_impl.h"

/** Task by name: the task registry first, then the CLI's own list; NULL if unknown. Local. */
const kd_task_desc *kd_cli_task_find(const char *name);
/** The '|'-separated names of every task the CLI runs into buf[len] (task registry order, then
 *  the CLI's own list). Local. */
void kd_cli_task_choices(char *buf, int len);

#endif
