"""Fréchet mean: closed form on flat spaces, Karcher flow elsewhere (docs/math.md §2)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from geodp.errors import ConvergenceWarning, InvalidDataError, InvalidParameterError, InvalidTypeError
from geodp.manifolds.base import Manifold
from geodp.validation import check_finite_array, check_positive

__all__ = ["frechet_mean", "FrechetMeanInfo"]


@dataclass(frozen=True)
class FrechetMeanInfo:
    """Convergence report of :func:`frechet_mean`.

    Attributes
    ----------
    n_iter : int
        Karcher-flow iterations (0 for a closed form).
    grad_norm : float
        ``‖∇F(mean)‖`` at the returned point, in the space's metric.
    converged : bool
        Whether ``grad_norm < tol``.
    method : str
        ``"closed-form"`` or ``"karcher-flow"``.
    """

    n_iter: int
    grad_norm: float
    converged: bool
    method: str


def _weights(weights, n: int) -> np.ndarray:
    if weights is None:
        return np.full(n, 1.0 / n)
    w = check_finite_array(weights, "weights", min_ndim=1)
    if w.shape != (n,):
        raise InvalidDataError(f"weights must have shape ({n},), got {w.shape}.")
    if np.any(w < 0) or w.sum() <= 0:
        raise InvalidParameterError("weights must be non-negative with a positive sum.")
    return w / w.sum()


def _barzilai_borwein(space, previous, mean, direction, step: float) -> float:
    """Step ``1/λ`` with λ the Hessian's Rayleigh quotient along the previous direction."""
    old_mean, old_direction, old_step = previous
    moved = space._transport(old_mean, mean, old_direction)
    hessian_times_moved = (moved - direction) / old_step  # −∇F changes by −H·(step·d)
    curvature = float(space._inner(mean, moved, hessian_times_moved))
    norm2 = float(space._inner(mean, moved, moved))
    if not curvature > 0 or not norm2 > 0:
        return step
    return float(np.clip(norm2 / curvature, step / 4, 4 * step))


def frechet_mean(
    space: Manifold,
    X,
    *,
    weights=None,
    tol: float = 1e-10,
    max_iter: int = 100,
    step: float = 1.0,
    init=None,
    adaptive: bool = True,
    return_info: bool = False,
):
    """Weighted Fréchet mean ``argmin_x Σ w_i ρ²(x, x_i)``.

    Flat spaces (Euclidean, log-Euclidean SPD) use the closed form (the mean in the isometric
    chart). Other spaces run the Karcher flow ``μ ← exp_μ(step · Σ w_i log_μ x_i)`` from ``init``
    (default: see ``init``) until ``‖∇F(μ)‖ < tol``.

    Parameters
    ----------
    space : Manifold
    X : array_like, shape (n, *space.point_shape)
        Points on the manifold; validated (finite, on the manifold).
    weights : array_like, shape (n,), optional
        Non-negative weights, normalised to sum to 1. Default uniform.
    tol : float, default 1e-10
        Stop when the Riemannian gradient norm falls below ``tol``. (Papers used 1e-5.)
    max_iter : int, default 100
        Iteration cap; a :class:`~geodp.errors.ConvergenceWarning` is raised when reached.
    step : float, default 1.0
        Karcher-flow step size (papers used 0.5). With ``adaptive`` it is the first step only.
    adaptive : bool, default True
        After the first step, use the Barzilai–Borwein step ``1/λ``, λ the Rayleigh quotient of
        the Hessian of F estimated from two successive gradients (the older one parallel
        transported), kept within ``[step/4, 4·step]``. In negatively curved spaces the Hessian
        exceeds 1, so a fixed step of 1 overshoots on dispersed data; this removes the
        overshoot. ``False`` gives the plain fixed-step flow of the papers.
    init : array_like, optional
        Starting point of the flow; default the heaviest record (SPD: the arithmetic mean).
    return_info : bool, default False
        Also return a :class:`FrechetMeanInfo`.

    Returns
    -------
    mean : numpy.ndarray, shape space.point_shape
    info : FrechetMeanInfo
        Only when ``return_info`` is true.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import SPD
    >>> X = np.stack([np.diag([1.0, 1.0]), np.diag([np.e**2, 1.0])])
    >>> mean, info = frechet_mean(SPD(2), X, return_info=True)
    >>> np.round(mean, 6).tolist(), info.converged
    ([[2.718282, 0.0], [0.0, 1.0]], True)
    """
    if not isinstance(space, Manifold):
        raise InvalidTypeError(f"space must be a geodp Manifold, got {type(space).__name__}.")
    X = space.check_points(X, "X", batch_ndim=1)
    tol = check_positive(tol, "tol")
    step = check_positive(step, "step")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InvalidParameterError(f"max_iter must be a positive integer, got {max_iter!r}.")
    w = _weights(weights, X.shape[0])

    if space.is_flat:
        coords = space.to_coordinates(X)
        mean_coords = np.sum(w[:, None] * coords, axis=0)
        mean = space.from_coordinates(mean_coords)
        grad_norm = float(np.linalg.norm(space.to_coordinates(mean) - mean_coords))
        converged = bool(grad_norm < max(tol, 1e-8 * (1.0 + np.linalg.norm(mean_coords))))
        info = FrechetMeanInfo(0, grad_norm, converged, "closed-form")
    else:
        mean = space._karcher_init(X, w) if init is None else space.check_points(init, "init")
        grad_norm = np.inf
        n_iter = 0
        current_step = step
        previous = None
        for n_iter in range(1, max_iter + 1):
            direction, grad_norm = space._karcher_direction(mean, X, w)
            if grad_norm < tol:
                n_iter -= 1
                break
            if adaptive and previous is not None:
                current_step = _barzilai_borwein(space, previous, mean, direction, step)
            previous = (mean, direction, current_step)
            mean = space.project(space._exp(mean, current_step * direction))
        info = FrechetMeanInfo(n_iter, grad_norm, bool(grad_norm < tol), "karcher-flow")
        if not info.converged:
            warnings.warn(
                f"Karcher flow stopped after {max_iter} iterations with gradient norm "
                f"{grad_norm:.3g} >= tol={tol:g}; increase max_iter or reduce step.",
                ConvergenceWarning,
                stacklevel=2,
            )
    return (mean, info) if return_info else mean
