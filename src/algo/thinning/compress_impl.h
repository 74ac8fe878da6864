/* compress_impl.h - single-rank (Local) thinning kernels reused by other families (CTT bins,
 * Thinformer). Implemented in src/algo/thinning/ by the thinning family. All indices are into the
 * caller's row array; randomness is keyed by (seed, stream) so results do not depend on where the
 * call runs. */
#ifndef KDISTILL_COMPRESS_IMPL_H
#define KDISTILL_COMPRESS_IMPL_H

#include "kdistill/author/kd_kernel.h"

/** KT-Compress(delta) of n rows X[n*d] (Local): returns n_out = 2^g * sqrt(n) rows (n a power of 4
 *  times 4^g... see the implementation for the exact size rule and the handling of n not a power
 *  of 4) as indices idx[0..*n_out) into X, distinct. idx must hold n entries. */
kd_err kd_thin_kt_compress_local(kd_kernel *k, const double *X, kd_lidx n, int d, int g,
                                 double delta, uint64_t seed, uint64_t stream, kd_lidx *idx,
                                 kd_lidx *n_out);
/** KH-Compress(delta) of n rows (Local), same contract (used by Thinformer). */
kd_err kd_thin_kh_compress_local(kd_kernel *k, const double *X, kd_lidx n, int d, int g,
                                 double delta, uint64_t seed, uint64_t stream, kd_lidx *idx,
                                 kd_lidx *n_out);

#endif
