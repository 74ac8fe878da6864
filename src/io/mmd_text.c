/* mmd_text.c - one wording of a reported MMD and its provenance (/metrics mmd, mmd_method and
 * mmd_se or mmd_bound) for every view that shows it: the run's summary, `kdistill info`; and
 * kdplot (python/kdistill/_kdplot.py) spells the same three forms. */
#include <math.h>
#include <stdio.h>

#include "io/mmd_text.h"

void kd_output_mmd_text(char *buf, size_t cap, int method, double mmd, double err) {
  if (method == 1)
    snprintf(buf, cap,
             "%.6e +- %.1e (estimated from sampled target rows; target.self: exact for the exact "
             "value; /metrics mmd2_minus_self = MMD^2 - zz is exact)",
             mmd, err);
  else if (method == 3)
    snprintf(buf, cap,
             "%.6e +- %.1e (exact to this bound: fast Gauss transform; /metrics mmd2_bound bounds "
             "the error of mmd2)",
             mmd, err);
  else if (method == 2)
    snprintf(buf, cap, "nan (target.self: skip; /metrics mmd2_minus_self = MMD^2 - zz)");
  else if (isnan(mmd))
    snprintf(buf, cap, "nan");
  else
    snprintf(buf, cap, "%.6e (exact)", mmd);
}
