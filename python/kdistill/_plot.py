"""kdistill.plot: the pictures kdplot draws, for a result in memory (matplotlib, optional)."""

from typing import Any, Optional, Sequence, Union

import numpy as np

from ._api import Coreset, TestResult


def plot(result: Union[Coreset, TestResult], X: Any = None, *, dims: Sequence[int] = (0, 1),
         ax: Any = None, path: Optional[str] = None, max_rows: int = 20000) -> Any:
    """Draw a result with matplotlib and return the Axes.

    A :class:`Coreset`: two coordinates (``dims``) of its points, marker area proportional to
    the weight, over the rows of ``X`` in grey when given (at most ``max_rows`` of them, evenly
    spaced); the title names the algorithm, the sizes and the MMD as it was found (exact or
    estimate ± its standard error). A :class:`TestResult`: the histogram of the permutation
    statistics with the observed statistic, the p-value and the decision. ``path``: also save the
    figure there (PNG, PDF, ... by its extension). Needs matplotlib (Debian 12:
    python3-matplotlib); without it, ImportError says so."""
    try:
        import matplotlib
        if ax is None and path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("kdistill.plot needs matplotlib (Debian 12: apt-get install "
                          "python3-matplotlib)") from None
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 5))
    if isinstance(result, TestResult):
        perm = result.extras.get("/test/permutation_statistics")
        if perm is not None:
            ax.hist(np.asarray(perm), bins=30, color="0.7", label="permutations")
        ax.axvline(result.statistic, color="C3", label="statistic %.3g" % result.statistic)
        ax.set_xlabel("MMD between the coresets")
        ax.set_title("%s: p = %.3g, %s at alpha = %g" % (
            result.algorithm, result.p_value, "reject" if result.reject else "no rejection",
            result.alpha))
        ax.legend()
    elif isinstance(result, Coreset):
        i, j = int(dims[0]), int(dims[1])
        P = result.points
        if max(i, j) >= P.shape[1]:
            raise ValueError("dims %s: the points have %d coordinates" % ((i, j), P.shape[1]))
        if X is not None:
            A = np.asarray(X)
            A = A.reshape(-1, 1) if A.ndim == 1 else A
            step = max(1, len(A) // max_rows)
            ax.scatter(A[::step, i], A[::step, j], s=2, color="0.75", label="input")
        w = np.asarray(result.weights)
        area = 400.0 * w / w.max() if len(w) and w.max() > 0 else 20.0
        ax.scatter(P[:, i], P[:, j], s=area, color="C0", edgecolor="k", linewidth=0.3,
                   label="%d points" % len(result))
        ax.set_xlabel("x%d" % i)
        ax.set_ylabel("x%d" % j)
        ax.set_title("%s/%s: mmd %s" % (result.task, result.algorithm, result.mmd_text()))
        ax.legend(loc="best", fontsize="small")
    else:
        raise TypeError("plot() takes a Coreset or a TestResult, got %s" % type(result).__name__)
    if path is not None:
        ax.figure.savefig(path, dpi=110, bbox_inches="tight")
    return ax
