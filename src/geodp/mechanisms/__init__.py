"""Differentially private mechanisms; each exposes ``scale``, ``randomise`` and ``guarantee``."""

from geodp.mechanisms.base import Guarantee, Mechanism
from geodp.mechanisms.extrinsic import ExtrinsicMeanMechanism, ExtrinsicRelease
from geodp.mechanisms.kng import KNGMechanism
from geodp.mechanisms.laplace import LaplaceMechanism
from geodp.mechanisms.pointwise_shape import PointwiseRelease, PointwiseShapeLaplace
from geodp.mechanisms.riemannian_gaussian import RiemannianGaussianMechanism
from geodp.mechanisms.tangent_gaussian import TangentGaussianMechanism
from geodp.mechanisms.wrapped import WrappedGaussianMechanism, WrappedLaplaceMechanism

__all__ = [
    "Guarantee",
    "Mechanism",
    "LaplaceMechanism",
    "KNGMechanism",
    "TangentGaussianMechanism",
    "WrappedLaplaceMechanism",
    "WrappedGaussianMechanism",
    "RiemannianGaussianMechanism",
    "ExtrinsicMeanMechanism",
    "ExtrinsicRelease",
    "PointwiseShapeLaplace",
    "PointwiseRelease",
]
