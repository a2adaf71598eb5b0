"""Exponential-wrapped laws (docs/math.md §6.1): ``Exp_{p0}(Log_{p0}(m) + Z)`` with ``Z`` an
isotropic law drawn exactly in ``T_{p0}M`` at a public footpoint ``p0``."""

from __future__ import annotations

import numpy as np

from geodp.distributions.base import Distribution, check_private_points, size_tuple
from geodp.errors import InvalidParameterError
from geodp.manifolds.base import check_space
from geodp.validation import as_generator, check_positive

__all__ = ["WrappedLaw", "WRAPPED_NOISES"]

#: The tangent noises: the ℓ2 (K-norm) Laplace ``∝ exp(−‖z‖/σ)`` and the Gaussian ``N(0, σ² I)``.
WRAPPED_NOISES = ("laplace", "gaussian")


class WrappedLaw(Distribution):
    """The law of ``Exp_{p0}(Log_{p0}(m) + Z)``, ``Z`` isotropic in ``T_{p0}M``.

    ``Z`` is drawn exactly in the metric of ``T_{p0}M``: ``σ·ξ`` with ``ξ`` a standard Gaussian
    tangent vector (``space.random_tangent``, coefficients ``N(0, I_dim)`` in an orthonormal
    basis) for the Gaussian; ``G·U`` with ``G ~ Gamma(dim, σ)`` and ``U`` a uniform unit tangent
    vector (``space.random_unit_tangent``) for the ℓ2 Laplace (R21 A.4). Exact: no MCMC.

    Parameters
    ----------
    space : Manifold
    center : array_like, shape space.point_shape
        The public footpoint ``p0`` of the tangent space.
    footpoint : array_like, shape space.point_shape
        ``m``, the point being privatised.
    noise : {"laplace", "gaussian"}
    scale : float
        σ > 0.

    Attributes
    ----------
    tangent_footpoint : numpy.ndarray
        ``Log_{p0}(m)``.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> north = np.array([0.0, 0.0, 1.0])
    >>> law = WrappedLaw(Sphere(2), north, north, "gaussian", scale=0.1)
    >>> law.sample(4, rng=0).shape, law.exact
    ((4, 3), True)
    """

    exact = True

    def __init__(self, space, center, footpoint, noise, scale):
        self.space = check_space(space)
        if noise not in WRAPPED_NOISES:
            raise InvalidParameterError(f"noise must be one of {WRAPPED_NOISES}, got {noise!r}.")
        self.center = space.check_points(center, "center", batch_ndim=0)
        self.footpoint = check_private_points(space, footpoint, "footpoint", batch_ndim=0)
        self.noise = noise
        self.scale = check_positive(scale, "scale")
        self.tangent_footpoint = space.unchecked.log(self.center, self.footpoint)
        kind = "ℓ2 Laplace (Gamma(dim, σ) radius, uniform direction)" if noise == "laplace" else "Gaussian N(0, σ² I)"
        self.sampler = f"exact: {kind} in the tangent space at the public centre, wrapped by Exp (no MCMC)"

    def sample_tangent(self, size=None, rng=None) -> np.ndarray:
        """Draw ``Log_{p0}(m) + Z`` (tangent vectors at ``p0``), shape ``size + point_shape``."""
        rng = as_generator(rng)
        size = size_tuple(size)
        fast = self.space.unchecked
        if self.noise == "gaussian":
            z = self.scale * fast.random_tangent(self.center, size=size, rng=rng)
        else:
            radius = rng.gamma(shape=self.space.dim, scale=self.scale, size=size)
            direction = fast.random_unit_tangent(self.center, size=size, rng=rng)
            z = np.reshape(radius, np.shape(radius) + (1,) * len(self.space.point_shape)) * direction
        return self.tangent_footpoint + z

    def sample(self, size=None, rng=None):
        """Draw points ``Exp_{p0}(Log_{p0}(m) + Z)``."""
        return self.space.unchecked.exp(self.center, self.sample_tangent(size, rng))

    def log_density(self, x):
        """Unnormalised log-density of the tangent law at ``Log_{p0}(x)``: ``−‖Log_{p0}(x) −
        Log_{p0}(m)‖/σ`` or ``−‖·‖²/(2σ²)``. The likelihood ratio of two such laws (the same
        ``p0``, Jacobian cancelling) wherever ``Exp_{p0}`` is injective on the noise's support
        (everywhere on Hadamard spaces); on spheres and shape spaces, where noise beyond the cut
        locus wraps, only on the principal branch."""
        fast = self.space.unchecked
        offset = fast.log(self.center, np.asarray(x, dtype=float)) - self.tangent_footpoint
        norm = np.asarray(fast.norm(self.center, offset))
        return -norm / self.scale if self.noise == "laplace" else -(norm**2) / (2.0 * self.scale**2)
