"""PrivatePrincipalGeodesics in the timing-safe mode and with on_invalid: the counted work
(records read, Karcher iterations, sampler proposals) is the same on adversarial neighbours with
the mode and differs without it; δ_t is in the report and in the one composed charge; the
footpoint's fallback; the invalid-record refusal has one message whatever the fault."""

import dp_accounting
import numpy as np
import pytest

from geodp.accountant import BudgetAccountant
from geodp.audit.timing import CASES
from geodp.composition import EpsilonDeltaDpEvent
from geodp.errors import InvalidParameterError, NotOnManifoldError
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.mechanisms import LaplaceMechanism
from geodp.models import PrivatePrincipalGeodesics
from geodp.release import TIMING_SAFE_DELTA
from geodp.work import NoAcceptance, counting
from test_fixed_work import _boundary_vs_centre, _opposite_vs_together

NORTH = np.array([0.0, 0.0, 1.0])
DEADLINE = 1e-3  # a given deadline: no calibration (the counts, not the clock, are tested here)


def _outlier_vs_inside(space, center, radius, n, seed):
    """Neighbours: one record far outside the ball (clipped) vs one inside."""
    inner, _ = _boundary_vs_centre(space, center, radius, n, seed)
    far = inner.copy()
    far[0] = space.exp(center, 5.0 * radius * space.random_unit_tangent(center, rng=seed + 2))
    return inner, far


def _work(model, X):
    with counting() as work:
        model.fit(X)
    return dict(work)


def _work_and_randomness(model, X):
    """The counted work and the seeded generator's final state: equal states from one seed mean
    the same number of random words drawn (PCG64 advances one state per word)."""
    rng = np.random.default_rng(11)
    work = _work(model.set_params(random_state=rng), X)
    return work, rng.bit_generator.state["state"]["state"]


CASES_PGA = [
    (Sphere(2), NORTH, 0.5, "laplace"),
    (Sphere(2), NORTH, 0.5, "kng"),
    (Sphere(2), NORTH, 0.5, "riemannian-gaussian"),
    (Sphere(2), NORTH, 0.5, "gradient"),
    (Hyperbolic(2), Hyperbolic(2).reference_point(), 0.5, "laplace"),
    (SPD(2), np.eye(2), 0.5, "laplace"),
    (KendallShape(4), KendallShape(4).reference_point(), 0.2, "laplace"),
    (Euclidean(3), np.zeros(3), 1.0, "laplace"),
]


@pytest.mark.parametrize(("space", "center", "radius", "mechanism"), CASES_PGA, ids=lambda c: str(c))
@pytest.mark.parametrize("pair", [_boundary_vs_centre, _opposite_vs_together, _outlier_vs_inside])
def test_pga_work_is_the_same_on_neighbours(space, center, radius, mechanism, pair):
    n = 30
    model = PrivatePrincipalGeodesics(
        space, 2, epsilon=1.0, delta=1e-5, center=center, radius=radius, mean_mechanism=mechanism,
        timing_safe=DEADLINE,
    )  # fmt: skip
    first, second = pair(space, center, radius, n, seed=3)
    seeded = [_work_and_randomness(model, X) for X in (first, second)]
    assert seeded[0] == seeded[1]
    work = [_work(model.set_params(random_state=None), X) for X in (first, second)]  # the secure default
    assert work[0] == work[1]
    # every record read by the mean's passes, then validated and clipped, then by the covariance pass
    assert work[0]["records"] >= 3 * n
    if not space.is_flat and mechanism != "gradient":  # the gradient mean descends: no flow, no sampler
        assert work[0]["iterations"] > 0 and work[0]["proposals"] > 0


def test_pga_work_with_a_public_footpoint_is_the_same_on_neighbours():
    space = Sphere(2)
    near, far = _outlier_vs_inside(space, NORTH, 0.5, 30, seed=5)
    model = PrivatePrincipalGeodesics(
        space, 1, epsilon=1.0, delta=1e-5, center=NORTH, radius=0.5, footpoint=NORTH, timing_safe=DEADLINE
    )
    assert _work(model, near) == _work(model, far) == {"records": 60, "clip": 30}  # validated, clipped, read
    default = model.set_params(timing_safe=False)  # the control: the default clips the records outside only
    assert (_work(default, near)["clip"], _work(default, far)["clip"]) == (0, 1)


def test_without_the_mode_the_pga_work_differs_on_those_neighbours():
    """The control: the timing audit's H² pair (one record moved to the boundary of the ball of
    radius 10) takes more Karcher iterations by default; the mode runs the public budget on both."""
    space, origin, radius, _, near, far = CASES["h2-laplace"](1.0)
    model = PrivatePrincipalGeodesics(space, 1, epsilon=1.0, delta=1e-5, center=origin, radius=radius, random_state=0)
    assert _work(model, near)["iterations"] < _work(model, far)["iterations"]
    small = model.set_params(radius=1.0, timing_safe=DEADLINE)
    near_small, far_small = near.copy(), near.copy()
    far_small[0] = space.exp(origin, 1.0 * space.random_unit_tangent(origin, rng=2))
    assert _work(small, near_small) == _work(small, far_small)


def test_delta_t_is_in_the_report_the_headline_and_the_one_composed_charge():
    space = Sphere(2)
    X, _ = _boundary_vs_centre(space, NORTH, 0.5, 40, seed=1)
    accountant = BudgetAccountant(epsilon=2.0, delta=1e-4)
    model = PrivatePrincipalGeodesics(
        space, 1, epsilon=1.0, delta=1e-5, center=NORTH, radius=0.5, accountant=accountant, timing_safe=DEADLINE
    ).fit(X)
    facts = model.privacy_report_.to_dict()
    assert facts["timing_safe"] is True and facts["timing_delta"] == TIMING_SAFE_DELTA
    assert facts["delta"] == pytest.approx(1e-5 + TIMING_SAFE_DELTA, rel=1e-12) and facts["delta"] > 1e-5
    assert f"in total (ε, δ)-DP with fixed work: epsilon = 1.0, delta = {facts['delta']!r}" in model.privacy_report_
    [charge] = accountant.charges
    assert (charge.epsilon, charge.delta) == (1.0, facts["delta"])
    mean_event, cov_event = charge.event.events  # the mean carries δ_t; the covariance stays Gaussian
    assert mean_event == EpsilonDeltaDpEvent(0.5, TIMING_SAFE_DELTA)
    assert isinstance(cov_event, dp_accounting.GaussianDpEvent)
    assert model.timing_deadline_ == DEADLINE
    assert str(model.curator_diagnostics_).startswith("CURATOR-ONLY")


def test_a_public_footpoint_runs_no_rejection_loop_so_no_delta_t():
    space = Sphere(2)
    X, _ = _boundary_vs_centre(space, NORTH, 0.5, 40, seed=1)
    accountant = BudgetAccountant(epsilon=2.0, delta=1e-4, composition="pld")
    model = PrivatePrincipalGeodesics(
        space, 1, epsilon=1.0, delta=1e-5, center=NORTH, radius=0.5, footpoint=NORTH, accountant=accountant,
        timing_safe=DEADLINE,
    ).fit(X)  # fmt: skip
    facts = model.privacy_report_.to_dict()
    assert facts["timing_delta"] == 0.0 and facts["delta"] == 1e-5 and facts["gdp_mu"] is not None
    assert "no rejection loop runs" in model.privacy_report_
    [charge] = accountant.charges
    assert [type(e).__name__ for e in charge.event.events] == ["GaussianDpEvent"]


def test_the_footpoints_fallback_is_the_public_centre_and_the_covariance_is_still_released(monkeypatch):
    space = Hyperbolic(2)
    origin = space.reference_point()
    X, _ = _boundary_vs_centre(space, origin, 1.0, 30, seed=3)
    accountant = BudgetAccountant(epsilon=5.0, delta=1e-4)

    def no_acceptance(*args, **kwargs):
        raise NoAcceptance

    monkeypatch.setattr(LaplaceMechanism, "randomise", no_acceptance)
    model = PrivatePrincipalGeodesics(
        space, 1, epsilon=1.0, delta=1e-5, center=origin, radius=1.0, accountant=accountant, timing_safe=DEADLINE
    ).fit(X)
    np.testing.assert_array_equal(model.mean_, origin)
    assert model.curator_diagnostics_.mean_fell_back and model.curator_diagnostics_.mean is None
    assert np.all(np.isfinite(model.covariance_)) and np.any(model.covariance_ != 0)
    assert accountant.total_spent == (1.0, model.privacy_report_.to_dict()["delta"])


INVALID = {
    "nan": np.array([np.nan, 0.0, 1.0]),
    "inf": np.array([np.inf, 0.0, 0.0]),
    "off the sphere": np.array([0.0, 0.0, 2.0]),
    "zero": np.zeros(3),
}


@pytest.mark.parametrize("footpoint", [None, NORTH], ids=["private-mean", "public-footpoint"])
@pytest.mark.parametrize("timing_safe", [False, DEADLINE], ids=["default", "timing-safe"])
def test_an_invalid_record_is_refused_after_the_charge_with_one_message_whatever_its_fault(footpoint, timing_safe):
    space = Sphere(2)
    X, _ = _boundary_vs_centre(space, NORTH, 0.5, 20, seed=2)
    messages = set()
    for bad in INVALID.values():
        accountant = BudgetAccountant(epsilon=5.0, delta=1e-4)
        model = PrivatePrincipalGeodesics(
            space, 1, epsilon=1.0, delta=1e-5, center=NORTH, radius=0.5, footpoint=footpoint, accountant=accountant,
            timing_safe=timing_safe,
        )  # fmt: skip
        Y = X.copy()
        Y[7] = bad
        with pytest.raises(NotOnManifoldError) as caught:
            model.fit(Y)
        messages.add(str(caught.value))
        assert accountant.total_spent[0] == 1.0  # charged: whether it raises depends on the data
    assert len(messages) == 1
    assert "0." not in messages.pop()  # no number from the data (index, count)


def test_on_invalid_center_releases_what_the_records_replaced_by_the_centre_give():
    """The replacement is the public per-record map: same seed, same release as on the data with
    the invalid records replaced by the centre by hand."""
    space = Sphere(2)
    X, _ = _boundary_vs_centre(space, NORTH, 0.5, 30, seed=4)
    bad, replaced = X.copy(), X.copy()
    for i, record in zip((3, 11, 20), INVALID.values()):
        bad[i], replaced[i] = record, NORTH
    settings = dict(epsilon=1.0, delta=1e-5, center=NORTH, radius=0.5, on_invalid="center")
    model = PrivatePrincipalGeodesics(space, 1, random_state=7, **settings).fit(bad)
    reference = PrivatePrincipalGeodesics(space, 1, random_state=7, **settings).fit(replaced)
    np.testing.assert_array_equal(model.mean_, reference.mean_)
    np.testing.assert_array_equal(model.covariance_, reference.covariance_)
    assert model.curator_diagnostics_.n_invalid == 3 and model.curator_diagnostics_.mean.n_invalid == 3
    assert reference.curator_diagnostics_.n_invalid == 0
    assert "invalid records replaced by the centre" in model.privacy_report_


@pytest.mark.parametrize(("name", "value"), [("timing_safe", -1.0), ("timing_safe", "yes"), ("on_invalid", "drop")])
def test_bad_mode_settings_are_refused_before_the_charge(name, value):
    accountant = BudgetAccountant(epsilon=5.0, delta=1e-4)
    model = PrivatePrincipalGeodesics(
        Sphere(2), 1, epsilon=1.0, delta=1e-5, center=NORTH, radius=0.5, accountant=accountant, **{name: value}
    )
    with pytest.raises(InvalidParameterError, match=name):
        model.fit(np.tile(NORTH, (10, 1)))
    assert accountant.charges == []


def test_a_calibrated_deadline_is_public_and_pads_the_fit():
    space = Sphere(2)
    X, _ = _boundary_vs_centre(space, NORTH, 0.5, 30, seed=6)
    model = PrivatePrincipalGeodesics(space, 1, epsilon=1.0, delta=1e-5, center=NORTH, radius=0.5, timing_safe=True)
    deadline = model.fit(X).timing_deadline_
    assert deadline >= 0.010
    assert model.fit(X[::-1]).timing_deadline_ == deadline  # the same public key: the cached deadline


def test_a_composed_plan_or_report_made_timing_safe_charges_delta_t_not_its_parts():
    """The guard for later users of composed_of: the parts' events do not carry δ_t, so the
    timing-safe plan and report fall back to the summed (ε, δ + δ_t) event."""
    from geodp.models.report import PrivacyReport, with_timing_policy
    from geodp.release import ReleasePlan, timing_safe_plan

    parts = ({"epsilon": 0.5, "delta": 0.0}, {"epsilon": 0.5, "delta": 1e-6, "gdp_mu": 0.3})
    plan = ReleasePlan("Demo", 10, 1.0, 1e-6, 0.1, 0.1, True, "exact", report="", composed_of=parts)
    assert isinstance(plan.dp_event(), dp_accounting.ComposedDpEvent)
    assert timing_safe_plan(plan, True).dp_event() == EpsilonDeltaDpEvent(1.0, 1e-6 + TIMING_SAFE_DELTA)
    report = with_timing_policy(PrivacyReport("", {"epsilon": 1.0, "delta": 1e-6, "composed_of": parts}), True)
    assert report.dp_event() == EpsilonDeltaDpEvent(1.0, 1e-6 + TIMING_SAFE_DELTA)
