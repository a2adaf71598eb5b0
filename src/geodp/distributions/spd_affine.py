"""The Riemannian Laplace law on affine-invariant SPD(k) (Hajri et al. 2016; docs/math.md §5).

``X = η^½ U diag(e^r) Uᵀ η^½`` with ``U`` Haar on O(k) and ``r ∈ R^k`` of density
``∝ exp(−|r|/σ) Π_{i<j} sinh(|r_i − r_j|/2)``; ``ρ(η, X) = |r|``. Exact draws: propose
``S ∈ Sym(k)`` from an isotropic law (its eigenvectors are Haar and independent of its eigenvalues
``r``), accept on ``r`` alone, return ``η^½ Exp(S) η^½``. The eigenvalue law is normalisable iff
``σ < σ_max(k) = 1/c_k``, ``c_k = ½√(k(k²−1)/3)``; restricted to ``|r| ≤ t_max`` it always is.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from geodp.distributions.base import rejection_sample
from geodp.distributions.mcmc import MCMCResult, random_walk_metropolis
from geodp.errors import AssumptionError
from geodp.manifolds import _matrix as mf
from geodp.manifolds.euclidean import Euclidean
from geodp.validation import as_generator, check_positive

__all__ = ["spd_laplace_scale_limit", "SPDEigenvalueLaw"]

_PILOT = 20_000


def spd_laplace_scale_limit(k: int) -> float:
    """``σ_max(k) = 2/√(k(k²−1)/3)``: the AI-SPD Laplace is normalisable iff ``σ < σ_max``
    (``inf`` for k = 1).

    Examples
    --------
    >>> round(spd_laplace_scale_limit(2), 12) == round(2 ** 0.5, 12)
    True
    """
    c = _c(k)
    return math.inf if c == 0 else 1.0 / c


def _c(k: int) -> float:
    return 0.5 * math.sqrt(k * (k * k - 1) / 3.0)


def _pair_gaps(r):
    i, j = np.triu_indices(r.shape[-1], 1)
    return np.abs(r[..., i] - r[..., j])


class SPDEigenvalueLaw:
    """The law of ``r`` (log-eigenvalues of ``η^-½ X η^-½``), optionally with ``|r| ≤ t_max``.

    Parameters
    ----------
    k : int
    scale : float
        σ > 0.
    t_max : float, default inf

    Attributes
    ----------
    acceptance_rate : float
        Acceptance of the exact rejection sampler, estimated once by a fixed-seed pilot of
        20,000 proposals (it depends only on (k, σ, t_max), never on data).

    Examples
    --------
    >>> law = SPDEigenvalueLaw(2, scale=0.3)
    >>> S = law.sample_symmetric(5, rng=0)
    >>> S.shape, bool(law.acceptance_rate > 0.5)
    ((5, 2, 2), True)
    """

    def __init__(self, k: int, scale, t_max=math.inf):
        self.k = int(k)
        self.scale = check_positive(scale, "scale")
        self.t_max = float(t_max)
        self.c = _c(self.k)
        self.dim = self.k * (self.k + 1) // 2
        rate = 1.0 / self.scale - self.c
        if math.isinf(self.t_max) and rate <= 0:
            raise AssumptionError(
                f"the affine-invariant SPD({self.k}) Laplace with scale={self.scale!r} is not "
                f"normalisable: it needs scale < sigma_max={spd_laplace_scale_limit(self.k)!r}. "
                "Truncate it to a ball or use a smaller scale."
            )
        self._gamma_scale = 1.0 / rate if rate > 0 else math.nan
        _, log_acc = self._propose(_PILOT, np.random.default_rng(0))
        self.acceptance_rate = float(np.mean(np.exp(log_acc)))

    def log_density(self, r):
        """Unnormalised log-density of ``r`` (``−inf`` beyond ``t_max``)."""
        r = np.asarray(r, dtype=float)
        norm = np.linalg.norm(r, axis=-1)
        gaps = _pair_gaps(r)
        with np.errstate(divide="ignore"):
            # log sinh(g/2) = g/2 + log(1 − e^(−g)) − log 2
            value = -norm / self.scale + np.sum(gaps / 2 + np.log(-np.expm1(-gaps)) - math.log(2.0), axis=-1)
        return np.where(norm <= self.t_max, value, -np.inf)

    def _propose(self, m, rng):
        """Isotropic symmetric proposals ``S`` and their log acceptance probabilities."""
        direction = rng.standard_normal((m, self.dim))
        direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
        if math.isfinite(self._gamma_scale):
            t = rng.gamma(self.dim, self._gamma_scale, size=m)
            tilt = -self.c * t  # exp(−|r|/σ) / exp(−(1/σ − c)|r|)
        else:
            t = self.t_max * rng.random(m) ** (1.0 / self.dim)
            tilt = -t / self.scale - max(0.0, self.c - 1.0 / self.scale) * self.t_max
        S = mf.invvecd(t[:, None] * direction, self.k)
        gaps = _pair_gaps(np.linalg.eigvalsh(S))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(gaps > 0, -np.expm1(-gaps) / np.where(gaps > 0, gaps, 1.0), 1.0)
        log_acc = tilt + np.sum(np.log(ratio) + gaps / 2, axis=-1)
        return S, np.where(t <= self.t_max, np.minimum(log_acc, 0.0), -np.inf)

    def sample_symmetric(self, size: int, rng=None):
        """Exact draws of ``S ∈ Sym(k)`` with eigenvalues ``r`` from the law and Haar eigenvectors."""
        draws, _ = rejection_sample(self._propose, size, (self.k, self.k), self.acceptance_rate, as_generator(rng),
                                    max_batch=500_000)
        return draws

    def sample_symmetric_mcmc(self, size: int, rng=None, *, burn_in=10_000, thinning=100) -> tuple[np.ndarray, MCMCResult]:
        """Approximate draws: MH on ``r ∈ R^k`` (O(k²) per step), ``U`` Haar (exact)."""
        rng = as_generator(rng)
        space = Euclidean(self.k)
        start = np.zeros((size, self.k)) + np.linspace(-1e-3, 1e-3, self.k) * min(self.scale, self.t_max)
        result = random_walk_metropolis(
            space, self.log_density, start, burn_in=burn_in, thinning=thinning,
            step_size=min(self.scale, self.t_max), rng=rng,
        )
        r = result.samples[0]
        U = stats.ortho_group.rvs(self.k, size=size, random_state=rng).reshape(size, self.k, self.k)
        return mf.from_eig(r, U), result
