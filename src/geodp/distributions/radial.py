"""The radial part of the Riemannian Laplace law on isotropic spaces (docs/math.md §5).

On a space whose volume in geodesic polar coordinates at η is ``J(t) dt du`` (Euclidean, sphere,
hyperbolic, Kendall), ``X ∝ exp(−ρ(η, X)/σ)`` is ``exp_η(t u)`` with ``u`` a uniform unit direction
and ``t ~ p(t) ∝ exp(−t/σ) J(t)`` on ``[0, T)``. :class:`RadialLaw` samples ``t`` exactly by
rejection from the best of three envelopes and evaluates its CDF (for tests and reports).

A space qualifies when it defines ``radial_log_jacobian(t)``, ``cut_radius`` and
``volume_growth_rate`` γ with ``log J(t) ≤ (dim − 1) log t + γ t`` for all t — the bound every
envelope below relies on (equality at t → 0 for the spaces here).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import integrate, special

from geodp.distributions.base import rejection_sample
from geodp.errors import AssumptionError, InvalidParameterError
from geodp.validation import as_generator, check_positive

__all__ = ["RadialLaw", "is_isotropic"]

_GRID = 16385


def is_isotropic(space) -> bool:
    """Does ``space`` expose the polar volume the exact radial sampler needs?

    Examples
    --------
    >>> from geodp.manifolds import SPD, Sphere
    >>> is_isotropic(Sphere(2)), is_isotropic(SPD(2))
    (True, False)
    """
    return all(hasattr(space, a) for a in ("radial_log_jacobian", "cut_radius", "volume_growth_rate"))


class RadialLaw:
    """Law of ``t = ρ(η, X)`` for the Riemannian Laplace ``∝ exp(−ρ/σ)``, optionally restricted
    to ``t ≤ t_max``; exact sampler, CDF and normalisability check.

    Parameters
    ----------
    space : Manifold
        An isotropic space (see :func:`is_isotropic`).
    scale : float
        σ > 0.
    t_max : float, default inf
        Restrict the law to ``[0, t_max]`` (used by truncation to a ball).

    Raises
    ------
    AssumptionError
        The law is not normalisable: infinite support and ``1/σ ≤ volume_growth_rate``
        (hyperbolic space with too large a scale).

    Attributes
    ----------
    envelope : {"gamma", "power", "uniform"}
        The proposal used by :meth:`sample` (the one with the highest acceptance rate).
    acceptance_rate : float
        Its exact expected acceptance rate.

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> law = RadialLaw(Sphere(2), scale=0.3)
    >>> law.envelope, round(law.acceptance_rate, 3)
    ('gamma', 0.917)
    >>> t = law.sample(1000, rng=0)
    >>> bool(t.max() < 3.1416)
    True
    """

    def __init__(self, space, scale, t_max=math.inf):
        if not is_isotropic(space):
            raise InvalidParameterError(f"{space!r} does not expose a radial Jacobian: no exact radial sampler.")
        self.space = space
        self.scale = check_positive(scale, "scale")
        self.dim = int(space.dim)
        self.growth = float(space.volume_growth_rate)
        t_max = float(t_max)
        if not t_max > 0:
            raise InvalidParameterError(f"t_max must be > 0, got {t_max!r}.")
        self.upper = min(float(space.cut_radius), t_max)
        rate = 1.0 / self.scale - self.growth
        if math.isinf(self.upper) and rate <= 0:
            raise AssumptionError(
                f"the Laplace law on {space!r} with scale={self.scale!r} is not normalisable: it needs "
                f"1/scale > {self.growth!r} (volume growth rate), i.e. scale < {1 / self.growth!r}. "
                "Truncate it to a ball or use a smaller scale."
            )
        self._gamma_scale = 1.0 / rate if rate > 0 else math.nan
        # Beyond this the Gamma(dim) envelope leaves mass < e^-40 (Chernoff): integrate up to it.
        tail = self._gamma_scale * (self.dim + 40.0 + 8.0 * math.sqrt(self.dim)) if rate > 0 else math.inf
        self._effective_upper = min(self.upper, tail)
        self.log_normaliser = self._log_integral(lambda t: -t / self.scale, self.upper)
        self.envelope, self.acceptance_rate = max(self._envelopes().items(), key=lambda kv: kv[1])

    # ------------------------------------------------------------- integrals
    def _log_integrand(self, t, tilt):
        return np.asarray(self.space.radial_log_jacobian(t)) + tilt(t)

    def _log_integral(self, tilt, upper) -> float:
        """``log ∫_0^upper exp(log J(t) + tilt(t)) dt`` by adaptive quadrature, rescaled."""
        hi = min(upper, self._effective_upper) if math.isfinite(upper) else self._effective_upper
        grid = np.linspace(0.0, hi, 2049)[1:]
        with np.errstate(divide="ignore", invalid="ignore"):
            shift = float(np.nanmax(self._log_integrand(grid, tilt)))

        def f(t):
            with np.errstate(divide="ignore", invalid="ignore"):
                v = math.exp(float(self._log_integrand(t, tilt)) - shift) if t > 0 else 0.0
            return v if math.isfinite(v) else 0.0

        peak = float(grid[np.nanargmax(self._log_integrand(grid, tilt))])
        value = integrate.quad(f, 0.0, hi, points=[peak], limit=200, epsabs=0.0, epsrel=1e-11)[0]
        return math.log(value) + shift

    def _envelopes(self) -> dict[str, float]:
        d, rates = self.dim, {}
        if math.isfinite(self._gamma_scale):
            rates["gamma"] = math.exp(self.log_normaliser - special.gammaln(d) - d * math.log(self._gamma_scale))
        if math.isfinite(self.upper):
            log_env = d * math.log(self.upper) - math.log(d) + self.growth * self.upper
            rates["power"] = math.exp(self.log_normaliser - log_env)
        if hasattr(self.space, "uniform_radius") and math.isfinite(self.space.cut_radius):
            rates["uniform"] = math.exp(self.log_normaliser - self._log_integral(lambda t: 0.0 * t, self.space.cut_radius))
        return {k: min(v, 1.0) for k, v in rates.items()}

    # -------------------------------------------------------------- sampling
    def _propose(self, m, rng):
        """``m`` proposals and their log acceptance probabilities (−inf outside the support)."""
        d = self.dim
        if self.envelope == "gamma":
            t = rng.gamma(d, self._gamma_scale, size=m)
            log_acc = self._log_integrand(t, lambda s: -(d - 1) * np.log(s) - self.growth * s)
        elif self.envelope == "power":
            t = self.upper * rng.random(m) ** (1.0 / d)
            log_acc = self._log_integrand(t, lambda s: -s / self.scale - (d - 1) * np.log(s) - self.growth * self.upper)
        else:
            t = self.space.uniform_radius(m, rng=rng)
            log_acc = -t / self.scale
        return t, np.where((t > 0) & (t < self.upper), log_acc, -np.inf)

    def sample(self, size=None, rng=None):
        """Exact draws of ``t`` (vectorised rejection; ``size`` as in numpy)."""
        rng = as_generator(rng)
        shape = () if size is None else ((size,) if np.isscalar(size) else tuple(size))
        draws, _ = rejection_sample(self._propose, int(np.prod(shape, dtype=int)), (), self.acceptance_rate, rng)
        return draws.reshape(shape)

    # ----------------------------------------------------------- closed form
    def log_pdf(self, t):
        """Normalised log-density of ``t`` on ``(0, upper)``."""
        t = np.asarray(t, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            inside = (t > 0) & (t < self.upper)
            return np.where(inside, self._log_integrand(t, lambda s: -s / self.scale) - self.log_normaliser, -np.inf)

    @functools.cached_property
    def _cdf_table(self):
        grid = np.linspace(0.0, self._effective_upper, _GRID)
        dens = np.exp(self.log_pdf(grid))
        dens[~np.isfinite(dens)] = 0.0
        cum = integrate.cumulative_simpson(dens, x=grid, initial=0.0)
        return grid, np.clip(cum / cum[-1], 0.0, 1.0)

    def cdf(self, t):
        """CDF of ``t`` (cumulative quadrature on a fine grid, interpolated; error < 1e-6)."""
        grid, cum = self._cdf_table
        return np.interp(np.asarray(t, dtype=float), grid, cum)
