"""The release path every private estimator shares: a public plan, the charge, the private part.

Each estimator in :mod:`geodp.models` splits ``fit`` in two:

1. ``plan(X, y)`` reads only what is public — the settings, the number and shape of the records —
   and returns a frozen :class:`ReleasePlan`: the mechanism, the sampler route and whether it is
   exact, the (ε, δ) to charge, the sensitivity and scale, the warnings to give before the charge,
   and the publishable report. Anything that can refuse a release from public information raises
   here, before anything is charged — except the budget, which the accountant checks at the
   charge (it then charges nothing).
2. :func:`execute` says the plan's notices, charges the accountant, and runs the private part in a
   :func:`private_section`: numpy's floating-point errors ignored, every warning captured and
   withheld from the caller (its text or presence may depend on the data).

Callers that need to know what a release would cost or do (``PrivateMDM`` composing its class
releases, the audit rebuilding a mechanism) read the plan instead of running ``fit``.
"""

from __future__ import annotations

import contextlib
import math
import time
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

from geodp.composition import dp_event
from geodp.work import NoAcceptance, fixed_work_section

__all__ = [
    "ReleasePlan",
    "TIMING_SAFE_DELTA",
    "TIMING_SAFE_POLICY",
    "announce_and_charge",
    "ball_stand_ins",
    "check_timing_safe",
    "deadline_key",
    "execute",
    "private_section",
    "timing_deadline",
    "timing_safe_plan",
]

# The public failure probability δ_t of fixed work: the rejection loops of a timing-safe release
# make a fixed number of proposals and all accept too few with probability at most this
# (docs/math.md, "Fixed work"); the guarantee becomes (ε, δ + δ_t) and the accountant is charged it.
TIMING_SAFE_DELTA = 1e-10
# What timing-safe mode promises, in the report's words (docs/guide.md, SECURITY.md).
TIMING_SAFE_POLICY = (
    "timing-safe: the work of the private part is fixed by public inputs (the Karcher flow and every "
    "iterative solver run their whole public iteration budget, every pass reads every record, each "
    "rejection sampler makes a public number of proposals and releases the first accepted one); if a "
    f"sampler accepts none (probability at most delta_t = {TIMING_SAFE_DELTA!r}) the release is a public "
    "fallback, so the guarantee is (epsilon, delta + delta_t), as charged; the wall time is padded to a "
    "public deadline (given, or calibrated on public stand-in data as 2 × the slowest of 3 runs + 10 ms); "
    "what still varies (allocator, caches, BLAS threads, other processes) can overrun it, and an overrun "
    "is observable (the release returns when the work ends) and is not bounded by the guarantee"
)
_CALIBRATION_RUNS = 3
_CALIBRATION_FACTOR = 2.0
_CALIBRATION_FLOOR = 0.010
_DEADLINES: dict = {}  # calibrated deadlines by public key, for this process


@dataclass(frozen=True)
class ReleasePlan:
    """What a private estimator's ``fit`` will do, decided from public quantities only.

    Attributes
    ----------
    estimator : str
        The estimator's class name.
    n_samples : int
        Number of records (public under replace-one adjacency).
    epsilon, delta : float
        What ``fit`` charges to the accountant.
    sensitivity : float
        Δ of the released statistic, in the mechanism's metric (a composed plan, as
        ``PrivateMDM``'s: the largest over its parts, each listed in ``facts``).
    scale : float or None
        Noise scale σ (None where the release has no single scale, e.g. K25's reproduction; a
        composed plan: the largest).
    exact : bool
        Whether the sampler is exact (False: MCMC draws, or may draw, the release).
    sampler : str
        Public description of the sampler route.
    report : PrivacyReport
        The publishable report the fit will carry (built here: nothing in it depends on the data).
    notices : tuple of (Warning subclass, str)
        Warnings said before the charge (decided from public quantities).
    mechanism : Mechanism or None
        The mechanism object, for estimators that release through one.
    facts : Mapping
        Further public values the estimator's private part uses (centre, radius, bounds, …).
    gdp_mu : float or None
        μ when the release is μ-GDP (``Guarantee.gdp_mu``; a composed plan: the largest over its
        parts when every part is), else None. With ``epsilon`` and ``delta`` it is what the
        accountant charges (:meth:`dp_event`).
    zcdp_rho : float or None
        ρ when the release is ρ-zCDP and not μ-GDP (``Guarantee.zcdp_rho``: secure mode's discrete
        Gaussian), else None; the accountant then composes it as zCDP.
    subsampled_gaussian : tuple (q, σ, T) or None
        ``Guarantee.subsampled_gaussian`` of a Poisson-subsampled descent (:mod:`geodp.optim`),
        else None; the accountant then composes dp-accounting's Poisson-sampled Gaussian event.
    composed_of : tuple or None
        The guarantees (plans, reports, guarantee records) of the releases a plan makes one after
        the other on the same data (``PrivatePrincipalGeodesics``: its footpoint, then its
        covariance), else None; ``epsilon`` and ``delta`` are then their sums, and the event is
        their ``ComposedDpEvent``, which the accountant composes part by part.
    timing_delta : float
        The timing-safe mode's share δ_t of ``delta`` (:func:`timing_safe_plan`; 0.0 without the
        mode): a refused charge says which part of δ is the release's and which is δ_t.

    Examples
    --------
    >>> import numpy as np
    >>> from geodp.manifolds import Sphere
    >>> from geodp.models import PrivateFrechetMean
    >>> model = PrivateFrechetMean(Sphere(2), epsilon=1.0, center=np.array([0.0, 0.0, 1.0]), radius=0.5)
    >>> plan = model.plan(np.zeros((100, 3)))            # reads the shape only
    >>> plan.epsilon, plan.delta, plan.exact, plan.n_samples
    (1.0, 0.0, True, 100)
    >>> "epsilon = 1.0" in str(plan.report)
    True
    """

    estimator: str
    n_samples: int
    epsilon: float
    delta: float
    sensitivity: float
    scale: float | None
    exact: bool
    sampler: str
    report: Any = field(compare=False)
    notices: tuple = ()
    mechanism: Any = field(default=None, compare=False)
    facts: Mapping = field(default_factory=dict, compare=False)
    gdp_mu: float | None = None
    zcdp_rho: float | None = None
    subsampled_gaussian: tuple | None = None
    composed_of: tuple | None = field(default=None, compare=False)
    timing_delta: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "facts", MappingProxyType(dict(self.facts)))

    def dp_event(self, *, neighboring="add-or-remove"):
        """The release's ``dp_accounting`` event (:func:`geodp.composition.dp_event`, whose
        ``neighboring`` says which dp-accounting relation it is for; the accountant composes the
        ``"replace-one"`` one).

        Examples
        --------
        >>> ReleasePlan("Demo", 10, 0.5, 0.0, 0.1, 0.1, True, "exact", report="").dp_event()
        EpsilonDeltaDpEvent(epsilon=0.5, delta=0.0)
        """
        return dp_event(self, neighboring=neighboring)

    def __repr__(self) -> str:
        said = ", ".join(sorted({category.__name__ for category, _ in self.notices})) or "none"
        return (
            f"ReleasePlan({self.estimator}, n={self.n_samples}, epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"sensitivity={self.sensitivity:.6g}, scale={self.scale if self.scale is None else f'{self.scale:.6g}'}, "
            f"exact={self.exact}, notices: {said}; print(plan.report) for the report)"
        )


@contextmanager
def private_section():
    """Run code on private records: numpy's error state fixed to "ignore" (the caller's
    ``np.seterr`` must not let one record raise or print), and every warning captured into the
    yielded list instead of reaching the caller.

    Examples
    --------
    >>> import warnings
    >>> with private_section() as caught:
    ...     _ = np.log(np.zeros(1))               # no RuntimeWarning reaches the caller
    ...     warnings.warn("depends on the data")
    >>> [str(w.message) for w in caught]
    ['depends on the data']
    """
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        yield caught


def announce_and_charge(plan: ReleasePlan, accountant, *, stacklevel: int = 3) -> None:
    """The public half of :func:`execute`: say the plan's notices, then charge the accountant
    the plan's release — its (ε, δ) and its event (:meth:`ReleasePlan.dp_event`), which the
    accountant composes by its rule; it raises :class:`~geodp.errors.BudgetExceededError`,
    charging nothing, if it cannot pay.
    For estimators whose private part is a sequence of other estimators' fits (``PrivateMDM``).

    Examples
    --------
    >>> from geodp.accountant import BudgetAccountant
    >>> budget = BudgetAccountant(epsilon=1.0)
    >>> announce_and_charge(ReleasePlan("Demo", 10, 0.25, 0.0, 0.1, 0.1, True, "exact", report=""), budget)
    >>> budget.total_spent
    (0.25, 0.0)
    """
    from geodp.errors import BudgetExceededError

    for category, text in plan.notices:
        warnings.warn(text, category, stacklevel=stacklevel)
    if accountant is None:
        return
    try:
        accountant.spend(plan)
    except BudgetExceededError as err:
        if not plan.timing_delta:
            raise
        raise BudgetExceededError(f"{err} {_timing_share(plan, accountant)}") from None


def _timing_share(plan: ReleasePlan, accountant) -> str:
    """What a refused timing-safe charge adds to the accountant's message: its δ split into the
    release's own δ and the mode's δ_t, and, under sequential composition, which of them fits."""
    timing = plan.timing_delta
    own = float(f"{plan.delta - timing:.12g}")
    text = (
        f"Its delta = {plan.delta!r} is the release's own delta = {own!r} plus the timing-safe mode's "
        f"delta_t = {timing!r} (timing_safe: the fixed-work samplers may all fail with probability delta_t)"
    )
    if accountant.composition != "sequential":
        return text + "."
    spent_epsilon, spent_delta = accountant.total_spent
    left = float(f"{accountant.delta - spent_delta:.12g}")
    if own > left:
        text += f"; the release's own delta already exceeds the delta left, {left!r}"
    elif plan.delta > left * (1 + 1e-12) and left > timing:
        text += (
            f"; the release's own delta fits the delta left, {left!r}, but not with delta_t: give the "
            f"release delta <= {float(f'{left - timing:.12g}')!r}, or a budget with delta_t = {timing!r} more"
        )
    elif plan.delta > left * (1 + 1e-12):
        text += (
            f"; the delta left, {left!r}, cannot pay delta_t itself: timing_safe needs a budget with a delta "
            f"of at least delta_t = {timing!r} beyond what the releases spend"
        )
    else:
        text += "; the delta fits"
    epsilon_left = float(f"{accountant.epsilon - spent_epsilon:.12g}")
    if plan.epsilon > epsilon_left * (1 + 1e-12):
        text += f"; its epsilon = {plan.epsilon!r} exceeds the epsilon left, {epsilon_left!r}"
    return text + "."


def check_timing_safe(timing_safe) -> bool | float:
    """Validate an estimator's ``timing_safe``: False, True (calibrate the deadline) or a deadline
    in seconds (a positive finite float). Returns it.

    Examples
    --------
    >>> check_timing_safe(True), check_timing_safe(0.5), check_timing_safe(False)
    (True, 0.5, False)
    """
    from geodp.errors import InvalidParameterError

    if isinstance(timing_safe, bool | np.bool_):
        return bool(timing_safe)
    if isinstance(timing_safe, int | np.integer):  # 1 and 0 read as True/False: make the intent explicit
        raise InvalidParameterError(
            f"timing_safe must be False, True or a deadline in seconds as a float, got the integer "
            f"{timing_safe!r}: pass True (a calibrated deadline) or {float(timing_safe)!r} (seconds)."
        )
    if isinstance(timing_safe, float | np.floating) and math.isfinite(timing_safe) and timing_safe > 0:
        return float(timing_safe)
    raise InvalidParameterError(
        f"timing_safe must be False, True or a deadline in seconds (a positive finite number), got {timing_safe!r}."
    )


def timing_deadline(
    timing_safe, run: Callable[[Any], Any], stand_ins: Callable[[], Sequence[Any]], *, key: Hashable | None = None
) -> float | None:
    """The public deadline of a timing-safe release, in seconds (None when ``timing_safe`` is
    False): the given number, or — for True — ``2 ×`` the slowest of 3 runs of ``run`` on each
    public stand-in input + 10 ms. ``stand_ins()`` builds them (only when a calibration runs)
    from the public ball and bounds, so the deadline is public too; ``run`` must not read the
    private records. With a ``key`` (public: the estimator's settings and the records' shape)
    the calibrated deadline is kept for later fits with the same key in this process.

    Examples
    --------
    >>> timing_deadline(False, print, list) is None, timing_deadline(0.25, print, list)
    (True, 0.25)
    >>> timing_deadline(True, lambda x: sum(range(x)), lambda: [10, 1000]) >= 0.010
    True
    """
    timing_safe = check_timing_safe(timing_safe)
    if timing_safe is False:
        return None
    if timing_safe is not True:
        return timing_safe
    if key is not None and key in _DEADLINES:
        return _DEADLINES[key]
    slowest = 0.0
    with private_section():  # stand-ins may warn like the real data would: nothing reaches the caller
        for stand_in in stand_ins():
            for _ in range(_CALIBRATION_RUNS):
                start = time.perf_counter()
                with contextlib.suppress(NoAcceptance), fixed_work_section(TIMING_SAFE_DELTA):
                    run(stand_in)  # the release's fixed work
                slowest = max(slowest, time.perf_counter() - start)
    deadline = _CALIBRATION_FACTOR * slowest + _CALIBRATION_FLOOR
    if key is not None:
        _DEADLINES[key] = deadline
    return deadline


def timing_safe_plan(plan: ReleasePlan, timing_safe) -> ReleasePlan:
    """``plan`` as a timing-safe release charges it: δ + δ_t (:data:`TIMING_SAFE_DELTA`), and no
    μ-GDP or zCDP curve, nor parts (``composed_of``: their events would not carry δ_t) — the
    fixed-work release is proven (ε, δ + δ_t)-DP, docs/math.md "Fixed work"; unchanged when
    ``timing_safe`` is False. The report says the same
    (:func:`geodp.models.report.with_timing_policy`).

    Examples
    --------
    >>> plan = ReleasePlan("Demo", 10, 1.0, 0.0, 0.1, 0.1, True, "exact", report="")
    >>> timing_safe_plan(plan, True).delta, timing_safe_plan(plan, False).delta
    (1e-10, 0.0)
    """
    if check_timing_safe(timing_safe) is False:
        return plan
    return replace(
        plan,
        delta=plan.delta + TIMING_SAFE_DELTA,
        gdp_mu=None,
        zcdp_rho=None,
        composed_of=None,
        timing_delta=TIMING_SAFE_DELTA,
    )


def ball_stand_ins(space, center, radius: float, n: int) -> list:
    """Public records standing in for the data when a timing-safe deadline is calibrated: the
    centre repeated n times, n points on the ball's boundary (a public seed), and half of them at
    each of two opposite boundary points (the Karcher flow's longest path from the centre).

    Examples
    --------
    >>> from geodp.manifolds import Sphere
    >>> [s.shape for s in ball_stand_ins(Sphere(2), np.array([0.0, 0.0, 1.0]), 0.5, 4)]
    [(4, 3), (4, 3), (4, 3)]
    """
    at_center = np.broadcast_to(center, (n, *np.shape(center))).copy()
    directions = space.random_unit_tangent(center, size=n, rng=0)
    sign = np.where(np.arange(n) % 2 == 0, 1.0, -1.0).reshape((n,) + (1,) * (directions.ndim - 1))
    return [
        at_center,
        space.unchecked.exp(center, radius * directions),
        space.unchecked.exp(center, radius * sign * directions[:1]),
    ]


def deadline_key(plan: ReleasePlan, *extra: Hashable) -> tuple:
    """A public key for :func:`timing_deadline`'s cache: the estimator, its publishable report
    (every public setting: space, mechanism, ball, n, ε, …) and ``extra`` (records' shape,
    generator kind).

    Examples
    --------
    >>> plan = ReleasePlan("Demo", 10, 1.0, 0.0, 0.1, 0.1, True, "exact", report="n = 10")
    >>> deadline_key(plan, "secure") == deadline_key(plan, "secure")
    True
    """
    report = plan.report
    facts = report.to_dict() if hasattr(report, "to_dict") else {}
    return (plan.estimator, str(report), repr(sorted(facts.items())), *extra)


def _pad_until(end: float) -> bool:
    """Sleep until ``time.perf_counter() == end`` (the last millisecond by spinning, for a wake-up
    that does not depend on the work before it). Returns False if ``end`` had already passed."""
    remaining = end - time.perf_counter()
    if remaining < 0:
        return False
    if remaining > 0.002:
        time.sleep(remaining - 0.002)
    while time.perf_counter() < end:
        pass
    return True


def _fixed_work(private_part, fallback):
    """Run ``private_part`` with fixed public work; its public fallback if a sampler accepted too few."""
    from geodp.errors import GeodpError

    try:
        with fixed_work_section(TIMING_SAFE_DELTA):
            return private_part()
    except NoAcceptance:
        pass
    refusal = GeodpError(
        "the timing-safe release's sampler accepted none of its fixed public number of proposals "
        f"(probability at most delta_t = {TIMING_SAFE_DELTA!r}): nothing is released, and the budget is charged."
    )
    if fallback is None:
        raise refusal
    try:
        return fallback()  # public and outside the section: a data-independent draw
    except NoAcceptance:
        raise refusal from None


def execute(
    plan: ReleasePlan,
    accountant,
    private_part: Callable[[], Any],
    *,
    stacklevel: int = 3,
    deadline: float | None = None,
    fallback: Callable[[], Any] | None = None,
):
    """The shared skeleton of ``fit``: say the plan's notices, charge, run the private part.

    Parameters
    ----------
    plan : ReleasePlan
    accountant : BudgetAccountant or None
        Charged the plan's release (its (ε, δ) and event) before any record is read; it raises
        :class:`~geodp.errors.BudgetExceededError` (nothing charged) if it cannot pay.
    private_part : callable
        Everything that reads the records, run in a :func:`private_section`.
    stacklevel : int
        Of the notices, so that they point at the caller of ``fit``.
    deadline : float, optional
        Timing-safe mode (:func:`timing_deadline`): the private part runs with fixed public work
        (:func:`geodp.work.fixed_work_section` with δ_t = :data:`TIMING_SAFE_DELTA`) and its wall
        time is padded to ``deadline`` seconds from its start. An overrun sets ``overran`` and
        adds ``"TimingOverrun: …"`` to the withheld messages (curator only; the late return itself
        is observable).
    fallback : callable, optional
        Timing-safe mode: the public, data-independent result returned when a fixed-work
        rejection sampler accepted too few proposals (probability at most δ_t). Without one the
        fit raises :class:`~geodp.errors.GeodpError` with a fixed message then (a public outcome too).

    Returns
    -------
    result
        What ``private_part`` returned.
    withheld : tuple of str
        ``"Category: message"`` of each warning the private part raised, except those of a
        category the plan's notices already said: for the curator diagnostics only.
    overran : bool or None
        Timing-safe mode: whether the private part ran past ``deadline`` (curator only: the
        diagnostics' ``timing_overran``); None without a deadline.

    Examples
    --------
    >>> plan = ReleasePlan("Demo", 10, 1.0, 0.0, 0.1, 0.1, True, "exact", report="")
    >>> execute(plan, None, lambda: 42)
    (42, (), None)
    >>> execute(plan, None, lambda: 42, deadline=0.1)
    (42, (), False)
    """
    announce_and_charge(plan, accountant, stacklevel=stacklevel + 1)
    start = time.perf_counter()
    try:
        with private_section() as caught:
            result = private_part() if deadline is None else _fixed_work(private_part, fallback)
    finally:  # a refusal (invalid records) is padded too: whether fit raises is part of the release
        in_time = True if deadline is None else _pad_until(start + deadline)
    said = tuple(category for category, _ in plan.notices)
    withheld = tuple(f"{w.category.__name__}: {w.message}" for w in caught if not issubclass(w.category, said))
    if not in_time:
        withheld += (f"TimingOverrun: the private part took longer than the public deadline of {deadline:.6g} s",)
    return result, withheld, None if deadline is None else not in_time
