"""Timing-safe mode (timing_safe=...): padding to a public deadline, its calibration on public
stand-ins only, the report, and the audit that measures what the clock reveals."""

import time

import numpy as np
import pytest

from geodp.accountant import BudgetAccountant
from geodp.audit.timing import audit_timing
from geodp.errors import InvalidParameterError
from geodp.manifolds import Hyperbolic, Sphere
from geodp.models import PrivateFrechetMean, PrivateLinearRegression, PrivateMDM
from geodp.models import frechet_mean as frechet_mean_module
from geodp.release import ReleasePlan, execute, timing_deadline

NORTH = np.array([0.0, 0.0, 1.0])


def _plan():
    return ReleasePlan("Demo", 10, 1.0, 0.0, 0.1, 0.1, True, "exact", report="")


@pytest.mark.parametrize("work", [0.0, 0.03])
def test_execute_pads_the_private_part_to_the_deadline_whatever_its_work(work):
    start = time.perf_counter()
    result, withheld, overran = execute(_plan(), None, lambda: time.sleep(work) or "done", deadline=0.08)
    elapsed = time.perf_counter() - start
    assert result == "done" and withheld == () and overran is False
    assert 0.08 <= elapsed < 0.08 + 0.05  # the deadline, not the work (slack for a loaded machine)


def test_an_overrun_is_told_to_the_curator_only():
    result, withheld, overran = execute(_plan(), None, lambda: time.sleep(0.03), deadline=0.001)
    assert overran is True and any(w.startswith("TimingOverrun") for w in withheld)


def test_a_refusal_in_the_private_part_is_padded_too():
    def refuse():
        raise ValueError("invalid records")

    start = time.perf_counter()
    with pytest.raises(ValueError):
        execute(_plan(), None, refuse, deadline=0.05)
    assert time.perf_counter() - start >= 0.05


def test_calibration_runs_on_the_stand_ins_it_is_given_and_takes_the_slowest():
    seen = []

    def run(x):
        seen.append(x)
        time.sleep(x)

    deadline = timing_deadline(True, run, lambda: [0.0, 0.02])
    assert seen == [0.0] * 3 + [0.02] * 3
    assert deadline >= 2 * 0.02 + 0.010


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), "yes", None])
def test_a_bad_timing_safe_is_refused_before_the_charge(bad):
    accountant = BudgetAccountant(epsilon=5.0)
    model = PrivateFrechetMean(Sphere(2), epsilon=1.0, center=NORTH, radius=0.5, accountant=accountant, timing_safe=bad)
    with pytest.raises(InvalidParameterError, match="timing_safe"):
        model.fit(np.tile(NORTH, (10, 1)))
    assert accountant.total_spent == (0.0, 0.0)


def test_the_stand_ins_do_not_depend_on_the_private_records(monkeypatch):
    """The deadline is public: the calibration sees the same records whatever the data."""
    captured = []
    real = frechet_mean_module.timing_deadline

    def spy(timing_safe, run, stand_ins, **kwargs):
        captured.append([np.array(s) for s in stand_ins()])
        return real(timing_safe, run, stand_ins, **kwargs)

    monkeypatch.setattr(frechet_mean_module, "timing_deadline", spy)
    space = Hyperbolic(2)
    origin = space.reference_point()
    for seed in (0, 1):
        X = space.exp(origin, space.random_tangent(origin, size=20, rng=seed))
        PrivateFrechetMean(space, epsilon=1.0, center=origin, radius=1.0, timing_safe=True, random_state=0).fit(X)
    assert len(captured) == 2
    for a, b in zip(*captured):
        np.testing.assert_array_equal(a, b)


def test_estimators_take_a_given_deadline_and_say_so_in_the_report():
    X = Sphere(2).exp(NORTH, 0.1 * Sphere(2).random_tangent(NORTH, size=20, rng=0))
    start = time.perf_counter()
    model = PrivateFrechetMean(Sphere(2), epsilon=1.0, center=NORTH, radius=0.5, timing_safe=0.2).fit(X)
    assert time.perf_counter() - start >= 0.2 and model.timing_deadline_ == 0.2
    assert model.privacy_report_.to_dict()["timing_safe"] is True and "padded to a public deadline" in str(
        model.privacy_report_
    )
    assert PrivateFrechetMean(Sphere(2), epsilon=1.0, center=NORTH, radius=0.5).fit(X).timing_deadline_ is None
    labels = np.repeat([0, 1], 10)
    start = time.perf_counter()
    PrivateMDM(Sphere(2), epsilon=1.0, center=NORTH, radius=0.5, timing_safe=0.1).fit(X, labels)
    assert time.perf_counter() - start >= 0.2  # one padded release per class
    rng = np.random.default_rng(0)
    Xl = rng.uniform(0, 1, (30, 2))  # n·ε within the exact race's proven range
    linear = PrivateLinearRegression(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 3), timing_safe=True)
    linear.fit(Xl, Xl.sum(axis=1))
    assert linear.timing_deadline_ >= 0.010 and linear.privacy_report_.to_dict()["timing_safe"] is True


def test_a_calibrated_deadline_is_kept_for_the_same_public_settings():
    calls = []
    first = timing_deadline(True, calls.append, lambda: [1], key=("test", 1))
    assert timing_deadline(True, calls.append, lambda: [1], key=("test", 1)) == first and len(calls) == 3
    timing_deadline(True, calls.append, lambda: [1], key=("test", 2))
    assert len(calls) == 6


def test_calibrating_needs_public_bounds():
    with pytest.raises(InvalidParameterError, match="bounds"):
        PrivateLinearRegression(epsilon=1.0, timing_safe=True).fit(np.zeros((10, 1)), np.zeros(10))


def test_the_timing_audit_certifies_from_interleaved_halves():
    audit = audit_timing("s2-kng", runs=20)
    record = audit.to_dict()
    assert record["runs"] == 20 and record["case"] == "s2-kng" and not record["timing_safe"]
    assert record["side"].startswith(("slower", "faster")) and len(record["median_times"]) == 2
    with pytest.raises(InvalidParameterError, match="case"):
        audit_timing("h3-laplace")
    with pytest.raises(InvalidParameterError, match="at least 20"):
        audit_timing(runs=10)


def test_in_timing_safe_mode_any_certified_leak_is_a_violation():
    """The mode promises the clock reveals nothing (a leak adds to ε); without it the verdict
    compares the clock's bound with the claimed ε."""
    from dataclasses import replace

    audit = audit_timing("s2-kng", runs=20)
    small = replace(audit, epsilon_lower_bound=0.2)
    assert not small.violated and replace(small, epsilon_lower_bound=1.2).violated
    safe = replace(small, timing_safe=True, deadline=0.5)
    assert safe.violated and "timing-safe mode hides" in str(safe)
    assert not replace(safe, epsilon_lower_bound=-0.3).violated


def test_the_timing_audit_counts_the_private_parts_that_overran_their_deadline():
    """A deadline shorter than the fixed work: every private part overruns (from the curator
    diagnostics, not from the fit's whole time, which also holds the public work around it)."""
    audit = audit_timing("s2-kng", runs=20, timing_safe=0.001)
    assert audit.overruns == (20, 20) and audit.to_dict()["overruns"] == [20, 20]
    assert "overruns" in str(audit) and audit_timing("s2-kng", runs=20).overruns == (0, 0)
