/* rng.c - counter-based random numbers: a keyed mix of (seed, stream, counter) through two rounds
 * of the SplitMix64 finaliser (a bijection on 64 bits), so every draw is a pure function of its key
 * and the numbers do not depend on how rows are split over ranks. */
#include <math.h>

#include "kdistill/author/kd_util.h"

static uint64_t kd_mix64_(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t kd_rng_u64(uint64_t seed, uint64_t stream, uint64_t counter) {
  uint64_t k = kd_mix64_(seed + 0x9e3779b97f4a7c15ULL);
  k = kd_mix64_(k ^ (stream * 0xd1b54a32d192ed03ULL + 0x8cb92ba72f3d8dd7ULL));
  return kd_mix64_(k ^ kd_mix64_(counter + 0x632be59bd9b4e019ULL));
}

double kd_rng_uniform(uint64_t seed, uint64_t stream, uint64_t counter) {
  return (double)(kd_rng_u64(seed, stream, counter) >> 11) * 0x1.0p-53;
}

double kd_rng_uniform_open(uint64_t seed, uint64_t stream, uint64_t counter) {
  return ((double)(kd_rng_u64(seed, stream, counter) >> 12) + 0.5) * 0x1.0p-52;
}

double kd_rng_normal(uint64_t seed, uint64_t stream, uint64_t counter) {
  double u1 = kd_rng_uniform_open(seed, stream, 2 * counter);
  double u2 = kd_rng_uniform(seed, stream, 2 * counter + 1);
  return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

kd_rng kd_rng_make(uint64_t seed, uint64_t stream) {
  kd_rng r;
  r.seed = seed;
  r.stream = stream;
  r.counter = 0;
  return r;
}

uint64_t kd_rng_next_u64(kd_rng *r) { return kd_rng_u64(r->seed, r->stream, r->counter++); }

double kd_rng_next_uniform(kd_rng *r) { return kd_rng_uniform(r->seed, r->stream, r->counter++); }

double kd_rng_next_normal(kd_rng *r) { return kd_rng_normal(r->seed, r->stream, r->counter++); }

uint64_t kd_rng_next_below(kd_rng *r, uint64_t n) {
  if (n <= 1) return 0;
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  for (;;) {
    uint64_t x = kd_rng_next_u64(r);
    if (x < limit) return x % n;
  }
}
