"""The deep kernel from Python: a user's embedding phi evaluated on blocks of rows, and the rows
(x, phi(x)) that the library's ``deep`` kernel reads."""
from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np

from . import _errors

LengthScale = Union[float, str, None]  # a number, "median", or None (the kernel's default)


class Deep:
    """The deep kernel of Liu et al. (2020), as Low-Rank Thinning's two-sample experiment uses it
    (its Eq. 43):

        k(x, y) = [(1 - eps) exp(-|phi(x) - phi(y)|^2 / (2 ls_phi^2)) + eps]
                  * exp(-|x - y|^2 / (2 ls_x^2)).

    phi: the embedding, a callable that maps an (m, d) float64 block of rows to an (m, d_embed)
    array (a trained numpy, JAX or PyTorch network; it is called on blocks of at most ``block``
    rows, on each rank's own rows). eps in [0, 1]. ls_x, ls_phi: length scales of the inputs and
    of the embeddings, numbers or ``"median"`` (the median heuristic on that block of columns);
    ls_x None takes the calling function's ``ls``. Pass it as ``kernel=`` to :func:`thin`,
    :func:`herd`, :func:`ctt` and :func:`mmd`: the data are given as usual (rows x), the library
    sees the rows (x, phi(x)), and coreset points come back as rows of the input (the embedding
    columns dropped)."""

    def __init__(self, phi: Callable[[np.ndarray], Any], *, eps: float = 0.1,
                 ls_x: LengthScale = None, ls_phi: LengthScale = "median",
                 block: int = 8192) -> None:
        if not callable(phi):
            raise TypeError("Deep(phi): phi must be a callable mapping an (m, d) array to an "
                            "(m, d_embed) array")
        if not 0.0 <= float(eps) <= 1.0:
            raise ValueError("Deep: eps must be in [0, 1], got %r" % (eps,))
        if int(block) < 1:
            raise ValueError("Deep: block must be >= 1, got %r" % (block,))
        self.phi, self.eps, self.ls_x, self.ls_phi = phi, float(eps), ls_x, ls_phi
        self.block = int(block)

    def __repr__(self) -> str:
        return "kdistill.Deep(%s, eps=%g, ls_x=%r, ls_phi=%r)" % (
            getattr(self.phi, "__name__", type(self.phi).__name__), self.eps, self.ls_x,
            self.ls_phi)

    def embed(self, X: Any, what: str = "X") -> np.ndarray:
        """The rows (x, phi(x)) of X as one C-order float64 (n, d + d_embed) array; DataError
        naming ``what`` when phi returns the wrong shape or a non-finite value."""
        A = np.asarray(X, dtype=np.float64)
        if A.ndim == 1:
            A = A.reshape(-1, 1)
        if A.ndim != 2:
            raise _errors.DataError("%s: expected an (n, d) array, got shape %s" % (what, A.shape))
        parts: List[np.ndarray] = []
        for i in range(0, len(A), self.block):
            blk = np.ascontiguousarray(A[i:i + self.block])
            U = np.asarray(self.phi(blk), dtype=np.float64)
            if U.ndim == 1:
                U = U.reshape(-1, 1)
            if U.ndim != 2 or len(U) != len(blk) or (parts and U.shape[1] != parts[-1].shape[1]):
                raise _errors.DataError(
                    "%s: Deep's phi mapped a (%d, %d) block to shape %s; it must return one "
                    "embedding row per input row, of a fixed width"
                    % (what, blk.shape[0], blk.shape[1], U.shape))
            bad = np.flatnonzero(~np.isfinite(U).all(axis=1))
            if bad.size:
                raise _errors.DataError("%s: row %d: Deep's phi returned a non-finite embedding"
                                        % (what, i + int(bad[0])))
            parts.append(U)
        if not parts:  # no rows here (another rank holds them): phi's width from one probe row
            U = np.asarray(self.phi(np.zeros((1, A.shape[1]))), dtype=np.float64).reshape(1, -1)
            parts.append(U[:0])
        return np.ascontiguousarray(np.hstack([A, np.vstack(parts)]))

    def section(self, d: int, ls: LengthScale) -> Dict[str, Any]:
        """The ``kernel:`` section for rows (x, phi(x)) with x of width d."""
        lx = self.ls_x if self.ls_x is not None else ls
        k: Dict[str, Any] = {"name": "deep", "dx": int(d), "eps": self.eps,
                             "ls_phi": self.ls_phi}
        if lx is not None:
            k["ls"] = lx
        return k


def input_width(X: Any) -> int:
    """The width d of the rows x of X (an (n, d) array, or a vector of scalars)."""
    shape = np.shape(X)
    return 1 if len(shape) < 2 else int(shape[1])


def resolved(kernel: Deep, desc: str, metrics: Dict[str, Any]) -> Optional[Deep]:
    """kernel with the length scales a run resolved (its metrics ``kernel_ls`` and
    ``kernel_ls_phi``) in place of ``"median"``; None when the run's kernel (its description
    desc) is not a deep kernel."""
    if not desc.startswith("deep("):
        return None
    lx, lp = metrics.get("kernel_ls"), metrics.get("kernel_ls_phi")
    return Deep(kernel.phi, eps=kernel.eps,
                ls_x=float(lx) if lx is not None and kernel.ls_x in (None, "median")
                else kernel.ls_x,
                ls_phi=float(lp) if lp is not None and kernel.ls_phi == "median"
                else kernel.ls_phi,
                block=kernel.block)
