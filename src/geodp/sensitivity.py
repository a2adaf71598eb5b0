"""Sensitivity bounds, each with its reference and assumptions (docs/math.md §3).

Adjacency is replace-one with ``n`` public; the data domain is a public geodesic ball
``B_r(m0)``; sensitivities are in the geodesic distance of the space.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from geodp.errors import AssumptionError, InvalidParameterError, as_published_only
from geodp.manifolds.base import check_space
from geodp.validation import check_positive, check_sample_size

# Smallest public ball radius: distances square the coordinates, and below ~1e-154 the squares
# underflow (an audit's radius 5e-324 was refused only as "scale must be > 0").
MIN_RADIUS = 1e-150

__all__ = [
    "curvature_factor",
    "max_radius",
    "check_radius",
    "frechet_mean_sensitivity",
    "log_lipschitz_constant",
    "extrinsic_radius",
    "extrinsic_mean_sensitivity",
    "RegressionSensitivity",
    "geodesic_regression_sensitivity",
    "k25_published_sensitivity",
]

_MEAN_MECHANISMS = ("laplace", "tangent-gaussian", "kng", "wrapped-laplace", "wrapped-gaussian", "riemannian-gaussian")


def curvature_factor(radius, kappa) -> float:
    """R21 Thm 2's curvature factor ``h(r, κ) = 2r√κ · cot(2r√κ)`` for κ > 0, else 1.

    Parameters
    ----------
    radius : float
        Radius ``r`` of the data ball, > 0.
    kappa : float
        Upper bound κ_max on the sectional curvature.

    Raises
    ------
    AssumptionError
        If ``2r√κ ≥ π/2`` (then h ≤ 0 and no bound holds).

    Examples
    --------
    >>> curvature_factor(0.5, -1.0)
    1.0
    >>> round(curvature_factor(0.5, 1.0), 6)
    0.642093
    """
    radius = check_positive(radius, "radius")
    kappa = float(kappa)
    if kappa <= 0:
        return 1.0
    a = 2.0 * radius * math.sqrt(kappa)
    if a >= math.pi / 2:
        raise AssumptionError(
            f"radius={radius!r} gives 2r·sqrt(kappa)={a:.6g} >= pi/2 for kappa={kappa!r}: the "
            f"curvature factor is not positive. Use radius < {math.pi / (4 * math.sqrt(kappa)):.6g}."
        )
    return a / math.tan(a)


def max_radius(space) -> float:
    """Largest admissible data-ball radius r* of Assumption 1 (R21): the radius must be < r*.

    ``r* = ½ min(inj, π/(2√κ_max))``, the second term absent when κ_max ≤ 0: ``½ inj`` there,
    which is ∞ on the Hadamard spaces of geodp (Euclidean, hyperbolic, SPD) but finite on a
    non-positively curved space with short closed geodesics (a circle, a flat torus, a wrapped
    geomstats space), where a larger ball would not keep the mean unique (a cold trial measured a
    replaced record moving a circle's mean 50 times the claimed Δ at r = 3 with r* taken as ∞).

    Examples
    --------
    >>> from geodp.manifolds import SPD
    >>> max_radius(SPD(3))
    inf
    """
    space = check_space(space)
    kappa_max = space.curvature_bounds[1]
    if kappa_max <= 0:
        return 0.5 * space.injectivity_radius
    return 0.5 * min(space.injectivity_radius, math.pi / (2.0 * math.sqrt(kappa_max)))


def check_radius(space, radius) -> float:
    """Validate a data-ball radius against Assumption 1; return it as a float.

    Raises
    ------
    InvalidParameterError
        ``radius`` ≤ 0 or not finite.
    AssumptionError
        ``radius ≥ r*`` (the message names r*), or beyond ``space.max_representable_radius``.

    Notes
    -----
    On SPD, radii up to 200 are accepted, but a record whose log-eigenvalues spread beyond about
    ``log(1/(k·eps))`` (≈ 35 for k = 3; condition number ``1/(k·eps)``) is singular up to rounding
    in a general basis: float64 does not determine its smallest eigenvalues, so it is an invalid
    record (refused, or replaced by the centre with ``on_invalid="center"``), decided from that
    record alone. Balls much larger than ~18 around the identity therefore hold such records
    near their edge; that costs utility, not privacy.

    Examples
    --------
    >>> from geodp.manifolds import Euclidean
    >>> check_radius(Euclidean(2), 3)
    3.0
    """
    radius = check_positive(radius, "radius")
    if radius < MIN_RADIUS:
        raise AssumptionError(
            f"radius={radius!r} is below {MIN_RADIUS:g}: squared distances that small underflow in float64. "
            "Express the data in larger units."
        )
    if radius > space.max_representable_radius:
        raise AssumptionError(
            f"radius={radius!r} exceeds {space.max_representable_radius!r}, beyond which float64 "
            f"cannot represent the points of {space!r} (their coordinates grow like e^r). "
            "Choose a smaller public ball."
        )
    r_star = max_radius(space)
    if radius >= r_star:
        raise AssumptionError(
            f"radius={radius!r} must be < r*={r_star!r} for {space!r} (R21 Assumption 1: "
            "r < ½ min(inj, π/(2√κ_max))). Choose a smaller public ball."
        )
    return radius


def frechet_mean_sensitivity(space, radius, n, mechanism: str = "laplace") -> float:
    """Replace-one sensitivity of the Fréchet mean of ``n`` records in a ball of radius ``r``.

    * ``"laplace"`` (and ``"tangent-gaussian"``, ``"riemannian-gaussian"``, ``"wrapped-laplace"``,
      ``"wrapped-gaussian"``, which need the same distance bound; the wrapped ones multiply it by
      :func:`log_lipschitz_constant`):
      ``Δ = 2r(2 − h)/(n h)`` with ``h = curvature_factor(r, κ_max)`` (R21 Thm 2). Flat and
      non-positively curved spaces have h = 1, i.e. ``Δ = 2r/n`` (U23 Thm 3 for log-Euclidean SPD).
    * ``"kng"``: sensitivity of the gradient field, ``Δ = 2r(2 − h)/n`` (S22 Lemma 1).

    Assumptions checked: ``0 < r < r*`` (Assumption 1), ``n ≥ 1``.

    Examples
    --------
    >>> from geodp.manifolds import SPD
    >>> frechet_mean_sensitivity(SPD(3, metric="log-euclidean"), radius=1.0, n=100)
    0.02
    """
    space = check_space(space)
    radius = check_radius(space, radius)
    n = check_sample_size(n)
    if mechanism not in _MEAN_MECHANISMS:
        raise InvalidParameterError(f"mechanism must be one of {_MEAN_MECHANISMS}, got {mechanism!r}.")
    h = curvature_factor(radius, space.curvature_bounds[1])
    bound = 2.0 * radius * (2.0 - h) / n
    return bound if mechanism == "kng" else bound / h


def log_lipschitz_constant(space, radius) -> tuple[float, str]:
    """Lipschitz constant ``L`` of ``Log_{p0}`` on the public ball ``B_r(p0)``, and why it holds.

    The wrapped mechanisms noise ``Log_{p0}(x̄)`` in ``T_{p0}M``; its sensitivity there is at most
    ``L·Δ``, Δ the geodesic sensitivity of ``x̄`` (docs/math.md §6.1, by Rauch comparison):

    * ``L = 1`` when the sectional curvature is ≤ 0 (Euclidean, hyperbolic, SPD under either
      metric): ``Exp_{p0}`` does not shrink lengths;
    * ``L = √K·r / sin(√K·r)`` when it is ≤ ``K = κ_max > 0`` (unit sphere: ``r/sin r``;
      Kendall shapes, ``K = 4``: ``2r/sin 2r``): tangential lengths shrink at most by
      ``sin(√K t)/(√K t)`` at distance ``t ≤ r``.

    The proof integrates along the minimising geodesic between two points of the ball, so the
    ball must be strongly convex: ``r < ½ min(inj, π/√κ_max)`` (the bound fails beyond: on the
    unit sphere at ``r > π/2`` two close points near the boundary are joined outside the ball).
    The constant depends on the radius and the curvature bound only, not on ``p0``.

    Parameters
    ----------
    space : Manifold
    radius : float
        Radius of the public ball, > 0.

    Returns
    -------
    (float, str)
        ``L`` and the reason, for privacy reports.

    Raises
    ------
    AssumptionError
        ``radius`` is not below the convexity radius ``½ min(inj, π/√κ_max)``.

    Examples
    --------
    >>> from geodp.manifolds import Hyperbolic, KendallShape, Sphere
    >>> log_lipschitz_constant(Hyperbolic(2), 5.0)[0]
    1.0
    >>> round(log_lipschitz_constant(Sphere(2), 0.5)[0], 6)  # 0.5 / sin 0.5
    1.042915
    >>> round(log_lipschitz_constant(KendallShape(4), 0.25)[0], 6)  # 0.5 / sin 0.5
    1.042915
    """
    space = check_space(space)
    radius = check_positive(radius, "radius")
    kappa = float(space.curvature_bounds[1])
    limit = 0.5 * space.injectivity_radius
    if kappa > 0:
        limit = min(limit, 0.5 * math.pi / math.sqrt(kappa))
    if not radius < limit:
        raise AssumptionError(
            f"radius={radius!r} must be < {limit!r} for {space!r}: the Lipschitz bound on Log at the centre needs a "
            "strongly convex ball, r < ½ min(inj, π/√κ_max). Choose a smaller public ball."
        )
    if kappa <= 0:
        return 1.0, (
            f"L = 1: the sectional curvature of {space!r} is <= 0 (κ_max = {kappa!r}), so Exp at the centre does "
            "not shrink lengths (Rauch comparison) and Log at the centre is 1-Lipschitz on the convex ball"
        )
    a = math.sqrt(kappa) * radius
    lipschitz = a / math.sin(a)
    return lipschitz, (
        f"L = √K·r/sin(√K·r) = {lipschitz!r} with K = κ_max = {kappa!r}, r = {radius!r}: Rauch comparison with "
        "curvature K bounds the stretch of Log at the centre on the convex ball (docs/math.md §6.1)"
    )


def extrinsic_radius(space, radius, center=None) -> float:
    """Radius, in the ambient norm, of a ball around the centre that contains ``B_r(centre)``.

    The bound is the space's (``space.unchecked.extrinsic_radius``); the shipped ones are:

    * SPD(k), centre I: ``r_E = e^r − 1`` (Frobenius; R21 Prop. 1). It holds for both SPD
      metrics, which agree on distances to the identity. The ball must be centred at I.
    * Sphere: the chord ``r_E = 2R sin(r/2R)`` (any centre).

    Parameters
    ----------
    space : Manifold
    radius : float
    center : array_like, optional
        The ball's centre; default ``space.reference_point()``.

    Raises
    ------
    InvalidParameterError
        The space has no known extrinsic bound, or not about this centre.

    Examples
    --------
    >>> from geodp.manifolds import SPD, Sphere
    >>> round(extrinsic_radius(SPD(2), 1.0), 6)
    1.718282
    >>> round(extrinsic_radius(Sphere(2), 1.0), 6)
    0.958851
    """
    space = check_space(space)
    radius = check_positive(radius, "radius")
    center = space.reference_point() if center is None else space.check_points(center, "center", batch_ndim=0)
    try:
        return float(space.unchecked.extrinsic_radius(center, radius))
    except NotImplementedError:
        raise InvalidParameterError(
            f"no extrinsic radius is known for {space!r}; the extrinsic baselines support SPD and Sphere."
        ) from None


def extrinsic_mean_sensitivity(space, radius, n, center=None) -> float:
    """Sensitivity ``2 r_E / n`` of the ambient arithmetic mean of records in ``B_r(center)``
    (:func:`extrinsic_radius`; default centre ``space.reference_point()``).

    Examples
    --------
    >>> from geodp.manifolds import SPD
    >>> round(extrinsic_mean_sensitivity(SPD(2), 1.0, 10), 6)
    0.343656
    """
    return 2.0 * extrinsic_radius(space, radius, center) / check_sample_size(n)


class RegressionSensitivity(NamedTuple):
    """Replace-one sensitivities of the geodesic-regression gradient field (docs/math.md §9).

    Attributes
    ----------
    footpoint : float
        Δ_p, of ``∇_p E`` (in the norm of ``T_p M``).
    velocity : float
        Δ_v, of ``(∇_{v_1} E, …, ∇_{v_m} E)`` (their joint norm).
    joint : float
        ``√(Δ_p² + Δ_v²)``, of the whole field ``(∇_p E, ∇_v E)``: what the joint KNG release uses.
    """

    footpoint: float
    velocity: float
    joint: float


def _regression_bounds(space, n, residual_bound, x_bound, velocity_bound):
    space = check_space(space)
    n = check_sample_size(n)
    tau = check_positive(residual_bound, "residual_bound")
    x_max = check_positive(x_bound, "x_bound")
    if velocity_bound is not None:
        velocity_bound = check_positive(velocity_bound, "velocity_bound")
    return space, n, tau, x_max, velocity_bound


def geodesic_regression_sensitivity(
    space, n, *, residual_bound, x_bound, velocity_bound=None, radius=None
) -> RegressionSensitivity:
    """Sound replace-one sensitivity of the geodesic-regression gradient (docs/math.md §9).

    The gradient of ``E(p, v) = (1/2n) Σ ρ²(Exp(p, u_i), y_i)``, ``u_i = Σ_j x_ij v_j``, is
    ``∇_p E = −(1/n) Σ d_pExp^† ε_i`` and ``∇_{v_j} E = −(1/n) Σ x_ij d_uExp^† ε_i`` with the
    residuals ``ε_i`` clipped to norm ``τ``. Replacing one record changes one term, so

    * κ_min ≥ 0 (Euclidean, sphere, Kendall shapes, log-Euclidean SPD): the adjoints have
      operator norm ≤ 1, hence ``Δ_p = 2τ/n`` and ``Δ_v = 2τ·x_max/n``;
    * κ_min < 0 (hyperbolic): with ``a = √−κ_min · x_max · V`` (``V`` bounds the velocity, so
      ``|u_i| ≤ x_max V``), ``Δ_p = 2τ cosh(a)/n`` and ``Δ_v = 2τ x_max sinh(a)/(a n)``.

    Both are tight (a record with ``x = 0`` and opposite residuals attains ``Δ_p``). K25's
    published footpoint bound ``2τ cos(1)/n`` is not: see :func:`k25_published_sensitivity`.

    Parameters
    ----------
    space : Manifold
    n : int
        Public number of records.
    residual_bound : float
        ``τ`` > 0: residuals are clipped to this norm.
    x_bound : float
        ``x_max`` > 0: a bound on the Euclidean norm of each record's (scaled) covariate vector;
        ``√m / 2`` for ``m`` covariates centred in ``[−½, ½]``, 1 for ``x ∈ [0, 1]``.
    velocity_bound : float, optional
        ``V``: a bound on the velocity's norm ``(Σ_j |v_j|²)^½``. Required when κ_min < 0. On
        spaces with a finite injectivity radius it must satisfy ``x_max·V < inj`` (the fitted
        geodesic segments must not reach the cut locus).
    radius : float, optional
        The public ball of the footpoint and the responses; checked against ``r*``.

    Returns
    -------
    RegressionSensitivity
        ``(footpoint, velocity, joint)``.

    Raises
    ------
    InvalidParameterError, InvalidTypeError
        A bound is not a positive number, ``n`` not a positive integer.
    AssumptionError
        ``velocity_bound`` is missing on negative curvature or breaks the injectivity
        assumption, or ``radius ≥ r*``.

    Examples
    --------
    >>> from geodp.manifolds import Hyperbolic, Sphere
    >>> geodesic_regression_sensitivity(Sphere(2), 100, residual_bound=0.5, x_bound=0.5)
    RegressionSensitivity(footpoint=0.01, velocity=0.005, joint=0.011180339887498949)
    >>> s = geodesic_regression_sensitivity(Hyperbolic(2), 100, residual_bound=0.5, x_bound=1.0,
    ...                                     velocity_bound=1.0)
    >>> round(s.footpoint / 0.01, 6)  # cosh(1)
    1.543081
    """
    space, n, tau, x_max, velocity_bound = _regression_bounds(space, n, residual_bound, x_bound, velocity_bound)
    if radius is not None:
        check_radius(space, radius)
    kappa_min = space.curvature_bounds[0]
    if velocity_bound is not None and x_max * velocity_bound >= space.injectivity_radius:
        raise AssumptionError(
            f"x_bound·velocity_bound = {x_max * velocity_bound!r} must be < the injectivity radius "
            f"{space.injectivity_radius!r} of {space!r}: longer fitted geodesics reach the cut "
            "locus, where the least-squares geodesic is not unique. Choose a smaller velocity_bound."
        )
    foot, vel = 1.0, 1.0
    if kappa_min < 0:
        if velocity_bound is None:
            raise AssumptionError(
                f"{space!r} has negative curvature: the Jacobi fields grow like cosh, so the "
                "sensitivity needs a public velocity_bound."
            )
        a = math.sqrt(-kappa_min) * x_max * velocity_bound
        foot = math.cosh(a)
        vel = math.sinh(a) / a
    footpoint = 2.0 * tau * foot / n
    velocity = 2.0 * tau * x_max * vel / n
    return RegressionSensitivity(footpoint, velocity, math.hypot(footpoint, velocity))


def k25_published_sensitivity(space, n, *, residual_bound, as_published: bool = False) -> RegressionSensitivity:
    """K25's published bounds (Thm 3.4, Thm D.1), for reproductions only: **not sound**.

    Runs only with ``as_published=True`` and then warns (:class:`~geodp.errors.PrivacyLeakWarning`),
    like every as-published variant; the sound bounds are :func:`geodesic_regression_sensitivity`.

    ``Δ_p = 2τ‖J̃_p(1)‖/n`` and ``Δ_v = 2τ‖J̃_v(1)‖/n`` with the Jacobi fields of the
    comparison space of curvature κ_max at ``t = 1``: ``cos(√κ)`` and ``sin(√κ)/√κ`` for
    κ_max > 0 (``cos 1 ≈ 0.54``, ``sin 1 ≈ 0.84`` on the unit sphere), 1 and 1 on flat spaces,
    ``cosh(√−κ)`` and ``sinh(√−κ)/√−κ`` below 0. The footpoint bound is too small: a record with
    ``x = 0`` moves ``∇_p E`` by ``2τ/n`` (docs/math.md §10), so on the unit sphere the published
    release is only about 1.85ε-DP. The covariates are taken in ``[0, 1]`` (no ``x_max`` factor).

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> import warnings
    >>> from geodp.errors import PrivacyLeakWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", PrivacyLeakWarning)
    ...     s = k25_published_sensitivity(Sphere(2), 20, residual_bound=0.1, as_published=True)
    >>> round(s.footpoint * 20 / 0.2, 4), round(s.velocity * 20 / 0.2, 4)
    (0.5403, 0.8415)

    Raises
    ------
    InvalidParameterError
        Without ``as_published=True``.
    """
    as_published_only(
        as_published,
        "K25's published regression bounds are not sound (the footpoint bound 2τ cos(1)/n is too small): "
        "pass as_published=True to use them in a reproduction, or use geodesic_regression_sensitivity",
        "K25's published regression sensitivity (Thm 3.4) is not sound: a release calibrated with it is only "
        "about 1.85ε-DP on the unit sphere; use for reproductions only",
    )
    return _k25_published_bounds(space, n, residual_bound)


def _k25_published_bounds(space, n, residual_bound) -> RegressionSensitivity:
    # K25's Thm 3.4 bounds without the flag and warning: for callers that warn themselves
    # (PrivateGeodesicRegression(as_published=True)).
    space, n, tau, _, _ = _regression_bounds(space, n, residual_bound, 1.0, None)
    kappa = space.curvature_bounds[1]
    if kappa > 0:
        root = math.sqrt(kappa)
        foot, vel = abs(math.cos(root)), abs(math.sin(root)) / root
    elif kappa < 0:
        root = math.sqrt(-kappa)
        foot, vel = math.cosh(root), math.sinh(root) / root
    else:
        foot, vel = 1.0, 1.0
    footpoint, velocity = 2.0 * tau * foot / n, 2.0 * tau * vel / n
    return RegressionSensitivity(footpoint, velocity, math.hypot(footpoint, velocity))
