/* test_pair_order.c - `pairing: local` (pairing.c) keeps its order: the permutation of
 * kd_thin_pair_local on seven fixed inputs (uniform rows at d = 1, 2, 3, a count that is not a
 * power of two, and rows of small integers with many ties and zeros of both signs) hashes to the
 * value the first implementation gave. The order fixes which point of a pair is which, so every
 * coreset of a halving with local pairing depends on it: a faster selection must give the same
 * arrangement, not only the same pairs. Also: the result is a permutation, and the zeros of either
 * sign tie (swapping the signs of the zeros does not change the order). Serial.
 * (A branch-free Lomuto partition with the same arrangement was tried on 2026-11-29: 1.2x faster
 * on random rows, no faster inside Compress, whose inputs arrive nearly in k-d order.) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "algo/thinning/thin_impl.h"
#include "kd_test.h"

/* the data: a 64-bit LCG (Knuth's MMIX constants), its top 53 bits as a uniform in [0, 1) */
static uint64_t test_lcg_(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s;
}

static double test_unif_(uint64_t *s) { return (double)(test_lcg_(s) >> 11) * 0x1p-53; }

/* kind 0: uniform in [-1, 1); kind 1: the integers -2..2, each zero +0.0 or -0.0 at random */
static void test_fill_(double *X, kd_lidx m, int kind, uint64_t seed) {
  uint64_t s = seed;
  for (kd_lidx i = 0; i < m; i++) {
    if (kind == 0) {
      X[i] = 2.0 * test_unif_(&s) - 1.0;
    } else {
      X[i] = (double)(int)(5.0 * test_unif_(&s)) - 2.0;
      if (X[i] == 0.0 && test_unif_(&s) < 0.5) X[i] = -0.0;
    }
  }
}

static uint64_t test_fnv_(const kd_lidx *p, kd_lidx n) {
  uint64_t h = 1469598103934665603ULL;
  for (kd_lidx i = 0; i < n; i++) {
    h ^= (uint64_t)p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

int main(int argc, char **argv) {
  kd_test_init(&argc, &argv);
  static const struct {
    kd_lidx n;
    int d, kind;
    uint64_t hash;
  } cs[] = {
      {4096, 1, 0, 0x29096b46bff5d7d1ULL}, {4096, 2, 0, 0x1d80e7b679e9a0f5ULL},
      {2048, 3, 0, 0x0d1ac3b96aa479f9ULL}, {1000, 2, 0, 0x712bceda50959f17ULL},
      {1024, 2, 1, 0xfc4f58f146921363ULL}, {1024, 1, 1, 0xe3e532c4c5ee93f1ULL},
      {512, 3, 1, 0x87841e83ee177859ULL},
  };
  for (int c = 0; c < (int)(sizeof cs / sizeof cs[0]); c++) {
    const kd_lidx n = cs[c].n, m = n * cs[c].d;
    double *X = malloc(sizeof(double) * (size_t)m);
    kd_lidx *p = malloc(sizeof(kd_lidx) * (size_t)n), *q = malloc(sizeof(kd_lidx) * (size_t)n);
    char *seen = calloc((size_t)n, 1);
    test_fill_(X, m, cs[c].kind, 1000 + (uint64_t)c);
    KD_TEST_OK(kd_thin_pair_local(X, n, cs[c].d, p));
    KD_TEST(test_fnv_(p, n) == cs[c].hash, "case %d (n %lld, d %d, kind %d): order hash %016llx", c,
            (long long)n, cs[c].d, cs[c].kind, (unsigned long long)test_fnv_(p, n));
    int perm = 1;
    for (kd_lidx i = 0; i < n; i++) {
      if (p[i] < 0 || p[i] >= n || seen[p[i]]) perm = 0;
      if (p[i] >= 0 && p[i] < n) seen[p[i]] = 1;
    }
    KD_TEST(perm, "case %d: not a permutation of the rows", c);
    if (cs[c].kind == 1) { /* zeros of either sign tie: flipping their signs keeps the order */
      for (kd_lidx i = 0; i < m; i++)
        if (X[i] == 0.0) X[i] = signbit(X[i]) ? 0.0 : -0.0;
      KD_TEST_OK(kd_thin_pair_local(X, n, cs[c].d, q));
      KD_TEST(memcmp(p, q, sizeof(kd_lidx) * (size_t)n) == 0,
              "case %d: the signs of the zeros changed the order", c);
    }
    free(X), free(p), free(q), free(seen);
  }
  return kd_test_finish();
}
