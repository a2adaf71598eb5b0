"""Hyperbolic space ``H^d_κ`` in the hyperboloid model (docs/math.md §1).

Points satisfy ``⟨x, x⟩_L = −R²`` with ``x_0 > 0``, ``⟨a, b⟩_L = −a_0 b_0 + Σ a_i b_i`` and
``R = |κ|^(-1/2)``. Tangent frames come from the Lorentz boost that carries the origin to the
base point, so unit directions stay unit far from the origin (docs/math.md §1, numerics).
"""

from __future__ import annotations

import math

import numpy as np

from geodp.errors import InvalidParameterError
from geodp.manifolds.base import Manifold
from geodp.validation import as_generator

__all__ = ["Hyperbolic"]


def minkowski(a, b):
    """Minkowski inner product over the last axis."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.sum(a[..., 1:] * b[..., 1:], axis=-1) - a[..., 0] * b[..., 0]


def _sinhc(z):
    z = np.asarray(z, dtype=float)
    safe = np.where(z == 0, 1.0, z)
    return np.where(z == 0, 1.0, np.sinh(safe) / safe)


class Hyperbolic(Manifold):
    """Hyperbolic space of constant curvature ``κ < 0`` (hyperboloid model in ``R^(dim+1)``).

    Parameters
    ----------
    dim : int
        Intrinsic dimension, at least 1.
    curvature : float, default -1.0
        Sectional curvature κ < 0; ``R = 1/√(−κ)``.

    Notes
    -----
    Isotropic with radial volume ``(R sinh(t/R))^(dim−1)``, which grows like
    ``e^((dim−1)t/R)``: the Laplace law ``∝ exp(−ρ/σ)`` is normalisable only when
    ``1/σ > (dim − 1)/R`` (``volume_growth_rate``).

    Examples
    --------
    >>> import numpy as np
    >>> space = Hyperbolic(2)
    >>> origin = np.array([1.0, 0.0, 0.0])
    >>> x = space.exp(origin, [0.0, 1.0, 0.0])
    >>> round(float(space.dist(origin, x)), 12)
    1.0
    """

    is_homogeneous = True
    injectivity_radius = math.inf
    cut_radius = math.inf

    def __init__(self, dim: int, curvature: float = -1.0):
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
            raise InvalidParameterError(f"dim must be a positive integer, got {dim!r}.")
        curvature = float(curvature)
        if not (math.isfinite(curvature) and curvature < 0):
            raise InvalidParameterError(f"curvature must be a finite negative number, got {curvature!r}.")
        self.dim = int(dim)
        self.curvature = curvature
        self.radius = 1.0 / math.sqrt(-curvature)
        self.point_shape = (self.dim + 1,)
        self.curvature_bounds = (curvature, curvature)
        self.volume_growth_rate = (self.dim - 1) / self.radius

    def __repr__(self) -> str:
        return f"Hyperbolic({self.dim})" if self.curvature == -1.0 else f"Hyperbolic({self.dim}, curvature={self.curvature!r})"

    @property
    def origin(self) -> np.ndarray:
        """The point ``(R, 0, …, 0)``."""
        o = np.zeros(self.point_shape)
        o[0] = self.radius
        return o

    # ----------------------------------------------------------------- geometry
    def _angle(self, a, b):
        """Distance between points of the unit hyperboloid, ``2 asinh(|b − a|_L / 2)``:
        the Minkowski norm of the chord is accurate for nearby points, where arccosh is not."""
        diff = b - a
        return 2.0 * np.arcsinh(0.5 * np.sqrt(np.maximum(minkowski(diff, diff), 0.0)))

    def _dist(self, x, y):
        """``R arccosh(−⟨x, y⟩_L/R²)``, computed as ``2R asinh(|y − x|_L/(2R))``."""
        R = self.radius
        return R * self._angle(np.asarray(x, dtype=float) / R, np.asarray(y, dtype=float) / R)

    def _log(self, x, y):
        """``ρ (y − cosh(ρ/R) x)/(R sinh(ρ/R))``."""
        R = self.radius
        a, b = np.asarray(x, dtype=float) / R, np.asarray(y, dtype=float) / R
        diff = b - a
        m = np.maximum(minkowski(diff, diff), 0.0)
        theta = 2.0 * np.arcsinh(0.5 * np.sqrt(m))
        u = diff - (0.5 * m)[..., None] * a
        return R * (1.0 / _sinhc(theta))[..., None] * u

    def _exp(self, x, v):
        """``cosh(|v|/R) x + R sinh(|v|/R) v/|v|``."""
        x, v = np.asarray(x, dtype=float), np.asarray(v, dtype=float)
        n = np.sqrt(np.maximum(minkowski(v, v), 0.0)) / self.radius
        return np.cosh(n)[..., None] * x + _sinhc(n)[..., None] * v

    def _polar_exp(self, x, direction, t):
        """``cosh(t/R) x + R sinh(t/R) u`` for unit ``u``, without re-measuring ``|u|``."""
        t = np.asarray(t, dtype=float)[..., None] / self.radius
        return np.cosh(t) * np.asarray(x, dtype=float) + self.radius * np.sinh(t) * np.asarray(direction, dtype=float)

    def _inner(self, x, u, v):
        """Minkowski product of tangent vectors (``x`` broadcasts)."""
        out = minkowski(u, v)
        return np.broadcast_to(out, np.broadcast_shapes(out.shape, np.shape(x)[:-1]))

    def _transport(self, x, y, v):
        """``w + ⟨w, u⟩_L((cosh(ρ/R) − 1) u + sinh(ρ/R) x/R)``, ``u`` the unit direction of ``log_x y``."""
        x, y, v = (np.asarray(a, dtype=float) for a in (x, y, v))
        log = self._log(x, y)
        rho = np.sqrt(np.maximum(minkowski(log, log), 0.0))[..., None]
        u = np.where(rho > 0, log / np.where(rho > 0, rho, 1.0), 0.0)
        t = rho / self.radius
        coef = minkowski(v, u)[..., None]
        return v + coef * ((np.cosh(t) - 1.0) * u + np.sinh(t) * x / self.radius)

    def boost(self, x, xi):
        """Carry frame coefficients ``ξ ∈ R^dim`` at the origin to a tangent vector at ``x`` by
        the Lorentz boost that maps the origin to ``x`` (an isometry: ``|result|_L = |ξ|``)."""
        a = np.asarray(x, dtype=float) / self.radius
        xi = np.asarray(xi, dtype=float)
        a0, a_s = a[..., :1], a[..., 1:]
        proj = np.sum(a_s * xi, axis=-1, keepdims=True)
        return np.concatenate([proj, xi + a_s * proj / (1.0 + a0)], axis=-1)

    # --------------------------------------------------------------- membership
    def _belongs(self, x, rtol):
        scale = np.sum(x * x, axis=-1) + self.radius**2
        return (np.abs(minkowski(x, x) + self.radius**2) <= rtol * scale) & (x[..., 0] > 0)

    _membership_hint = (
        "Hyperboloid points satisfy -x0² + |x_rest|² = -R² with x0 > 0; space.project(x) lifts "
        "the spatial coordinates x[..., 1:] onto the upper sheet."
    )

    def project(self, x):
        """Lift onto the upper sheet: keep ``x[..., 1:]``, set ``x_0 = √(R² + |x_rest|²)``."""
        x = np.array(x, dtype=float)
        x[..., 0] = np.sqrt(self.radius**2 + np.sum(x[..., 1:] ** 2, axis=-1))
        return x

    def _canonical(self, x):
        return self.project(x)

    # --------------------------------------------------------------- randomness
    def random_tangent(self, x, size=None, rng=None):
        """Standard Gaussian tangent vectors, built in a boosted orthonormal frame."""
        x = np.asarray(x, dtype=float)
        xi = as_generator(rng).standard_normal(self._batch_size(x, size) + (self.dim,))
        return self.boost(x, xi)

    def random_unit_tangent(self, x, size=None, rng=None):
        """Uniform unit tangent vectors; unit by construction (no Minkowski norm is taken)."""
        x = np.asarray(x, dtype=float)
        xi = as_generator(rng).standard_normal(self._batch_size(x, size) + (self.dim,))
        return self.boost(x, xi / np.linalg.norm(xi, axis=-1, keepdims=True))

    def random_point(self, size=None, rng=None):
        """Points with standard Gaussian spatial coordinates, lifted onto the hyperboloid."""
        shape = self._batch_size(np.zeros(self.point_shape), size) + self.point_shape
        return self.project(as_generator(rng).standard_normal(shape))

    # ------------------------------------------------------------ polar volume
    def radial_log_jacobian(self, t):
        """``(dim − 1) log(R sinh(t/R))``."""
        t = np.asarray(t, dtype=float)
        if self.dim == 1:
            return np.zeros_like(t)
        z = t / self.radius
        with np.errstate(divide="ignore"):
            # log sinh z = z + log1p(−e^(−2z)) − log 2, finite for every z > 0.
            return (self.dim - 1) * (math.log(self.radius / 2.0) + z + np.log1p(-np.exp(-2.0 * z)))
