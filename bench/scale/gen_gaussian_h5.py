#!/usr/bin/python3
"""gen_gaussian_h5.py K D - write the inputs of the 2^K x D scale runs (bench/results/scale.md):
xK_D.h5 with 2^K rows of N(0, I_D) (seed 1) and yK_D.h5 with N(0.02 e_1, I_D) (seed 2), each as
the float64 dataset "x", in slabs of 2^20 rows (memory stays small). Needs numpy and h5py."""
import sys

import h5py
import numpy as np

k, d = int(sys.argv[1]), int(sys.argv[2])
n = 1 << k
for name, shift, seed in (("x", 0.0, 1), ("y", 0.02, 2)):
    rng = np.random.default_rng(seed)
    with h5py.File(f"{name}{k}_{d}.h5", "w") as f:
        ds = f.create_dataset("x", (n, d), dtype="f8")
        step = 1 << 20
        for i in range(0, n, step):
            a = rng.standard_normal((min(step, n - i), d))
            a[:, 0] += shift
            ds[i:i + a.shape[0]] = a
