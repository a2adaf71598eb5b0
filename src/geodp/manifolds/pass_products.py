"""Products of a Karcher pass over the records that stay off threaded BLAS when that costs time.

A threaded OpenBLAS call (``dgemv`` of a long matrix, ``ddot`` of long vectors) first wakes its
threads; on a loaded machine each wake-up waits for a core, tens of milliseconds (35 ms against
0.03 ms for a 32,768 × 3 product, measured on the shared 2-core machine under load ~10). A pass
of the sphere's or hyperboloid's Fréchet flow makes two matrix–vector products and two dot
products per block, so it pays that wait several times per iteration. ``einsum`` computes them
in numpy's own single-threaded loops: as fast for thin matrices, and never waiting.
"""

from __future__ import annotations

import numpy as np

__all__ = ["pass_dot", "pass_matvec"]

THIN = 32  # matrices with at most this many rows or columns skip BLAS


def pass_matvec(A: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``A @ v`` for a 2-d ``A``, through ``einsum`` when ``A`` is thin (:data:`THIN`).

    Examples
    --------
    >>> import numpy as np
    >>> pass_matvec(np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0])).tolist()
    [-1.0, -1.0, -1.0]
    """
    if min(A.shape) > THIN:
        return A @ v
    return np.einsum("ij,j->i", A, v)


def pass_dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a · b`` of two vectors, in numpy's own loop (never a threaded ``ddot``).

    Examples
    --------
    >>> import numpy as np
    >>> pass_dot(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    11.0
    """
    return float(np.einsum("i,i->", a, b))
