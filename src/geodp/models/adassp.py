"""AdaSSP (Wang 2018, Alg. 2): least squares from Gaussian-perturbed sufficient statistics with a
privately chosen ridge, calibrated through Gaussian differential privacy (docs/math.md §9.2).

Three Gaussian releases of the normalised records' moments, each of sensitivity ``Δ_k`` under
replace-one adjacency (``B`` = max ‖x̃‖, ``Y`` = max ‖ỹ‖ over the public bounds):

1. ``λ_min(G)`` of the Gram ``G = (1/n) Σ x̃_i x̃_iᵀ``: ``Δ_1 = B²/n`` (Weyl);
2. ``G`` itself, noise symmetric and isotropic in the Frobenius norm: ``Δ_2 = √2·B²/n``;
3. ``b = (1/n) Σ x̃_i ỹ_iᵀ``: ``Δ_3 = 2·B·Y/n`` (Frobenius).

Each gets ``σ_k = √3·Δ_k/μ``, so each is ``(μ/√3)``-GDP and the three compose to exactly μ-GDP
(Dong, Roth & Su 2022), with μ the largest whose privacy curve meets (ε, δ). The paper's even
split of (ε, δ) in thirds becomes the even split of μ²; the ridge
``λ = max(0, η − λ̃_min)`` and the estimate ``(Ĝ + λI)⁻¹ b̂`` are post-processing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from geodp.calibration import gaussian_sigma
from geodp.validation import check_delta, check_epsilon

__all__ = [
    "RIDGE_FAILURE",
    "AdasspCalibration",
    "adassp_calibration",
    "adassp_release",
    "perturbed_statistics",
    "symmetric_noise",
]

#: ρ of Wang (2018, Alg. 2): the probability allowed for the Gram noise to exceed the ridge
#: threshold η, as in the paper's experiments.
RIDGE_FAILURE = 0.05


@dataclass(frozen=True)
class AdasspCalibration:
    """The public constants of one AdaSSP release (all from ε, δ, n and the bounds).

    Attributes
    ----------
    epsilon, delta : float
    mu : float
        The release is μ-GDP; μ-GDP implies (ε, δ)-DP.
    sensitivities : tuple of 3 floats
        Δ of λ_min(G), of G (Frobenius) and of b (Frobenius), in normalised units, averaged over n.
    sigmas : tuple of 3 floats
        The Gaussian noise scale of each release, ``√3·Δ_k/μ``.
    shift : float
        ``σ_1·√(ln(6/δ))``: λ̃_min is shifted down by this so that it under-estimates λ_min(G)
        with high probability (Wang 2018, Alg. 2, step 2).
    eta : float
        The ridge threshold ``σ_2·√(q·ln(2q²/ρ))``: with probability ≥ 1 − ρ the operator norm of
        the Gram noise is below it (Wang 2018, Alg. 2, step 3).

    Examples
    --------
    >>> cal = adassp_calibration(1.0, 1e-6, n=1000, q=3, x_norm_max=1.2, y_norm_max=0.5)
    >>> round(cal.mu, 4), round(math.hypot(*(d / s for d, s in zip(cal.sensitivities, cal.sigmas))), 4)
    (0.2367, 0.2367)
    """

    epsilon: float
    delta: float
    mu: float
    sensitivities: tuple[float, float, float]
    sigmas: tuple[float, float, float]
    shift: float
    eta: float


def adassp_calibration(epsilon, delta, *, n: int, q: int, x_norm_max: float, y_norm_max: float) -> AdasspCalibration:
    """Calibrate AdaSSP for (ε, δ)-DP on ``n`` records with ``‖x̃‖ ≤ x_norm_max`` (``q``
    coordinates, the intercept's included) and ``‖ỹ‖ ≤ y_norm_max``.

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float
        In (0, 1).
    n, q : int
        Number of records (public) and of design coordinates.
    x_norm_max, y_norm_max : float
        Public bounds on the Euclidean norm of one normalised design row and response.

    Returns
    -------
    AdasspCalibration

    Examples
    --------
    >>> cal = adassp_calibration(2.0, 1e-6, n=500, q=2, x_norm_max=1.0, y_norm_max=1.0)
    >>> [round(s * 500, 3) for s in cal.sensitivities]    # B², √2·B², 2·B·Y before dividing by n
    [1.0, 1.414, 2.0]
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta, allow_zero=False)
    mu = 1.0 / gaussian_sigma(epsilon, delta, 1.0)  # the Gaussian mechanism of noise 1/μ meets (ε, δ)
    b2 = x_norm_max * x_norm_max
    sensitivities = (b2 / n, math.sqrt(2.0) * b2 / n, 2.0 * x_norm_max * y_norm_max / n)
    sigmas = tuple(math.sqrt(3.0) * s / mu for s in sensitivities)
    return AdasspCalibration(
        epsilon=epsilon,
        delta=delta,
        mu=mu,
        sensitivities=sensitivities,
        sigmas=sigmas,
        shift=sigmas[0] * math.sqrt(math.log(6.0 / delta)),
        eta=sigmas[1] * math.sqrt(q * math.log(2.0 * q * q / RIDGE_FAILURE)),
    )


def symmetric_noise(q: int, rng) -> np.ndarray:
    """A ``(q, q)`` symmetric matrix whose coordinates ``(E_ii, √2·E_ij for i < j)`` are iid
    standard normal: isotropic Gaussian noise for the Frobenius norm on symmetric matrices
    (diagonal variance 1, off-diagonal 1/2).

    Examples
    --------
    >>> E = symmetric_noise(3, np.random.default_rng(0))
    >>> bool(np.array_equal(E, E.T))
    True
    """
    z = rng.standard_normal((q, q))
    return (z + z.T) / 2.0


def perturbed_statistics(gram, target, cal: AdasspCalibration, rng):
    """The three Gaussian releases of AdaSSP: ``(λ̃_min, Ĝ, b̂)``.

    ``λ̃_min = max(λ_min(G) + σ_1·Z − shift, 0)``, ``Ĝ = G + σ_2·E`` with E symmetric
    (:func:`symmetric_noise`) and ``b̂ = b + σ_3·Z'``.

    Parameters
    ----------
    gram : numpy.ndarray, shape (q, q)
        ``(1/n) Σ x̃_i x̃_iᵀ``.
    target : numpy.ndarray, shape (q, d)
        ``(1/n) Σ x̃_i ỹ_iᵀ``.
    cal : AdasspCalibration
    rng : numpy.random.Generator

    Returns
    -------
    lam_private : float
    gram_private : numpy.ndarray, shape (q, q)
    target_private : numpy.ndarray, shape (q, d)

    Examples
    --------
    >>> cal = adassp_calibration(1.0, 1e-6, n=100, q=2, x_norm_max=1.0, y_norm_max=0.5)
    >>> lam, gram, target = perturbed_statistics(np.eye(2), np.ones((2, 1)), cal, np.random.default_rng(0))
    >>> bool(np.array_equal(gram, gram.T)), target.shape
    (True, (2, 1))
    """
    lam_min = float(np.linalg.eigvalsh(gram)[0])
    lam_private = max(lam_min + cal.sigmas[0] * float(rng.standard_normal()) - cal.shift, 0.0)
    gram_private = gram + cal.sigmas[1] * symmetric_noise(gram.shape[0], rng)
    target_private = target + cal.sigmas[2] * rng.standard_normal(target.shape)
    return lam_private, gram_private, target_private


def adassp_release(gram, target, cal: AdasspCalibration, rng):
    """The private part of AdaSSP: ``(θ, λ)`` from the exact moments of the normalised records
    (:func:`perturbed_statistics`, then post-processing).

    Parameters
    ----------
    gram : numpy.ndarray, shape (q, q)
        ``(1/n) Σ x̃_i x̃_iᵀ``.
    target : numpy.ndarray, shape (q, d)
        ``(1/n) Σ x̃_i ỹ_iᵀ``.
    cal : AdasspCalibration
    rng : numpy.random.Generator

    Returns
    -------
    theta : numpy.ndarray, shape (q, d)
        ``(Ĝ + λI)⁻¹ b̂`` (the least-squares solution if the matrix is singular: nothing raises).
    ridge : float
        The ridge ``λ = max(0, η − λ̃_min)``, post-processing of λ̃_min (publishable).

    Examples
    --------
    >>> cal = adassp_calibration(1e6, 1e-6, n=10**6, q=2, x_norm_max=1.2, y_norm_max=0.5)
    >>> gram, target = np.array([[1.0, 0.0], [0.0, 0.1]]), np.array([[0.2], [0.03]])
    >>> theta, ridge = adassp_release(gram, target, cal, np.random.default_rng(0))
    >>> np.round(theta.ravel(), 3), ridge
    (array([0.2, 0.3]), 0.0)
    """
    lam_private, gram_private, target_private = perturbed_statistics(gram, target, cal, rng)
    ridge = max(0.0, cal.eta - lam_private)
    q = gram.shape[0]
    theta = np.linalg.lstsq(gram_private + ridge * np.eye(q), target_private, rcond=None)[0]
    return theta, ridge
