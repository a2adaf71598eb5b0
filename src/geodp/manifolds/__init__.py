"""Riemannian manifolds: geometry only, vectorised over leading batch axes."""

from geodp.manifolds.base import Manifold
from geodp.manifolds.euclidean import Euclidean
from geodp.manifolds.spd import SPD, AffineInvariantSPD, LogEuclideanSPD

__all__ = ["Manifold", "Euclidean", "SPD", "AffineInvariantSPD", "LogEuclideanSPD"]
