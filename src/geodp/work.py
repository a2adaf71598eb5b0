"""Fixed public work: the switch a timing-safe release turns on, and the counters that check it.

Under ``timing_safe`` (docs/guide.md, SECURITY.md) the work of a release must be a function of
public inputs only. :func:`geodp.release.execute` runs a timing-safe private part inside
:func:`fixed_work_section`; the shared loops read :func:`fixed_work` and then do their public
maximum instead of stopping early: :func:`~geodp.distributions.base.rejection_sample` draws a
fixed number of proposals (:func:`fixed_proposals`) and raises :class:`NoAcceptance` when too few
were accepted (the estimator then releases a public fallback: docs/math.md, "Fixed work"), and the
Karcher flow runs its whole iteration budget. The switch is a context variable, so it reaches
every sampler of the release without a parameter on each signature, and it ends with the
section (threads and other releases do not see it).

:func:`counting` and :func:`count` tally the work (proposals, iterations, records read) for the
counted-work tests: counters, not clocks.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["FixedWork", "NoAcceptance", "count", "counting", "fixed_proposals", "fixed_work", "fixed_work_section"]


@dataclass
class FixedWork:
    """The state of a fixed-work section: its public failure budget ``delta`` (δ_t) and the
    rejection loops run so far. The k-th loop (k = 1, 2, …) may fail with probability at most
    ``delta / (k (k + 1))``, so that all of them together fail with probability below ``delta``
    whatever their number (the proposals needed grow only like ``log k``)."""

    delta: float
    loops: int = 0

    def next_delta(self) -> float:
        """The failure probability allowed to the next rejection loop."""
        self.loops += 1
        return self.delta / (self.loops * (self.loops + 1))


class NoAcceptance(Exception):  # noqa: N818 (control flow, not an error a user sees)
    """A fixed-work rejection loop accepted fewer proposals than it needed (probability below
    its share of δ_t): the release falls back to a public draw."""


_FIXED: ContextVar[FixedWork | None] = ContextVar("geodp_fixed_work", default=None)
_COUNTS: ContextVar[Counter | None] = ContextVar("geodp_work_counts", default=None)


def fixed_work() -> FixedWork | None:
    """The current fixed-work section's state, or None outside one (the default: fast paths).

    Examples
    --------
    >>> fixed_work() is None
    True
    >>> with fixed_work_section(1e-10):
    ...     fixed_work().delta
    1e-10
    """
    return _FIXED.get()


@contextmanager
def fixed_work_section(delta: float) -> Iterator[FixedWork]:
    """Run the body with fixed public work, the rejection loops failing with total probability
    at most ``delta``."""
    token = _FIXED.set(FixedWork(float(delta)))
    try:
        yield _FIXED.get()
    finally:
        _FIXED.reset(token)


@contextmanager
def counting() -> Iterator[Counter]:
    """Tally the work :func:`count` reports in the body, into the yielded :class:`~collections.Counter`.

    Examples
    --------
    >>> with counting() as work:
    ...     count("proposals", 16)
    ...     count("proposals", 16)
    >>> work["proposals"]
    32
    """
    counts: Counter = Counter()
    token = _COUNTS.set(counts)
    try:
        yield counts
    finally:
        _COUNTS.reset(token)


def count(kind: str, amount: int = 1) -> None:
    """Add ``amount`` to the tally of ``kind`` when a :func:`counting` section is open (else
    nothing: one context-variable read)."""
    counts = _COUNTS.get()
    if counts is not None:
        counts[kind] += int(amount)


def fixed_proposals(rate: float, need: int, delta: float) -> int:
    """The smallest number N of proposals with ``P(Binomial(N, rate) < need) ≤ delta``: a
    rejection loop whose acceptance probability is at least ``rate`` (a proven, public bound)
    and that makes N proposals accepts ``need`` of them except with probability ``delta``.

    Examples
    --------
    >>> fixed_proposals(0.25, 1, 1e-10)            # ⌈ln 1e-10 / ln 0.75⌉
    81
    >>> fixed_proposals(1.0, 5, 1e-10), fixed_proposals(0.5, 0, 1e-10)
    (5, 0)
    """
    from scipy.stats import binom

    if need <= 0:
        return 0
    if rate >= 1.0:
        return need
    if need == 1:
        return max(1, math.ceil(math.log(delta) / math.log1p(-rate)))
    low, high = need, max(need, math.ceil((need + math.log(1.0 / delta)) / rate))
    while binom.cdf(need - 1, high, rate) > delta:
        low, high = high, 2 * high
    while low < high:  # binom.cdf(need - 1, N, rate) decreases in N
        middle = (low + high) // 2
        if binom.cdf(need - 1, middle, rate) > delta:
            low = middle + 1
        else:
            high = middle
    return high
