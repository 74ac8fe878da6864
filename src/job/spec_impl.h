/* spec_impl.h - what the job layer does with a kd_spec (include/kdistill/kd_spec.h). */
#ifndef KD_JOB_SPEC_IMPL_H
#define KD_JOB_SPEC_IMPL_H

#include "kdistill/author/kd_io.h"
#include "kdistill/kd_spec.h"

/** Apply the spec's settings, in order, to cfg (a configuration loaded from a file or text, or a
 *  kd_config_new one); the first error a setting met when it was made is returned instead, with
 *  its message. Local. */
kd_err kd_spec_apply(const kd_spec *spec, kd_config *cfg);
/** The name of a configuration made from the spec alone (kd_spec_set_name). Local. */
const char *kd_spec_name(const kd_spec *spec);

#endif
