"""Coordinates of symmetric matrices (public helpers; R21 §5.1 and U23 §3 use them): the
isometric ``vecd`` (``‖vecd(s)‖₂ = ‖s‖_F``) and the half-vectorisation ``vech``, with their
inverses, validated."""

from __future__ import annotations

import numpy as np

from geodp.errors import InvalidParameterError
from geodp.manifolds import matrix_functions as mf

__all__ = ["invvecd", "invvech", "vecd", "vech"]


def vecd(s) -> np.ndarray:
    """Isometric coordinates of symmetric matrices: ``[diag(s), √2·strict-upper(s)]``.

    ``‖vecd(s)‖₂ = ‖s‖_F`` (U23 §3); shape ``(..., k, k) → (..., k(k+1)/2)``. Inverse: :func:`invvecd`.

    Examples
    --------
    >>> vecd(np.array([[1.0, 2.0], [2.0, 3.0]]))
    array([1.        , 3.        , 2.82842712])
    >>> round(float(np.linalg.norm(vecd(np.array([[1.0, 2.0], [2.0, 3.0]]))) ** 2), 12)  # 1 + 9 + 2·4
    18.0
    """
    s = np.asarray(s, dtype=float)
    if s.ndim < 2 or s.shape[-1] != s.shape[-2]:
        raise InvalidParameterError(f"vecd needs square matrices, got shape {s.shape}")
    return mf.vecd(s)


def invvecd(y, k: int) -> np.ndarray:
    """Inverse of :func:`vecd`: coordinates of shape ``(..., k(k+1)/2)`` to symmetric ``k×k`` matrices.

    Examples
    --------
    >>> invvecd(np.array([1.0, 3.0, 2.0 * np.sqrt(2.0)]), 2)
    array([[1., 2.],
           [2., 3.]])
    """
    y = np.asarray(y, dtype=float)
    if y.shape[-1] != k * (k + 1) // 2:
        raise InvalidParameterError(f"invvecd with k = {k} needs {k * (k + 1) // 2} coordinates, got {y.shape[-1]}")
    return mf.invvecd(y, k)


def vech(s) -> np.ndarray:
    """Half-vectorisation: the lower triangle of symmetric matrices, stacked column by column.

    Not isometric (off-diagonal entries count once: ``‖vech(s)‖ ≤ ‖s‖_F``); R21 §5.1 adds its
    Euclidean baseline's noise in these coordinates. Inverse: :func:`invvech`.

    Examples
    --------
    >>> vech(np.array([[1.0, 2.0], [2.0, 3.0]]))
    array([1., 2., 3.])
    """
    s = np.asarray(s, dtype=float)
    if s.ndim < 2 or s.shape[-1] != s.shape[-2]:
        raise InvalidParameterError(f"vech needs square matrices, got shape {s.shape}")
    cols, rows = np.triu_indices(s.shape[-1])  # column-major order of the lower triangle
    return s[..., rows, cols]


def invvech(y, k: int) -> np.ndarray:
    """Inverse of :func:`vech`: a symmetric ``k×k`` matrix from its lower triangle.

    Examples
    --------
    >>> invvech(np.array([1.0, 2.0, 3.0]), 2)
    array([[1., 2.],
           [2., 3.]])
    """
    y = np.asarray(y, dtype=float)
    if y.shape[-1] != k * (k + 1) // 2:
        raise InvalidParameterError(f"invvech with k = {k} needs {k * (k + 1) // 2} coordinates, got {y.shape[-1]}")
    cols, rows = np.triu_indices(k)
    out = np.zeros(y.shape[:-1] + (k, k))
    out[..., rows, cols] = y
    out[..., cols, rows] = y
    return out
