"""The Riemannian Laplace (and Gaussian) law on affine-invariant SPD(k) (Hajri et al. 2016;
docs/math.md §5, §12).

``X = η^½ U diag(e^r) Uᵀ η^½`` with ``U`` Haar on O(k) and ``r ∈ R^k`` of density
``∝ exp(−φ(|r|)) Π_{i<j} sinh(|r_i − r_j|/2)``; ``ρ(η, X) = |r|``. The radial profile is
``φ(ρ) = ρ/σ`` (Laplace) or ``ρ²/2σ²`` (Riemannian Gaussian,
:data:`~geodp.distributions.radial.RADIAL_PROFILES`). The Laplace eigenvalue law is
normalisable iff ``σ < σ_max(k) = 1/c_k``, ``c_k = ½√(k(k²−1)/3)``; the Gaussian one always is,
and restricted to ``|r| ≤ t_max`` both are. Below, ``−ρ/σ`` stands for ``−φ(ρ)``: every step
uses only that ``φ`` is convex.

**Exact draws** (docs/math.md §5, "the Gaussian-gap envelope"). With ``y_ij = |r_i − r_j|/2``,
``sinh y = y · (sinh y / y)`` and ``f(y) = log(sinh y / y) ≤ y``; ``f(√s)`` is concave in ``s``,
so by Jensen's inequality over the ``m = k(k − 1)/2`` pairs, with
``Σ y_ij² = (k|r|² − (Σ r_i)²)/4 ≤ k|r|²/4`` and ``Σ y_ij ≤ c_k |r|``,

    Π sinh(y_ij) ≤ Π y_ij · exp(q(|r|)),   q(ρ) = min(m·f(ρ/√(2(k − 1))), c_k ρ)  (≤ kρ²/24).

The right side times ``exp(−|r|/σ)`` is the eigenvalue law of an isotropic ``S ∈ Sym(k)`` (its
eigenvalues carry the Vandermonde ``Π |r_i − r_j|``, its eigenvectors are Haar and independent)
whose norm ``ρ = |vecd S|`` has density ``∝ exp(ψ(ρ))``, ``ψ = (d − 1) log ρ − ρ/σ + q(ρ)``,
``d = k(k+1)/2``. ``ρ`` is drawn from a piecewise-exponential hat over ``ψ`` (tangents of the
concave ``(d − 1) log ρ − ρ/σ`` plus chords of ``q``, which is convex on each side of its kink),
the direction uniformly, and ``S`` is accepted with probability
``exp(ψ(ρ) − hat(ρ)) · exp(Σ f(y_ij) − q(ρ)) ≤ 1``. The acceptance is at least the public
:attr:`SPDEigenvalueLaw.acceptance_rate`, from ``log(1 + u) ≥ u − u²/2`` in the product
``sinh y / y = Π_n (1 + y²/(n²π²))`` and Jensen's inequality over the uniform direction. Untruncated,
it reaches the 1e-3 floor up to σ/σ_max = 0.82 (k = 8), 0.65 (k = 32), 0.58 (k = 48), 0.41 (k = 128).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize, stats

from geodp.distributions.ball_polar import direction_share
from geodp.distributions.base import rejection_sample
from geodp.distributions.mcmc import MCMCResult, random_walk_metropolis
from geodp.distributions.piecewise_hat import PiecewiseExponentialHat
from geodp.distributions.radial import RADIAL_PROFILES
from geodp.errors import AssumptionError, InvalidParameterError
from geodp.manifolds import matrix_functions as mf
from geodp.manifolds.euclidean import Euclidean
from geodp.validation import as_generator, check_positive

__all__ = [
    "spd_laplace_scale_limit",
    "SPDEigenvalueLaw",
    "spd_ball_acceptance_bound",
    "angular_weight_bounds",
    "angular_log_bound",
]

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
    profile : {"laplace", "gaussian"}, default "laplace"
        The radial profile: ``exp(−|r|/σ)`` or ``exp(−|r|²/2σ²)``.

    Raises
    ------
    AssumptionError
        ``t_max = inf``, the Laplace profile and ``σ ≥ σ_max(k)``: the law is not normalisable.

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

    def __init__(self, k: int, scale, t_max=math.inf, profile="laplace"):
        if profile not in RADIAL_PROFILES:
            raise InvalidParameterError(f"profile must be one of {tuple(RADIAL_PROFILES)}, got {profile!r}.")
        self.profile = profile
        self._phi = RADIAL_PROFILES[profile]
        self.k = int(k)
        self.scale = check_positive(scale, "scale")
        self.t_max = float(t_max)
        self.c = _c(self.k)
        self.dim = self.k * (self.k + 1) // 2
        self._kink = _kink(self.k)  # q(ρ) = m·f(ρ/√(2(k − 1))) below, c·ρ above
        if math.isinf(self.t_max) and profile == "laplace" and 1.0 / self.scale <= self.c:
            raise AssumptionError(
                f"the affine-invariant SPD({self.k}) Laplace with scale={self.scale!r} is not "
                f"normalisable: it needs scale < sigma_max={spd_laplace_scale_limit(self.k)!r}. "
                "Truncate it to a ball or use a smaller scale."
            )
        self._hat, self._shift = self._build_hat()

        def log_bound(rho):  # ψ − shift + E_direction[log acceptance | ρ] lower bound
            return self._psi(rho) - self._shift - _angular_log_slack(self.k, rho)

        with np.errstate(over="ignore", invalid="ignore"):
            bound = float(self._hat.piece_integrals(log_bound).sum() / self._hat.mass.sum())
        self.acceptance_rate = min(bound, 1.0) if bound == bound else 0.0

    def _q(self, rho):
        return angular_log_bound(self.k, rho)

    def _psi(self, rho):
        """``log`` of the envelope's radial density, unnormalised (``−inf`` at 0 for k > 1)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self.dim - 1) * np.log(rho) - self._phi(rho, self.scale) + self._q(rho)

    def _build_hat(self):
        """Piecewise-exponential hat over ``ψ`` on ``[0, t_max]`` from public (k, σ, t_max) only."""
        dim, upper, gaussian = self.dim, self.t_max, self.profile == "gaussian"
        spread = max(dim - 1, 1)
        unit = min((math.sqrt(spread) if gaussian else spread) * self.scale, upper / 2.0)
        grid = unit * 2.0 ** (np.arange(-160, 161) / 16.0)
        grid = np.append(grid[grid < upper], [upper] if math.isfinite(upper) else [])
        values = self._psi(grid)
        shift = float(np.max(values))
        inside = np.flatnonzero(values >= shift - _WINDOW)
        lo, hi = grid[max(inside[0] - 1, 0)], grid[min(inside[-1] + 1, len(grid) - 1)]
        # Beyond the window, nodes grow by 10% (a tangent taken far away would overshoot): up to
        # t_max, or, unbounded, until the last piece — under the tangent at its start plus
        # c·ρ ≥ q — lies beyond the kink (where q = c·ρ) and falls (ψ' ≤ −(1/σ − c)/2).
        # (Gaussian: beyond a = 2σ²c + 2σ√(d − 1) + σ the slope (d − 1)/a − a/σ² + c is < −1/σ.)
        kink = self._kink if math.isfinite(self._kink) else 0.0  # k ≤ 2: q < c·ρ everywhere
        if math.isfinite(upper):
            last = upper
        elif gaussian:
            last = max(kink, 2.0 * self.scale**2 * self.c + self.scale * (2.0 * math.sqrt(spread) + 1.0))
        else:
            last = max(kink, 2.0 * (dim - 1) / (1.0 / self.scale - self.c))
        steps = math.ceil(math.log(last / hi) / math.log(1.1)) if last > hi else 0
        nodes = np.append(np.linspace(lo, hi, _PIECES + 1), hi * 1.1 ** np.arange(1, steps))
        if lo < self._kink < nodes[-1]:
            nodes = np.sort(np.append(nodes, self._kink))
        a = np.concatenate([[0.0], nodes])
        b = np.concatenate([nodes, [upper]])
        keep = b > a
        a, b = a[keep], b[keep]
        finite = np.isfinite(b)
        # tangent of the concave (d − 1) log ρ − φ(ρ) at the midpoint (at the finite end of the
        # first and of an unbounded piece) ...
        touch = np.where(finite, (a + b) / 2.0, a)
        touch[0] = b[0]
        concave = (dim - 1) * np.log(touch) - self._phi(touch, self.scale)
        slope = (dim - 1) / touch - (touch / self.scale**2 if gaussian else 1.0 / self.scale)
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
            value = -self._phi(norm, self.scale) + np.sum(gaps / 2 + np.log(-np.expm1(-gaps)) - math.log(2.0), axis=-1)
        return np.where(norm <= self.t_max, value, -np.inf)

    def sample_symmetric(self, size: int, rng=None):
        """Exact draws of ``S ∈ Sym(k)`` with eigenvalues ``r`` from the law and Haar eigenvectors."""
        draws, _ = rejection_sample(
            self._propose,
            size,
            (self.k, self.k),
            self.acceptance_rate,
            as_generator(rng),
            max_batch=max(256, _PROPOSAL_ENTRIES // self.k**2),
            min_rate=self.acceptance_rate / 2.0,
        )
        return draws

    def sample_symmetric_mcmc(
        self, size: int, rng=None, *, burn_in=10_000, thinning=100
    ) -> tuple[np.ndarray, MCMCResult]:
        """Approximate draws: MH on ``r ∈ R^k`` (O(k²) per step), ``U`` Haar (exact)."""
        rng = as_generator(rng)
        space = Euclidean(self.k)
        start = np.zeros((size, self.k)) + np.linspace(-1e-3, 1e-3, self.k) * min(self.scale, self.t_max)
        result = random_walk_metropolis(
            space,
            self.log_density,
            start,
            burn_in=burn_in,
            thinning=thinning,
            step_size=min(self.scale, self.t_max),
            rng=rng,
        )
        r = result.samples[0]
        U = stats.ortho_group.rvs(self.k, size=size, random_state=rng).reshape(size, self.k, self.k)
        return mf.from_eig(r, U), result


def angular_weight_bounds(k: int, rho):
    """``(log lo, log hi)`` with ``lo(ρ) ≤ E_u[exp Σ_{i<j} f(ρ|u_i − u_j|/2)] ≤ hi(ρ)`` over
    uniform unit ``S ∈ Sym(k)`` with eigenvalues ``u``, ``f(y) = log(sinh y / y)``: the factor by
    which the density of ``ρ = ρ(η, X)`` on affine-invariant SPD(k) departs from
    ``ρ^{d−1} e^{−φ(ρ)}`` (module docstring): ``hi = e^{q}`` (``f(y) ≤ min(y²/6, y)``) and
    ``lo = e^{max(0, q − L)}`` (``f ≥ 0`` and the Jensen step).

    Examples
    --------
    >>> import numpy as np
    >>> lo, hi = angular_weight_bounds(3, np.array([0.0, 0.5, 5.0]))
    >>> bool(np.all(lo <= hi)), float(hi[0])
    (True, 0.0)
    """
    rho = np.asarray(rho, dtype=float)
    q = angular_log_bound(k, rho)
    return np.maximum(q - _angular_log_slack(k, rho), 0.0), q


def _angular_log_slack(k: int, rho):
    """``L(ρ)`` with ``E_u[Σ f(y_ij) − q(ρ)] ≥ −L(ρ)`` over uniform unit directions ``u``
    (the Jensen step of the acceptance bound, module docstring): ``E_u Σ f(y_ij) ≥ kρ²/24 −
    ρ²/(12(k + 1)) − Q_kρ⁴/2880``."""
    rho = np.asarray(rho, dtype=float)
    mean_lower = k * rho**2 / 24.0 - rho**2 / (12.0 * (k + 1)) - rho**4 * _direction_quartic(k) / 2880.0
    return angular_log_bound(k, rho) - mean_lower


def angular_log_bound(k: int, rho):
    """``q(ρ) = min(m·f(ρ/√(2(k − 1))), c_k ρ)`` (``m = k(k − 1)/2``, ``f(y) = log(sinh y / y)``):
    ``Σ_{i<j} f(|r_i − r_j|/2) ≤ q(|r|)`` for every ``r ∈ R^k`` (docs/math.md §5). ``f(√s)`` is
    concave in ``s``, so by Jensen's inequality over the ``m`` pairs the sum is largest when
    every ``y_ij²`` equals their mean, at most ``k|r|²/(4m)``; and ``f(y) ≤ y`` with
    ``Σ y_ij ≤ c_k|r|``. Convex on each side of :func:`_kink`.

    Examples
    --------
    >>> import numpy as np
    >>> rho = np.array([0.0, 1.0, 50.0])
    >>> q = angular_log_bound(5, rho)
    >>> bool(q[0] == 0.0), bool(np.all(q <= np.minimum(5 * rho**2 / 24, 5.0 * rho)))
    (True, True)
    """
    rho = np.asarray(rho, dtype=float)
    if k < 2:
        return np.zeros_like(rho)
    pairs = k * (k - 1) / 2.0
    return np.minimum(pairs * log_sinhc(rho / math.sqrt(2.0 * (k - 1))), _c(k) * rho)


@functools.lru_cache(maxsize=256)
def _kink(k: int) -> float:
    """Where ``m·f(ρ/√(2(k − 1)))`` crosses ``c_k ρ`` (``inf`` for k ≤ 2: their slopes at infinity
    are ``√(3k/(2(k + 1)))·c_k`` and ``c_k``, so they cross once for k ≥ 3)."""
    if k <= 2:
        return math.inf
    pairs, scale, c = k * (k - 1) / 2.0, 1.0 / math.sqrt(2.0 * (k - 1)), _c(k)
    gap = lambda rho: pairs * float(log_sinhc(rho * scale)) - c * rho  # noqa: E731
    lo = 24.0 * c / k  # m·f(ρ a) ≤ kρ²/24, which meets c·ρ here: still below c·ρ
    hi = 2.0 * lo
    while gap(hi) <= 0.0:
        lo, hi = hi, 2.0 * hi
    return float(optimize.brentq(gap, lo, hi, xtol=1e-12 * hi))


def spd_ball_acceptance_bound(k: int, scale, radius, *, grid: int = 33) -> float:
    """A proven lower bound, over **every** footpoint η in ``B_radius(m0)``, on the chance that an
    exact AI-SPD Laplace draw at η (``|r| ≤ 2 radius``) lands in the ball (docs/math.md §5).

    A function of (k, σ, r) only. With ``t = |r|``, ``s = ρ(η, m0)`` and θ the angle between the
    draw's direction and that of ``m0``: Toponogov (curvature ≥ −½) puts the draw in the ball when
    ``cos θ ≥ 1 − 2Q`` of the hyperbolic plane of curvature −½, a share ``P_u`` of the uniform
    directions (:func:`~geodp.distributions.ball_polar.direction_share`). Given ``t`` the law's
    direction has density ``h/E_u h`` w.r.t. the uniform one, ``h = exp(Σ f(y_ij)) ∈ [1, e^q]``,
    ``E_u h ≥ e^{q − L}``, and it is symmetric under ``S → −S``; so the share is at least
    ``max(1 − e^L (1 − P_u), e^{−q} P_u, ½·[P_u ≥ ½])``. That is non-increasing in ``t`` and
    smallest at an end of every interval of ``s``; the radius's CDF is bounded below by
    ``∫₀^t ℓ / (∫₀^t ℓ + ∫_t^{2r} u)``, ``ℓ, u = t^{D−1} e^{−t/σ} e^{max(0, q − L)}, e^{q}``.

    Parameters
    ----------
    k : int
    scale : float
        σ > 0 of the Laplace law.
    radius : float
        Radius > 0 of the ball.
    grid : int, default 33
        Points of the grid of ``s`` in ``[0, radius]``.

    Returns
    -------
    float
        The bound, in ``[0, 1]``.

    Examples
    --------
    >>> b = spd_ball_acceptance_bound(3, 0.05, 1.0)
    >>> 0.1 < b < 0.5
    True
    """
    k = int(k)
    scale, radius = check_positive(scale, "scale"), check_positive(radius, "radius")
    dim, upper = k * (k + 1) // 2, 2.0 * radius
    mode = max(dim - 1, 1) * scale
    t = np.unique(
        np.concatenate(
            [
                np.linspace(0.0, upper, 2049),
                np.clip(mode * 2.0 ** np.linspace(-10.0, 4.0, 2049), 0.0, upper),
                np.linspace(0.0, min(radius, upper), 1025),
            ]
        )
    )
    q = angular_log_bound(k, t)
    slack = _angular_log_slack(k, t)
    with np.errstate(divide="ignore"):
        base = (dim - 1) * np.log(t) - t / scale if dim > 1 else -t / scale
    top = float(np.max(base + q))
    low = np.exp(base + np.maximum(q - slack, 0.0) - top)
    high = np.exp(base + q - top)
    width = np.diff(t)
    # Riemann sums: the smaller end value below (numerator), the larger above (tail), plus 1%
    below = np.concatenate([[0.0], np.cumsum(np.minimum(low[:-1], low[1:]) * width)])
    above_cells = np.maximum(high[:-1], high[1:]) * width * 1.01
    tail = np.concatenate([np.cumsum(above_cells[::-1])[::-1], [0.0]])
    with np.errstate(invalid="ignore", divide="ignore"):
        cdf = np.where(below > 0, below / (below + tail), 0.0)
    cdf[-1] = 1.0
    s = np.linspace(0.0, radius, grid)
    share = direction_share(t[1:, None], s[None, :], radius, -0.5, dim)  # right ends of the t cells
    with np.errstate(over="ignore"):
        law_share = (
            np.maximum.reduce(
                [
                    1.0 - np.exp(slack[1:, None]) * (1.0 - share),
                    np.exp(-q[1:, None]) * share,
                    0.5 * (share >= 0.5),
                ]
            )
            if dim > 1
            else share
        )
    worst = np.minimum(law_share[:, :-1], law_share[:, 1:])  # per s cell
    worst = np.minimum.accumulate(np.clip(worst, 0.0, 1.0), axis=0)  # non-increasing in t
    # E[g(T)] ≥ Σ_j g(t_j) P(t_{j-1} < T ≤ t_j) = g(t_N) + Σ_{j<N} (g(t_j) − g(t_{j+1})) F(t_j)
    expect = worst[-1] + np.sum((worst[:-1] - worst[1:]) * cdf[1:-1, None], axis=0)
    return float(max(np.min(expect), 0.0))
