"""A 32-point convex quadrature rule for N(0, diag(1, 0.25)) (closed-form kernel embedding), and
how well it integrates f(x) = cos(x1) exp(-x2^2) compared with 32 Monte Carlo points."""
import math

import numpy as np

import kdistill

target = kdistill.Gaussian(mean=[0.0, 0.0], sd=[1.0, 0.5])
rule = kdistill.quad(target, 32, ls=1.0, seed=1)
mc = kdistill.quad(target, 32, algorithm="monte_carlo", ls=1.0, seed=1)


def f(x: np.ndarray) -> np.ndarray:
    return np.cos(x[:, 0]) * np.exp(-x[:, 1] ** 2)


# E cos(X1) = exp(-1/2); E exp(-X2^2) with X2 ~ N(0, 1/4) = (1 + 2/4)^(-1/2)
exact = math.exp(-0.5) / math.sqrt(1.5)
for name, r in (("kernel quadrature", rule), ("Monte Carlo", mc)):
    est = float(r.weights @ f(r.points))
    print("%-18s %2d points  MMD %.3e  |error| %.2e" % (name, len(r), r.mmd, abs(est - exact)))
print("MMD recomputed:", kdistill.mmd(rule.points, rule.weights, target, ls=1.0))
