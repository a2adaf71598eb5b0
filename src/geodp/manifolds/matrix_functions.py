"""Batched functions of symmetric matrices, all through one ``numpy.linalg.eigh`` call.

Inputs have shape ``(..., k, k)`` and are symmetrised first. ``scipy.linalg.logm/expm`` are
10–50× slower per matrix and loop in Python; never use them here (docs/math.md §1).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from geodp.errors import NumericalWarning

_TINY = np.finfo(np.float64).tiny
_EPS = np.finfo(np.float64).eps


def sym(a: np.ndarray) -> np.ndarray:
    """Symmetric part ``(a + aᵀ)/2`` over the last two axes."""
    return 0.5 * (a + np.swapaxes(a, -1, -2))


def eigh(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigen-decomposition of the symmetric part of ``a`` (batched)."""
    return np.linalg.eigh(sym(a))


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


def logm(a: np.ndarray) -> np.ndarray:
    """Matrix logarithm of SPD matrices."""
    w, u = eigh(a)
    return from_eig(np.log(positive_eigenvalues(w)), u)


def expm(s: np.ndarray) -> np.ndarray:
    """Matrix exponential of symmetric matrices."""
    w, u = eigh(s)
    return from_eig(np.exp(w), u)


def sqrtm_and_invsqrtm(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a^{1/2}`` and ``a^{-1/2}`` of SPD matrices from a single decomposition."""
    w, u = eigh(a)
    root = np.sqrt(positive_eigenvalues(w))
    return from_eig(root, u), from_eig(1.0 / root, u)


def congruence(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``a x aᵀ`` (batched, broadcasting)."""
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
