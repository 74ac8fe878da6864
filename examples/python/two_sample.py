"""Two-sample test of two arrays with Compress Then Test: same distribution vs a small shift."""
import numpy as np

import kdistill

rng = np.random.default_rng(1)
X = rng.normal(size=(16384, 2))
Y_same = rng.normal(size=(16384, 2))
Y_shift = rng.normal(size=(16384, 2)) + [0.1, 0.0]

for name, Y in (("same distribution", Y_same), ("shifted by 0.1", Y_shift)):
    t = kdistill.ctt(X, Y, g=1, seed=3)
    print("%-18s statistic %.3e  p-value %.3f  %s" % (
        name, t.statistic, t.p_value, "reject" if t.reject else "do not reject"))
