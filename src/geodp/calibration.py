"""Noise calibration: (ε, δ, Δ) → noise scale (docs/math.md §4)."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import erfcx, log_ndtr, ndtr

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
        raise InvalidParameterError(f"footpoint_invariant must be True or False, got {footpoint_invariant!r}.")
    return (1.0 if footpoint_invariant else 2.0) * sensitivity / epsilon


#: Relative error budget of :func:`analytic_gaussian_delta`. Against 60-digit references the
#: evaluation is accurate to < 1e-13 relative for ε ∈ [1e-3, 50], δ(σ) down to 1e-60 (the test
#: suite checks it); the calibration demands this much slack on top.
_DELTA_EVAL_REL_ERROR = 1e-11
#: The root of δ(σ) = δ is padded by this relative step (and by doubling steps until the slack holds).
_SIGMA_PAD = 1e-9

_SQRT2 = math.sqrt(2.0)
_SQRT_HALF_PI = math.sqrt(math.pi / 2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(24)


def _mills(x):
    """Mills ratio ``R(x) = Φ(−x)/φ(x) = √(π/2) erfcx(x/√2)``, relative accuracy a few ulp."""
    return _SQRT_HALF_PI * erfcx(np.asarray(x, dtype=float) / _SQRT2)


def analytic_gaussian_delta(sigma, epsilon, sensitivity) -> float:
    """Exact δ(σ) of the Gaussian mechanism at ε (Balle & Wang 2018, Thm 8).

    ``δ(σ) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)`` — note the minus sign in the second
    argument, which U23 Thm 2.2 prints wrongly (docs/math.md §10.3).

    Evaluated without the cancellation of the two Φ terms: with ``u = εσ/Δ − Δ/(2σ)``,
    ``v = εσ/Δ + Δ/(2σ)`` (so ``v² − u² = 2ε``) and the Mills ratio ``R = Φ(−·)/φ``,
    ``δ = φ(u)·(R(u) − R(v))``, and ``R(u) − R(v) = ∫_u^v (1 − tR(t)) dt`` (24-point
    Gauss–Legendre) when the two ratios are close. The direct formula loses up to 1e-9 relative
    at small ε; this form stays below 1e-13 (checked against 60-digit arithmetic in the tests).

    Examples
    --------
    >>> round(analytic_gaussian_delta(1.0, 1.0, 1.0), 6)
    0.126937
    """
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    u, v = b - a, b + a
    if u < -30.0:  # Φ(−u) and δ round to 1: nothing cancels (and erfcx(u/√2) would soon overflow)
        return float(ndtr(-u) - math.exp(epsilon + log_ndtr(-v)))
    ru, rv = float(_mills(u)), float(_mills(v))
    if rv <= 0.5 * ru:
        diff = ru - rv
    else:
        t = u + a * (_GL_NODES + 1.0)  # nodes on [u, v]; v − u = 2a
        diff = a * float(np.sum(_GL_WEIGHTS * (1.0 - t * _mills(t))))
    return float(math.exp(-0.5 * u * u - _LOG_SQRT_2PI) * diff)


def _analytic_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    def excess(log_sigma: float) -> float:
        return analytic_gaussian_delta(math.exp(log_sigma), epsilon, sensitivity) - delta

    hi = math.log(sensitivity)
    while excess(hi) > 0:
        hi += 1.0
    lo = hi - 1.0
    while excess(lo) <= 0:
        lo -= 1.0
    sigma = math.exp(brentq(excess, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500))
    # Round up with a margin: the root is only as good as the evaluation of δ(σ), so step σ up
    # (relative 1e-9, doubling) until δ(σ) holds with a slack larger than the evaluation error.
    step = _SIGMA_PAD
    sigma *= 1.0 + step
    while analytic_gaussian_delta(sigma, epsilon, sensitivity) * (1.0 + _DELTA_EVAL_REL_ERROR) > delta:
        step *= 2.0
        sigma *= 1.0 + step
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
        bracketing and Brent's method in log σ, then padded up by a relative 1e-9 (more if
        needed) so that the evaluated ``δ(σ)`` stays below δ with a slack that covers its
        evaluation error: within 1e-6 relative of the exact root, never below it. ``"classical"``:
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
