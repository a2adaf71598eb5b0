"""The exact privacy loss of a pair of output laws, where it can be computed (the oracle of
:func:`geodp.audit.audit_epsilon`).

* **Untruncated Laplace on a homogeneous space**: the normaliser does not depend on the
  footpoint, so the loss ``(ρ(m1, x) − ρ(m0, x))/σ`` is at most ``ρ(m0, m1)/σ`` (triangle
  inequality), attained at ``x = m0``: the exact ε is ``ρ(m0, m1)/σ``.
* **Gaussian in a flat chart** (the tangent Gaussian): the loss is that of the Gaussian mechanism,
  and the exact ε at δ is the root of Balle & Wang's privacy profile
  ``δ(ε) = Φ(ρ/2σ − εσ/ρ) − e^ε Φ(−ρ/2σ − εσ/ρ)`` (docs/references.md).
* **Laws on a ball of a sphere or hyperbolic space, symmetric about one geodesic through the
  centre** (KNG of datasets on that geodesic, the truncated Laplace with footpoints on it): the
  normalisers ``Z = ∫_ball exp(ℓ) dvol`` by a product Gauss–Legendre rule in geodesic polar
  coordinates about the centre, reduced to two dimensions by the symmetry
  (:func:`axial_quadrature_loss`); the exact pure-DP ε is ``sup |ℓ0 − ℓ1 − log Z0 + log Z1|``.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import logsumexp

from geodp.calibration import analytic_gaussian_delta
from geodp.validation import check_positive

__all__ = [
    "laplace_exact_epsilon",
    "gaussian_exact_epsilon",
    "axial_quadrature_loss",
    "fixed_unit_tangent",
    "supports_axial_quadrature",
]

_T_NODES = 48  # Gauss–Legendre nodes per radial piece
_THETA_NODES = 96  # nodes in the polar angle (graded towards the axis)
_AXIS_POINTS = 4001  # points on the axis where the supremum of the loss is searched too


def laplace_exact_epsilon(distance, scale) -> float:
    """Exact ε of an untruncated Laplace law on a homogeneous space: ``ρ(m0, m1)/σ``.

    Parameters
    ----------
    distance : float
        ``ρ(m0, m1)``, the distance between the two footpoints.
    scale : float
        σ of the law.

    Examples
    --------
    >>> laplace_exact_epsilon(0.1, 0.05)
    2.0
    """
    return float(distance) / check_positive(scale, "scale")


def gaussian_exact_epsilon(distance, sigma, delta) -> float:
    """Exact ε at δ of the Gaussian mechanism with footpoints ``distance`` apart and noise σ.

    The smallest ``ε ≥ 0`` with ``δ(ε) ≤ δ`` on Balle & Wang's privacy profile
    (:func:`geodp.calibration.analytic_gaussian_delta`), found by Brent's method.

    Parameters
    ----------
    distance : float
        ``ρ(m0, m1)`` in the flat chart.
    sigma : float
        Standard deviation per coordinate.
    delta : float
        In (0, 1).

    Examples
    --------
    >>> from geodp.calibration import gaussian_sigma
    >>> sigma = gaussian_sigma(1.0, 1e-5, 0.2)
    >>> round(gaussian_exact_epsilon(0.2, sigma, 1e-5), 6)
    1.0
    """
    distance, sigma = check_positive(distance, "distance"), check_positive(sigma, "sigma")

    def excess(epsilon):
        return analytic_gaussian_delta(sigma, epsilon, distance) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = 1.0
    while excess(hi) > 0:
        hi *= 2.0
    return float(brentq(excess, 0.0, hi, xtol=1e-12, rtol=1e-12))


def supports_axial_quadrature(space) -> bool:
    """Whether :func:`axial_quadrature_loss` applies: a sphere or hyperbolic space of dimension ≥ 2
    (constant curvature, so polar coordinates about the centre have the volume
    ``J(t) sin^(d−2)θ dt dθ`` about any geodesic axis).

    Examples
    --------
    >>> from geodp.manifolds import Sphere, SPD
    >>> supports_axial_quadrature(Sphere(2)), supports_axial_quadrature(SPD(2))
    (True, False)
    """
    low, high = space.curvature_bounds
    return low == high != 0 and space.dim >= 2 and space.provides("radial_log_jacobian")


def _gauss_legendre(breaks, nodes):
    """Nodes and weights of a composite Gauss–Legendre rule on the pieces between ``breaks``."""
    x, w = np.polynomial.legendre.leggauss(nodes)
    points, weights = [], []
    for a, b in zip(breaks[:-1], breaks[1:]):
        points.append(a + (b - a) * (x + 1.0) / 2.0)
        weights.append((b - a) * w / 2.0)
    return np.concatenate(points), np.concatenate(weights)


def fixed_unit_tangent(space, point, orthogonal_to=None):
    """A unit tangent vector at ``point`` from a fixed seed (a public choice), orthogonal to the
    unit tangent ``orthogonal_to`` if given.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> north = np.array([0.0, 0.0, 1.0])
    >>> u = fixed_unit_tangent(Sphere(2), north)
    >>> w = fixed_unit_tangent(Sphere(2), north, orthogonal_to=u)
    >>> round(float(np.dot(u, w)), 12), round(float(np.linalg.norm(w)), 12), float(w[2])
    (0.0, 1.0, 0.0)
    """
    for seed in range(1, 9):  # a draw can vanish (e.g. parallel to a point drawn with the same seed)
        v = space.random_tangent(point, rng=seed)
        if orthogonal_to is not None:
            v = v - space.inner(point, v, orthogonal_to) * orthogonal_to
        norm = float(space.norm(point, v))
        if norm > 1e-6:
            return v / norm
    raise RuntimeError("no fixed tangent direction was found")  # pragma: no cover


def axial_quadrature_loss(space, center, radius, axis, laws, kinks=(), *, t_nodes=_T_NODES, theta_nodes=_THETA_NODES):
    """Exact pure-DP privacy loss of two laws on the ball ``B_radius(center)`` that are symmetric
    about the geodesic through ``center`` along ``axis`` (a sphere or hyperbolic space).

    The normalisers ``Z_i = ∫_ball exp(ℓ_i) dvol`` of the laws' unnormalised log-densities
    ``ℓ_i = laws[i].log_density`` are computed in polar coordinates about the centre,
    ``x = exp_c(t (cos θ u + sin θ w))`` with volume ``J(t) sin^(d−2)θ dt dθ`` (the other angles
    integrate to a constant that cancels): composite Gauss–Legendre in ``t`` split at ``kinks``
    (the distances from the centre of the laws' non-smooth points on the axis: footpoints, means),
    and in θ a rule graded towards both ends of the axis, where those points lie. The loss
    ``L = ℓ0 − ℓ1 − log Z0 + log Z1`` is then maximised in absolute value over the nodes and a fine
    grid of the axis.

    Parameters
    ----------
    space : Sphere or Hyperbolic
    center : array_like
        Centre of the ball.
    radius : float
        Radius of the ball; the laws are supported on it.
    axis : array_like
        A tangent vector at ``center``: the laws are invariant under the isometries fixing the
        geodesic ``exp_c(s axis)``.
    laws : pair of Distribution
        The two output laws (``log_density`` is used).
    kinks : sequence of float
        Distances in ``(0, radius)`` at which the rule splits the radial integral.
    t_nodes, theta_nodes : int
        Nodes per radial piece and in the angle.

    Returns
    -------
    epsilon : float
        ``sup |L|``.
    log_normaliser_difference : float
        ``log Z0 − log Z1``.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> from geodp.distributions import RiemannianLaplace
    >>> space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    >>> axis = np.array([1.0, 0.0, 0.0])
    >>> laws = [RiemannianLaplace(space, space.exp(north, s * axis), 0.1, center=north, radius=0.5)
    ...         for s in (0.3, 0.5)]
    >>> epsilon, _ = axial_quadrature_loss(space, north, 0.5, axis, laws, kinks=(0.3,))
    >>> bool(2.0 < epsilon < 2.0 + np.log(2.0))  # the distance term, plus a normaliser ratio below 2
    True
    """
    center = np.asarray(center, dtype=float)
    axis = np.asarray(axis, dtype=float)
    u = axis / float(space.norm(center, axis))
    w = fixed_unit_tangent(space, center, orthogonal_to=u)
    breaks = np.unique(np.concatenate([[0.0, radius], [k for k in kinks if 0.0 < k < radius]]))
    t, wt = _gauss_legendre(breaks, t_nodes)
    s, ws = _gauss_legendre(np.array([0.0, 1.0]), theta_nodes)
    theta = np.pi * (1.0 - np.cos(np.pi * s)) / 2.0  # graded towards θ = 0 and θ = π
    wtheta = ws * np.pi**2 / 2.0 * np.sin(np.pi * s)
    log_volume = (np.log(wt) + space.radial_log_jacobian(t))[:, None] + (
        np.log(wtheta) + (space.dim - 2) * np.log(np.sin(theta))
    )[None, :]
    directions = np.cos(theta)[:, None] * u + np.sin(theta)[:, None] * w
    points = space.polar_exp(center, directions[None, :, :], np.broadcast_to(t[:, None], log_volume.shape))
    ell = [np.asarray(law.log_density(points)) for law in laws]
    log_z = [float(logsumexp(e + log_volume)) for e in ell]
    # the supremum: the nodes, and the axis on both sides of the centre (where the kinks lie)
    line = np.unique(np.concatenate([np.linspace(0.0, radius, _AXIS_POINTS), breaks]))
    line = np.minimum(line, radius * (1.0 - 1e-9))  # the boundary, inside by a rounding margin
    axis_points = np.concatenate([space.polar_exp(center, u, line), space.polar_exp(center, -u, line)])
    first = np.concatenate([ell[0].ravel(), np.asarray(laws[0].log_density(axis_points))])
    second = np.concatenate([ell[1].ravel(), np.asarray(laws[1].log_density(axis_points))])
    inside = np.isfinite(first) | np.isfinite(second)  # a point in one support only: infinite loss
    with np.errstate(invalid="ignore"):
        loss = first[inside] - second[inside]
    difference = log_z[0] - log_z[1]
    return float(np.max(np.abs(loss - difference))), difference
