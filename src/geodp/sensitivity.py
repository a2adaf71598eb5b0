"""Sensitivity bounds, each with its reference and assumptions (docs/math.md §3).

Adjacency is replace-one with ``n`` public; the data domain is a public geodesic ball
``B_r(m0)``; sensitivities are in the geodesic distance of the space.
"""

from __future__ import annotations

import math

from geodp.errors import AssumptionError, InvalidParameterError, InvalidTypeError
from geodp.manifolds.base import Manifold
from geodp.validation import check_positive, check_sample_size

__all__ = [
    "curvature_factor",
    "max_radius",
    "check_radius",
    "frechet_mean_sensitivity",
    "extrinsic_radius",
    "extrinsic_mean_sensitivity",
]

_MEAN_MECHANISMS = ("laplace", "tangent-gaussian", "kng")


def _check_space(space) -> Manifold:
    if not isinstance(space, Manifold):
        raise InvalidTypeError(f"space must be a geodp Manifold, got {type(space).__name__}.")
    return space


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

    ``r* = ½ min(inj, π/(2√κ_max))`` when κ_max > 0, ∞ otherwise.

    Examples
    --------
    >>> from geodp.manifolds import SPD
    >>> max_radius(SPD(3))
    inf
    """
    space = _check_space(space)
    kappa_max = space.curvature_bounds[1]
    if kappa_max <= 0:
        return math.inf
    return 0.5 * min(space.injectivity_radius, math.pi / (2.0 * math.sqrt(kappa_max)))


def check_radius(space, radius) -> float:
    """Validate a data-ball radius against Assumption 1; return it as a float.

    Raises
    ------
    InvalidParameterError
        ``radius`` ≤ 0 or not finite.
    AssumptionError
        ``radius ≥ r*`` (the message names r*), or beyond ``space.max_representable_radius``.

    Examples
    --------
    >>> from geodp.manifolds import Euclidean
    >>> check_radius(Euclidean(2), 3)
    3.0
    """
    radius = check_positive(radius, "radius")
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

    * ``"laplace"`` (and ``"tangent-gaussian"``, which needs the same distance bound):
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
    space = _check_space(space)
    radius = check_radius(space, radius)
    n = check_sample_size(n)
    if mechanism not in _MEAN_MECHANISMS:
        raise InvalidParameterError(f"mechanism must be one of {_MEAN_MECHANISMS}, got {mechanism!r}.")
    h = curvature_factor(radius, space.curvature_bounds[1])
    bound = 2.0 * radius * (2.0 - h) / n
    return bound if mechanism == "kng" else bound / h


def extrinsic_radius(space, radius) -> float:
    """Radius, in the ambient norm, of a ball around the centre that contains ``B_r(centre)``.

    * SPD(k), centre I: ``r_E = e^r − 1`` (Frobenius; R21 Prop. 1). It holds for both SPD
      metrics, which agree on distances to the identity. The ball must be centred at I.
    * Sphere: the chord ``r_E = 2R sin(r/2R)`` (any centre).

    Examples
    --------
    >>> from geodp.manifolds import SPD, Sphere
    >>> round(extrinsic_radius(SPD(2), 1.0), 6)
    1.718282
    >>> round(extrinsic_radius(Sphere(2), 1.0), 6)
    0.958851
    """
    from geodp.manifolds.spd import SPD
    from geodp.manifolds.sphere import Sphere

    space = _check_space(space)
    radius = check_positive(radius, "radius")
    if isinstance(space, SPD):
        return math.expm1(radius)
    if isinstance(space, Sphere):
        return 2.0 * space.radius * math.sin(min(radius, space.injectivity_radius) / (2.0 * space.radius))
    raise InvalidParameterError(f"no extrinsic radius is known for {space!r}; the extrinsic baselines support SPD and Sphere.")


def extrinsic_mean_sensitivity(space, radius, n) -> float:
    """Sensitivity ``2 r_E / n`` of the ambient arithmetic mean of records in ``B_r(I)``.

    Examples
    --------
    >>> from geodp.manifolds import SPD
    >>> round(extrinsic_mean_sensitivity(SPD(2), 1.0, 10), 6)
    0.343656
    """
    return 2.0 * extrinsic_radius(space, radius) / check_sample_size(n)
