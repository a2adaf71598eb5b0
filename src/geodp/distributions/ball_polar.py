"""Exact draws of the Laplace law ``∝ e^{−λρ(a, x)}`` restricted to a ball ``B_r(m0)`` that contains
its footpoint ``a``, in polar coordinates at ``a`` (docs/math.md §5).

A point ``exp_a(tu)`` lies in the ball iff its direction ``u`` lies in a set ``D(t)`` that shrinks
as ``t`` grows (the ball is convex and contains ``a``). The radius is drawn from
``∝ e^{−λt} J(t) S(t)`` (``J`` the polar volume density, ``S`` the share of ``D(t)`` among the
directions) and the direction uniformly in ``D(t)``: on spaces of constant curvature ``D(t)`` is a
cap (law of cosines), on Kendall's shape space the exact set is drawn through two coordinates of
``u``; on other isotropic spaces the cap of the largest curvature contains ``D(t)`` and the draws
outside the ball are rejected by the caller. The draws are exact, and at most half of the
proposals are lost to the construction (checked by quadrature when the proposal is built).

Under fixed work (:func:`geodp.work.fixed_work`, a timing-safe release) the construction does a
public amount of work (docs/math.md §15): its radial grid spans the public ``[0, 2r]`` (not
``[0, r + ρ(a, m0)]``), it builds every refinement level and keeps the first that reaches
acceptance 1/2 (the one the default build stops at on the same grid), the direction shares are
computed on every node by every branch of their formula, and an anchor at the centre computes,
and discards, the shares of an anchor on the boundary.

Used by KNG (its proposal at the Fréchet mean) and by the truncated Riemannian Laplace.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special
from scipy.special import logsumexp

from geodp.distributions.piecewise_hat import PiecewiseExponentialHat
from geodp.distributions.radial import SecantHat, is_isotropic
from geodp.errors import AssumptionError
from geodp.work import count, fixed_work

__all__ = ["direction_share", "log_direction_share", "exact_ball_proposal", "has_exact_ball_proposal"]


def log_sn(x, kappa):
    """``log sn_κ(x)`` for ``x > 0`` without the ``1/√|κ|`` factor (it cancels in ratios)."""
    if kappa > 0:
        return np.log(np.sin(math.sqrt(kappa) * x))
    if kappa < 0:
        z = math.sqrt(-kappa) * x
        return z + np.log(-np.expm1(-2.0 * z)) - math.log(2.0)  # log sinh z, finite for every z > 0
    return np.log(x)


def _cap_log_threshold(t, s, radius, kappa):
    """``log Q`` (``Q ∈ [0, 1]``) of :func:`direction_share`: ``exp_η(t u)`` lies in the model-space
    ball iff ``(1 − cos θ)/2 ≤ Q``, θ the angle between ``u`` and the direction of the centre."""
    t, s = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(s, dtype=float))
    alpha, beta = (radius + t - s) / 2.0, (radius - t + s) / 2.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_q = log_sn(alpha, kappa) + log_sn(np.abs(beta), kappa) - log_sn(t, kappa) - log_sn(s, kappa)
    log_q = np.where(beta > 0, np.minimum(log_q, 0.0), -np.inf)
    return np.where(np.isnan(log_q), -np.inf, log_q)


_SERIES_TERMS = 400  # terms of the lower-tail series of I_x(a, a) (ratio ≤ 2x ≤ 0.8 where it is used)
_TAIL = math.log(1e-200)  # below this, log I_x(a, a) by the series (betainc would underflow)


def _log_sym_betainc(a, log_x):
    """``log I_x(a, a)`` for ``x ≤ 1/2``, accurate where ``I`` underflows: from ``betainc`` above
    1e-200, else ``a log x + a log(1 − x) − log a − log B(a, a) + log Σ_n c_n`` with ``c_0 = 1``,
    ``c_{n+1} = c_n (2a + n) x / (a + 1 + n)`` (the hypergeometric series of the incomplete beta)."""
    log_x = np.asarray(log_x, dtype=float)
    x = np.exp(log_x)
    with np.errstate(divide="ignore"):
        out = np.log(special.betainc(a, a, x))
    tail = ~(out > _TAIL) & np.isfinite(log_x)
    every = fixed_work() is not None  # the series on every element (dummies off the tail), kept on the tail
    if every or np.any(tail):
        lx = np.where(np.isfinite(log_x), log_x, math.log(0.25)) if every else log_x[tail]
        with np.errstate(divide="ignore", invalid="ignore"):  # stand-ins off the tail may sit at x = 1
            series = a * lx + a * np.log1p(-np.exp(lx)) - math.log(a) - special.betaln(a, a) + _log_series(a, lx)
        out[tail] = series[tail] if every else series
    return out


def _log_series(a, log_x):
    """``log Σ_n c_n`` (``c_0 = 1``, ``c_{n+1} = c_n (2a + n) x / (a + 1 + n)``, ``x ≤ 1/2``: the
    terms are at most ``(2x)^n ≤ 1``, summed as they are) over ``_SERIES_TERMS`` terms."""
    count("share-series", log_x.size)
    x = np.exp(log_x)
    term, total = np.ones_like(x), np.ones_like(x)
    for n in range(_SERIES_TERMS - 1):
        term *= (2 * a + n) / (a + 1 + n) * x
        total += term
    return np.log(total)


def _truncated_sym_beta(a, log_q, u):
    """``z ∈ [0, Q]`` with ``I_z(a, a) = u·I_Q(a, a)`` (the symmetric Beta(a, a) truncated to
    ``[0, Q]`` by its inverse CDF, ``u`` uniform): ``betaincinv`` where ``I_Q`` is representable,
    else Newton's method on ``log I_z`` in ``log z`` from the power law ``z ≈ Q·u^{1/a}``."""
    log_q, u = np.asarray(log_q, dtype=float), np.asarray(u, dtype=float)
    log_mass = _log_sym_betainc(a, log_q)
    z = np.empty_like(log_q)
    plain = log_mass > _TAIL
    if fixed_work() is not None:
        return _truncated_sym_beta_fixed(a, log_q, u, log_mass, plain)
    z[plain] = special.betaincinv(a, a, u[plain] * np.exp(log_mass[plain]))
    if np.any(~plain):
        lq, target = log_q[~plain], np.log(u[~plain]) + log_mass[~plain]
        y = lq + np.log(u[~plain]) / a
        for _ in range(50):
            level = _log_sym_betainc(a, y)
            # d log I_z / d log z = z^a (1 − z)^(a−1) / (B(a, a) I_z)
            slope = np.exp(a * y + (a - 1) * np.log1p(-np.exp(y)) - special.betaln(a, a) - level)
            step = (level - target) / slope
            y = np.minimum(y - step, lq)
            if np.all(np.abs(step) < 1e-13 * np.maximum(1.0, np.abs(y))):
                break
        z[~plain] = np.exp(y)
    return z


def _truncated_sym_beta_fixed(a, log_q, u, log_mass, plain):
    """:func:`_truncated_sym_beta` with fixed work: ``betaincinv`` and all 50 Newton steps on
    every element (finite stand-ins where the other branch applies), each element frozen once
    its own step is below the tolerance; the branch of each element is then kept."""
    finite = np.isfinite(log_q) & np.isfinite(log_mass)
    lq = np.where(finite, log_q, math.log(0.25))
    mass = np.where(finite, log_mass, _log_sym_betainc(a, lq))
    with np.errstate(under="ignore"):
        z = special.betaincinv(a, a, u * np.exp(mass))
    target = np.log(u) + mass
    y = lq + np.log(u) / a
    moving = np.ones(len(y), dtype=bool)
    for _ in range(50):
        count("beta-newton-steps", len(y))
        level = _log_sym_betainc(a, y)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            slope = np.exp(a * y + (a - 1) * np.log1p(-np.exp(y)) - special.betaln(a, a) - level)
            step = (level - target) / slope
        y = np.where(moving, np.minimum(y - step, lq), y)
        moving &= ~(np.abs(step) < 1e-13 * np.maximum(1.0, np.abs(y)))
    return np.where(plain, z, np.exp(y))


def direction_share(t, s, radius, kappa, dim):
    """Share of uniform directions ``u`` at η with ``exp_η(t u)`` inside ``B_radius(m0)`` when
    ``ρ(η, m0) = s ≤ radius``, on the model space of constant curvature κ (a lower bound on
    spaces of curvature ≥ κ; docs/math.md §5).

    By the law of cosines the point is inside iff ``cos θ ≥ 1 − 2Q`` with θ the angle between
    ``u`` and the direction of ``m0``, ``Q = sn((r + t − s)/2) sn((r − t + s)/2) / (sn t sn s)``;
    ``(1 + cos θ)/2 ~ Beta((d − 1)/2, (d − 1)/2)``, so the share is ``I_Q((d − 1)/2, (d − 1)/2)``.

    Parameters
    ----------
    t, s : array_like
        Distance of the draw from η, and of η from the centre ``m0`` (broadcast together).
    radius : float
        Radius of the ball.
    kappa : float
        Curvature of the model space.
    dim : int
        Dimension of the space.

    Returns
    -------
    numpy.ndarray
        The share, in ``[0, 1]``.

    Examples
    --------
    >>> round(float(direction_share(1e-9, 1.0, 1.0, 0.0, 3)), 6)  # a tiny step from the boundary
    0.5
    >>> float(direction_share(0.5, 0.0, 1.0, 1.0, 10)), float(direction_share(1.5, 0.0, 1.0, 1.0, 10))
    (1.0, 0.0)
    """
    return np.exp(log_direction_share(t, s, radius, kappa, dim))


def log_direction_share(t, s, radius, kappa, dim):
    """``log`` of :func:`direction_share`, accurate where the share underflows (deep in the tail
    of the Beta law, as on high-dimensional hyperbolic spaces far from the centre).

    Examples
    --------
    >>> float(log_direction_share(5.9, 3.0, 3.0, -1.0, 1000)) < -745  # exp() of it would be 0
    True
    """
    t, s = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(s, dtype=float))
    log_q = _cap_log_threshold(t, s, radius, kappa)
    if dim == 1:  # u = ±(direction of m0)
        with np.errstate(divide="ignore"):
            log_share = np.log(0.5 * (radius - t + s >= 0) + 0.5 * (log_q >= 0.0))
    else:
        a = (dim - 1) / 2.0
        log_share = np.where(log_q >= 0.0, 0.0, -np.inf)  # I_0 = 0 and I_1 = 1
        between = np.isfinite(log_q) & (log_q < 0.0)
        lower = between & (log_q <= math.log(0.5))  # I_Q = 1 − I_{1−Q} by symmetry above 1/2
        upper = between & ~lower
        if fixed_work() is not None:  # both branches on every element (dummies elsewhere), then kept
            dummy = math.log(0.25)
            low = _log_sym_betainc(a, np.where(lower, log_q, dummy))
            with np.errstate(divide="ignore"):  # a dummy's I may round to 1
                high = np.log1p(-special.betainc(a, a, -np.expm1(np.where(upper, log_q, dummy))))
            log_share = np.where(lower, low, np.where(upper, high, log_share))
        else:
            log_share[lower] = _log_sym_betainc(a, log_q[lower])
            log_share[upper] = np.log1p(-special.betainc(a, a, -np.expm1(log_q[upper])))
    with np.errstate(divide="ignore"):
        log_share = np.where(s == 0, np.log((t <= radius).astype(float)), log_share)
    return np.where(t == 0, 0.0, log_share)


def exact_shape_directions(space, radius):
    """Does the cap route draw from the exact in-ball directions (:class:`KendallProposal`)?
    On Kendall's shape space with ``k ≥ 4`` and ``r < π/4`` (the ball is strongly convex, so each
    ray from the anchor leaves it once, and rays of length ``r + δ < π/2`` stay injective)."""
    return "kendall-shape-directions" in space.closed_forms and space.dim >= 4 and radius < math.pi / 4


class CapProposal:
    """Exact draws of ``∝ e^{−hρ(a, x)/σ}`` on the region swept by the model-space direction caps
    around the anchor ``a`` (docs/math.md §5): the ball itself on spaces of constant curvature,
    a superset (κ_max caps) on the others, where draws outside the ball are rejected.

    The radius ``t`` is drawn from ``∝ e^{−ht/σ} J(t) S(t)`` (``S`` the cap's share of directions,
    non-increasing in t) by rejection from the secant hat of the concave ``−ht/σ + log J`` times
    an upper bound on ``S`` over each interval (its value at the left node); the nodes are refined
    until that hat accepts ≥ 1/2 (a construction guarantee, checked by quadrature against a lower
    bound on ``S`` at the right node). The direction is uniform in the cap:
    ``(1 − cos θ)/2`` from the symmetric Beta((d−1)/2) truncated to ``[0, Q(t)]`` by its inverse
    CDF, the rest uniform on the orthogonal sphere. Subclasses change the direction sets through
    :meth:`_log_share_bounds`, :meth:`_direction_weight` and :meth:`_directions`.
    """

    def __init__(self, space, anchor, center, rate, radius, kappa):
        self.space, self.anchor, self.rate, self.radius, self.kappa = space, anchor, rate, radius, kappa
        self.a = (space.dim - 1) / 2.0
        fixed = fixed_work() is not None
        self.delta = float(space.unchecked.dist(center, anchor))
        self.axis = None  # the anchor (nearly) at the centre: the ball lies in B_{r+δ}(a), so all
        # directions up to r + δ are proposed and the caller's in-ball check decides
        if self.delta > 1e-6 * radius or fixed:  # (under fixed work computed, and dropped, at the centre too)
            with np.errstate(divide="ignore", invalid="ignore"):
                log_c = space.unchecked.log(anchor, center)
            # Close to the anchor a log map can leave the tangent space by rounding (on the sphere
            # ⟨a, log⟩ ≈ −δ/2·eps-level terms grow relative to δ): project before normalising, so
            # that every draw lies on the manifold to rounding whatever δ is.
            with np.errstate(divide="ignore", invalid="ignore"):
                log_c = space.to_tangent(anchor, log_c)
                axis = log_c / float(space.unchecked.norm(anchor, log_c))
            self.axis = axis if self.delta > 1e-6 * radius else None
        # The law vanishes beyond r + δ; under fixed work the grid spans the public worst case 2r.
        self.length = min(2.0 * radius if fixed else radius + self.delta, float(space.cut_radius))
        # Where e^{−λt}t^{d−1} (the flat radial law, Gamma(d, 1/λ)) has all but e^−40 of its mass:
        # with a large rate λ the law sits near 0, and nodes spread over [0, r + δ] would miss it.
        window = min(self.length, (space.dim + 10.0 * math.sqrt(space.dim) + 60.0) / rate)
        chosen = None  # the first level whose hat accepts ≥ 1/2; fixed work builds the others too
        for level, intervals in enumerate(256 << k for k in range(_LEVELS)):  # 256 to 65,536 intervals
            self._keep_rows = chosen is None  # a later level's direction tables are never used
            nodes = np.linspace(0.0, self.length, intervals + 1)[1:]
            if window < self.length:
                nodes = np.union1d(nodes, np.linspace(0.0, window, intervals + 1)[1:])
            t_all = np.concatenate([[0.0], nodes])
            g = self._g(nodes)
            # Interval i is [t_i, t_{i+1}], t = (0, nodes): log of an upper bound on S over it,
            # and of a lower bound on S(t_i) (S = 0 beyond the ball: such pieces get no mass).
            # Shares are kept in logs: far out on high-dimensional hyperbolic spaces the mass sits
            # where S underflows (e^{g} grows faster than S falls), and must not be dropped.
            log_upper, log_lower = self._log_share_bounds(t_all, level)
            peak = np.maximum(np.append(-np.inf, g), np.append(g, -np.inf)) + log_upper  # per interval
            shift = float(np.max(peak[np.isfinite(peak)]))
            log_right = np.append(log_lower[1:], -np.inf)  # S on interval i is at least S(t_{i+1})

            # ≤ e^{g − shift}·S on each interval (this iteration's grid, bound as defaults)
            def lower_density(t, t_all=t_all, shift=shift, log_right=log_right):
                interval = np.clip(np.searchsorted(t_all, t, side="right") - 1, 0, len(t_all) - 1)
                return self._g(t) - shift + log_right[interval]

            with np.errstate(invalid="ignore", over="ignore"):
                hat = SecantHat(nodes, g - shift, self.length)  # its own masses may overflow: unused
                capped = _SecantHatShifted(hat, np.repeat(log_upper, 2))
                efficiency = float(np.nansum(hat.piece_integrals(lower_density)) / capped.mass.sum())
            count("polar-nodes", len(t_all))
            if efficiency >= 0.5 and chosen is None:
                chosen = (capped, shift, t_all, {name: getattr(self, name) for name in self._LEVEL_STATE})
                if not fixed:
                    break
        if chosen is None:
            raise AssumptionError(
                "the cap proposal's radial hat did not reach acceptance 1/2 with 65,536 nodes: please report this bug."
            )
        self.hat, self.shift, self.t_nodes, state = chosen
        for name, value in state.items():
            setattr(self, name, value)

    _LEVEL_STATE: tuple[str, ...] = ()  # attributes a level's share bounds set for the draws

    def _g(self, t):
        with np.errstate(divide="ignore", invalid="ignore"):
            return -self.rate * t + np.asarray(self.space.radial_log_jacobian(t))

    def _log_share(self, t):
        if self.axis is None:
            with np.errstate(divide="ignore"):
                return np.log((np.asarray(t) <= self.radius + self.delta).astype(float))
        return self._shares(t, self.delta)

    def _shares(self, t, s):
        """:func:`log_direction_share` at radii ``t`` for an anchor ``s`` from the centre (counted)."""
        count("direction-shares", np.size(t))
        return log_direction_share(t, s, self.radius, self.kappa, self.space.dim)

    def _off_centre_draws(self, t, rng):
        """Under fixed work, an anchor at the centre computes (and drops) the direction weights
        and the cap's truncated Beta of an anchor on the boundary at the radii ``t``."""
        self._shares(t, self.radius)
        log_q = _cap_log_threshold(np.minimum(t, self.radius), self.radius, self.radius, self.kappa)
        _truncated_sym_beta(self.a, log_q, rng.random(len(t)))

    def _log_share_bounds(self, t, level):
        """``(log S̄_i, log S_i)`` at the nodes ``t``: ``S̄_i ≥ S`` on ``[t_i, t_{i+1}]`` and
        ``S_i ≤ S(t_i)`` (``S`` falls with t, so here both are ``S(t_i)``; ``level`` counts the
        refinements)."""
        log_share = self._log_share(t)
        if self.axis is None and fixed_work() is not None:
            self._off_centre_bounds(t, level)  # the work of an anchor on the boundary, discarded
        return log_share, log_share

    def _off_centre_bounds(self, t, level):
        """Under fixed work, an anchor at the centre computes (and drops) the bounds of an
        anchor on the boundary at the nodes ``t``: the same work as an off-centre one."""
        self._shares(t, self.radius)

    def _direction_weight(self, t, rng):
        """``(log w, state)`` for radii ``t`` drawn from the hat: a radius is kept with probability
        ``e^{g(t) − ĝ(t)}·w/S̄_i`` (``ĝ·S̄_i`` the hat); ``state`` is passed on to :meth:`_directions`
        for the kept ones. Here ``w = S(t)``, the exact share."""
        if self.axis is None and fixed_work() is not None:
            self._off_centre_draws(t, rng)  # the work of an anchor on the boundary, discarded
        return self._log_share(t), None

    def _directions(self, t, state, rng):
        """Unit tangents at the anchor, uniform on the in-cap directions at radii ``t``."""
        u = self.space.unchecked.random_unit_tangent(self.anchor, size=len(t), rng=rng)
        if self.axis is not None and len(t):
            log_q = _cap_log_threshold(t, self.delta, self.radius, self.kappa)
            z = _truncated_sym_beta(self.a, log_q, rng.random(len(t)))  # (1 − cos θ)/2 ≤ Q
            u = (1.0 - 2.0 * z)[self._expand] * self.axis + (2.0 * np.sqrt(z * (1.0 - z)))[
                self._expand
            ] * self._orthogonal(u, (self.axis,))
        return u

    @property
    def _expand(self):
        return (slice(None),) + (None,) * len(self.space.point_shape)

    def _orthogonal(self, u, axes):
        """``u`` minus its components along the orthonormal tangents ``axes``, normalised: uniform
        on the unit sphere orthogonal to them when ``u`` is uniform."""
        for axis in axes:
            u = u - np.asarray(self.space.unchecked.inner(self.anchor, u, axis))[self._expand] * axis
        return u / np.asarray(self.space.unchecked.norm(self.anchor, u))[self._expand]

    def propose(self, m, rng):
        """``m`` candidates and a mask of those that passed the radius and direction steps."""
        if fixed_work() is not None:
            x, keep = self.propose_every(m, rng)
            return x[keep], keep
        t, state, keep = self._radii(m, rng)
        u = self._directions(t[keep], None if state is None else state[keep], rng)
        return self.space.unchecked.polar_exp(self.anchor, u, t[keep]), keep

    def propose_every(self, m, rng):
        """The fixed-work :meth:`propose`: a point for each of the ``m`` candidates (those that
        failed the radius and direction steps at the public radius ``r/2``; each candidate draws
        its own direction, so the kept ones keep their law) and the mask of those that passed.

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import Sphere
        >>> north = np.array([0.0, 0.0, 1.0])
        >>> law = exact_ball_proposal(Sphere(2), north, north, rate=3.0, radius=0.7)
        >>> x, kept = law.propose_every(100, np.random.default_rng(0))
        >>> x.shape, kept.shape, bool(kept.mean() > 0.5)
        ((100, 3), (100,), True)
        """
        count("polar-directions", m)
        t, state, keep = self._radii(m, rng)
        t = np.where(keep, t, 0.5 * self.radius)
        u = self._directions(t, None if state is None else np.where(keep, state, 0.0), rng)
        return self.space.unchecked.polar_exp(self.anchor, u, t), keep

    def _radii(self, m, rng):
        """``(t, state, keep)``: ``m`` radii from the hat, their direction state, and the mask
        of those kept by the radius and direction-weight steps."""
        t, log_hat = self.hat.propose(m, rng)
        log_weight, state = self._direction_weight(t, rng)
        with np.errstate(invalid="ignore"):
            keep = np.log(rng.random(m)) < self._g(t) - self.shift + log_weight - log_hat
        keep &= (t > 0) & (t <= self.length) & np.isfinite(log_weight)
        return t, state, keep


_LEVELS = 9  # refinements of the radial grid, 256 to 65,536 intervals
_ROW_BLOCK = 2048  # rows of the Kendall direction tables computed at once (bounds the memory)
_PHI_CELLS = 32  # angle cells of the Kendall direction hat at the first refinement (doubled every other)


def _kendall_excluded(t, phi, delta, radius):
    """The excluded interval ``[x1, x2]`` of ``ρ² = α² + β²`` on the ray of angle ``φ`` of the
    direction disc at radius ``t`` (docs/math.md §5): ``exp_a(tu)`` lies outside ``B_r(m0)`` iff
    ``|A + B(α + iβ)| < cos r``, ``A = cos δ cos t``, ``B = sin δ sin t``, ``α + iβ = ρe^{iφ}``,
    i.e. ``B²ρ² + 2AB cos φ·ρ + A² − cos² r < 0``, clipped to ``ρ ∈ [0, 1]`` (``x1 = x2`` when
    none is excluded). Roots from the cancellation-free pair (their product is ``(A² − cos² r)/B²``)."""
    t, phi = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(phi, dtype=float))
    A, B = math.cos(delta) * np.cos(t), math.sin(delta) * np.sin(t)
    c, cos2r = np.cos(phi), math.cos(radius) ** 2
    disc = cos2r - (A * np.sin(phi)) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.sqrt(np.maximum(disc, 0.0))
        far = (A * np.abs(c) + root) / B  # the larger root when cos φ < 0
        lo = np.where(c < 0, (A * A - cos2r) / (B * B * far), -np.inf)
        hi = np.where(c < 0, far, (cos2r - A * A) / (B * (root + A * c)))
    hit = (disc > 0) & (B > 0)
    lo, hi = np.where(hit, np.clip(lo, 0.0, 1.0), 0.0), np.where(hit, np.clip(hi, 0.0, 1.0), 0.0)
    return lo * lo, np.maximum(hi, lo) ** 2


class KendallProposal(CapProposal):
    """:class:`CapProposal` with the exact in-ball direction sets of Kendall's shape space
    (``CP^{k−2}``; docs/math.md §5): draws land in the ball, and the radial law carries the true
    share ``S(t)``.

    With ``v0`` the unit direction of the centre and ``(α, β)`` the components of a uniform unit
    ``u`` along ``v0`` and ``i·v0``, ``φ = arg(α + iβ)`` is uniform and ``ρ² = α² + β²`` is
    Beta(1, b), ``b = (d − 2)/2``, independent of φ. The draw is in the ball iff ``ρ²`` avoids the
    interval of :func:`_kendall_excluded`: ``q_t(φ) = P(allowed | φ)`` is closed form,
    non-increasing in ``|φ|`` and in t. Given t, ``|φ|`` is drawn from the step hat
    ``q_{t_i}(φ_j)`` on ``[φ_j, φ_{j+1}]`` (``t_i`` the left node of t's interval) and the pair is
    kept with probability ``e^{g − ĝ} q_t(φ)/q_{t_i}(φ_j)``; then ``ρ²`` from the truncated
    Beta by its inverse CDF and the rest of ``u`` uniform on the unit sphere orthogonal to
    ``v0, i·v0``. The radial nodes double at every refinement, the angle cells at every other.
    """

    def __init__(self, space, anchor, center, rate, radius):
        self.b = (space.dim - 2) / 2.0
        super().__init__(space, anchor, center, rate, radius, None)
        if self.axis is not None:  # i·v0 in the k × 2 real layout (x + iy per landmark)
            self.turned = np.stack([-self.axis[..., 1], self.axis[..., 0]], axis=-1)

    _LEVEL_STATE = ("phi", "width", "log_step", "log_upper", "cdf")

    def _log_q(self, t, phi, delta=None):
        """``log q_t(φ)``: Beta(1, b) mass outside the excluded ``[x1, x2]``, ``1 − (1 − x1)^b + (1 − x2)^b``
        (``delta`` the anchor's distance to the centre, by default this proposal's)."""
        x1, x2 = _kendall_excluded(t, phi, self.delta if delta is None else delta, self.radius)
        with np.errstate(divide="ignore"):
            return np.logaddexp(np.log(-np.expm1(self.b * np.log1p(-x1))), self.b * np.log1p(-x2))

    def _log_share_bounds(self, t, level):
        """As :meth:`CapProposal._log_share_bounds`, from the angle step hat of each row, which
        is kept (``phi``, ``width``, ``log_step``, ``cdf``) for :meth:`_direction_weight`."""
        if self.axis is None:
            self.phi = self.width = self.log_step = self.log_upper = self.cdf = None
            return super()._log_share_bounds(t, level)
        rows = self._rows(t, level, self.delta, keep=self._keep_rows)
        self.phi, self.width, self.log_step, self.cdf, log_upper, log_lower = rows
        self.log_upper = log_upper
        return log_upper, log_lower

    def _off_centre_bounds(self, t, level):
        self._rows(t, level, self.radius, keep=False)

    def _rows(self, t, level, delta, keep=True):
        """The angle step hats of the rows at the nodes ``t`` for an anchor ``delta`` from the
        centre, by blocks of rows: ``(phi, width, log_step, cdf, log_upper, log_lower)``, the
        first four (tables of rows × cells) None unless ``keep``."""
        cells = _PHI_CELLS << (level // 2)  # the radial nodes double at every level, the cells every other
        count("kendall-cells", len(t) * cells)
        first = 0 if keep else 4  # without keep, each block's tables are dropped as it is made
        blocks = [self._row_block(t[i : i + _ROW_BLOCK], cells, delta)[first:] for i in range(0, len(t), _ROW_BLOCK)]
        parts = [np.concatenate(part) for part in zip(*blocks, strict=True)]
        log_upper, log_lower = parts[-2:]
        if not keep:
            return None, None, None, None, log_upper, log_lower
        phi, width, log_step, cdf = parts[:4]
        cdf = (cdf + np.arange(len(t))[:, None]).ravel()  # row i in [i, i + 1]: one sorted array
        return phi, width, log_step, cdf, log_upper, log_lower

    def _row_block(self, t, cells, delta):
        """One block of :meth:`_rows`: ``(phi, width, log_step, cdf, log_upper, log_lower)``, the
        cdf of each row in ``[0, 1]``."""
        # Row i (radius t_i): equal cells on [0, φ*_i], where q_{t_i} has fallen below e^−30 of
        # its value at 0 (a 33-point scan), and one last cell [φ*_i, π].
        scan = np.linspace(0.0, math.pi, 33)
        log_scan = self._log_q(t[:, None], scan, delta)
        faded = log_scan < log_scan[:, :1] - 30.0
        reach = np.where(faded.any(axis=1), scan[np.argmax(faded, axis=1)], math.pi)
        phi = np.concatenate(
            [reach[:, None] * np.linspace(0.0, 1.0, cells)[None], np.full((len(t), 1), math.pi)], axis=1
        )
        width = np.diff(phi, axis=1)
        log_q = self._log_q(t[:, None], phi, delta)
        # q falls with |φ|: a cell's left node bounds it from above, its right node from below.
        with np.errstate(divide="ignore"):
            log_step = log_q[:, :-1]
            log_mass = log_step + np.log(width)
        log_upper = logsumexp(log_mass, axis=1) - math.log(math.pi)
        with np.errstate(divide="ignore"):
            log_lower = logsumexp(log_q[:, 1:] + np.log(width), axis=1) - math.log(math.pi)
        with np.errstate(invalid="ignore"):  # rows without mass (beyond the ball) are never drawn
            step = np.exp(log_mass - np.max(log_mass, axis=1, keepdims=True))
            cdf = np.nan_to_num(np.cumsum(step, axis=1) / np.sum(step, axis=1, keepdims=True), nan=1.0)
        cdf[:, -1] = 1.0
        return phi, width, log_step, cdf, log_upper, log_lower

    def _off_centre_draws(self, t, rng):
        phi = math.pi * rng.random(len(t))
        self._log_q(t, phi, self.radius)
        x1, x2 = _kendall_excluded(np.minimum(t, self.radius), phi, self.radius, self.radius)
        rng.random((3, len(t)))
        with np.errstate(divide="ignore"):
            np.log1p(-x1), np.log1p(-x2)

    def _direction_weight(self, t, rng):
        if self.axis is None:
            return super()._direction_weight(t, rng)
        cells = self.width.shape[1]
        row = np.clip(np.searchsorted(self.t_nodes, t, side="right") - 1, 0, len(self.t_nodes) - 1)
        cell = np.searchsorted(self.cdf, row + rng.random(len(t)), side="right") - row * cells
        cell = np.clip(cell, 0, cells - 1)
        phi = self.phi[row, cell] + rng.random(len(t)) * self.width[row, cell]
        log_weight = self.log_upper[row] + self._log_q(t, phi) - self.log_step[row, cell]
        return log_weight, np.where(rng.random(len(t)) < 0.5, phi, -phi)

    def _directions(self, t, phi, rng):
        if self.axis is None:
            return super()._directions(t, phi, rng)
        x1, x2 = _kendall_excluded(t, phi, self.delta, self.radius)
        # Allowed ρ² ∈ [0, x1] ∪ [x2, 1] under Beta(1, b), survival (1 − x)^b: pick a part by its
        # mass, then invert the survival function inside it.
        with np.errstate(divide="ignore"):
            first = -np.expm1(self.b * np.log1p(-x1))
            log_second = self.b * np.log1p(-x2)
        second = np.exp(log_second)
        in_second = rng.random(len(t)) * (first + second) >= first
        fresh = rng.random(len(t))
        with np.errstate(divide="ignore"):
            x = -np.expm1(np.where(in_second, np.log(fresh) + log_second, np.log1p(-fresh * first)) / self.b)
        rho = np.sqrt(x)
        w = self._orthogonal(
            self.space.unchecked.random_unit_tangent(self.anchor, size=len(t), rng=rng), (self.axis, self.turned)
        )
        e = self._expand
        return (rho * np.cos(phi))[e] * self.axis + (rho * np.sin(phi))[e] * self.turned + np.sqrt(1.0 - x)[e] * w


class _SecantHatShifted(PiecewiseExponentialHat):
    """A piecewise-exponential hat raised by ``log_shift`` on each piece (``−inf`` drops it)."""

    def __init__(self, hat, log_shift):
        value = np.where(np.isfinite(log_shift), hat.top + log_shift, -np.inf)
        slope = -hat.sign * hat.rate
        super().__init__(hat.lo, hat.hi, slope, hat.anchor, value)


def exact_ball_proposal(space, anchor, center, rate, radius):
    """The proposal whose draws are exactly ``∝ e^{−rate·ρ(anchor, x)}`` on ``B_radius(center)``,
    or None where this module has no exact construction (the caller then needs another sampler).

    Spaces of constant curvature (spheres, hyperbolic spaces of dimension ≥ 2, in balls inside the
    injectivity radius with ``r√κ ≤ π/2``), and Kendall's shape space (``k ≥ 4`` landmarks,
    ``r < π/4``, or ``k = 3``, the sphere of curvature 4). ``anchor`` must lie in the ball.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Hyperbolic
    >>> space = Hyperbolic(1000)
    >>> center = space.project(np.eye(1001)[0])
    >>> anchor = space.exp(center, 0.1 * np.eye(1001)[1])
    >>> law = exact_ball_proposal(space, anchor, center, rate=10.0, radius=0.1)
    >>> x, kept = law.propose(200, np.random.default_rng(0))
    >>> bool(np.all(space.dist(center, x) <= 0.1 * (1 + 1e-9))), bool(kept.mean() >= 0.5)
    (True, True)
    """
    if not has_exact_ball_proposal(space, radius):
        return None
    if exact_shape_directions(space, radius):
        return KendallProposal(space, anchor, center, rate, radius)
    return CapProposal(space, anchor, center, rate, radius, float(space.curvature_bounds[1]))


def has_exact_ball_proposal(space, radius) -> bool:
    """Whether :func:`exact_ball_proposal` has a construction for balls of ``radius`` on ``space``
    (a function of the space and the public radius only).

    Examples
    --------
    >>> from geodp.manifolds import Hyperbolic, SPD, Sphere
    >>> has_exact_ball_proposal(Hyperbolic(100), 3.0), has_exact_ball_proposal(Sphere(5), 1.6)
    (True, False)
    >>> has_exact_ball_proposal(SPD(3), 1.0)  # not of constant curvature
    False
    """
    if exact_shape_directions(space, radius):
        return True
    low, high = (float(k) for k in space.curvature_bounds)
    if space.is_flat or space.dim < 2 or low != high or not is_isotropic(space):
        return False
    return not (high > 0 and radius * math.sqrt(high) > math.pi / 2)
