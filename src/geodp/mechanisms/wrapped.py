"""Exponential-wrapped (EW) mechanisms (Jiang, Chang, Ding, Kong & Jiang, ICLR 2026): release
``Exp_{p0}(Log_{p0}(x̄) + Z)`` with ``p0`` the public centre and ``Z`` Laplace or Gaussian noise
drawn exactly in ``T_{p0}M`` (docs/math.md §6.1)."""

from __future__ import annotations

import numpy as np

from geodp.calibration import gaussian_sigma, laplace_scale
from geodp.distributions.base import check_private_points
from geodp.distributions.laplace import RiemannianLaplace
from geodp.distributions.wrapped import WrappedLaw
from geodp.errors import InvalidDataError, InvalidParameterError
from geodp.manifolds.base import check_space
from geodp.manifolds.euclidean import Euclidean
from geodp.mechanisms.base import Guarantee, Mechanism
from geodp.mechanisms.grid import GaussianChartNoise, GridLaplace
from geodp.sensitivity import log_lipschitz_constant
from geodp.validation import check_positive

__all__ = ["WrappedGaussianMechanism", "WrappedLaplaceMechanism"]

_CALIBRATIONS = ("analytic", "classical")
_SOURCE = "exponential-wrapped, Jiang et al. 2026"


class _WrappedMechanism(Mechanism):
    """What both wrapped mechanisms share: the public ball, ``L`` and the tangent sensitivity,
    the value check, and the flat-space chart (where the wrapped law is the chart law)."""

    _noise: str

    def __init__(self, space, *, epsilon, delta, sensitivity, center, radius, delta_allows_zero):
        super().__init__(epsilon=epsilon, delta=delta, sensitivity=sensitivity, delta_allows_zero=delta_allows_zero)
        self.space = check_space(space)
        self.center = self.space.check_points(center, "center", batch_ndim=0)
        self.radius = check_positive(radius, "radius")
        self.lipschitz, self._lipschitz_reason = log_lipschitz_constant(self.space, self.radius)

    @property
    def tangent_sensitivity(self) -> float:
        """``L·Δ``: the sensitivity of ``Log_{p0}(value)`` in the norm of ``T_{p0}M``."""
        return self.lipschitz * self.sensitivity

    def _ball(self, space, center):
        return dict(space=self.space if space is None else space, center=self.center if center is None else center)

    def _checked_value(self, value):
        """The value, checked to lie in the public ball (where ``L`` holds). A value a hair
        outside (rounding) is pulled onto the boundary; farther out it is refused, with a
        message that carries no number computed from it."""
        value = check_private_points(self.space, value, "value", batch_ndim=0)
        excess = float(self.space.unchecked.dist(self.center, value)) - self.radius
        if not excess <= 1e-9 * max(1.0, self.radius):
            raise InvalidDataError(
                f"value lies outside the public ball B_{self.radius!r}(center), where the Lipschitz bound of Log "
                "at the centre (and so the sensitivity) does not hold."
            )
        if excess > 0:
            value = self.space.unchecked.clip_to_ball(value[None], self.center, self.radius, last_resort="keep")[0][0]
        return value

    def distribution(self, value) -> WrappedLaw:
        """The output law for ``value`` (a point of the public ball)."""
        return WrappedLaw(self.space, self.center, self._checked_value(value), self._noise, self.scale)

    def sample_tangent(self, value, rng=None, size=None) -> np.ndarray:
        """The release as the tangent vector ``Log_{p0}(value) + Z`` at the centre, before
        ``Exp_{p0}`` (floating-point sampler; ``size`` copies each spend the budget again).

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import Hyperbolic
        >>> origin = np.array([1.0, 0.0, 0.0])
        >>> mech = WrappedLaplaceMechanism(Hyperbolic(2), epsilon=1.0, sensitivity=0.1, center=origin, radius=1.0)
        >>> mech.sample_tangent(origin, rng=0).shape
        (3,)
        """
        return self.distribution(value).sample_tangent(size, rng)

    # ---- flat spaces: the wrapped law is the chart law (Exp_{p0} and Log_{p0} are the chart's
    # affine maps), so secure mode releases through the exact grid construction
    def _chart(self, value=None):
        return self.space if self.space.is_flat else None

    def _flat_space(self, dim: int):
        return self.space if self.space.is_flat and dim == self.space.dim else None

    def _describe(self, mechanism, scale_rule, gdp_mu=None, extra=()) -> Guarantee:
        return Guarantee(
            mechanism=f"{mechanism} ({_SOURCE}) at the public centre",
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=self.tangent_sensitivity,
            metric=(
                f"norm in the tangent space at the centre: L·Δ with L = {self.lipschitz!r} and Δ = "
                f"{self.sensitivity!r} in the geodesic distance of {self.space!r}"
            ),
            scale=self.scale,
            scale_rule=scale_rule,
            space=repr(self.space),
            sampler=WrappedLaw(self.space, self.center, self.center, self._noise, self.scale).sampler,
            exact=True,
            gdp_mu=gdp_mu,
            assumptions=(
                self._lipschitz_reason,
                (
                    "flat space: Log at the centre is an isometry onto the chart, so L = 1 holds on the whole space "
                    "and the wrapped law is the chart law"
                    if self.space.is_flat
                    else f"the released value lies in the public ball B_{self.radius!r}(center) (checked; the "
                    "wrapped release is post-processing of a Euclidean mechanism on Log at the centre)"
                ),
                *extra,
            ),
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.space!r}, epsilon={self.epsilon!r}, delta={self.delta!r}, " + (
            f"sensitivity={self.sensitivity!r}, radius={self.radius!r})"
        )


class WrappedLaplaceMechanism(_WrappedMechanism):
    """Release ``Exp_{p0}(Log_{p0}(x) + Z)``, ``Z`` the ℓ2 Laplace ``∝ exp(−‖z‖/σ)`` in
    ``T_{p0}M``: ε-DP at ``σ = L·Δ/ε``.

    ``p0`` is the public centre of the data ball ``B_r(p0)``. ``Log_{p0}`` is ``L``-Lipschitz on
    the ball (:func:`geodp.sensitivity.log_lipschitz_constant`: 1 where the curvature is ≤ 0,
    ``√K r/sin(√K r)`` under curvature ≤ K > 0), so ``Log_{p0}(x)`` has sensitivity ``L·Δ`` in
    ``T_{p0}M ≅ R^dim`` and the K-norm Laplace there is ε-DP (its loss is at most
    ``‖u − u'‖/σ``); ``Exp_{p0}`` is post-processing.

    Parameters
    ----------
    space : Manifold
        Euclidean, Sphere, Hyperbolic, KendallShape, SPD (either metric), or any space with
        ``random_tangent``, ``exp``, ``log`` and curvature bounds.
    epsilon : float
    sensitivity : float
        Geodesic sensitivity Δ of the released value.
    center : array_like, shape space.point_shape
        Public centre ``p0`` of the data ball (never computed from the data).
    radius : float
        Public radius of the ball the value lies in; below ``½ min(inj, π/√κ_max)``.

    Privacy
    -------
    ε-DP under the adjacency for which Δ holds, for values in ``B_radius(center)`` (checked;
    outside it the release is refused). Sampled exactly. On flat spaces this is the ℓ2 Laplace
    in the chart, and secure mode uses the exact grid construction; on curved spaces secure mode
    draws from the secure generator but is not floating-point safe.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> north = np.array([0.0, 0.0, 1.0])
    >>> mech = WrappedLaplaceMechanism(Sphere(2), epsilon=1.0, sensitivity=0.1, center=north, radius=0.5)
    >>> round(mech.lipschitz, 6), round(mech.scale, 6)  # L = 0.5/sin 0.5; σ = L·Δ/ε
    (1.042915, 0.104291)
    >>> mech.randomise(north, rng=0).shape, mech.guarantee.delta
    ((3,), 0.0)
    >>> mech.guarantee_for("secure").floating_point_safe
    False
    """

    _noise = "laplace"

    def __init__(self, space, *, epsilon, sensitivity, center, radius):
        super().__init__(
            space,
            epsilon=epsilon,
            delta=0.0,
            sensitivity=sensitivity,
            center=center,
            radius=radius,
            delta_allows_zero=True,
        )
        self._scale = laplace_scale(self.epsilon, self.tangent_sensitivity, footpoint_invariant=True)

    def rescaled(self, factor: float, *, space=None, center=None) -> WrappedLaplaceMechanism:
        """The same mechanism with ``factor`` times the sensitivity (so ``factor`` times the
        noise scale), on ``space`` about ``center`` if given: the audit's mutants and chart copies.

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> mech = WrappedLaplaceMechanism(Euclidean(2), epsilon=1.0, sensitivity=0.3, center=[0.0, 0.0], radius=1.0)
        >>> round(mech.rescaled(0.5).scale, 12)
        0.15
        """
        return WrappedLaplaceMechanism(
            epsilon=self.epsilon, sensitivity=self.sensitivity * factor, radius=self.radius, **self._ball(space, center)
        )

    @property
    def scale(self) -> float:
        """σ = L·Δ/ε, the scale of the ℓ2 Laplace in the tangent space."""
        return self._scale

    def noise_second_moment(self, dim: int) -> float:
        """``dim·(dim + 1)·σ²``: ``‖Z‖ ~ Gamma(dim, σ)`` for the ℓ2 Laplace in ``T_{p0}M``."""
        return dim * (dim + 1) * self._scale**2

    def _chart_law(self, space, coordinates) -> RiemannianLaplace:
        return RiemannianLaplace(Euclidean(space.dim), coordinates, self._scale)

    def _grid_noise(self, dim: int) -> GridLaplace:
        return GridLaplace(self.epsilon, self.tangent_sensitivity, dim)

    @property
    def guarantee(self) -> Guarantee:
        """The ε-DP record of one release."""
        return self._describe(
            "wrapped ℓ2 Laplace",
            "σ = L·Δ/ε: the K-norm (ℓ2) Laplace in the tangent space at the centre is ε-DP for a "
            "tangent sensitivity L·Δ (its loss is at most ‖u − u'‖/σ)",
        )


class WrappedGaussianMechanism(GaussianChartNoise, _WrappedMechanism):
    """Release ``Exp_{p0}(Log_{p0}(x) + Z)``, ``Z ~ N(0, σ² I)`` in ``T_{p0}M``: (ε, δ)-DP, and
    μ-GDP with ``μ = L·Δ/σ``.

    The Gaussian mechanism on ``u = Log_{p0}(x)``, whose sensitivity in ``T_{p0}M`` is ``L·Δ``
    (see :class:`WrappedLaplaceMechanism`), followed by ``Exp_{p0}`` (post-processing). Its
    privacy curve is that of the Gaussian mechanism with noise multiplier ``σ/(L·Δ)``: μ-GDP,
    ``μ²/2``-zCDP, and ``(α, αμ²/2)``-RDP for every α > 1.

    Parameters
    ----------
    space : Manifold
    epsilon : float
    delta : float
        In (0, 1).
    sensitivity : float
        Geodesic sensitivity Δ of the released value.
    center : array_like, shape space.point_shape
        Public centre ``p0`` of the data ball.
    radius : float
        Public radius of the ball the value lies in.
    calibration : {"analytic", "classical"}, default "analytic"
        Balle & Wang (2018) analytic calibration, or the classical one (ε < 1 only), applied to
        the tangent sensitivity ``L·Δ`` (:func:`geodp.calibration.gaussian_sigma`).

    Privacy
    -------
    (ε, δ)-DP (and μ-GDP) under the adjacency for which Δ holds, for values in the public ball
    (checked). Sampled exactly; secure mode as for :class:`WrappedLaplaceMechanism`.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Hyperbolic
    >>> origin = np.array([1.0, 0.0, 0.0])
    >>> mech = WrappedGaussianMechanism(Hyperbolic(2), epsilon=0.5, delta=1e-6, sensitivity=1.0,
    ...                                 center=origin, radius=2.0)
    >>> round(mech.scale, 3), round(mech.gdp_mu, 4), round(mech.zcdp_rho, 5)  # L = 1 here
    (8.058, 0.1241, 0.0077)
    >>> mech.rdp_epsilon([2.0, 10.0]).round(4).tolist()
    [0.0154, 0.077]
    >>> mech.randomise(origin, rng=0).shape
    (3,)
    """

    _noise = "gaussian"

    def __init__(self, space, *, epsilon, delta, sensitivity, center, radius, calibration="analytic"):
        super().__init__(
            space,
            epsilon=epsilon,
            delta=delta,
            sensitivity=sensitivity,
            center=center,
            radius=radius,
            delta_allows_zero=False,
        )
        if calibration not in _CALIBRATIONS:
            raise InvalidParameterError(f"calibration must be one of {_CALIBRATIONS}, got {calibration!r}.")
        self.calibration = calibration
        self._sigma = gaussian_sigma(self.epsilon, self.delta, self.tangent_sensitivity, method=calibration)

    def rescaled(self, factor: float, *, space=None, center=None) -> WrappedGaussianMechanism:
        """The same mechanism with ``factor`` times the sensitivity (so ``factor`` times the
        noise scale), on ``space`` about ``center`` if given: the audit's mutants and chart copies.

        Examples
        --------
        >>> from geodp.manifolds import Euclidean
        >>> mech = WrappedGaussianMechanism(Euclidean(2), epsilon=1.0, delta=1e-5, sensitivity=0.3,
        ...                                 center=[0.0, 0.0], radius=1.0)
        >>> round(mech.rescaled(0.5).scale / mech.scale, 12)
        0.5
        """
        return WrappedGaussianMechanism(
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity=self.sensitivity * factor,
            radius=self.radius,
            calibration=self.calibration,
            **self._ball(space, center),
        )

    @property
    def scale(self) -> float:
        """σ, the standard deviation per coordinate of ``T_{p0}M`` (orthonormal basis)."""
        return self._sigma

    @property
    def gdp_mu(self) -> float:
        """μ = L·Δ/σ: the release is μ-GDP (Dong, Roth & Su 2022)."""
        return self.tangent_sensitivity / self._sigma

    @property
    def zcdp_rho(self) -> float:
        """ρ = μ²/2: the release is ρ-zCDP (Bun & Steinke 2016)."""
        return 0.5 * self.gdp_mu**2

    def rdp_epsilon(self, alpha) -> np.ndarray:
        """The Rényi-DP curve ``ε(α) = α μ²/2`` (Mironov 2017), for orders ``α > 1``.

        Parameters
        ----------
        alpha : float or array_like
            Orders, each > 1.

        Returns
        -------
        numpy.ndarray, the shape of ``alpha``

        Raises
        ------
        InvalidParameterError
            An order is not a finite number > 1.
        """
        orders = np.asarray(alpha, dtype=float)
        if not np.all(np.isfinite(orders) & (orders > 1.0)):
            raise InvalidParameterError(f"alpha must hold finite orders > 1, got {alpha!r}.")
        return orders * self.zcdp_rho

    @property
    def _chart_sensitivity(self) -> float:
        return self.tangent_sensitivity

    @property
    def guarantee(self) -> Guarantee:
        """The (ε, δ)-DP record of one release, with its GDP μ."""
        rule = (
            "smallest σ with Φ(Δ_T/2σ − εσ/Δ_T) − e^ε Φ(−Δ_T/2σ − εσ/Δ_T) ≤ δ (Balle & Wang 2018, Thm 8), rounded up"
            if self.calibration == "analytic"
            else "σ = Δ_T √(2 ln(1.25/δ)) / ε (classical, ε < 1)"
        )
        return self._describe(
            "wrapped Gaussian",
            f"{rule}, Δ_T = L·Δ the tangent sensitivity; μ-GDP with μ = Δ_T/σ = {self.gdp_mu!r}",
            gdp_mu=self.gdp_mu,
            extra=(
                f"{self.calibration} calibration preconditions hold (epsilon > 0, 0 < delta < 1"
                + (", epsilon < 1)" if self.calibration == "classical" else ")"),
            ),
        )
