"""The radial part of the Riemannian Laplace and Gaussian laws on isotropic spaces (docs/math.md §5).

On a space whose volume in geodesic polar coordinates at η is ``J(t) dt du`` (Euclidean, sphere,
hyperbolic, Kendall), ``X ∝ exp(−φ(ρ(η, X)))`` is ``exp_η(t u)`` with ``u`` a uniform unit
direction and ``t ~ p(t) ∝ exp(−φ(t)) J(t)`` on ``[0, T)``, for a convex radial profile ``φ``:
``t/σ`` (Laplace) or ``t²/2σ²`` (Riemannian Gaussian, :data:`RADIAL_PROFILES`). :class:`RadialLaw`
samples ``t`` exactly by rejection and evaluates its CDF (for tests, reports and the truncation
bound).

A space qualifies when it defines ``radial_log_jacobian(t)``, ``cut_radius`` and
``volume_growth_rate`` γ, with ``log J`` **concave** on ``(0, T)`` and
``log J(t) ≤ (dim − 1) log t + γ t``. Both hold on every isotropic space of geodp:
``(d − 1) log sn_κ(t)`` has second derivative ``−(d − 1)κ/sin²(√κ t)`` on the sphere,
``−(d − 1)|κ|/sinh²(√|κ| t)`` on hyperbolic space and ``−(d − 1)/t²`` on ``R^d``; Kendall's
``(2k − 5) log sin t + log cos t`` has ``−(2k − 5)/sin² t − 1/cos² t``.

**The secant hat, and why it dominates.** ``g(t) = −φ(t) + log J(t)`` is concave (``φ`` convex). Take nodes
``x_0 < … < x_{K−1}`` in ``(0, T]`` and the secants ``λ_i`` through ``(x_i, g(x_i))`` and
``(x_{i+1}, g(x_{i+1}))``. By concavity ``g`` lies below every secant *outside* the secant's own
interval (and above it inside). Hence on ``[x_i, x_{i+1}]`` both ``λ_{i−1}`` (extended to the right)
and ``λ_{i+1}`` (extended to the left) bound ``g`` from above, on ``[0, x_0]`` ``λ_0`` does and on
``[x_{K−1}, T)`` ``λ_{K−2}`` does. The exponential of the smaller available bound on each interval
is a piecewise-exponential hat ``≥ p`` everywhere (Gilks 1992's derivative-free hat of adaptive
rejection sampling; docs/references.md). It needs only values of ``log J``, so each space keeps
one formula for its volume. Drawing from the hat is exact (pick a piece by its mass, then invert the
exponential CDF inside it) and a proposal is accepted with probability ``exp(g − hat) ≤ 1``.

The nodes depend only on public quantities — the space (dimension, curvature), σ and ``t_max`` —
and are refined (interval with the largest surplus of hat mass split first) until the acceptance
``∫p / ∫hat`` reaches 0.9, which it does with a few dozen nodes for every ``d ≤ 1000`` and σ
(tests/test_radial_laws.py sweeps them). Values are handled in log space (``sinh(t)^999`` never
forms). Floating point: ``g`` is a sum of terms of size ``|log J(t)| + t/σ``, evaluated to a
few ulps of that size, so the hat dominates up to a factor ``exp(O(1e−15)·(|log J| + t/σ))``
(1 + 1e−8 where the two terms are 1e7 and cancel, as far in the tail of a nearly
non-normalisable hyperbolic law).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import interpolate, special

from geodp.distributions.base import rejection_sample
from geodp.distributions.piecewise_hat import PiecewiseExponentialHat
from geodp.errors import AssumptionError, InvalidParameterError
from geodp.validation import as_generator, check_positive

__all__ = ["RadialLaw", "is_isotropic", "measured_log_polar_volume", "MIN_RADIAL_ACCEPTANCE", "RADIAL_PROFILES"]


def _laplace_profile(t, scale):
    return t / scale


def _gaussian_profile(t, scale):
    return t * t / (2.0 * scale * scale)


#: The radial profiles ``φ(t; σ)`` a :class:`RadialLaw` supports (both convex): the Riemannian
#: Laplace ``∝ exp(−ρ/σ)`` and the Riemannian Gaussian ``∝ exp(−ρ²/2σ²)`` (module-level
#: functions, so that laws pickle with the fitted estimators that hold them).
RADIAL_PROFILES = {"laplace": _laplace_profile, "gaussian": _gaussian_profile}

#: Every :class:`RadialLaw` accepts at least this share of its proposals (it refuses to build
#: otherwise); the secant hat is refined towards 0.9.
MIN_RADIAL_ACCEPTANCE = 0.5

_TARGET = 0.9  # refine the secant hat until its acceptance reaches this
_MAX_NODES = 256
_WINDOW = 40.0  # initial nodes: where g is within e^40 of its largest value on a geometric grid
_CDF_STEPS = 64  # equal hat-quantile steps per piece in the CDF table


# A declared polar volume of a space written outside geodp is checked against the space's own
# geometry before a sampler trusts it (geodp's spaces are checked by the manifold contract in CI).
_VERIFY_MAX_DIM = 64
_VERIFY_FRACTIONS = (0.1, 0.3, 0.6, 0.9)  # of min(0.9·cut_radius, 6): where log J is compared
_VERIFY_POINTS = 3  # base points (the reference point and fixed random ones), 2 directions each
_measured: dict = {}  # (type, repr) -> (radii, measured log J per point and direction)


def is_isotropic(space) -> bool:
    """Does ``space`` expose the polar volume the exact radial sampler needs?

    A space declares it by implementing ``radial_log_jacobian`` with ``cut_radius`` and
    ``volume_growth_rate``; the samplers then need ``log J`` concave on ``(0, cut_radius)`` and
    ``log J(t) ≤ (dim − 1) log t + volume_growth_rate·t``. The declaration of a space written
    outside geodp is verified from public quantities only, before any charge:

    * the space must be homogeneous, with ``cut_radius`` equal to its ``injectivity_radius``;
    * ``log J`` must match, up to a constant, the Gram determinant of the derivatives of the
      space's own ``exp`` (:func:`measured_log_polar_volume`) at 3 base points, 2 directions each
      and 4 radii up to ``min(0.9·cut_radius, 6)`` (measured once per space; the declaration is
      re-read on every call);
    * the growth bound must hold on a grid up to ``min(cut_radius, 50)``.

    A failed check is refused; above dimension 64 nothing is verified and the space is treated
    as not isotropic (its releases use the generic samplers).

    Raises
    ------
    AssumptionError
        The declared polar volume does not match the space's geometry.

    Examples
    --------
    >>> from geodp.manifolds import SPD, Sphere
    >>> is_isotropic(Sphere(2)), is_isotropic(SPD(2))
    (True, False)
    """
    if not space.provides("radial_log_jacobian"):
        return False
    if type(space).__module__.startswith("geodp."):
        return True
    if space.dim > _VERIFY_MAX_DIM:
        return False
    _verify_polar_volume(space)
    return True


def _refuse(space, what: str):
    raise AssumptionError(
        f"{space!r} declares a polar volume (radial_log_jacobian, cut_radius, volume_growth_rate) that "
        f"does not match its own geometry: {what}. The exact samplers would draw from the wrong law; "
        "fix it, or remove it (the generic samplers run instead)."
    )


def _verify_polar_volume(space) -> None:
    cut, growth, d = float(space.cut_radius), float(space.volume_growth_rate), space.dim
    if not space.is_homogeneous:
        _refuse(space, "an isotropic space is homogeneous, and this one says it is not")
    if cut != float(space.injectivity_radius):
        _refuse(space, f"cut_radius = {cut!r} differs from injectivity_radius = {space.injectivity_radius!r}")
    key = (type(space), repr(space))
    if key not in _measured:
        _measured[key] = _measure(space, cut)
    ts, measured = _measured[key]
    declared = np.asarray(space.radial_log_jacobian(ts), dtype=float)
    gaps = np.diff(measured, axis=1) - np.diff(declared)
    if not np.all(np.abs(gaps) <= 1e-5 + 1e-6 * np.abs(np.diff(declared))):
        worst = float(np.max(np.abs(gaps)))
        _refuse(
            space,
            f"log J(t2) − log J(t1) differs from its measure by up to {worst:.3g} at t = {np.round(ts, 4).tolist()}",
        )
    grid = np.geomspace(1e-6, min(cut, 50.0), 400)
    excess = np.asarray(space.radial_log_jacobian(grid), dtype=float) - (d - 1) * np.log(grid) - growth * grid
    if not np.all(excess <= 1e-9 * np.maximum(1.0, np.abs(grid * growth))):
        _refuse(space, f"log J(t) exceeds (dim − 1) log t + volume_growth_rate·t by {float(np.max(excess)):.3g}")


def _measure(space, cut):
    rng = np.random.default_rng(np.random.SeedSequence(0, spawn_key=(0x7AD,)))
    points = [space.reference_point()] + list(space.random_point(_VERIFY_POINTS - 1, rng=rng))
    ts = np.array(_VERIFY_FRACTIONS) * min(0.9 * cut, 6.0)
    rows = []
    for x in points:
        for u in space.unchecked.random_unit_tangent(x, size=2, rng=rng):
            rows.append([measured_log_polar_volume(space, x, u, t, rng) for t in ts])
    return ts, np.array(rows)


def measured_log_polar_volume(space, x, u, t, rng=None, h=1e-5) -> float:
    """``log J(t)`` about ``x`` in the unit direction ``u``, from the space's geometry alone: half
    the log-determinant of the Gram matrix of ``d/dθ_i Exp(x, t(u + θ_i e_i))`` over an orthonormal
    basis ``e_i`` of ``u``'s complement (central differences of step ``h``, the unvalidated
    geometry the samplers use).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    >>> round(measured_log_polar_volume(space, north, np.array([1.0, 0.0, 0.0]), 1.0, rng=0), 6)
    -0.172604
    >>> round(float(np.log(np.sin(1.0))), 6)
    -0.172604
    """
    fast = space.unchecked
    basis = [np.asarray(u, dtype=float)]
    for v in fast.random_tangent(x, size=2 * space.dim + 4, rng=rng):
        for b in basis:
            v = v - fast.inner(x, v, b) * b
        norm = float(fast.norm(x, v))
        if norm > 1e-6:
            basis.append(v / norm)
        if len(basis) == space.dim:
            break
    e = np.stack(basis[1:]) if len(basis) > 1 else np.zeros((0,) + space.point_shape)
    y = fast.exp(x, t * basis[0])
    diff = (fast.exp(x, t * (basis[0] + h * e)) - fast.exp(x, t * (basis[0] - h * e))) / (2 * h)
    columns = space.to_tangent(y, diff)
    gram = np.asarray(fast.inner(y, columns[:, None], columns[None, :]), dtype=float)
    return 0.5 * float(np.linalg.slogdet(gram)[1]) if len(gram) else 0.0


class SecantHat(PiecewiseExponentialHat):
    """``exp`` of the lower envelope of the secant extensions of a concave ``g`` (module docstring).

    Pieces are ordered left to right, two per interval between nodes (split where the two
    bounding secants cross). Needs at least three nodes with finite ``g``.
    """

    def __init__(self, nodes, values, upper):
        x, gx = np.asarray(nodes, dtype=float), np.asarray(values, dtype=float)
        K = len(x)
        self.nodes = x
        with np.errstate(over="ignore"):
            self.slopes = s = np.diff(gx) / np.diff(x)
        k = np.arange(K + 1)  # interval k: [0, x_0], [x_{k−1}, x_k], [x_{K−1}, upper]
        left, right = k - 2, k.copy()
        left[0] = right[0] = 0
        left[K] = right[K] = K - 2
        left = np.where(left < 0, right, left)
        right = np.where(right > K - 2, left, right)
        lo = np.concatenate([[0.0], x])
        hi = np.concatenate([x, [upper]])
        # Where two secants bound the interval, they cross at lo + h·(s_{k−1} − s_k)/(s_{k−2} − s_k).
        with np.errstate(divide="ignore", invalid="ignore"):
            mid = np.clip(k - 1, 0, K - 2)
            ratio = (s[mid] - s[right]) / (s[left] - s[right])
        ratio = np.where(np.isfinite(ratio), np.clip(ratio, 0.0, 1.0), 0.5)
        split = np.where(left == right, lo, lo + (hi - lo) * ratio)
        split = np.where(np.isfinite(split), split, lo)
        # two pieces per interval: [lo, split] under secant `left`, [split, hi] under `right`
        line = np.stack([left, right], axis=1).ravel()
        super().__init__(
            np.stack([lo, split], axis=1).ravel(), np.stack([split, hi], axis=1).ravel(), s[line], x[line], gx[line]
        )


def _concavity_violation(hat, magnitudes):
    """Index of the first secant slope that rises beyond rounding, or None (``magnitudes``: the
    size of the terms summed into ``g`` at each node, which sets its rounding error)."""
    s, h = hat.slopes, np.diff(hat.nodes)
    noise = 16 * np.finfo(float).eps * (magnitudes + 1.0)
    tolerance = (noise[:-2] + noise[1:-1] + noise[2:]) * (1.0 / h[:-1] + 1.0 / h[1:]) + 1e-12 * np.abs(s[:-1])
    bad = np.flatnonzero(np.diff(s) > tolerance)
    return int(bad[0]) if bad.size else None


def _build_hat(raw, magnitude, upper, unit, name):
    """Secant hat for ``raw`` (concave, finite inside ``(0, upper)``; ``magnitude`` bounds the
    terms it sums), both functions of ``u = t/unit`` with ``unit`` a length near the mode so that
    slopes stay finite; nodes chosen from public quantities only. Returns the hat, the shift
    (``raw − shift`` is ≤ ~0 at the nodes) and the per-piece integrals of ``exp(raw − shift)``."""
    grid = 2.0 ** (np.arange(-80, 81) / 2.0)
    grid = grid[grid < upper]
    if math.isfinite(upper):
        grid = np.append(grid, upper)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        values = raw(grid)
    grid, values = grid[np.isfinite(values)], values[np.isfinite(values)]
    if len(grid) < 2:
        raise AssumptionError(
            f"the radial log-density of {name} is not finite in float64 around t = {unit:.3g}: "
            "no exact radial sampler at this scale; choose a scale within a few hundred decades of 1."
        )
    shift = float(np.max(values))

    def g(t):
        with np.errstate(divide="ignore", invalid="ignore"):
            return raw(t) - shift

    inside = np.flatnonzero(values >= shift - _WINDOW)
    first, last = max(inside[0] - 1, 0), min(inside[-1] + 1, len(grid) - 1)
    picks = np.round(np.linspace(first, last, 16)).astype(int)
    nodes = np.unique(np.concatenate([grid[picks], grid[[int(np.argmax(values))]]]))
    while len(nodes) < 3:  # a very narrow window: add midpoints
        nodes = np.unique(np.concatenate([nodes, (nodes[:-1] + nodes[1:]) / 2.0, [nodes[0] / 2.0]]))
    for _ in range(200):
        if math.isfinite(upper) or np.diff(g(nodes[-2:]))[0] < 0:
            break
        # an infinite support needs a falling last secant (the law is normalisable: g → −∞)
        nodes = np.append(nodes, 2.0 * nodes[-1] - nodes[-2] + nodes[-1])
    while True:
        values = g(nodes)
        hat = SecantHat(nodes, values, upper)
        bad = _concavity_violation(hat, magnitude(nodes))
        if bad is not None:
            raise AssumptionError(
                f"the radial log-density of {name} is not concave near t = {unit * nodes[bad + 1]:.6g}: "
                "the secant hat would not dominate it, so no exact radial sampler is available."
            )
        pieces = hat.piece_integrals(g)
        if pieces.sum() >= _TARGET * hat.mass.sum() or len(nodes) >= _MAX_NODES:
            return hat, shift, pieces
        waste = (hat.mass - pieces).reshape(-1, 2).sum(axis=1)  # per interval
        worst = np.argsort(waste)[-max(1, len(waste) // 4) :]
        worst = worst[waste[worst] > 0]
        new = []
        for k in worst:
            if k == 0:
                new.append(nodes[0] / 2.0)
            elif k == len(nodes):
                far = nodes[-1] + 2.0 * (nodes[-1] - nodes[-2])
                new.append(min(far, (nodes[-1] + upper) / 2.0) if math.isfinite(upper) else far)
            else:
                new.append((nodes[k - 1] + nodes[k]) / 2.0)
        new = np.asarray(new)
        new = new[np.isfinite(g(new))]
        grown = np.unique(np.concatenate([nodes, new]))
        if len(grown) == len(nodes):  # nothing left to split at float resolution
            return hat, shift, pieces
        nodes = grown


class RadialLaw:
    """Law of ``t = ρ(η, X)`` for the Riemannian Laplace ``∝ exp(−ρ/σ)`` (or, with
    ``profile="gaussian"``, the Riemannian Gaussian ``∝ exp(−ρ²/2σ²)``), optionally restricted
    to ``t ≤ t_max``; exact sampler, CDF and normalisability check.

    Parameters
    ----------
    space : Manifold
        An isotropic space (see :func:`is_isotropic`).
    scale : float
        σ > 0.
    t_max : float, default inf
        Restrict the law to ``[0, t_max]`` (used by truncation to a ball).
    profile : {"laplace", "gaussian"}, default "laplace"
        The radial profile ``φ`` of :data:`RADIAL_PROFILES`. The Gaussian one is normalisable on
        every space (``J`` grows at most exponentially) and uses the secant hat only.

    Raises
    ------
    AssumptionError
        The law is not normalisable: infinite support and ``1/σ ≤ volume_growth_rate``
        (hyperbolic space with too large a scale); or the space's radial log-density is not
        concave, so no envelope is known.

    Attributes
    ----------
    envelope : {"gamma", "secant"}
        The proposal used by :meth:`sample`, the one with the higher acceptance rate:
        ``"gamma"``, ``Gamma(dim, 1/(1/σ − γ))`` (exact on ``R^d``), or ``"secant"``, the
        piecewise-exponential hat over secants of the concave log-density (module docstring).
    acceptance_rate : float
        Its expected acceptance rate (normaliser over hat mass, by quadrature); at least
        :data:`MIN_RADIAL_ACCEPTANCE` (0.5), in practice above 0.9.
    envelope_text : str
        A description of the envelope, as written into guarantees.
    log_normaliser : float
        ``log ∫_0^upper exp(−φ(t)) J(t) dt``.

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> law = RadialLaw(Sphere(2), scale=0.3)
    >>> law.envelope, law.acceptance_rate > 0.9
    ('secant', True)
    >>> t = law.sample(1000, rng=0)
    >>> bool(t.max() < 3.1416)
    True
    >>> big = RadialLaw(Sphere(1000), scale=0.02)  # J = sin(t)^999: t ≈ arctan(999σ) ≈ 1.52
    >>> big.acceptance_rate > 0.9, round(float(big.sample(2000, rng=1).mean()), 1)
    (True, 1.5)
    >>> from geodp.manifolds import Euclidean  # Gaussian profile: t/σ ~ chi with 3 degrees of freedom
    >>> round(float(RadialLaw(Euclidean(3), 0.5, profile="gaussian").cdf(0.5 * 1.5382)), 3)
    0.5
    """

    def __init__(self, space, scale, t_max=math.inf, profile="laplace"):
        if profile not in RADIAL_PROFILES:
            raise InvalidParameterError(f"profile must be one of {tuple(RADIAL_PROFILES)}, got {profile!r}.")
        self.profile = profile
        self._phi = RADIAL_PROFILES[profile]
        if not is_isotropic(space):
            raise InvalidParameterError(f"{space!r} does not expose a radial Jacobian: no exact radial sampler.")
        self.space = space
        self.scale = check_positive(scale, "scale")
        self.dim = int(space.dim)
        self.growth = float(space.volume_growth_rate)
        t_max = float(t_max)
        if not t_max > 0:
            raise InvalidParameterError(f"t_max must be > 0, got {t_max!r}.")
        self.upper = min(float(space.cut_radius), t_max)
        rate = 1.0 / self.scale - self.growth if profile == "laplace" else math.nan
        if math.isinf(self.upper) and rate <= 0:
            raise AssumptionError(
                f"the Laplace law on {space!r} with scale={self.scale!r} is not normalisable: it needs "
                f"1/scale > {self.growth!r} (volume growth rate), i.e. scale < {1 / self.growth!r}. "
                "Truncate it to a ball or use a smaller scale."
            )
        self._gamma_scale = 1.0 / rate if rate > 0 else math.nan
        # The hat is built in units of a public length near the mode, where slopes are O(d).
        spread = max(self.dim - 1, 1)
        guess = spread * self.scale if profile == "laplace" else math.sqrt(spread) * self.scale
        self._unit = unit = min(guess, self.upper / 2.0)
        self._hat, self._shift, pieces = _build_hat(
            lambda u: self._log_density(unit * u),
            lambda u: np.abs(self.space.radial_log_jacobian(unit * u)) + self._phi(unit * u, self.scale),
            self.upper / unit,
            unit,
            repr(space),
        )
        self.log_normaliser = math.log(pieces.sum() * unit) + self._shift
        rates = {"secant": min(float(pieces.sum() / self._hat.mass.sum()), 1.0)}
        if math.isfinite(self._gamma_scale):
            log_gamma = special.gammaln(self.dim) + self.dim * math.log(self._gamma_scale)
            rates["gamma"] = min(math.exp(self.log_normaliser - log_gamma), 1.0)
        rates = {k: v if v == v else 0.0 for k, v in rates.items()}  # NaN (float64 exhausted): unusable
        self.envelope, self.acceptance_rate = max(rates.items(), key=lambda kv: kv[1])
        if self.acceptance_rate < MIN_RADIAL_ACCEPTANCE:
            raise AssumptionError(
                f"the radial law on {space!r} at scale={self.scale!r} has no envelope accepting "
                f"≥ {MIN_RADIAL_ACCEPTANCE} of its proposals (best: {self.acceptance_rate:.3g})."
            )
        self.envelope_text = (
            f"Gamma({self.dim}) envelope"
            if self.envelope == "gamma"
            else f"piecewise-exponential hat over {len(self._hat.nodes) - 1} secants of the log-concave density"
        )

    def _log_density(self, t):
        """Unnormalised ``log p(t) = log J(t) − φ(t)`` (``−inf`` at 0 and the cut locus)."""
        t = np.asarray(t, dtype=float)
        return np.asarray(self.space.radial_log_jacobian(t)) - self._phi(t, self.scale)

    def log_pdf(self, t):
        """Normalised log-density of ``t`` (``−inf`` outside ``(0, upper)``).

        Examples
        --------
        >>> import numpy as np
        >>> from geodp.manifolds import Euclidean
        >>> law = RadialLaw(Euclidean(1), 2.0, profile="gaussian")  # half-normal
        >>> bool(np.isclose(np.exp(law.log_pdf(1.0)), 2 * np.exp(-1 / 8) / np.sqrt(8 * np.pi)))
        True
        """
        t = np.asarray(t, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = self._log_density(t) - self.log_normaliser
        return np.where((t > 0) & (t < self.upper), value, -np.inf)

    # -------------------------------------------------------------- sampling
    def _propose(self, m, rng):
        """``m`` proposals and their log acceptance probabilities (−inf outside the support)."""
        d = self.dim
        if self.envelope == "gamma":
            t = rng.gamma(d, self._gamma_scale, size=m)
            with np.errstate(divide="ignore", invalid="ignore"):
                log_acc = np.asarray(self.space.radial_log_jacobian(t)) - (d - 1) * np.log(t) - self.growth * t
        else:
            u, log_hat = self._hat.propose(m, rng)
            t = self._unit * u
            with np.errstate(divide="ignore", invalid="ignore"):
                log_acc = np.minimum(self._log_density(t) - self._shift - log_hat, 0.0)
        return t, np.where((t > 0) & (t < self.upper), log_acc, -np.inf)

    def sample(self, size=None, rng=None):
        """Exact draws of ``t`` (vectorised rejection; ``size`` as in numpy)."""
        rng = as_generator(rng)
        shape = () if size is None else ((size,) if np.isscalar(size) else tuple(size))
        draws, _ = rejection_sample(
            self._propose,
            int(np.prod(shape, dtype=int)),
            (),
            self.acceptance_rate,
            rng,
            min_rate=self.acceptance_rate / 2.0,
        )
        return draws.reshape(shape)

    # ----------------------------------------------------------- closed form
    @functools.cached_property
    def _cdf_table(self):
        """``(t, F(t))`` at 108 hat quantiles of every piece; the mass between consecutive ones by
        8-point Gauss–Legendre in the distance from the piece's anchor."""
        hat = self._hat
        # hat quantiles, then geometrically closer to 1 (the far end; an unbounded piece's tail)
        y = np.concatenate([np.linspace(0.0, 1.0, _CDF_STEPS + 1)[:-1], 1.0 - 2.0 ** -np.arange(7.0, 51.0)])
        j = np.arange(len(hat.mass))[:, None]
        distance = hat.distance(j, y[None, :])
        step = hat.integral(
            lambda u: self._log_density(self._unit * u) - self._shift, j, distance[:, :-1], distance[:, 1:], points=8
        )
        within = np.concatenate([np.zeros((len(hat.mass), 1)), np.cumsum(step, axis=1)], axis=1)
        total = within[:, -1:]
        within = np.where(hat.sign[:, None] > 0, within, total - within)  # right-anchored pieces run backwards
        before = np.concatenate([[0.0], np.cumsum(total[:, 0])[:-1]])[:, None]
        t, first = np.unique((self._unit * (hat.anchor[j] + hat.sign[j] * distance)).ravel(), return_index=True)
        cum = np.maximum.accumulate((within + before).ravel()[first])
        return t, np.clip(cum / cum[-1], 0.0, 1.0)

    @functools.cached_property
    def _cdf_spline(self):
        """Cubic Hermite interpolant of the table, with the density as slope (error ~ h⁴)."""
        t, cum = self._cdf_table
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = np.nan_to_num(np.exp(self._log_density(t) - self.log_normaliser), nan=0.0, posinf=0.0)
        return interpolate.CubicHermiteSpline(t, cum, slope)

    def cdf(self, t):
        """CDF of ``t`` (quadrature over the hat's pieces, Hermite-interpolated; error < 1e-7)."""
        grid, _ = self._cdf_table
        t = np.clip(np.asarray(t, dtype=float), grid[0], grid[-1])
        return np.clip(self._cdf_spline(t), 0.0, 1.0)

    def quantile(self, p):
        """Inverse of :meth:`cdf` (same table)."""
        grid, cum = self._cdf_table
        return np.interp(np.asarray(p, dtype=float), cum, grid)
