/* kdistill.h - umbrella header of the kdistill public API. */
#ifndef KDISTILL_KDISTILL_H
#define KDISTILL_KDISTILL_H

#include "kd_algo.h"
#include "kd_ckpt.h"
#include "kd_data.h"
#include "kd_ctx.h"
#include "kd_err.h"
#include "kd_io.h"
#include "kd_job.h"
#include "kd_kernel.h"
#include "kd_pointset.h"
#include "kd_target.h"
#include "kd_types.h"

#endif
