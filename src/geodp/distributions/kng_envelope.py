"""The KNG proposal that follows the law's concentration: a radial law at the Fréchet mean whose
exponent is the data's own lower envelope of the gradient norm (docs/math.md §5, "Adaptive envelope").

Along a unit-speed geodesic ``γ`` from the anchor ``a`` (the computed Fréchet mean), the Hessian
comparison for ``ρ²(·, x_i)/2`` on a space of curvature ``≤ κ_max`` and ``ρ(γ(u), x_i) ≤ s_i + u``
(``s_i = ρ(a, x_i)``) give ``⟨∇F_D(γ(t)), γ'(t)⟩ ≥ −‖∇F_D(a)‖ + G_D(t)`` with

    G_D(t) = ∫_0^t (1 − (1/n) Σ_i φ(min(s_i + u, 2r))) du,   φ(s) = 1 − s√κ_max·cot(s√κ_max)

(``φ = 0`` when ``κ_max ≤ 0``). So ``‖∇F_D(x)‖ ≥ ℓ(ρ(a, x)) − ‖∇F_D(a)‖`` for every ``x`` in the
ball, where ``ℓ`` interpolates lower bounds of the concave ``G_D`` at public knots. The proposal
draws ``t`` from ``∝ e^{−ℓ(t)/σ} J(t)`` on ``[0, r + δ]`` (``J`` the polar volume density of an
isotropic space, ``δ = ρ(m0, a)``) by rejection from a piecewise-exponential hat, and a uniform
direction; a draw in the ball is kept with probability
``exp(−(‖∇F_D(x)‖ + ‖∇F_D(a)‖ − ℓ(t))/σ)``. The output law is exactly KNG whatever the data (the
envelope dominates the target); only the work depends on the data. Because ``ℓ`` is the data's own
envelope near the mode (slope ``1 − mean φ(s_i)`` at 0, not a chord over the whole ball), the
acceptance no longer falls with n·ε.
"""

from __future__ import annotations

import math

import numpy as np

from geodp.distributions.piecewise_hat import PiecewiseExponentialHat
from geodp.distributions.radial import is_isotropic
from geodp.errors import AssumptionError

__all__ = [
    "EnvelopeProposal",
    "data_envelope",
    "envelope_knots",
    "envelope_on_knots",
    "has_envelope_proposal",
    "hessian_excess",
]

_KNOTS_PER_OCTAVE = 4  # knots of ℓ at σ·2^(j/4): its chord error stays a fraction of σ where the mass is
_SUBSTEPS = 8  # right-end Riemann steps of G_D between knots
_SLACK = 1 + 1e-6  # the ball check admits records at r(1 + 1e-9); the envelopes use r(1 + 1e-6)


def hessian_excess(s, kappa):
    """``|c_κ(s) − 1|``: how far the transverse eigenvalue ``c_κ(s)`` of the Hessian of ``ρ²(·, y)/2``
    at distance ``s`` from ``y`` lies from the radial one (1) on the model space of curvature κ:
    ``c_κ(s) = s√κ·cot(s√κ)`` (κ > 0), ``s√−κ·coth(s√−κ)`` (κ < 0), 1 (κ = 0).

    Examples
    --------
    >>> round(float(hessian_excess(0.5, 1.0)), 6), float(hessian_excess(0.5, 0.0))
    (0.084756, 0.0)
    """
    s = np.asarray(s, dtype=float)
    if kappa == 0:
        return np.zeros_like(s)
    z = math.sqrt(abs(kappa)) * s
    with np.errstate(divide="ignore", invalid="ignore"):
        c = z / np.tan(z) if kappa > 0 else z / np.tanh(z)
    return np.abs(np.where(z > 1e-4, c, 1.0 - math.copysign(1.0, kappa) * z * z / 3.0) - 1.0)


def has_envelope_proposal(space, radius) -> bool:
    """Does the adaptive-envelope KNG sampler apply? Isotropic curved spaces (spheres, hyperbolic
    spaces, Kendall's shape space) whose rays from any anchor in the ball stay inside the cut
    radius and where ``φ`` is increasing on ``[0, 2r]`` (``2r√κ_max < π``).

    Examples
    --------
    >>> from geodp.manifolds import SPD, KendallShape
    >>> has_envelope_proposal(KendallShape(100), 0.2), has_envelope_proposal(SPD(3), 1.0)
    (True, False)
    """
    if space.is_flat or not is_isotropic(space):
        return False
    kappa_max = float(space.curvature_bounds[1])
    reach = 2 * radius * _SLACK
    return reach < float(space.cut_radius) and (kappa_max <= 0 or reach * math.sqrt(kappa_max) < math.pi)


def envelope_knots(scale, length):
    """Public knots of ``ℓ`` on ``[0, length]``: 0, ``σ·2^{j/4}`` below ``length``, and ``length``.

    Examples
    --------
    >>> envelope_knots(0.5, 1.0).round(3).tolist()
    [0.0, 0.5, 0.595, 0.707, 0.841, 1.0]
    """
    top = max(0, math.ceil(_KNOTS_PER_OCTAVE * math.log2(length / scale))) if length > scale else 0
    inner = scale * 2.0 ** (np.arange(top) / _KNOTS_PER_OCTAVE)
    return np.concatenate([[0.0], inner[inner < length * (1 - 1e-12)], [length]])


def envelope_on_knots(knots, excess):
    """Lower bounds of ``∫_0^t (1 − excess(u)) du`` at the ``knots`` for a non-decreasing
    ``excess`` (a callable on arrays): right-end Riemann sums over ``_SUBSTEPS`` equal steps per knot
    interval. Returns ``(values at the knots, the fine grid, values on it)``.

    Examples
    --------
    >>> import numpy as np
    >>> values, grid, fine = envelope_on_knots(np.array([0.0, 1.0]), lambda u: u)
    >>> float(values[-1]), len(grid)          # ∫_0^1 (1 − u) = 0.5, minus the Riemann slack
    (0.4375, 9)
    """
    steps = np.linspace(0.0, 1.0, _SUBSTEPS + 1)[1:]
    grid = np.concatenate([[0.0], (knots[:-1, None] + np.diff(knots)[:, None] * steps[None]).ravel()])
    fine = np.concatenate([[0.0], np.cumsum((1.0 - excess(grid[1:])) * np.diff(grid))])
    return fine[::_SUBSTEPS], grid, fine


def _kahler_spread(space, anchor, data, distances):
    """``Λ = λ_max((1/n) Σ sin²(2s_i) v_i v_iᵀ)``, ``v_i = J·log_a(x_i)/s_i`` (Kendall's shape space
    as ``CP^{k−2}``, J the complex structure): bounds ``(1/n) Σ sin²(2s_i)⟨w, v_i⟩²`` over unit ``w``."""
    logs = np.asarray(space.unchecked.log(anchor, data), dtype=float)
    turned = np.stack([-logs[..., 1], logs[..., 0]], axis=-1).reshape(len(data), -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = np.where(distances > 0, np.sin(2 * distances) / distances, 0.0)
    rows = turned * (weight / math.sqrt(len(data)))[:, None]
    small = rows @ rows.T if len(rows) <= rows.shape[1] else rows.T @ rows
    return float(np.linalg.eigvalsh(small)[-1]) * (1 + 1e-9) + 1e-15


def _kahler_psi(rho):
    """``ψ(ρ) = ρ tan ρ / sin²(2ρ) = ρ/(4 sin ρ cos³ρ)``, increasing on ``[0, π/2)``, ψ(0) = 1/4."""
    rho = np.asarray(rho, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(rho > 1e-8, rho / (4 * np.sin(rho) * np.cos(rho) ** 3), 0.25)


def data_envelope(space, anchor, data, radius, knots, *, distances=None):
    """Lower bounds of ``G_D`` at the ``knots`` for the records ``data`` and the anchor ``a``
    (``distances``: the records' ``ρ(a, x_i)`` when the caller has them, else measured here).

    On Kendall's shape space (``CP^{k−2}``, curvatures in [1, 4]) the curvature 4 acts only on the
    direction ``J∇ρ_i``: the Hessian of ``ρ_i²/2`` is ``≥ c_1(ρ_i) − ρ_i tan ρ_i ⟨w, J∇ρ_i⟩²``, and
    ``sin(2ρ_i)⟨γ', J∇ρ_i⟩`` is constant along a geodesic γ (``J∇cos²ρ_i`` is a Killing field), so
    ``G_D' ≥ 1 − mean_i φ_1(s_i + u) − ψ(s_max + u)·Λ`` (docs/math.md §5, :func:`_kahler_spread`).
    Elsewhere ``G_D' ≥ 1 − mean_i φ_{κ_max}(s_i + u)``.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> north = np.array([0.0, 0.0, 1.0])
    >>> bool(data_envelope(Sphere(2), north, np.tile(north, (3, 1)), 1.0, np.array([0.0, 0.5]))[-1] < 0.5)
    True
    """
    knots = np.asarray(knots, dtype=float)
    kappa_max = float(space.curvature_bounds[1])
    if kappa_max <= 0:
        return knots.copy()
    cap = 2 * radius * _SLACK
    s = np.asarray(space.unchecked.dist(anchor, data) if distances is None else distances, dtype=float)
    if "kendall-shape-directions" in space.closed_forms:
        spread, s_max = _kahler_spread(space, anchor, data, s), float(np.max(s))

        def excess(u):
            rho = np.minimum(s[:, None] + u[None], cap)
            return np.mean(hessian_excess(rho, 1.0), axis=0) + _kahler_psi(np.minimum(s_max + u, cap)) * spread

    else:

        def excess(u):
            return np.mean(hessian_excess(np.minimum(s[:, None] + u[None], cap), kappa_max), axis=0)

    # The excess is non-decreasing in u: on each step it is at most its value at the right end.
    return envelope_on_knots(knots, excess)[0]


class EnvelopeProposal:
    """Exact draws of ``∝ e^{−ℓ(ρ(a, x))/σ}`` on the geodesic ball ``B_length(a)`` of an isotropic
    space, ``ℓ`` piecewise linear with the given knots and values (docs/math.md §5).

    The radius comes from the hat ``e^{−ℓ(t)/σ + J̄(t)}`` with ``J̄`` the secant extensions of the
    concave ``log J`` on a geometric grid that contains the knots (each step takes the secant of
    its left neighbour, the first ones that of their right neighbour), refined until the hat's
    efficiency, by quadrature, is at least 1/2 (at most 8 levels; any level's hat dominates the
    law); the direction is uniform. :meth:`propose` returns the points, the log of the radial
    acceptance and the radii.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    >>> knots = np.array([0.0, 0.5, 1.0])
    >>> law = EnvelopeProposal(space, north, 0.1, knots, knots.copy())
    >>> x, log_acc, t = law.propose(5, np.random.default_rng(0))
    >>> x.shape, bool(np.all(log_acc <= 0))
    ((5, 3), True)
    """

    def __init__(self, space, anchor, scale, knots, values):
        self.space, self.anchor, self.scale = space, anchor, scale
        self.knots, self.values = np.asarray(knots, dtype=float), np.asarray(values, dtype=float)
        length = float(self.knots[-1])
        d = space.dim
        start = min(scale, length) * 1e-3
        for level in range(8):
            ratio = 1.0 + 0.5 / (math.sqrt(d) * 2**level)
            geometric = start * ratio ** np.arange(math.ceil(math.log(length / start) / math.log(ratio)) + 1)
            nodes = np.union1d(np.concatenate([[0.0], geometric[geometric < length]]), self.knots)
            hat = self._hat(nodes)
            # Quadrature of the radial law against the hat decides refinement only: every hat
            # dominates the law, so the last one is used even below 1/2 (more work, same law; a
            # data-dependent exception here would be observable).
            with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
                efficiency = float(np.nansum(hat.piece_integrals(lambda t: self._log_radial(t) - self.shift)))
            if efficiency >= 0.5 * float(hat.mass.sum()):
                break
        self.hat = hat

    def ell(self, t):
        """``ℓ(t)``: the piecewise-linear interpolation of the knot values."""
        return np.interp(t, self.knots, self.values)

    def _log_radial(self, t):
        with np.errstate(divide="ignore", invalid="ignore"):
            return -self.ell(t) / self.scale + np.asarray(self.space.radial_log_jacobian(t))

    def _hat(self, nodes):
        """Piecewise-exponential hat over the steps between ``nodes`` (0 first, the last knot last)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            log_j = np.asarray(self.space.radial_log_jacobian(nodes), dtype=float)
            secant = np.diff(log_j) / np.diff(nodes)  # secant of step k = [nodes[k], nodes[k+1]]
        k = np.arange(len(nodes) - 1)
        # Step k is bounded by the extension of the secant of step k − 1 (concavity), or, where that
        # one is not finite (next to t = 0), of step k + 1 extended backwards; the last steps by the left one.
        use = np.where(np.isfinite(np.append(np.nan, secant[:-1])), k - 1, np.minimum(k + 1, len(k) - 1))
        slope_j, through = secant[use], nodes[use]
        lo, hi = nodes[:-1], nodes[1:]
        ell_lo = self.ell(lo)
        ell_slope = np.diff(self.ell(nodes)) / np.diff(nodes)  # ℓ is linear on each step (knots are nodes)
        slope = slope_j - ell_slope / self.scale
        value = log_j[use] - (ell_lo + ell_slope * (through - lo)) / self.scale
        if not np.all(np.isfinite(slope) & np.isfinite(value)):
            raise AssumptionError(
                "the envelope proposal's radial hat is not finite on this grid: please report this bug."
            )
        tops = value + slope * (np.where(slope > 0, hi, lo) - through)
        self.shift = float(np.max(tops))
        return PiecewiseExponentialHat(lo, hi, slope, through, value - self.shift)

    def propose(self, m, rng):
        """``m`` points ``exp_a(t u)``, the log of their radial acceptance (``≤ 0``) and their ``t``."""
        t, log_hat = self.hat.propose(m, rng)
        t = np.clip(t, 0.0, self.knots[-1])
        log_accept = np.minimum(self._log_radial(t) - self.shift - log_hat, 0.0)
        u = self.space.unchecked.random_unit_tangent(self.anchor, size=m, rng=rng)
        return self.space.unchecked.polar_exp(self.anchor, u, t), np.where(t > 0, log_accept, -np.inf), t
