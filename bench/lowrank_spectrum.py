"""bench/lowrank_spectrum.py - issue 61's question "is the kernel nearly low-rank?": for each data
set of bench/dimension_data.py (imported, not copied; its first 4096 rows, standardised), the
Gaussian kernel matrix at the median-heuristic length scale, its eigenvalues (numpy eigvalsh, one
BLAS thread), and r(eps) = the fewest leading eigenvalues whose tail sum is at most eps times the
trace: the rank a low-rank (Nystrom-type) approximation needs for that relative trace error.
Usage: /usr/bin/python3 bench/lowrank_spectrum.py [KDISTILL_BIN [GP_SRC]] (dimension_data.py
wants both paths; only its data functions are used). Prints a Markdown table."""
import os
import sys

os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
sys.argv = [sys.argv[0], sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../build/kdistill"),
            sys.argv[2] if len(sys.argv) > 2 else "/tmp/gp/src"]
sys.path.insert(0, here)
import dimension_data as dd  # noqa: E402

N = 4096
EPS = (1e-2, 1e-3, 1e-4, 1e-6)
print("| data | d | ls (median) | " + " | ".join("r(%g)" % e for e in EPS) + " |")
print("|---|---|---|" + "---|" * len(EPS))
for name in ["gauss2", "gauss8", "gauss32", "patch4", "patch8", "digits", "patch8c", "patch28"]:
    X = np.ascontiguousarray(dd.make(name, 0 if name == "digits" else 2 ** 16)[:N])
    ls = dd.median_ls(X)
    ev = np.maximum(np.sort(np.linalg.eigvalsh(np.exp(dd.sqdist(X, X) * (-0.5 / ls ** 2))))[::-1], 0)
    tail = np.cumsum(ev[::-1])[::-1] / ev.sum()  # tail[r]: the sum from the (r+1)-th on
    rs = [int(np.argmax(tail <= e)) if (tail <= e).any() else len(ev) for e in EPS]
    print("| %s | %d | %.3f | %s |" % (name, X.shape[1], ls, " | ".join(str(r) for r in rs)),
          flush=True)
