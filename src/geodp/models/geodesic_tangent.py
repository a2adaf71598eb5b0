"""The tangent release of :class:`~geodp.models.PrivateGeodesicRegression` (``mechanism="tangent"``):
perturbed sufficient statistics of the fit of ``Log_{p0}(y)`` on the covariate in ``T_{p0}M`` at the
public centre ``p0``, mapped back to a geodesic (docs/math.md §9.3).

Every record is split by a public rule into two bins (scaled covariate ``x̃ < 0`` or ``≥ 0``). The
release perturbs, each with exact noise and its own share of ε (sequential composition):

- the count of the upper bin (sensitivity 1, Laplace);
- the covariate sums ``Σ_lo (x̃ + ¼)``, ``Σ_hi (x̃ − ¼)`` (l1 sensitivity ½, Laplace per sum);
- the bin sums ``S_lo, S_hi`` of ``u_i = Log_{p0}(y_i)``: with ``|u_i| ≤ r`` replacing a record moves
  ``|S_lo| + |S_hi|`` by at most ``2r``, so two independent l2-Laplace laws in ``T_{p0}M`` of scale
  ``2r/ε_S`` are the K-norm mechanism of that norm;
- at large ``n·ε`` with a residual bound τ, a second pass: the bin sums of the residuals
  ``u_i − ℓ₀(x̃_i)`` about the first pass's line ``ℓ₀`` (public by then), clipped to the public
  tangent radius ``c = L·τ + κ·(pilot error scale)``; sensitivity ``2c`` in the same norm. Where
  that margin for the pilot's error is large against ``L·τ`` (moderate ``n·ε``), a third pass of the
  same kind about the second pass's line, clipped to ``L·τ`` plus a smaller margin.

Everything after the noise is post-processing: shrinking the bins' covariate means to their nominal
``∓¼`` by a public prior, projecting the line's ends onto the tangent ball of radius r (which holds the
non-private ends), and mapping the ends ``A_lo, A_hi`` to the geodesic through ``Exp_{p0}(A_lo)`` and
``Exp_{p0}(A_hi)``. All settings here are public.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from geodp.mechanisms.base import Guarantee, combine_sum_parts, exact_weighted_sum_parts, sampler_construction
from geodp.models.report import PrivacyReport
from geodp.sensitivity import max_radius

__all__ = [
    "TANGENT_SAMPLER",
    "TangentRegressionSensitivity",
    "TangentSettings",
    "tangent_lipschitz",
    "residual_statistics",
    "tangent_laplace",
    "tangent_release",
    "tangent_report",
    "tangent_statistics",
    "tangent_settings",
]

TANGENT_SAMPLER = (
    "exact: Laplace noise on the count and covariate sums, l2-Laplace in T_p0 (Gamma(dim) radius, uniform "
    "direction) on each tangent bin sum"
)

# Public shares of ε and post-processing constants, tuned on K25's sphere setting (datasets other
# than those benchmarks/bench_regression_utility.py reports on).
ONE_PASS_SPLIT = (0.15, 0.10, 0.75)  # count, covariate sums, statistics
TWO_PASS_SPLIT = (0.10, 0.10, 0.30, 0.50)  # count, covariate sums, statistics, residual statistics
THREE_PASS_SPLIT = (0.10, 0.10, 0.20, 0.25, 0.35)  # ... and the two residual passes
TWO_PASS_MIN_N_EPSILON = 100.0  # below it the second pass costs more than it saves (measured)
PILOT_WEIGHT = 0.1  # κ: the clip radius covers L·τ plus this multiple of the pilot's error scale
THREE_PASS_WEIGHTS = (0.2, 0.0)  # κ of the second and third passes' clips (three passes)
# Three passes where the two-pass clip's margin κ·(pilot error scale) exceeds this share of L·τ:
# the pilot is then too coarse for one residual pass to correct (measured: n·ε below ≈ 300 here).
THREE_PASS_MARGIN = 0.25
DESIGN_PRIOR_SD = 0.0625  # prior spread of a bin's covariate mean about its nominal ∓¼ (shrinkage)
MIN_GAP = 0.25  # smallest distance between the bins' covariate means used to form the slope


class TangentRegressionSensitivity(NamedTuple):
    """Replace-one sensitivities of the tangent release's statistics (the norms are named in
    :func:`tangent_settings`). ``residuals``: one per residual pass (empty for a one-pass release)."""

    count: float
    covariate_sums: float
    statistics: float
    residuals: tuple


@dataclass(frozen=True)
class TangentSettings:
    """The public parameters of one tangent release.

    Attributes
    ----------
    epsilons : tuple of float
        Shares of ε: count, covariate sums, statistics, and one per residual pass.
    radius : float
        ``r``: every ``|Log_{p0}(y)|`` is at most r (responses clipped into ``B_r(p0)``).
    lipschitz : float
        ``L``: ``Log_{p0}`` is L-Lipschitz on ``B_r(p0)`` (used to turn τ into the tangent clips).
    clips : tuple of float
        ``c_k``, the tangent clip radius of each residual pass (empty: one pass).
    sensitivity : TangentRegressionSensitivity
    dim : int
        Dimension of ``T_{p0}M``.
    """

    epsilons: tuple
    radius: float
    lipschitz: float
    clips: tuple
    sensitivity: TangentRegressionSensitivity
    dim: int

    @property
    def passes(self) -> int:
        """Passes over the records: the first, then one per residual pass."""
        return 1 + len(self.clips)

    @property
    def scales(self) -> tuple:
        """Noise scales of the count, covariate sums, statistics and each residual pass."""
        sens = self.sensitivity
        parts = (sens.count, sens.covariate_sums, sens.statistics, *sens.residuals)
        return tuple(s / e for s, e in zip(parts, self.epsilons))


def tangent_lipschitz(space, radius: float) -> float:
    """Lipschitz constant of ``Log_{p0}`` on the ball ``B_radius(p0)`` (Rauch comparison): 1 where
    the sectional curvature is ≤ 0, ``√κ·r / sin(√κ·r)`` for curvature at most κ > 0.

    Examples
    --------
    >>> from geodp.manifolds import Hyperbolic, Sphere
    >>> round(tangent_lipschitz(Sphere(2), 0.7), 5), tangent_lipschitz(Hyperbolic(2), 3.0)
    (1.08659, 1.0)
    """
    kappa = space.curvature_bounds[1]
    if kappa <= 0:
        return 1.0
    a = math.sqrt(kappa) * radius
    return a / math.sin(a)


def _residual_clips(d, n, epsilon, radius, lipschitz, tau, shares, weights):
    """The clip of each residual pass, ``c_k = L·τ + κ_k·8d·σ_{k−1}/n``: ``σ_{k−1}`` is the noise
    scale of the pass before (``2r/ε_S`` for the first, ``2c_{k−1}/ε_{k−1}`` after), so
    ``8dσ_{k−1}/n`` is about twice the noise of a bin mean of the line the pass corrects."""
    clips, sigma = [], 2.0 * radius / (shares[2] * epsilon)
    for k, weight in enumerate(weights):
        clips.append(lipschitz * tau + weight * 8.0 * d * sigma / n)
        sigma = 2.0 * clips[-1] / (shares[3 + k] * epsilon)
    return tuple(clips)


def tangent_settings(space, n: int, epsilon: float, radius: float, tau: float) -> TangentSettings:
    """The public settings of a tangent release of ``n`` records at ``epsilon`` on the ball of
    ``radius`` with residual bound ``tau``: the split of ε, the passes, the clips and every Δ.

    Sensitivities (replace-one): the upper bin's count, 1; the covariate sums, ½ in l1; the tangent
    bin sums, ``2r`` in ``|·|_lo + |·|_hi``; each pass's clipped residual sums, ``2c_k``.

    Passes (a public rule): one below ``n·ε = 100`` or where the two-pass clip reaches r; three
    where the two-pass clip's margin for the pilot's error exceeds ``THREE_PASS_MARGIN·L·τ`` (and
    the three-pass clips stay below r); two otherwise.

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> s = tangent_settings(Sphere(2), 20, 2.0, 0.7, 0.1)
    >>> s.passes, s.sensitivity.statistics                           # n·ε = 40: one pass
    (1, 1.4)
    >>> s = tangent_settings(Sphere(2), 100, 2.0, 0.7, 0.1)
    >>> s.passes, [round(c, 4) for c in s.clips]                     # n·ε = 200: three passes
    (3, [0.2207, 0.1087])
    >>> s = tangent_settings(Sphere(2), 1000, 2.0, 0.7, 0.1)
    >>> s.passes, round(s.clips[0], 4), round(s.sensitivity.residuals[0], 4)   # c = L·τ + κ·8d·σ_S/n
    (2, 0.1124, 0.2248)
    """
    d = space.dim
    lipschitz = tangent_lipschitz(space, radius)
    floor = lipschitz * tau
    two = _residual_clips(d, n, epsilon, radius, lipschitz, tau, TWO_PASS_SPLIT, (PILOT_WEIGHT,))
    three = _residual_clips(d, n, epsilon, radius, lipschitz, tau, THREE_PASS_SPLIT, THREE_PASS_WEIGHTS)
    if n * epsilon < TWO_PASS_MIN_N_EPSILON or two[0] >= radius:
        shares, clips = ONE_PASS_SPLIT, ()
    elif two[0] - floor > THREE_PASS_MARGIN * floor and max(three) < radius:
        shares, clips = THREE_PASS_SPLIT, three
    else:
        shares, clips = TWO_PASS_SPLIT, two
    sensitivity = TangentRegressionSensitivity(1.0, 0.5, 2.0 * radius, tuple(2.0 * c for c in clips))
    return TangentSettings(tuple(s * epsilon for s in shares), radius, lipschitz, clips, sensitivity, d)


def _bin_sums(weights, vectors):
    """Correctly rounded ``Σ_i w_i v_i`` over the records (each term a function of its own record)."""
    flat = vectors.reshape(len(vectors), -1)
    return combine_sum_parts([exact_weighted_sum_parts(flat, weights)]).reshape(vectors.shape[1:])


def tangent_laplace(space, p0, sigma, rng):
    """One l2-Laplace draw in ``T_{p0}M`` (density ∝ exp(−|η|/σ)): radius Gamma(dim, σ), direction
    uniform (exact).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> eta = tangent_laplace(Sphere(2), np.array([0.0, 0.0, 1.0]), 0.1, np.random.default_rng(0))
    >>> eta.shape, float(eta[2])
    ((3,), 0.0)
    """
    return rng.gamma(space.dim, sigma) * space.unchecked.random_unit_tangent(p0, rng=rng)


def _clip_norm(space, p0, vectors, bound):
    """Scale every tangent vector at ``p0`` longer than ``bound`` down to ``bound·(1 − 1e-12)``."""
    norms = np.asarray(space.unchecked.norm(p0, vectors))
    factor = np.where(norms > bound * (1.0 - 1e-12), bound * (1.0 - 1e-12) / np.maximum(norms, 1e-300), 1.0)
    return vectors * factor.reshape(factor.shape + (1,) * (vectors.ndim - 1))


def tangent_statistics(space, xs, Y, p0, radius):
    """The first pass's exact statistics (private; no noise): ``(count_hi, covariate sums (lo, hi),
    S_lo, S_hi, u)`` for scaled covariates ``xs`` in [−½, ½] and responses ``Y``, with
    ``u = Log_{p0}(Y)`` clipped to norm ``radius``.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> north = np.array([0.0, 0.0, 1.0])
    >>> Y = Sphere(2).exp(north, [[0.1, 0.0, 0.0], [0.0, 0.2, 0.0]])
    >>> count, cov, s_lo, s_hi, u = tangent_statistics(Sphere(2), np.array([-0.5, 0.5]), Y, north, 0.7)
    >>> count, cov, bool(np.allclose(s_lo, [0.1, 0, 0]) and np.allclose(s_hi, [0, 0.2, 0]))
    (1.0, (-0.25, 0.25), True)
    """
    u = _clip_norm(space, p0, space.unchecked.log(p0, Y), radius)
    hi = (xs >= 0.0).astype(float)
    lo = 1.0 - hi
    covariates = (math.fsum(lo * (xs + 0.25)), math.fsum(hi * (xs - 0.25)))
    return math.fsum(hi), covariates, _bin_sums(lo, u), _bin_sums(hi, u), u


def residual_statistics(space, xs, u, p0, a_lo, a_hi, clip):
    """The second pass's exact statistics (private; no noise): the bins' sums of the residuals
    ``u_i − ℓ₀(x̃_i)`` about the public line with ends ``a_lo`` (x̃ = −½) and ``a_hi`` (x̃ = ½),
    each clipped to norm ``clip``.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> north, zero = np.array([0.0, 0.0, 1.0]), np.zeros(3)
    >>> u = np.array([[0.3, 0.0, 0.0], [0.0, 0.05, 0.0]])
    >>> e_lo, e_hi = residual_statistics(Sphere(2), np.array([-0.5, 0.5]), u, north, zero, zero, 0.1)
    >>> np.round(e_lo, 6), np.round(e_hi, 6)                   # the first residual is clipped to 0.1
    (array([0.1, 0. , 0. ]), array([0.  , 0.05, 0.  ]))
    """
    hi = (xs >= 0.0).astype(float)
    line = a_lo + (a_hi - a_lo) * (xs + 0.5).reshape((-1,) + (1,) * np.ndim(a_lo))
    residuals = _clip_norm(space, p0, u - line, clip)
    return _bin_sums(1.0 - hi, residuals), _bin_sums(hi, residuals)


def tangent_release(space, xs, Y, p0, settings: TangentSettings, rng):
    """Draw the tangent release from scaled covariates ``xs`` (shape (n,), in [−½, ½]) and responses
    ``Y`` clipped into ``B_r(p0)``. Returns ``(p, v, info)``: the footpoint at ``x̃ = 0``, the
    velocity (shape ``(1, *point_shape)``) and curator-only facts.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> north = np.array([0.0, 0.0, 1.0])
    >>> xs = np.linspace(-0.5, 0.5, 200)
    >>> Y = Sphere(2).exp(north, np.outer(xs, [0.4, 0.0, 0.0]))
    >>> s = tangent_settings(Sphere(2), 200, 50.0, 0.7, 0.1)
    >>> p, v, _ = tangent_release(Sphere(2), xs, Y, north, s, np.random.default_rng(0))
    >>> bool(Sphere(2).dist(p, north) < 0.01), bool(np.linalg.norm(v[0] - [0.4, 0.0, 0.0]) < 0.05)
    (True, True)
    """
    n = len(xs)
    r = settings.radius
    scales = settings.scales
    count_hi, (cov_lo, cov_hi), s_lo, s_hi, u = tangent_statistics(space, xs, Y, p0, r)
    # Design: the upper bin's count and the covariate means, shrunk to their nominal ∓¼.
    n_hi = min(max(count_hi + rng.laplace(0.0, scales[0]), 1.0), n - 1.0)
    n_lo = n - n_hi
    noise_var = 2.0 * scales[1] ** 2
    prior = DESIGN_PRIOR_SD**2

    def shrunk_mean(total, count, nominal, low, high):
        return min(max(nominal + count * total * prior / (count**2 * prior + noise_var), low), high)

    x_lo = shrunk_mean(cov_lo + rng.laplace(0.0, scales[1]), n_lo, -0.25, -0.5, 0.0)
    x_hi = shrunk_mean(cov_hi + rng.laplace(0.0, scales[1]), n_hi, 0.25, 0.0, 0.5)
    gap = max(x_hi - x_lo, MIN_GAP)

    def ends(m_lo, m_hi):
        slope = (m_hi - m_lo) / gap
        return (_clip_norm(space, p0, m_lo + slope * (s - x_lo), r) for s in (-0.5, 0.5))

    def noisy(sums, sigma):
        return (
            (sums[0] + tangent_laplace(space, p0, sigma, rng)) / n_lo,
            (sums[1] + tangent_laplace(space, p0, sigma, rng)) / n_hi,
        )

    a_lo, a_hi = ends(*noisy((s_lo, s_hi), scales[2]))
    for k, clip in enumerate(settings.clips):  # residuals about the last line (public now), clipped
        e_lo, e_hi = noisy(residual_statistics(space, xs, u, p0, a_lo, a_hi, clip), scales[3 + k])
        a_lo, a_hi = ends(
            a_lo + (a_hi - a_lo) * (x_lo + 0.5) + e_lo,
            a_lo + (a_hi - a_lo) * (x_hi + 0.5) + e_hi,
        )
    geo = space.unchecked
    start, end = geo.exp(p0, a_lo), geo.exp(p0, a_hi)
    p = geo.exp(start, 0.5 * geo.log(start, end))
    v = 2.0 * geo.log(p, end)
    return p, v[None], {"acceptance": None, "ess": None}


def tangent_report(space, settings: TangentSettings, epsilon, n, center, radius, x_bounds, tau, on_invalid, rng):
    """The publishable report of a tangent release (public settings only).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> s = tangent_settings(Sphere(2), 1000, 2.0, 0.7, 0.1)
    >>> report = tangent_report(Sphere(2), s, 2.0, 1000, np.array([0.0, 0.0, 1.0]), 0.7,
    ...                         (np.zeros(1), np.ones(1)), 0.1, "raise", None)
    >>> d = report.to_dict()
    >>> d["passes"], round(d["lipschitz"], 4), d["exact"], sum(d["epsilon_split"]) == 2.0
    (2, 1.0866, True, True)
    """
    sens, scales, eps = settings.sensitivity, settings.scales, settings.epsilons
    guarantee = Guarantee(
        mechanism="tangent sufficient statistics at the public centre p0 (output perturbation, composed)",
        epsilon=epsilon,
        delta=0.0,
        sensitivity=sens.statistics,
        metric="|S_lo| + |S_hi| of the bin sums of Log_p0(y) in T_p0 (the shown Δ and σ; the others below)",
        scale=scales[2],
        scale_rule="σ = Δ/ε_part for each part (K-norm/Laplace, data-independent normaliser); the parts compose",
        space=repr(space),
        sampler=TANGENT_SAMPLER,
        exact=True,
        support="footpoint and fitted ends in the public ball (the ends are projected onto it)",
        **sampler_construction(rng, "the tangent noise is a floating-point l2-Laplace on a curved space's tangent"),
    )
    lower, upper = x_bounds
    parts = [
        f"count of records with x above the centre of x_bounds: Δ = 1, ε = {eps[0]!r}, Laplace scale {scales[0]:.6g}",
        f"covariate sums about the bins' nominal means: Δ = 1/2 (l1), ε = {eps[1]!r}, Laplace scale {scales[1]:.6g}",
        f"tangent bin sums of Log_p0(y), |Log_p0(y)| ≤ r: Δ = 2r = {sens.statistics:.6g}, ε = {eps[2]!r}, "
        f"scale {scales[2]:.6g}",
    ]
    for k, (clip, delta) in enumerate(zip(settings.clips, sens.residuals)):
        parts.append(
            f"pass {k + 2}: tangent bin sums of the residuals about pass {k + 1}'s line, clipped to c = L·τ + "
            f"κ·(that line's error scale) = {clip:.6g}: Δ = 2c = {delta:.6g}, ε = {eps[3 + k]!r}, "
            f"scale {scales[3 + k]:.6g}"
        )
    details = [
        f"n           : {n} records (public)",
        "p0          : the public centre (to_dict()['center']); the fit is made in T_p0",
        f"Lipschitz   : L = {settings.lipschitz:.6g} for Log_p0 on the ball (sets the residual clip only)",
        "parts       : " + "; ".join(parts),
    ]
    assumptions = [
        f"radius {radius:.6g} < r* = {max_radius(space):.6g}; responses clipped into the ball, so |Log_p0(y)| ≤ r",
        "covariates clipped into x_bounds "
        + ", ".join(f"[{lo:.6g}, {hi:.6g}]" for lo, hi in zip(lower, upper))
        + " and mapped to [-1/2, 1/2]; the bins split at 0 (a public rule)",
        f"{settings.passes} pass(es) (public rule: two when n·ε ≥ {TWO_PASS_MIN_N_EPSILON:g} and c < r, three "
        f"when the two-pass clip's margin for the pilot exceeds {THREE_PASS_MARGIN:g}·L·τ); ε is the sum of the "
        "parts (sequential composition)",
    ]
    if settings.clips:
        clips = ", ".join(f"{c:.6g}" for c in settings.clips)
        assumptions.append(f"residuals clipped in T_p0 to c = {clips} (τ = {tau:.6g})")
    header = (
        "geodp privacy report: PrivateGeodesicRegression, mechanism='tangent' (publishable: nothing in it "
        "is computed from the private data)"
    )
    data = guarantee.to_dict()
    data["assumptions"] = assumptions
    data |= {
        "differentially_private": True,
        "mechanism_option": "tangent",
        "n_samples": n,
        "center": np.asarray(center).tolist(),
        "radius": radius,
        "x_bounds": [np.asarray(lower).tolist(), np.asarray(upper).tolist()],
        "residual_bound": tau,
        "lipschitz": settings.lipschitz,
        "passes": settings.passes,
        "tangent_clips": list(settings.clips),
        "epsilon_split": list(eps),
        "sensitivities": sens._asdict() | {"residuals": list(sens.residuals)},
        "scales": list(scales),
        "on_invalid": on_invalid,
    }
    return PrivacyReport(header + "\n" + guarantee.render(details, assumptions), data)
