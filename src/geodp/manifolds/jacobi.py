"""Jacobi-field factors shared by the spaces of constant curvature (docs/math.md §9).

Along a geodesic of a space of constant curvature κ, a Jacobi field orthogonal to the geodesic
scales by ``cos(√κ t)`` and ``sin(√κ t)/(√κ t)`` (``cosh``/``sinhc`` when κ < 0); along it, by 1.
:func:`constant_curvature_adjoints` applies that to the adjoints of the derivatives of ``Exp``
that geodesic regression needs; :class:`~geodp.manifolds.Sphere` and
:class:`~geodp.manifolds.Hyperbolic` use it as their ``_adjoint_exp_derivatives``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["constant_curvature_adjoints", "sinhc"]


def sinhc(z):
    """``sinh(z)/z``, 1 at 0 (elementwise).

    Examples
    --------
    >>> float(sinhc(0.0)), round(float(sinhc(1.0)), 6)
    (1.0, 1.175201)
    """
    z = np.asarray(z, dtype=float)
    safe = np.where(z == 0, 1.0, z)
    return np.where(z == 0, 1.0, np.sinh(safe) / safe)


def _expand(a) -> np.ndarray:
    a = np.asarray(a)
    return a[..., None]


def constant_curvature_adjoints(space, p, u, w, y=None):
    """``(d_pExp(p, u)^† w, d_uExp(p, u)^† w)`` on a space of constant curvature κ ≠ 0 embedded
    in ``R^(dim+1)`` (sphere, hyperboloid), unvalidated.

    ``γ(t) = c(tL) p + sn(tL) û``; the unit velocity at ``y`` is ``T = −κ sn(L) p + c(L) û``.
    With ``α = ⟨w, T⟩`` and ``r = w − α T`` (orthogonal to ``y`` and ``T``, hence to ``p`` and
    ``û``: the same vector at both ends), transporting back gives ``α û + r`` and the Jacobi
    fields scale ``r`` by ``c(L)`` and ``sn(L)/L``.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> dp, du = constant_curvature_adjoints(Sphere(2), np.array([0.0, 0.0, 1.0]),
    ...                                      np.array([np.pi / 2, 0, 0]), np.array([0.0, 1.0, 0.0]))
    >>> np.round(dp, 12).tolist(), round(float(du[1]), 12)
    ([0.0, 0.0, 0.0], 0.636619772368)
    """
    kappa = space.curvature
    y = space.unchecked.exp(p, u) if y is None else y
    length = np.asarray(space.unchecked.norm(p, u), dtype=float)
    unit = u / _expand(np.where(length > 0, length, 1.0))
    unit = np.where(_expand(length > 0), unit, 0.0)
    s = math.sqrt(abs(kappa)) * length
    if kappa > 0:
        cos, sinc, minus_kappa_sn = np.cos(s), np.sinc(s / np.pi), -math.sqrt(kappa) * np.sin(s)
    else:
        cos, sinc, minus_kappa_sn = np.cosh(s), sinhc(s), math.sqrt(-kappa) * np.sinh(s)
    velocity = _expand(minus_kappa_sn) * p + _expand(cos) * unit
    alpha = _expand(space.unchecked.inner(y, w, velocity))
    rest = w - alpha * velocity
    along = alpha * unit
    return along + _expand(cos) * rest, along + _expand(sinc) * rest
