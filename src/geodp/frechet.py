"""Fréchet mean: closed form on flat spaces, Karcher flow elsewhere (docs/math.md §2)."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from geodp.errors import ConvergenceWarning, InvalidParameterError
from geodp.manifolds.base import Manifold, check_space
from geodp.records import DaskRecords, InMemoryRecords, is_dask
from geodp.validation import check_positive, check_positive_integer
from geodp.work import count, fixed_work

__all__ = [
    "frechet_mean",
    "FrechetMeanInfo",
    "hessian_bound",
    "convexity_bound",
    "karcher_iteration_budget",
    "uniqueness_radius",
]


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
        Whether ``grad_norm < tol`` **and** the result is certified to be the unique Fréchet
        mean: every record lies within :func:`uniqueness_radius` of it, which always holds on
        spaces of non-positive curvature.
    method : str
        ``"closed-form"`` or ``"karcher-flow"``.
    unique : bool
        Whether the uniqueness certificate above holds.
    n_passes : int
        Passes over the records (each reads every record once): 1 for a closed form, one per
        evaluation of the gradient (plus the start and the uniqueness check) for the flow.
    """

    n_iter: int
    grad_norm: float
    converged: bool
    method: str
    unique: bool = True
    n_passes: int = 0


def hessian_bound(space: Manifold, distance) -> float:
    """Upper bound on the Hessian of ``½ρ²(·, y)`` at points within ``distance`` of ``y``.

    ``√−κ d · coth(√−κ d)`` with ``κ = κ_min < 0`` (Hessian comparison), and 1 when the
    curvature is non-negative. A Karcher-flow step of ``1/L`` then decreases the objective.

    Examples
    --------
    >>> from geodp.manifolds import Hyperbolic, Sphere
    >>> round(hessian_bound(Hyperbolic(2), 10.0), 6), hessian_bound(Sphere(2), 1.0)
    (10.0, 1.0)
    """
    kappa_min = space.curvature_bounds[0]
    a = math.sqrt(-kappa_min) * float(distance) if kappa_min < 0 else 0.0
    return a / math.tanh(a) if a > 1e-8 else 1.0


def convexity_bound(space: Manifold, distance) -> float:
    """Lower bound on the Hessian of ``½ρ²(·, y)`` within ``distance`` of ``y``:
    ``√κ d · cot(√κ d)`` with ``κ = κ_max > 0`` (0 beyond ``π/(2√κ)``), and 1 otherwise.

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> round(convexity_bound(Sphere(2), 0.5), 6)
    0.915244
    """
    kappa_max = space.curvature_bounds[1]
    if kappa_max <= 0:
        return 1.0
    a = math.sqrt(kappa_max) * float(distance)
    if a >= math.pi / 2:
        return 0.0
    return a / math.tan(a) if a > 1e-8 else 1.0


def karcher_iteration_budget(space: Manifold, radius: float, tol: float) -> int:
    """A public number of Karcher-flow iterations that suffices for data in a ball of ``radius``
    around the flow's start.

    On spaces of non-positive curvature (docs/math.md §15, "Iterations") ``F`` is 1-strongly
    convex, and under fixed work each iteration does at least as well as the safe step ``1/L``,
    ``L ≤ 1 + √−κ (√(2F) + ‖∇F‖) ≤ L_B = 1 + 2r√−κ``: the objective gap, at most ``r²/2`` at the
    start, contracts by ``1 − 1/L_B`` per iteration, and ``‖∇F‖² ≤ 2 L_B·gap``. The budget is
    ``⌈L_B log(2 r² L_B / tol²)⌉``, enough to bring the gradient below ``tol`` (with a factor 2
    to spare on the starting gap). On positively curved spaces it is four times the number of
    ``1 − μ/L`` contractions needed to bring the gradient from ``2r`` below ``tol``
    (``L = hessian_bound(4r)``, ``μ = convexity_bound(2r)``), plus 100. Both depend only on
    public quantities.

    Examples
    --------
    >>> from geodp.manifolds import Hyperbolic, Sphere
    >>> big_l = 1 + 2 * 10.0  # H², r = 10
    >>> karcher_iteration_budget(Hyperbolic(2), 10.0, 1e-9) == math.ceil(big_l * math.log(2 * 100 * big_l / 1e-18))
    True
    >>> karcher_iteration_budget(Sphere(2), 0.5, 1e-10) < 250
    True
    """
    kappa_min, kappa_max = space.curvature_bounds
    radius = float(radius)
    if kappa_max <= 0:
        big_l = 1.0 + 2.0 * radius * math.sqrt(max(-kappa_min, 0.0))
        return int(math.ceil(big_l * math.log(max(2.0 * radius**2 * big_l / tol**2, math.e))))
    big_l = hessian_bound(space, 4.0 * radius)
    mu = max(convexity_bound(space, 2.0 * radius), 1e-3)
    return int(math.ceil(4.0 * big_l / mu * math.log(max(2.0 * radius * big_l, 1.0) / tol))) + 100


def uniqueness_radius(space: Manifold) -> float:
    """Records within this distance of a critical point of F make it the unique Fréchet mean:
    ``½ min(inj, π/√κ_max)`` (Afsari 2011), infinite when κ_max ≤ 0.

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> round(uniqueness_radius(Sphere(2)), 6)
    1.570796
    """
    kappa_max = space.curvature_bounds[1]
    if kappa_max <= 0:
        return math.inf
    return 0.5 * min(space.injectivity_radius, math.pi / math.sqrt(kappa_max))


def _barzilai_borwein(space, previous, mean, direction) -> float | None:
    """``1/λ`` with λ the Hessian's Rayleigh quotient along the previous step (None if unusable,
    or if the space has no parallel transport, as some wrapped geomstats spaces).

    The previous direction, parallel transported to ``mean``, is the velocity at ``mean`` of the
    geodesic the step followed, divided by the step length; spaces that give that velocity in
    closed form (:meth:`~geodp.manifolds.Manifold._exp_with_velocity`) spare the transport. Its
    squared norm is that of the previous direction (transport is an isometry)."""
    old_mean, old_direction, old_step, velocity, norm2 = previous
    if velocity is not None:
        moved = velocity / old_step
    else:
        try:
            moved = space.unchecked.transport(old_mean, mean, old_direction)
        except NotImplementedError:
            return None
    hessian_times_moved = (moved - direction) / old_step  # −∇F changes by −H·(step·d)
    curvature = float(space.unchecked.inner(mean, moved, hessian_times_moved))
    if not (curvature > 0 and norm2 > 0):
        return None
    return norm2 / curvature


_ARMIJO = 1e-4
_MEMORY = 10


def _safe_step(space, grad_norm, objective, max_dist) -> float:
    """``1/L``, ``L`` a bound on F's Hessian over the gradient step from the current point
    (distances to the records grow by at most the step's length, at most ``‖∇F‖``): the Hessian
    bound of ``½ρ²`` at the largest distance, and, with ``κ_min < 0``, its mean over the records,
    ``1 + √−κ (Σ w_i ρ_i + ‖∇F‖) ≤ 1 + √−κ (√(2F) + ‖∇F‖)`` (``a coth a ≤ 1 + a``, and the mean
    distance is at most the root mean square), which does not grow with one far record."""
    bound = hessian_bound(space, max_dist + grad_norm)
    kappa_min = space.curvature_bounds[0]
    if kappa_min < 0:
        bound = min(bound, 1.0 + math.sqrt(-kappa_min) * (math.sqrt(2.0 * max(objective, 0.0)) + grad_norm))
    return 1.0 / bound


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
    X : array_like or dask.array.Array, shape (n, *space.point_shape)
        Points on the manifold; validated (finite, on the manifold). A Dask array (``[dask]``
        extra) is never materialised: each pass of the flow (one per iteration, one in all on
        flat spaces) reads its chunks once and combines per-chunk sums, so memory does not grow
        with ``n``; weights must then be uniform.
    weights : array_like, shape (n,), optional
        Non-negative weights, normalised to sum to 1. Default uniform.
    tol : float, default 1e-10
        Stop when the Riemannian gradient norm falls below ``tol``. (Papers used 1e-5.)
    max_iter : int, default 100
        Iteration cap. A :class:`~geodp.errors.ConvergenceWarning` is raised when it is reached,
        and when the result is not certified unique (a record at :func:`uniqueness_radius` or more, e.g.
        two antipodal points on the sphere); ``info.converged`` is then False.
    step : float, default 1.0
        Karcher-flow step size (papers used 0.5). With ``adaptive`` it is the first trial step.
    adaptive : bool, default True
        Globalised flow: the trial step (``step`` first, then the Barzilai–Borwein step ``1/λ``,
        λ the Hessian's Rayleigh quotient from two successive gradients, the older one parallel
        transported) is kept only if it passes the non-monotone Armijo test against the largest
        of the last 10 values of F (so F never exceeds its starting value); otherwise the step
        ``1/L`` is taken, ``L = hessian_bound(space, d)`` the Hessian bound of ``½ρ²`` over the
        step (:func:`hessian_bound`), which always decreases F. A fixed step of 1 overshoots on
        dispersed data in negatively curved spaces (the Hessian reaches ``d·coth d``, 20 at
        distance 20); this flow does not. ``False`` gives the plain fixed-step flow of the
        papers, which may diverge there.
    init : array_like, optional
        Starting point of the flow; default the projected extrinsic mean ``Σ w_i x_i`` on the
        sphere (normalised) and the hyperboloid (lifted), the log-Euclidean mean ``expm(Σ w_i log x_i)``
        on affine-invariant SPD, the first record elsewhere.
        Private estimators start from the public centre.
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
    check_space(space)
    tol = check_positive(tol, "tol")
    step = check_positive(step, "step")
    max_iter = check_positive_integer(max_iter, "max_iter")
    if is_dask(X):
        if weights is not None:
            raise InvalidParameterError("weights are not supported for a Dask array X; pass weights=None.")
        records = DaskRecords(space, X)
    else:
        records = InMemoryRecords(space, X, weights)
    start = None if init is None else space.check_points(init, "init", batch_ndim=0)
    mean, info = mean_of_records(space, records, start, tol=tol, max_iter=max_iter, step=step, adaptive=adaptive)
    return (mean, info) if return_info else mean


# Per-block parts of a pass: module-level functions, so that a distributed scheduler can ship them.
def _direction_part(space, x, block, weights):
    return space._karcher_direction(x, block, weights)


def _newton_part(space, x, block, weights):
    return space._karcher_direction(x, block, weights, hessian=True)


def _max_dist_part(space, x, block, weights):
    return space._max_dist(x, block)


def _coordinates_part(space, block, weights):
    return space._coordinate_sum(block, weights)


def _direction(space, records, x):
    """``(direction, grad_norm, objective, max_dist, newton_state)`` at ``x``: one pass. The
    Newton state (per-block Hessian data) only for in-memory records on spaces that offer it."""
    newton = space._karcher_newton and records.keeps_hessian
    parts = records.map(_newton_part if newton else _direction_part, space, x)
    if len(parts) == 1:  # one block (n ≤ 16,384 in memory): nothing to combine
        direction, objective, max_dist = parts[0][:3]
    else:
        direction, objective, max_dist = sum(p[0] for p in parts), sum(p[1] for p in parts), max(p[2] for p in parts)
    state = [p[3] for p in parts] if newton else None
    return direction, space._karcher_grad_norm(x, direction), objective, max_dist, state


def mean_of_records(space, records, start, *, tol, max_iter, step, adaptive):
    """The Fréchet mean of validated records (blocks in memory or chunks of a Dask array)."""
    if space.is_flat:
        parts = records.map(_coordinates_part, space)
        n_invalid = sum(p[1] for p in parts)
        if n_invalid:
            records.raise_invalid(n_invalid)
        mean, grad_norm, size = space._closed_form_mean(parts[0][0] if len(parts) == 1 else sum(p[0] for p in parts))
        converged = bool(grad_norm < max(tol, 1e-8 * (1.0 + size)))
        return mean, FrechetMeanInfo(0, grad_norm, converged, "closed-form", n_passes=records.n_passes)
    mean, info = _karcher_flow(
        space, records, _flow_start(space, records, start), tol=tol, max_iter=max_iter, step=step, adaptive=adaptive
    )
    if not info.converged:
        reason = (
            f"stopped after {info.n_iter} iterations with gradient norm {info.grad_norm:.3g} "
            f"(tol={tol:g}); increase max_iter"
            if info.grad_norm >= tol or not np.isfinite(info.grad_norm)
            else f"some records are {uniqueness_radius(space):.6g} or more from the result, so the "
            "Fréchet mean may not be unique (the result is a critical point of F)"
        )
        warnings.warn(f"Karcher flow: {reason}.", ConvergenceWarning, stacklevel=3)
    return mean, info


def _flow_start(space, records, start):
    """The flow's start: ``start`` when given (the records then validated in a pass of their
    own), else the space's start from the records' statistic (one pass that also validates
    them), or the first record where the space has none. Only the flow holds it (no caller's
    reference outlives its first step)."""
    if start is not None:
        records.validate()
        return start
    start = space._karcher_start(records.start())
    if start is None or not np.all(np.isfinite(start)):
        start = np.array(records.first(), dtype=float)
    return start


def _karcher_flow(space, records, mean, *, tol, max_iter, step, adaptive):
    """Riemannian gradient descent on ``F(x) = ½ Σ w_i ρ²(x, x_i)``.

    Adaptive: the trial step is ``step`` first, then Barzilai–Borwein (on affine-invariant SPD
    in memory: the inexact Newton step of :meth:`_newton_direction`, from the Hessian state of
    the same pass); it is kept only if it satisfies the non-monotone Armijo condition of Grippo,
    Lampariello & Lucidi (1986) against the largest of the last ``_MEMORY`` objective values (as
    in Raydan's 1997 globalised BB method), otherwise the safe gradient step ``1/L`` is taken,
    ``L`` the Hessian bound over the segment (distances to the records grow by at most the step
    length), which decreases F in exact arithmetic. F never exceeds its starting value, and the
    flow converges on every space. Each evaluation of the direction is one pass over the records.

    Under fixed work (:func:`geodp.work.fixed_work`, a timing-safe release) the flow runs all
    ``max_iter`` iterations and each makes the same work: two passes (the trial step's and the
    safe step's, both made) and one Barzilai–Borwein evaluation after the first (on the last
    displacement, or a stand-in one, when none is usable); it keeps whichever of the two points
    has the smaller F, so F never increases and every iteration does at least as well as the
    safe step, which is what :func:`karcher_iteration_budget` counts on. Once converged an
    iteration still computes its passes but keeps the mean.
    """
    fixed = fixed_work() is not None
    direction, grad_norm, objective, max_dist, state = _direction(space, records, mean)
    recent = [objective]
    previous = None
    velocity = None
    n_iter = 0
    while n_iter < max_iter and (fixed or (grad_norm >= tol and math.isfinite(grad_norm))):
        n_iter += 1
        count("iterations")
        active = bool(grad_norm >= tol and np.isfinite(grad_norm))
        safe = _safe_step(space, grad_norm, objective, max_dist)
        norm = grad_norm if active else max(grad_norm, tol)  # past convergence the same work, without a 1/0
        newton = space._newton_direction(mean, direction, state, norm, tol) if adaptive and state is not None else None
        usable_newton = newton is not None and newton[1] > 0 and np.all(np.isfinite(newton[0]))
        bb = None
        if adaptive and (previous is not None and not usable_newton):
            bb = _barzilai_borwein(space, previous, mean, direction)
        elif adaptive and fixed and n_iter > 1:  # the same work when there is no usable displacement
            stand_in = (mean, direction, 1.0, None if velocity is None else direction, max(norm, tol) ** 2)
            bb = _barzilai_borwein(space, previous or stand_in, mean, direction)
        if usable_newton:
            move, length, decrease, checked = newton[0], None, newton[1], True
        else:
            trial = max(bb or safe, safe) if adaptive and previous is not None else step
            move, length, decrease, checked = trial * direction, trial, trial * grad_norm**2, adaptive and trial > safe
        if not fixed:  # used up; set again below (fixed work past convergence keeps it)
            previous = None
        candidate, velocity = space._exp_with_velocity(mean, move)
        del move, newton  # not held through the pass (issue 24: a call's fixed memory at n = 100)
        new = _direction(space, records, candidate)
        if fixed:  # both points, the smaller F kept: monotone, and never worse than the safe step
            fallback, fallback_velocity = space._exp_with_velocity(mean, safe * direction)
            other = _direction(space, records, fallback)
            if not new[2] <= other[2]:
                length, candidate, velocity, new = safe, fallback, fallback_velocity, other
                usable_newton = False
        elif checked and not new[2] <= max(recent) - _ARMIJO * decrease:
            move, length = safe * direction, safe
            candidate, velocity = space._exp_with_velocity(mean, move)
            new = _direction(space, records, candidate)
            usable_newton = False
        if not active:  # fixed work past convergence: the passes are made, the mean is kept
            continue
        # Barzilai–Borwein needs a gradient step (the displacement along the old direction): its
        # velocity at the new mean, else the old mean and direction to transport (only then held).
        if usable_newton:
            previous = None
        elif velocity is not None:
            previous = (None, None, length, velocity, grad_norm**2)
        else:
            previous = (mean, direction, length, None, grad_norm**2)
        mean = candidate
        recent.append(new[2])
        del recent[:-_MEMORY]
        direction, grad_norm, objective, max_dist, state = new
    limit = uniqueness_radius(space)
    # On positively curved spaces measure the distances afresh (a log at the cut locus is 0),
    # unless the passes measure them exactly.
    if limit < math.inf and not space._karcher_exact_distances:
        max_dist = max(records.map(_max_dist_part, space, mean))
    unique = bool(np.all(np.isfinite(mean)) and (limit == math.inf or max_dist < limit))
    converged = bool(grad_norm < tol) and unique
    return mean, FrechetMeanInfo(n_iter, float(grad_norm), converged, "karcher-flow", unique, records.n_passes)
