/* task_list.h - the task registry: KD_TASK(symbol) lines, one list file per family. Only tasks of
 * task/ are listed here; tasks of a higher layer (the sweep, which runs other tasks) register in
 * the job layer (job/job_tasks.h). */
#include "task/basic_tasks.h"
#include "task/thinning_tasks.h"
#include "task/quadrature_tasks.h"
#include "task/testing_tasks.h"
#include "task/apps_tasks.h"
