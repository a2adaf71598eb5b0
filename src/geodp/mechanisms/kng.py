"""The K-norm gradient mechanism for the Fréchet mean (S22; docs/math.md §4–§6)."""

from __future__ import annotations

import numpy as np

from geodp.calibration import laplace_scale
from geodp.distributions.ball_polar import has_exact_ball_proposal
from geodp.distributions.base import check_private_points
from geodp.distributions.kng import KNGDistribution, gradient_norm_bounds, kng_route
from geodp.distributions.laplace import ACCEPTANCE_FLOOR, RiemannianLaplace
from geodp.errors import AssumptionError, InvalidDataError, InvalidParameterError
from geodp.manifolds.base import check_space
from geodp.manifolds.euclidean import Euclidean
from geodp.mechanisms.base import Guarantee, Mechanism, combine_sum_parts, exact_weighted_sum_parts
from geodp.mechanisms.grid import GridLaplace
from geodp.sensitivity import check_radius
from geodp.validation import CHECK_SLACK

__all__ = ["KNGMechanism"]


class KNGMechanism(Mechanism):
    """Release the Fréchet mean of a dataset as a draw from ``∝ exp(−‖∇F_D(x)‖/σ)`` on the ball.

    ``σ = 2Δ/ε`` with Δ the gradient sensitivity (:func:`geodp.sensitivity.frechet_mean_sensitivity`
    with ``mechanism="kng"``): the normaliser depends on the data (docs/math.md §4, correcting S22
    §2.4.2). In flat spaces ``∇F_D(x) = x − x̄`` and the bound holds everywhere, so KNG is the
    untruncated Laplace at ``x̄`` with ``σ = Δ/ε``, even when a ball is given.

    Parameters
    ----------
    space : Manifold
    epsilon : float
    sensitivity : float
        Δ_K, the sensitivity of the gradient field.
    center, radius
        The public ball that holds the data and supports the law (``radius < r*``).
    sampler : {"auto", "exact", "mcmc"}, default "auto"
        See :class:`~geodp.distributions.KNGDistribution`; the choice uses public quantities only.
        ``"exact"`` raises :class:`~geodp.errors.AssumptionError` here, before any data is seen,
        where no exact sampler exists for (space, σ, ball).

    Privacy
    -------
    ε-DP, replace-one with n public, given that every record lies in the public ball (the models
    clip; this mechanism refuses data outside it). Exact rejection sampling unless the public
    acceptance bound is below the floor; the MH fallback is only approximately DP and says so.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> from geodp.sensitivity import frechet_mean_sensitivity
    >>> space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    >>> X = space.exp(north, space.random_tangent(north, size=100, rng=0) * 0.1)
    >>> delta = frechet_mean_sensitivity(space, 0.5, 100, mechanism="kng")
    >>> mech = KNGMechanism(space, epsilon=1.0, sensitivity=delta, center=north, radius=0.5)
    >>> round(mech.scale / delta, 6), mech.guarantee.exact
    (2.0, True)
    >>> mech.randomise(X, rng=1).shape
    (3,)
    """

    def __init__(self, space, *, epsilon, sensitivity, center, radius, sampler="auto"):
        super().__init__(epsilon=epsilon, delta=0.0, sensitivity=sensitivity, delta_allows_zero=True)
        self.space = check_space(space)
        if center is None or radius is None:
            raise InvalidParameterError("KNG needs the public ball: pass center= and radius=.")
        self.center = self.space.check_points(center, "center", batch_ndim=0)
        self.radius = check_radius(self.space, radius)
        self.sampler = sampler
        flat = self.space.is_flat
        self._scale = laplace_scale(self.epsilon, self.sensitivity, footpoint_invariant=flat)
        # The route (flat, cap, Laplace proposal, MH) and its bound depend only on (space, σ, ball).
        self._route, self.acceptance_bound = kng_route(self.space, self._scale, self.radius, sampler)
        self._use_mcmc = self._route == "mcmc"
        # The Laplace route is exact when its truncated proposal is; that sampler depends only on
        # (space, σ/h, ball), so probe it at the centre. The other routes draw their own proposals.
        self._proposal_sampler = None
        proposal_exact = False
        if self._route in ("laplace", "mcmc"):
            h = gradient_norm_bounds(self.space, self.radius)[0]
            proposal = RiemannianLaplace(
                self.space, self.center, self._scale / h, center=self.center, radius=self.radius
            )
            self._proposal_sampler, proposal_exact = proposal.sampler, proposal.exact
        exact_routes = ("flat", "cap", "envelope", "spd-tangent")
        self.exact = self._route in exact_routes or (self._route == "laplace" and proposal_exact)
        if sampler == "exact" and not self.exact:  # public: (space, σ, ball); before any release
            raise AssumptionError(
                f"no exact KNG sampler for {self.space!r} at scale {self._scale:.6g} in a ball of radius "
                f"{self.radius!r}: the proposal itself would be drawn by MH ({self._proposal_sampler}). "
                "Use sampler='auto' to accept an approximate (MH) release, or a smaller radius or a larger epsilon."
            )

    def rescaled(self, factor: float, *, space=None, center=None) -> KNGMechanism:
        """The same mechanism with ``factor`` times the sensitivity (so ``factor`` times the noise
        scale), on ``space`` with the public ball at ``center`` if given (the isometric chart of a
        flat space): the audit's mutants and chart copies.

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import Euclidean
        >>> mech = KNGMechanism(Euclidean(2), epsilon=1.0, sensitivity=0.3, center=np.zeros(2), radius=1.0)
        >>> round(mech.rescaled(2.0).scale / mech.scale, 12)
        2.0
        """
        return KNGMechanism(
            self.space if space is None else space,
            epsilon=self.epsilon,
            sensitivity=self.sensitivity * factor,
            center=self.center if center is None else center,
            radius=self.radius,
            sampler=self.sampler,
        )

    @property
    def scale(self) -> float:
        """σ (2Δ/ε; Δ/ε on flat spaces)."""
        return self._scale

    def distribution(self, data) -> KNGDistribution:
        """The KNG law of the dataset ``data`` (shape ``(n, *point_shape)``, inside the ball)."""
        return KNGDistribution(
            self.space, data, self._scale, center=self.center, radius=self.radius, sampler=self.sampler
        )

    def _chart(self, value=None):
        return self.space if self.space.is_flat else None

    def mean_coordinates(self, data) -> np.ndarray:
        """Flat spaces: the chart coordinates of the records' mean, computed in the chart (the
        exactly summed mean of the records' coordinates, never a matrix mean mapped back),
        after checking that the records are points in the ball. **Private**: never release it.

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import Euclidean
        >>> mech = KNGMechanism(Euclidean(1), epsilon=1.0, sensitivity=0.5, center=[0.0], radius=1.0)
        >>> mech.mean_coordinates(np.array([[0.5], [-0.25]]))
        array([0.125])
        """
        space = self.space
        if not space.is_flat:
            raise InvalidParameterError(f"mean_coordinates needs a flat space, got {space!r}.")
        data = check_private_points(space, data, "data", batch_ndim=1)  # messages without counts
        coords, _ = space._record_coordinates(data)
        if np.any(~(np.linalg.norm(coords - space.to_coordinates(self.center), axis=-1) <= self.radius * CHECK_SLACK)):
            raise InvalidDataError(
                f"data holds records outside the public ball B_{self.radius!r}(center): KNG's "
                "sensitivity needs the data in the ball; clip them first (space.clip_to_ball)."
            )
        n = coords.shape[0]
        return combine_sum_parts([exact_weighted_sum_parts(coords, np.full(n, 1.0 / n))])

    def _chart_law(self, space, coordinates) -> RiemannianLaplace:
        return RiemannianLaplace(Euclidean(space.dim), coordinates, self._scale)

    def randomise(self, value, rng=None, size=None):
        """Release the private mean of the dataset ``value`` (shape ``(n, *point_shape)``, inside
        the ball). On flat spaces the mean is taken in the chart and noised there
        (:meth:`randomise_coordinates`), then mapped to a point."""
        if self.space.is_flat:
            return self.space.from_coordinates(self.randomise_coordinates(value, rng=rng, size=size))
        return super().randomise(value, rng=rng, size=size)

    def randomise_coordinates(self, value, rng=None, size=None):
        """Flat spaces: the release in the chart, from the mean of the records' chart
        coordinates (:meth:`mean_coordinates`); secure mode on the public grid."""
        if self.space.is_flat:
            return self.randomise_chart(self.mean_coordinates(value), rng=rng, size=size)
        return super().randomise_coordinates(value, rng=rng, size=size)

    def _grid_noise(self, dim: int) -> GridLaplace:
        return GridLaplace(self.epsilon, self.sensitivity, dim)

    @property
    def guarantee(self) -> Guarantee:
        """The ε-DP record of one release."""
        flat = self.space.is_flat
        if flat:
            rule = "σ = Δ/ε: flat space, ∇F_D(x) = x − x̄ everywhere, so KNG is the untruncated Laplace at the mean"
            sampler = "exact: l2-Laplace at the mean in the isometric chart"
        else:
            rule = "σ = 2Δ/ε: the KNG normaliser depends on the data (docs/math.md §4; S22 §2.4.2 used Δ/ε)"
            if self._use_mcmc:
                sampler = (
                    f"MH restricted to the ball (public acceptance bound {self.acceptance_bound:.1e} below "
                    f"{ACCEPTANCE_FLOOR}, or requested)"
                )
            elif self._route == "envelope":
                sampler = (
                    "exact rejection from the radial law at the mean whose exponent is the data's own lower envelope "
                    "of the gradient norm (docs/math.md §5), directions uniform; the work, not the output law, "
                    "depends on the data (no useful worst-case acceptance bound)"
                )
            elif self._route == "spd-tangent":
                sampler = (
                    "exact rejection from an l2-Laplace in the normal coordinates at the centre truncated to the "
                    "ball, raced with the Laplace at the mean (docs/math.md §5); the work, not the output law, "
                    "depends on the data (no useful worst-case acceptance bound)"
                )
            elif self._route == "cap":
                directions = (
                    "the exact in-ball directions"
                    if has_exact_ball_proposal(self.space, self.radius)
                    else "the direction caps of the largest curvature (draws outside the ball rejected)"
                )
                bound = (
                    f"public acceptance bound {self.acceptance_bound:.3g}"
                    if self.acceptance_bound > 0
                    else "rate: the data's chord of its envelope (docs/math.md §5); the work, not the output law, "
                    "depends on the data"
                )
                sampler = (
                    f"rejection from the Laplace with scale σ/h at the mean, drawn in polar coordinates from "
                    f"{directions}; {bound}"
                )
            else:
                sampler = (
                    f"rejection from the Laplace with scale σ/h, truncated to the ball; public acceptance bound "
                    f"{self.acceptance_bound:.3g}; proposal: {self._proposal_sampler}"
                )
        assumptions = (
            f"records lie in the public ball of radius {self.radius!r} (checked; the models clip)",
            "Assumption 1: radius < r*, so ‖∇F_D(x)‖ ≥ h·ρ(x, x̄) on the ball (S22 Lemma 1; the data's own "
            "envelope, docs/math.md §5)",
        )
        if not self.exact:
            assumptions += ("MCMC sampler: DP holds only approximately",)
        return Guarantee(
            mechanism="K-norm gradient (S22)",
            epsilon=self.epsilon,
            delta=0.0,
            sensitivity=self.sensitivity,
            metric=f"norm of the Fréchet gradient field on {self.space!r}",
            scale=self._scale,
            scale_rule=rule,
            space=repr(self.space),
            sampler=sampler,
            exact=self.exact,
            support="the whole space (flat)"
            if flat
            else f"geodesic ball of radius {self.radius!r} around the public center",
            assumptions=assumptions,
        )
