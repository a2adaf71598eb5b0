"""Samplers: exact wherever docs/math.md §5 gives a method; MH (with diagnostics) otherwise."""

from geodp.distributions.base import Distribution, FlatChartDistribution
from geodp.distributions.gaussian import TangentGaussian
from geodp.distributions.kng import KNGDistribution
from geodp.distributions.laplace import RiemannianLaplace, l2_laplace_noise
from geodp.distributions.radial import RadialLaw
from geodp.distributions.riemannian_gaussian import RiemannianGaussian
from geodp.distributions.wrapped import WrappedLaw

__all__ = [
    "Distribution",
    "FlatChartDistribution",
    "KNGDistribution",
    "RadialLaw",
    "RiemannianGaussian",
    "RiemannianLaplace",
    "TangentGaussian",
    "WrappedLaw",
    "l2_laplace_noise",
]
