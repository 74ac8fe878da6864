#!/usr/bin/env python3
"""make_config_data.py - write the small input files the example configs read (configs/data/).

  /usr/bin/python3 tools/make_config_data.py [OUTDIR]     (default: configs/data next to this tool)

The files are committed; this script is how they were made, and running it again rewrites them
with the same numbers (seeded numpy generator, fixed text formatting, HDF5 written without
timestamps). Needs numpy and h5py. Sizes are kept small (under 100 KB in all) so a fresh clone
runs every example config in seconds:

  qkv.h5             /Q, /K, /V: 256 x 8 each (attention.yaml; 256 = 4^4 tokens)
  grads.h5           /grads: 256 x 8 stochastic gradients of a least-squares model (reorder.yaml)
  measure.csv        1500 x 2, header "x,y": a two-component Gaussian mixture (quad_empirical_csv.yaml)
  points.csv         400 x 2, header "x0,x1" (quad_recombine.yaml)
  test_functions.csv 400 x 5, no header: 1, x0, x1, x0^2, x0*x1 at those points (quad_recombine.yaml)
"""
import os
import sys

import h5py
import numpy as np


def write_csv(path, a, header=None):
    with open(path, "w") as fh:
        if header:
            fh.write(header + "\n")
        for row in a:
            fh.write(",".join("%.6f" % v for v in row) + "\n")


def write_h5(path, arrays):
    with h5py.File(path, "w", track_order=False) as f:
        for name, a in arrays.items():
            f.create_dataset(name, data=a, track_times=False)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                             "..", "configs", "data")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20261123)
    # attention: tokens with a little structure (queries near keys), values smooth in the keys
    n, d = 256, 8
    K = rng.normal(size=(n, d)) / np.sqrt(d)
    Q = K[rng.permutation(n)] + 0.3 * rng.normal(size=(n, d)) / np.sqrt(d)
    V = np.tanh(K @ rng.normal(size=(d, d))) + 0.1 * rng.normal(size=(n, d))
    write_h5(os.path.join(out, "qkv.h5"), {"Q": Q, "K": K, "V": V})
    # reorder: per-example gradients of 0.5 (a.w - b)^2 at a fixed w
    A = rng.normal(size=(n, d))
    b = A @ rng.normal(size=d) + 0.5 * rng.normal(size=n)
    w = 0.1 * rng.normal(size=d)
    grads = (A @ w - b)[:, None] * A
    write_h5(os.path.join(out, "grads.h5"), {"grads": grads})
    # quadrature of an empirical measure: a two-component mixture in 2-D
    m = 1500
    comp = rng.random(m) < 0.6
    meas = np.where(comp[:, None], rng.normal([-1.0, 0.0], 0.5, size=(m, 2)),
                    rng.normal([1.5, 0.5], 0.8, size=(m, 2)))
    write_csv(os.path.join(out, "measure.csv"), meas, "x,y")
    # recombination: points and test functions evaluated at them
    N = 400
    x = rng.normal(size=(N, 2))
    x = np.round(x, 6)  # the CSV holds 6 decimals: evaluate the test functions at those values
    tf = np.column_stack([np.ones(N), x[:, 0], x[:, 1], x[:, 0] ** 2, x[:, 0] * x[:, 1]])
    write_csv(os.path.join(out, "points.csv"), x, "x0,x1")
    write_csv(os.path.join(out, "test_functions.csv"), tf)
    for fn in sorted(os.listdir(out)):
        print("%s  %d bytes" % (os.path.join(out, fn), os.path.getsize(os.path.join(out, fn))))


if __name__ == "__main__":
    main()
