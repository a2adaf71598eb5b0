"""The K-norm gradient (KNG) law of the Fréchet objective, sampled exactly (docs/math.md §5).

``p(x) ∝ exp(−‖∇F_D(x)‖_x/σ)`` on the public ball ``B_r(m0)``, with
``F_D(x) = (1/2n) Σ ρ²(x, x_i)`` and ``∇F_D(x) = −(1/n) Σ log_x(x_i)`` (S22). Along a geodesic
from the Fréchet mean ``x̄`` the Hessian of ``F_D`` is that of ``ρ²/2`` averaged over the records,
whose transverse eigenvalues the curvature bounds pin between ``c_{κ_max}(s)`` and ``c_{κ_min}(s)``;
the records' mean square distance to ``x̄`` is at most ``r²`` (less when ``x̄`` is off-centre). This
gives public envelopes ``h·ρ(x, x̄) ≤ ‖∇F_D(x)‖ ≤ U(ρ(x, x̄))`` (:func:`gradient_norm_envelopes`), so
a Laplace proposal at ``x̄`` with scale ``σ/h``, truncated to the ball, accepted with probability
``exp(−(‖∇F_D(x)‖ − h ρ(x, x̄))/σ)``, is an exact sampler, and ``U`` bounds its acceptance from
below with public quantities only. In flat spaces ``∇F_D(x) = x − x̄``: KNG is the untruncated
Laplace at ``x̄`` and every proposal is accepted.

The acceptance rate depends on the data; whether to use rejection or MH is decided from the public
lower bound :func:`kng_acceptance_lower_bound` only, so the choice leaks nothing.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
from scipy.special import logsumexp

from geodp.distributions.ball_polar import (
    CapProposal,
    KendallProposal,
    exact_shape_directions,
    log_direction_share,
    log_sn,
)
from geodp.distributions.base import (
    Distribution,
    approximate_sampler_notice,
    check_private_points,
    rejection_sample,
    size_tuple,
)
from geodp.distributions.kng_envelope import (
    EnvelopeProposal,
    data_envelope,
    envelope_knots,
    has_envelope_proposal,
    hessian_excess,
)
from geodp.distributions.laplace import (
    ACCEPTANCE_FLOOR,
    RiemannianLaplace,
    ball_acceptance_bound,
)
from geodp.distributions.mcmc import random_walk_metropolis
from geodp.distributions.radial import is_isotropic
from geodp.distributions.spd_affine import SPDEigenvalueLaw, spd_ball_acceptance_bound
from geodp.distributions.spd_kng import SPDTangentKNGProposal
from geodp.errors import (
    AssumptionError,
    ConvergenceWarning,
    InvalidDataError,
    InvalidParameterError,
    InvalidTypeError,
)
from geodp.frechet import karcher_iteration_budget, mean_of_records
from geodp.manifolds import matrix_functions as mf
from geodp.manifolds.base import check_space
from geodp.records import InMemoryRecords
from geodp.sensitivity import check_radius, curvature_factor
from geodp.validation import CHECK_SLACK, as_generator, check_positive
from geodp.work import count, fixed_work

__all__ = [
    "KNGDistribution",
    "kng_acceptance_lower_bound",
    "kng_cap_acceptance_bound",
    "kng_route",
    "kng_uses_mcmc",
    "spd_volume_slack",
    "gradient_norm_bounds",
    "gradient_norm_envelopes",
]

_SAMPLERS = ("auto", "exact", "mcmc")
_ENVELOPE_SLACK = 1 + 1e-6  # as gradient_norm_envelopes' r(1 + 1e-6)
_SPREAD_SHARE = 0.9  # the envelope route where (dim − 1)σ ≤ this share of r, else the cap route
_FIXED_WORK_OFFSET = 1e-9  # public bound on the anchor's residual gradient under fixed work (tol 1e-12)
_OFFSET_CAP = 4.0  # the rejection floor follows the anchor's residual gradient up to 4σ (e^−8)


def _mean_excess_majorant(kappa, mean_square, s_max, cap, t, grid=160):
    """``Φ(t) ≥ (1/n) Σ φ(min(s_i + t, cap))`` for every ``s_i ∈ [0, s_max]`` with
    ``(1/n) Σ s_i² ≤ mean_square``, ``φ = hessian_excess(·, κ)`` (docs/math.md §5).

    ``φ(min(√u + t, cap))`` is non-decreasing in ``u = s²``; on a grid of ``u`` it is majorised by
    its value at the next node, and Jensen's inequality bounds the mean by the least concave
    majorant of those steps at ``u = mean_square``: the largest chord across that point.
    """
    t = np.asarray(t, dtype=float)
    if kappa == 0:
        return np.zeros_like(t)
    u = np.linspace(0.0, s_max, grid + 1) ** 2
    steps = hessian_excess(np.minimum(np.sqrt(u[1:, None]) + t, cap), kappa)
    steps = np.vstack([steps, steps[-1:]])  # node k carries the value at node k + 1
    target = min(mean_square, u[-1])
    left, right = np.flatnonzero(u <= target), np.flatnonzero(u >= target)
    width = u[right][None, :] - u[left][:, None]
    w_right = np.divide(target - u[left][:, None], width, out=np.zeros_like(width), where=width > 0)
    chords = (1.0 - w_right)[..., None] * steps[left][:, None] + w_right[..., None] * steps[right][None]
    return chords.reshape(-1, len(t)).max(axis=0)


# The anchor's distance δ to the centre is split into this many cells: in each, records have a
# smaller mean square the farther the anchor is out, and rays from it are at most r + δ long.
_ANCHOR_CELLS = 16
_STEPS = 160


@functools.lru_cache(maxsize=64)
def gradient_norm_envelopes(space, radius) -> tuple:
    """Public envelopes ``G(ρ) ≤ ‖∇F_D(x)‖ ≤ U(ρ)`` (up to the anchor's residual gradient),
    ``ρ = ρ(x, a)``, for every dataset in ``B_r(m0)`` and ``x`` in the ball (docs/math.md §5).

    ``a`` is the Fréchet mean (the anchor), at distance ``δ`` from the centre ``m0``. Returns one
    ``(delta_lo, delta_hi, t, G, U)`` per cell ``δ ∈ [delta_lo, delta_hi]``: ``G`` and ``U`` on
    the grid ``t`` of ``[0, r + delta_hi]`` (the longest ray from ``a`` inside the ball).
    ``G' = 1 − Φ_{κ_max}``, ``U' = 1 + Φ_{κ_min}`` bound the Hessian of ``F_D`` along the geodesic
    from ``a`` (Hessian comparison for ``ρ²/2``, averaged over the records with their mean square
    ``2F_D(a) ≤ r² − μδ²``, ``μ = h(r, κ_max)``); both use right-end values (``Φ`` grows with t).

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> cells = gradient_norm_envelopes(Sphere(2), 0.5)
    >>> len(cells), cells[0][0], round(float(cells[-1][2][-1]), 6)
    (16, 0.0, 1.000001)
    """
    kappa_min, kappa_max = space.curvature_bounds
    mu = curvature_factor(radius, kappa_max)
    r = radius * (1 + 1e-6)  # the ball check admits records at r(1 + 1e-9)
    edges = np.linspace(0.0, r, _ANCHOR_CELLS + 1)
    cells = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        mean_square, length = r * r - mu * lo * lo, r + hi
        t = np.linspace(0.0, length, _STEPS + 1)
        dt = np.diff(t)
        below = _mean_excess_majorant(kappa_max, mean_square, length, 2 * r, t[1:]) if kappa_max > 0 else 0.0
        above = _mean_excess_majorant(kappa_min, mean_square, length, 2 * r, t[1:]) if kappa_min < 0 else 0.0
        G = np.concatenate([[0.0], np.cumsum(np.maximum(1.0 - below, 0.0) * dt)])
        U = np.concatenate([[0.0], np.cumsum((1.0 + above) * dt)])
        cells.append((float(lo), float(hi), t, G, U))
    return tuple(cells)


def gradient_norm_bounds(space, radius) -> tuple[float, float]:
    """``(h, H)`` with ``h ρ − ε_a ≤ ‖∇F_D(x)‖ ≤ H ρ + ε_a`` for data and ``x`` in ``B_r(m0)``,
    ``ρ = ρ(x, a)``, ``a`` the Fréchet mean, ``ε_a = ‖∇F_D(a)‖`` (0 at the exact mean).

    The chords of :func:`gradient_norm_envelopes` (``G`` is concave and ``U`` convex, both 0 at 0):
    ``h`` is the smallest slope ``G(L)/L`` and ``H`` the largest ``U(L)/L`` over the cells. They
    improve on S22 Lemma 1's ``h(r, κ_max)`` and the Hessian bound ``a coth a``, ``a = 2r√−κ_min``
    (docs/math.md §5).

    Examples
    --------
    >>> from geodp.manifolds import Hyperbolic, Sphere
    >>> [round(b, 4) for b in gradient_norm_bounds(Sphere(2), 0.5)]
    [0.7529, 1.0]
    >>> [round(b, 3) for b in gradient_norm_bounds(Hyperbolic(2), 1.0)]
    [1.0, 1.76]
    """
    if space.is_flat:
        return 1.0, 1.0
    cells = gradient_norm_envelopes(space, radius)
    return (min(float(G[-1] / t[-1]) for _, _, t, G, _ in cells), max(float(U[-1] / t[-1]) for _, _, t, _, U in cells))


@functools.lru_cache(maxsize=64)
def kng_acceptance_lower_bound(space, scale: float, radius: float) -> float:
    """A data-independent lower bound on the exact KNG sampler's acceptance rate (docs/math.md §5).

    The proposal is the Laplace of scale ``σ/h`` at the mean ``a``, truncated to the ball; the
    acceptance is at least ``∫ exp(−U(t)/σ) J(t) dt / ∫ exp(−ht/σ) J(t) dt`` over ``[0, r + δ]``
    in the worst anchor cell, with ``J`` the polar volume density (exact on isotropic spaces; the
    model space of curvature κ_min otherwise, by Bishop–Gromov). Flat: 1.

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> round(kng_acceptance_lower_bound(Sphere(2), 0.05, 0.5), 3)
    0.559
    """
    if space.is_flat:
        return 1.0
    h, _ = gradient_norm_bounds(space, radius)
    nodes, weights = np.polynomial.legendre.leggauss(4)
    worst = 0.0
    for _, _, t, _, U in gradient_norm_envelopes(space, radius):
        # The acceptance is a mean of exp(−(U(ρ) − hρ)/σ), non-increasing in ρ (U' ≥ 1 ≥ h), under
        # the proposal's radial law: on each grid step take its value at the right end and weigh
        # it by the step's mass (4-point Gauss–Legendre).
        lo, hi = t[:-1, None], t[1:, None]
        ts = 0.5 * (lo + hi) + 0.5 * (hi - lo) * nodes
        if is_isotropic(space):
            log_jacobian = space.radial_log_jacobian(ts)
        else:  # Bishop–Gromov: the model space of curvature κ_min has stochastically longer rays
            log_jacobian = (space.dim - 1) * log_sn(ts, space.curvature_bounds[0])
        log_mass = logsumexp(-h * ts / scale + log_jacobian, b=weights * (hi - lo) / 2, axis=1)
        log_ratio = logsumexp(log_mass - (U[1:] - h * t[1:]) / scale) - logsumexp(log_mass)
        worst = max(worst, -log_ratio)
    return math.exp(-worst)


_CAP_SUBCELLS = 4  # share cells per anchor cell of the envelopes
_CAP_REFINE = 8  # bound grid: each envelope step split in this many


def _cap_curvature(space, radius):
    """The model curvature whose direction cap contains the ball's directions (κ_max, by the
    CAT(κ_max) hinge comparison), or None when the cap route is unavailable: non-isotropic spaces,
    dimension 1, or ``(r(1 + 1/16))·√κ_max > π/2`` (the share must fall with t)."""
    if space.is_flat or not is_isotropic(space) or space.dim < 2:
        return None
    kappa_max = float(space.curvature_bounds[1])
    if kappa_max > 0 and radius * (1 + 1.0 / (_ANCHOR_CELLS * _CAP_SUBCELLS)) * math.sqrt(kappa_max) > math.pi / 2:
        return None
    return kappa_max


@functools.lru_cache(maxsize=64)
def kng_cap_acceptance_bound(space, scale: float, radius: float) -> float:
    """A data-independent lower bound on the acceptance of the *cap* KNG sampler (docs/math.md §5):
    the Laplace of scale ``σ/h`` at the anchor drawn inside the model-space direction cap of the
    ball (radius law ∝ ``e^{−ht/σ} J(t) S(t)``, direction uniform in the cap), kept if it lies in
    the ball and then with probability ``exp(−(‖∇F_D(x)‖ − hρ)/σ)``. 0 where the route is
    unavailable (see :func:`kng_route`).

    The acceptance is ``∫ e^{−ht/σ} J S_ball(t) F(t) dt / ∫ e^{−ht/σ} J S_cap(t) dt`` with
    ``F = exp(−(U(t) − ht)/σ)``; for anchors ``δ ∈ [δ_i, δ_{i+1}]``, ``S_ball ≥`` the smaller of
    the κ_min shares at the two ends and ``S_cap ≤`` the κ_max share at ``δ_i`` of the ball of
    radius ``r + δ_{i+1} − δ_i`` (triangle inequality); all three factors fall with t, so
    right-end values bound the numerator and left-end ones the denominator on each grid step.

    On Kendall's shape space (``k ≥ 4``, ``r < π/4``) the route draws from the exact in-ball
    directions instead (:class:`KendallProposal`): its acceptance ``∫ e^{−ht/σ} J S F / ∫ e^{−ht/σ} J S``
    is at least both the κ_max-cap bound above (whose denominator carries the larger cap share)
    and, by Chebyshev's association inequality (F and the true share S both fall with t), the
    share-free mean :func:`kng_acceptance_lower_bound`; the larger is returned.

    Examples
    --------
    >>> from geodp.manifolds import KendallShape, Sphere
    >>> b = kng_cap_acceptance_bound(Sphere(50), 0.0272, 0.5)  # the old route's bound: 2.6e-4
    >>> 1e-3 < b < 1e-2
    True
    >>> round(kng_cap_acceptance_bound(KendallShape(100), 0.009784, 0.2), 5)  # κ_max caps: 1.7e-5
    0.00201
    """
    kappa_cap = _cap_curvature(space, radius)
    if kappa_cap is None:
        return 0.0
    kappa_min, dim = float(space.curvature_bounds[0]), space.dim
    h, _ = gradient_norm_bounds(space, radius)
    nodes, weights = np.polynomial.legendre.leggauss(4)
    worst = 0.0
    for lo, hi, t, _, U in gradient_norm_envelopes(space, radius):
        tf = np.linspace(0.0, t[-1], (len(t) - 1) * _CAP_REFINE + 1)
        Uf = np.interp(tf, t, U)  # U is convex: its chords over-estimate it (a valid upper bound)
        a, b = tf[:-1, None], tf[1:, None]
        ts = 0.5 * (a + b) + 0.5 * (b - a) * nodes
        log_mass = logsumexp(-h * ts / scale + space.radial_log_jacobian(ts), b=weights * (b - a) / 2, axis=1)
        log_f = -(Uf[1:] - h * tf[1:]) / scale
        ends = np.linspace(lo, hi, _CAP_SUBCELLS + 1)
        for d0, d1 in zip(ends[:-1], ends[1:]):
            log_low = np.minimum(
                log_direction_share(tf[1:], d0, radius, kappa_min, dim),
                log_direction_share(tf[1:], d1, radius, kappa_min, dim),
            )
            # In logs: an underflowed share in the denominator would over-state the bound.
            log_high = log_direction_share(tf[:-1], d0, radius + (d1 - d0), kappa_cap, dim)
            log_ratio = logsumexp(log_mass + log_f + log_low) - logsumexp(log_mass + log_high)
            worst = max(worst, -log_ratio)
    if exact_shape_directions(space, radius):
        return max(math.exp(-worst), kng_acceptance_lower_bound(space, scale, radius))
    return math.exp(-worst)


def kng_route(space, scale: float, radius: float, sampler: str = "auto") -> tuple[str, float]:
    """Which KNG sampler runs, and its public acceptance bound, from public quantities only.

    Returns ``(route, bound)``: ``"flat"`` (the Laplace at the mean, bound 1), ``"cap"`` (the
    cap proposal; on Kendall's shape space it draws from the exact in-ball directions),
    ``"laplace"`` (the σ/h Laplace truncated to the ball by its own rejection,
    :func:`kng_acceptance_lower_bound`), ``"envelope"`` (the radial law of the data's own envelope,
    :class:`~geodp.distributions.kng_envelope.EnvelopeProposal`), ``"spd-tangent"`` (affine-invariant
    SPD: :class:`~geodp.distributions.spd_kng.SPDTangentKNGProposal` raced with the Laplace at the
    mean) or ``"mcmc"``.

    ``"auto"`` takes the Laplace route where its bound times its proposal's public ball bound
    reaches :data:`ACCEPTANCE_FLOOR`, else the cap route (:func:`kng_cap_acceptance_bound`) where
    its bound does, else the Laplace route where its own bound does. Below the floor, on the
    isotropic spaces that have the data's envelope
    (:func:`~geodp.distributions.kng_envelope.has_envelope_proposal`: spheres, hyperbolic spaces,
    Kendall's shape space), it stays exact at every σ (docs/math.md §5): the envelope route where
    the law's typical radius ``(dim − 1)σ`` is at most 0.9 r, else the cap route with the data's
    chord of its envelope as the rate. Their work, not their output law, depends on the data, and
    no useful worst-case bound exists (bound 0.0). On affine-invariant SPD the σ/h Laplace route
    runs where its bound and its proposal's public ball bound pass, else ``"spd-tangent"`` where
    :func:`spd_volume_slack` is at most ``log(1/floor)`` (exact, no useful worst-case bound either:
    0.0). Elsewhere MH. ``"exact"`` never returns
    ``"mcmc"``. The cap route always uses the data's chord when it is steeper than the public h
    (the acceptance only grows, so a public bound stays a bound).

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> kng_route(Sphere(50), 0.0272, 0.5)[0], kng_route(Sphere(50), 0.0272, 0.5, "mcmc")[0]
    ('cap', 'mcmc')
    >>> kng_route(Sphere(50), 0.001, 0.5)[0]          # large n·ε: the data's own envelope
    'envelope'
    """
    if sampler not in _SAMPLERS:
        raise InvalidParameterError(f"sampler must be one of {_SAMPLERS}, got {sampler!r}.")
    if space.is_flat:
        return "flat", 1.0
    laplace_bound = kng_acceptance_lower_bound(space, scale, radius)
    if sampler == "mcmc":
        return "mcmc", laplace_bound
    cap = kng_cap_acceptance_bound(space, scale, radius)
    h, _ = gradient_norm_bounds(space, radius)
    ball = ball_acceptance_bound(space, scale / h, radius) if is_isotropic(space) else 0.0
    # The Laplace route costs a fraction of the cap route per proposal (no cone sampling): keep it
    # where its own bound and its proposal's ball bound are both proven above the floor.
    if laplace_bound * ball < ACCEPTANCE_FLOOR and cap >= ACCEPTANCE_FLOOR:
        return "cap", cap
    if "spd-eigenvalue-laplace" in space.closed_forms:
        # Affine-invariant SPD: the σ/h Laplace route where its bound and its proposal's public
        # ball bound both pass (its proposal is then exact), else the exact tangent proposal at
        # the centre raced with the Laplace at the mean (docs/math.md §5) in balls where its
        # volume step is practical: no useful worst-case bound (0.0); the work, not the law,
        # depends on the data.
        if laplace_bound >= ACCEPTANCE_FLOOR and _spd_laplace_proposal_exact(space.k, scale / h, radius):
            return "laplace", laplace_bound
        if spd_volume_slack(space.k, radius) <= -math.log(ACCEPTANCE_FLOOR):
            return "spd-tangent", 0.0
    if laplace_bound >= ACCEPTANCE_FLOOR:
        return "laplace", laplace_bound
    if has_envelope_proposal(space, radius):
        # Public: the law's typical radius (dim − 1)σ against the ball. A law that reaches the
        # boundary needs the in-ball directions of the cap route (with the data's chord as rate).
        # Neither has a useful worst-case bound (0.0): their work, not their law, depends on the data.
        if (space.dim - 1) * scale > _SPREAD_SHARE * radius and _cap_curvature(space, radius) is not None:
            return "cap", 0.0
        return "envelope", 0.0
    if sampler == "exact":
        return "laplace", laplace_bound
    return "mcmc", laplace_bound


def spd_volume_slack(k: int, radius: float) -> float:
    """``L(r) = r²/(12(k+1)) + r⁴Q_k/2880``: Jensen's bound on the mean loss
    ``E_u[q(r) − Σ_{i<j} log(sinh y_ij/y_ij)]`` over uniform directions at distance ``r`` on
    affine-invariant SPD(k) (docs/math.md §5, the Gaussian-gap envelope), with
    ``Q_k = (k−1)(k+2)(5k+6)/((k+1)(k²+k+4))``. ``e^{−L(r)}`` is the typical share the tangent
    route's volume step keeps for a law that fills the ball: a public practicality test (not a
    bound), below 1e−3 beyond r ≈ 7.9 for k from 8 to 48.

    Examples
    --------
    >>> round(spd_volume_slack(8, 3.0), 3), spd_volume_slack(5, 12.0) > 7
    (0.216, True)
    """
    quartic = (k - 1) * (k + 2) * (5 * k + 6) / ((k + 1) * (k * k + k + 4))
    return radius**2 / (12.0 * (k + 1)) + radius**4 * quartic / 2880.0


@functools.lru_cache(maxsize=64)
def _spd_eigenvalue_law(k: int, scale: float, t_max: float) -> SPDEigenvalueLaw:
    """The AI-SPD eigenvalue law of the Laplace at the mean, radius restricted to ``[0, 2r]``
    (public: k, σ, r; built once)."""
    return SPDEigenvalueLaw(k, scale, t_max)


@functools.lru_cache(maxsize=64)
def _spd_laplace_proposal_exact(k: int, scale: float, radius: float) -> bool:
    """Is the σ/h Laplace proposal on AI-SPD(k) drawn exactly with a public bound on its
    truncation to the ball (both above the floor; public: k, σ, r)?"""
    law = _spd_eigenvalue_law(k, scale, 2.0 * radius)
    return law.acceptance_rate >= ACCEPTANCE_FLOOR and spd_ball_acceptance_bound(k, scale, radius) >= ACCEPTANCE_FLOOR


def kng_uses_mcmc(space, scale: float, radius: float, sampler: str = "auto") -> bool:
    """Does KNG on ``space`` use MH? Decided from public quantities only: ``"mcmc"`` always,
    ``"exact"`` never, ``"auto"`` when :func:`kng_route` finds no exact route (never on flat
    spaces, spheres, hyperbolic spaces and Kendall's shape space; on affine-invariant SPD only in
    balls too large for the tangent route, :func:`spd_volume_slack`).

    Examples
    --------
    >>> from geodp.manifolds import SPD, KendallShape
    >>> kng_uses_mcmc(KendallShape(8), 0.01, 0.35), kng_uses_mcmc(SPD(3), 1e-4, 3.0)
    (False, False)
    >>> kng_uses_mcmc(SPD(3), 1e-4, 3.0, "mcmc")
    True
    """
    if sampler not in _SAMPLERS:
        raise InvalidParameterError(f"sampler must be one of {_SAMPLERS}, got {sampler!r}.")
    return kng_route(space, scale, radius, sampler)[0] == "mcmc"


class KNGDistribution(Distribution):
    """KNG law of the Fréchet objective of ``data`` on the ball ``B_radius(center)``.

    Parameters
    ----------
    space : Manifold
    data : array_like, shape (n, *space.point_shape)
        Records, already inside the ball (clip them first).
    scale : float
        σ > 0.
    center, radius
        The public ball. The records must lie in it on every space (the gradient sensitivity
        assumes it); on flat spaces it does not restrict the law, which is the untruncated
        Laplace at the mean there.
    sampler : {"auto", "exact", "mcmc"}
        ``"auto"``: on spheres, hyperbolic spaces and Kendall's shape space, exact at every σ
        (the data's own envelope, :func:`kng_route`); elsewhere exact rejection unless
        :func:`kng_acceptance_lower_bound` is below
        :data:`~geodp.distributions.laplace.ACCEPTANCE_FLOOR`, then MH. MH chains start at the
        public ``center`` (never at the private mean) and reach the law by the burn-in; every
        :meth:`sample` call that is not exact emits one
        :class:`~geodp.errors.ApproximateSamplerWarning` (public text).
    burn_in, thinning : int
        MH settings (S22: 20,000 and 600).

    Raises
    ------
    InvalidDataError
        A record lies outside the ball (the message holds no number computed from the data).
    NotOnManifoldError
        A record is not a point of the space (idem).

    Attributes
    ----------
    frechet_mean : numpy.ndarray
        The (non-private) mean used as the proposal's footpoint, by the Karcher flow from the
        public centre. Never release it.
    mean_info : FrechetMeanInfo
        How the flow ended. **Data-dependent**; its ConvergenceWarning is not emitted (it would
        carry numbers computed from the data): the sampler stays exact when the flow stops early,
        because the acceptance uses ``‖∇F_D(x)‖ ≥ h ρ(x, x̄') − ‖∇F_D(x̄')‖`` at the computed x̄'.
    acceptance_rate : float or None
        Observed acceptance of the last exact draw. **Data-dependent**: a diagnostic for the
        data holder, not for publication.
    diagnostics : MCMCDiagnostics or None
        Of the last MH run. **Data-dependent**, like ``acceptance_rate``.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    >>> X = space.exp(north, space.random_tangent(north, size=100, rng=0) * 0.1)
    >>> law = KNGDistribution(space, X, 0.03, center=north, radius=0.5)
    >>> law.exact, law.sample(size=3, rng=1).shape
    (True, (3, 3))
    """

    def __init__(self, space, data, scale, *, center, radius, sampler="auto", burn_in=20_000, thinning=600):
        check_space(space)
        self.space = space
        self.scale = check_positive(scale, "scale")
        self.center = space.check_points(center, "center", batch_ndim=0)
        self.radius = check_radius(space, radius)
        data = check_private_points(space, data, "data", batch_ndim=1)  # messages without counts
        # Every space, flat ones included: the gradient sensitivity (and KNGMechanism) assume it.
        center_distances = np.asarray(space.unchecked.dist(self.center, data), dtype=float)
        if np.any(center_distances > self.radius * CHECK_SLACK):
            raise InvalidDataError(
                f"data holds records outside the public ball B_{self.radius!r}(center): KNG's "
                "sensitivity needs the data in the ball; clip them first (space.clip_to_ball)."
            )
        self.data = data
        self.burn_in, self.thinning = burn_in, thinning
        self._anchor_distances = None  # the records' distances to the anchor (curved spaces)
        with warnings.catch_warnings():
            # Its text (iterations, gradient norm) is computed from the data; see mean_info.
            warnings.simplefilter("ignore", ConvergenceWarning)
            # The records were validated just above: no second validating pass.
            self.frechet_mean, self.mean_info = mean_of_records(
                space,
                InMemoryRecords(space, data, validated=True),
                self.center,
                tol=1e-12,
                max_iter=karcher_iteration_budget(space, self.radius, 1e-12),
                step=1.0,
                adaptive=True,
            )
            if not space.is_flat:
                # The anchor must lie in the ball for the truncated proposal; rounding far out can
                # put it a hair outside. Any anchor in the ball keeps the rejection exact (the
                # acceptance subtracts the gradient norm at the anchor), so clipping is safe here.
                self.frechet_mean = space.unchecked.clip_to_ball(self.frechet_mean[None], self.center, self.radius)[0][
                    0
                ]
                # The envelopes assume 2F_D(a) ≤ r'² − μδ² at the anchor a (δ = ρ(a, m0), r' the
                # envelopes' r(1 + 1e-6)); the exact mean meets it. If rounding ever broke it,
                # anchor at the centre, where it always holds (δ = 0, 2F_D(m0) ≤ r²).
                r_env = self.radius * (1 + 1e-6)
                delta = float(space.unchecked.dist(self.center, self.frechet_mean))
                mu = curvature_factor(self.radius, space.curvature_bounds[1])
                self._anchor_distances = np.asarray(space.unchecked.dist(self.frechet_mean, data), dtype=float)
                if np.mean(self._anchor_distances**2) > r_env**2 - mu * delta**2:
                    self.frechet_mean = self.center.copy()
                    self._anchor_distances = center_distances
        self.h, self.H = (1.0, 1.0) if space.is_flat else gradient_norm_bounds(space, self.radius)
        self._rate_h = self.h
        self.route, self.acceptance_bound = kng_route(space, self.scale, self.radius, sampler)
        use_mcmc = self.route == "mcmc"
        self._envelope = None
        if self.route == "envelope":
            self._envelope = EnvelopeProposal(space, self.frechet_mean, self.scale, *self._data_envelope())
        self.acceptance_rate, self.diagnostics = None, None
        self._cap = None
        if self.route == "cap" and fixed_work() is not None:
            # Fixed work: the public rate h. The data's chord (below) would make the proposal's
            # grid, hence its work, private; the fixed proposal count rests on the public bound anyway.
            self._cap = self._cap_proposal()
        elif self.route == "cap":
            try:
                self._rate_h = max(self.h, self._data_chord())
                self._cap = self._cap_proposal()
            except AssumptionError:  # the data's rate must not decide whether the release raises
                self._rate_h = self.h
                self._cap = self._cap_proposal()
        if space.is_flat:
            self._proposal = RiemannianLaplace(space, self.frechet_mean, self.scale)
        elif self._envelope is not None or self.route == "spd-tangent":
            self._proposal = None  # the envelope route draws its own proposals
        else:
            self._proposal = RiemannianLaplace(
                space, self.frechet_mean, self.scale / self.h, center=self.center, radius=self.radius
            )
        self.exact = not use_mcmc and (self._cap is not None or self._proposal is None or self._proposal.exact)
        self.approximation_notice = None
        law = f"KNG on {space!r}"
        if space.is_flat:
            self.sampler = f"exact: KNG = Laplace at the mean in a flat space ({self._proposal.sampler})"
        elif self._cap is not None:
            where = (
                "the exact in-ball directions of the complex-projective law of cosines"
                if exact_shape_directions(space, self.radius)
                else "the ball's direction caps"
            )
            self.sampler = (
                f"exact rejection from the Laplace with scale σ/h (h = {self.h:.4g}) at the mean, drawn inside "
                f"{where}; acceptance ≥ {self.acceptance_bound:.3g} (public bound)"
            )
        elif self._envelope is not None:
            self.sampler = (
                "exact rejection from the radial law at the mean whose exponent is the data's own lower "
                "envelope of the gradient norm (knots at σ·2^(j/4)), directions uniform; its work, not its "
                "output law, depends on the data (no useful worst-case acceptance bound)"
            )
        elif self.route == "spd-tangent":
            self._tangent = SPDTangentKNGProposal(space.k, self.center, self.radius, self.frechet_mean, self.scale)
            self.sampler = (
                "exact rejection from an l2-Laplace in the normal coordinates at the centre, truncated to the "
                "ball in polar coordinates at the mean's coordinates (volume and gradient steps by rejection), "
                "raced with the Laplace at the mean when its eigenvalue law is exact; its work, not its output "
                "law, depends on the data (no useful worst-case acceptance bound)"
            )
        elif use_mcmc:
            self.sampler = (
                f"MH on the ball (public acceptance bound {self.acceptance_bound:.1e} < {ACCEPTANCE_FLOOR})"
                if sampler == "auto"
                else "MH on the ball (requested)"
            ) + f", started at the center; burn-in {burn_in}, thinning {thinning}"
            reason = (
                f"the public lower bound {self.acceptance_bound:.1e} on the exact rejection sampler's "
                f"acceptance is below the floor {ACCEPTANCE_FLOOR}"
                if sampler == "auto"
                else "sampler='mcmc' was requested"
            )
            self.approximation_notice = approximate_sampler_notice(
                law,
                f"random-walk Metropolis–Hastings restricted to the ball B_{self.radius!r}(center), "
                f"started at the public center, burn-in {burn_in}, thinning {thinning}",
                reason,
            )
        else:
            self.sampler = (
                f"exact rejection from the Laplace with scale σ/h (h = {self.h:.4g}) on the ball; "
                f"acceptance ≥ {self.acceptance_bound:.3g} (public bound)"
            )
            if not self._proposal.exact:
                self.sampler = (
                    f"rejection from the Laplace with scale σ/h (h = {self.h:.4g}) on the ball, whose "
                    f"draws are approximate ({self._proposal.sampler})"
                )
                self.approximation_notice = approximate_sampler_notice(
                    law,
                    f"rejection from a Laplace proposal (scale σ/h = {self.scale / self.h:.6g}) "
                    f"that is itself drawn by {self._proposal._mh_sampler}",
                    f"for that proposal {self._proposal._mh_reason}",
                )
        self._use_mcmc = use_mcmc
        # ‖∇F_D(x)‖ ≥ hρ(x, x̄') − ‖∇F_D(x̄')‖ at the computed mean x̄' (the envelopes start from the
        # anchor's residual gradient): subtracting it keeps the rejection exact however far the flow got.
        self._mean_offset = 0.0 if space.is_flat else float(self.gradient_norm(self.frechet_mean))

    def _cap_proposal(self):
        """The cap route's proposal at the anchor with the rate ``_rate_h/σ``."""
        space, rate = self.space, self._rate_h / self.scale
        if exact_shape_directions(space, self.radius):
            return KendallProposal(space, self.frechet_mean, self.center, rate, self.radius)
        return CapProposal(space, self.frechet_mean, self.center, rate, self.radius, _cap_curvature(space, self.radius))

    def _data_envelope(self):
        """``(knots, values)`` of the data's lower envelope ``ℓ`` of the gradient norm on
        ``[0, r' + δ]`` (docs/math.md §5), ``δ`` the anchor's distance to the centre. **Private.**"""
        delta = float(self.space.unchecked.dist(self.center, self.frechet_mean))
        r = self.radius * _ENVELOPE_SLACK
        knots = envelope_knots(self.scale, min(r + delta, 2 * r))
        return knots, data_envelope(
            self.space, self.frechet_mean, self.data, self.radius, knots, distances=self._anchor_distances
        )

    def _data_chord(self):
        """``ℓ(L)/L``: ``ℓ`` is concave and 0 at 0, so ``‖∇F_D(x)‖ ≥ (ℓ(L)/L)·ρ(x, a) − ‖∇F_D(a)‖``
        on the ball (**private**; it sets the cap proposal's rate, never a public number)."""
        knots, values = self._data_envelope()
        return float(values[-1] / knots[-1])

    def sample_coordinates(self, size=None, rng=None):
        """Flat spaces: draws in the isometric chart (KNG is the Laplace at the mean there)."""
        if not self.space.is_flat:
            raise InvalidTypeError(f"sample_coordinates needs a flat space, got {self.space!r}.")
        return self._proposal.sample_coordinates(size, rng=rng)

    def gradient_norm(self, x):
        """``‖∇F_D(x)‖_x`` for points ``x`` (batched; chunked to bound memory; on Kendall's shape
        space by real matrix products, the space's ``_mean_log_norms``)."""
        x = np.asarray(x, dtype=float)
        shape = x.shape[: x.ndim - len(self.space.point_shape)]
        flat = x.reshape((-1,) + self.space.point_shape)
        chunk = max(1, 2_000_000 // (len(self.data) * int(np.prod(self.space.point_shape))))
        out = np.empty(len(flat))
        count("gradient-norms", len(flat))
        for i in range(0, len(flat), chunk):
            out[i : i + chunk] = self.space.unchecked.mean_log_norms(flat[i : i + chunk], self.data)
        return out.reshape(shape)

    def _factored_log_density(self, x, factor, inv_factor):
        """:meth:`log_density` on AI-SPD for ``x = L Lᵀ``: ``‖∇F_D(x)‖_x = ‖mean_i Log(L⁻¹ x_i L⁻ᵀ)‖_F``
        (congruence by ``L⁻¹`` differs from ``x^-½`` by a rotation, which neither ``Log`` nor the
        Frobenius norm sees): one batched ``eigh`` of the whitened records, no square root of ``x``."""
        chunk = max(1, 2_000_000 // (len(self.data) * self.space.k**2))
        norm = np.empty(len(x))
        for i in range(0, len(x), chunk):
            w, u = np.linalg.eigh(mf.congruence(inv_factor[i : i + chunk, None], self.data[None]))
            mean = np.mean(mf.from_eig(np.log(mf.positive_eigenvalues(w)), u), axis=1)
            norm[i : i + chunk] = np.sqrt(np.sum(mean * mean, axis=(-2, -1)))
        w = np.linalg.eigvalsh(mf.congruence(self._center_inv_root, x))
        inside = np.sqrt(np.sum(np.log(mf.positive_eigenvalues(w)) ** 2, axis=-1)) <= self.radius
        return np.where(inside, -norm / self.scale, -np.inf)

    @functools.cached_property
    def _center_inv_root(self):
        return mf.sqrtm_and_invsqrtm(self.center)[1]

    def log_density(self, x):
        """``−‖∇F_D(x)‖/σ`` (``−inf`` outside the ball on curved spaces)."""
        value = -self.gradient_norm(x) / self.scale
        if not self.space.is_flat:
            value = np.where(np.asarray(self.space.unchecked.dist(self.center, x)) <= self.radius, value, -np.inf)
        return value

    def sample(self, size=None, rng=None):
        """Draw ``size`` points (``None``: one point). Warns
        (:class:`~geodp.errors.ApproximateSamplerWarning`, once per call) when not exact."""
        self._warn_if_approximate()
        rng = as_generator(rng)
        shape = size_tuple(size)
        m = int(np.prod(shape, dtype=int))
        if self.space.is_flat:
            return self._proposal._sample(size, rng=rng)
        if self._use_mcmc:
            # Public start (the centre), never the private mean: the burn-in reaches the law.
            result = random_walk_metropolis(
                self.space,
                self.log_density,
                np.repeat(self.center[None], m, axis=0),
                burn_in=self.burn_in,
                thinning=self.thinning,
                step_size=min(self.scale, self.radius),
                in_support=lambda x: np.asarray(self.space.unchecked.dist(self.center, x)) <= self.radius,
                rng=rng,
                factored_log_density=self._factored_log_density
                if "spd-eigenvalue-laplace" in self.space.closed_forms
                else None,
            )
            self.diagnostics = result.diagnostics
            return result.samples[0].reshape(shape + self.space.point_shape)

        def kng_log_acceptance(x):
            rho = np.asarray(self.space.unchecked.dist(self.frechet_mean, x))
            # ≤ 0 up to rounding (the offset accounts for the inexact mean); the clamp absorbs rounding.
            return np.minimum(-(self.gradient_norm(x) - self._rate_h * rho + self._mean_offset) / self.scale, 0.0)

        def propose(batch, rng):
            x = self._proposal._sample(batch, rng=rng)
            return x, kng_log_acceptance(x)

        def propose_envelope(batch, rng):
            x, log_acc, t = self._envelope.propose(batch, rng)
            inside = np.asarray(self.space.unchecked.dist(self.center, x)) <= self.radius
            idx = np.flatnonzero(inside & np.isfinite(log_acc))
            out = np.full(batch, -np.inf)
            if len(idx):
                # ‖∇F_D(x)‖ ≥ ℓ(t) − ‖∇F_D(a)‖ on the ball: the exponent is ≤ 0 up to rounding.
                excess = self.gradient_norm(x[idx]) + self._mean_offset - self._envelope.ell(t[idx])
                out[idx] = log_acc[idx] + np.minimum(-excess / self.scale, 0.0)
            return x, out

        def propose_cap(batch, rng):
            if fixed_work() is not None:  # every proposal is measured (those that failed where they fell)
                out, passed = self._cap.propose_every(batch, rng)
                inside = passed & (np.asarray(self.space.unchecked.dist(self.center, out)) <= self.radius)
                return out, np.where(inside, kng_log_acceptance(out), -np.inf)
            x, passed = self._cap.propose(batch, rng)
            inside = np.asarray(self.space.unchecked.dist(self.center, x)) <= self.radius
            log_acc = np.full(batch, -np.inf)
            idx = np.flatnonzero(passed)[inside]
            if len(idx):
                log_acc[idx] = kng_log_acceptance(x[inside])
            out = np.empty((batch,) + self.space.point_shape)
            out[idx] = x[inside]
            return out, log_acc

        if self.route == "spd-tangent":
            return self._sample_spd_tangent(m, rng).reshape(shape + self.space.point_shape)

        # The public bound is a proven floor when the flow reached the mean (it caps the loop);
        # batches start from a quarter, then follow the observed rate. On the cap route half of it
        # is the radial hat's guaranteed acceptance. An anchor with residual gradient g' (a flow
        # stopped by its budget, or the centre when the envelope condition failed) lowers every
        # acceptance by at most e^{−2g'/σ} (‖∇F_D‖ ≤ U(ρ) + g' there), so the floor follows it up
        # to g' = 4σ: such data make the release slower (a timing channel, SECURITY.md); beyond,
        # the loop keeps a finite cap and may end with the typed error (only seen with flows that
        # stall at extreme radii on affine-invariant SPD).
        # Under fixed work (timing-safe) the floor must be public: the anchor's flow then runs its
        # whole proven budget to ‖∇F_D‖ < 1e-12, so the slack is taken at a public 1e-9 (docs/math.md).
        offset = _FIXED_WORK_OFFSET if fixed_work() else self._mean_offset
        slack = math.exp(-2.0 * min(offset / self.scale, _OFFSET_CAP))
        floor = 0.5 * self.acceptance_bound * (0.5 if self._cap is not None else 1.0) * slack
        out, self.acceptance_rate = rejection_sample(
            propose_envelope if self._envelope is not None else propose_cap if self._cap is not None else propose,
            m,
            self.space.point_shape,
            max(floor, 0.25),
            rng,
            max_batch=100_000,
            min_rate=floor if floor > 0 else None,  # the envelope route: no useful public bound
        )
        return out.reshape(shape + self.space.point_shape)

    def _sample_spd_tangent(self, m, rng):
        """The ``"spd-tangent"`` route (docs/math.md §5): a race of the tangent proposal at the
        centre and, when its eigenvalue law is exact (public: k, σ, r), the Laplace at the mean
        with radius restricted to ``[0, 2r]``; both keep a draw in the ball with probability
        ``exp(−(‖∇F_D(x)‖ − t + ε_a)/σ)``, ``t ≤ ρ(a, x)`` (times the tangent route's volume step)."""
        space, k = self.space, self.space.k

        def gradient_step(x, t, passed):
            """Log acceptance of the gradient step for the draws that ``passed`` the earlier steps
            (in the ball and kept by the volume step: the steps multiply, so deciding them one
            after the other is the same rejection, and the costly gradient runs on survivors only)."""
            inside = np.asarray(space.unchecked.dist(self.center, x)) <= self.radius
            idx = np.flatnonzero(inside & passed)
            out = np.full(len(x), -np.inf)
            if len(idx):
                excess = self.gradient_norm(x[idx]) - t[idx] + self._mean_offset
                out[idx] = np.minimum(-excess / self.scale, 0.0)
            return x, out

        def propose_tangent(batch, rng):
            # The gradient step e^{−(‖∇F_D‖ − t + ε_a)/σ} splits into the stretch e^{−(ρ(a, x) − t)/σ}
            # (one eigvalsh, decided with the volume step) and e^{−(‖∇F_D‖ − ρ(a, x) + ε_a)/σ}.
            x, log_volume, t = self._tangent.propose(batch, rng)
            rho = np.asarray(space.unchecked.dist(self.frechet_mean, x))
            passed = np.log(rng.random(batch)) < log_volume - np.maximum(rho - t, 0.0) / self.scale
            return gradient_step(x, rho, passed)

        proposals = [propose_tangent]
        law = _spd_eigenvalue_law(k, self.scale, 2.0 * self.radius)
        if law.acceptance_rate >= ACCEPTANCE_FLOOR:
            root = mf.sqrtm_and_invsqrtm(self.frechet_mean)[0]

            def propose_at_mean(batch, rng):
                S = law.sample_symmetric(batch, rng=rng)
                x = mf.sym(mf.congruence(root, mf.expm(S)))
                return gradient_step(x, np.sqrt(np.sum(S * S, axis=(-2, -1))), np.ones(batch, dtype=bool))

            proposals.append(propose_at_mean)
        out, self.acceptance_rate = rejection_sample(proposals, m, space.point_shape, 0.25, rng, max_batch=20_000)
        return out
