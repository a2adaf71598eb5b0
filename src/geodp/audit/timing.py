"""A certified lower bound on ε from wall time alone (``geodp audit timing``; docs/audit.md).

Fit the same estimator, interleaved, on two neighbouring datasets whose fits are known to take
different times, and measure each ``fit``'s wall time. Round 1 (the first half of the runs)
picks the threshold ``t`` and side (``time > t`` or ``time ≤ t``) whose Clopper–Pearson bound on
``ln(P0[event] / P1[event])`` is largest; round 2 (the second half, fresh runs) certifies that one
event, as :func:`~geodp.audit.epsilon.audit_epsilon` does for released values. A certified bound
above the claimed ε means the clock leaks more than the guarantee allows.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass

import numpy as np

from geodp.audit.epsilon import _check_confidence, clopper_pearson_epsilon
from geodp.errors import InvalidParameterError
from geodp.manifolds import Hyperbolic, Sphere
from geodp.models import PrivateFrechetMean
from geodp.release import check_timing_safe
from geodp.validation import check_positive_integer

__all__ = ["CASES", "TimingAudit", "audit_timing"]


def _h2_laplace(epsilon):
    """H², 50 records near the origin inside the public ball of radius 10; the neighbour moves
    one record to the boundary (the Karcher flow then takes more iterations)."""
    space = Hyperbolic(2)
    origin = space.reference_point()
    near = space.exp(origin, 0.5 * space.random_tangent(origin, size=50, rng=1))
    far = near.copy()
    far[0] = space.exp(origin, 10.0 * space.random_unit_tangent(origin, rng=2))
    return space, origin, 10.0, "laplace", near, far


def _s2_kng(epsilon):
    """KNG on S² (r = 0.7): two records on the boundary, opposite each other vs together."""
    space = Sphere(2)
    north = np.array([0.0, 0.0, 1.0])
    inner = space.exp(north, 0.2 * space.random_tangent(north, size=48, rng=3))
    east = space.exp(north, np.array([0.7, 0.0, 0.0]))
    west = space.exp(north, np.array([-0.7, 0.0, 0.0]))
    opposite = np.concatenate([inner, [east, west]])
    together = np.concatenate([inner, [east, east]])
    return space, north, 0.7, "kng", opposite, together


CASES = {"h2-laplace": _h2_laplace, "s2-kng": _s2_kng}


@dataclass(frozen=True)
class TimingAudit:
    """The result of :func:`audit_timing`.

    Attributes
    ----------
    case : str
    epsilon : float
        The claimed ε of each fit.
    timing_safe : bool
    deadline : float or None
        The public deadline of timing-safe fits, in seconds.
    runs : int
        Fits per dataset (half select the event, half certify it).
    confidence : float
    threshold : float
        Wall-time threshold of the certified event, in seconds.
    side : str
        ``"slower"`` (time > threshold) or ``"faster"``, and which dataset it favours.
    epsilon_lower_bound : float
        Certified lower bound on the ε the clock reveals (``-inf``: nothing certified).
    median_times : tuple of float
        Median wall time of the fits on each dataset, in seconds.
    load : float
        The 1-minute load average when the audit ended.
    """

    case: str
    epsilon: float
    timing_safe: bool
    deadline: float | None
    runs: int
    confidence: float
    threshold: float
    side: str
    epsilon_lower_bound: float
    median_times: tuple[float, float]
    load: float
    overruns: tuple[int, int] = (0, 0)

    @property
    def violated(self) -> bool:
        """Whether the clock reveals more than is claimed: any certified bound above 0 in
        timing-safe mode (which promises that the clock reveals nothing; a leak adds to the
        release's ε), a bound above the claimed ε without it."""
        return self.epsilon_lower_bound > (0.0 if self.timing_safe else self.epsilon)

    def to_dict(self) -> dict:
        """Plain-dict view (JSON-friendly; ``-inf`` as None)."""
        record = asdict(self)
        record["epsilon_lower_bound"] = None if not np.isfinite(self.epsilon_lower_bound) else self.epsilon_lower_bound
        record["median_times"] = list(self.median_times)
        record["overruns"] = list(self.overruns)
        record["violated"] = self.violated
        return record

    def _verdict(self) -> str:
        if not self.violated:
            if self.epsilon_lower_bound > 0:
                return "ok"
            return f"ok (no evidence of a difference over {self.runs} runs per side)"
        return (
            "VIOLATED: the clock reveals what timing-safe mode hides"
            if self.timing_safe
            else "VIOLATED: the clock reveals more than epsilon"
        )

    def __str__(self) -> str:
        mode = f"timing-safe, deadline {self.deadline:.4g} s" if self.timing_safe else "not timing-safe"
        bound = (
            f"{self.epsilon_lower_bound:.3f}"
            if self.epsilon_lower_bound > 0
            else "none (the times give no evidence that the datasets differ)"
        )
        return "\n".join(
            [
                f"geodp timing audit: {self.case} ({mode})",
                f"claimed epsilon      : {self.epsilon!r}",
                f"runs per dataset     : {self.runs} (interleaved; half select the event, half certify it)",
                f"median fit time      : {1e3 * self.median_times[0]:.2f} ms vs {1e3 * self.median_times[1]:.2f} ms",
                *(
                    [f"overruns             : {self.overruns[0]} vs {self.overruns[1]} (past the deadline)"]
                    if self.timing_safe
                    else []
                ),
                f"certified event      : fit {self.side} than {1e3 * self.threshold:.3f} ms",
                f"epsilon lower bound  : {bound} at confidence {self.confidence!r}",
                f"verdict              : {self._verdict()}",
                f"load average (1 min) : {self.load:.2f}",
            ]
        )


def _best_event(first, second, alpha):
    """``(threshold, side, favoured)`` maximising the Clopper–Pearson bound on round-1 times."""
    n = len(first)
    thresholds = np.unique(np.concatenate([first, second]))
    slower = [np.count_nonzero(x[:, None] > thresholds, axis=0) for x in (first, second)]
    candidates = []
    for side, counts in (("slower", slower), ("faster", [n - c for c in slower])):
        for favoured in (0, 1):
            bounds = clopper_pearson_epsilon(counts[favoured], counts[1 - favoured], n, 0.0, alpha)
            best = int(np.argmax(bounds))
            candidates.append((float(bounds[best]), float(thresholds[best]), side, favoured))
    return max(candidates, key=lambda c: c[0])[1:]


def _overran(estimator) -> bool:
    """Whether the last fit's private part ran past its deadline (its curator diagnostics'
    ``timing_overran``; the fit's whole time also holds the public work before and after the
    padded part, so it cannot be compared with the deadline)."""
    return bool(estimator.curator_diagnostics_.timing_overran)


def _count(times, threshold, side):
    return int(np.count_nonzero(times > threshold if side == "slower" else times <= threshold))


def audit_timing(case="h2-laplace", *, runs=200, epsilon=1.0, timing_safe=False, confidence=0.95, progress=False):
    """Certify a lower bound on the ε that the wall time of ``fit`` reveals.

    Parameters
    ----------
    case : {"h2-laplace", "s2-kng"}
        The neighbouring pair (:data:`CASES`): far/near records on H² (Laplace, r = 10, n = 50),
        or boundary records opposite vs together for KNG on S² (r = 0.7, n = 50).
    runs : int, default 200
        Fits per dataset, at least 20 (interleaved: the order alternates every round). The
        garbage collector runs as in real fits (its collections follow the allocations, which
        may follow the data).
    epsilon : float, default 1.0
    timing_safe : bool or float, default False
        Fit in timing-safe mode. With True the deadline is calibrated once on public stand-ins (a
        fit with ``timing_safe=True``) and then given to every audited fit; a number is the
        deadline in seconds (one shorter than the fits audits the fixed work alone: every fit
        overruns it).
    confidence : float, default 0.95
    progress : bool, default False
        Print a dot every 10 rounds.

    Returns
    -------
    TimingAudit

    Examples
    --------
    >>> audit = audit_timing("h2-laplace", runs=20)
    >>> audit.runs, audit.timing_safe, audit.deadline is None
    (20, False, True)
    """
    if case not in CASES:
        raise InvalidParameterError(f"case must be one of {tuple(CASES)}, got {case!r}.")
    runs = check_positive_integer(runs, "runs")
    if runs < 20:
        raise InvalidParameterError(f"runs must be at least 20 (half select, half certify), got {runs}.")
    alpha = (1.0 - _check_confidence(confidence)) / 2.0
    space, center, radius, mechanism, first, second = CASES[case](epsilon)

    def model(timing):
        return PrivateFrechetMean(
            space, epsilon=epsilon, center=center, radius=radius, mechanism=mechanism, timing_safe=timing
        )

    timing_safe = check_timing_safe(timing_safe)
    deadline = None if timing_safe is False else timing_safe
    if timing_safe is True:
        deadline = model(True).fit(first).timing_deadline_  # public: from stand-ins only
    estimator = model(deadline if timing_safe else False)
    estimator.fit(first), estimator.fit(second)  # warm up both paths
    times = np.empty((2, runs))
    overruns = [0, 0]
    for i in range(runs):
        for which in (0, 1) if i % 2 == 0 else (1, 0):
            start = time.perf_counter()
            estimator.fit(first if which == 0 else second)
            times[which, i] = time.perf_counter() - start
            overruns[which] += _overran(estimator)
        if progress and i % 10 == 9:
            print(".", end="", flush=True)
    half = runs // 2
    threshold, side, favoured = _best_event(times[0, :half], times[1, :half], alpha)
    counts = (_count(times[0, half:], threshold, side), _count(times[1, half:], threshold, side))
    m = runs - half
    bound = float(clopper_pearson_epsilon(counts[favoured], counts[1 - favoured], m, 0.0, alpha))
    return TimingAudit(
        case=case,
        epsilon=float(epsilon),
        timing_safe=timing_safe is not False,
        deadline=deadline,
        runs=runs,
        confidence=float(confidence),
        threshold=threshold,
        side=f"{side} (favours the {'first' if favoured == 0 else 'second'} dataset)",
        epsilon_lower_bound=bound,
        median_times=(float(np.median(times[0])), float(np.median(times[1]))),
        overruns=tuple(overruns),
        load=float(os.getloadavg()[0]),
    )
