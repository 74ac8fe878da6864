/* mem.h - the memory a rank may use, and the up-front refusal of a run that needs more
 * (docs/reliability.md). Local. */
#ifndef KD_CORE_MEM_H
#define KD_CORE_MEM_H
#include <stdint.h>

#include "kdistill/author/kd_check.h"

/** Bytes this process may use: the smallest of $KD_MEMORY_LIMIT (a number with an optional
 *  K/M/G/T suffix), the cgroup limit (v2 memory.max, v1 memory.limit_in_bytes), what an
 *  address-space limit (ulimit -v) leaves and MemAvailable
 *  from /proc/meminfo. *what names the source. 0 when none is known (no limit). Local. */
uint64_t kd_mem_available(const char **what);

/** Fail with KD_ERR_MEM (exit 2) when a rank needs more than kd_mem_available (a need of at most
 *  1 MiB: more than $KD_MEMORY_LIMIT; the system's limits are not read for it): one line saying
 *  how much is needed for `what`, how much is available and from where, and to use more ranks or a
 *  smaller `size_key`. need == UINT64_MAX means "more than can be addressed". Local. */
kd_err kd_mem_require(uint64_t need, const char *what, const char *size_key);

#endif
