"""The public release plan: every estimator's ``plan`` reads no record, and ``fit`` does what it says
(charges its ε and δ, publishes its report, gives its notices before the charge)."""

import warnings

import numpy as np
import pytest

from geodp.accountant import BudgetAccountant
from geodp.errors import ApproximateSamplerWarning, BudgetExceededError
from geodp.manifolds import SPD, Euclidean, Sphere
from geodp.models import PrivateFrechetMean, PrivateGeodesicRegression, PrivateLinearRegression, PrivateMDM
from geodp.release import ReleasePlan

NORTH = np.array([0.0, 0.0, 1.0])


def _cases():
    rng = np.random.default_rng(0)
    sphere = Sphere(2)
    W = sphere.exp(NORTH, sphere.random_tangent(NORTH, size=60, rng=1) * 0.2)
    X = rng.uniform(0, 1, (60, 2))
    covs = SPD(2).random_point(60, rng=2)
    labels = np.repeat([0, 1], 30)
    return [
        (PrivateFrechetMean(sphere, epsilon=1.0, center=NORTH, radius=0.5, random_state=0), (W,)),
        (PrivateFrechetMean(sphere, epsilon=1.0, center=NORTH, radius=0.5, mechanism="kng", random_state=0), (W,)),
        (
            PrivateFrechetMean(
                SPD(2, metric="log-euclidean"),
                epsilon=1.0,
                delta=1e-5,
                center=np.eye(2),
                radius=2.0,
                mechanism="tangent-gaussian",
                random_state=0,
            ),
            (covs,),
        ),
        (PrivateLinearRegression(epsilon=0.5, bounds_X=(0, 1), bounds_y=(0, 2), random_state=0), (X, X.sum(axis=1))),
        (
            PrivateGeodesicRegression(
                Euclidean(1), epsilon=0.5, center=[1.0], radius=1.0, x_bounds=(0, 1), random_state=0
            ),
            (X[:, 0], X.sum(axis=1)[:, None]),
        ),
        (PrivateMDM(SPD(2), epsilon=1.0, center=np.eye(2), radius=3.0, random_state=0), (covs, labels)),
    ]


@pytest.mark.parametrize("case", range(6))
def test_fit_charges_publishes_and_warns_what_the_plan_says(case):
    model, data = _cases()[case]
    plan = model.plan(*data)
    assert isinstance(plan, ReleasePlan) and plan.estimator == type(model).__name__
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    model.set_params(accountant=accountant)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(*data)
    assert accountant.total_spent == pytest.approx((plan.epsilon, plan.delta))
    assert str(model.privacy_report_) == str(plan.report)
    assert model.privacy_report_.to_dict() == plan.report.to_dict()
    said = sorted((w.category.__name__, str(w.message)) for w in caught)
    assert said == sorted((category.__name__, text) for category, text in plan.notices)
    assert model.privacy_report_.to_dict()["exact"] is plan.exact


@pytest.mark.parametrize("case", range(6))
def test_the_plan_reads_no_record(case):
    """The same plan for the data and for NaN in their place (only shapes are read)."""
    model, data = _cases()[case]
    blank = tuple(np.full(np.shape(d), np.nan) if i == 0 or case in (3, 4) else d for i, d in enumerate(data))
    a, b = model.plan(*data), model.plan(*blank)
    assert str(a.report) == str(b.report) and a.notices == b.notices
    assert (a.epsilon, a.delta, a.exact, a.sampler, a.sensitivity, a.scale) == (
        b.epsilon,
        b.delta,
        b.exact,
        b.sampler,
        b.sensitivity,
        b.scale,
    )


def test_mdm_composes_its_class_plans_in_parallel():
    model, (covs, labels) = _cases()[5]
    plan = model.plan(covs, labels)
    classes = plan.facts["classes"]
    assert len(classes) == 2 and all(c.epsilon == plan.epsilon for c in classes)
    assert plan.n_samples == sum(c.n_samples for c in classes) == 60


def test_a_budget_that_cannot_pay_refuses_before_any_warning_of_the_private_part():
    model = PrivateLinearRegression(epsilon=100.0, bounds_X=(0, 1), bounds_y=(0, 1), random_state=0)
    X = np.random.default_rng(0).uniform(0, 1, (500, 1))
    assert not model.plan(X, X[:, 0]).exact
    model.set_params(accountant=BudgetAccountant(epsilon=1.0))
    with pytest.warns(ApproximateSamplerWarning), pytest.raises(BudgetExceededError):
        model.fit(X, X[:, 0])
    assert model.accountant.total_spent == (0.0, 0.0)


def test_the_mean_plans_from_the_number_of_records_alone():
    """The ε audit plans a release of up to 10⁹ records without building them (it used to
    materialise them: 22 GiB at its documented limit)."""
    model = PrivateFrechetMean(Sphere(2), epsilon=1.0, center=NORTH, radius=0.5)
    small = model.plan(np.tile(NORTH, (50, 1)))
    assert str(model.plan(50).report) == str(small.report)
    huge = model.plan(10**9)
    assert huge.n_samples == 10**9 and huge.sensitivity < small.sensitivity


def test_dask_metadata_are_refused_before_the_charge():
    da = pytest.importorskip("dask.array")
    model = PrivateFrechetMean(Sphere(2), epsilon=1.0, center=NORTH, radius=0.5)
    for bad in (da.zeros((10, 3), dtype=complex, chunks=5), da.zeros((10, 4), chunks=5), da.zeros(10, chunks=5)):
        accountant = BudgetAccountant(epsilon=1.0)
        model.set_params(accountant=accountant)
        with pytest.raises((TypeError, ValueError)):
            model.fit(bad)
        assert accountant.total_spent == (0.0, 0.0)
