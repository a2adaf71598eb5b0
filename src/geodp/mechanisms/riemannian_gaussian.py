"""The Riemannian Gaussian mechanism (Jiang, Chang et al., NeurIPS 2023; docs/math.md §12)."""

from __future__ import annotations

import math

from geodp.calibration import analytic_gaussian_delta, gaussian_sigma
from geodp.distributions.gaussian import TangentGaussian
from geodp.distributions.riemannian_gaussian import RiemannianGaussian, has_exact_riemannian_gaussian
from geodp.errors import AssumptionError, InvalidParameterError
from geodp.manifolds.base import check_space
from geodp.mechanisms.base import Guarantee, Mechanism
from geodp.mechanisms.grid import GaussianChartNoise
from geodp.mechanisms.riemannian_gaussian_curve import triangle_delta, triangle_sigma
from geodp.validation import check_epsilon

__all__ = ["RiemannianGaussianMechanism"]


class RiemannianGaussianMechanism(GaussianChartNoise, Mechanism):
    """Release a point ``x̄`` as a draw from ``∝ exp(−ρ(x̄, y)²/2σ²)`` (w.r.t. the volume):
    (ε, δ)-DP when Δ bounds the geodesic sensitivity of ``x̄``.

    * Flat spaces (Euclidean, log-Euclidean SPD): the law is the Gaussian in the isometric chart,
      the privacy loss is exactly that of the Gaussian mechanism: μ-GDP with μ = Δ/σ, σ from the
      analytic calibration (Balle & Wang 2018) — the same release as
      :class:`~geodp.mechanisms.TangentGaussianMechanism`.
    * Curved isotropic spaces (sphere, hyperbolic, Kendall) and affine-invariant SPD: σ is the
      smallest σ (grid + bisection) whose **triangle bound** ``δ(ε) ≤ E[(1 − e^{ε − U(ρ)})_+]``,
      ``U(t) = (min(t + Δ, D)² − t²)/2σ²``, is ``≤ δ`` (:func:`~geodp.mechanisms.
      riemannian_gaussian_curve.triangle_delta`): a sound curve, not the exact one, and no GDP μ
      is claimed (``guarantee.gdp_mu is None``).

    Sampled exactly on every supported space; other spaces are refused.

    Parameters
    ----------
    space : Manifold
    epsilon : float
    delta : float
        In (0, 1).
    sensitivity : float
        Geodesic sensitivity Δ of the released summary.

    Privacy
    -------
    (ε, δ)-DP under the adjacency for which Δ holds. The law's normaliser does not depend on the
    centre (the spaces are homogeneous), so the privacy loss at ``y`` is
    ``(ρ(x̄', y)² − ρ(x̄, y)²)/2σ²`` (Jiang, Chang et al. 2023). :meth:`delta_for` gives the whole
    (ε, δ) profile used. On hyperbolic space the loss does not vanish as σ grows (the radius
    grows like ``(d − 1)σ²``); a target that no σ meets is refused.

    Raises
    ------
    InvalidParameterError
        The space has no exact sampler of the law.
    AssumptionError
        No σ meets the (ε, δ) target.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Euclidean, Sphere
    >>> mech = RiemannianGaussianMechanism(Sphere(2), epsilon=1.0, delta=1e-5, sensitivity=0.05)
    >>> round(mech.scale, 3), mech.guarantee.gdp_mu is None, mech.delta_for(1.0) <= 1e-5
    (0.211, True, True)
    >>> mech.randomise(np.array([0.0, 0.0, 1.0]), rng=0).shape
    (3,)
    >>> flat = RiemannianGaussianMechanism(Euclidean(2), epsilon=1.0, delta=1e-5, sensitivity=0.05)
    >>> round(flat.guarantee.gdp_mu, 4)
    0.2681
    """

    def __init__(self, space, *, epsilon, delta, sensitivity, _scale=None):
        super().__init__(epsilon=epsilon, delta=delta, sensitivity=sensitivity, delta_allows_zero=False)
        self.space = check_space(space)
        if not has_exact_riemannian_gaussian(self.space):
            raise InvalidParameterError(
                f"the Riemannian Gaussian mechanism has no exact sampler on {self.space!r}: it supports flat "
                "spaces, isotropic spaces (Sphere, Hyperbolic, KendallShape) and affine-invariant SPD. Use "
                "mechanism='laplace' there."
            )
        if _scale is not None:  # rescaled(): an audit mutant or chart copy, σ given
            self._sigma = float(_scale)
            self._rule = "σ set by rescaled() (an audit's mutant or chart copy), not calibrated here"
        elif self.space.is_flat:
            self._sigma = gaussian_sigma(self.epsilon, self.delta, self.sensitivity)
            self._rule = "smallest σ with Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) ≤ δ (Balle & Wang 2018, Thm 8)"
        else:
            self._sigma = triangle_sigma(self.space, self.epsilon, self.delta, self.sensitivity)
            self._rule = (
                "smallest σ (10% grid, then bisection) with the triangle bound E[(1 − e^{ε − U(ρ)})_+] ≤ δ, "
                "U(t) = (min(t + Δ, D)² − t²)/2σ², ρ from the exact radial law (docs/math.md §12)"
            )
        self._check_representable()
        # The sampler depends only on public quantities (space, σ): describe it once.
        self._sampler = self.distribution(self.space.reference_point()).sampler

    def _check_representable(self):
        """Refuse a σ whose law puts the release beyond what float64 represents (public: space, σ).
        On negatively curved spaces the radial density exp(−t²/2σ²)·sinh^(d−1)(√−κ t) peaks near
        (d − 1)√−κ σ²: at σ = 200 on H², far beyond the 300 that hyperboloid coordinates hold."""
        kappa = float(self.space.curvature_bounds[0])
        limit = float(getattr(self.space, "max_representable_radius", math.inf))
        if kappa >= 0.0 or not math.isfinite(limit):
            return
        reach = max(self.space.dim - 1, 1) * math.sqrt(-kappa) * self._sigma**2 + 6.0 * self._sigma
        if reach > limit:
            raise AssumptionError(
                f"the Riemannian Gaussian at σ = {self._sigma:.4g} on {self.space!r} puts its release about "
                f"{reach:.3g} from the statistic, beyond the {limit:g} that float64 represents there: raise epsilon "
                "or delta, shrink the public radius (it sets Δ), or use mechanism='wrapped-gaussian'."
            )

    def rescaled(self, factor: float, *, space=None, center=None) -> RiemannianGaussianMechanism:
        """The same law with ``factor`` times the sensitivity and ``factor`` times σ, on ``space``
        if given (the isometric chart of a flat space; ``center`` is accepted for the audit's
        common interface and unused): the audit's mutants and chart copies. The copy is not
        re-calibrated, so on a curved space its (ε, δ) claim holds only for ``factor = 1``.

        Examples
        --------
        >>> from geodp.manifolds import Sphere
        >>> mech = RiemannianGaussianMechanism(Sphere(2), epsilon=1.0, delta=1e-5, sensitivity=0.05)
        >>> round(mech.rescaled(0.5).scale / mech.scale, 12)
        0.5
        """
        return RiemannianGaussianMechanism(
            self.space if space is None else space,
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=self.sensitivity * factor,
            _scale=self._sigma * factor,
        )

    @property
    def scale(self) -> float:
        """σ of the law ``∝ exp(−ρ²/2σ²)``."""
        return self._sigma

    def delta_for(self, epsilon) -> float:
        """The δ this release satisfies at ``epsilon`` (exact on flat spaces, the sound triangle
        bound elsewhere).

        Examples
        --------
        >>> from geodp.manifolds import Hyperbolic
        >>> mech = RiemannianGaussianMechanism(Hyperbolic(2), epsilon=1.0, delta=1e-6, sensitivity=0.1)
        >>> mech.delta_for(1.0) <= 1e-6 < mech.delta_for(0.5)
        True
        """
        epsilon = check_epsilon(epsilon)
        if self.space.is_flat:
            return analytic_gaussian_delta(self._sigma, epsilon, self.sensitivity)
        return triangle_delta(self.space, self._sigma, epsilon, self.sensitivity)

    def distribution(self, value):
        """The output law for ``value``."""
        if self.space.is_flat:
            return TangentGaussian(self.space, value, self._sigma)
        return RiemannianGaussian(self.space, value, self._sigma)

    def noise_second_moment(self, dim: int) -> float | None:
        """``dim·σ²`` on a flat space (the Gaussian in the chart); ``None`` on a curved one (a
        Riemannian law, no additive noise)."""
        return super().noise_second_moment(dim) if self.space.is_flat else None

    def _chart(self, value=None):
        return self.space if self.space.is_flat else None

    @property
    def guarantee(self) -> Guarantee:
        """The (ε, δ)-DP record of one release."""
        flat = self.space.is_flat
        facts = (
            (
                "space is flat with a global isometric chart: the privacy loss is that of the Gaussian mechanism "
                "in R^d, μ-GDP with μ = Δ/σ",
            )
            if flat
            else (
                f"space is homogeneous: the normaliser does not depend on the centre ({self.space!r})",
                "privacy loss (ρ(x', y)² − ρ(x, y)²)/2σ² ≤ (min(ρ(x, y) + Δ, D)² − ρ(x, y)²)/2σ² (triangle "
                "inequality; D the diameter), integrated against the exact law of ρ(x, y)",
                f"delta_for({self.epsilon!r}) = {self.delta_for(self.epsilon):.6g} ≤ delta",
            )
        )
        return Guarantee(
            mechanism="Riemannian Gaussian (Jiang, Chang et al. 2023)",
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=self.sensitivity,
            metric=f"geodesic distance of {self.space!r}",
            scale=self._sigma,
            scale_rule=self._rule,
            space=repr(self.space),
            sampler=self._sampler,
            exact=True,
            gdp_mu=self.sensitivity / self._sigma if flat else None,
            assumptions=facts,
        )

    def __repr__(self) -> str:
        return (
            f"RiemannianGaussianMechanism({self.space!r}, epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"sensitivity={self.sensitivity!r})"
        )
