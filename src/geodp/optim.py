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

With ``batch=b`` (the expected batch size, public) each step includes every record
independently with probability ``q = b/n`` (Poisson subsampling, drawn from the run's generator:
geodp.secure's when ``random_state`` is None), sums the clipped gradients of the included records
only and moves by ``−step·G_t / b``. Under replace-one, each step is dominated by dp-accounting's
``REPLACE_ONE`` pair of the Poisson-sampled Gaussian (per-record bound C, noise σC), the T steps by
that pair's T-fold product: the guarantee carries ``subsampled_gaussian = (q, σ, T)``, σ is the
smallest with ε(δ) ≤ ε by dp-accounting's PLD of
``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T)`` under ``REPLACE_ONE``, and
accountants compose that event. docs/math.md §13 proves the domination (a two-point
rearrangement in the tangent space).
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace
from typing import NamedTuple

import numpy as np
from scipy import optimize

from geodp.calibration import gaussian_sigma
from geodp.composition import composed_epsilon, subsampled_gaussian_event
from geodp.distributions.base import check_private_points
from geodp.errors import InvalidDataError, InvalidParameterError, NotOnManifoldError
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
    "subsampled_noise_multiplier",
]

#: Relative precision of the subsampled noise multiplier (it is returned just above the root).
_SIGMA_RTOL = 1e-3
#: The smallest subsampled noise multiplier tried: below it the PLD's privacy-loss grid (width 1e-3)
#: grows like 1/σ and calibration becomes slow; a run that would need less noise gets this much
#: (it then spends less than ε).
_SIGMA_FLOOR = 0.1


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


@functools.lru_cache(maxsize=128)
def subsampled_noise_multiplier(epsilon, delta, iterations, sampling_rate) -> float:
    """σ: the noise standard deviation per unit of ``clip`` that makes ``iterations`` Poisson-subsampled
    steps at rate ``sampling_rate`` (ε, δ)-DP under replace-one: the smallest σ (to a relative
    1e-3, above the root found by Brent's method in log σ) whose
    ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T)`` has ε(δ) ≤ ε by
    dp-accounting's ``REPLACE_ONE`` PLD (:func:`geodp.composition.composed_epsilon`).

    At ``sampling_rate = 1`` this is the full-batch σ of :func:`gd_noise_multiplier` up to the PLD's
    discretisation. σ is never below 0.1 (a PLD at smaller σ is slow to build; such a run gets
    σ = 0.1 and spends less than ε).

    Examples
    --------
    >>> sigma = subsampled_noise_multiplier(1.0, 1e-5, 100, 0.05)
    >>> round(sigma, 2), sigma < gd_noise_multiplier(1.0, 1e-5, 100)
    (3.74, True)
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta, allow_zero=False)
    iterations = check_positive_integer(iterations, "iterations")
    rate = _check_rate(sampling_rate)

    def excess(log_sigma):
        event = subsampled_gaussian_event(rate, math.exp(log_sigma), iterations)
        return composed_epsilon([event], delta, "pld") - epsilon

    # Bracket around the Gaussian (CLT) guess σ ≈ q·σ_full, then a root of ε(σ) = ε in log σ.
    floor = math.log(_SIGMA_FLOOR)
    guess = max(math.log(rate * gd_noise_multiplier(epsilon, delta, iterations)), floor + 0.5)
    lo, hi = guess - 0.5, guess + 0.5
    while excess(hi) > 0:
        lo, hi = hi, hi + 1.0
    while excess(lo) <= 0:
        if lo == floor:
            return _SIGMA_FLOOR
        lo, hi = max(lo - 1.0, floor), lo
    root = optimize.brentq(excess, lo, hi, xtol=_SIGMA_RTOL / 10)
    sigma = math.exp(root + _SIGMA_RTOL)  # just above the root: the noise never falls short
    while excess(math.log(sigma)) > 0:  # the PLD's rounding can make ε(σ) slightly non-monotone
        sigma *= 1.0 + _SIGMA_RTOL
    return sigma


def _check_rate(sampling_rate) -> float:
    rate = check_positive(sampling_rate, "sampling rate")
    if rate > 1.0:
        raise InvalidParameterError(f"the sampling rate batch/n must be <= 1, got {sampling_rate!r}.")
    return rate


def _sampling_rate(batch, n) -> float | None:
    """``q = batch/n`` (None for full batch, and for ``batch = n``, which includes every record)."""
    if batch is None:
        return None
    if n is None:
        raise InvalidParameterError("batch needs n, the (public) number of records, to give the sampling rate batch/n.")
    batch, n = check_positive_integer(batch, "batch"), check_positive_integer(n, "n")
    if batch > n:
        raise InvalidParameterError(f"batch (the expected batch size) must be <= n = {n}, got {batch!r}.")
    return None if batch == n else batch / n


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
    if g.shape[0] == 0:  # no record in this step's Poisson sample
        return np.zeros(g.shape[1:])
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


def gd_guarantee(
    space, *, epsilon, delta, iterations, step, clip, center, radius, batch=None, n=None, random_state=None
) -> Guarantee:
    """The :class:`~geodp.mechanisms.base.Guarantee` of :func:`private_riemannian_gd` with these
    public settings (full batch: ``gdp_mu`` is the composed μ; with ``batch``, ``subsampled_gaussian
    = (q, σ, T)``; ``scale`` is the noise std ``σ·clip``). ``n`` (public) is needed with ``batch``.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> g = gd_guarantee(Sphere(2), epsilon=1.0, delta=1e-5, iterations=100, step=0.5, clip=1.0,
    ...                  center=np.array([0.0, 0.0, 1.0]), radius=1.0)
    >>> round(g.gdp_mu, 4), g.sensitivity, g.exact
    (0.2681, 2.0, True)
    >>> sub = gd_guarantee(Sphere(2), epsilon=1.0, delta=1e-5, iterations=100, step=0.5, clip=1.0,
    ...                    center=np.array([0.0, 0.0, 1.0]), radius=1.0, batch=50, n=1000)
    >>> sub.gdp_mu, sub.subsampled_gaussian[0], round(sub.scale, 2)
    (None, 0.05, 3.74)
    """
    space, epsilon, delta, iterations, step, clip, center, radius = _check_settings(
        space, epsilon, delta, iterations, step, clip, center, radius
    )
    rate = _sampling_rate(batch, n)
    settings = f"T = {iterations}, step = {step!r}, clip = {clip!r}"
    if rate is None:
        sigma = gd_noise_multiplier(epsilon, delta, iterations)
        name, sampling = f"full batch, {settings}", "full batch (no subsampling)"
        rule = (
            "σ = 2√T·σ₁, σ₁ the smallest std with δ(σ₁) ≤ δ for the Gaussian of sensitivity 1 (Balle & Wang 2018, "
            "Thm 8); T steps of sensitivity 2·clip and std σ·clip compose to μ = 2√T/σ-GDP (Dong, Roth & Su 2022)"
        )
        privacy = {"gdp_mu": 1.0 / gaussian_sigma(epsilon, delta, 1.0)}
    else:
        sigma = subsampled_noise_multiplier(epsilon, delta, iterations, rate)
        name = f"Poisson subsampling, expected batch = {batch!r} of n = {n!r} (q = {rate!r}), {settings}"
        sampling = (
            f"Poisson subsampling: each record enters each step independently with probability q = {rate!r} "
            "(the run's generator), the step divides by the expected batch size"
        )
        rule = (
            "σ the smallest (to 1e-3, rounded up) with ε(δ) ≤ ε for T steps of the Poisson-sampled Gaussian, "
            "per-record bound clip, std σ·clip, under replace-one: dp-accounting's REPLACE_ONE PLD of "
            "SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), T), which dominates each step "
            "(docs/math.md §13)"
        )
        privacy = {"subsampled_gaussian": (rate, sigma, iterations)}
    return Guarantee(
        mechanism=f"private Riemannian gradient descent ({name})",
        epsilon=epsilon,
        delta=delta,
        sensitivity=2.0 * clip,
        metric="norm of the metric at the public iterate (clipped gradient sum, per step)",
        scale=sigma * clip,
        scale_rule=rule,
        space=repr(space),
        sampler="exact: standard Gaussian of the tangent space at each iterate (space.random_tangent), scaled",
        exact=True,
        support="the public ball (every iterate is projected onto it)",
        assumptions=(
            "per-record gradients clipped to norm <= clip in the metric at the iterate (non-finite ones set to 0)",
            "iterate, step, clip and T public; the release of each step is post-processed by Exp and the "
            "projection onto the public ball",
            sampling,
        ),
        **privacy,
        **sampler_construction(as_generator(random_state), "no floating-point-safe tangent Gaussian on a manifold"),
    )


def _per_record(gradients, batch):
    """``gradients`` if it holds one gradient per record of ``batch`` (shape ``batch.shape``), else
    a typed refusal: a single (e.g. averaged) gradient would be broadcast to every record, and one
    record could then move the clipped sum by far more than the clip the noise is calibrated to."""
    gradients = np.asarray(gradients, dtype=float)
    if gradients.shape != batch.shape:
        raise InvalidParameterError(
            f"loss_grad(x, X) must return one Riemannian gradient per record, shape {batch.shape} here, got "
            f"{gradients.shape}: not a mean or a sum over the records (the privacy bound clips each record's own "
            "gradient)."
        )
    return gradients


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
    batch : int, optional
        Expected batch size b (public), 1 ≤ b ≤ n: each step includes every record independently
        with probability q = b/n (Poisson subsampling) and moves by ``−step·G/b`` (module
        docstring). None (default) or n: full batch.
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
        A setting is invalid (before any charge).
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
    if not callable(loss_grad):
        raise InvalidParameterError("loss_grad must be callable: loss_grad(x, X) -> per-record gradients.")
    data = check_space(space).unchecked.dataset_array(X, "X")
    guarantee = gd_guarantee(
        space,
        epsilon=epsilon,
        delta=delta,
        iterations=iterations,
        step=step,
        clip=clip,
        center=center,
        radius=radius,
        batch=batch,
        n=None if batch is None else len(data),
        random_state=random_state,
    )
    space, center = check_space(space), space.check_points(center, "center", batch_ndim=0)
    x = center if start is None else space.check_points(start, "start", batch_ndim=0)
    x = space.unchecked.clip_to_ball(x[None], center, float(radius))[0][0]
    rng = as_generator(random_state)
    timing = check_timing_safe(timing_safe)
    # Before the charge, on public stand-ins (the centre twice): a loss_grad returning one gradient
    # for all records (a mean) is refused here rather than after the budget is spent.
    with np.errstate(all="ignore"):
        _per_record(loss_grad(x, np.stack([center, center])), np.stack([center, center]))

    def private_part(records, rng):
        try:
            records = check_private_points(space, records, "X")
        except InvalidDataError:  # raised after the charge: one fixed text, whatever the record's fault
            raise NotOnManifoldError(
                f"X holds records that are not points of {space!r} (non-finite values, or off the manifold); "
                "find them with space.invalid_records(X)."
            ) from None
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
            sampling_rate=None if guarantee.subsampled_gaussian is None else guarantee.subsampled_gaussian[0],
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
    point, _, _ = execute(plan, accountant, lambda: private_part(data, rng), deadline=deadline)
    line = f"timing-safe: fixed public work, wall time padded to {deadline:.6g} s; delta includes delta_t"
    guarantee = replace(
        guarantee, delta=plan.delta, gdp_mu=None, zcdp_rho=None, assumptions=(*guarantee.assumptions, line)
    )
    return PrivateGDResult(point, guarantee)


def descend(
    space, loss_grad, data, x, *, iterations, step, clip, noise_multiplier, center, radius, rng, sampling_rate=None
):
    """The private loop of :func:`private_riemannian_gd`, for estimators built on it: ``iterations``
    steps from the public start ``x`` on validated ``data``; nothing here checks its arguments,
    and the caller charges ``gd_guarantee`` of the same settings first. With ``sampling_rate`` q,
    each step keeps each record with probability q (``rng.random(n) < q``) and divides by the
    expected batch size ``q·n``; ``loss_grad`` sees only the kept records.

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
    scale = -step / (n if sampling_rate is None else sampling_rate * n)
    for _ in range(iterations):
        batch = data if sampling_rate is None else data[rng.random(n) < sampling_rate]
        gradients = _per_record(loss_grad(x, batch), batch) if batch.shape[0] else np.zeros((0, *np.shape(x)))
        g = noisy_gradient_sum(space, x, gradients, clip, noise_multiplier, rng)
        moved = space.unchecked.exp(x, scale * g)
        x = space.unchecked.clip_to_ball(moved[None], center, radius)[0][0]
    return x
