"""Euclidean space ``R^d`` (docs/math.md §1)."""

from __future__ import annotations

import numpy as np

from geodp.manifolds.base import Manifold
from geodp.validation import as_generator, check_positive_integer

__all__ = ["Euclidean"]


class Euclidean(Manifold):
    """The flat space ``R^dim`` with the standard inner product.

    Parameters
    ----------
    dim : int
        Dimension, at least 1.

    Examples
    --------
    >>> space = Euclidean(3)
    >>> space.exp([0.0, 0.0, 0.0], [1.0, 2.0, 2.0]).tolist()
    [1.0, 2.0, 2.0]
    >>> float(space.dist([0.0, 0.0, 0.0], [1.0, 2.0, 2.0]))
    3.0
    """

    is_flat = True
    is_homogeneous = True
    curvature_bounds = (0.0, 0.0)
    injectivity_radius = np.inf
    cut_radius = np.inf
    volume_growth_rate = 0.0
    # Distances square the coordinates: past ~1e154 they overflow and clipping would replace every
    # record by the centre (an audit's radius 1e160 released the centre itself).
    max_representable_radius = 1e150

    def __init__(self, dim: int):
        dim = check_positive_integer(dim, "dim")
        self.dim = int(dim)
        self.point_shape = (self.dim,)

    def __repr__(self) -> str:
        return f"Euclidean({self.dim})"

    def _exp(self, x, v):
        """``x + v``."""
        return np.asarray(x, dtype=float) + np.asarray(v, dtype=float)

    def _log(self, x, y):
        """``y − x``."""
        return np.asarray(y, dtype=float) - np.asarray(x, dtype=float)

    def _inner(self, x, u, v):
        """Standard dot product over the last axis (``x`` broadcasts but is unused)."""
        out = np.sum(np.asarray(u, dtype=float) * np.asarray(v, dtype=float), axis=-1)
        return np.broadcast_to(out, np.broadcast_shapes(out.shape, np.shape(x)[:-1]))

    def _dist(self, x, y):
        """Euclidean distance."""
        return np.linalg.norm(np.asarray(y, dtype=float) - np.asarray(x, dtype=float), axis=-1)

    def _transport(self, x, y, v):
        """Identity (flat space), broadcast to the batch of ``x`` and ``y``."""
        shape = np.broadcast_shapes(np.shape(x), np.shape(y), np.shape(v))
        return np.broadcast_to(np.asarray(v, dtype=float), shape).copy()

    def _adjoint_exp_derivatives(self, p, u, w, y=None):
        """Flat: both derivatives of ``Exp(p, u) = p + u`` are the identity."""
        shape = np.broadcast_shapes(np.shape(p), np.shape(u), np.shape(w))
        out = np.broadcast_to(np.asarray(w, dtype=float), shape).copy()
        return out, out.copy()

    def reference_point(self):
        """The origin."""
        return np.zeros(self.point_shape)

    def _tangent_from_coordinates(self, p, c):
        return np.broadcast_to(np.asarray(c, dtype=float), np.broadcast_shapes(np.shape(p), np.shape(c))).copy()

    def _belongs(self, x, rtol):
        return np.ones(x.shape[:-1], dtype=bool)

    def to_coordinates(self, x):
        """Global isometric chart (identity)."""
        return np.asarray(x, dtype=float)

    def from_coordinates(self, y):
        """Inverse chart (identity)."""
        return np.asarray(y, dtype=float)

    def radial_log_jacobian(self, t):
        """``(dim − 1) log t``: the volume of ``R^dim`` in polar coordinates."""
        t = np.asarray(t, dtype=float)
        if self.dim == 1:
            return np.zeros_like(t)
        with np.errstate(divide="ignore"):
            return (self.dim - 1) * np.log(t)

    def _random_tangent(self, x, size=None, rng=None):
        """Standard Gaussian vectors."""
        x = np.asarray(x, dtype=float)
        return as_generator(rng).standard_normal(self._batch_size(x, size) + self.point_shape)

    def random_point(self, size=None, rng=None):
        """Standard Gaussian points."""
        return self._random_tangent(np.zeros(self.point_shape), size=size, rng=rng)
