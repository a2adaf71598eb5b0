"""scikit-learn–style private estimators."""

from geodp.models.frechet_mean import PrivateFrechetMean
from geodp.models.report import CuratorDiagnostics, PrivacyReport

__all__ = ["PrivateFrechetMean", "PrivacyReport", "CuratorDiagnostics"]
