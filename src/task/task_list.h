/* task_list.h - the task registry: KD_TASK(symbol) lines. A family of three or more tasks keeps its
 * own list file, included here; smaller ones are listed here directly. Only tasks of task/ are
 * listed here; tasks of a higher layer (the sweep, which runs other tasks) register in the job
 * layer (job/job_tasks.h). The thinning algorithms run under the generic `thin` task. */
#include "task/basic_tasks.h"
/* quadrature: recombination of a given point set (recombine_task.c) */
KD_TASK(kd_task_recombine)
/* two-sample tests (ctt_task.c) */
KD_TASK(kd_task_ctt)
KD_TASK(kd_task_ctt_study)
/* apps: the Thinformer and thinned SGD reordering (attention_task.c, reorder_task.c) */
KD_TASK(kd_task_attention)
KD_TASK(kd_task_reorder)
