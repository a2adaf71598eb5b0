"""geodp — differential privacy on Riemannian manifolds."""

from geodp import calibration, manifolds, models, sensitivity
from geodp.errors import GeodpError, PrivacyLeakWarning
from geodp.frechet import frechet_mean

__version__ = "0.1.0"

__all__ = [
    "GeodpError",
    "PrivacyLeakWarning",
    "calibration",
    "frechet_mean",
    "manifolds",
    "models",
    "sensitivity",
    "__version__",
]
