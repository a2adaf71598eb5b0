"""Float64 facts about symmetric positive-definite matrices that SPD(k) relies on: when a matrix
is positive definite as float64 holds it, the rounding level of its eigenvalues, and a fast
weighted sum of matrix logarithms (docs/math.md §1, numerics)."""

from __future__ import annotations

import numpy as np

from geodp.manifolds import matrix_functions as mf

__all__ = [
    "CLEAR_FACTOR",
    "SLICE_FLOPS",
    "SLICE_VALUES",
    "determined_pd",
    "raised_to_rounding_level",
    "scaled_symmetry",
    "weighted_eig_sum",
]

# A record is a point of SPD(k) only if its smallest eigenvalue is positive and at least the
# rounding level k·u·max λ (u the rounding unit of its dtype): below that level float64 does not
# determine the eigenvalue (eigh is backward stable, its absolute error is about eps·max λ), so
# the matrix is singular up to rounding and its logarithm is arbitrary (docs/math.md §1).
# Fast paths decide only records whose smallest eigenvalue is at least CLEAR_FACTOR rounding
# levels (a margin of 3·k·eps·max λ over the criterion, far above the difference between two
# backward-stable decompositions); every other record is decided by belongs itself.
CLEAR_FACTOR = 4.0


def raised_to_rounding_level(w, u):
    """``u diag(max(w, f)) uᵀ`` with ``f`` CLEAR_FACTOR rounding levels (so that the result is a
    point of SPD(k), not a matrix at the edge of the membership criterion), raised (×4 at a
    time, at most 8 times) for any matrix whose rebuilt version is still not clearly PD."""
    k = w.shape[-1]
    floor = CLEAR_FACTOR * mf.rounding_level(w)
    out = mf.sym(mf.from_eig(np.maximum(w, floor), u))
    for _ in range(8):
        bad = ~determined_pd(np.linalg.eigvalsh(out), k, np.finfo(np.float64).eps) | (
            np.linalg.eigh(out)[0][..., 0] <= 0
        )
        if not np.any(bad):
            break
        floor = np.where(bad[..., None], 4.0 * floor, floor)
        out[bad] = mf.sym(mf.from_eig(np.maximum(w[bad], floor[bad]), u[bad]))
    return out


# Float64 values per slice of weighted_eig_sum: its two temporaries stay in the L2 cache
# (2^15: 5.7 ms for SPD(10), n = 10⁴, against 9.6 ms in one slice and 9.9 ms batched).
SLICE_VALUES = 2**15
# ... and at most this many multiply-adds per product (m·k³), OpenBLAS's default limit for a
# single-threaded dgemm (65536 × GEMM_MULTITHREAD_THRESHOLD 4): a threaded product of these
# shapes (k × m·k by m·k × k, a long inner dimension split over no rows) ran 15–30× slower
# than one thread on the shared 2-core machine (SPD(32), n = 3,000: 4.2 s against 0.13 s).
SLICE_FLOPS = 2**18


def weighted_eig_sum(weights, logw, u):
    """``Σ_i weights_i u_i diag(logw_i) u_iᵀ`` as ``Vᵀ diag(c) V``, ``V`` holding the eigenvectors
    of the records as rows and ``c_ij = weights_i logw_ij``: one ``(k, m·k) @ (m·k, k)`` product per
    slice of ``m`` records (no ``n × k × k`` batch of small products and no sum over it); ``m`` keeps
    each product in the cache and single-threaded (:data:`SLICE_FLOPS`).

    Examples
    --------
    >>> import numpy as np
    >>> u = np.stack([np.eye(2), np.eye(2)[::-1]])
    >>> weighted_eig_sum(np.array([0.5, 0.5]), np.array([[1.0, 3.0], [1.0, 3.0]]), u).tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    """
    n, k = logw.shape
    c = weights[:, None] * logw
    m = max(1, min(SLICE_VALUES // (k * k), SLICE_FLOPS // k**3))
    if n <= m:  # one slice (n = 100 at k ≤ 10): no running total
        rows = np.swapaxes(u, -1, -2).reshape(-1, k)
        return rows.T @ (rows * c.reshape(-1, 1))
    total = np.zeros((k, k))
    for start in range(0, n, m):
        rows = np.swapaxes(u[start : start + m], -1, -2).reshape(-1, k)
        total += rows.T @ (rows * c[start : start + m].reshape(-1, 1))
    return total


def scaled_symmetry(x, rtol):
    """``(x scaled, representable, symmetric)`` for the membership test: each matrix scaled by a
    power of two to a largest entry in [½, 1), whether its entries are in [1e-150, 1e150], and
    whether it is symmetric within ``rtol`` (relative, Frobenius)."""
    # Scale first: entries near the float64 limit would overflow in the norms and the symmetric
    # part (eigvalsh then fails to converge). (ldexp scales exactly, without forming 2^e: 2^1070
    # for a subnormal matrix overflows.)
    peak = np.max(np.abs(x), axis=(-2, -1), keepdims=True)
    x = np.ldexp(x, -np.frexp(np.where(peak > 0, peak, 1.0))[1])
    scale = np.linalg.norm(x, axis=(-2, -1))
    symmetric = np.linalg.norm(x - np.swapaxes(x, -1, -2), axis=(-2, -1)) <= rtol * scale
    # Entries beyond 1e150 overflow the products every matrix function forms: not a point
    # float64 can work with (their log-eigenvalues exceed max_representable_radius anyway).
    # Below 1e-150 (down to subnormals) likewise: no such matrix survives a product.
    representable = (peak[..., 0, 0] <= 1e150) & (peak[..., 0, 0] >= 1e-150)
    return x, representable, symmetric


def determined_pd(w, k, unit):
    """Whether ascending eigenvalues ``w`` are those of a matrix float64 holds as positive
    definite: the smallest is positive and at least the rounding level ``k·unit·max λ``."""
    top = np.maximum(np.abs(w[..., 0]), np.abs(w[..., -1]))
    return (w[..., 0] > 0) & (w[..., 0] >= k * unit * top)
