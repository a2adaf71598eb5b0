"""Batched functions of symmetric matrices, all through one ``numpy.linalg.eigh`` call.

Inputs have shape ``(..., k, k)`` and are symmetrised first. ``scipy.linalg.logm/expm`` are
10–50× slower per matrix and loop in Python; never use them here (docs/math.md §1). A 2 × 2
matrix, and a batch of at least ``CLOSED_FORM_BATCH`` of them, take :func:`logm`, :func:`expm`
and :func:`sqrtm_and_invsqrtm` from the closed-form eigendecomposition :func:`eig_2x2` (LAPACK's
``dlaev2`` formulas, elementwise; on Python floats for one matrix): ~4× faster than a batched
``eigh`` of 2 × 2 matrices, ~2× for one matrix, equal to it within a few ``eps·max|λ|``.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
from scipy.linalg.lapack import dsyevd as _dsyevd

from geodp.errors import NumericalWarning

_TINY = np.finfo(np.float64).tiny
_EPS = np.finfo(np.float64).eps


def sym(a: np.ndarray) -> np.ndarray:
    """Symmetric part ``(a + aᵀ)/2`` over the last two axes."""
    return 0.5 * (a + np.swapaxes(a, -1, -2))


def eigh(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigen-decomposition of the symmetric part of ``a`` (batched)."""
    return np.linalg.eigh(sym(a))


# eigh_one calls LAPACK directly up to this size. Beyond it the decomposition costs far more than
# numpy's wrapper, and scipy's LAPACK runs on a second OpenBLAS thread pool, whose threads then
# contend with numpy's for the cores (SPD(128): 2-14 ms a call against 2-6 ms through numpy, and a
# log-Euclidean mean of 100 records 1.3× slower than through numpy alone).
EIGH_ONE_LAPACK_MAX = 16


def eigh_one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigendecomposition of one symmetric ``k × k`` matrix from its lower triangle, as
    ``numpy.linalg.eigh(a)``; up to :data:`EIGH_ONE_LAPACK_MAX` through LAPACK's ``dsyevd``
    directly: numpy's wrapper costs ~5 µs a call, twice the decomposition of a 3 × 3 matrix.

    Examples
    --------
    >>> w, u = eigh_one(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w.tolist(), bool(np.allclose((u * w) @ u.T, [[2.0, 1.0], [1.0, 2.0]]))
    ([1.0, 3.0], True)
    """
    if a.shape[-1] > EIGH_ONE_LAPACK_MAX:
        return np.linalg.eigh(a)
    w, u, info = _dsyevd(a, lower=1)
    if info:
        raise np.linalg.LinAlgError("Eigenvalues did not converge")
    return w, u


def rounding_level(w: np.ndarray) -> np.ndarray:
    """``k·eps·max|λ|`` per matrix (shape ``(..., 1)``), at least the smallest positive float:
    eigenvalues below it are not determined by a float64 matrix with eigenvalues ``w``
    (``eigh`` is backward stable: its absolute error is about ``eps·max|λ|``)."""
    k = w.shape[-1]
    return np.maximum(k * _EPS * np.max(np.abs(w), axis=-1, keepdims=True), _TINY)


def positive_eigenvalues(w: np.ndarray) -> np.ndarray:
    """Guard eigenvalues of an SPD matrix: values ≤ 0 from rounding are raised to the rounding
    level :func:`rounding_level` (not to the smallest float, whose log, −708, would be an
    arbitrary huge distance), with a warning. Positive values are never changed."""
    bad = w <= 0
    if np.any(bad):
        warnings.warn(
            "Eigenvalues of a matrix that should be SPD were <= 0 after rounding (extremely "
            "ill-conditioned input); they were raised to the rounding level k·eps·max|λ|.",
            NumericalWarning,
            stacklevel=3,
        )
        w = np.where(bad, rounding_level(w), w)
    return w


def from_eig(w: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Rebuild ``u diag(w) uᵀ`` (batched)."""
    return (u * w[..., None, :]) @ np.swapaxes(u, -1, -2)


# Batches of at least this many 2 × 2 matrices use the closed form (below it the elementwise
# passes on tiny arrays cost more than one batched eigh; measured in benchmarks/bench_private_gd.py).
CLOSED_FORM_BATCH = 16


def eig_2x2(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closed-form eigendecomposition of the symmetric parts of 2 × 2 matrices (batched).

    With ``sym(a) = [[p, b], [b, q]]``, ``m = (p + q)/2``, ``d = (p − q)/2`` and ``r = hypot(d,
    b)``, the eigenvalue of larger magnitude is ``m ± r`` (the sign of ``m``) and the other one
    is ``det/that``, evaluated as LAPACK's ``dlaev2`` does (``(p_big/λ)·p_small − (b/λ)·b``, so
    that a small eigenvalue keeps the backward error of ``eigh``, ``~eps·max|λ|``). The
    eigenprojections are ``(I ± R)/2`` with ``R = [[cos 2θ, sin 2θ], [sin 2θ, −cos 2θ]]``,
    ``cos 2θ = d/r``, ``sin 2θ = b/r`` (``R = diag(1, −1)`` when ``r = 0``).

    Returns
    -------
    w : numpy.ndarray, shape (..., 2)
        Eigenvalues in ascending order.
    cos2, sin2 : numpy.ndarray, shape (...)
        ``cos 2θ`` and ``sin 2θ``: :func:`from_eig_2x2` rebuilds ``f(a)`` from ``f(w)``.

    Examples
    --------
    >>> import numpy as np
    >>> w, cos2, sin2 = eig_2x2(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w.tolist(), float(cos2), float(sin2)
    ([1.0, 3.0], 0.0, 1.0)
    """
    if a.shape == (2, 2):  # one matrix: the same formulas on Python floats (numpy calls cost more)
        return _eig_one_2x2(a)
    p, q = a[..., 0, 0], a[..., 1, 1]
    b = 0.5 * (a[..., 0, 1] + a[..., 1, 0])
    m, d = 0.5 * (p + q), 0.5 * (p - q)
    r = np.hypot(d, b)
    big = m + np.copysign(r, m)
    with np.errstate(all="ignore"):
        p_first = np.abs(p) > np.abs(q)
        small = (np.where(p_first, p, q) / big) * np.where(p_first, q, p) - (b / big) * b
        small = np.where(big != 0, small, -big)
        positive = r > 0
        safe_r = np.where(positive, r, 1.0)  # r = 0 only where d = b = 0
        cos2, sin2 = np.where(positive, d / safe_r, 1.0), b / safe_r
    w = np.empty(small.shape + (2,))
    np.minimum(small, big, out=w[..., 0])
    np.maximum(small, big, out=w[..., 1])
    return w, cos2, sin2


def _eig_one_2x2(a):
    """:func:`eig_2x2` of one matrix, on Python floats (no division by zero: ``big = 0`` and
    ``r = 0`` only for the zero matrix and ``d = b = 0``; NaN and inf propagate)."""
    (p, b01), (b10, q) = a.tolist()
    b = 0.5 * (b01 + b10)
    m, d = 0.5 * (p + q), 0.5 * (p - q)
    r = math.hypot(d, b)
    big = m + math.copysign(r, m)
    if big != 0:
        p_big, p_small = (p, q) if abs(p) > abs(q) else (q, p)
        small = (p_big / big) * p_small - (b / big) * b
    else:
        small = -big
    cos2, sin2 = (d / r, b / r) if r > 0 else (1.0, b)  # b: 0, or NaN as in the batched path
    return np.array([min(small, big), max(small, big)]), np.float64(cos2), np.float64(sin2)


def from_eig_2x2(f: np.ndarray, cos2: np.ndarray, sin2: np.ndarray) -> np.ndarray:
    """Rebuild ``f(a)`` from ``f(w)`` and the frame of :func:`eig_2x2` (batched):
    ``(f₁ + f₂)/2 · I + (f₂ − f₁)/2 · R``.

    Examples
    --------
    >>> import numpy as np
    >>> w, cos2, sin2 = eig_2x2(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> from_eig_2x2(w, cos2, sin2).tolist()
    [[2.0, 1.0], [1.0, 2.0]]
    """
    if f.shape == (2,):  # one matrix, on Python floats
        (f1, f2), cos2, sin2 = f.tolist(), float(cos2), float(sin2)
        mean, half = 0.5 * (f2 + f1), 0.5 * (f2 - f1)
        return np.array([[mean + half * cos2, half * sin2], [half * sin2, mean - half * cos2]])
    mean, half = 0.5 * (f[..., 1] + f[..., 0]), 0.5 * (f[..., 1] - f[..., 0])
    out = np.empty(f.shape[:-1] + (2, 2))
    out[..., 0, 0] = mean + half * cos2
    out[..., 1, 1] = mean - half * cos2
    out[..., 0, 1] = out[..., 1, 0] = half * sin2
    return out


def _decomposed(a: np.ndarray):
    """``(w, rebuild)``: the eigenvalues of ``sym(a)`` and the map ``f(w) ↦ f(a)`` (the closed
    form of :func:`eig_2x2` for one 2 × 2 matrix and batches of at least ``CLOSED_FORM_BATCH``)."""
    a = np.asarray(a)
    if a.shape == (2, 2) or (a.ndim > 2 and a.shape[-1] == 2 and a.size >= 4 * CLOSED_FORM_BATCH):
        w, cos2, sin2 = eig_2x2(a)
        return w, lambda f: from_eig_2x2(f, cos2, sin2)
    w, u = eigh(a)
    return w, lambda f: from_eig(f, u)


def logm(a: np.ndarray) -> np.ndarray:
    """Matrix logarithm of SPD matrices."""
    w, rebuild = _decomposed(a)
    return rebuild(np.log(positive_eigenvalues(w)))


def expm(s: np.ndarray) -> np.ndarray:
    """Matrix exponential of symmetric matrices."""
    w, rebuild = _decomposed(s)
    return rebuild(np.exp(w))


def sqrtm_and_invsqrtm(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a^{1/2}`` and ``a^{-1/2}`` of SPD matrices from a single decomposition."""
    w, rebuild = _decomposed(a)
    root = np.sqrt(positive_eigenvalues(w))
    return rebuild(root), rebuild(1.0 / root)


def congruence(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``a x aᵀ`` (batched, broadcasting); one 2 × 2 ``a`` and a batch of at least
    ``CLOSED_FORM_BATCH`` matrices ``x`` elementwise (numpy's matmul loops over tiny matrices,
    ~2× slower; a reshaped BLAS product would be threaded on large batches)."""
    if a.shape == (2, 2) and x.ndim > 2 and x.size >= 4 * CLOSED_FORM_BATCH:
        (a00, a01), (a10, a11) = a.tolist()
        rows = [(a00, a01), (a10, a11)]
        half = [[ai0 * x[..., 0, j] + ai1 * x[..., 1, j] for j in (0, 1)] for ai0, ai1 in rows]  # (a x)_ij
        out = np.empty(x.shape)
        for i in (0, 1):
            for j, (aj0, aj1) in enumerate(rows):
                out[..., i, j] = half[i][0] * aj0 + half[i][1] * aj1
        return out
    return a @ x @ np.swapaxes(a, -1, -2)


@functools.lru_cache(maxsize=64)
def _upper(k: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.triu_indices(k, 1)``, read-only and cached (it cost ~18 % of a small mean's call)."""
    rows, cols = np.triu_indices(k, 1)
    rows.flags.writeable = cols.flags.writeable = False
    return rows, cols


def vecd(s: np.ndarray) -> np.ndarray:
    """Isometric coordinates of symmetric matrices: ``[diag(s), √2·strict-upper(s)]``.

    ``‖vecd(s)‖₂ = ‖s‖_F``; output shape ``(..., k(k+1)/2)``.
    """
    rows, cols = _upper(s.shape[-1])
    diag = np.diagonal(s, axis1=-2, axis2=-1)
    return np.concatenate([diag, np.sqrt(2.0) * s[..., rows, cols]], axis=-1)


def invvecd(y: np.ndarray, k: int) -> np.ndarray:
    """Inverse of :func:`vecd`: coordinates of shape ``(..., k(k+1)/2)`` to symmetric matrices."""
    rows, cols = _upper(k)
    out = np.zeros(y.shape[:-1] + (k, k))
    idx = np.arange(k)
    out[..., idx, idx] = y[..., :k]
    upper = y[..., k:] / np.sqrt(2.0)
    out[..., rows, cols] = upper
    out[..., cols, rows] = upper
    return out


def log_divided_difference(w: np.ndarray) -> np.ndarray:
    """First divided differences of ``log`` at eigenvalues ``w`` (Daleckii–Krein kernel).

    ``G_ij = (log w_i − log w_j)/(w_i − w_j)``, ``G_ii = 1/w_i``; computed with ``log1p`` so
    that close eigenvalues lose no precision. Shape ``(..., k, k)``.
    """
    wi = w[..., :, None]
    wj = w[..., None, :]
    diff = wi - wj
    same = diff == 0
    safe = np.where(same, 1.0, diff)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.log1p(safe / wj) / safe
    return np.where(same, 1.0 / wj, ratio)


def differential_log(w: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``d Log_x (v)`` for ``x = u diag(w) uᵀ`` (Daleckii–Krein)."""
    ut = np.swapaxes(u, -1, -2)
    return u @ (log_divided_difference(w) * (ut @ sym(v) @ u)) @ ut


def differential_log_inverse(w: np.ndarray, u: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Inverse of :func:`differential_log`, i.e. ``d Exp_{Log x}(s)``."""
    ut = np.swapaxes(u, -1, -2)
    return u @ ((ut @ sym(s) @ u) / log_divided_difference(w)) @ ut
