/* clones.h - multi-versioned hot loops: AVX-512 / AVX2+FMA / baseline, chosen at load time. The
 * versions compute identical bits (explicit fma(), lane-wise IEEE operations), only faster. */
#ifndef KDISTILL_CLONES_H
#define KDISTILL_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define KD_KCLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KD_KCLONES
#endif

#endif
