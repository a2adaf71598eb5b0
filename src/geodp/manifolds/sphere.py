"""The sphere ``S^d_κ`` of radius ``R = κ^(-1/2)`` embedded in ``R^(d+1)`` (docs/math.md §1).

The helpers ``sphere_angle``, ``sphere_log_unit`` and ``sphere_exp_unit`` work on unit spheres
of any point shape (the reduction axes are given); :class:`~geodp.manifolds.KendallShape` uses
them on its pre-shape sphere.
"""

from __future__ import annotations

import math
from operator import mul

import numpy as np

from geodp.manifolds.base import Manifold
from geodp.manifolds.jacobi import constant_curvature_adjoints
from geodp.manifolds.pass_products import pass_dot, pass_matvec, pass_max
from geodp.validation import as_generator, check_positive, check_positive_integer

__all__ = ["Sphere"]


def _norms(x):
    """Euclidean norms over the last axis, without an ``x``-sized temporary."""
    return np.sqrt(np.einsum("...i,...i->...", x, x))


_EPS = float(np.finfo(float).eps)


def _length(v):
    """The Euclidean norm of one vector as a float, without overflow (and so without a warning,
    whatever its size): ``math.hypot`` of a short vector's entries, ``einsum`` of a long one."""
    return math.hypot(*v.tolist()) if v.size <= 16 else float(_norms(v))


def _dot(a, b, axes):
    return np.sum(a * b, axis=axes)


def _expand(s, n_axes):
    s = np.asarray(s)
    return s.reshape(s.shape + (1,) * n_axes)


def sphere_angle(a, b, axes=(-1,)):
    """Angle between vectors of equal norm, ``2·atan2(|a − b|, |a + b|)``: accurate at 0 and at π
    (acos loses ~1e-8 near 0, docs/math.md §1). Scale-invariant: no division by the radius."""
    return sphere_angle_parts(a - b, a + b, axes)


def sphere_angle_parts(diff, total, axes=(-1,)):
    """``2·atan2(|diff|, |total|)`` for ``diff = b − a`` and ``total = a + b`` formed by the caller."""
    return 2.0 * np.arctan2(np.sqrt(_dot(diff, diff, axes)), np.sqrt(_dot(total, total, axes)))


def sphere_log_unit(a, b, axes=(-1,)):
    """``log_a(b)`` on the unit sphere, with the tangent part of ``b − a`` formed without
    cancellation: ``(b − a) + (|b − a|²/2) a``."""
    return sphere_log_parts(a, b - a, a + b, axes)


def sphere_log_parts(a, diff, total, axes=(-1,)):
    """:func:`sphere_log_unit` from ``diff = b − a`` and ``total = a + b`` formed by the caller
    (so that a radius or a rotation can be applied to the small difference, not to the points)."""
    n_axes = len(axes)
    u = diff + _expand(0.5 * _dot(diff, diff, axes), n_axes) * a
    theta = sphere_angle_parts(diff, total, axes)
    u_norm = np.sqrt(_dot(u, u, axes))
    factor = np.where(u_norm > 0, theta / np.where(u_norm > 0, u_norm, 1.0), 1.0)
    return _expand(factor, n_axes) * u


def sphere_exp_unit(a, v, axes=(-1,)):
    """``exp_a(v) = cos|v| a + sin|v| v/|v|`` on the unit sphere (``sinc`` form: no division)."""
    n = np.sqrt(_dot(v, v, axes))
    n_axes = len(axes)
    return _expand(np.cos(n), n_axes) * a + _expand(np.sinc(n / np.pi), n_axes) * v


class Sphere(Manifold):
    """The sphere ``S^dim`` of constant curvature ``κ > 0`` (radius ``R = 1/√κ``) in ``R^(dim+1)``.

    Parameters
    ----------
    dim : int
        Intrinsic dimension, at least 1.
    curvature : float, default 1.0
        Sectional curvature κ > 0.

    Notes
    -----
    Isotropic: the Riemannian volume in polar coordinates at any point is
    ``(R sin(t/R))^(dim−1) dt du`` on ``[0, πR)`` (:meth:`radial_log_jacobian`, ``cut_radius``),
    which is all the exact Laplace sampler needs.

    Examples
    --------
    >>> import numpy as np
    >>> space = Sphere(2)
    >>> north, east = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    >>> round(float(space.dist(north, east)), 12) == round(np.pi / 2, 12)
    True
    >>> space.exp(north, np.pi / 2 * east).round(12).tolist()
    [1.0, 0.0, 0.0]
    """

    is_homogeneous = True
    volume_growth_rate = 0.0
    # Records (and public points given as data) within a relative 1e-4 of norm R are accepted and
    # normalised: unit vectors written with 6 decimals in up to 40,000 dimensions (the norm's
    # error is at most 5e-7·sqrt(dim + 1)), or 4 decimals on S²; the geometry keeps 1.5e-8.
    record_rtol = 1e-4

    def __init__(self, dim: int, curvature: float = 1.0):
        dim = check_positive_integer(dim, "dim")
        self.dim = int(dim)
        self.curvature = check_positive(curvature, "curvature")
        self.radius = 1.0 / math.sqrt(self.curvature)
        self.point_shape = (self.dim + 1,)
        self.curvature_bounds = (self.curvature, self.curvature)
        self.injectivity_radius = math.pi * self.radius
        self.cut_radius = self.injectivity_radius

    def __repr__(self) -> str:
        return f"Sphere({self.dim})" if self.curvature == 1.0 else f"Sphere({self.dim}, curvature={self.curvature!r})"

    # ----------------------------------------------------------------- geometry
    def _exp(self, x, v):
        """``cos(|v|/R) x + R sin(|v|/R) v/|v|``."""
        R = self.radius
        x, v = np.asarray(x, dtype=float), np.asarray(v, dtype=float)
        if R == 1.0:  # the scalings below are exact then: skipped, not changed
            return sphere_exp_unit(x, v)
        return R * sphere_exp_unit(x / R, v / R)

    def _exp_with_velocity(self, x, v):
        """For one point ``x`` and one tangent vector ``v`` (the Karcher flow's step; its scalars
        in Python floats): ``exp_x(v) = cos(a) x + (sin(a)/a) v`` (projected) and the velocity
        there of ``t ↦ exp_x(t v)``, ``cos(a) v − a sin(a) x``, with ``a = |v|/R``."""
        x, v = np.asarray(x, dtype=float), np.asarray(v, dtype=float)
        R = self.radius
        a = _length(v) / R
        cos, sin = (math.cos(a), math.sin(a)) if math.isfinite(a) else (math.nan, math.nan)  # math.cos(inf) raises
        if v.size <= 16 and R < 1e150:  # a short point in Python floats: the same products
            xl, vl = x.tolist(), v.tolist()
            scale, grow = (sin / a if a > 0 else 1.0), a * sin
            end = [cos * p + scale * q for p, q in zip(xl, vl)]
            shrink = R / math.sqrt(sum(map(mul, end, end)))  # |end| ≤ 2R: no overflow
            return np.array([t * shrink for t in end]), np.array([cos * q - grow * p for p, q in zip(xl, vl)])
        end = cos * x + (sin / a if a > 0 else 1.0) * v
        if R < 1e150:  # |end| ≤ 2R: its square cannot overflow; project's R·x/|x| on floats
            return end * (R / math.sqrt(float(np.dot(end, end)))), cos * v - (a * sin) * x
        return self.project(end), cos * v - (a * sin) * x

    def _log(self, x, y):
        """``ρ (y − cos(ρ/R) x)/(R sin(ρ/R))``; zero at ``y = x``; defined for ``ρ < πR``.

        ``y − x`` is formed before dividing by ``R`` (dividing first would add rounding errors of
        relative size 1e-16 to a difference that may be 1e-8 long)."""
        R = self.radius
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        return R * sphere_log_parts(x / R, (y - x) / R, (x + y) / R)

    def _polar_exp(self, x, direction, t):
        """``cos(t/R) x + R sin(t/R) u`` for a unit tangent ``u``."""
        t = np.asarray(t, dtype=float)[..., None] / self.radius
        return np.cos(t) * np.asarray(x, dtype=float) + self.radius * np.sin(t) * np.asarray(direction, dtype=float)

    def _dist(self, x, y):
        """``R · angle(x, y)``, the angle as ``2·atan2(|x − y|, |x + y|)`` (accurate at 0 and π;
        relative error about 1e-16 over ``[1e-8 R, π R]``)."""
        return self.radius * sphere_angle(np.asarray(x, dtype=float), np.asarray(y, dtype=float))

    def _inner(self, x, u, v):
        """Ambient dot product of tangent vectors (``x`` broadcasts)."""
        out = (np.asarray(u, dtype=float) * np.asarray(v, dtype=float)).sum(axis=-1)
        batch = np.shape(x)[:-1]
        if not batch or batch == np.shape(out):  # nothing to broadcast (a single base point)
            return out
        return np.broadcast_to(out, np.broadcast_shapes(out.shape, batch))

    def _transport(self, x, y, v):
        """``w + ⟨w, u⟩((cos(ρ/R) − 1) u − sin(ρ/R) x/R)``, ``u`` the unit direction of ``log_x y``."""
        x, y, v = (np.asarray(a, dtype=float) for a in (x, y, v))
        log = self._log(x, y)
        rho = np.linalg.norm(log, axis=-1, keepdims=True)
        u = np.where(rho > 0, log / np.where(rho > 0, rho, 1.0), 0.0)
        t = rho / self.radius
        coef = np.sum(v * u, axis=-1, keepdims=True)
        return v + coef * ((np.cos(t) - 1.0) * u - np.sin(t) * x / self.radius)

    def to_tangent(self, x, v):
        """Orthogonal projection of an ambient vector onto the tangent space at ``x``."""
        x, v = np.asarray(x, dtype=float), np.asarray(v, dtype=float)
        return v - np.sum(v * x, axis=-1, keepdims=True) * x / self.radius**2

    def _adjoint_exp_derivatives(self, p, u, w, y=None):
        return constant_curvature_adjoints(self, p, u, w, y)

    def reference_point(self):
        """The north pole ``(0, …, 0, R)``."""
        point = np.zeros(self.point_shape)
        point[-1] = self.radius
        return point

    def _extrinsic_radius(self, center, radius):
        """The chord ``2R sin(r/2R)`` of the geodesic radius (any centre)."""
        return 2.0 * self.radius * math.sin(min(radius, self.injectivity_radius) / (2.0 * self.radius))

    # --------------------------------------------------------------- membership
    def _belongs(self, x, rtol):
        return np.abs(_norms(x) - self.radius) <= rtol * self.radius

    def _checked_records(self, X):
        """One product per record (the norms) decides membership as :meth:`_belongs` does; a
        normalised block comes back as it is, without a copy."""
        deviation = np.einsum("ij,ij->i", X, X)  # the norms, then |norm − R|, in place: one n-vector
        np.sqrt(deviation, out=deviation)
        deviation -= self.radius
        np.abs(deviation, out=deviation)
        worst = pass_max(deviation)  # NaN if some record has a NaN or inf
        if not worst <= self.record_rtol * self.radius:  # NaN/inf fail here as well
            return super()._checked_records(X)  # the usual error
        if worst <= 4.0 * _EPS * self.radius:
            return X
        out = self.radius * X  # normalised in place: one copy of the block, not two
        out /= _norms(X)[:, None]
        return out

    _membership_hint = (
        "Sphere points must have Euclidean norm R = 1/sqrt(curvature) (records: within a relative "
        "record_rtol = 1e-4, then normalised); use space.project(x)."
    )

    def project(self, x):
        """Radial projection ``R x/|x|`` (the closest point of the sphere)."""
        x = np.asarray(x, dtype=float)
        return self.radius * x / np.sqrt((x * x).sum(axis=-1, keepdims=True))  # np.linalg.norm's sum

    def _canonical(self, x):
        """Points whose norm is already ``R`` to within 4 ulp are kept bit for bit (no copy of a
        normalised dataset); the others are projected, each decided alone (an audit saw a
        record's bits depend on whether a block-mate needed projecting)."""
        x = np.asarray(x, dtype=float)
        norm = _norms(x)
        exact = np.abs(norm - self.radius) <= 4.0 * np.finfo(float).eps * self.radius
        if np.all(exact):
            return x
        return np.where(exact[..., None], x, self.radius * x / norm[..., None])

    # ------------------------------------------------------------ Fréchet mean
    # A pass keeps two n-vectors (cosines then 1 + cos θ then angles; 1 − cos θ then sines then
    # coefficients), no n × D: blocks of 32,768 rows keep them below the input even at d = 2.
    _karcher_row_values = 32
    _karcher_exact_distances = True  # angles from atan2: π at the antipode

    def _karcher_start(self, weighted_sum):
        """The normalised extrinsic mean (None when it vanishes, e.g. two antipodal records)."""
        norm = math.sqrt(float(np.dot(weighted_sum, weighted_sum)))  # at most R: no overflow
        return self.radius * weighted_sum / norm if norm > 1e-8 * self.radius else None

    def _karcher_direction(self, x, X, weights):
        """``Σ w_i θ_i/sin θ_i (x_i − cos θ_i x)`` (``θ_i = ρ(x, x_i)/R``) as the tangent part
        at ``x`` of ``v = Xᵀa``, ``v − ⟨v, x⟩ x/R²`` (``⟨x_i, x⟩ = R² cos θ_i``, so it is
        ``Xᵀa − (Σ a_i cos θ_i) x``): two matrix–vector products and two n-vectors, no
        ``n × (dim+1)`` temporary.

        ``cos θ_i`` from one product, ``sin θ = √((1 − cos θ)(1 + cos θ))`` (0 where rounding
        puts ``|cos θ|`` above 1) and ``θ = 2 atan2(sin θ, 1 + cos θ)`` (the half angle's
        tangent; π where ``1 + cos θ`` rounds to 0 or below): the ratio ``θ/sin θ`` the gradient
        needs is a smooth function of ``sin θ``, so the rounding of ``cos θ`` near 0 (which costs
        ``θ`` itself ~1e-8 absolute) barely moves it; ``1 ± cos θ`` are exact where they are small.
        """
        theta = pass_matvec(X, x if self.radius == 1.0 else x / self.radius**2)  # cos θ_i
        # Two n-vectors, in place: a holds 1 − cos θ, sin θ, a_i, then w_i θ_i; theta holds
        # cos θ, 1 + cos θ, then θ.
        a = np.subtract(1.0, theta)
        theta += 1.0
        a *= theta
        np.maximum(a, 0.0, out=a)
        np.sqrt(a, out=a)
        # sin θ = 0 at x and at its antipode, where 1 + cos θ ≤ 0 and 2 atan2(0, 0) would be 0, not π.
        antipodal = None if np.count_nonzero(a) == a.size else theta <= 0.0  # (where= holds ~1.2 KB at n = 100)
        np.arctan2(a, theta, out=theta)
        theta *= 2.0
        if antipodal is None:
            np.divide(theta, a, out=a)
        else:  # θ/sin θ → 1 where sin θ = 0
            np.putmask(theta, antipodal, math.pi)
            zero = a == 0.0
            np.putmask(a, zero, 1.0)
            np.divide(theta, a, out=a)
            np.putmask(a, zero, 1.0)
        a *= weights
        direction = pass_matvec(X.T, a)
        direction -= (float(np.dot(direction, x)) / self.radius**2) * x
        if self.radius != 1.0:
            theta *= self.radius  # the distances
        far = pass_max(theta)
        np.multiply(theta, weights, out=a)  # no product with the weights themselves: uniform ones have stride 0
        return direction, 0.5 * pass_dot(a, theta), far

    def _karcher_grad_norm(self, x, direction):
        """The ambient norm of one tangent vector (BLAS's dot while its square cannot overflow:
        the flow's direction is at most ``πR`` long)."""
        if self.radius < 1e150:
            return math.sqrt(float(np.dot(direction, direction)))
        return float(_norms(direction))

    # --------------------------------------------------------------- randomness
    def _random_tangent(self, x, size=None, rng=None):
        """Standard Gaussian tangent vectors (an isotropic ambient Gaussian projected)."""
        x = np.asarray(x, dtype=float)
        g = as_generator(rng).standard_normal(self._batch_size(x, size) + self.point_shape)
        return self.to_tangent(x, g)

    def random_point(self, size=None, rng=None):
        """Uniformly distributed points."""
        g = as_generator(rng).standard_normal(self._batch_size(np.zeros(self.point_shape), size) + self.point_shape)
        return self.project(g)

    # ------------------------------------------------------------ polar volume
    def radial_log_jacobian(self, t):
        """``(dim − 1) log(R sin(t/R))``: log-density of the volume in geodesic polar coordinates."""
        t = np.asarray(t, dtype=float)
        if self.dim == 1:
            return np.zeros_like(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self.dim - 1) * np.log(self.radius * np.sin(t / self.radius))

    def uniform_radius(self, size, rng=None):
        """Exact draws of ``ρ(η, X)`` for ``X`` uniform: ``(1 + cos(ρ/R))/2 ~ Beta(dim/2, dim/2)``."""
        b = as_generator(rng).beta(self.dim / 2.0, self.dim / 2.0, size=size)
        return 2.0 * self.radius * np.arcsin(np.sqrt(1.0 - b))
