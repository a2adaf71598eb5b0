"""Products of a Karcher pass over the records that stay off threaded BLAS when that costs time.

A threaded OpenBLAS call (``dgemv`` of a long matrix, ``ddot`` of long vectors) first wakes its
threads; on a loaded machine each wake-up waits for a core, tens of milliseconds (35 ms against
0.03 ms for a 32,768 × 3 product, measured on the shared 2-core machine under load ~10). A pass
of the sphere's or hyperboloid's Fréchet flow makes two matrix–vector products and two dot
products per block, so it pays that wait several times per iteration. ``einsum`` computes them
in numpy's own single-threaded loops: as fast for thin matrices, and never waiting.

Small products go to BLAS all the same: OpenBLAS runs ``dgemv`` on one thread below
``m·n = 2304·GEMM_MULTITHREAD_THRESHOLD`` (9,216 values with the default threshold 4) and
``ddot`` below 10,000 values, and there a BLAS call costs a third of ``einsum``'s (numpy's
``einsum`` parses its subscripts on every call), which is most of a pass at n = 100. Unlike
``einsum``, BLAS calls report floating-point overflow as a warning: callers keep their products
finite (or hold an ``np.errstate``), so that no warning depends on the data.
"""

from __future__ import annotations

import numpy as np

__all__ = ["pass_dot", "pass_matvec", "pass_max", "pass_min"]

THIN = 32  # matrices with at most this many rows or columns skip threaded BLAS
ONE_THREAD = 8192  # products of fewer values run on one BLAS thread (below OpenBLAS's 9,216 and 10,000)


def pass_matvec(A: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``A @ v`` for a 2-d ``A``, through ``einsum`` when ``A`` is thin (:data:`THIN`) and too
    large for one BLAS thread (:data:`ONE_THREAD`).

    Examples
    --------
    >>> import numpy as np
    >>> pass_matvec(np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0])).tolist()
    [-1.0, -1.0, -1.0]
    """
    if A.size < ONE_THREAD or min(A.shape) > THIN:
        return np.dot(A, v)
    return np.einsum("ij,j->i", A, v)


def pass_dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a · b`` of two vectors, never in a threaded ``ddot`` (:data:`ONE_THREAD`).

    Examples
    --------
    >>> import numpy as np
    >>> pass_dot(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    11.0
    """
    if a.size < ONE_THREAD:
        return float(np.dot(a, b))
    return float(np.einsum("i,i->", a, b))


def pass_max(a: np.ndarray) -> float:
    """``a.max()`` of a vector (NaN if it holds one), through ``argmax``: a reduction
    (``ndarray.max``) sets up an iterator of ~0.9 KB, more than a 100-vector's own 0.8 KB, which
    counts at the n = 100 sizes of issue 24; ``argmax`` of a contiguous vector holds none.

    Examples
    --------
    >>> import numpy as np
    >>> pass_max(np.array([1.0, 3.0, 2.0])), pass_max(np.array([1.0, np.nan]))
    (3.0, nan)
    """
    return float(a[a.argmax()])


def pass_min(a: np.ndarray) -> float:
    """``a.min()`` of a vector (NaN if it holds one), through ``argmin`` (see :func:`pass_max`).

    Examples
    --------
    >>> import numpy as np
    >>> pass_min(np.array([1.0, 3.0, 2.0]))
    1.0
    """
    return float(a[a.argmin()])
