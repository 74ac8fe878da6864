"""Leak check: of two rounds of 1,000 calls of kdistill.thin on small data, at least one leaves the
resident set size flat (the C result, the contexts, the borrowed arrays and the ctypes buffers are
all released; a one-off allocation of a library may show in one round), and the whole in-process
call on 2^10 points stays fast. Linux only (/proc/self/statm)."""

import os
import time
import unittest

import numpy as np

import kdistill


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


class LeakTest(unittest.TestCase):
    def test_thin_1000_calls_flat_rss(self):
        X = np.random.default_rng(0).normal(size=(1024, 2))
        for _ in range(100):  # warm up: allocator pools, libraries, the context
            kdistill.thin(X, 32, ls=1.0)
        growth = []
        for rnd in range(2):
            before = rss_kib()
            t0 = time.perf_counter()
            for i in range(1000):
                cs = kdistill.thin(X, 32, ls=1.0, seed=i % 7)
                self.assertEqual(len(cs), 32)
            per_call = (time.perf_counter() - t0) / 1000
            growth.append(rss_kib() - before)
            print("round %d: rss growth over 1000 calls: %d KiB; %.2f ms per call"
                  % (rnd, growth[-1], 1e3 * per_call))
        # 1000 calls each allocating >= 32 x 2 doubles + config text: a leak of one call's
        # buffers per call (> 2 KiB) would add > 2000 KiB in both rounds; a one-off allocation
        # of a library (MPI, the allocator) shows in one round only
        self.assertLess(min(growth), 1024)


if __name__ == "__main__":
    unittest.main()
