"""Riemannian manifolds: geometry only, vectorised over leading batch axes."""

from geodp.manifolds.base import Manifold
from geodp.manifolds.euclidean import Euclidean
from geodp.manifolds.geomstats_adapter import GeomstatsSpace, from_geomstats
from geodp.manifolds.hyperbolic import Hyperbolic
from geodp.manifolds.kendall import KendallShape
from geodp.manifolds.spd import SPD, AffineInvariantSPD, LogEuclideanSPD
from geodp.manifolds.spd_log_cholesky import LogCholeskySPD
from geodp.manifolds.sphere import Sphere

__all__ = [
    "Manifold",
    "Euclidean",
    "Sphere",
    "Hyperbolic",
    "KendallShape",
    "SPD",
    "AffineInvariantSPD",
    "LogEuclideanSPD",
    "LogCholeskySPD",
    "GeomstatsSpace",
    "from_geomstats",
]
