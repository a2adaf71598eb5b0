"""Gaussian laws in the chart of a flat space; on log-Euclidean SPD this is the log-Gaussian of
U23 Def. 1: ``X = Exp(invvecd(vecd(Log M) + σ N(0, I_d)))`` (docs/math.md §5)."""

from __future__ import annotations

import numpy as np

from geodp.distributions.base import FlatChartDistribution
from geodp.validation import as_generator, check_positive

__all__ = ["TangentGaussian"]


class TangentGaussian(FlatChartDistribution):
    """Isotropic Gaussian ``N(φ(M), σ² I)`` in the isometric chart of a flat space.

    The squared geodesic distance to ``M`` follows ``σ² χ²_dim`` exactly.

    Parameters
    ----------
    space : Manifold
        A flat space (log-Euclidean SPD gives U23's log-Gaussian).
    footpoint : array_like
        M.
    sigma : float
        Standard deviation per coordinate, > 0.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import SPD
    >>> law = TangentGaussian(SPD(3, metric="log-euclidean"), np.eye(3), sigma=0.5)
    >>> law.sample(rng=1).shape
    (3, 3)
    """

    exact = True

    def __init__(self, space, footpoint, sigma):
        super().__init__(space, footpoint)
        self.sigma = check_positive(sigma, "sigma")
        self.sampler = f"exact: Gaussian in the isometric chart of {space!r}"

    def sample_coordinates(self, size=None, rng=None):
        """``φ(M) + σ Z``."""
        z = as_generator(rng).standard_normal(self._batch(size) + (self.space.dim,))
        return self.footpoint_coordinates + self.sigma * z

    def log_density_coordinates(self, y):
        """``−|y − φ(M)|²/(2σ²)``."""
        d = np.asarray(y) - self.footpoint_coordinates
        return -np.sum(d * d, axis=-1) / (2.0 * self.sigma**2)
