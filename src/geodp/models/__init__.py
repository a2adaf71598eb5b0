"""scikit-learn–style private estimators."""

from geodp.models.frechet_mean import PrivateFrechetMean
from geodp.models.geodesic_regression import PrivateGeodesicRegression
from geodp.models.geometric_median import PrivateGeometricMedian
from geodp.models.linear_regression import PrivateLinearRegression
from geodp.models.mdm import PrivateMDM
from geodp.models.principal_geodesics import PrivatePrincipalGeodesics
from geodp.models.report import CuratorDiagnostics, PrivacyReport, RegressionDiagnostics

__all__ = [
    "PrivateFrechetMean",
    "PrivateGeodesicRegression",
    "PrivateGeometricMedian",
    "PrivateLinearRegression",
    "PrivateMDM",
    "PrivatePrincipalGeodesics",
    "PrivacyReport",
    "CuratorDiagnostics",
    "RegressionDiagnostics",
]
