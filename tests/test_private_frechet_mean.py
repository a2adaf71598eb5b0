"""Regression tests for the privacy leaks and silent failures of the estimator found by an audit.

Each test reproduces one finding: a report that published a count, a Karcher flow that diverged
on some datasets and not on their neighbours, records that decided whether ``fit`` raises, a
release that overflowed silently, an estimator that could not be pickled.
"""

import copy
import pickle
import warnings

import joblib
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from geodp import frechet_mean
from geodp.errors import ConvergenceWarning, NotOnManifoldError, NumericalWarning
from geodp.frechet import karcher_iteration_budget
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.manifolds import matrix_functions as mf
from geodp.models import CuratorDiagnostics, PrivateFrechetMean

LE = SPD(3, metric="log-euclidean")


def _ball_data(space, center, radius, n, rng, boundary_share=0.8, clusters=None):
    """Records in the closed ball, most on its boundary, optionally in a few tight clusters."""
    if clusters is None:
        u = space.random_unit_tangent(center, size=n, rng=rng)
    else:
        dirs = space.random_unit_tangent(center, size=clusters, rng=rng)
        u = dirs[rng.integers(0, clusters, n)] + 0.05 * space.random_tangent(center, size=n, rng=rng)
        u = u / space._norm(center, u).reshape((n,) + (1,) * len(space.point_shape))
    t = radius * np.where(rng.uniform(size=n) < boundary_share, 1.0, rng.uniform(size=n))
    return space._polar_exp(center, u, t)


# ------------------------------------------------------------------ item 1: the report
@pytest.mark.parametrize("mechanism", ["laplace", "tangent-gaussian", "kng"])
def test_report_is_identical_on_neighbouring_datasets_that_differ_in_clipping(mechanism):
    rng = np.random.default_rng(0)
    X = LE.exp(np.eye(3), LE.random_tangent(np.eye(3), size=40, rng=rng) * 0.2)
    far = LE.exp(np.eye(3), 5.0 * np.diag([1.0, 0.0, 0.0]))
    X_prime = X.copy()
    X_prime[0] = far  # the neighbour has one more record outside the ball
    kwargs = dict(epsilon=1.0, delta=1e-6, center=np.eye(3), radius=2.0, mechanism=mechanism, random_state=1)
    a, b = PrivateFrechetMean(LE, **kwargs).fit(X), PrivateFrechetMean(LE, **kwargs).fit(X_prime)
    assert str(a.privacy_report_) == str(b.privacy_report_)
    assert a.privacy_report_.to_dict() == b.privacy_report_.to_dict()
    assert "n_clipped" not in a.privacy_report_.to_dict() and not hasattr(a, "n_clipped_")
    # the count lives, labelled, in the curator diagnostics only
    assert (a.curator_diagnostics_.n_clipped, b.curator_diagnostics_.n_clipped) == (0, 1)
    assert str(b.curator_diagnostics_).startswith("CURATOR-ONLY — DO NOT PUBLISH")
    assert isinstance(b.curator_diagnostics_, CuratorDiagnostics)


# ------------------------------------------------------------ item 2: the Karcher flow
def test_hyperbolic_flow_converges_on_every_dataset_at_radius_10():
    """The audit's script: H², r = 10, n = 500; 17% of datasets diverged before."""
    space, radius = Hyperbolic(2), 10.0
    center = space.origin
    budget = karcher_iteration_budget(space, radius, 1e-9)
    failures = 0
    for seed in range(300):
        rng = np.random.default_rng(seed)
        X = _ball_data(space, center, radius, 500, rng, clusters=int(rng.integers(1, 5)) if seed % 2 else None)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a ConvergenceWarning fails the test
            mean, info = frechet_mean(space, X, init=center, tol=1e-9, max_iter=budget, return_info=True)
        failures += not (info.converged and np.all(np.isfinite(mean)))
    assert failures == 0


CURVED_EXTREMES = [
    (Sphere(2), 0.78),  # r* = π/4 ≈ 0.785
    (Sphere(5), 0.7),
    (Hyperbolic(3), 8.0),
    (Hyperbolic(2, curvature=-4.0), 5.0),
    (KendallShape(5), 0.39),  # r* = π/8 ≈ 0.393
    (SPD(3), 6.0),
]


@pytest.mark.parametrize("space, radius", CURVED_EXTREMES, ids=lambda v: repr(v))
def test_flow_converges_on_adversarial_datasets_in_the_public_ball(space, radius):
    center = space.random_point(rng=3)
    tol = 1e-10 * max(1.0, radius)
    budget = karcher_iteration_budget(space, radius, tol)
    for seed in range(30):
        rng = np.random.default_rng(100 + seed)
        clusters = [None, 1, 2, 3][seed % 4]
        X = _ball_data(space, center, radius, 200, rng, boundary_share=1.0 if seed % 3 == 0 else 0.7, clusters=clusters)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            mean, info = frechet_mean(space, X, init=center, tol=tol, max_iter=budget, return_info=True)
        assert info.converged, (seed, info)
        # independently: first-order optimality through the public, validated geometry
        assert float(space.norm(mean, np.mean(space.log(mean, X), axis=0))) < 10 * tol


def test_fit_lets_no_data_dependent_warning_or_exception_escape():
    space, radius = Hyperbolic(2), 10.0
    rng = np.random.default_rng(7)
    X = _ball_data(space, space.origin, radius, 500, rng, clusters=2)
    X_prime = X.copy()
    X_prime[0] = space._polar_exp(space.origin, space.random_unit_tangent(space.origin, rng=rng), 40.0)
    reports = []
    for data in (X, X_prime):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model = PrivateFrechetMean(space, epsilon=1.0, center=space.origin, radius=radius, random_state=0).fit(data)
        assert model.curator_diagnostics_.mean_converged
        reports.append(str(model.privacy_report_))
    assert reports[0] == reports[1]


def test_withheld_warnings_go_to_the_curator(monkeypatch):
    import geodp.models.frechet_mean as module

    real = module.mean_of_records

    def noisy(*args, **kwargs):
        warnings.warn("gradient norm 0.123 computed from the data", ConvergenceWarning, stacklevel=2)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "mean_of_records", noisy)
    sphere = Sphere(2)
    north = np.array([0.0, 0.0, 1.0])
    X = sphere.exp(north, sphere.random_tangent(north, size=20, rng=0) * 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = PrivateFrechetMean(sphere, epsilon=1.0, center=north, radius=0.5, random_state=0).fit(X)
    assert any("0.123" in w for w in model.curator_diagnostics_.warnings)


# ------------------------------------------------- item 4: records that are not points
def test_invalid_records_raise_without_saying_which_or_how_many():
    X = LE.random_point(10, rng=0)
    one, two = X.copy(), X.copy()
    one[3] = np.nan
    two[[3, 5]] = -np.eye(3)
    messages = []
    for data in (one, two):
        with pytest.raises(NotOnManifoldError) as err:
            PrivateFrechetMean(LE, epsilon=1.0, center=np.eye(3), radius=2.0).fit(data)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize(
    "space, center, bad",
    [
        (LE, np.eye(3), np.full((3, 3), np.nan)),
        (SPD(3), np.eye(3), np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])),
        (KendallShape(4), KendallShape(4).random_point(rng=0), np.ones((4, 2))),  # degenerate
        (Sphere(2), np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, 2.0])),
    ],
    ids=["nan", "non-symmetric", "degenerate-kendall", "off-sphere"],
)
def test_on_invalid_center_replaces_the_record_by_the_public_centre(space, center, bad):
    good = space.random_point(12, rng=1)
    if isinstance(space, Sphere):
        good = space.exp(center, space.random_tangent(center, size=12, rng=1) * 0.1)
    X = good.copy()
    X[4] = bad
    replaced = good.copy()
    replaced[4] = center
    kwargs = dict(epsilon=1.0, center=center, radius=0.3, on_invalid="center", random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = PrivateFrechetMean(space, **kwargs).fit(X)
    b = PrivateFrechetMean(space, **kwargs).fit(replaced)
    np.testing.assert_allclose(a.mean_, b.mean_, atol=1e-12)
    assert a.curator_diagnostics_.n_invalid == 1 and b.curator_diagnostics_.n_invalid == 0
    assert str(a.privacy_report_) == str(b.privacy_report_)


@pytest.mark.parametrize("spread", [30.0, 40.0, 60.0])
@pytest.mark.parametrize("space", [SPD(3), LE], ids=repr)
def test_badly_conditioned_spd_record_does_not_decide_whether_fit_raises(space, spread):
    """Records with log-eigenvalue spread ≥ 40 in a rotated basis are singular up to rounding (a
    smallest eigenvalue of either sign at the rounding level; a third of such rotations made fit
    raise before, the others accepted them as extreme points): now every rotation is refused, and
    replaced under on_invalid="center"; at spread 30 every rotation is a point."""
    X = space.random_point(20, rng=3)
    for seed in range(10):
        q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((3, 3)))
        X[0] = mf.from_eig(np.exp(np.array([-spread / 2, 0.0, spread / 2])), q)
        model = PrivateFrechetMean(space, epsilon=1.0, center=np.eye(3), radius=2.0, random_state=0)
        if spread >= 40.0:
            with pytest.raises(NotOnManifoldError, match="singular"):
                model.fit(X)
            model.set_params(on_invalid="center")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model.fit(X)
        expected_invalid = int(spread >= 40.0)
        assert model.curator_diagnostics_.n_invalid == expected_invalid
        assert model.curator_diagnostics_.n_clipped >= 1 - expected_invalid
        assert space.belongs(model.mean_)


# ------------------------------------------------ item 7: overflowing LE releases
def test_small_epsilon_le_release_warns_or_projects():
    X = LE.random_point(20, rng=0)
    kwargs = dict(epsilon=0.05, center=np.eye(3), radius=4.0, random_state=0)
    with pytest.warns(NumericalWarning, match="project_to_ball"):
        raw = PrivateFrechetMean(LE, **kwargs).fit(X)
    assert np.all(np.isfinite(raw.mean_coordinates_))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        round_trip = LE.to_coordinates(raw.mean_)
    assert not np.allclose(round_trip, raw.mean_coordinates_, rtol=1e-6)  # the matrix lost the release
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        projected = PrivateFrechetMean(LE, project_to_ball=True, **kwargs).fit(X)
    assert LE.belongs(projected.mean_)
    assert float(LE.dist(np.eye(3), projected.mean_)) <= 4.0 * (1 + 1e-9)
    # the projection is post-processing of the same draw: same direction from the centre
    c = LE.to_coordinates(np.eye(3))
    a, b = raw.mean_coordinates_ - c, projected.mean_coordinates_ - c
    np.testing.assert_allclose(a / np.linalg.norm(a), b / np.linalg.norm(b), atol=1e-12)
    assert "projected onto the public ball" in projected.privacy_report_


def test_projection_on_a_curved_space_keeps_the_release_in_the_ball():
    sphere, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    X = sphere.exp(north, sphere.random_tangent(north, size=5, rng=0) * 0.1)
    for seed in range(20):
        model = PrivateFrechetMean(
            sphere, epsilon=0.1, center=north, radius=0.5, project_to_ball=True, random_state=seed
        ).fit(X)
        assert float(sphere.dist(north, model.mean_)) <= 0.5 * (1 + 1e-9)


# ----------------------------------------------------- item 9: frechet_mean honesty
def test_antipodal_points_are_not_reported_as_converged():
    with pytest.warns(ConvergenceWarning, match="not be unique"):
        _, info = frechet_mean(Sphere(2), np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]), return_info=True)
    assert not info.converged and not info.unique


def test_far_hyperbolic_data_give_the_true_mean():
    """Dispersed data around a point 3 away from the origin: the old flow ended 21 away."""
    space = Hyperbolic(2)
    center = space._polar_exp(space.origin, np.array([0.0, 1.0, 0.0]), 3.0)
    X = _ball_data(space, center, 12.0, 300, np.random.default_rng(8), clusters=2)
    mean, info = frechet_mean(space, X, return_info=True)
    assert info.converged
    assert float(space.norm(mean, np.mean(space.log(mean, X), axis=0))) < 1e-8
    assert float(space.dist(center, mean)) < 12.0  # the mean of data in a ball lies in it


# --------------------------------------------- item 10: the scikit-learn contract
def _fitted():
    return PrivateFrechetMean(LE, epsilon=1.0, center=np.eye(3), radius=2.0, random_state=0).fit(
        LE.random_point(10, rng=0)
    )


@pytest.mark.parametrize(
    "roundtrip",
    [lambda m: pickle.loads(pickle.dumps(m)), copy.deepcopy],
    ids=["pickle", "deepcopy"],
)
def test_fitted_model_round_trips(roundtrip):
    model = _fitted()
    other = roundtrip(model)
    np.testing.assert_array_equal(other.mean_, model.mean_)
    assert str(other.privacy_report_) == str(model.privacy_report_)
    assert other.privacy_report_.to_dict() == model.privacy_report_.to_dict()
    assert other.curator_diagnostics_ == model.curator_diagnostics_


def test_fitted_model_round_trips_through_joblib(tmp_path):
    model = _fitted()
    joblib.dump(model, tmp_path / "model.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "model.joblib").mean_, model.mean_)


def test_fitted_attributes_before_fit_raise_not_fitted():
    model = PrivateFrechetMean(LE, epsilon=1.0, center=np.eye(3), radius=2.0)
    for name in ("mean_", "privacy_report_", "curator_diagnostics_"):
        with pytest.raises(NotFittedError, match="not fitted"):
            getattr(model, name)
    with pytest.raises(AttributeError):
        _ = model.no_such_attribute


# A point-valued estimator on a space of fixed dimension cannot pass the checks that feed it
# arrays of other widths; docs/guide.md lists them. Every other check must pass.
FIXED_SHAPE_CHECKS = {
    "check_fit_score_takes_y",
    "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self",
    "check_readonly_memmap_input",
    "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit",
    "check_dtype_object",
    "check_estimators_empty_data_messages",
    "check_pipeline_consistency",
    "check_estimators_nan_inf",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_fit2d_1sample",
    "check_fit2d_1feature",
    "check_dict_unchanged",
    "check_fit_idempotent",
    "check_fit_check_is_fitted",
    "check_n_features_in",
    "check_fit2d_predict1d",
}


def test_scikit_learn_checks_that_apply_pass():
    from sklearn.utils.estimator_checks import check_estimator

    estimator = PrivateFrechetMean(Euclidean(5), epsilon=1.0, center=np.zeros(5), radius=3.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert failed <= FIXED_SHAPE_CHECKS, failed - FIXED_SHAPE_CHECKS
    passed = {r["check_name"] for r in results if r["status"] == "passed"}
    assert {
        "check_complex_data",
        "check_estimator_sparse_array",
        "check_get_params_invariance",
        "check_parameters_default_constructible",
    } <= passed


# ---------------------------------------------------- found by the new-user trial
def test_clones_and_copies_charge_the_same_accountant():
    from sklearn.base import clone

    from geodp.accountant import BudgetAccountant
    from geodp.errors import BudgetExceededError

    budget = BudgetAccountant(epsilon=1.0)
    model = PrivateFrechetMean(LE, epsilon=0.4, center=np.eye(3), radius=2.0, accountant=budget)
    X = LE.random_point(10, rng=0)
    clone(model).fit(X)
    copy.deepcopy(model).fit(X)
    assert budget.total_spent == (0.8, 0.0)
    with pytest.raises(BudgetExceededError):
        clone(model).fit(X)


def test_a_data_dependent_error_is_charged_a_parameter_error_is_not():
    from geodp.accountant import BudgetAccountant
    from geodp.errors import InvalidParameterError

    budget = BudgetAccountant(epsilon=1.0)
    X = LE.random_point(10, rng=0)
    with pytest.raises(InvalidParameterError):
        PrivateFrechetMean(LE, epsilon=0.5, center=np.eye(3), radius=-1.0, accountant=budget).fit(X)
    assert budget.total_spent == (0.0, 0.0)
    X[2] = np.nan
    with pytest.raises(NotOnManifoldError, match="space.project"):
        PrivateFrechetMean(LE, epsilon=0.5, center=np.eye(3), radius=2.0, accountant=budget).fit(X)
    assert budget.total_spent == (0.5, 0.0)  # whether it raises depends on the data


def test_mcmc_fallback_is_announced_once_before_sampling(monkeypatch):
    import geodp.models.frechet_mean as module
    from geodp.errors import ApproximateSamplerWarning

    space = SPD(8)  # affine-invariant SPD(8) at r = 2, n = 30: Hajri's rejection is hopeless, MH runs
    X = space.random_point(30, rng=0)
    announced_before_sampling = []
    real = module.PrivateFrechetMean._private_release

    def spy(self, *args):
        announced_before_sampling.append(any(issubclass(w.category, ApproximateSamplerWarning) for w in caught))
        return real(self, *args)

    monkeypatch.setattr(module.PrivateFrechetMean, "_private_release", spy)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = PrivateFrechetMean(space, epsilon=1.0, center=np.eye(8), radius=2.0, random_state=0).fit(X)
    approximate = [w for w in caught if issubclass(w.category, ApproximateSamplerWarning)]
    assert announced_before_sampling == [True]
    assert len(approximate) == 1 and "MCMC" in str(approximate[0].message)
    assert model.privacy_report_.to_dict()["exact"] is False


def test_a_radius_float64_cannot_represent_is_refused():
    from geodp.errors import AssumptionError

    with pytest.raises(AssumptionError, match="float64"):
        PrivateFrechetMean(SPD(8), epsilon=1.0, center=np.eye(8), radius=1e6).fit(SPD(8).random_point(5, rng=0))
    with pytest.raises(AssumptionError, match="float64"):
        PrivateFrechetMean(Hyperbolic(2), epsilon=1.0, center=Hyperbolic(2).origin, radius=1e3).fit(
            Hyperbolic(2).random_point(5, rng=0)
        )


def test_report_names_the_public_centre_and_lists_every_assumption():
    sphere, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    X = sphere.exp(north, sphere.random_tangent(north, size=10, rng=0) * 0.1)
    model = PrivateFrechetMean(sphere, epsilon=1.0, center=north, radius=0.5, mechanism="kng", random_state=0).fit(X)
    d = model.privacy_report_.to_dict()
    assert d["center"] == [0.0, 0.0, 1.0]
    assert any("r* =" in a for a in d["assumptions"])
    assert (
        "no estimate to release" in str(model.curator_diagnostics_)
        and model.curator_diagnostics_.mean_iterations is None
    )


def test_notebook_display_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PrivateFrechetMean(LE, epsilon=1.0, center=np.eye(3), radius=2.0)._repr_html_()


# ------------------------------------------------------ found by the privacy audit
def _fit_outcome(space, X, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            PrivateFrechetMean(space, random_state=0, **kwargs).fit(X)
            return "released"
        except Exception as err:  # the outcome itself is what an observer sees
            return f"{type(err).__name__}: {err}"


def test_records_at_the_cut_locus_of_the_centre_are_clipped_into_the_ball():
    sphere, center, radius = Sphere(5), np.eye(6)[-1], 0.3
    rng = np.random.default_rng(0)
    u = sphere._random_unit_tangent(center, size=3000, rng=rng)
    records = sphere.project(sphere._polar_exp(center, u, np.pi - 10.0 ** rng.uniform(-12, -6, 3000)))
    clipped, was_clipped = sphere.clip_to_ball(records, center, radius)
    assert was_clipped.all() and sphere.belongs(clipped).all()
    assert np.all(sphere.dist(center, clipped) <= radius)
    X = sphere._polar_exp(center, sphere._random_unit_tangent(center, size=10, rng=1), np.full(10, 0.1))
    X_prime = X.copy()
    X_prime[0] = records[0]
    kwargs = dict(epsilon=1.0, center=center, radius=radius, mechanism="kng")
    assert _fit_outcome(sphere, X, **kwargs) == _fit_outcome(sphere, X_prime, **kwargs) == "released"


@pytest.mark.parametrize("which", ["spd-badly-conditioned-centre", "hyperbolic-far-centre"])
def test_kng_fit_does_not_depend_on_one_record_with_an_extreme_public_centre(which):
    if which.startswith("spd"):
        space = SPD(3)
        q, _ = np.linalg.qr(np.random.default_rng(42).standard_normal((3, 3)))
        center = mf.sym(q @ np.diag(np.exp([11.0, 0.0, -11.0])) @ q.T)
    else:
        space = Hyperbolic(2)
        center = space._polar_exp(space.origin, space._random_unit_tangent(space.origin, rng=7), 22.0)
    kwargs = dict(epsilon=1.0, center=center, radius=1.0, mechanism="kng", on_invalid="center")
    for seed in range(15):
        rng = np.random.default_rng(seed)
        u = space._random_unit_tangent(center, size=20, rng=rng)
        X = space._polar_exp(center, u, rng.uniform(0.2, 1.0, 20))
        X_prime = X.copy()
        X_prime[0] = space._polar_exp(center, u[0], 3.0)  # one record moved outside: clipped
        assert _fit_outcome(space, X, **kwargs) == _fit_outcome(space, X_prime, **kwargs) == "released"


@pytest.mark.parametrize("bad", [None, "Alice Smith, DOB 1970-01-01", float("nan")], ids=["None", "text", "nan"])
def test_a_non_numeric_entry_invalidates_only_its_record_and_is_never_quoted(bad):
    space = Euclidean(2)
    X = np.array([[0.1, 0.2], [0.3, -0.1], [0.0, 0.5]], dtype=object)
    X[0, 1] = bad
    kwargs = dict(epsilon=1.0, center=np.zeros(2), radius=1.0, random_state=0)
    model = PrivateFrechetMean(space, on_invalid="center", **kwargs).fit(X)
    assert model.curator_diagnostics_.n_invalid == 1
    with pytest.raises(NotOnManifoldError) as err:
        PrivateFrechetMean(space, **kwargs).fit(X)
    assert "Alice" not in str(err.value) and "None" not in str(err.value)


@pytest.mark.parametrize("which", ["spd-badly-conditioned-centre", "hyperbolic-far-centre"])
def test_truncated_laplace_accepts_every_mean_of_clipped_records(which):
    """The computed mean of records on the boundary fell a hair outside the ball for some
    datasets, and the truncated law refused it: fit raised on D and not on D'."""
    if which.startswith("spd"):
        space, epsilon, n = SPD(3), 0.05, 4
        q, _ = np.linalg.qr(np.random.default_rng(42).standard_normal((3, 3)))
        center = space.check_points(mf.sym(q @ np.diag(np.exp([13.0, 0.0, -13.0])) @ q.T), batch_ndim=0)
    else:
        space, epsilon, n = Hyperbolic(3), 0.5, 2
        center = space.project(space._polar_exp(space.origin, space._random_unit_tangent(space.origin, rng=7), 22.0))
    for seed in range(20):
        far = space._polar_exp(center, space._random_unit_tangent(center, rng=seed), 3.0)
        X = np.repeat(far[None], n, axis=0)
        X_prime = X.copy()
        X_prime[0] = center
        kwargs = dict(epsilon=epsilon, center=center, radius=1.0)
        assert _fit_outcome(space, X, **kwargs) == _fit_outcome(space, X_prime, **kwargs) == "released"


def test_the_mean_never_jumps_to_the_centre_with_a_badly_conditioned_centre(monkeypatch):
    """Audit: with a centre of condition e^14, D = 10 copies of a far record had its mean sent
    to the centre by the clipping fallback (0.9 from D' = one copy at the centre: ε ≥ 3.7)."""
    import geodp.mechanisms.laplace as laplace_module

    footpoints = []
    real = laplace_module.LaplaceMechanism.randomise
    monkeypatch.setattr(
        laplace_module.LaplaceMechanism,
        "randomise",
        lambda self, value, **kw: (footpoints.append(np.array(value)), real(self, value, **kw))[1],
    )
    space = SPD(3)
    q, _ = np.linalg.qr(np.random.default_rng(42).standard_normal((3, 3)))
    center = space.check_points(mf.sym(q @ np.diag(np.exp([7.0, 0.0, -7.0])) @ q.T), batch_ndim=0)
    for seed in range(40):
        record = space._polar_exp(center, space._random_unit_tangent(center, rng=seed), 3.0)
        X = np.repeat(record[None], 10, axis=0)
        X_prime = X.copy()
        X_prime[0] = center
        footpoints.clear()
        for data in (X, X_prime):
            model = PrivateFrechetMean(space, epsilon=1.0, center=center, radius=1.0, random_state=0).fit(data)
        assert float(space.dist(footpoints[0], footpoints[1])) <= model.sensitivity_ * (1 + 1e-6)


@pytest.mark.parametrize("space", [SPD(3), LE], ids=repr)
def test_a_record_with_entries_near_the_float64_limit_is_an_invalid_record(space):
    X = space.random_point(8, rng=0)
    X[0] = np.full((3, 3), 1e308)
    model = PrivateFrechetMean(
        space, epsilon=1.0, center=np.eye(3), radius=2.0, on_invalid="center", random_state=0
    ).fit(X)
    assert model.curator_diagnostics_.n_invalid == 1


def test_numpy_error_state_of_the_caller_does_not_reach_the_private_computation():
    space = Euclidean(2)
    X = np.array([[0.1, 0.2], [0.3, -0.1], [1e200, 0.0]])
    with np.errstate(all="raise"):
        model = PrivateFrechetMean(space, epsilon=1.0, center=np.zeros(2), radius=1.0, random_state=0).fit(X)
    assert model.curator_diagnostics_.n_clipped == 1
