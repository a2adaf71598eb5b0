"""Geodesic regression (Fletcher 2011): the non-private least-squares solver and the adjoint
Jacobi fields of its gradient (docs/math.md §9).

The model is ``y ≈ Exp(p, Σ_j x_j v_j)`` with a footpoint ``p`` on the manifold and one tangent
vector ``v_j ∈ T_pM`` per covariate. The least-squares energy is

    E(p, v) = (1/2n) Σ_i ρ²(Exp(p, u_i), y_i),   u_i = Σ_j x_ij v_j,

and with the residuals ``ε_i = log_{ŷ_i}(y_i)``, ``ŷ_i = Exp(p, u_i)``, its Riemannian gradient is

    ∇_p E = −(1/n) Σ_i d_pExp(p, u_i)^† ε_i,   ∇_{v_j} E = −(1/n) Σ_i x_ij d_uExp(p, u_i)^† ε_i,

where ``d_pExp`` is the derivative in ``p`` with ``u`` parallel transported along the variation of
``p``, ``d_uExp`` the derivative in ``u``, and ``†`` the adjoint for the metrics at ``p`` and at
``Exp(p, u)``. The adjoints are closed-form Jacobi fields on every space geodp ships
(:func:`adjoint_exp_derivatives`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from geodp.errors import (
    ConvergenceWarning,
    InvalidDataError,
    InvalidTypeError,
)
from geodp.manifolds.base import check_space
from geodp.validation import check_finite_array, check_positive, check_positive_integer

__all__ = [
    "RegressionInfo",
    "geodesic_regression",
    "geodesic_predict",
    "regression_objective",
    "regression_gradient",
    "adjoint_exp_derivatives",
    "check_regression_space",
    "supports_geodesic_regression",
]

# Floats per chunk of (parameter points × records × point entries) in the batched gradient.
_CHUNK_FLOATS = 2_000_000
# A tangent vector whose off-tangent part exceeds this fraction of its norm is refused.
_ARMIJO = 1e-4
_MEMORY = 10
_MAX_HALVINGS = 60


@dataclass(frozen=True)
class RegressionInfo:
    """Convergence report of :func:`geodesic_regression`.

    Attributes
    ----------
    n_iter : int
        Gradient-descent iterations (0 for the closed form of flat spaces).
    grad_norm : float
        ``√(|∇_p E|² + Σ_j |∇_{v_j} E|²)`` at the returned parameters, Riemannian norms at ``p``.
    converged : bool
        Whether ``grad_norm ≤ tol`` (flat spaces: the closed form, whose gradient is zero up to
        rounding).
    objective : float
        ``E(p, v) = (1/2n) Σ ρ²(Exp(p, u_i), y_i)`` at the returned parameters.
    """

    n_iter: int
    grad_norm: float
    converged: bool
    objective: float


# ----------------------------------------------------------------------------- helpers
def _point_axes(space) -> tuple[int, ...]:
    return tuple(range(-len(space.point_shape), 0))


def _expand(a, n_axes: int) -> np.ndarray:
    a = np.asarray(a)
    return a.reshape(a.shape + (1,) * n_axes)


def supports_geodesic_regression(space) -> bool:
    """Whether geodesic regression runs on ``space``: it needs the adjoints of the derivatives of
    ``Exp`` (the space's ``_adjoint_exp_derivatives``), in closed form on every flat space and on
    the curved spaces that implement them.

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> supports_geodesic_regression(Sphere(2))
    True
    """
    return check_space(space).is_flat or space.provides("_adjoint_exp_derivatives")


def check_regression_space(space):
    """Refuse a space geodesic regression cannot run on (:func:`supports_geodesic_regression`)
    with an ``InvalidTypeError`` that names the missing hook; return the space.

    Examples
    --------
    >>> from geodp.manifolds import Euclidean
    >>> check_regression_space(Euclidean(2))
    Euclidean(2)
    """
    if not supports_geodesic_regression(space):
        raise InvalidTypeError(
            f"geodesic regression needs closed-form adjoint Jacobi fields, available on every flat "
            f"space and on Sphere, Hyperbolic, KendallShape and affine-invariant SPD; {space!r} does "
            "not implement them (a curved space provides them as _adjoint_exp_derivatives, docs/math.md §9)."
        )
    return space


def _check_tangent(space, p, v, name: str, where: str = "p") -> np.ndarray:
    """``v`` (already a finite array with the right trailing shape) must be tangent at ``p``:
    the one tangent check of the public geometry (:data:`geodp.manifolds.base.TANGENT_RTOL`)."""
    return space._checked_tangent(p, v, name, where)


def _design(x, n: int | None = None) -> tuple[np.ndarray, bool]:
    """Covariates as an ``(n, m)`` array and whether they were given as a vector ``(n,)``."""
    arr = check_finite_array(x, "x", min_ndim=1)
    if arr.ndim > 2:
        raise InvalidDataError(f"x must have shape (n,) or (n, m), got shape {arr.shape}.")
    if arr.ndim == 2 and arr.shape[1] == 0:
        raise InvalidDataError(f"x must have at least one covariate column, got shape {arr.shape}.")
    if n is not None and arr.shape[0] != n:
        raise InvalidDataError(f"x has {arr.shape[0]} rows but Y has {n} records; they must match.")
    return (arr[:, None] if arr.ndim == 1 else arr), arr.ndim == 1


def _check_identifiable(x2: np.ndarray) -> None:
    """Refuse designs whose parameters are not determined: n < m + 1, a constant covariate, or
    centred covariates of rank < m."""
    n, m = x2.shape
    if n < m + 1:
        raise InvalidDataError(
            f"geodesic regression with m = {m} covariate(s) needs at least m + 1 = {m + 1} records, got n = {n}."
        )
    centred = x2 - x2.mean(axis=0)
    spread = np.linalg.norm(centred, axis=0)
    scale = np.max(np.abs(x2), axis=0) * math.sqrt(n)
    constant = ~(spread > 64.0 * n * np.finfo(float).eps * scale)
    if np.any(constant):
        cols = np.flatnonzero(constant).tolist()
        raise InvalidDataError(
            f"x has a constant covariate (column(s) {cols}): its coefficient is not identifiable "
            "(the footpoint p already plays the role of the intercept); drop that column."
        )
    rank = int(np.linalg.matrix_rank(centred / spread))
    if rank < m:
        raise InvalidDataError(
            f"the centred covariates are collinear: the n x m design has rank {rank} < m = {m}, so "
            "the coefficients are not identifiable; drop or combine the redundant columns of x."
        )


def _parameters(space, p, v, m: int, squeeze: bool, *, batch: bool):
    """Validate ``(p, v)``: ``p`` points (a single one unless ``batch``), ``v`` of shape
    ``(*batch, *point_shape)`` when ``squeeze`` else ``(*batch, m, *point_shape)``, tangent at p."""
    p = space.check_points(p, "p", batch_ndim=None if batch else 0)
    batch_shape = p.shape[: p.ndim - len(space.point_shape)]
    v = check_finite_array(v, "v", min_ndim=len(space.point_shape))
    want = batch_shape + (() if squeeze else (m,)) + space.point_shape
    if v.shape != want:
        covariates = "x of shape (n,)" if squeeze else f"x of shape (n, {m})"
        raise InvalidDataError(
            f"v must have shape {want} for p of shape {p.shape} and {covariates}, got shape {v.shape}."
        )
    axis = -len(space.point_shape) - 1
    v = np.expand_dims(v, axis) if squeeze else v
    v = _check_tangent(space, np.expand_dims(p, axis), v, "v")
    return p, v, batch_shape


# ---------------------------------------------------------------------------- adjoints
def adjoint_exp_derivatives(space, p, u, w):
    """Adjoints of the derivatives of ``Exp(p, u)`` in ``p`` and in ``u``, applied to ``w``.

    ``d_pExp(p, u)`` differentiates ``Exp`` in ``p`` with ``u`` parallel transported along the
    variation of ``p``; ``d_uExp(p, u)`` differentiates it in ``u``. Both map ``T_pM`` to
    ``T_{Exp(p,u)}M``; their adjoints map ``w ∈ T_{Exp(p,u)}M`` back to ``T_pM``. They are
    Jacobi fields along the geodesic ``t ↦ Exp(p, tu)``, in closed form on every supported space
    (docs/math.md §9): constant curvature κ (Sphere, Hyperbolic, Euclidean), Kendall planar
    shapes (curvature-operator eigenvalues 0, 4, 1), affine-invariant SPD (eigenvalues
    ``−(μ_i − μ_j)²/4L²``) and log-Euclidean SPD (flat: both are the parallel transport back).

    Parameters
    ----------
    space : Manifold
        Euclidean, Sphere, Hyperbolic, KendallShape or SPD (either metric).
    p : array_like, shape (..., *point_shape)
        Base points.
    u : array_like, shape (..., *point_shape)
        Tangent vectors at ``p`` (batch axes broadcast against those of ``p``).
    w : array_like, shape (..., *point_shape)
        Tangent vectors at ``Exp(p, u)``.

    Returns
    -------
    dp, du : numpy.ndarray, shape (broadcast batch, *point_shape)
        ``d_pExp(p, u)^† w`` and ``d_uExp(p, u)^† w``, tangent at ``p``.

    Raises
    ------
    InvalidTypeError
        ``space`` is not a supported geodp manifold.
    InvalidDataError
        Wrong trailing shape, NaN or inf, or ``u`` (``w``) not tangent at ``p`` (``Exp(p, u)``).
    NotOnManifoldError
        ``p`` is not a point of the space.

    Examples
    --------
    On the unit sphere, with ``|u| = π/2``, the component of ``w`` orthogonal to the geodesic is
    scaled by ``cos(π/2) = 0`` in ``dp`` and by ``sin(π/2)/(π/2)`` in ``du``:

    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> p, u, w = [0.0, 0.0, 1.0], [np.pi / 2, 0.0, 0.0], [0.0, 1.0, 0.0]
    >>> dp, du = adjoint_exp_derivatives(Sphere(2), p, u, w)
    >>> np.round(dp, 12).tolist(), np.round(du * np.pi / 2, 12).tolist()
    ([0.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    """
    check_regression_space(space)
    p = space.check_points(p, "p")
    u = space.check_vectors(u, "u")
    u = _check_tangent(space, p, u, "u")
    w = space.check_vectors(w, "w")
    y = space.unchecked.exp(p, u)
    w = _check_tangent(space, y, w, "w", where="Exp(p, u)")
    return space.unchecked.adjoint_exp_derivatives(p, u, w, y=y)


# ---------------------------------------------------------------- objective and gradient
def _chunks(space, batch: int, n: int):
    """Blocks ``(b0, b1, r0, r1)`` of parameter points × records with at most ~2e6 floats each."""
    size = int(np.prod(space.point_shape))
    per_point = n * size
    if per_point <= _CHUNK_FLOATS:
        step_b, step_r = max(1, _CHUNK_FLOATS // per_point), n
    else:
        step_b, step_r = 1, max(1, _CHUNK_FLOATS // size)
    for b0 in range(0, batch, step_b):
        for r0 in range(0, n, step_r):
            yield b0, min(b0 + step_b, batch), r0, min(r0 + step_r, n)


def _regression_terms(space, p, v, x, Y, residual_bound=None, *, gradient=True, objective=False):
    """Shared pass over the records: ``(grad_p, grad_v)``, ``E`` or both, batched over ``p``.

    Shapes: ``p (B, *ps)``, ``v (B, m, *ps)``, ``x (n, m)``, ``Y (n, *ps)``."""
    batch, n = p.shape[0], x.shape[0]
    grad_p = np.zeros(p.shape) if gradient else None
    grad_v = np.zeros(v.shape) if gradient else None
    sq = np.zeros(batch) if objective else None
    # With a residual bound non-finite values are expected (they contribute 0): no warnings.
    quiet = {"all": "ignore"} if residual_bound is not None else {}
    with np.errstate(**quiet):
        for block in _chunks(space, batch, n):
            _accumulate(space, p, v, x, Y, residual_bound, block, grad_p, grad_v, sq)
    if gradient:
        grad_p /= n
        grad_v /= n
    if not objective:
        return grad_p, grad_v
    energy = sq / (2.0 * n)
    return (grad_p, grad_v, energy) if gradient else energy


def _accumulate(space, p, v, x, Y, residual_bound, block, grad_p, grad_v, sq):
    """Add one block's terms to ``grad_p`` and ``grad_v`` (skipped when they are None) and to
    ``sq``, the sums of squared distances (skipped when None)."""
    n_axes = len(space.point_shape)
    axes = _point_axes(space)
    b0, b1, r0, r1 = block
    xr, Yr = x[r0:r1], Y[r0:r1]
    base = p[b0:b1, None]
    u = np.einsum("rm,bm...->br...", xr, v[b0:b1])
    fitted = space.unchecked.exp(base, u)
    if sq is not None:
        sq[b0:b1] += np.sum(np.asarray(space.unchecked.dist(fitted, Yr[None])) ** 2, axis=1)
    if grad_p is None:
        return
    residual = space.unchecked.log(fitted, Yr[None])
    if residual_bound is not None:
        norm = np.asarray(space.unchecked.norm(fitted, residual), dtype=float)
        ok = np.isfinite(norm) & np.all(np.isfinite(residual), axis=axes)
        scale = np.where(ok & (norm > residual_bound), residual_bound / np.where(norm > 0, norm, 1.0), 1.0)
        residual = np.where(_expand(ok, n_axes), residual * _expand(scale, n_axes), 0.0)
    dp, du = space.unchecked.adjoint_exp_derivatives(base, u, residual, y=fitted)
    if residual_bound is not None:
        dp = np.where(_expand(np.all(np.isfinite(dp), axis=axes), n_axes), dp, 0.0)
        du = np.where(_expand(np.all(np.isfinite(du), axis=axes), n_axes), du, 0.0)
    grad_p[b0:b1] -= np.sum(dp, axis=1)
    grad_v[b0:b1] -= np.einsum("rm,br...->bm...", xr, du)


def unchecked_regression_gradient(space, p, v, x, Y, residual_bound=None):
    """Unvalidated fast path of :func:`regression_gradient`, batched over parameter points.

    Parameters
    ----------
    p : numpy.ndarray, shape (*batch, *point_shape)
    v : numpy.ndarray, shape (*batch, m, *point_shape)
    x : numpy.ndarray, shape (n, m)
        Always two-dimensional here.
    Y : numpy.ndarray, shape (n, *point_shape)
    residual_bound : float or None

    Returns
    -------
    grad_p : numpy.ndarray, shape (*batch, *point_shape)
    grad_v : numpy.ndarray, shape (*batch, m, *point_shape)
    """
    p, v = np.asarray(p, dtype=float), np.asarray(v, dtype=float)
    ps = space.point_shape
    batch_shape = p.shape[: p.ndim - len(ps)]
    m = x.shape[1]
    flat_p = p.reshape((-1,) + ps)
    flat_v = v.reshape((-1, m) + ps)
    grad_p, grad_v = _regression_terms(space, flat_p, flat_v, x, Y, residual_bound)
    return grad_p.reshape(batch_shape + ps), grad_v.reshape(batch_shape + (m,) + ps)


def _regression_objective(space, p, v, x, Y):
    """Unvalidated ``E(p, v)`` batched like :func:`unchecked_regression_gradient`; shape ``batch``."""
    p, v = np.asarray(p, dtype=float), np.asarray(v, dtype=float)
    ps = space.point_shape
    batch_shape = p.shape[: p.ndim - len(ps)]
    flat_p, flat_v = p.reshape((-1,) + ps), v.reshape((-1, x.shape[1]) + ps)
    return _regression_terms(space, flat_p, flat_v, x, Y, gradient=False, objective=True).reshape(batch_shape)


def regression_objective(space, p, v, x, Y):
    """Least-squares energy ``E(p, v) = (1/2n) Σ_i ρ²(Exp(p, Σ_j x_ij v_j), y_i)``.

    Parameters
    ----------
    space : Manifold
    p : array_like, shape (*batch, *point_shape)
        Footpoint(s).
    v : array_like, shape (*batch, *point_shape) or (*batch, m, *point_shape)
        Tangent vector(s) at ``p``: the first form when ``x`` has shape ``(n,)``, the second when
        it has shape ``(n, m)``.
    x : array_like, shape (n,) or (n, m)
        Covariates.
    Y : array_like, shape (n, *point_shape)
        Responses, points of the space.

    Returns
    -------
    float or numpy.ndarray of shape batch
        A float for a single footpoint.

    Examples
    --------
    >>> from geodp.manifolds import Euclidean
    >>> regression_objective(Euclidean(1), [0.0], [1.0], [0.0, 1.0], [[0.0], [3.0]])
    1.0
    """
    check_regression_space(space)
    Y = space.check_points(Y, "Y", batch_ndim=1)
    x2, squeeze = _design(x, Y.shape[0])
    p, v, batch_shape = _parameters(space, p, v, x2.shape[1], squeeze, batch=True)
    out = _regression_objective(space, p, v, x2, Y)
    return float(out) if batch_shape == () else out


def regression_gradient(space, p, v, x, Y, *, residual_bound=None):
    """Riemannian gradient ``(∇_p E, ∇_v E)`` of the geodesic-regression energy.

    ``∇_p E = −(1/n) Σ_i d_pExp(p, u_i)^† ε_i`` and
    ``∇_{v_j} E = −(1/n) Σ_i x_ij d_uExp(p, u_i)^† ε_i``, ``u_i = Σ_j x_ij v_j``,
    ``ε_i = log_{ŷ_i}(y_i)`` (docs/math.md §9). Batched over parameter points.

    Parameters
    ----------
    space : Manifold
    p : array_like, shape (*batch, *point_shape)
    v : array_like, shape (*batch, *point_shape) or (*batch, m, *point_shape)
        As in :func:`regression_objective`.
    x : array_like, shape (n,) or (n, m)
    Y : array_like, shape (n, *point_shape)
    residual_bound : float, optional
        A public ``τ > 0``. Each residual ``ε_i`` is first scaled to norm at most ``τ`` (its
        direction kept), and a residual or an adjoint that is not finite contributes 0. Record
        ``i`` then contributes ``d_pExp^† ε_i / n`` with ``|ε_i| ≤ τ`` to ``∇_p E`` and
        ``x_ij d_uExp^† ε_i / n`` to ``∇_{v_j} E``: at most ``τ·‖d_pExp^†‖/n`` and
        ``τ·|x_ij|·‖d_uExp^†‖/n`` in norm, the operator norms being at most 1 when the curvature
        is non-negative (docs/math.md §9). This is the bounded-contribution form that private
        estimators release.

    Returns
    -------
    grad_p : numpy.ndarray, shape (*batch, *point_shape)
    grad_v : numpy.ndarray, shape of ``v``

    Raises
    ------
    InvalidDataError
        Shapes that do not match, NaN or inf, or ``v`` not tangent at ``p``.
    NotOnManifoldError
        ``p`` or a record of ``Y`` is not a point of the space.

    Notes
    -----
    ``unchecked_regression_gradient(space, p, v, x, Y, residual_bound=None)`` is the unvalidated fast path
    (``x`` always of shape ``(n, m)``, ``v`` always ``(*batch, m, *point_shape)``), chunked over
    parameter points × records to about 2e6 floats at a time.

    Examples
    --------
    >>> from geodp.manifolds import Euclidean
    >>> gp, gv = regression_gradient(Euclidean(1), [0.0], [1.0], [0.0, 1.0], [[0.0], [3.0]])
    >>> gp.tolist(), gv.tolist()
    ([-1.0], [-1.0])
    >>> gp, gv = regression_gradient(Euclidean(1), [0.0], [1.0], [0.0, 1.0], [[0.0], [3.0]],
    ...                              residual_bound=0.5)
    >>> gp.tolist(), gv.tolist()
    ([-0.25], [-0.25])
    """
    check_regression_space(space)
    Y = space.check_points(Y, "Y", batch_ndim=1)
    x2, squeeze = _design(x, Y.shape[0])
    if residual_bound is not None:
        residual_bound = check_positive(residual_bound, "residual_bound")
    p, v, batch_shape = _parameters(space, p, v, x2.shape[1], squeeze, batch=True)
    grad_p, grad_v = unchecked_regression_gradient(space, p, v, x2, Y, residual_bound)
    if squeeze:
        grad_v = grad_v.reshape(batch_shape + space.point_shape)
    return grad_p, grad_v


def geodesic_predict(space, p, v, x):
    """Fitted values ``Exp(p, Σ_j x_j v_j)``.

    Parameters
    ----------
    space : Manifold
    p : array_like, shape point_shape
        Footpoint (one point).
    v : array_like, shape point_shape or (m, *point_shape)
        Tangent vector(s) at ``p``: the first form with ``x`` of shape ``(n,)``, the second with
        ``x`` of shape ``(n, m)``.
    x : array_like, shape (n,) or (n, m)

    Returns
    -------
    numpy.ndarray, shape (n, *point_shape)

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> y = geodesic_predict(Sphere(2), [0.0, 0.0, 1.0], [np.pi / 2, 0.0, 0.0], [0.0, 1.0])
    >>> np.round(y, 12).tolist()
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    check_space(space)  # prediction needs only Exp
    x2, squeeze = _design(x)
    p, v, _ = _parameters(space, p, v, x2.shape[1], squeeze, batch=False)
    return space.unchecked.exp(p, np.einsum("nm,m...->n...", x2, v))


# -------------------------------------------------------------------------------- solver
def _flat_fit(space, x2, Y):
    """Ordinary least squares in the isometric chart."""
    coords = space.to_coordinates(Y)
    x_mean, c_mean = x2.mean(axis=0), coords.mean(axis=0)
    slopes = np.linalg.lstsq(x2 - x_mean, coords - c_mean, rcond=None)[0]  # (m, d)
    intercept = c_mean - x_mean @ slopes
    p = space.from_coordinates(intercept)
    v = space.unchecked.tangent_from_coordinates(p, slopes)
    return p, v


def _initial_guess(space, x2, Y):
    """Fréchet mean of ``Y``, then least squares of ``log_mean(y_i)`` on ``x`` in its tangent space."""
    from geodp.frechet import frechet_mean

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mean = frechet_mean(space, Y, max_iter=200)
    logs = space.unchecked.log(mean, Y)
    n = logs.shape[0]
    flat = logs.reshape(n, -1)
    x_mean, l_mean = x2.mean(axis=0), flat.mean(axis=0)
    slopes = np.linalg.lstsq(x2 - x_mean, flat - l_mean, rcond=None)[0]
    intercept = (l_mean - x_mean @ slopes).reshape(space.point_shape)
    slopes = slopes.reshape((x2.shape[1],) + space.point_shape)
    p = space.project(space.unchecked.exp(mean, space.to_tangent(mean, intercept)))
    v = space.to_tangent(p, space.unchecked.transport(mean, p, space.to_tangent(mean, slopes)))
    # Far from flat (large spread on hyperbolic space, say) the tangent fit can be worse than
    # the mean itself: start from whichever has the lower energy.
    candidates = [(mean, np.zeros_like(slopes))]
    if np.all(np.isfinite(p)) and np.all(np.isfinite(v)):
        candidates.append((p, v))
    with np.errstate(over="ignore", invalid="ignore"):
        energies = [float(_regression_objective(space, a, b, x2, Y)) for a, b in candidates]
    return candidates[int(np.argmin(np.where(np.isfinite(energies), energies, np.inf)))]


def _product_inner(space, p, a_p, a_v, b_p, b_v) -> float:
    return float(space.unchecked.inner(p, a_p, b_p)) + float(np.sum(space.unchecked.inner(p, a_v, b_v)))


def _descent(space, x2, Y, p, v, *, tol, max_iter):
    """Preconditioned Riemannian gradient descent on ``E(p, v)`` with Barzilai–Borwein steps.

    The direction is ``d = G⁻¹ g``: the gradient ``g = (∇_p E, ∇_{v_1} E, …)`` (all in ``T_pM``)
    mixed by the inverse of the design's Gram matrix ``G = (1/n) Σ z_i z_iᵀ``, ``z_i = (1, x_i)``.
    ``G ⊗ I`` is the Hessian of the Euclidean problem, so the first trial step 1 is Newton's step
    there, and the flow does not slow down for uncentred or badly scaled covariates. Later trial
    steps are BB1 in the metric ``G``: ``s·⟨d, g⟩/(⟨d, g⟩ − ⟨d, g'⟩)`` from two successive
    gradients, the older ones parallel transported. A trial step is kept when it passes the
    non-monotone Armijo test against the largest of the last 10 energies
    (Grippo–Lampariello–Lucidi, as in :func:`geodp.frechet._karcher_flow`), with an allowance of
    the energy's rounding level so that the last digits do not stall the flow; otherwise it is
    halved (Armijo backtracking). The update is ``p' = Exp(p, −s d_p)``,
    ``v'_j = Γ_{p→p'}(v_j − s d_{v_j})``; it stops when ``√(|∇_p E|² + Σ_j |∇_{v_j} E|²) ≤ tol``.
    """
    n = x2.shape[0]
    z = np.concatenate([np.ones((n, 1)), x2], axis=1)
    precondition = np.linalg.inv(z.T @ z / n)

    def evaluate(p, v):
        with np.errstate(over="ignore", invalid="ignore"):
            gp, gv, energy = _regression_terms(space, p[None], v[None], x2, Y, objective=True)
            g = np.concatenate([gp, gv[0]], axis=0)  # (m + 1, *point_shape)
            norm = math.sqrt(max(float(np.sum(space.unchecked.inner(p, g, g))), 0.0))
        return float(energy[0]), g, norm

    energy, g, grad_norm = evaluate(p, v)
    recent = [energy]
    trial = 1.0
    n_iter = 0
    while n_iter < max_iter and grad_norm > tol and math.isfinite(grad_norm):
        n_iter += 1
        d = np.tensordot(precondition, g, axes=1)
        slope = float(np.sum(space.unchecked.inner(p, d, g)))
        reference = max(recent)
        slack = 64.0 * np.finfo(float).eps * abs(reference)
        accepted = None
        for _ in range(_MAX_HALVINGS):
            with np.errstate(over="ignore", invalid="ignore"):
                new_p = space.project(space.unchecked.exp(p, -trial * d[0]))
                new_v = space.to_tangent(new_p, space.unchecked.transport(p, new_p, v - trial * d[1:]))
            if np.all(np.isfinite(new_p)) and np.all(np.isfinite(new_v)):
                new = evaluate(new_p, new_v)
                if math.isfinite(new[0]) and new[0] <= reference - _ARMIJO * trial * slope + slack:
                    accepted = new
                    break
            trial *= 0.5
        if accepted is None:
            break  # no decrease measurable in float64 along the descent direction
        old_d = space.unchecked.transport(p, new_p, d)
        p, v = new_p, new_v
        energy, g, grad_norm = accepted
        recent = (recent + [energy])[-_MEMORY:]
        # BB1 in the metric G, with s = −trial·Γ(d_old) and y = g − Γ(g_old): ⟨Γd_old, Γg_old⟩ is
        # the old slope (transport is an isometry).
        cross = float(np.sum(space.unchecked.inner(p, old_d, g)))
        if slope - cross > 0:
            trial = min(trial * slope / (slope - cross), 1e12)
        else:
            trial = min(2.0 * trial, 1e12)
    return p, v, RegressionInfo(n_iter, float(grad_norm), bool(grad_norm <= tol), float(energy))


def geodesic_regression(space, x, Y, *, init=None, max_iter: int = 1000, tol: float = 1e-10, return_info: bool = False):
    """Least-squares geodesic regression (Fletcher 2011): ``y ≈ Exp(p, Σ_j x_j v_j)``.

    Minimises ``E(p, v) = (1/2n) Σ_i ρ²(Exp(p, Σ_j x_ij v_j), y_i)`` over the footpoint ``p``
    (the fitted value at ``x = 0``) and the tangent vectors ``v_j ∈ T_pM``. Flat spaces
    (Euclidean, log-Euclidean SPD) use ordinary least squares in the isometric chart. Other
    spaces run Riemannian gradient descent (the gradient of :func:`regression_gradient`)
    preconditioned by the inverse Gram matrix of the design ``(1, x_i)`` — the exact Newton step
    of the Euclidean problem, which makes the descent insensitive to the scale of ``x`` — with
    Barzilai–Borwein steps and an Armijo backtracking safeguard, stopping when
    ``√(|∇_p E|² + Σ_j |∇_{v_j} E|²) ≤ tol`` (docs/math.md §9.1). Typical data around a
    geodesic need fewer than 10 iterations.

    Parameters
    ----------
    space : Manifold
        Euclidean, Sphere, Hyperbolic, KendallShape or SPD (either metric).
    x : array_like, shape (n,) or (n, m)
        Covariates, finite. ``p`` is the fit at ``x = 0``: centre and scale ``x`` for a well
        conditioned problem (the minimiser itself does not depend on the solver).
    Y : array_like, shape (n, *point_shape)
        Responses, validated (finite, on the manifold; Kendall configurations are turned into
        preshapes).
    init : tuple (p, v), optional
        Starting point of the descent (``v`` shaped as the returned one). Default: the Fréchet
        mean ``μ`` of ``Y`` and the least-squares fit of ``log_μ(y_i)`` on ``x`` in ``T_μM``,
        moved to ``p = Exp(μ, a)`` (usually close to the optimum). Ignored on flat spaces.
    max_iter : int, default 1000
        Iteration cap; a :class:`~geodp.errors.ConvergenceWarning` is raised when the descent
        stops before the gradient norm reaches ``tol``.
    tol : float, default 1e-10
        Gradient-norm tolerance.
    return_info : bool, default False
        Also return a :class:`RegressionInfo`.

    Returns
    -------
    p : numpy.ndarray, shape point_shape
    v : numpy.ndarray, shape point_shape when ``x`` has shape ``(n,)``, else (m, *point_shape)
    info : RegressionInfo
        Only when ``return_info`` is true.

    Raises
    ------
    InvalidDataError
        ``x`` not of shape ``(n,)``/``(n, m)`` matching ``Y``, NaN or inf, fewer than ``m + 1``
        records, a constant covariate, or collinear covariates (centred design of rank < m).
    NotOnManifoldError
        A record of ``Y`` (or ``init``'s point) is not a point of the space.
    InvalidTypeError
        ``space`` is not a supported geodp manifold.
    InvalidParameterError
        ``tol`` or ``max_iter`` out of range.

    Notes
    -----
    Energies with several local minima exist on curved spaces (records spread over more than the
    injectivity radius, large ``|v|``): the result is the minimum reached from ``init``. On
    curved spaces the model is not invariant to shifting ``x`` (``p`` is the fit at ``x = 0``,
    and for ``m ≥ 2`` ``Exp(p, ·)`` is not affine), and an extrapolated footpoint far from the
    data is ill-conditioned on hyperbolic space.

    References
    ----------
    P. T. Fletcher, *Geodesic regression on Riemannian manifolds*, MFCA 2011
    (docs/references.md, Fletcher 2011).

    Examples
    --------
    Points along a great circle are fitted exactly:

    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> space = Sphere(2)
    >>> x = np.linspace(-1.0, 1.0, 5)
    >>> Y = geodesic_predict(space, [0.0, 0.0, 1.0], [0.3, 0.4, 0.0], x)
    >>> p, v, info = geodesic_regression(space, x, Y, return_info=True)
    >>> (np.round(p, 8) + 0.0).tolist(), (np.round(v, 8) + 0.0).tolist(), info.converged
    ([0.0, 0.0, 1.0], [0.3, 0.4, 0.0], True)
    """
    check_regression_space(space)
    Y = space.check_points(Y, "Y", batch_ndim=1)
    x2, squeeze = _design(x, Y.shape[0])
    _check_identifiable(x2)
    tol = check_positive(tol, "tol")
    max_iter = check_positive_integer(max_iter, "max_iter")
    m = x2.shape[1]
    if init is not None:
        if not (isinstance(init, (tuple, list)) and len(init) == 2):
            raise InvalidTypeError(f"init must be a pair (p, v), got {type(init).__name__}.")
        p0, v0, _ = _parameters(space, init[0], init[1], m, squeeze, batch=False)

    if space.is_flat:
        p, v = _flat_fit(space, x2, Y)
        gp, gv, energy = _regression_terms(space, p[None], v[None], x2, Y, objective=True)
        grad_norm = math.sqrt(max(_product_inner(space, p, gp[0], gv[0], gp[0], gv[0]), 0.0))
        # The closed form is exact: its computed gradient is rounding, relative to the data scale.
        scale = 1.0 + float(np.max(np.abs(space.to_coordinates(Y))))
        info = RegressionInfo(0, grad_norm, bool(grad_norm <= max(tol, 1e-8 * scale)), float(energy[0]))
    else:
        if init is None:
            p0, v0 = _initial_guess(space, x2, Y)
        p, v, info = _descent(space, x2, Y, p0, v0, tol=tol, max_iter=max_iter)
        if not info.converged:
            warnings.warn(
                f"geodesic regression stopped after {info.n_iter} iterations with gradient norm "
                f"{info.grad_norm:.3g} (tol={tol:g}); increase max_iter or loosen tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
    if squeeze:
        v = v.reshape(space.point_shape)
    return (p, v, info) if return_info else (p, v)
