/* kd_spec.h - a job's configuration built in memory with typed values: how a C program runs a
 * job without writing YAML. A spec is a list of settings, each a dotted key of the configuration
 * (docs/config.md lists every key) with a value of its type; kd_job_opts.spec hands it to
 * kd_job_run, kd_job_validate, kd_job_mmd_rule and the others (kd_job.h):
 *
 *   kd_spec *s = NULL;
 *   kd_spec_create("thin", &s);
 *   kd_spec_set_text(s, "data.type", "memory");
 *   kd_spec_set_text(s, "data.name", "X");        // the kd_data_array named X (kd_data.h)
 *   kd_spec_set_text(s, "algorithm.name", "kt_compress");
 *   kd_spec_set_int(s, "algorithm.n_out", 64);
 *   kd_spec_set_real(s, "kernel.ls", 0.5);
 *   kd_job_opts o = {.spec = s, .arrays = &x, .n_arrays = 1, .no_output = 1};
 *   err = kd_job_run(ctx, &o, &summary, &result);
 *   kd_spec_destroy(&s);
 *
 * The job checks the values as it checks a file's: unknown keys, types, ranges and choices are
 * configuration errors whose message names the key (kd_ctx_message, kd_ctx_error_key). With a
 * configuration file or text as well, the spec's settings override it after o->sets, in the
 * order they were made. Every rank builds the same spec. A spec is not shared between threads
 * while it is being changed; jobs only read it. */
#ifndef KDISTILL_KD_SPEC_H
#define KDISTILL_KD_SPEC_H

#include <stdint.h>

#include "kd_api.h"
#include "kd_err.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The typed settings of one job. Opaque. */
typedef struct kd_spec kd_spec;

/** A new spec for the task `task` ("thin", "herd", "quad", "mmd", ...; NULL: the task comes from
 *  a setting "task" or from a configuration given beside the spec). Local.
 *  Errors: KD_ERR_MEM; KD_ERR_ARG (an empty task name). */
KD_API kd_err kd_spec_create(const char *task, kd_spec **out);
/** The name messages give the spec's settings ("kd_spec: algorithm.n_out = ..."): a program's
 *  or binding's own, e.g. "<python>" (default "kd_spec"). Copied. Local.
 *  Errors: KD_ERR_ARG (NULL or empty name); KD_ERR_MEM. */
KD_API kd_err kd_spec_set_name(kd_spec *spec, const char *name);
/** Free a spec and set *spec to NULL; accepts NULL. Local. */
KD_API void kd_spec_destroy(kd_spec **spec);

/** Set the key (dotted, e.g. "algorithm.n_out") to a value of a type. A later setting of the same
 *  key replaces an earlier one; a key under another (e.g. "kernel" then "kernel.ls") replaces the
 *  value at the section. Text stays text whatever its characters (a path with quotes or '#').
 *  Local. Errors (also kept in the spec: a job given the spec fails with the first of them):
 *  KD_ERR_ARG for a key that is not a key path (letters, digits, '_', '-', '.'), a NULL text, a
 *  real that is not finite; KD_ERR_CONFIG for a key below a value (e.g. "kernel.ls.x" after
 *  "kernel.ls"); KD_ERR_MEM. */
KD_API kd_err kd_spec_set_int(kd_spec *spec, const char *key, int64_t value);
KD_API kd_err kd_spec_set_real(kd_spec *spec, const char *key, double value);
KD_API kd_err kd_spec_set_bool(kd_spec *spec, const char *key, int value);
KD_API kd_err kd_spec_set_text(kd_spec *spec, const char *key, const char *value);
/** A list of reals: `rows` values (cols 0), e.g. data.mean, or `rows` lists of `cols` values
 *  stored row-major in values[rows * cols], e.g. a mixture's means. Values copied. Local.
 *  Errors: as the scalar setters; KD_ERR_ARG for rows < 1, cols < 0 or a value not finite. */
KD_API kd_err kd_spec_set_reals(kd_spec *spec, const char *key, const double *values, int64_t rows,
                                int cols);

#ifdef __cplusplus
}
#endif
#endif
