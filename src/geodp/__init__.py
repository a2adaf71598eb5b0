"""geodp — differential privacy on Riemannian manifolds."""

from geodp import calibration, manifolds, regression, sensitivity
from geodp.errors import GeodpError, PrivacyLeakWarning
from geodp.frechet import frechet_mean

__version__ = "0.1.0"


def __getattr__(name):
    # geodp.models (and geodp.domain, which uses it) import scikit-learn (seconds): load them on
    # first use, not with the package.
    if name in ("models", "domain"):
        import importlib

        return importlib.import_module(f"geodp.{name}")
    raise AttributeError(f"module 'geodp' has no attribute {name!r}")


__all__ = [
    "GeodpError",
    "PrivacyLeakWarning",
    "calibration",
    "domain",
    "frechet_mean",
    "manifolds",
    "models",
    "regression",
    "sensitivity",
    "__version__",
]
