/* kd_output.h - reading a kdistill output file back, releasing what the library allocated, and
 * the sizes of the structs a binding mirrors (user tier). */
#ifndef KDISTILL_KD_OUTPUT_H
#define KDISTILL_KD_OUTPUT_H

#include <stddef.h>

#include "kd_api.h"
#include "kd_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Read an output file back (coreset, metrics, trace; extras not read). meta strings are
 *  malloc'ed into *yaml_out / *algo_out etc. when non-NULL (caller frees with kd_free). Local. */
KD_API kd_err kd_output_read(const char *path, kd_result *res, char **config_yaml, char **task,
                             char **algorithm);

/** free() for memory the library allocated and handed over (the strings of kd_output_read and
 *  kd_job_validate, ...): a binding that loads the library cannot know which C runtime's free
 *  matches. Accepts NULL. Local. */
KD_API void kd_free(void *p);

/** sizeof of a public struct a binding mirrors, by name: "kd_result", "kd_result_metric",
 *  "kd_result_dataset", "kd_job_opts", "kd_job_summary", "kd_data_array"; 0 for any other name.
 *  A binding compares these with its own layouts when it loads the library. Local. */
KD_API size_t kd_abi_sizeof(const char *name);

#ifdef __cplusplus
}
#endif
#endif
