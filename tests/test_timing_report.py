"""Timing-safe mode's public deadline in the publishable report (and geodp release's guarantee
JSON), and its overrun as a curator-only flag, for every estimator."""

import json

import jsonschema
import numpy as np
import pytest

from geodp.audit import timing as timing_audit
from geodp.cli import guarantee_schema, main
from geodp.domain import private_ball
from geodp.manifolds import Euclidean, Sphere
from geodp.models import (
    PrivateFrechetMean,
    PrivateGeodesicRegression,
    PrivateGeometricMedian,
    PrivateLinearRegression,
    PrivateMDM,
    PrivatePrincipalGeodesics,
)
from geodp.models.report import CuratorDiagnostics

E2, ORIGIN = Euclidean(2), np.zeros(2)
XE = np.random.default_rng(0).uniform(-0.3, 0.3, (100, 2))
NORTH = np.array([0.0, 0.0, 1.0])

# Each estimator, fitted with timing_safe=t: (its report, its curator-only overrun flag).
FITS = {
    "frechet-mean": lambda t: _pair(
        PrivateFrechetMean(E2, epsilon=1.0, center=ORIGIN, radius=0.5, timing_safe=t).fit(XE)
    ),
    "geodesic-regression": lambda t: _pair(
        PrivateGeodesicRegression(E2, epsilon=1.0, center=ORIGIN, radius=0.5, x_bounds=(0, 1), timing_safe=t).fit(
            np.linspace(0, 1, 30),
            XE[:30],  # n·ε within the exact KNG race's proven range
        )
    ),
    "linear-regression": lambda t: _pair(
        PrivateLinearRegression(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 3), timing_safe=t).fit(
            np.abs(XE[:30]), np.abs(XE[:30]).sum(axis=1)
        )
    ),
    "principal-geodesics": lambda t: _pair(
        PrivatePrincipalGeodesics(E2, 1, epsilon=1.0, delta=1e-5, center=ORIGIN, radius=0.5, timing_safe=t).fit(XE)
    ),
    "geometric-median": lambda t: _median(
        PrivateGeometricMedian(E2, epsilon=1.0, delta=1e-5, center=ORIGIN, radius=0.5, timing_safe=t).fit(XE)
    ),
    "private-ball": lambda t: _pair(private_ball(E2, XE, epsilon=2.0, center=ORIGIN, radius=0.5, timing_safe=t)),
}


def _pair(fitted):
    return fitted.privacy_report_, fitted.curator_diagnostics_.timing_overran


def _median(fitted):
    return fitted.privacy_report_, fitted.timing_overran_


@pytest.mark.parametrize("name", FITS)
def test_every_estimator_reports_its_given_deadline(name):
    report, _ = FITS[name](0.02)
    assert report.to_dict()["timing_deadline"] == 0.02
    assert "timing-safe deadline: the private part padded to 0.02 s (given)" in report
    report, overran = FITS[name](False)
    assert "timing_deadline" not in report.to_dict() and "timing-safe deadline" not in report and overran is None


@pytest.mark.parametrize("name", FITS)
def test_an_overrun_is_a_curator_flag_and_never_in_the_report(name):
    report, overran = FITS[name](1e-6)  # shorter than any fit's private part
    assert overran is True
    facts = report.to_dict()
    assert not any("overr" in key for key in facts)
    for text in (str(report), json.dumps(facts, default=str)):
        assert "overran" not in text.lower() and "TimingOverrun" not in text


def test_a_private_part_within_its_deadline_did_not_overrun_and_the_diagnostics_say_both():
    model = PrivateFrechetMean(E2, epsilon=1.0, center=ORIGIN, radius=0.5, timing_safe=0.5).fit(XE[:20])
    diagnostics = model.curator_diagnostics_
    assert diagnostics.timing_overran is False and diagnostics.to_dict()["timing_overran"] is False
    assert "finished within its public deadline" in str(diagnostics)
    model.set_params(timing_safe=1e-6).fit(XE[:20])
    assert "OVERRAN its public deadline" in str(model.curator_diagnostics_)


def test_mdm_reports_each_class_deadline_and_flags_each_overrun():
    labels = np.repeat([0, 1], 50)
    model = PrivateMDM(E2, epsilon=1.0, center=ORIGIN, radius=0.5, timing_safe=0.02).fit(XE, labels)
    per_class = model.privacy_report_.to_dict()["per_class"]
    assert [entry["timing_deadline"] for entry in per_class] == [0.02, 0.02]
    assert "padded to 0.02 s (given)" in model.privacy_report_
    assert all(isinstance(d.timing_overran, bool) for d in model.curator_diagnostics_.per_class)  # set; its value: load
    model.set_params(timing_safe=1e-6).fit(XE, labels)
    assert all(d.timing_overran is True for d in model.curator_diagnostics_.per_class)


def test_mdm_calibrates_every_class_deadline_before_any_class_is_released(monkeypatch):
    """A class's calibrated deadline must not be timed after another class's private part (which
    could leave data-dependent state behind): all calibrations come first."""
    from geodp import release
    from geodp.models import frechet_mean as module

    events = []
    calibrate, run = module.timing_deadline, module.execute

    def logged_deadline(*args, **kwargs):
        events.append("calibrate" if kwargs.get("key") not in release._DEADLINES else "cached")
        return calibrate(*args, **kwargs)

    def logged_execute(*args, **kwargs):
        events.append("release")
        return run(*args, **kwargs)

    monkeypatch.setattr(release, "_DEADLINES", {})
    monkeypatch.setattr(module, "timing_deadline", logged_deadline)
    monkeypatch.setattr(module, "execute", logged_execute)
    labels = np.repeat([0, 1, 2], [50, 30, 20])  # unequal counts: no shared key
    PrivateMDM(E2, epsilon=1.0, center=ORIGIN, radius=0.5, timing_safe=True, random_state=0).fit(XE, labels)
    assert events.count("release") == 3
    assert "release" not in events[: events.index("release")] and events.index("release") >= 3
    assert "calibrate" not in events[events.index("release") :]


def test_a_calibrated_deadline_is_reported_and_is_the_same_on_neighbouring_datasets():
    """Calibrated on public stand-ins before the records are read: the report (deadline included)
    is the same whichever record is replaced."""
    space = Sphere(2)
    near = space.exp(NORTH, 0.1 * space.random_tangent(NORTH, size=20, rng=1))
    far = near.copy()
    far[0] = space.exp(NORTH, 0.5 * space.random_unit_tangent(NORTH, rng=2))  # one record to the boundary
    reports = []
    for X in (near, far):
        model = PrivateFrechetMean(space, epsilon=1.0, center=NORTH, radius=0.5, timing_safe=True, random_state=0)
        model.fit(X)
        assert model.privacy_report_.to_dict()["timing_deadline"] == model.timing_deadline_ >= 0.010
        reports.append(model.privacy_report_)
    assert "(calibrated on public stand-in records before the data were read)" in reports[0]
    assert str(reports[0]) == str(reports[1]) and reports[0].to_dict() == reports[1].to_dict()


class _Fitted:
    def __init__(self, overran, warnings=()):
        self.curator_diagnostics_ = CuratorDiagnostics(0, 0, None, None, None, warnings, timing_overran=overran)


def test_the_timing_audit_counts_overruns_from_the_flag_not_from_warning_texts():
    assert timing_audit._overran(_Fitted(True)) is True
    # a withheld warning of the data's own that happens to start with the old prefix is not an overrun
    assert timing_audit._overran(_Fitted(False, ("TimingOverrun: a user warning",))) is False


def _cli_args(tmp_path, *extra):
    np.save(tmp_path / "points.npy", XE)
    return [
        "release", str(tmp_path / "points.npy"), "--space", "euclidean:2", "--center", "origin", "--radius", "0.5",
        "--epsilon", "1", "--output", str(tmp_path / "m.npy"), "--guarantee", str(tmp_path / "m.json"), *extra,
    ]  # fmt: skip


@pytest.mark.parametrize("value, calibrated", [("0.05", False), (None, True)], ids=["seconds", "bare"])
def test_the_cli_takes_an_optional_deadline_and_publishes_it(value, calibrated, tmp_path, capsys):
    option = ["--timing-safe"] + ([] if value is None else [value])
    assert main(_cli_args(tmp_path, *option, "--seed", "0")) == 0
    out = capsys.readouterr().out
    record = json.loads((tmp_path / "m.json").read_text())
    jsonschema.validate(record, guarantee_schema())
    deadline = record["report"]["timing_deadline"]
    if calibrated:
        assert deadline >= 0.010 and "calibrated on public stand-in records" in out
    else:
        assert deadline == 0.05 and "padded to 0.05 s (given)" in out
    assert record["report"]["timing_safe"] is True


@pytest.mark.parametrize("bad", ["0", "-1", "inf", "nan", "soon"])
def test_the_cli_refuses_a_bad_deadline_in_one_line(bad, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(_cli_args(tmp_path, "--timing-safe", bad))
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert "argument --timing-safe" in err and "seconds" in err and repr(bad) in err
    assert not (tmp_path / "m.npy").exists() and not (tmp_path / "m.json").exists()


def test_the_cli_says_how_to_put_the_bare_flag_when_it_swallows_the_input(tmp_path, capsys):
    args = _cli_args(tmp_path)
    with pytest.raises(SystemExit):
        main(["release", "--timing-safe", *args[1:]])
    assert "put the bare --timing-safe after INPUT" in capsys.readouterr().err
