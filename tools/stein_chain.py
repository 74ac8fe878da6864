#!/usr/bin/env python3
"""stein_chain.py - write a small MCMC chain with its scores for configs/stein_chain_kt.yaml.

Usage: /usr/bin/python3 tools/stein_chain.py OUT.h5 [N] [STEP]   (needs numpy and h5py)

The target p is the two-component Gaussian mixture 1/2 N((-1.5, 0), I) + 1/2 N((1.5, 0), I) in
two dimensions. The chain is the unadjusted Langevin algorithm
    x_{t+1} = x_t + STEP * s(x_t) + sqrt(2 STEP) * xi_t,   s = grad log p,
started at (6, 6), so it is biased twice: by its burn-in and by the discretisation (ULA's
stationary law is not p). OUT.h5 gets /x (N x 2, default N = 2^16) and /score (s at every state,
N x 2), the layout `data: {..., score: {type: hdf5, dataset: score}}` reads.
"""
import sys

import h5py
import numpy as np

MEANS = np.array([[-1.5, 0.0], [1.5, 0.0]])


def score(x):
    """grad log p for the equal-weight mixture of N(m_k, I)."""
    d = x[None, :] - MEANS  # 2 x 2
    logw = -0.5 * np.sum(d * d, axis=1)
    r = np.exp(logw - logw.max())
    r /= r.sum()
    return -(r[:, None] * d).sum(axis=0)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "data/stein_chain.h5"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 16
    h = float(sys.argv[3]) if len(sys.argv) > 3 else 0.2
    rng = np.random.default_rng(20240)
    xs = np.empty((n, 2))
    ss = np.empty((n, 2))
    x = np.array([6.0, 6.0])
    for t in range(n):
        s = score(x)
        xs[t], ss[t] = x, s
        x = x + h * s + np.sqrt(2 * h) * rng.standard_normal(2)
    with h5py.File(out, "w") as f:
        f["x"] = xs
        f["score"] = ss
    print(f"{out}: {n} ULA states (step {h}) of the 2-component mixture, with scores")


if __name__ == "__main__":
    main()
