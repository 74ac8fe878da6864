"""Thin 2^14 points of a Gaussian mixture to 128 with kernel thinning (KT-Compress++) and plot
the coreset over the input. Usage: python3 thin_plot.py [OUT.png]"""
import sys

import numpy as np

import kdistill

rng = np.random.default_rng(0)
means = np.array([[3.0, 0.0], [0.0, 3.0], [-3.0, 0.0], [0.0, -3.0]])
X = means[rng.integers(0, 4, size=2**14)] + rng.normal(size=(2**14, 2))

cs = kdistill.thin(X, 128)
iid = kdistill.thin(X, 128, algorithm="uniform")
print(cs)
print("MMD: kernel thinning %.3e, uniform subsample %.3e" % (cs.mmd, iid.mmd))

out = sys.argv[1] if len(sys.argv) > 1 else "thin.png"
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("no plot: matplotlib is not installed (apt-get install python3-matplotlib)")
    sys.exit(0)
fig, ax = plt.subplots(figsize=(5, 5))
ax.scatter(X[:, 0], X[:, 1], s=1, c="0.8", label="input (%d)" % len(X))
ax.scatter(cs.points[:, 0], cs.points[:, 1], s=12, c="C3", label="coreset (%d)" % len(cs))
ax.set_title("kt_compress, MMD %.2e" % cs.mmd)
ax.legend(loc="upper right")
fig.savefig(out, dpi=100)
print("wrote", out)
