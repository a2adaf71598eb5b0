"""The Riemannian Laplace law on affine-invariant SPD(k) (Hajri et al. 2016; docs/math.md §5).

``X = η^½ U diag(e^r) Uᵀ η^½`` with ``U`` Haar on O(k) and ``r ∈ R^k`` of density
``∝ exp(−|r|/σ) Π_{i<j} sinh(|r_i − r_j|/2)``; ``ρ(η, X) = |r|``. The eigenvalue law is
normalisable iff ``σ < σ_max(k) = 1/c_k``, ``c_k = ½√(k(k²−1)/3)``; restricted to ``|r| ≤ t_max``
it always is.

**Exact draws** (docs/math.md §5, "the Gaussian-gap envelope"). With ``y_ij = |r_i − r_j|/2``,
``sinh y = y · (sinh y / y)`` and ``f(y) = log(sinh y / y) ≤ min(y²/6, y)``; since
``Σ y_ij² = (k|r|² − (Σ r_i)²)/4 ≤ k|r|²/4`` and ``Σ y_ij ≤ c_k |r|``,

    Π sinh(y_ij) ≤ Π y_ij · exp(q(|r|)),   q(ρ) = min(kρ²/24, c_k ρ).

The right side times ``exp(−|r|/σ)`` is the eigenvalue law of an isotropic ``S ∈ Sym(k)`` (its
eigenvalues carry the Vandermonde ``Π |r_i − r_j|``, its eigenvectors are Haar and independent)
whose norm ``ρ = |vecd S|`` has density ``∝ exp(ψ(ρ))``, ``ψ = (d − 1) log ρ − ρ/σ + q(ρ)``,
``d = k(k+1)/2``. ``ρ`` is drawn from a piecewise-exponential hat over ``ψ`` (tangents of the
concave ``(d − 1) log ρ − ρ/σ`` plus chords of ``q``, which is convex on each side of its kink),
the direction uniformly, and ``S`` is accepted with probability
``exp(ψ(ρ) − hat(ρ)) · exp(Σ f(y_ij) − q(ρ)) ≤ 1``. The acceptance is at least the public
:attr:`SPDEigenvalueLaw.acceptance_rate`, from ``log(1 + u) ≥ u − u²/2`` in the product
``sinh y / y = Π_n (1 + y²/(n²π²))`` and Jensen's inequality over the uniform direction.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from geodp.distributions.base import rejection_sample
from geodp.distributions.mcmc import MCMCResult, random_walk_metropolis
from geodp.distributions.piecewise_hat import PiecewiseExponentialHat
from geodp.errors import AssumptionError
from geodp.manifolds import _matrix as mf
from geodp.manifolds.euclidean import Euclidean
from geodp.validation import as_generator, check_positive

__all__ = ["spd_laplace_scale_limit", "SPDEigenvalueLaw"]

_PIECES = 64  # equal hat pieces across the window where ψ is within e^40 of its largest value
_WINDOW = 40.0
_PROPOSAL_ENTRIES = 4_000_000  # largest batch of proposals, in matrix entries (32 MB)


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


def log_sinhc(y):
    """``log(sinh y / y)`` for ``y ≥ 0``, finite for every ``y`` (0 at ``y = 0``).

    Examples
    --------
    >>> import numpy as np
    >>> np.allclose(log_sinhc(np.array([0.0, 1e-3, 1.0, 800.0])),
    ...             [0.0, 1e-6 / 6, np.log(np.sinh(1.0)), 800.0 - np.log(1600.0)])
    True
    """
    y = np.asarray(y, dtype=float)
    large = np.maximum(y, 1.0)
    with np.errstate(under="ignore"):
        # y > 1: log sinh y − log y = y + log(1 − e^(−2y)) − log(2y) (no cancellation to speak of);
        # y ≤ 1: log1p(Σ_{n≥1} y^(2n)/(2n+1)!), ten terms (the eleventh is below 2e-20 relative)
        value = large + np.log(-np.expm1(-2.0 * large)) - np.log(2.0 * large)
        small = np.minimum(y, 1.0) ** 2
        series = np.zeros_like(small)
        for n in range(10, 0, -1):  # Horner: y²/3!·(1 + y²/(4·5)·(1 + …))
            series = small / ((2 * n) * (2 * n + 1)) * (1.0 + series)
    return np.where(y > 1.0, value, np.log1p(series))


def _direction_quartic(k: int) -> float:
    """``E Σ_{i<j} (u_i − u_j)⁴`` over the eigenvalues ``u`` of a uniform unit ``S ∈ Sym(k)``:
    ``E_GOE Σ (λ_i − λ_j)⁴ / E|G|⁴ = k(k−1)(k+2)(5k+6)/4 ÷ k(k+1)(k²+k+4)/4`` (Wick's theorem)."""
    return (k - 1) * (k + 2) * (5 * k + 6) / ((k + 1) * (k * k + k + 4))


class SPDEigenvalueLaw:
    """The law of ``r`` (log-eigenvalues of ``η^-½ X η^-½``), optionally with ``|r| ≤ t_max``.

    Parameters
    ----------
    k : int
    scale : float
        σ > 0.
    t_max : float, default inf

    Raises
    ------
    AssumptionError
        ``t_max = inf`` and ``σ ≥ σ_max(k)``: the law is not normalisable.

    Attributes
    ----------
    acceptance_rate : float
        A proven lower bound on the acceptance of the exact rejection sampler (module
        docstring, docs/math.md §5), by quadrature of a one-dimensional integral: a function of
        (k, σ, t_max) only, never of data. The rejection loop stops with an error (instead of
        running on) after ``(2n + 400)/(acceptance_rate/2)`` proposals.

    Examples
    --------
    >>> law = SPDEigenvalueLaw(16, scale=0.02)
    >>> S = law.sample_symmetric(5, rng=0)
    >>> S.shape, bool(law.acceptance_rate > 0.5)
    ((5, 16, 16), True)
    """

    def __init__(self, k: int, scale, t_max=math.inf):
        self.k = int(k)
        self.scale = check_positive(scale, "scale")
        self.t_max = float(t_max)
        self.c = _c(self.k)
        self.dim = self.k * (self.k + 1) // 2
        self._kink = 24.0 * self.c / self.k  # q(ρ) = kρ²/24 below, c·ρ above
        if math.isinf(self.t_max) and 1.0 / self.scale <= self.c:
            raise AssumptionError(
                f"the affine-invariant SPD({self.k}) Laplace with scale={self.scale!r} is not "
                f"normalisable: it needs scale < sigma_max={spd_laplace_scale_limit(self.k)!r}. "
                "Truncate it to a ball or use a smaller scale."
            )
        self._hat, self._shift = self._build_hat()
        k, quartic = self.k, _direction_quartic(self.k)

        def log_bound(rho):  # ψ − shift + E_direction[log acceptance | ρ] lower bound
            return self._psi(rho) - self._shift - rho**2 / (12.0 * (k + 1)) - rho**4 * quartic / 2880.0

        with np.errstate(over="ignore", invalid="ignore"):
            bound = float(self._hat.piece_integrals(log_bound).sum() / self._hat.mass.sum())
        self.acceptance_rate = min(bound, 1.0) if bound == bound else 0.0

    def _q(self, rho):
        return np.minimum(self.k * rho * rho / 24.0, self.c * rho)

    def _psi(self, rho):
        """``log`` of the envelope's radial density, unnormalised (``−inf`` at 0 for k > 1)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self.dim - 1) * np.log(rho) - rho / self.scale + self._q(rho)

    def _build_hat(self):
        """Piecewise-exponential hat over ``ψ`` on ``[0, t_max]`` from public (k, σ, t_max) only."""
        dim, upper = self.dim, self.t_max
        unit = min(max(dim - 1, 1) * self.scale, upper / 2.0)
        grid = unit * 2.0 ** (np.arange(-160, 161) / 16.0)
        grid = np.append(grid[grid < upper], [upper] if math.isfinite(upper) else [])
        values = self._psi(grid)
        shift = float(np.max(values))
        inside = np.flatnonzero(values >= shift - _WINDOW)
        lo, hi = grid[max(inside[0] - 1, 0)], grid[min(inside[-1] + 1, len(grid) - 1)]
        # Beyond the window, nodes grow by 10% (a tangent taken far away would overshoot): up to
        # t_max, or, unbounded, until the last piece — under the tangent at its start plus
        # c·ρ ≥ q — lies beyond the kink (where q = c·ρ) and falls (ψ' ≤ −(1/σ − c)/2).
        last = upper if math.isfinite(upper) else max(self._kink, 2.0 * (dim - 1) / (1.0 / self.scale - self.c))
        steps = math.ceil(math.log(last / hi) / math.log(1.1)) if last > hi else 0
        nodes = np.append(np.linspace(lo, hi, _PIECES + 1), hi * 1.1 ** np.arange(1, steps))
        if lo < self._kink < nodes[-1]:
            nodes = np.sort(np.append(nodes, self._kink))
        a = np.concatenate([[0.0], nodes])
        b = np.concatenate([nodes, [upper]])
        keep = b > a
        a, b = a[keep], b[keep]
        finite = np.isfinite(b)
        # tangent of the concave (d − 1) log ρ − ρ/σ at the midpoint (at the finite end of the
        # first and of an unbounded piece) ...
        touch = np.where(finite, (a + b) / 2.0, a)
        touch[0] = b[0]
        concave = (dim - 1) * np.log(touch) - touch / self.scale
        slope = (dim - 1) / touch - 1.0 / self.scale
        # ... plus the chord of q on [a, b] (q is convex on each side of the kink, a node), or
        # q ≤ c·ρ on an unbounded piece
        with np.errstate(invalid="ignore"):
            chord = np.where(finite, (self._q(b) - self._q(a)) / np.where(finite, b - a, 1.0), self.c)
        value = concave + np.where(finite, self._q(a) + chord * (touch - a), self.c * touch)
        return PiecewiseExponentialHat(a, b, slope + chord, touch, value - shift), shift

    def _propose(self, m, rng):
        """Isotropic symmetric proposals ``S`` and their log acceptance probabilities."""
        rho, log_hat = self._hat.propose(m, rng)
        direction = rng.standard_normal((m, self.dim))
        direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
        S = mf.invvecd(rho[:, None] * direction, self.k)
        y = _pair_gaps(np.linalg.eigvalsh(S)) / 2.0
        radial = self._psi(rho) - self._shift - log_hat  # ≤ 0: the hat dominates ψ
        angular = np.sum(log_sinhc(y), axis=-1) - self._q(rho)  # ≤ 0: Σ f(y) ≤ q(|r|)
        log_acc = np.minimum(radial, 0.0) + np.minimum(angular, 0.0)
        return S, np.where((rho > 0) & (rho <= self.t_max), log_acc, -np.inf)

    def log_density(self, r):
        """Unnormalised log-density of ``r`` (``−inf`` beyond ``t_max``)."""
        r = np.asarray(r, dtype=float)
        norm = np.linalg.norm(r, axis=-1)
        gaps = _pair_gaps(r)
        with np.errstate(divide="ignore"):
            # log sinh(g/2) = g/2 + log(1 − e^(−g)) − log 2
            value = -norm / self.scale + np.sum(gaps / 2 + np.log(-np.expm1(-gaps)) - math.log(2.0), axis=-1)
        return np.where(norm <= self.t_max, value, -np.inf)

    def sample_symmetric(self, size: int, rng=None):
        """Exact draws of ``S ∈ Sym(k)`` with eigenvalues ``r`` from the law and Haar eigenvectors."""
        draws, _ = rejection_sample(self._propose, size, (self.k, self.k), self.acceptance_rate, as_generator(rng),
                                    max_batch=max(256, _PROPOSAL_ENTRIES // self.k**2),
                                    min_rate=self.acceptance_rate / 2.0)
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
