"""U23's mechanisms beside geodp's on SPD(k) with the log-Euclidean metric: the closed-form expected
errors, the extrinsic analytic-Gaussian baseline and U23 B.1's Metropolis–Hastings for the Laplace.

U23 samples the Laplace with a 50,000-step MCMC (B.1); geodp draws it exactly.
:func:`u23_mcmc_laplace` runs a U23-style chain only as the timing baseline of Fig. 4.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from geodp.calibration import gaussian_sigma
from geodp.errors import InvalidDataError, InvalidParameterError, NumericalWarning, PrivacyLeakWarning
from geodp.manifolds import SPD
from geodp.manifolds import matrix_functions as mf
from geodp.manifolds.symmetric_coordinates import invvecd, vecd
from geodp.sensitivity import extrinsic_mean_sensitivity
from geodp.validation import as_generator, check_positive

__all__ = ["extrinsic_gaussian_release", "u23_expected_errors", "u23_mcmc_laplace"]


def u23_expected_errors(k: int, epsilon: float, delta: float, sensitivity: float) -> dict:
    """Closed-form expected log-Euclidean errors ``E ρ_LE(f(D), A(D))`` on SPD(k).

    Laplace at σ: ``E σ·Gamma(d, 1) = σ d``; tangent Gaussian at σ: ``E σ·χ_d =
    σ √2 Γ((d+1)/2)/Γ(d/2)`` (docs/math.md §4–5), ``d = k(k+1)/2``.

    Parameters
    ----------
    k : int
    epsilon, delta, sensitivity : float

    Returns
    -------
    dict
        Keys ``"laplace"`` (σ = Δ/ε), ``"laplace_u23"`` (σ = 2Δ/ε), ``"tang_analytic"``,
        ``"tang_classical"`` (the latter only for ε < 1).

    Examples
    --------
    >>> e = u23_expected_errors(30, 0.1, 1e-6, 30 ** 0.5 / 1000)
    >>> round(e["laplace"], 2), round(e["laplace_u23"], 2), round(e["tang_analytic"], 2)
    (25.47, 50.94, 4.29)
    """
    d = k * (k + 1) // 2
    chi = math.sqrt(2.0) * math.exp(math.lgamma((d + 1) / 2) - math.lgamma(d / 2))
    out = {
        "laplace": sensitivity / epsilon * d,
        "laplace_u23": 2.0 * sensitivity / epsilon * d,
        "tang_analytic": gaussian_sigma(epsilon, delta, sensitivity, "analytic") * chi,
    }
    if epsilon < 1:
        out["tang_classical"] = gaussian_sigma(epsilon, delta, sensitivity, "classical") * chi
    return out


def extrinsic_gaussian_release(X, *, epsilon, delta, radius, as_published=False, rng=None, size=None):
    """The extrinsic analytic-Gaussian baseline of U23 Fig. 1 (bottom) on SPD(k).

    Records are clipped into the log-Euclidean ball ``B_radius(I)``, which lies in the Frobenius
    ball of radius ``e^radius − 1`` around ``I`` (R21 Prop. 1), so the **ambient** mean moves by at
    most ``Δ_E = 2(e^radius − 1)/n``; Gaussian noise ``N(0, σ² I_d)`` in the Frobenius-isometric
    coordinates ``vecd``, σ from the analytic calibration (Balle & Wang 2018). The output is a
    symmetric matrix, not necessarily positive definite.

    Parameters
    ----------
    X : array_like, shape (n, k, k)
        SPD records (private).
    epsilon, delta : float
        (ε, δ), δ in (0, 1).
    radius : float
        Public log-Euclidean radius of the data ball around the identity.
    as_published : bool, default False
        Add the noise to the log-Euclidean Fréchet mean instead (U23 §6.1, R21 §5): ``Δ_E`` does
        not bound that mean's Frobenius sensitivity, so this has no DP proof; it warns with
        :class:`~geodp.errors.PrivacyLeakWarning`. For reproductions only.
    rng : seed, numpy.random.Generator or None
    size : int, optional
        Independent releases (each spends the budget again).

    Returns
    -------
    numpy.ndarray, shape (k, k) or (size, k, k)

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.datasets import eigenvalue_design
    >>> X = eigenvalue_design(500, 3, rng=0)
    >>> out = extrinsic_gaussian_release(X, epsilon=0.5, delta=1e-6, radius=3 ** 0.5 / 4, rng=1)
    >>> out.shape, bool(np.allclose(out, out.T))
    ((3, 3), True)
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 3 or X.shape[1] != X.shape[2]:
        raise InvalidDataError(f"X must have shape (n, k, k), got {X.shape}")
    n, k = X.shape[0], X.shape[1]
    space = SPD(k, metric="log-euclidean")
    radius = check_positive(radius, "radius")
    sensitivity = extrinsic_mean_sensitivity(space, radius, n)
    sigma = gaussian_sigma(epsilon, delta, sensitivity, "analytic")
    clipped, _ = space.clip_to_ball(X, np.eye(k), radius)
    if as_published:
        warnings.warn(
            "as_published=True adds extrinsic Gaussian noise calibrated to the ambient-mean "
            "sensitivity to the log-Euclidean Fréchet mean (U23 §6.1): no DP proof; for "
            "reproductions only.",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        base = space.from_coordinates(space.to_coordinates(clipped).mean(axis=0))
    else:
        base = clipped.mean(axis=0)
    rng = as_generator(rng)
    shape = (() if size is None else (int(size),)) + (k * (k + 1) // 2,)
    return base + invvecd(sigma * rng.standard_normal(shape), k)


def u23_mcmc_laplace(mean, sigma, n_steps, *, n_chains=1, checkpoints=(), start_radius=None, matrix_ops=True, rng=None):
    """U23 B.1's Metropolis–Hastings for the log-Euclidean Laplace ``∝ exp(−ρ_LE(X, M)/σ)``.

    The timing baseline of U23 Fig. 4: started at the identity, proposal ``LN(X_curr, σ² I)``
    (``Exp(Log X_curr + σ·invvecd(N(0, I_d)))``), and, as with geomstats, a matrix exponential
    and logarithm (one ``eigh`` each) per step and chain. geodp itself never needs this: the law
    is an l2-Laplace in the chart and is drawn exactly in one step.

    Parameters
    ----------
    mean : array_like, shape (k, k)
        The footpoint M (SPD).
    sigma : float
        Laplace scale, also the proposal scale (U23 B.1).
    n_steps : int
        Steps per chain (U23: the "burn-in", 10,000–50,000; the last state is the release).
    n_chains : int, default 1
        Independent chains run side by side (batched ``eigh``).
    checkpoints : sequence of int
        Steps after which to record each chain's distance ``ρ_LE(X, M)`` and the elapsed time.
    start_radius : float, optional
        Start at ``Exp(t·u)``, ``u`` a uniform unit direction, ``t = start_radius`` (public), instead
        of the identity. From a start near ``M`` the chain hardly moves: a proposal jumps about
        ``σ√d`` away, accepted with probability about ``exp(−√d)``; U23 B.1 starts "at a random
        point of the manifold".
    matrix_ops : bool, default True
        Run the steps as U23 does, with matrix Exp and Log (for timing). ``False`` runs the same
        Markov chain in the chart ``vecd∘Log`` without them (Log∘Exp is the identity), much faster.
    rng : seed, numpy.random.Generator or None

    Returns
    -------
    dict
        ``"state"`` (n_chains, k, k), ``"acceptance"`` (float), ``"distances"`` {step: array},
        ``"seconds"`` {step: float}.

    Examples
    --------
    >>> import numpy as np
    >>> out = u23_mcmc_laplace(np.eye(2), 0.1, 2000, n_chains=400, checkpoints=(2000,), rng=0)
    >>> out["state"].shape, 0.3 < out["acceptance"] < 0.9
    ((400, 2, 2), True)
    >>> 0.8 < float(out["distances"][2000].mean()) / (0.1 * 3) < 1.2  # E ρ = σ·d, d = 3
    True
    """
    M = np.asarray(mean, dtype=float)
    k = M.shape[-1]
    sigma = check_positive(sigma, "sigma")
    if not isinstance(n_steps, (int, np.integer)) or n_steps < 1:
        raise InvalidParameterError(f"n_steps must be an integer >= 1, got {n_steps!r}")
    rng = as_generator(rng)
    d = k * (k + 1) // 2
    log_mean = mf.logm(M)
    log_x = np.zeros((n_chains, k, k))  # Log I
    if start_radius is not None:
        u = rng.standard_normal((n_chains, d))
        log_x = invvecd(start_radius * u / np.linalg.norm(u, axis=-1, keepdims=True), k)
    if not matrix_ops:  # the same chain in the chart: vecd coordinates
        log_mean, log_x = vecd(log_mean), vecd(log_x)
    dist = np.linalg.norm(log_x - log_mean, axis=(-2, -1))
    checkpoints = set(int(c) for c in checkpoints)
    distances, seconds, accepted = {}, {}, 0
    start = time.perf_counter()
    for step in range(1, int(n_steps) + 1):
        z = rng.standard_normal((n_chains, d))
        if matrix_ops:
            proposal = mf.expm(log_x + sigma * invvecd(z, k))
            with warnings.catch_warnings():  # far proposals at small ε are ill-conditioned; U23's chain rejects them
                warnings.simplefilter("ignore", NumericalWarning)
                log_p = mf.logm(proposal)  # the distance needs Log of the candidate, as geomstats computes it
            dist_p = np.linalg.norm(log_p - log_mean, axis=(-2, -1))
        else:
            log_p = log_x + sigma * z
            dist_p = np.linalg.norm(log_p - log_mean, axis=-1)
        accept = np.log(rng.random(n_chains)) < (dist - dist_p) / sigma
        log_x = np.where(accept.reshape((-1,) + (1,) * (log_x.ndim - 1)), log_p, log_x)
        dist = np.where(accept, dist_p, dist)
        accepted += int(accept.sum())
        if step in checkpoints:
            seconds[step] = time.perf_counter() - start
            distances[step] = dist.copy()
    if not matrix_ops:
        log_x = invvecd(log_x, k)
    return {
        "state": mf.expm(log_x),
        "acceptance": accepted / (n_chains * int(n_steps)),
        "distances": distances,
        "seconds": seconds,
    }
