"""Private Riemannian gradient descent: clipped per-record gradients plus exact tangent Gaussian noise.

Each step at the public iterate ``x_t`` releases the noisy tangent vector

    ``G_t = Σ_i clip_C(g_i(x_t)) + σ·C·Z_t``,   ``Z_t = space.random_tangent(x_t)``

(``clip_C`` shrinks a tangent vector to norm ≤ C in the metric at ``x_t``; ``Z_t`` is the standard
Gaussian of the tangent space, exact on every space), then moves to
``x_{t+1} = Π(Exp_{x_t}(−step·G_t / n))`` with ``Π`` the geodesic projection onto the public ball.
In an orthonormal basis of ``T_{x_t}M`` the release is the Gaussian mechanism on ``R^d``; under
replace-one adjacency (n public) one record moves the clipped sum by at most ``2C``, so each step
is ``(2/σ)``-GDP, and the ``T`` adaptive steps are ``μ = 2√T/σ``-GDP (Dong, Roth & Su 2022,
Cor. 3.3); the Exp step and the projection are post-processing. σ is the smallest with
``ε(μ, δ) ≤ ε`` (Balle & Wang 2018's exact curve of the Gaussian). docs/math.md, "Private
Riemannian gradient descent", has the proof.

Only full-batch descent is offered: Poisson subsampling under replace-one adjacency needs a
dominating pair for the subsampled tangent Gaussian that is not proved here (docs/math.md).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from geodp.calibration import gaussian_sigma
from geodp.distributions.base import check_private_points
from geodp.errors import InvalidParameterError
from geodp.manifolds.base import check_space
from geodp.mechanisms.base import Guarantee, sampler_construction
from geodp.release import (
    ReleasePlan,
    ball_stand_ins,
    check_timing_safe,
    execute,
    private_section,
    timing_deadline,
    timing_safe_plan,
)
from geodp.secure import is_secure
from geodp.validation import as_generator, check_delta, check_epsilon, check_positive, check_positive_integer

__all__ = [
    "PrivateGDResult",
    "clipped_gradient_sum",
    "descend",
    "gd_guarantee",
    "gd_noise_multiplier",
    "noisy_gradient_sum",
    "private_riemannian_gd",
]


class PrivateGDResult(NamedTuple):
    """What :func:`private_riemannian_gd` returns: the final iterate and the release's guarantee.

    Examples
    --------
    >>> PrivateGDResult(point=None, guarantee=None)._fields
    ('point', 'guarantee')
    """

    point: np.ndarray
    guarantee: Guarantee


def gd_noise_multiplier(epsilon, delta, iterations) -> float:
    """σ: the noise standard deviation per unit of ``clip`` that makes ``iterations`` full-batch
    steps (each a Gaussian release of replace-one sensitivity ``2·clip``) (ε, δ)-DP together.

    ``σ = 2√T·σ₁`` with ``σ₁`` the analytic Gaussian scale of one release of sensitivity 1 at
    (ε, δ) (:func:`geodp.calibration.gaussian_sigma`): the composition is ``μ = 2√T/σ = 1/σ₁``-GDP.

    Examples
    --------
    >>> round(gd_noise_multiplier(1.0, 1e-5, 100), 3)
    74.613
    """
    iterations = check_positive_integer(iterations, "iterations")
    return 2.0 * math.sqrt(iterations) * gaussian_sigma(epsilon, delta, 1.0)


def clipped_gradient_sum(space, x, gradients, clip) -> np.ndarray:
    """``Σ_i clip_C(g_i)``: each gradient projected onto the tangent space at ``x``
    (``space.to_tangent``: a normal part would be released without noise), shrunk to norm ≤
    ``clip`` in the metric at ``x``, then summed. A non-finite gradient (or one whose norm overflows) counts as zero (a
    per-record rule, so replacing one record still moves the sum by at most ``2·clip``).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Euclidean
    >>> clipped_gradient_sum(Euclidean(2), np.zeros(2), np.array([[3.0, 4.0], [0.1, 0.0]]), 1.0).round(6)
    array([0.7, 0.8])
    """
    g = np.asarray(gradients, dtype=float)
    ones = (1,) * (g.ndim - 1)
    finite = np.isfinite(g.reshape(g.shape[0], -1)).all(axis=1)
    with np.errstate(all="ignore"):  # the normal part removed: only tangent directions get noise
        g = space.to_tangent(x, np.where(finite.reshape((-1, *ones)), g, 0.0))
    with np.errstate(all="ignore"):  # a norm that overflows gives factor 0: that record counts as zero
        norms = np.asarray(space.unchecked.norm(x, g), dtype=float).reshape(-1)
        factor = np.where(norms > clip, clip / np.where(norms > 0, norms, 1.0), 1.0)
        factor = np.where(np.isfinite(norms), factor, 0.0)
        return np.sum(factor.reshape((-1, *ones)) * g, axis=0)


def noisy_gradient_sum(space, x, gradients, clip, noise_multiplier, rng) -> np.ndarray:
    """One private step's release: :func:`clipped_gradient_sum` plus ``σ·clip·Z``, ``Z`` the
    exact standard Gaussian of the tangent space at ``x`` (``space.unchecked.random_tangent``).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> x = np.array([0.0, 0.0, 1.0])
    >>> v = noisy_gradient_sum(Sphere(2), x, np.zeros((5, 3)), 1.0, 2.0, np.random.default_rng(0))
    >>> v.shape, abs(float(v @ x)) < 1e-12                 # a tangent vector at x
    ((3,), True)
    """
    noise = space.unchecked.random_tangent(x, rng=rng)
    return clipped_gradient_sum(space, x, gradients, clip) + (noise_multiplier * clip) * noise


def _check_settings(space, epsilon, delta, iterations, step, clip, center, radius):
    space = check_space(space)
    epsilon, delta = check_epsilon(epsilon), check_delta(delta, allow_zero=False)
    iterations = check_positive_integer(iterations, "iterations")
    step, clip, radius = check_positive(step, "step"), check_positive(clip, "clip"), check_positive(radius, "radius")
    center = space.check_points(center, "center", batch_ndim=0)
    return space, epsilon, delta, iterations, step, clip, center, radius


def gd_guarantee(space, *, epsilon, delta, iterations, step, clip, center, radius, random_state=None) -> Guarantee:
    """The :class:`~geodp.mechanisms.base.Guarantee` of :func:`private_riemannian_gd` with these
    public settings (``gdp_mu`` is the composed μ; ``scale`` the noise std ``σ·clip``).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> g = gd_guarantee(Sphere(2), epsilon=1.0, delta=1e-5, iterations=100, step=0.5, clip=1.0,
    ...                  center=np.array([0.0, 0.0, 1.0]), radius=1.0)
    >>> round(g.gdp_mu, 4), g.sensitivity, g.exact
    (0.2681, 2.0, True)
    """
    space, epsilon, delta, iterations, step, clip, center, radius = _check_settings(
        space, epsilon, delta, iterations, step, clip, center, radius
    )
    sigma = gd_noise_multiplier(epsilon, delta, iterations)
    return Guarantee(
        mechanism=(
            f"private Riemannian gradient descent (full batch, T = {iterations}, step = {step!r}, clip = {clip!r})"
        ),
        epsilon=epsilon,
        delta=delta,
        sensitivity=2.0 * clip,
        metric="norm of the metric at the public iterate (clipped gradient sum, per step)",
        scale=sigma * clip,
        scale_rule=(
            "σ = 2√T·σ₁, σ₁ the smallest std with δ(σ₁) ≤ δ for the Gaussian of sensitivity 1 (Balle & Wang 2018, "
            "Thm 8); T steps of sensitivity 2·clip and std σ·clip compose to μ = 2√T/σ-GDP (Dong, Roth & Su 2022)"
        ),
        space=repr(space),
        sampler="exact: standard Gaussian of the tangent space at each iterate (space.random_tangent), scaled",
        exact=True,
        support="the public ball (every iterate is projected onto it)",
        assumptions=(
            "per-record gradients clipped to norm <= clip in the metric at the iterate (non-finite ones set to 0)",
            "iterate, step, clip and T public; the release of each step is post-processed by Exp and the "
            "projection onto the public ball",
            "full batch (no subsampling)",
        ),
        gdp_mu=1.0 / gaussian_sigma(epsilon, delta, 1.0),
        **sampler_construction(as_generator(random_state), "no floating-point-safe tangent Gaussian on a manifold"),
    )


def private_riemannian_gd(
    space,
    loss_grad,
    X,
    *,
    epsilon,
    delta,
    iterations,
    step,
    clip,
    center,
    radius,
    batch=None,
    start=None,
    accountant=None,
    random_state=None,
    timing_safe=False,
) -> PrivateGDResult:
    """Minimise ``(1/n) Σ_i f(x, X_i)`` over the public ball, (ε, δ)-DP (module docstring).

    Parameters
    ----------
    space : Manifold
    loss_grad : callable
        ``loss_grad(x, X)`` → per-record Riemannian gradients at ``x``, shape ``(n, *point_shape)``
        (tangent vectors at ``x``). Called only inside the private part.
    X : array_like, shape (n, *point_shape)
        The private records (points of ``space``).
    epsilon : float
    delta : float
        In (0, 1).
    iterations : int
        T, public.
    step : float
        Step size η (public): ``x ← Exp_x(−η·G/n)``.
    clip : float
        Per-record gradient norm bound C (public).
    center, radius
        The public ball the iterates are projected onto.
    batch : None
        Only full batch (None) is supported (module docstring).
    start : point, optional
        Public starting point; default ``center``.
    accountant : BudgetAccountant, optional
        Charged the guarantee (μ-GDP event) before any record is read.
    random_state : None, int or numpy.random.Generator
    timing_safe : bool or float, default False
        Timing-safe release (docs/guide.md): the T steps are fixed public work already; the wall
        time is padded to a public deadline (True: calibrated on public stand-in records in the
        ball) and the guarantee becomes (ε, δ + δ_t), charged so (``guarantee.delta`` includes δ_t).

    Returns
    -------
    PrivateGDResult
        ``point`` (the final iterate) and ``guarantee``.

    Raises
    ------
    InvalidParameterError
        A setting is invalid, or ``batch`` is not None (before any charge).
    NotOnManifoldError
        A record is not a point of ``space`` (after the charge: whether it raises depends on the data).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Euclidean
    >>> X = np.random.default_rng(0).normal(size=(500, 2))
    >>> grad = lambda x, X: x - X                           # f(x, X_i) = |x − X_i|²/2
    >>> res = private_riemannian_gd(Euclidean(2), grad, X, epsilon=1.0, delta=1e-5, iterations=20, step=0.5,
    ...                             clip=3.0, center=np.zeros(2), radius=3.0, random_state=0)
    >>> bool(np.linalg.norm(res.point - X.mean(axis=0)) < 0.5), res.guarantee.exact
    (True, True)
    """
    if batch is not None:
        raise InvalidParameterError(
            "batch: only full-batch descent (batch=None) is available; Poisson subsampling under replace-one "
            "adjacency is not yet supported (docs/math.md, 'Private Riemannian gradient descent')."
        )
    if not callable(loss_grad):
        raise InvalidParameterError("loss_grad must be callable: loss_grad(x, X) -> per-record gradients.")
    guarantee = gd_guarantee(
        space,
        epsilon=epsilon,
        delta=delta,
        iterations=iterations,
        step=step,
        clip=clip,
        center=center,
        radius=radius,
        random_state=random_state,
    )
    space, center = check_space(space), space.check_points(center, "center", batch_ndim=0)
    x = center if start is None else space.check_points(start, "start", batch_ndim=0)
    x = space.unchecked.clip_to_ball(x[None], center, float(radius))[0][0]
    data = space.unchecked.dataset_array(X, "X")
    rng = as_generator(random_state)
    timing = check_timing_safe(timing_safe)

    def private_part(records, rng):
        records = check_private_points(space, records, "X")
        return descend(
            space,
            loss_grad,
            records,
            x,
            iterations=iterations,
            step=step,
            clip=clip,
            noise_multiplier=guarantee.scale / clip,
            center=center,
            radius=radius,
            rng=rng,
        )

    if timing is False:
        if accountant is not None:
            accountant.spend(guarantee)
        with private_section():
            point = private_part(data, rng)
        return PrivateGDResult(point, guarantee)
    n = data.shape[0]
    plan = ReleasePlan(
        "private_riemannian_gd",
        n,
        guarantee.epsilon,
        guarantee.delta,
        guarantee.sensitivity,
        guarantee.scale,
        True,
        guarantee.sampler,
        report=None,
        gdp_mu=guarantee.gdp_mu,
    )
    plan = timing_safe_plan(plan, timing)
    stand_in_rng = as_generator(None if is_secure(rng) else 0)
    deadline = timing_deadline(
        timing,
        lambda records: private_part(records, stand_in_rng),
        lambda: ball_stand_ins(space, center, float(radius), n),
    )
    point, _ = execute(plan, accountant, lambda: private_part(data, rng), deadline=deadline)
    line = f"timing-safe: fixed public work, wall time padded to {deadline:.6g} s; delta includes delta_t"
    guarantee = replace(
        guarantee, delta=plan.delta, gdp_mu=None, zcdp_rho=None, assumptions=(*guarantee.assumptions, line)
    )
    return PrivateGDResult(point, guarantee)


def descend(space, loss_grad, data, x, *, iterations, step, clip, noise_multiplier, center, radius, rng):
    """The private loop of :func:`private_riemannian_gd`, for estimators built on it: ``iterations``
    steps from the public start ``x`` on validated ``data``; nothing here checks its arguments,
    and the caller charges ``gd_guarantee`` of the same settings first.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Euclidean
    >>> x = descend(Euclidean(1), lambda x, X: x - X, np.ones((4, 1)), np.zeros(1), iterations=3, step=1.0,
    ...             clip=1.0, noise_multiplier=0.0, center=np.zeros(1), radius=5.0, rng=np.random.default_rng(0))
    >>> x.round(6)
    array([1.])
    """
    n = data.shape[0]
    for _ in range(iterations):
        g = noisy_gradient_sum(space, x, loss_grad(x, data), clip, noise_multiplier, rng)
        moved = space.unchecked.exp(x, (-step / n) * g)
        x = space.unchecked.clip_to_ball(moved[None], center, radius)[0][0]
    return x
