"""scikit-learn–style private estimators."""

from geodp.models.frechet_mean import PrivateFrechetMean
from geodp.models.report import PrivacyReport

__all__ = ["PrivateFrechetMean", "PrivacyReport"]
