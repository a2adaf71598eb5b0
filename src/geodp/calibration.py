"""Noise calibration: (ε, δ, Δ) → noise scale (docs/math.md §4)."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr

from geodp.errors import InvalidParameterError
from geodp.validation import check_delta, check_epsilon, check_positive

__all__ = ["laplace_scale", "gaussian_sigma", "analytic_gaussian_delta"]

_GAUSSIAN_METHODS = ("analytic", "classical")


def laplace_scale(epsilon, sensitivity, *, footpoint_invariant: bool) -> float:
    """Scale σ of the Riemannian Laplace law ``∝ exp(−ρ(η, x)/σ)`` for ε-DP (R21 Thm 1).

    Parameters
    ----------
    epsilon : float
        Privacy budget, > 0.
    sensitivity : float
        Global sensitivity Δ of the summary in geodesic distance.
    footpoint_invariant : bool
        True only when the normalising constant cannot depend on the footpoint: the space is
        homogeneous, the law is not truncated, and it is normalisable. Then σ = Δ/ε; otherwise
        σ = 2Δ/ε (the extra factor pays for the ratio of normalisers).

    Returns
    -------
    float

    Examples
    --------
    >>> laplace_scale(0.5, 1.0, footpoint_invariant=True)
    2.0
    >>> laplace_scale(0.5, 1.0, footpoint_invariant=False)
    4.0
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if not isinstance(footpoint_invariant, (bool, np.bool_)):
        raise InvalidParameterError(
            f"footpoint_invariant must be True or False, got {footpoint_invariant!r}."
        )
    return (1.0 if footpoint_invariant else 2.0) * sensitivity / epsilon


def analytic_gaussian_delta(sigma, epsilon, sensitivity) -> float:
    """Exact δ(σ) of the Gaussian mechanism at ε (Balle & Wang 2018, Thm 8).

    ``δ(σ) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)`` — note the minus sign in the second
    argument, which U23 Thm 2.2 prints wrongly (docs/math.md §10.3).

    Examples
    --------
    >>> round(analytic_gaussian_delta(1.0, 1.0, 1.0), 6)
    0.126937
    """
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    return float(ndtr(a - b) - math.exp(epsilon + log_ndtr(-a - b)))


def _analytic_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    def excess(log_sigma: float) -> float:
        return analytic_gaussian_delta(math.exp(log_sigma), epsilon, sensitivity) - delta

    hi = math.log(sensitivity)
    while excess(hi) > 0:
        hi += 1.0
    lo = hi - 1.0
    while excess(lo) <= 0:
        lo -= 1.0
    log_sigma = brentq(excess, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    sigma = math.exp(log_sigma)
    # Round up: the returned σ must satisfy δ(σ) ≤ δ exactly in floating point.
    while analytic_gaussian_delta(sigma, epsilon, sensitivity) > delta:
        sigma = float(np.nextafter(sigma, np.inf)) * (1.0 + 1e-15)
    return sigma


def gaussian_sigma(epsilon, delta, sensitivity, method: str = "analytic") -> float:
    """Standard deviation of the Gaussian mechanism for (ε, δ)-DP with L2 sensitivity Δ.

    Parameters
    ----------
    epsilon : float
        > 0. The classical calibration also needs ε < 1.
    delta : float
        In (0, 1).
    sensitivity : float
        L2 (here: log-Euclidean) sensitivity Δ > 0.
    method : {"analytic", "classical"}, default "analytic"
        ``"analytic"``: the smallest σ with ``δ(σ) ≤ δ`` (Balle & Wang 2018, Thm 8), found by
        bracketing and Brent's method in log σ, then rounded up. ``"classical"``:
        ``σ = Δ √(2 ln(1.25/δ)) / ε`` (Dwork & Roth; U23 Thm 2.1), valid only for ε < 1.

    Returns
    -------
    float

    Examples
    --------
    >>> round(gaussian_sigma(0.5, 1e-6, 1.0), 3)
    8.058
    >>> round(gaussian_sigma(0.5, 1e-6, 1.0, method="classical"), 3)
    10.598
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    sensitivity = check_positive(sensitivity, "sensitivity")
    if method not in _GAUSSIAN_METHODS:
        raise InvalidParameterError(f"method must be one of {_GAUSSIAN_METHODS}, got {method!r}.")
    if method == "classical":
        if epsilon >= 1:
            raise InvalidParameterError(
                f"the classical Gaussian calibration needs epsilon < 1, got {epsilon!r}; "
                "use method='analytic', which is valid for every epsilon."
            )
        return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
    return _analytic_sigma(epsilon, delta, sensitivity)
