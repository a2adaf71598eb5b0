"""Floating-point-safe releases on flat spaces: exact discrete noise on a public 2^k grid.

Secure mode (``rng="secure"``, docs/secure.md) replaces the floating-point Laplace and Gaussian
samplers of a flat space, whose low-order bits can leak (Mironov 2012), by OpenDP's construction:

1. the chart coordinates ``c`` of the statistic are rounded to the public grid ``g = 2^k``:
   ``m = round(c/g)`` in exact rational arithmetic; each coordinate moves by at most ``g/2``, so
   neighbouring statistics at chart distance ≤ Δ give integer vectors with
   ``‖m − m'‖₂ ≤ Δ/g + √d`` and ``‖m − m'‖₁ ≤ √d·Δ/g + d``;
2. exact integer noise is added (:mod:`geodp.distributions.discrete`), calibrated to those
   rounded sensitivities: the rounding's cost is paid inside the requested budget;
3. the release is ``(m + noise)·g``, an exact multiple of ``g`` (its conversion to float64 is
   post-processing of the exact integer).

The grid is the largest power of two ≤ ``σ·2^-10`` for the nominal (continuous) noise scale σ,
a public quantity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import isqrt

import numpy as np
from scipy.optimize import minimize_scalar

from geodp.distributions.discrete import discrete_gaussian, discrete_laplace
from geodp.distributions.gaussian import TangentGaussian
from geodp.errors import InvalidParameterError
from geodp.manifolds.euclidean import Euclidean

__all__ = ["GaussianChartNoise", "GridGaussian", "GridLaplace", "public_grid", "zcdp_delta"]

GRID_BITS_BELOW_SCALE = 10
_SMALLEST_EXPONENT = -1074  # the smallest positive float64 is 2^-1074


def public_grid(scale: float) -> float:
    """The largest power of two ≤ ``scale·2^-10`` (at least 2^-1074): the release grid.

    Examples
    --------
    >>> public_grid(1.0), public_grid(1024.0), public_grid(0.3) == 2.0**-12
    (0.0009765625, 1.0, True)
    """
    _, e = math.frexp(scale)  # scale = f·2^e with f in [1/2, 1): largest 2^j ≤ scale is 2^(e−1)
    return math.ldexp(1.0, max(e - 1 - GRID_BITS_BELOW_SCALE, _SMALLEST_EXPONENT))


def zcdp_delta(rho: float, epsilon: float) -> float:
    """δ of ρ-zCDP at ε by the conversion of Canonne, Kamath & Steinke (2020, Cor. 13).

    ``δ = inf_{α>1} exp((α−1)(αρ−ε))/(α−1) · (1 − 1/α)^α``. Every α gives a valid δ; the
    minimum is found numerically, so an imprecise optimum only loosens the bound.

    Examples
    --------
    >>> round(zcdp_delta(0.01, 1.0), 12) < 1e-10
    True
    """

    def log_delta(u):  # α = 1 + e^u
        alpha = 1.0 + math.exp(u)
        return (alpha - 1.0) * (alpha * rho - epsilon) - u + alpha * math.log1p(-1.0 / alpha)

    guess = math.log(max(epsilon / (2.0 * rho), 1e-9))  # α − 1 ≈ ε/(2ρ) near the optimum
    best = minimize_scalar(log_delta, bounds=(guess - 20.0, guess + 20.0), method="bounded", options={"xatol": 1e-10})
    return min(1.0, math.exp(min(best.fun, log_delta(guess))))


@lru_cache(maxsize=256)
def _smallest_sigma2(epsilon: float, delta: float, l2_units: float) -> int:
    """The smallest integer σ_u² whose ρ = Δ'²/(2σ_u²) has δ(ε) ≤ δ (bisection on ρ; public)."""
    target = delta * (1.0 - 1e-9)
    low, high = 0.0, 1.0  # bracket ρ: find the largest ρ whose δ is ≤ target
    while zcdp_delta(high, epsilon) <= target:
        low, high = high, 2.0 * high
    for _ in range(60):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if zcdp_delta(mid, epsilon) <= target else (low, mid)
    return math.ceil(l2_units**2 / (2.0 * low))


def _chart_integers(coordinates, grid: float) -> np.ndarray:
    """``round(c/g)`` per coordinate, exact (Python ints; no overflow however far out)."""
    g = Fraction(grid)
    c = np.asarray(coordinates, dtype=float)
    return np.array([round(Fraction(float(x)) / g) for x in c.ravel()], dtype=object).reshape(c.shape)


def _to_float(q: Fraction) -> float:
    try:
        return float(q)
    except OverflowError:  # beyond float64: post-processing of the exact integer
        return math.copysign(math.inf, q)


def _on_grid(integers, grid: float) -> np.ndarray:
    g = Fraction(grid)
    flat = [_to_float(m * g) for m in integers.ravel()]
    return np.array(flat, dtype=float).reshape(integers.shape)


class _GridNoise:
    """Rounding to the grid + exact integer noise; subclasses set the integer sampler."""

    grid: float
    dim: int

    def release(self, coordinates, rng, size=None) -> np.ndarray:
        """Round ``coordinates`` (shape ``(d,)``) to the grid and add exact noise; ``size``
        independent releases. Returns float64 chart coordinates, exact multiples of the grid."""
        m = _chart_integers(coordinates, self.grid)
        if m.shape != (self.dim,):
            raise InvalidParameterError(f"the statistic must have {self.dim} chart coordinates, got shape {m.shape}.")
        shape = () if size is None else ((int(size),) if np.isscalar(size) else tuple(size))
        noise = self._integer_noise(rng, shape + (self.dim,))
        return _on_grid(noise + m, self.grid)


@dataclass(frozen=True)
class GridLaplace(_GridNoise):
    """ε-DP: coordinate-wise exact discrete Laplace on the grid, calibrated to the ℓ1
    sensitivity after rounding (the floating-point-safe stand-in for the ℓ2 Laplace).

    Parameters
    ----------
    epsilon : float
    sensitivity : float
        Δ, the ℓ2 (chart) sensitivity of the statistic.
    dim : int
        Number of chart coordinates d.

    Notes
    -----
    ``‖m − m'‖₁ ≤ ⌊√d·Δ/g⌋ + d =: D₁`` (an integer bound, computed exactly), and the discrete
    Laplace with scale ``t = D₁/ε`` (in grid units, rational) has privacy loss
    ``≤ ‖m − m'‖₁/t ≤ ε`` exactly.

    Examples
    --------
    >>> import numpy as np
    >>> noise = GridLaplace(epsilon=1.0, sensitivity=0.5, dim=2)
    >>> noise.grid, noise.l1_units  # 2^-11 ≤ (Δ/ε)·2^-10; ⌊√2·1024⌋ + 2
    (0.00048828125, 1450)
    >>> y = noise.release(np.array([0.1, 0.2]), np.random.default_rng(0))
    >>> bool(np.all(y / noise.grid == np.round(y / noise.grid)))
    True
    """

    epsilon: float
    sensitivity: float
    dim: int

    @property
    def grid(self) -> float:
        return public_grid(self.sensitivity / self.epsilon)

    @property
    def l1_units(self) -> int:
        """D₁: the ℓ1 sensitivity after rounding, in grid units."""
        x = Fraction(self.sensitivity) / Fraction(self.grid)
        return isqrt(math.floor(self.dim * x * x)) + self.dim

    @property
    def scale_units(self) -> Fraction:
        """t = D₁/ε, the discrete Laplace scale in grid units (exact)."""
        return Fraction(self.l1_units) / Fraction(self.epsilon)

    @property
    def scale(self) -> float:
        """The per-coordinate Laplace scale in chart units, t·g."""
        return float(self.scale_units * Fraction(self.grid))

    def _integer_noise(self, rng, shape):
        return discrete_laplace(self.scale_units, rng, size=shape, epsilon=self.epsilon)

    def describe(self) -> dict:
        """The :class:`~geodp.mechanisms.base.Guarantee` fields of this construction."""
        rounding = self.dim * self.grid
        share = rounding / (math.sqrt(self.dim) * self.sensitivity + rounding)
        return dict(
            scale=self.scale,
            scale_rule=(
                f"per coordinate t = (⌊√d·Δ/g⌋ + d)·g/ε with d = {self.dim}, g = {self.grid!r}: the ℓ1 "
                "sensitivity after rounding (‖·‖₁ ≤ √d‖·‖₂, each coordinate rounded by ≤ g/2), exact"
            ),
            sampler=(
                "exact discrete Laplace per chart coordinate (Canonne, Kamath & Steinke 2020, Alg. 2; "
                "integer arithmetic, secure generator)"
            ),
            support=f"the grid {self.grid!r}·Z^{self.dim} in the isometric chart",
            floating_point_safe=True,
            grid=self.grid,
            construction=(
                f"secure mode, floating-point safe: chart coordinates rounded to the public grid g = {self.grid!r} "
                "(2^k ≤ (Δ/ε)·2^-10), coordinate-wise exact discrete Laplace calibrated to the ℓ1 sensitivity after "
                f"rounding; the grid adds d·g = {rounding:.3g} to the ℓ1 sensitivity ({share:.2%} of the noise); "
                "the ℓ2 law has no exact lattice sampler, so the noise is about √(2d/(d+1)) times the ℓ2 Laplace's "
                "in norm"
            ),
        )


@dataclass(frozen=True)
class GridGaussian(_GridNoise):
    """(ε, δ)-DP: multivariate exact discrete Gaussian on the grid, calibrated through zCDP.

    Parameters
    ----------
    epsilon, delta : float
    sensitivity : float
        Δ, the ℓ2 (chart) sensitivity of the statistic.
    dim : int
    nominal_scale : float
        The continuous Gaussian's σ for (ε, δ, Δ): it sets the grid (public).

    Notes
    -----
    After rounding ``‖m − m'‖₂ ≤ Δ' = Δ/g + √d``; independent discrete Gaussians with parameter
    σ_u² per coordinate are ``Δ'²/(2σ_u²)``-zCDP, hence (ε, δ)-DP with δ from
    :func:`zcdp_delta`. σ_u² is the smallest integer whose δ is ≤ the requested δ.

    The ρ is exact, with no dimension term: CKS20 Thm 14 states that adding independent
    ``N_Z(0, σ_j²)`` to an integer-valued query is ``½ε²``-zCDP if and only if
    ``Σ_j (q(x)_j − q(x')_j)²/σ_j² ≤ ε²`` for all neighbours (the Rényi divergence of two
    discrete Gaussians with integer shift is at most the continuous one's, and Rényi divergences
    add over independent coordinates). The small ``τ·d`` slack of the multivariate case belongs to
    CKS20 Thm 15, the direct (ε, δ) bound by comparison with the continuous Gaussian, which is
    not used here. So ``zcdp_rho`` (what composition adds)
    is ``ρ`` itself.

    Examples
    --------
    >>> noise = GridGaussian(epsilon=1.0, delta=1e-6, sensitivity=1.0, dim=3, nominal_scale=4.0)
    >>> noise.grid, noise.achieved_delta <= 1e-6
    (0.00390625, True)
    >>> noise.describe()["zcdp_rho"] == noise.rho == noise.l2_units**2 / (2 * noise.sigma2_units)
    True
    """

    epsilon: float
    delta: float
    sensitivity: float
    dim: int
    nominal_scale: float

    @property
    def grid(self) -> float:
        return public_grid(self.nominal_scale)

    @property
    def l2_units(self) -> float:
        """Δ' = Δ/g + √d, rounded up by a relative 1e-12 (float safety)."""
        return (self.sensitivity / self.grid + math.sqrt(self.dim)) * (1.0 + 1e-12)

    @property
    def sigma2_units(self) -> int:
        """σ_u², the discrete Gaussian parameter in grid units (an integer)."""
        return _smallest_sigma2(self.epsilon, self.delta, self.l2_units)

    @property
    def rho(self) -> float:
        """ρ = Δ'²/(2σ_u²) of the discrete mechanism."""
        return self.l2_units**2 / (2.0 * self.sigma2_units)

    @property
    def achieved_delta(self) -> float:
        return zcdp_delta(self.rho, self.epsilon)

    @property
    def scale(self) -> float:
        """σ in chart units, √σ_u²·g."""
        return math.sqrt(self.sigma2_units) * self.grid

    def _integer_noise(self, rng, shape):
        return discrete_gaussian(self.sigma2_units, rng, size=shape, epsilon=self.epsilon)

    def describe(self) -> dict:
        """The :class:`~geodp.mechanisms.base.Guarantee` fields of this construction."""
        rounding = math.sqrt(self.dim) * self.grid
        return dict(
            delta=self.achieved_delta,
            scale=self.scale,
            scale_rule=(
                f"σ = √σ_u²·g with σ_u² = {self.sigma2_units} the smallest integer whose ρ = Δ'²/(2σ_u²), "
                f"Δ' = Δ/g + √d (d = {self.dim}, g = {self.grid!r}), gives δ ≤ the requested δ at ε by the "
                "zCDP conversion of Canonne, Kamath & Steinke (2020, Cor. 13); the delta shown is the achieved one"
            ),
            sampler=(
                "exact discrete Gaussian per chart coordinate (Canonne, Kamath & Steinke 2020, Alg. 3; "
                "integer arithmetic, secure generator)"
            ),
            support=f"the grid {self.grid!r}·Z^{self.dim} in the isometric chart",
            floating_point_safe=True,
            grid=self.grid,
            zcdp_rho=self.rho,
            construction=(
                f"secure mode, floating-point safe: chart coordinates rounded to the public grid g = {self.grid!r} "
                "(2^k ≤ σ·2^-10 for the continuous σ), exact multivariate discrete Gaussian; the grid adds "
                f"√d·g = {rounding:.3g} to the ℓ2 sensitivity ({rounding / (self.sensitivity + rounding):.2%} of it); "
                f"ρ = {self.rho:.6g} zCDP converted to (ε, δ)"
            ),
        )


class GaussianChartNoise:
    """Mixin of the Gaussian mechanisms (tangent, wrapped, Riemannian): on a flat space the law in
    the isometric chart is the Gaussian of deviation ``self._sigma``, and secure mode draws the
    exact discrete Gaussian on the grid, calibrated to ``_chart_sensitivity`` (the sensitivity of
    the chart coordinates; the wrapped mechanism's is L·Δ).

    Examples
    --------
    >>> from geodp.mechanisms import TangentGaussianMechanism
    >>> isinstance(TangentGaussianMechanism(epsilon=1.0, delta=1e-6, sensitivity=0.1), GaussianChartNoise)
    True
    """

    @property
    def _chart_sensitivity(self) -> float:
        return self.sensitivity

    def noise_second_moment(self, dim: int) -> float | None:
        """``E‖Z‖² = dim·σ²`` for ``Z ~ N(0, σ² I_dim)`` (see :meth:`Mechanism.noise_second_moment`).

        Examples
        --------
        >>> from geodp.mechanisms import TangentGaussianMechanism
        >>> mech = TangentGaussianMechanism(epsilon=1.0, delta=1e-6, sensitivity=0.1)
        >>> bool(mech.noise_second_moment(3) == 3 * mech.scale**2)
        True
        """
        return dim * self._sigma**2

    def _chart_law(self, space, coordinates) -> TangentGaussian:
        return TangentGaussian(Euclidean(space.dim), coordinates, self._sigma)

    def _grid_noise(self, dim: int) -> GridGaussian:
        return GridGaussian(self.epsilon, self.delta, self._chart_sensitivity, dim, nominal_scale=self._sigma)
