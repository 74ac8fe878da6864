/* kdistill.h - umbrella header of the kdistill user API: contexts, jobs, in-memory inputs,
 * results and output files. Everything declared here is exported by libkdistill.so (KD_API).
 * Code that extends the library (algorithms, kernels, tasks) includes kdistill/author.h. */
#ifndef KDISTILL_KDISTILL_H
#define KDISTILL_KDISTILL_H

#include "kd_api.h"
#include "kd_build.h"
#include "kd_ctx.h"
#include "kd_data.h"
#include "kd_err.h"
#include "kd_job.h"
#include "kd_output.h"
#include "kd_result.h"
#include "kd_spec.h"
#include "kd_types.h"

#endif
