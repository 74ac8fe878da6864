/* task_list.h - the task registry: KD_TASK(symbol) lines, one list file per family. */
#include "task/basic_tasks.h"
#include "algo/thinning/thinning_tasks.h"
#include "algo/quadrature/quadrature_tasks.h"
#include "algo/testing/testing_tasks.h"
#include "algo/apps/apps_tasks.h"
#include "sweep/sweep_tasks.h"
