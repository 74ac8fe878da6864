/* task_list.h - the task registry: KD_TASK(symbol) lines, one list file per family. */
#include "task/basic_tasks.h"
#include "task/thinning_tasks.h"
#include "task/quadrature_tasks.h"
#include "task/testing_tasks.h"
#include "task/apps_tasks.h"
#include "sweep/sweep_tasks.h"
