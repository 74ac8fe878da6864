/* author.h - umbrella header of kdistill's author tier: the abstractions algorithms, kernels and
 * tasks are written over (point sets, kernels, targets, algorithm descriptors, checkpoints, the
 * config reader, logging, the RNG, error macros). These functions are in the static
 * libkdistill.a; the shared libkdistill.so exports only the user tier (kdistill.h). */
#ifndef KDISTILL_AUTHOR_H
#define KDISTILL_AUTHOR_H

#include "kdistill.h"
#include "author/kd_algo.h"
#include "author/kd_check.h"
#include "author/kd_ckpt.h"
#include "author/kd_io.h"
#include "author/kd_kernel.h"
#include "author/kd_pointset.h"
#include "author/kd_target.h"
#include "author/kd_util.h"

#endif
