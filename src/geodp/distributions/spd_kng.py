"""Exact KNG on affine-invariant SPD(k): the tangent proposal at the public centre
(docs/math.md §5, "KNG on affine-invariant SPD").

Affine-invariant SPD is a Hadamard manifold (curvature in [−½, 0]), so three inequalities hold
for every dataset in the ball ``B_r(m0)``, with ``v = vecd Log(m0^-½ x m0^-½)`` the normal
coordinates at ``m0`` (the ball is ``|v| ≤ r``), ``a`` the anchor (the computed Fréchet mean),
``v_a`` its coordinates and ``ε_a = ‖∇F_D(a)‖``:

* ``‖∇F_D(x)‖ ≥ ρ(a, x) − ε_a`` (``F_D`` is 1-strongly convex: ``Hess ρ²/2 ≥ I`` at κ ≤ 0);
* ``ρ(a, x) ≥ |v − v_a|`` (``exp_m0`` does not shrink distances on a Hadamard manifold);
* the volume density in these coordinates, ``J(v) = Π_{i<j} sinh(y_ij)/y_ij`` with
  ``y_ij = |λ_i − λ_j|/2`` over the eigenvalues λ of ``v``, has ``log J(v) ≤ k|v|²/24``
  (:func:`~geodp.distributions.spd_affine.log_sinhc`'s bound ``y²/6``) and ``≤ q(r)``.

So the KNG density in ``v`` is at most a constant times ``exp(−λ|v − v_a|)`` on the ball, with
``λ = 1/σ − β`` (``β`` the chord slope of the volume bound along rays from ``v_a``), an
l2-Laplace truncated to a Euclidean ball: :class:`BallLaplace` draws it exactly in polar
coordinates at ``v_a``. Each draw is kept with probability
``exp(log J(v) − b₀ − β|v − v_a|) · exp(−(‖∇F_D(x)‖ − |v − v_a| + ε_a)/σ) ≤ 1``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from geodp.distributions.spd_affine import _c, log_sinhc
from geodp.manifolds import matrix_functions as mf
from geodp.validation import check_positive

__all__ = ["BallLaplace", "SPDTangentKNGProposal", "log_gammainc"]

_SERIES_TERMS = 400  # the lower incomplete gamma series where scipy's value underflows (x < d)
_TINY = 1e-280  # below this, P(d, x) is taken from the series and inverted by rejection
_MAX_LEVELS = 8  # cell doublings of the direction hat (from 32 + 32 to 8,192 + 8,192 cells)
_SUBCELLS = 8


def log_gammainc(d, x):
    """``log P(d, x)``, the regularised lower incomplete gamma function, finite where
    ``P`` underflows (``x ≪ d``: ``d log x − x − log Γ(d + 1) + log Σ_n x^n/((d+1)⋯(d+n))``);
    ``−inf`` at ``x = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import special
    >>> bool(np.isclose(log_gammainc(36, 20.0), np.log(special.gammainc(36, 20.0))))
    True
    >>> round(float(log_gammainc(528, 1.0)), 3)          # scipy's P underflows to 0 here
    -2787.135
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        direct = np.log(special.gammainc(d, x))
    small = np.isfinite(direct) & (direct > math.log(_TINY))
    if np.all(small | (x <= 0)):
        return np.where(x > 0, direct, -np.inf)
    xs = np.where(small | (x <= 0), 1.0, np.minimum(x, d))
    term, total = np.ones_like(xs), np.ones_like(xs)
    for n in range(1, _SERIES_TERMS + 1):
        term = term * xs / (d + n)
        total = total + term
        if np.all(term < 1e-17 * total):
            break
    with np.errstate(divide="ignore"):
        series = d * np.log(xs) - xs - special.gammaln(d + 1) + np.log(total)
    return np.where(x <= 0, -np.inf, np.where(small, direct, series))


class BallLaplace:
    """Exact draws of the l2-Laplace ``∝ exp(−λ|v − c|)`` on ``R^d`` restricted to the ball
    ``|v| ≤ r`` (``|c| ≤ r``), in polar coordinates at ``c`` (docs/math.md §5).

    With ``ê = c/|c|`` and ``w = ⟨u, ê⟩`` for the unit direction ``u``, the ray leaves the ball at
    ``T(w) = −|c|w + √(|c|²w² + r² − |c|²)``, decreasing in ``w``. The direction's marginal is
    ``∝ (1 − w²)^{(d−3)/2} P(d, λT(w))``: ``(1 + w)/2`` is drawn from ``Beta((d−1)/2, (d−1)/2)``
    restricted to a cell (equal Beta mass merged with a uniform grid in ``w``) chosen with weight
    its Beta mass times ``P(d, λT)`` at its left edge (``P`` falls with ``w``), kept with
    probability ``P(d, λT(w))/P(d, λT(left))``; then
    ``t`` from ``Gamma(d, 1/λ)`` restricted to ``[0, T(w)]`` by its inverse CDF (or, where ``P``
    underflows, by rejection from the exponential tangent hat of the concave log-density at
    ``T``), the rest of ``u`` uniform on the sphere orthogonal to ``ê``. The cells are doubled
    until the direction step provably keeps at least half of its proposals (quadrature with
    right-end values).

    Parameters
    ----------
    d : int
    radius : float
        ``r > 0``.
    centre : array_like, shape (d,)
        ``c``, with ``|c| ≤ r`` (rounding beyond is clipped).
    rate : float
        ``λ > 0``.

    Examples
    --------
    >>> import numpy as np
    >>> law = BallLaplace(5, 1.0, np.array([0.9, 0, 0, 0, 0]), 10.0)
    >>> v = law.sample(1000, np.random.default_rng(0))
    >>> v.shape, bool(np.all(np.linalg.norm(v, axis=1) <= 1 + 1e-12))
    ((1000, 5), True)
    """

    def __init__(self, d: int, radius, centre, rate):
        self.d, self.radius, self.rate = int(d), check_positive(radius, "radius"), check_positive(rate, "rate")
        self.centre = np.asarray(centre, dtype=float)
        norm = float(np.linalg.norm(self.centre))
        self.s = min(norm, self.radius)
        self.axis = self.centre / norm if norm > 0 else np.eye(self.d)[0]
        self.half = (self.d - 1) / 2.0
        for level in range(_MAX_LEVELS + 1):
            # Cells: equal Beta mass merged with a uniform grid in w (W pushes the mass into the
            # Beta's lower tail when the anchor is far out, where equal-mass cells are wide).
            cells = 32 * 2**level
            edges = np.union1d(self._edges(np.arange(cells + 1) / cells), np.linspace(-1.0, 1.0, cells + 1))
            fine = (edges[:-1, None] + np.diff(edges)[:, None] * np.linspace(0.0, 1.0, _SUBCELLS + 1)[None]).ravel()
            fine = np.unique(fine)
            with np.errstate(divide="ignore"):
                log_cdf = np.log(self._cdf(edges))
                log_top = np.log(np.maximum(np.diff(self._cdf(edges)), 0.0)) + self._log_weight(edges[:-1])
                log_low = np.log(np.maximum(np.diff(self._cdf(fine)), 0.0)) + self._log_weight(fine[1:])
            peak = float(np.max(log_top))
            kept = float(np.sum(np.exp(log_low - peak)) / np.sum(np.exp(log_top - peak)))
            if kept >= 0.5:
                break
        self.edges, self.log_cdf = edges, log_cdf
        self.log_top = log_top - np.log(np.maximum(np.diff(self._cdf(edges)), 1e-300))  # log W(left)
        self.cell_p = np.exp(log_top - peak)
        self.cell_p /= self.cell_p.sum()
        self.efficiency = kept

    @staticmethod
    def log_mass(d: int, radius: float, s: float, rate: float, grid: int = 256) -> float:
        """``log ∫_{|v| ≤ r} exp(−λ|v − c|) dv`` up to a constant of ``d`` (``|c| = s``), by the
        midpoint rule in the direction cosine over cells of equal Beta mass merged with a uniform
        grid: compares envelopes.

        Examples
        --------
        >>> bool(BallLaplace.log_mass(5, 1.0, 0.0, 1.0) < BallLaplace.log_mass(5, 1.0, 0.0, 0.5))
        True
        """
        law = BallLaplace.__new__(BallLaplace)
        law.d, law.radius, law.rate, law.s, law.half = d, radius, rate, min(s, radius), (d - 1) / 2.0
        edges = np.union1d(law._edges(np.arange(grid + 1) / grid), np.linspace(-1.0, 1.0, grid + 1))
        with np.errstate(divide="ignore"):
            log_p = np.log(np.maximum(np.diff(law._cdf(edges)), 0.0)) + law._log_weight((edges[:-1] + edges[1:]) / 2)
        peak = float(np.max(log_p))
        return peak + math.log(float(np.sum(np.exp(log_p - peak)))) + special.gammaln(d) - d * math.log(rate)

    def _cdf(self, w):
        """``P(W ≤ w)`` for the cosine of a uniform direction: ``(1 + W)/2 ~ Beta((d−1)/2, (d−1)/2)``."""
        return special.betainc(self.half, self.half, (1.0 + np.asarray(w)) / 2.0) if self.d > 1 else (1.0 + w) / 2.0

    def _edges(self, mass):
        """Direction cosines at the given Beta masses (equal-mass cells)."""
        if self.d == 1:
            return 2.0 * mass - 1.0
        return np.clip(2.0 * special.betaincinv(self.half, self.half, mass) - 1.0, -1.0, 1.0)

    def _exit(self, w):
        s, r = self.s, self.radius
        return np.maximum(-s * w + np.sqrt(np.maximum(s * s * w * w + r * r - s * s, 0.0)), 0.0)

    def _log_weight(self, w):
        return log_gammainc(self.d, self.rate * self._exit(w))

    def _directions(self, m, rng):
        """``m`` cosines ``w`` from the direction marginal (exact by rejection)."""
        out, filled = np.empty(m), 0
        while filled < m:
            batch = max(16, int(2.2 * (m - filled)) + 8)
            cell = rng.choice(len(self.cell_p), size=batch, p=self.cell_p)
            lo, hi = self.edges[cell], self.edges[cell + 1]
            below, above = self._cdf(lo), self._cdf(hi)
            w = np.clip(self._edges(below + rng.random(batch) * (above - below)), lo, hi)
            keep = np.log(rng.random(batch)) < self._log_weight(w) - self.log_top[cell]
            got = w[keep][: m - filled]
            out[filled : filled + len(got)] = got
            filled += len(got)
        return out

    def _radii(self, T, rng):
        """``t`` from ``Gamma(d, 1/λ)`` restricted to ``[0, T]`` (exact)."""
        d, lam = self.d, self.rate
        top = special.gammainc(d, lam * T)
        t = special.gammaincinv(d, rng.random(len(T)) * top) / lam
        tail = np.flatnonzero(top < _TINY)
        while len(tail):  # λT ≪ d: hat exp(γ(τ − 1)) on τ = t/T ∈ [0, 1], γ = d − 1 − λT > 0
            x = lam * T[tail]
            gamma = np.maximum(d - 1 - x, 1e-12)
            tau = 1.0 + np.log1p(-rng.random(len(tail)) * -np.expm1(-gamma)) / gamma
            with np.errstate(divide="ignore"):
                log_acc = (d - 1) * np.log(np.maximum(tau, 0.0)) + x * (1.0 - tau) - gamma * (tau - 1.0)
            keep = np.log(rng.random(len(tail))) < np.minimum(log_acc, 0.0)
            t[tail[keep]] = tau[keep] * T[tail[keep]]
            tail = tail[~keep]
        return np.minimum(t, T)

    def sample(self, m: int, rng):
        """``m`` exact draws, shape ``(m, d)``."""
        w = self._directions(m, rng)
        t = self._radii(self._exit(w), rng)
        g = rng.standard_normal((m, self.d))
        g -= np.outer(g @ self.axis, self.axis)
        g /= np.linalg.norm(g, axis=1, keepdims=True)
        u = w[:, None] * self.axis + np.sqrt(np.maximum(1.0 - w * w, 0.0))[:, None] * g
        return self.centre + t[:, None] * u


class SPDTangentKNGProposal:
    """The KNG proposal on affine-invariant SPD(k) in normal coordinates at the public centre
    (module docstring): :class:`BallLaplace` at the anchor's coordinates, mapped by ``exp_m0``.

    Parameters
    ----------
    k : int
    center : numpy.ndarray, shape (k, k)
        The public centre ``m0``.
    radius : float
    anchor : numpy.ndarray, shape (k, k)
        The computed Fréchet mean (in the ball). **Private**: it sets where the proposal sits,
        which changes the work, never the law of the accepted draws.
    scale : float
        σ of the KNG law.

    Examples
    --------
    >>> import numpy as np
    >>> prop = SPDTangentKNGProposal(2, np.eye(2), 1.0, np.diag([1.5, 1.0]), 0.2)
    >>> x, log_acc, t = prop.propose(4, np.random.default_rng(0))
    >>> x.shape, bool(np.all(log_acc <= 0))
    ((4, 2, 2), True)
    """

    def __init__(self, k: int, center, radius, anchor, scale):
        self.k, self.radius, self.scale = int(k), float(radius), float(scale)
        self.root, inv_root = mf.sqrtm_and_invsqrtm(np.asarray(center, dtype=float))
        w, u = np.linalg.eigh(mf.congruence(inv_root, np.asarray(anchor, dtype=float)))
        self.anchor_coords = mf.vecd(mf.from_eig(np.log(mf.positive_eigenvalues(w)), u))
        s = min(float(np.linalg.norm(self.anchor_coords)), self.radius)
        # log J(v) ≤ k·min(r, s + t)²/24 ≤ k s²/24 + β t (chord of the convex k(s + t)²/24 on
        # [0, r − s]; the line exceeds k r²/24 beyond), or ≤ k r²/24 (β = 0): the chord where it
        # leaves at least half the rate 1/σ.
        # leaves a positive rate: whichever envelope has the smaller mass (it accepts more).
        d, r, rate = self.k * (self.k + 1) // 2, self.radius, 1.0 / self.scale
        flat_cap = min(self.k * r * r / 24.0, _c(self.k) * r)
        options = [(flat_cap, 0.0)]
        beta = self.k * (r + s) / 24.0
        if beta < rate:
            options.append((self.k * s * s / 24.0, beta))
        masses = [cap + BallLaplace.log_mass(d, r, s, rate - slope) for cap, slope in options]
        self.log_volume_cap, self.beta = options[int(np.argmin(masses))]
        self.ball = BallLaplace(d, r, self.anchor_coords, rate - self.beta)

    def propose(self, m: int, rng):
        """``m`` points ``x = m0^½ Exp(V) m0^½``, the log of the volume step's acceptance (≤ 0)
        and ``t = |v − v_a|`` (``ρ(a, x) ≥ t``)."""
        v = self.ball.sample(m, rng)
        lam, vec = np.linalg.eigh(mf.invvecd(v, self.k))
        i, j = np.triu_indices(self.k, 1)
        log_j = np.sum(log_sinhc(np.abs(lam[:, i] - lam[:, j]) / 2.0), axis=-1)
        t = np.linalg.norm(v - self.anchor_coords, axis=-1)
        log_acc = np.minimum(log_j - self.log_volume_cap - self.beta * t, 0.0)
        x = mf.sym(mf.congruence(self.root, mf.from_eig(np.exp(lam), vec)))
        return x, log_acc, t
