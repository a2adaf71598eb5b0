"""A sound (ε, δ) privacy profile of the Riemannian Gaussian mechanism (docs/math.md §12).

The law at the centre ``a`` has density ``∝ exp(−ρ(a, y)²/2σ²)`` w.r.t. the volume. On a
homogeneous space the normaliser does not depend on ``a``, so for neighbours ``a, b``
(``ρ(a, b) ≤ Δ``) the privacy loss at ``y`` is ``L = (ρ(b, y)² − ρ(a, y)²)/2σ²``. With
``t = ρ(a, y)``, the triangle inequality and the diameter ``D`` of the space give

    L ≤ U(t) = (min(t + Δ, D)² − t²) / 2σ²,

and the hockey-stick divergence ``δ(ε) = E_a[(1 − e^{ε − L})_+]`` (the smallest δ of an
(ε, δ) guarantee for this ordered pair) is at most ``E[(1 − e^{ε − U(t)})_+]`` because
``x ↦ (1 − e^{ε − x})_+`` is non-decreasing. On an isotropic space ``t`` follows the radial law
``∝ e^{−t²/2σ²} J(t)`` on ``[0, T)`` whatever ``a`` is, so the bound is a 1-D integral, the same
for both orders of the pair and every pair: :func:`triangle_delta` computes it by adaptive
quadrature. ``D = T`` there: the law at ``b`` has a positive density everywhere and its radius
lies in ``[0, T]``, so no point is farther than ``T`` from ``b``.

On affine-invariant SPD(k) (``D = ∞``) ``t = |r|`` has density ``∝ t^{d−1} e^{−t²/2σ²} H(t)``
with ``H`` known only between bounds ``lo ≤ H ≤ hi``
(:func:`~geodp.distributions.spd_affine.angular_weight_bounds`); then ``U`` is increasing, and
``E[w(t)] = ∫ w'(s) P[t > s] ds`` with ``P[t > s] ≤ S̄(s) = ∫_s^∞ hi / (∫_0^s lo + ∫_s^∞ hi)``,
a non-increasing bound, so a grid sum with ``S̄`` at the left end of each cell bounds δ.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
from scipy import integrate, optimize

from geodp.calibration import gaussian_sigma
from geodp.distributions.radial import is_isotropic
from geodp.distributions.spd_affine import angular_weight_bounds
from geodp.errors import AssumptionError, InvalidParameterError
from geodp.validation import check_delta, check_epsilon, check_positive

__all__ = ["triangle_delta", "triangle_sigma", "TAIL_LOG_CUTOFF"]

#: The radial integrals stop where the log-density is this far below its largest value (or at the
#: cut radius); the mass beyond is bounded (concavity) and added to δ.
TAIL_LOG_CUTOFF = 80.0
_QUAD_REL = 1e-10  # requested relative accuracy of each quadrature
_SAFETY = 1e-6  # relative padding of the computed δ (quadrature error is far below it)


class _RadialIntegrals:
    """``∫ w(t) e^{g(t)} dt / ∫ e^{g(t)} dt`` for the unnormalised radial log-density
    ``g(t) = log J(t) − t²/2σ²`` of a space, by adaptive quadrature on ``[0, t_far]``."""

    def __init__(self, space, scale: float):
        self.space, self.scale = space, scale
        self.upper = float(space.cut_radius)
        growth = float(space.volume_growth_rate)
        d = max(int(space.dim), 1)
        reach = scale * (math.sqrt(d) + 12.0) + 2.0 * growth * scale * scale
        grid = np.geomspace(scale * 1e-8, reach, 2001)
        if math.isfinite(self.upper):
            grid = np.append(grid[grid < self.upper], self.upper * (1.0 - np.geomspace(1e-12, 0.5, 200)))
            grid = np.unique(grid)
        values = self._raw(grid)
        top = int(np.nanargmax(values))
        # g is concave: its maximum lies between the grid neighbours of the best grid point
        lo, hi = grid[max(top - 1, 0)], grid[min(top + 1, len(grid) - 1)]
        peak = optimize.minimize_scalar(lambda t: -float(self._raw(t)), bounds=(lo, hi), method="bounded")
        self.mode = float(peak.x) if -peak.fun > values[top] else float(grid[top])
        self.shift = float(max(values[top], -peak.fun))
        self.t_far, self.tail = self.upper, 0.0
        beyond = np.flatnonzero((grid > self.mode) & (values < self.shift - TAIL_LOG_CUTOFF))
        if beyond.size:
            self.t_far = float(grid[beyond[0]])
        elif not math.isfinite(self.upper):
            raise AssumptionError(
                f"the Riemannian Gaussian radial law on {space!r} at scale {scale!r} does not decay within "
                f"t = {reach:.3g}: no privacy curve computed."
            )
        if self.t_far < self.upper:
            # g concave: beyond t_far it lies under the line through t_far with the (steeper)
            # slope of the secant ending there, so the tail mass is at most e^{g(t_far)}/|slope|.
            h = 1e-3 * (self.t_far - self.mode)
            slope = (self._raw(self.t_far) - self._raw(self.t_far - h)) / h
            if not slope < 0:
                raise AssumptionError(f"the radial log-density on {space!r} is not decreasing beyond its mode.")
            self.tail = math.exp(self._raw(self.t_far) - self.shift) / -slope
        self.total = self._integral(lambda t: 1.0, 0.0, self.t_far, lower=True)

    def _raw(self, t):
        with np.errstate(divide="ignore", invalid="ignore"):
            return self._raw_unguarded(t)

    def _raw_unguarded(self, t):
        return np.asarray(self.space.radial_log_jacobian(t), dtype=float) - t * t / (2.0 * self.scale**2)

    def _integral(self, weight, lo, hi, lower=False):
        """``∫_lo^hi weight·e^{g − shift}`` plus its error estimate (minus it, ``lower=True``)."""
        if not hi > lo:
            return 0.0
        points = [p for p in (self.mode, self.mode + self.scale, self.mode - self.scale) if lo < p < hi]

        def f(t):
            value = math.exp(float(self._raw_unguarded(t)) - self.shift)
            return weight(t) * value if value > 0 else 0.0

        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("error", integrate.IntegrationWarning)
            try:
                value, error = integrate.quad(f, lo, hi, points=points or None, limit=400, epsabs=0.0, epsrel=_QUAD_REL)
            except (integrate.IntegrationWarning, OverflowError):
                return math.nan  # no trustworthy value: the caller reports δ = 1
        return value - abs(error) if lower else value + abs(error)

    def expectation(self, weight, lo, hi):
        """Upper bound on ``E[weight(t); lo ≤ t ≤ hi]`` for ``0 ≤ weight ≤ 1``."""
        inside = self._integral(weight, max(lo, 0.0), min(hi, self.t_far))
        tail = self.tail if hi > self.t_far else 0.0
        return (inside + tail) / self.total


@functools.lru_cache(maxsize=256)
def _integrals(space, scale: float) -> _RadialIntegrals:
    return _RadialIntegrals(space, scale)


_SPD_CELLS = 4000
_GL_NODES, _GL_WEIGHTS = ((x + 1.0) / 2.0 for x in np.polynomial.legendre.leggauss(8))


@functools.lru_cache(maxsize=256)
def _spd_survival(k: int, scale: float):
    """Grid ``t_j`` and the survival bound ``S̄(t_j)`` of ``ρ`` on AI-SPD(k) (module docstring):
    8-point Gauss–Legendre per cell of the two radial densities, out to where the upper one has
    fallen e^{−80} below its peak; the mass beyond is bounded by a Gaussian tail and added."""
    d = k * (k + 1) // 2
    c = 0.5 * math.sqrt(k * (k * k - 1) / 3.0)

    def logs(t):
        with np.errstate(divide="ignore"):
            base = (d - 1) * np.log(t) - t * t / (2.0 * scale * scale)
        lo, hi = angular_weight_bounds(k, t)
        return base + lo, base + hi

    # log hi ≤ (d − 1) log t + c t − t²/2σ²: beyond its mode it falls at least like a Gaussian.
    mode = 0.5 * (c * scale * scale + math.sqrt((c * scale * scale) ** 2 + 4.0 * max(d - 1, 0) * scale * scale))
    far = mode + scale * (math.sqrt(2.0 * TAIL_LOG_CUTOFF) + 40.0)
    top = float(np.max(logs(np.linspace(0.0, far, 4001)[1:])[1]))
    edges = np.linspace(0.0, far, _SPD_CELLS + 1)
    nodes = edges[:-1, None] + np.diff(edges)[:, None] * _GL_NODES
    log_lo, log_hi = logs(nodes)
    width = np.diff(edges)
    lo_cells = width * (np.exp(log_lo - top) @ _GL_WEIGHTS)
    hi_cells = width * (np.exp(log_hi - top) @ _GL_WEIGHTS)
    # Tail of hi beyond `far` (≥ mode + σ·√160): with g(t) = log hi concave-bounded by
    # (d−1) log t + ct − t²/2σ², whose slope at `far` is ≤ −s, the tail is ≤ e^{g(far)}/s.
    slope = (d - 1) / far + c - far / (scale * scale)
    envelope = (d - 1) * math.log(far) + c * far - far * far / (2.0 * scale * scale)  # ≥ log hi(far)
    # A loose envelope far above the peak (large k): no finite bound, as when the slope is not negative.
    tail = math.exp(envelope - top) / -slope if slope < 0 and envelope - top < 700.0 else math.inf
    below = np.concatenate([[0.0], np.cumsum(lo_cells)]) * (1.0 - 1e-9)
    above = np.concatenate([np.cumsum(hi_cells[::-1])[::-1], [0.0]]) * (1.0 + 1e-9) + tail
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = above / (below + above)
    return edges, np.where(np.isfinite(ratio), np.minimum(ratio, 1.0), 1.0)  # no bound: S̄ = 1


def _spd_delta(k: int, scale: float, epsilon: float, sensitivity: float) -> float:
    t, survival = _spd_survival(k, scale)
    two_var = 2.0 * scale * scale
    with np.errstate(over="ignore"):
        w = np.maximum(-np.expm1(epsilon - (2.0 * sensitivity * t + sensitivity**2) / two_var), 0.0)
    # E[w(ρ)] = w(0) + ∫ w' P[ρ > s] ds ≤ w(0) + Σ_j S̄(t_j)(w(t_{j+1}) − w(t_j)) + S̄(t_N)(1 − w(t_N))
    return float(w[0] + np.sum(survival[:-1] * np.diff(w)) + survival[-1] * (1.0 - w[-1]))


def triangle_delta(space, scale, epsilon, sensitivity) -> float:
    """Upper bound on ``δ(ε)`` of the Riemannian Gaussian ``∝ exp(−ρ²/2σ²)`` with sensitivity Δ
    on an isotropic space or affine-invariant SPD (module docstring; docs/math.md §12).

    Sound on every such space: the bound ``U(t)`` of the privacy loss holds for every pair of
    neighbours and every output; on isotropic spaces the integral is computed by adaptive
    quadrature with its error estimate, on SPD by a grid sum over a proven survival bound; a
    relative padding of 1e-6 and a bound on the tail beyond the integration range are added.

    Parameters
    ----------
    space : Manifold
        An isotropic space (``radial_log_jacobian``) or affine-invariant ``SPD(k)``.
    scale : float
        σ > 0.
    epsilon : float
        ε > 0.
    sensitivity : float
        Δ > 0, in geodesic distance.

    Returns
    -------
    float
        δ in ``[0, 1]``.

    Examples
    --------
    >>> from geodp.calibration import analytic_gaussian_delta
    >>> from geodp.manifolds import Euclidean, Sphere
    >>> bound = triangle_delta(Euclidean(1), 1.0, 1.0, 0.5)  # in 1-D: twice the exact Gaussian δ
    >>> round(bound / analytic_gaussian_delta(1.0, 1.0, 0.5), 5)
    2.0
    >>> triangle_delta(Sphere(2), 0.2, 1.0, 0.01) < 1e-10
    True
    """
    scale, sensitivity = check_positive(scale, "scale"), check_positive(sensitivity, "sensitivity")
    return _triangle_delta(space, scale, check_epsilon(epsilon), sensitivity)


@functools.lru_cache(maxsize=1024)
def _triangle_delta(space, scale, epsilon, sensitivity):
    """:func:`triangle_delta` after validation (cached: public arguments only)."""
    if not is_isotropic(space):
        if "spd-eigenvalue-laplace" not in space.closed_forms:
            raise InvalidParameterError(
                f"no privacy curve of the Riemannian Gaussian on {space!r}: it needs an isotropic space or "
                "affine-invariant SPD."
            )
        return min(_spd_delta(space.k, scale, epsilon, sensitivity) * (1.0 + _SAFETY), 1.0)
    law = _integrals(space, scale)
    two_var = 2.0 * scale * scale
    diameter = law.upper
    # U(t) > ε on [t_lo, t_hi]: the rising branch (2Δt + Δ²)/2σ² for t ≤ D − Δ, then (D² − t²)/2σ².
    t_lo = max((epsilon * two_var - sensitivity**2) / (2.0 * sensitivity), 0.0)
    if math.isfinite(diameter):
        # U is largest at t = D − Δ (at t = 0 when Δ ≥ D)
        peak = max(diameter - sensitivity, 0.0)
        if (min(peak + sensitivity, diameter) ** 2 - peak**2) / two_var <= epsilon:
            return 0.0
        t_hi = math.sqrt(max(diameter**2 - epsilon * two_var, 0.0))
    else:
        t_hi = math.inf

    def weight(t):
        loss = (min(t + sensitivity, diameter) ** 2 - t * t) / two_var
        return -math.expm1(epsilon - loss) if loss > epsilon else 0.0

    delta = law.expectation(weight, t_lo, t_hi) * (1.0 + _SAFETY)
    return float(min(delta, 1.0)) if math.isfinite(delta) else 1.0


def triangle_sigma(space, epsilon, delta, sensitivity) -> float:
    """The smallest σ on a 10% grid through ``0.9×`` the flat-space analytic σ (then refined by
    bisection to 1e-4 relative) with
    ``triangle_delta(space, σ, ε, Δ) ≤ δ``: the calibration of the Riemannian Gaussian mechanism.

    The returned σ is checked: ``triangle_delta`` at it is ``≤ δ`` (soundness does not rest on
    monotonicity in σ, which the bound need not have on curved spaces).

    Raises
    ------
    AssumptionError
        No σ up to 100 times the flat-space analytic σ meets the target (on hyperbolic space the loss of the
        Riemannian Gaussian does not vanish as σ grows: its radius grows like ``(d − 1)σ²/R``).

    Examples
    --------
    >>> from geodp.calibration import gaussian_sigma
    >>> from geodp.manifolds import Euclidean
    >>> s = triangle_sigma(Euclidean(1), 1.0, 1e-5, 0.1)
    >>> bool(gaussian_sigma(1.0, 1e-5, 0.1) <= s < 1.2 * gaussian_sigma(1.0, 1e-5, 0.1))
    True
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta, allow_zero=False)
    sensitivity = check_positive(sensitivity, "sensitivity")
    return _triangle_sigma(space, epsilon, delta, sensitivity)


@functools.lru_cache(maxsize=256)
def _triangle_sigma(space, epsilon, delta, sensitivity):
    def ok(sigma):
        return triangle_delta(space, sigma, epsilon, sensitivity) <= delta

    # Start just below the flat-space calibration and step by 10% (down while the bound holds,
    # up while it does not): a public starting point only; the returned σ is a point at which
    # the bound was evaluated and met.
    ratio, flat = 1.1, gaussian_sigma(epsilon, delta, sensitivity)
    sigma, limit, floor = 0.9 * flat, 100.0 * flat, 1e-3 * flat
    if ok(sigma):
        while sigma / ratio > floor and ok(sigma / ratio):
            sigma /= ratio
        lo, hi = sigma / ratio, sigma
    else:
        while not ok(sigma):
            sigma *= ratio
            if sigma > limit:
                raise AssumptionError(
                    f"no scale σ ≤ {limit:.3g} makes the Riemannian Gaussian on {space!r} (ε={epsilon!r}, "
                    f"δ={delta!r})-DP by the triangle bound at sensitivity {sensitivity!r}; use the Laplace or "
                    "a wrapped mechanism, or a larger δ."
                )
        lo, hi = sigma / ratio, sigma
    for _ in range(30):
        if hi / lo < 1 + 1e-4:
            break
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi
