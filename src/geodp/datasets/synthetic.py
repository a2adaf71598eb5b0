"""Synthetic data generators of the papers' simulations (one function per paper design).

* :func:`wishart_in_ball` — R21 supp. A.2.1 and S22 supp. §2.3.1: Wishart ``W(I/k, df)`` draws on
  SPD(k), kept only inside the affine-invariant ball ``B_r(I)`` (redrawn otherwise).
* :func:`polar_cap` — R21 supp. A.3.1 and S22 supp. §2.4.1: points on the unit sphere ``S^d`` with
  polar angle uniform on ``[0, r]`` from the north pole and a uniform direction (concentrated near
  the pole).
* :func:`eigenvalue_design` — U23 §6.1: ``E diag(λ) Eᵀ`` on SPD(k) with eigenvalues uniform on
  ``[e^(-r), e^r]`` and a Haar-distributed rotation ``E`` (inside the ball ``B_(√k r)(I)``).

Every generator takes an explicit ``rng`` (seed, Generator or None) and never touches numpy's
global state.
"""

from __future__ import annotations

import numpy as np

from geodp.errors import InvalidParameterError
from geodp.validation import as_generator

__all__ = ["eigenvalue_design", "polar_cap", "wishart_in_ball"]


def _count(n, name="n") -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InvalidParameterError(f"{name} must be an integer >= 1, got {n!r}")
    return int(n)


def wishart_in_ball(n: int, k: int = 2, *, radius: float = 1.5, df: int | None = None, rng=None) -> np.ndarray:
    """``n`` draws of the Wishart ``W(I_k/k, df)`` inside the affine-invariant ball ``B_r(I_k)``.

    R21 supp. A.2.1 (and S22 supp. §2.3.1): draw ``X ~ W(I/k, df)`` (mean ``(df/k) I``; with the
    papers' ``df = k`` it is centred at ``I``) and keep it if ``ρ(X, I) = ‖log X‖_F < r``,
    redrawing otherwise. The papers use ``k = 2``, ``r = 1.5``, ``df = 2``.

    Parameters
    ----------
    n : int
        Number of matrices.
    k : int
        Matrix size.
    radius : float
        The ball's radius ``r`` (affine-invariant distance to the identity).
    df : int, optional
        Degrees of freedom, an integer ``>= k`` (default ``k``).
    rng : seed, numpy.random.Generator or None

    Returns
    -------
    numpy.ndarray, shape (n, k, k)

    Raises
    ------
    InvalidParameterError
        For a bad ``n``, ``k``, ``df`` or ``radius``, or a ball so small that fewer than one
        draw in 10⁴ lands in it.

    Examples
    --------
    >>> from geodp.manifolds import SPD
    >>> X = wishart_in_ball(200, rng=0)
    >>> X.shape
    (200, 2, 2)
    >>> bool(SPD(2).dist(np.eye(2), X).max() < 1.5)
    True
    """
    n, k = _count(n), _count(k, "k")
    df = k if df is None else df
    if isinstance(df, bool) or not isinstance(df, (int, np.integer)) or df < k:
        raise InvalidParameterError(f"df must be an integer >= k = {k} (a full-rank Wishart), got {df!r}")
    radius = float(radius)
    if not (np.isfinite(radius) and radius > 0):
        raise InvalidParameterError(f"radius must be a finite number > 0, got {radius!r}")
    rng = as_generator(rng)
    kept: list[np.ndarray] = []
    have, drawn = 0, 0
    batch = max(64, 2 * n)
    while have < n:
        G = rng.standard_normal((batch, k, int(df))) / np.sqrt(k)  # columns ~ N(0, I/k)
        X = G @ np.swapaxes(G, -1, -2)
        X = 0.5 * (X + np.swapaxes(X, -1, -2))
        w = np.linalg.eigvalsh(X)
        with np.errstate(divide="ignore", invalid="ignore"):
            dist = np.sqrt(np.sum(np.log(w) ** 2, axis=-1))
        inside = X[np.isfinite(dist) & (dist < radius)]
        kept.append(inside)
        have += len(inside)
        drawn += batch
        if have == 0 and drawn >= 10_000:
            raise InvalidParameterError(f"no Wishart draw out of {drawn} lies within radius {radius} of the identity")
    return np.concatenate(kept)[:n]


def polar_cap(n: int, *, radius: float = np.pi / 8, dim: int = 2, rng=None) -> np.ndarray:
    """``n`` points of the unit sphere ``S^dim`` within geodesic distance ``radius`` of the north pole.

    R21 supp. A.3.1 (and S22 supp. §2.4.1): the polar angle ``θ`` is uniform on ``[0, r]`` and the
    direction uniform, so the points crowd towards the pole ``e_{dim+1}`` (not uniform on the
    cap). The papers use ``dim = 2``, ``r = π/8``.

    Parameters
    ----------
    n : int
    radius : float
        The cap's radius, in ``(0, π]``.
    dim : int
        Dimension of the sphere (points live in ``R^(dim+1)``).
    rng : seed, numpy.random.Generator or None

    Returns
    -------
    numpy.ndarray, shape (n, dim + 1)

    Examples
    --------
    >>> X = polar_cap(1000, rng=0)
    >>> X.shape
    (1000, 3)
    >>> bool(np.all(np.arccos(X[:, 2]) <= np.pi / 8 + 1e-12))
    True
    >>> round(float(np.mean(np.arccos(np.clip(X[:, 2], -1, 1)))) / (np.pi / 16), 1)  # mean angle r/2
    1.0
    """
    n, dim = _count(n), _count(dim, "dim")
    radius = float(radius)
    if not (np.isfinite(radius) and 0 < radius <= np.pi):
        raise InvalidParameterError(f"radius must be in (0, π], got {radius!r}")
    rng = as_generator(rng)
    theta = rng.uniform(0.0, radius, size=n)
    direction = rng.standard_normal((n, dim))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    return np.concatenate([np.sin(theta)[:, None] * direction, np.cos(theta)[:, None]], axis=1)


def eigenvalue_design(n: int, k: int, *, r: float = 0.25, rng=None) -> np.ndarray:
    """``n`` SPD(k) matrices ``E diag(λ) Eᵀ``, ``λ_i`` uniform on ``[e^(-r), e^r]``, ``E`` Haar on O(k).

    U23 §6.1's synthetic design (with ``n = 500``, ``r = 1/4``). Every matrix lies in the
    log-Euclidean (and affine-invariant) ball ``B_(√k·r)(I)``: ``‖Log X‖_F = (Σ ln² λ_i)^½ ≤ √k·r``,
    so U23 uses the public radius ``√k·r`` and the sensitivity ``2√k·r/n``.

    Parameters
    ----------
    n, k : int
        Number and size of the matrices.
    r : float, default 0.25
        Half-width of the log-eigenvalue range, > 0.
    rng : seed, numpy.random.Generator or None

    Returns
    -------
    numpy.ndarray, shape (n, k, k)

    Examples
    --------
    >>> X = eigenvalue_design(100, 5, rng=0)
    >>> X.shape
    (100, 5, 5)
    >>> logs = np.log(np.linalg.eigvalsh(X))
    >>> bool(np.all(np.abs(logs) <= 0.25 + 1e-12)), bool(np.all(np.linalg.norm(logs, axis=1) <= 5 ** 0.5 / 4))
    (True, True)
    """
    n, k = _count(n), _count(k, "k")
    r = float(r)
    if not (np.isfinite(r) and r > 0):
        raise InvalidParameterError(f"r must be a finite number > 0, got {r!r}")
    rng = as_generator(rng)
    lam = rng.uniform(np.exp(-r), np.exp(r), size=(n, k))
    # Haar rotation: QR of a Gaussian matrix with the signs of R's diagonal moved into Q (Mezzadri 2007).
    q, upper = np.linalg.qr(rng.standard_normal((n, k, k)))
    q = q * np.sign(np.diagonal(upper, axis1=-2, axis2=-1))[:, None, :]
    X = (q * lam[:, None, :]) @ np.swapaxes(q, -1, -2)
    return 0.5 * (X + np.swapaxes(X, -1, -2))
