"""The Riemannian Laplace mechanism (R21 Def. 3, Thm 1, Thm 3)."""

from __future__ import annotations

from geodp.calibration import laplace_scale
from geodp.distributions.laplace import RiemannianLaplace, laplace_normalisability
from geodp.errors import AssumptionError, InvalidParameterError
from geodp.manifolds.base import check_space
from geodp.manifolds.euclidean import Euclidean
from geodp.mechanisms.base import Guarantee, Mechanism
from geodp.mechanisms.grid import GridLaplace
from geodp.validation import check_positive

__all__ = ["LaplaceMechanism"]


class LaplaceMechanism(Mechanism):
    """Release a point ``η`` as a draw from ``∝ exp(−ρ(η, x)/σ)``: ε-DP when Δ bounds the
    geodesic sensitivity of ``η``.

    The scale follows docs/math.md §4 and the reason is written into :attr:`guarantee`:
    ``σ = Δ/ε`` only when the normaliser cannot depend on the footpoint — the space is
    homogeneous, the law is normalisable at that scale and not truncated. Otherwise the law is
    truncated to the public ball ``B_radius(center)`` (R21 Thm 3) with ``σ = 2Δ/ε``; without a
    ball that is impossible and the mechanism refuses.

    Parameters
    ----------
    space : Manifold
        Any geodp space: Euclidean, Sphere, Hyperbolic, KendallShape, SPD (either metric).
    epsilon : float
    sensitivity : float
        Geodesic sensitivity Δ of the released summary.
    center, radius : optional
        The public ball the value lies in; needed for truncation.
    truncate : bool, optional
        ``None`` (default): truncate only when required (non-normalisable law at ``Δ/ε`` or a
        non-homogeneous space). ``True``: always truncate (R21 Thm 3, ``2Δ/ε``).

    Privacy
    -------
    ε-DP under the adjacency for which Δ holds (replace-one with n public for the Fréchet-mean
    bounds of :mod:`geodp.sensitivity`). Exact samplers by default; when a sampler has to fall
    back to MCMC, ``guarantee.exact`` is False and DP then holds only approximately.

    Raises
    ------
    AssumptionError
        The law is not normalisable at ``Δ/ε`` and no ball was given to truncate to.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Hyperbolic, Sphere
    >>> mech = LaplaceMechanism(Sphere(2), epsilon=1.0, sensitivity=0.1)
    >>> mech.scale, mech.guarantee.exact
    (0.1, True)
    >>> mech.randomise(np.array([0.0, 0.0, 1.0]), rng=0).shape
    (3,)
    >>> mech.randomise(np.array([0.0, 0.0, 1.0]), rng="secure").shape  # secure generator
    (3,)
    >>> origin = np.array([1.0, 0.0, 0.0, 0.0])
    >>> LaplaceMechanism(Hyperbolic(3), epsilon=1.0, sensitivity=0.6, center=origin, radius=1.0).scale
    1.2
    """

    def __init__(self, space, *, epsilon, sensitivity, center=None, radius=None, truncate=None):
        super().__init__(epsilon=epsilon, delta=0.0, sensitivity=sensitivity, delta_allows_zero=True)
        self.space = check_space(space)
        if truncate not in (None, True, False):
            raise InvalidParameterError(f"truncate must be None, True or False, got {truncate!r}.")
        has_ball = center is not None and radius is not None
        if (center is None) != (radius is None):
            raise InvalidParameterError("give both center and radius (the public ball), or neither.")
        if has_ball:
            self.center = self.space.check_points(center, "center", batch_ndim=0)
            self.radius = check_positive(radius, "radius")
        base_scale = laplace_scale(self.epsilon, self.sensitivity, footpoint_invariant=True)
        self.normalisable, why = laplace_normalisability(self.space, base_scale)
        reasons = []
        if truncate is None:
            truncate = not (self.normalisable and self.space.is_homogeneous)
            if not self.normalisable:
                reasons.append(f"not normalisable at σ = Δ/ε ({why})")
            if not self.space.is_homogeneous:
                reasons.append(f"{self.space!r} is not declared homogeneous")
        elif truncate:
            reasons.append("truncation requested")
        if truncate and not has_ball:
            raise AssumptionError(
                f"the Laplace mechanism on {self.space!r} must be truncated ({'; '.join(reasons)}), "
                "which needs the public ball: pass center= and radius=."
            )
        self.truncated = bool(truncate)
        self._scale = laplace_scale(self.epsilon, self.sensitivity, footpoint_invariant=not self.truncated)
        if self.truncated:
            self._scale_rule = f"σ = 2Δ/ε: truncated to the public ball (R21 Thm 3) because {'; '.join(reasons)}"
            self._facts = (
                "law truncated to the public ball: normalisable; the normaliser depends on the footpoint, paid by "
                "the factor 2",
                "released value (the footpoint) checked to lie in the ball",
            )
        else:
            self._scale_rule = "σ = Δ/ε: homogeneous space, untruncated, normalisable law (R21 Thm 1)"
            self._facts = (
                f"space is homogeneous: the Laplace normaliser does not depend on the footpoint ({self.space!r})",
                f"law is normalisable: {why}",
                "law is not truncated",
            )
        # The sampler depends only on public quantities (space, σ, ball): describe it once.
        probe = self.center if has_ball else self.space.random_point(rng=0)
        self._probe = self.distribution(probe)

    def rescaled(self, factor: float, *, space=None, center=None) -> LaplaceMechanism:
        """The same mechanism with ``factor`` times the sensitivity (so ``factor`` times the noise
        scale), on ``space`` with the public ball at ``center`` if given (the isometric chart of a
        flat space): the audit's mutants and chart copies.

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> LaplaceMechanism(Euclidean(2), epsilon=1.0, sensitivity=0.3).rescaled(0.5).scale
        0.15
        """
        ball = {}
        if self.truncated:
            ball = {"center": self.center if center is None else center, "radius": self.radius}
        return LaplaceMechanism(
            self.space if space is None else space,
            epsilon=self.epsilon,
            sensitivity=self.sensitivity * factor,
            truncate=self.truncated,
            **ball,
        )

    @property
    def scale(self) -> float:
        """σ (Δ/ε, or 2Δ/ε when truncated)."""
        return self._scale

    def noise_second_moment(self, dim: int) -> float | None:
        """``dim·(dim + 1)·σ²`` on a flat space untruncated (the ℓ2 Laplace ``∝ exp(−‖z‖/σ)`` in
        the chart: ``‖Z‖ ~ Gamma(dim, σ)``); ``None`` otherwise (a Riemannian law).

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> LaplaceMechanism(Euclidean(3), epsilon=1.0, sensitivity=0.5).noise_second_moment(3)
        3.0
        """
        return dim * (dim + 1) * self._scale**2 if self.space.is_flat and not self.truncated else None

    def distribution(self, value) -> RiemannianLaplace:
        """The output law for ``value`` (a point; inside the ball when truncated)."""
        ball = {"center": self.center, "radius": self.radius} if self.truncated else {}
        return RiemannianLaplace(self.space, value, self._scale, **ball)

    def _chart(self, value=None):
        # The exact grid release is untruncated: a truncation (requested on a flat space) keeps
        # the floating-point sampler.
        return self.space if self.space.is_flat and not self.truncated else None

    def _grid_applies(self) -> bool:
        return not self.truncated

    def _chart_law(self, space, coordinates) -> RiemannianLaplace:
        ball = {}
        if self.truncated:
            ball = {"center": space.to_coordinates(self.center), "radius": self.radius}
        return RiemannianLaplace(Euclidean(space.dim), coordinates, self._scale, **ball)

    def _grid_noise(self, dim: int) -> GridLaplace:
        return GridLaplace(self.epsilon, self.sensitivity, dim)

    @property
    def guarantee(self) -> Guarantee:
        """The ε-DP record of one release."""
        support = (
            f"geodesic ball of radius {self.radius!r} around the public center" if self.truncated else "the whole space"
        )
        return Guarantee(
            mechanism="Riemannian Laplace (R21 Def. 3)",
            epsilon=self.epsilon,
            delta=0.0,
            sensitivity=self.sensitivity,
            metric=f"geodesic distance of {self.space!r}",
            scale=self._scale,
            scale_rule=self._scale_rule,
            space=repr(self.space),
            sampler=self._probe.sampler,
            exact=self._probe.exact,
            support=support,
            assumptions=self._facts
            + (
                ()
                if self._probe.exact
                else ("MCMC sampler: DP holds only approximately (the chain has not exactly converged)",)
            ),
        )
