"""An empirical, certified lower bound on the ε of a Fréchet-mean release (docs/audit.md).

The audit builds the mechanism exactly as :class:`geodp.models.PrivateFrechetMean` does for a
mean of ``n`` records in the public ball, takes a worst-case pair of neighbouring inputs, draws
from the two output laws ``P0`` and ``P1``, and certifies, for a few test events ``E``,

    ε ≥ ln((P0(E) − δ) / P1(E))    (and the same with P0 and P1 swapped)

with Clopper–Pearson bounds on both probabilities. The events are thresholds on the distance to
the first footpoint, on the projection of ``log_{m0}(x)`` onto the direction of the second, and
likelihood-ratio regions ``{ℓ0 − ℓ1 > t}`` built from the laws' own unnormalised log-densities.

**Why two rounds of draws.** Picking the best event and threshold on the same draws that certify
it inflates the bound (the maximum of many noisy estimates is biased upwards). The audit picks
one event per family on a first set of draws and certifies the picked ones on fresh draws, with
a Bonferroni correction over them: with probability at least ``confidence``, every certified
bound in the table holds at once, hence the largest too.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from geodp.audit.defaults import MAX_KNG_N, MAX_N, check_audit_n, default_center
from geodp.audit.exact_loss import (
    axial_quadrature_loss,
    fixed_unit_tangent,
    gaussian_exact_epsilon,
    laplace_exact_epsilon,
    supports_axial_quadrature,
)
from geodp.errors import AssumptionError, InvalidParameterError
from geodp.manifolds import Euclidean, Manifold
from geodp.mechanisms import RiemannianGaussianMechanism, TangentGaussianMechanism, WrappedGaussianMechanism
from geodp.sensitivity import check_radius, frechet_mean_sensitivity
from geodp.validation import as_generator, check_delta, check_epsilon, check_sample_size

__all__ = ["EpsilonAudit", "EventBound", "MECHANISMS", "MUTANTS", "audit_epsilon", "clopper_pearson_epsilon"]

MUTANTS = (None, "halve-scale", "unit-lipschitz")
MECHANISMS = ("laplace", "tangent-gaussian", "kng", "wrapped-laplace", "wrapped-gaussian", "riemannian-gaussian")
_GAUSSIAN = ("tangent-gaussian", "wrapped-gaussian", "riemannian-gaussian")  # (ε, δ) with δ > 0
_MUTANT_NOTES = {"halve-scale": "  (halved)", "unit-lipschitz": "  (calibrated with L = 1, not L)"}
_FAMILIES = ("distance", "projection", "likelihood-ratio")
# Threshold candidates: quantiles of the pooled first-round draws, dense in both tails.
_TAIL_LEVELS = np.geomspace(1e-6, 0.5, 80)
_LEVELS = np.unique(np.concatenate([_TAIL_LEVELS, 1.0 - _TAIL_LEVELS, np.linspace(0.02, 0.98, 49)]))
_BATCH = 50_000  # draws per batch (memory and progress)
MIN_SAMPLES = 100  # the fewest draws per law and round the audit accepts (the CLI's --samples too)
DEFAULT_SAMPLES = 200_000  # draws per law and round by default, unless the time budget says fewer
DRAW_BUDGET = 60.0  # seconds of draws (4 n_samples) the default count aims at, on this machine
_PILOT_DRAWS = 1024  # at most this many pilot draws per law time a draw


def _check_confidence(confidence) -> float:
    """A confidence in the open interval (0, 1) (the same message for every bad value)."""
    try:
        value = float(confidence)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(confidence, bool) or not 0.0 < value < 1.0:
        raise InvalidParameterError(f"confidence must be a number in (0, 1), got {confidence!r}.")
    return value


# The pair is resolved when its separation (the sensitivity, ~ r/n) is at least this fraction of
# the coordinates' size near the centre: float64 then computes the loss to ~1e-6 relative.
_RESOLUTION = 1e-10


def clopper_pearson_epsilon(count_first, count_second, n_samples, delta, alpha):
    """``ln((p0_low − δ)/p1_high)``: a lower bound on ε from an event seen ``count_first`` times
    in ``n_samples`` draws of ``P0`` and ``count_second`` times in as many draws of ``P1``.

    ``p0_low`` and ``p1_high`` are one-sided Clopper–Pearson bounds at level ``alpha`` each, so
    the bound holds with probability at least ``1 − 2 alpha``. ``-inf`` when ``p0_low ≤ δ``.

    Parameters
    ----------
    count_first, count_second : int or array_like
    n_samples : int
    delta : float
    alpha : float
        In (0, 1).

    Examples
    --------
    >>> round(float(clopper_pearson_epsilon(5000, 1000, 100_000, 0.0, 0.01)), 3)
    1.504
    >>> float(clopper_pearson_epsilon(0, 0, 1000, 0.0, 0.01))
    -inf
    """
    k0 = np.asarray(count_first, dtype=float)
    k1 = np.asarray(count_second, dtype=float)
    low = np.where(k0 > 0, stats.beta.ppf(alpha, np.maximum(k0, 1), n_samples - k0 + 1), 0.0)
    high = np.where(k1 < n_samples, stats.beta.ppf(1.0 - alpha, k1 + 1, np.maximum(n_samples - k1, 1)), 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(low > delta, np.log(np.maximum(low - delta, 1e-300) / high), -np.inf)


@dataclass(frozen=True)
class EventBound:
    """One certified test event of an :class:`EpsilonAudit`.

    Attributes
    ----------
    family : str
        ``"distance"``, ``"projection"`` or ``"likelihood-ratio"``.
    event : str
        The event, e.g. ``"ρ(x, m0) <= 0.0123"``; ``m0``, ``m1`` name the pair's reference points.
    threshold : float
    favoured : int
        0 when the bound is ``ln((P0(E) − δ)/P1(E))``, 1 when the laws are swapped.
    count_favoured, count_other : int
        Draws in the event under the favoured law and under the other, each out of ``n_samples``.
    bound : float
        The certified lower bound (``-inf`` when the event certifies nothing).
    """

    family: str
    event: str
    threshold: float
    favoured: int
    count_favoured: int
    count_other: int
    bound: float

    def to_dict(self) -> dict:
        """Plain-dict view (JSON-friendly: ``-inf`` becomes ``None``)."""
        return {
            "family": self.family,
            "event": self.event,
            "threshold": self.threshold,
            "favoured": self.favoured,
            "count_favoured": self.count_favoured,
            "count_other": self.count_other,
            "bound": self.bound if math.isfinite(self.bound) else None,
        }


@dataclass(frozen=True)
class EpsilonAudit:
    """The result of :func:`audit_epsilon`.

    Attributes
    ----------
    space, mechanism : str
    epsilon, delta : float
        The claimed guarantee (δ = 0 for the pure mechanisms).
    epsilon_lower_bound : float
        The certified lower bound: the largest bound of ``events`` (0 if none is positive). With
        probability at least ``confidence`` the true ε of the audited pair is at least this.
    confidence : float
    n_samples : int
        Draws from each law in each of the two rounds (``4 n_samples`` draws in all).
    events : tuple of EventBound
        The certified events (one per family, picked on the first round).
    exact_epsilon : float or None
        The exact ε of the pair at δ, where computable (closed form or quadrature).
    mutant : str or None
        ``"halve-scale"``: the audited laws have half the mechanism's noise scale (a broken
        mechanism, to show the audit's power); ``None``: the real mechanism.
    pair : str
        The worst-case pair of inputs.
    scale : float
        The noise scale of the audited laws (halved for the mutant).
    seconds : float
    log_normaliser_difference : float or None
        ``log Z0 − log Z1`` where known (0 when the normaliser does not depend on the input).
    seconds_per_draw : float or None
        When ``n_samples`` was left to its default: the cost of one draw measured by the timed
        pilot that chose it (``None`` when ``n_samples`` was given).
    loss_samples : tuple of numpy.ndarray
        ``ℓ0 − ℓ1`` (unnormalised) at the second-round draws of ``P0`` and of ``P1``; for
        :func:`~geodp.audit.plot_loss`, left out of ``to_dict``.
    """

    space: str
    mechanism: str
    epsilon: float
    delta: float
    epsilon_lower_bound: float
    confidence: float
    n_samples: int
    events: tuple
    exact_epsilon: float | None
    mutant: str | None
    pair: str
    scale: float
    seconds: float
    log_normaliser_difference: float | None = None
    seconds_per_draw: float | None = None
    loss_samples: tuple = field(default=(), repr=False, compare=False)

    @property
    def violated(self) -> bool:
        """Whether the certified lower bound exceeds the claimed ε."""
        return self.epsilon_lower_bound > self.epsilon

    def to_dict(self) -> dict:
        """Plain-dict view (JSON-friendly), without the loss samples."""
        return {
            "space": self.space,
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "confidence": self.confidence,
            "n_samples": self.n_samples,
            "events": [e.to_dict() for e in self.events],
            "exact_epsilon": self.exact_epsilon,
            "mutant": self.mutant,
            "pair": self.pair,
            "scale": self.scale,
            "seconds": self.seconds,
            "log_normaliser_difference": self.log_normaliser_difference,
            "seconds_per_draw": self.seconds_per_draw,
            "violated": self.violated,
        }

    def __str__(self) -> str:
        title = f"epsilon audit: {self.mechanism} on {self.space}"
        if self.mutant is not None:
            title += f"  [MUTANT {self.mutant}: NOT the mechanism geodp releases with]"
        lines = [
            title,
            f"claimed        : epsilon = {self.epsilon:g}, delta = {self.delta:g}",
            f"pair           : {self.pair}",
            f"noise scale    : {self.scale:.6g}" + _MUTANT_NOTES.get(self.mutant, ""),
            f"draws          : {self.n_samples} per law and round (events picked on round 1, certified on "
            f"round 2), confidence {self.confidence:g} (Bonferroni over {len(self.events)} events)",
            *(
                []
                if self.seconds_per_draw is None
                else [
                    f"                 the default count for a {DRAW_BUDGET:g} s budget of draws: a timed pilot "
                    f"measured {self.seconds_per_draw * 1e3:.3g} ms per draw"
                ]
            ),
            f"exact epsilon  : {'not computable here' if self.exact_epsilon is None else f'{self.exact_epsilon:.4f}'}",
            "events (certified on round 2):",
            f"  {'family':<17} {'event':<40} {'in E (favoured)':>15} {'in E (other)':>13} {'bound':>8}",
        ]
        for e in self.events:
            event = e.event + ("" if e.favoured == 0 else "  [P1 over P0]")
            bound = f"{e.bound:.4f}" if math.isfinite(e.bound) else "-"
            lines.append(f"  {e.family:<17} {event:<40} {e.count_favoured:>15} {e.count_other:>13} {bound:>8}")
        lines.append(f"time           : {self.seconds:.1f} s")
        verdict = (
            f"EXCEEDS claimed ε = {self.epsilon:g}: the guarantee is violated"
            if self.violated
            else f"≤ claimed {self.epsilon:g} — consistent"
        )
        lines.append(f"verdict        : certified lower bound {self.epsilon_lower_bound:.4f} {verdict}")
        return "\n".join(lines)


@dataclass(frozen=True)
class _Pair:
    """Two output laws and what the events and the oracle need to know about them."""

    laws: tuple
    points: tuple  # reference points m0, m1 (footpoints or the datasets' means)
    description: str
    exact_epsilon: float | None
    log_normaliser_difference: float | None


def _mechanism(space, mechanism, epsilon, delta, n, radius, center):
    """The mechanism of ``PrivateFrechetMean`` for n records in the ball, read from its public
    :meth:`~geodp.models.PrivateFrechetMean.plan` (the estimator's own sensitivity: the bound of
    :func:`~geodp.sensitivity.frechet_mean_sensitivity` plus its solver margin ``2·tol/μ``).
    ``tests/test_audit_epsilon.py`` checks it against ``fit(X).mechanism_``."""
    from geodp.models import PrivateFrechetMean

    model = PrivateFrechetMean(space, epsilon=epsilon, delta=delta, center=center, radius=radius, mechanism=mechanism)
    _check_resolved(space, center, radius, n, frechet_mean_sensitivity(space, radius, n, mechanism=mechanism))
    plan = model.plan(n)  # from the number of records alone: no record is built
    if not plan.exact:
        raise AssumptionError(_MCMC_REFUSAL)
    return plan.mechanism


def _check_resolved(space, center, radius, n, separation):
    """Refuse a pair float64 cannot tell apart: footpoints (or KNG's means) ``separation`` apart
    next to coordinates of size ``max(1, |center|)``."""
    size = max(1.0, float(np.max(np.abs(center))))
    if separation >= _RESOLUTION * size:
        return
    largest_n = math.floor(n * separation / (_RESOLUTION * size))
    smallest_radius = radius * _RESOLUTION * size / separation  # the separation grows ~ linearly in r
    fix = f"a radius of at least about {smallest_radius:.2g}" + (f", or n <= {largest_n}" if largest_n >= 1 else "")
    raise InvalidParameterError(
        f"with n = {n} and radius {radius!r} the audited pair lies {separation:.3g} apart, below what float64 "
        f"resolves next to coordinates of size {size:g} (the audit needs >= {_RESOLUTION:g} of it): use {fix}."
    )


_MCMC_REFUSAL = (
    "this configuration samples by MCMC (no exact sampler at this scale and ball), which the audit "
    "cannot run in reasonable time; choose a smaller radius or a larger n. On a space of your own, "
    "exact samplers need its polar volume: radial_log_jacobian, cut_radius and volume_growth_rate "
    "(isotropic spaces), or a global chart (flat spaces)"
)


def _rebuilt(mech, space, center, factor):
    """The same mechanism on ``space`` (the original, or the isometric chart of a flat one) with
    ``factor`` times the sensitivity, hence ``factor`` times the noise scale (its public
    ``rescaled``)."""
    rebuilt = mech.rescaled(factor, space=space, center=center)
    if not math.isclose(rebuilt.scale, mech.scale * factor, rel_tol=1e-6):  # pragma: no cover
        raise AssertionError("the rebuilt mechanism does not have the intended scale")
    return rebuilt


def _most_curved_partner(space, center, axis):
    """A unit tangent orthogonal to ``axis`` spanning with it a plane of the largest sectional
    curvature, where the stretch of ``Log`` reaches L: the space's own choice
    (:meth:`~geodp.manifolds.Manifold._most_curved_partner`; ``i·axis`` on Kendall shapes), or any
    orthogonal tangent where the curvature is constant."""
    partner = space._most_curved_partner(center, axis)
    return fixed_unit_tangent(space, center, orthogonal_to=axis) if partner is None else partner


def _tangential_pair(mech, space, center, radius, axis, delta, sensitivity):
    """The wrapped mechanisms where Log at the centre stretches distances (L > 1, positive
    curvature): two boundary points ``Exp_c(r(cos θ·a ± sin θ·w))`` at geodesic distance Δ (the
    real mechanism's ``sensitivity``, even for a mutant),
    where the stretch approaches L (docs/math.md §6.1). Their tangent difference
    ``D = 2r·sin θ`` is the exact input of the tangent law, so the exact ε is that of ``D``; a
    release calibrated with L = 1 (the ``unit-lipschitz`` mutant) exceeds its claim by about L."""
    w = _most_curved_partner(space, center, axis)

    def ends(theta):
        return tuple(space.exp(center, radius * (math.cos(theta) * axis + s * math.sin(theta) * w)) for s in (1, -1))

    target, lo, hi = sensitivity, 0.0, math.pi / 2
    if float(space.dist(*ends(hi))) > target:
        for _ in range(200):  # ρ grows with θ on [0, π/2] (the pair stays in the ball, r < π/2√K)
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if float(space.dist(*ends(mid))) < target else (lo, mid)
    points = ends(hi)
    difference = 2.0 * radius * math.sin(hi)  # |Log_c m0 − Log_c m1|
    laws = tuple(mech.distribution(p) for p in points)
    if isinstance(mech, WrappedGaussianMechanism):
        exact = gaussian_exact_epsilon(difference, mech.scale, delta)
    else:
        exact = laplace_exact_epsilon(difference, mech.scale)
    description = (
        f"footpoints m0, m1 on the boundary, symmetric about a geodesic through the centre, "
        f"ρ(m0, m1) = {float(space.dist(*points)):.6g} (the sensitivity Δ), |Log m0 − Log m1| = {difference:.6g} at "
        f"the centre ({difference / float(space.dist(*points)):.4g}·Δ; L = {mech.lipschitz:.4g})"
    )
    return _Pair(laws, points, description, exact, 0.0)


def _footpoint_pair(mech, space, center, radius, axis, delta, sensitivity):
    """Laplace, tangent Gaussian and the wrapped mechanisms: two footpoints at distance Δ
    (``sensitivity``, the real mechanism's even for the mutant; for the wrapped ones the tangent
    sensitivity L·Δ, so that ``Log`` at the centre of the two differs by it). The loss depends on
    the footpoints only; truncated laws put them at the boundary (the normaliser is smallest
    there)."""
    distance = sensitivity
    truncated = getattr(mech, "truncated", False)
    if truncated:
        distance = min(distance, 2.0 * radius)
        positions = (radius - distance, radius)
    else:
        positions = (0.0, distance)
    points = tuple(space.exp(center, s * axis) for s in positions)
    laws = tuple(mech.distribution(p) for p in points)
    exact, difference = None, None
    if isinstance(mech, (TangentGaussianMechanism, WrappedGaussianMechanism)) or (
        isinstance(mech, RiemannianGaussianMechanism) and space.is_flat
    ):
        exact, difference = gaussian_exact_epsilon(distance, mech.scale, delta), 0.0
    elif isinstance(mech, RiemannianGaussianMechanism):  # homogeneous: equal normalisers, loss not closed form
        difference = 0.0
    elif not truncated:
        exact, difference = laplace_exact_epsilon(distance, mech.scale), 0.0
    elif supports_axial_quadrature(space):
        exact, difference = axial_quadrature_loss(space, center, radius, axis, laws, kinks=positions)
    where = "at the boundary of the ball, " if truncated else ""
    description = (
        f"footpoints m0, m1 {where}on one geodesic through the centre, ρ(m0, m1) = {distance:.6g} "
        f"(the sensitivity{'' if distance == sensitivity else ', capped at the diameter'})"
    )
    return _Pair(laws, points, description, exact, difference)


def _kng_pair(mech, space, center, radius, axis, n):
    """KNG: D0 = n records at the boundary point b, D1 = the same with one moved to the opposite
    boundary point b' (the mean of D0 sits where the ball truncates the law most)."""
    b, b_opposite = space.exp(center, radius * axis), space.exp(center, -radius * axis)
    datasets = (np.repeat(b[None], n, axis=0), np.concatenate([np.repeat(b[None], n - 1, axis=0), b_opposite[None]]))
    laws = tuple(mech.distribution(d) for d in datasets)
    points = tuple(law.frechet_mean for law in laws)
    exact, difference = None, None
    if space.is_flat:  # KNG is the untruncated Laplace at the mean
        exact, difference = laplace_exact_epsilon(float(space.dist(*points)), mech.scale), 0.0
    elif supports_axial_quadrature(space):
        kinks = [float(space.dist(center, p)) for p in points]
        exact, difference = axial_quadrature_loss(space, center, radius, axis, laws, kinks=kinks)
    description = (
        f"D0 = {n} records at a boundary point b, D1 = D0 with one record moved to the opposite "
        "boundary point; m0, m1 = their Fréchet means"
    )
    return _Pair(laws, points, description, exact, difference)


def _features(space, pair, x):
    """Distance to m0, projection of log_m0(x) on the direction of m1, and ℓ0 − ℓ1 at draws x."""
    m0, m1 = pair.points
    direction = space.unchecked.log(m0, m1)
    direction = direction / float(space.unchecked.norm(m0, direction))
    with np.errstate(invalid="ignore"):
        ratio = np.asarray(pair.laws[0].log_density(x)) - np.asarray(pair.laws[1].log_density(x))
    fast = space.unchecked
    return np.stack([np.asarray(fast.dist(m0, x)), np.asarray(fast.inner(m0, fast.log(m0, x), direction)), ratio])


def _draw_features(space, pair, n_samples, rng, progress):
    """Features of ``n_samples`` draws of each law, drawn in batches: shape (2, 3, n_samples)."""
    out = np.empty((2, 3, n_samples))
    for i, law in enumerate(pair.laws):
        for start in range(0, n_samples, _BATCH):
            m = min(_BATCH, n_samples - start)
            out[i, :, start : start + m] = _features(space, pair, law.sample(m, rng=rng))
            if progress is not None:
                progress.update(m)
    return out


def _default_samples(space, pair):
    """The default draws per law and round, and the measured seconds per draw: ``DEFAULT_SAMPLES``,
    or fewer when a timed pilot (draws of the public synthetic pair, with a generator of its own,
    so timing reveals nothing private and the audit's stream is untouched) says the ``4 n_samples``
    draws would take more than ``DRAW_BUDGET`` seconds."""
    pilot_rng = np.random.default_rng(0)
    size, per_draw = 16, math.inf
    while True:
        started = time.perf_counter()
        _draw_features(space, pair, size, pilot_rng, None)
        per_draw = (time.perf_counter() - started) / (2 * size)
        if size >= _PILOT_DRAWS or per_draw * size > 0.25:
            break
        size *= 4
    fits = int(DRAW_BUDGET / (4 * per_draw))
    if fits < MIN_SAMPLES:
        raise InvalidParameterError(
            f"one draw of this pair takes about {per_draw * 1e3:.3g} ms here, so even {MIN_SAMPLES} draws per law "
            f"and round (the minimum) would exceed the default time budget of {DRAW_BUDGET:g} s of draws; pass "
            f"n_samples (--samples) explicitly to run longer anyway, or audit a smaller n (KNG's cost grows with n)."
        )
    if fits >= DEFAULT_SAMPLES:
        return DEFAULT_SAMPLES, per_draw
    digits = 10 ** (len(str(fits)) - 2)  # two significant digits, rounded down
    return max(MIN_SAMPLES, fits // digits * digits), per_draw


def _candidates(features, delta, alpha):
    """Every (family, threshold, side, favoured) candidate on the first round, scored by its
    Clopper–Pearson bound; returns the best per family."""
    n = features.shape[2]
    best = []
    for f, family in enumerate(_FAMILIES):
        first, second = np.sort(features[0, f]), np.sort(features[1, f])
        pooled = np.concatenate([first, second])
        pooled = pooled[np.isfinite(pooled)]
        thresholds = np.unique(np.quantile(pooled, _LEVELS))
        above = [n - np.searchsorted(v, thresholds, side="right") for v in (first, second)]
        options = []
        for side, counts in ((">", above), ("<=", [n - above[0], n - above[1]])):
            for favoured in (0, 1):
                k_fav, k_other = counts[favoured], counts[1 - favoured]
                bounds = clopper_pearson_epsilon(k_fav, k_other, n, delta, alpha)
                i = int(np.argmax(bounds))
                options.append((float(bounds[i]), float(thresholds[i]), side, favoured))
        best.append((family, *max(options)[1:]))
    return best


_EVENT_TEXT = {
    "distance": "ρ(x, m0) {side} {t:.6g}",
    "projection": "<log_m0 x, u01> {side} {t:.6g}",
    "likelihood-ratio": "ℓ0(x) − ℓ1(x) {side} {t:.6g}",
}


def _certify(chosen, features, delta, alpha):
    n = features.shape[2]
    events = []
    for family, threshold, side, favoured in chosen:
        f = _FAMILIES.index(family)
        with np.errstate(invalid="ignore"):
            inside = features[:, f] > threshold if side == ">" else features[:, f] <= threshold
        counts = inside.sum(axis=1)
        bound = float(clopper_pearson_epsilon(counts[favoured], counts[1 - favoured], n, delta, alpha))
        events.append(
            EventBound(
                family,
                _EVENT_TEXT[family].format(side=side, t=threshold),
                threshold,
                favoured,
                int(counts[favoured]),
                int(counts[1 - favoured]),
                bound,
            )
        )
    return tuple(events)


def _progress_bar(total, enabled):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    import sys

    return tqdm(total=total, unit="draw", unit_scale=True, file=sys.stderr, leave=False, desc="audit")


def audit_epsilon(
    space,
    mechanism="laplace",
    *,
    epsilon,
    delta=0.0,
    n,
    radius,
    center=None,
    n_samples=None,
    confidence=0.95,
    mutant=None,
    rng=None,
    progress=False,
) -> EpsilonAudit:
    """Certify an empirical lower bound on the ε of a private Fréchet-mean release.

    The mechanism is the one :class:`~geodp.models.PrivateFrechetMean` uses for a mean of ``n``
    records in the public ball ``B_radius(center)`` (its sensitivity and calibrated scale). The
    pair of inputs is a worst case:

    * Laplace and tangent Gaussian: two footpoints (the means of two neighbouring datasets) at
      distance exactly Δ on a geodesic through the centre, at the ball's boundary when the law
      is truncated (the loss depends only on the footpoints); the wrapped mechanisms: their loss
      depends only on the difference of ``Log`` at the centre, at most ``L·Δ``; where L = 1, the
      centre and ``Exp`` of ``Δ`` along a fixed direction; where L > 1 (positive curvature), two
      boundary points Δ apart symmetric about that direction, whose ``Log`` differ by nearly
      ``L·Δ`` (so that a wrong L shows);
    * KNG: ``D0`` = n records at a boundary point ``b``, ``D1`` = ``D0`` with one record moved to
      the opposite boundary point (the law's normaliser depends on the data; this pair has the
      largest exact loss among the structured pairs we compared by quadrature on S²).

    Draws come in two rounds of ``n_samples`` per law. On round 1 the audit picks, per family —
    threshold on the distance to ``m0``, on the projection of ``log_m0(x)`` onto the direction
    of ``m1``, and the likelihood-ratio region ``{ℓ0 − ℓ1 > t}`` from the laws' unnormalised
    ``log_density`` — the event and threshold with the best Clopper–Pearson bound. On round 2
    (fresh draws) it certifies those three events, each with its two one-sided Clopper–Pearson
    bounds at level ``(1 − confidence)/6`` (Bonferroni), so that all three bounds hold at once
    with probability ≥ ``confidence``. Certifying on the selection draws would inflate the bound.

    A bound above the claimed ε shows, with that confidence, that the guarantee is violated. A
    bound below it is evidence, not proof, that the guarantee holds: other pairs or events
    might do better, and the audit sees only the laws geodp samples from (not floating point).

    Parameters
    ----------
    space : Manifold
    mechanism : {"laplace", "tangent-gaussian", "kng", "wrapped-laplace", "wrapped-gaussian", "riemannian-gaussian"}
    epsilon : float
        Claimed ε.
    delta : float, default 0.0
        Claimed δ: > 0 for ``"tangent-gaussian"``, ``"wrapped-gaussian"`` and ``"riemannian-gaussian"``, 0 for the pure
        mechanisms.
    n : int
        Public number of records (the sensitivity is ~ 1/n).
    radius : float
        Public radius of the data ball.
    center : array_like, optional
        Public centre; default :func:`geodp.audit.defaults.default_center` (the north pole of a
        sphere, the identity of SPD, the origin of Euclidean and hyperbolic space, the regular
        polygon of a Kendall shape space).
    n_samples : int, optional
        Draws from each law in each round, at least ``MIN_SAMPLES`` (100). Default: 200,000, or
        fewer when a short timed pilot (draws of the same public pair) says the ``4 n_samples``
        draws would take more than ``DRAW_BUDGET`` (60) seconds; the count used is in the result,
        and refused with an error when fewer than 100 would fit. The default therefore depends on
        the machine's speed for slow configurations: pass ``n_samples`` for a reproducible run.
    confidence : float, default 0.95
        In the open interval (0, 1).
    mutant : {None, "halve-scale", "unit-lipschitz"}
        ``"halve-scale"``: audit the same release with its noise scale halved (a deliberately
        broken mechanism: the audit should then exceed the claimed ε). ``"unit-lipschitz"`` (the
        wrapped mechanisms on positively curved spaces): calibrate the noise as if ``Log`` at the
        centre were 1-Lipschitz, i.e. scale divided by L.
    rng : None, int or numpy.random.Generator
    progress : bool, default False
        Show a progress bar (tqdm, on stderr) when tqdm is installed.

    Returns
    -------
    EpsilonAudit

    Raises
    ------
    InvalidParameterError
        A parameter is out of range (δ > 0 for a pure mechanism, an unknown mutant, ``n`` above
        :data:`~geodp.audit.defaults.MAX_N` — :data:`~geodp.audit.defaults.MAX_KNG_N` for KNG,
        whose pair holds the n records —, a pair too close for float64 to resolve, a default
        sample count that cannot fit the time budget, ...).
    AssumptionError
        The radius violates Assumption 1, or the release would be drawn by MCMC (too slow here).

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> audit = audit_epsilon(Sphere(2), "laplace", epsilon=1.0, n=5, radius=0.2,
    ...                       center=np.array([0.0, 0.0, 1.0]), n_samples=10_000, rng=0)
    >>> audit.exact_epsilon, audit.epsilon_lower_bound <= 1.0
    (1.0, True)
    >>> print(str(audit).splitlines()[-1])  # doctest: +ELLIPSIS
    verdict        : certified lower bound ... ≤ claimed 1 — consistent
    """
    started = time.perf_counter()
    if not isinstance(space, Manifold):
        raise InvalidParameterError(f"space must be a geodp Manifold, got {type(space).__name__}.")
    if mechanism not in MECHANISMS:
        raise InvalidParameterError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}.")
    if mutant not in MUTANTS:
        raise InvalidParameterError(f"mutant must be None, 'halve-scale' or 'unit-lipschitz', got {mutant!r}.")
    epsilon = check_epsilon(epsilon)
    if mechanism not in _GAUSSIAN and delta != 0.0:
        raise InvalidParameterError(f"the {mechanism} mechanism is pure ε-DP: leave delta at 0, got {delta!r}.")
    delta = check_delta(delta, allow_zero=mechanism not in _GAUSSIAN)
    n = (
        check_audit_n(n, limit=MAX_KNG_N, what="a KNG audit (its pair holds n records, evaluated at every draw)")
        if mechanism == "kng"
        else check_audit_n(
            n, limit=MAX_N, what="an ε audit (beyond it the footpoints ~r/n apart are not resolved in float64)"
        )
    )
    if n_samples is not None:
        n_samples = check_sample_size(n_samples)
        if n_samples < MIN_SAMPLES:
            raise InvalidParameterError(
                f"n_samples must be >= {MIN_SAMPLES} (fewer draws certify nothing useful), got {n_samples!r}."
            )
    confidence = _check_confidence(confidence)
    rng = as_generator(rng)
    radius = check_radius(space, radius)
    center = default_center(space) if center is None else space.check_points(center, "center", batch_ndim=0)
    mech = _mechanism(space, mechanism, epsilon, delta, n, radius, center)
    # the wrapped mechanisms with L = 1: the pair's Log at the centre differs by Δ = L·Δ
    delta, sensitivity = float(mech.delta), float(getattr(mech, "tangent_sensitivity", mech.sensitivity))
    # Flat spaces: the laws in the isometric chart R^d (same loss; no matrix exp/log per draw).
    audit_space = Euclidean(space.dim) if space.is_flat else space
    audit_center = space.to_coordinates(center) if space.is_flat else center
    stretch = float(getattr(mech, "lipschitz", 1.0))  # L of the wrapped mechanisms, 1 otherwise
    if mutant == "unit-lipschitz" and not stretch > 1.0:
        raise InvalidParameterError(
            "mutant 'unit-lipschitz' needs a wrapped mechanism on a positively curved space (where L > 1); "
            f"{mechanism!r} on {space!r} with radius {radius!r} has L = {stretch!r}."
        )
    factor = {"halve-scale": 0.5, "unit-lipschitz": 1.0 / stretch}.get(mutant, 1.0)
    audited = _rebuilt(mech, audit_space, audit_center, factor)
    axis = fixed_unit_tangent(audit_space, audit_center)  # the pair lies on this geodesic
    with np.errstate(all="ignore"):
        if mechanism == "kng":
            pair = _kng_pair(audited, audit_space, audit_center, radius, axis, n)
        elif stretch > 1.0:
            pair = _tangential_pair(audited, audit_space, audit_center, radius, axis, delta, float(mech.sensitivity))
        else:
            pair = _footpoint_pair(audited, audit_space, audit_center, radius, axis, delta, sensitivity)
    space_text = repr(space) + (f" (audited in its isometric chart R^{space.dim})" if space.is_flat else "")
    if not all(law.exact for law in pair.laws):
        raise AssumptionError(_MCMC_REFUSAL)
    per_draw = None
    if n_samples is None:
        n_samples, per_draw = _default_samples(audit_space, pair)
    alpha = (1.0 - confidence) / (2 * len(_FAMILIES))
    bar = _progress_bar(4 * n_samples, progress)
    try:
        chosen = _candidates(_draw_features(audit_space, pair, n_samples, rng, bar), delta, alpha)
        certifying = _draw_features(audit_space, pair, n_samples, rng, bar)
    finally:
        if bar is not None:
            bar.close()
    events = _certify(chosen, certifying, delta, alpha)
    certified = max([0.0] + [e.bound for e in events if math.isfinite(e.bound)])
    return EpsilonAudit(
        space=space_text,
        mechanism=mechanism,
        epsilon=epsilon,
        delta=delta,
        epsilon_lower_bound=certified,
        confidence=confidence,
        n_samples=n_samples,
        events=events,
        exact_epsilon=pair.exact_epsilon,
        mutant=mutant,
        pair=pair.description,
        scale=float(audited.scale),
        seconds=time.perf_counter() - started,
        log_normaliser_difference=pair.log_normaliser_difference,
        seconds_per_draw=per_draw,
        loss_samples=(certifying[0, 2].copy(), certifying[1, 2].copy()),
    )
