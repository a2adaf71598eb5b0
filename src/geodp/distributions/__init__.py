"""Samplers: exact wherever MATH.md §5 gives a method."""

from geodp.distributions.base import Distribution, FlatChartDistribution
from geodp.distributions.gaussian import TangentGaussian
from geodp.distributions.laplace import RiemannianLaplace, l2_laplace_noise

__all__ = ["Distribution", "FlatChartDistribution", "RiemannianLaplace", "TangentGaussian", "l2_laplace_noise"]
