#!/usr/bin/python3
"""gen_mixture_h5.py K - write mK.h5, the input of the kt_compress scale series
(bench/results/scale.md): 2^K rows of the 2-D 8-component Gaussian mixture (means on the circle
of radius 3, unit covariances, equal weights; seed 1234 + K) as the float64 dataset "x", in slabs
of 2^22 rows, written to mK.h5.tmp and renamed into place. Needs numpy and h5py."""
import os
import sys

import h5py
import numpy as np

k = int(sys.argv[1])
n = 1 << k
rng = np.random.default_rng(1234 + k)
ang = np.arange(8) * (2 * np.pi / 8)
mu = 3.0 * np.stack([np.cos(ang), np.sin(ang)], 1)
with h5py.File(f"m{k}.h5.tmp", "w") as f:
    ds = f.create_dataset("x", (n, 2), dtype="f8")
    step = 1 << 22
    for i in range(0, n, step):
        m = min(step, n - i)
        c = rng.integers(0, 8, m)
        ds[i:i + m] = mu[c] + rng.standard_normal((m, 2))
os.replace(f"m{k}.h5.tmp", f"m{k}.h5")
