"""PrivateMDM: pyRiemann's MDM in the non-private limit, parallel composition, per-class streams."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline

from geodp.accountant import BudgetAccountant
from geodp.errors import (
    ApproximateSamplerWarning,
    BudgetExceededError,
    GeodpError,
    InvalidDataError,
    InvalidParameterError,
    InvalidTypeError,
    NotOnManifoldError,
    NumericalWarning,
)
from geodp.manifolds import SPD, Sphere
from geodp.models import PrivateMDM

pyriemann = pytest.importorskip("pyriemann")
from pyriemann.classification import MDM  # noqa: E402
from pyriemann.estimation import Covariances  # noqa: E402
from pyriemann.geometry.distance import distance_logeuclid, distance_riemann  # noqa: E402

PYRIEMANN_METRIC = {"affine": "riemann", "log-euclidean": "logeuclid"}
PYRIEMANN_DISTANCE = {"affine": distance_riemann, "log-euclidean": distance_logeuclid}


def _spd_classes(k, n_per_class, n_classes, separation, dispersion, seed):
    """Overlapping classes of SPD matrices (numpy only): class c is R_c Exp(B) R_c with
    R_c = Exp(S_c / 2), S_c a random symmetric matrix of scale ``separation``, B symmetric
    Gaussian of scale ``dispersion``."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for c in range(n_classes):
        a = rng.standard_normal((k, k))
        w, u = np.linalg.eigh(separation * (a + a.T) / 2)
        root = (u * np.exp(w / 2)) @ u.T
        b = dispersion * rng.standard_normal((n_per_class, k, k))
        w, u = np.linalg.eigh((b + np.swapaxes(b, 1, 2)) / 2)
        X.append(root @ ((u * np.exp(w)[:, None, :]) @ np.swapaxes(u, 1, 2)) @ root)
        y.append(np.full(n_per_class, c))
    return np.concatenate(X), np.concatenate(y)


def _signals(n_trials, n_classes, mixing_scale, seed, n_channels=4, n_times=200):
    """Multichannel signals whose class sets the mixing of white noise."""
    rng = np.random.default_rng(seed)
    mixing = np.eye(n_channels) + mixing_scale * rng.standard_normal((n_classes, n_channels, n_channels))
    y = rng.permutation(np.arange(n_trials) % n_classes)
    return mixing[y] @ rng.standard_normal((n_trials, n_channels, n_times)), y


def _model(space, **kwargs):
    k = space.k
    params = dict(epsilon=1.0, center=np.eye(k), radius=4.0, random_state=0) | kwargs
    return PrivateMDM(space, **params)


# ------------------------------------------------------------------ non-private limit
@pytest.mark.parametrize("metric", ["affine", "log-euclidean"])
@pytest.mark.parametrize(("k", "n_classes", "separation"), [(3, 3, 0.3), (5, 4, 0.2), (8, 4, 0.1)])
def test_huge_epsilon_is_pyriemann_mdm(metric, k, n_classes, separation):
    X, y = _spd_classes(k, 120, n_classes, separation, 0.5, seed=k)
    reference = MDM(metric=PYRIEMANN_METRIC[metric]).fit(X, y)
    accuracy = reference.score(X, y)
    assert 0.5 < accuracy < 0.97  # imperfect: equal predictions are not trivial

    model = _model(SPD(k, metric=metric), epsilon=1e9, radius=8.0).fit(X, y)
    assert all(d.n_clipped == 0 for d in model.curator_diagnostics_.per_class)
    assert np.array_equal(model.classes_, reference.classes_)
    assert np.array_equal(model.predict(X), reference.predict(X))
    gaps = [PYRIEMANN_DISTANCE[metric](a, b) for a, b in zip(model.covmeans_, reference.covmeans_)]
    assert max(gaps) < 1e-7
    np.testing.assert_allclose(model.transform(X), reference.transform(X), rtol=1e-7, atol=1e-8)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba, reference.predict_proba(X), rtol=0, atol=1e-7)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert model.score(X, y) == accuracy


def test_pipeline_after_pyriemann_covariances():
    signals, y = _signals(600, 3, 0.07, seed=1)
    train, test = slice(0, 400), slice(400, None)

    def pipeline(classifier):
        return make_pipeline(Covariances(estimator="oas"), classifier).fit(signals[train], y[train])

    reference = pipeline(MDM())
    reference_score = reference.score(signals[test], y[test])
    assert 0.5 < reference_score < 1.0
    limit = pipeline(_model(SPD(4), epsilon=1e9, radius=1.0))
    assert np.array_equal(limit.predict(signals[test]), reference.predict(signals[test]))

    private = make_pipeline(Covariances(estimator="oas"), _model(SPD(4), epsilon=2.0, radius=1.0))
    copy = clone(private)
    assert copy.get_params()["privatemdm__epsilon"] == 2.0
    score = copy.fit(signals[train], y[train]).score(signals[test], y[test])
    assert score > reference_score - 0.05


def test_generic_space_predicts_the_nearest_released_mean():
    space = Sphere(2)
    rng = np.random.default_rng(3)
    poles = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    y = rng.integers(0, 3, size=150)
    X = poles[y] + 0.5 * rng.standard_normal((150, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    model = PrivateMDM(space, epsilon=5.0, center=[1.0, 1.0, 1.0] / np.sqrt(3), radius=0.75, random_state=0).fit(X, y)
    angles = np.arccos(np.clip(X @ model.covmeans_.T, -1.0, 1.0))  # great-circle distances
    np.testing.assert_allclose(model.transform(X), angles, atol=1e-7)
    assert np.array_equal(model.predict(X), model.classes_[np.argmin(angles, axis=1)])


# ------------------------------------------------------------------ composition and budget
@pytest.mark.parametrize(
    ("metric", "mechanism", "delta", "charged"),
    [("affine", "laplace", 1e-6, (1.0, 0.0)), ("log-euclidean", "tangent-gaussian", 1e-6, (1.0, 1e-6))],
)
def test_accountant_charged_once_for_all_classes(metric, mechanism, delta, charged):
    X, y = _spd_classes(3, 30, 4, 0.3, 0.5, seed=0)
    budget = BudgetAccountant(epsilon=1.5, delta=1e-5)
    model = _model(SPD(3, metric=metric), mechanism=mechanism, delta=delta, accountant=budget).fit(X, y)
    assert budget.spent == [charged]
    report = model.privacy_report_.to_dict()
    assert (report["epsilon"], report["delta"]) == charged
    assert [entry["epsilon"] for entry in report["per_class"]] == [1.0] * 4  # each class at the full ε


def test_overspend_refuses_before_any_record_is_touched():
    X, y = _spd_classes(3, 20, 3, 0.3, 0.5, seed=0)
    X[-1] = np.nan  # an invalid record would raise NotOnManifoldError once the data are touched
    budget = BudgetAccountant(epsilon=0.5)
    model = _model(SPD(3), accountant=budget)
    with pytest.raises(BudgetExceededError):
        model.fit(X, y)
    assert budget.spent == []
    assert not hasattr(model, "covmeans_") and not hasattr(model, "classes_") and not hasattr(model, "privacy_report_")
    with pytest.raises(NotOnManifoldError):  # the same fit with the budget: the record is reached
        _model(SPD(3), accountant=BudgetAccountant(epsilon=1.0)).fit(X, y)


def test_parameter_errors_of_the_class_releases_are_not_charged():
    X, y = _spd_classes(3, 20, 3, 0.3, 0.5, seed=0)
    budget = BudgetAccountant(epsilon=10.0, delta=1e-3)
    bad = [
        dict(mechanism="tangent-gaussian", delta=1e-6),  # needs a flat space
        dict(mechanism="gaussian"),
        dict(epsilon=-1.0),
        dict(radius=0.0),
        dict(center=np.eye(4)),
    ]
    for params in bad:
        model = _model(SPD(3), accountant=budget, **params)
        with pytest.raises(GeodpError):
            model.fit(X, y)
        assert not hasattr(model, "covmeans_")
    assert budget.spent == []


# ------------------------------------------------------------------ privacy of the streams
def _cap(n, seed, spread):
    """Points of S² scattered around the north pole."""
    points = np.array([0.0, 0.0, 1.0]) + spread * np.random.default_rng(seed).standard_normal((n, 3))
    return points / np.linalg.norm(points, axis=1, keepdims=True)


def test_a_class_release_ignores_the_records_of_other_classes():
    # KNG's exact sampler accepts with a probability that depends on the data, so a stream shared
    # by the classes would carry one class's records into the next class's release.
    X, y = _cap(120, seed=0, spread=0.4), np.repeat([0, 1, 2], 40)
    changed = X.copy()
    changed[y == 1] = _cap(40, seed=9, spread=0.1)  # same count, other records
    space, north = Sphere(2), [0.0, 0.0, 1.0]

    def release(points, seed):
        return (
            PrivateMDM(space, epsilon=1.0, center=north, radius=0.7, mechanism="kng", random_state=seed)
            .fit(points, y)
            .covmeans_
        )

    first, second = release(X, 7), release(changed, 7)
    for c in (0, 2):
        assert np.array_equal(first[c], second[c])
    assert space.dist(first[1], second[1]) > 1e-3
    # The noise is real: another seed moves every class mean.
    assert np.all(space.dist(first, release(X, 8)) > 1e-3)


def test_streams_stay_apart_when_sampling_consumes_randomness_by_the_data(monkeypatch):
    # Today's samplers draw a data-independent amount of randomness; a future one may not (a
    # rejection loop). Simulate one: each class release first draws as many numbers as its data
    # dictate. A stream shared by the classes would then pass class 1's records on to class 2.
    import geodp.models.frechet_mean as frechet_mean_module

    fit = frechet_mean_module.PrivateFrechetMean.fit

    def greedy_fit(self, X, y=None):
        self.random_state.random(int(1e3 * np.sum(np.abs(X))) % 997)
        return fit(self, X, y)

    monkeypatch.setattr(frechet_mean_module.PrivateFrechetMean, "fit", greedy_fit)
    X, y = _spd_classes(3, 20, 3, 0.3, 0.5, seed=0)
    changed = X.copy()
    changed[y == 1] = _spd_classes(3, 20, 1, 0.8, 0.9, seed=9)[0]
    space = SPD(3, metric="log-euclidean")
    first = _model(space, random_state=3).fit(X, y).covmeans_
    second = _model(space, random_state=3).fit(changed, y).covmeans_
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[2], second[2])


def test_classes_draw_from_independent_streams():
    X, _ = _spd_classes(3, 30, 1, 0.3, 0.5, seed=0)
    twice = np.concatenate([X, X])
    model = _model(SPD(3, metric="log-euclidean"), random_state=0).fit(twice, np.repeat(["a", "b"], 30))
    assert distance_logeuclid(*model.covmeans_) > 1e-3  # same records, different noise


def test_declared_classes_and_a_generator_reproduce_the_release():
    X, y = _spd_classes(3, 25, 3, 0.3, 0.5, seed=2)
    names = np.array(["feet", "left", "right"])[y]
    space = SPD(3)
    inferred = _model(space, random_state=np.random.default_rng(5)).fit(X, names)
    declared = _model(space, classes=["right", "feet", "left"], random_state=np.random.default_rng(5)).fit(X, names)
    assert inferred.classes_.tolist() == declared.classes_.tolist() == ["feet", "left", "right"]
    assert np.array_equal(inferred.covmeans_, declared.covmeans_)


# ------------------------------------------------------------------ reports and warnings
def test_report_is_public_and_diagnostics_count_the_clipped_records():
    X, y = _spd_classes(3, 40, 3, 0.3, 0.5, seed=0)
    radius = 1.5
    y = np.array(["rest", "left", "right"])[y]
    space = SPD(3, metric="log-euclidean")
    model = _model(space, radius=radius).fit(X, y)
    other = _model(space, radius=radius, random_state=1).fit(_spd_classes(3, 40, 3, 0.9, 0.2, seed=5)[0], y)
    assert model.privacy_report_ == other.privacy_report_  # nothing in it depends on the records
    report = model.privacy_report_.to_dict()
    json.dumps(report)
    assert "parallel" in model.privacy_report_ and "labels are public" in model.privacy_report_
    assert report["classes"] == ["left", "rest", "right"] and report["class_counts"] == [40, 40, 40]
    for entry in report["per_class"]:
        assert entry["sensitivity"] == pytest.approx(2 * radius / 40, rel=1e-12)  # U23 Thm 3: 2r/n
    outside = distance_logeuclid(X, np.eye(3)) > radius  # pyRiemann's distance, an independent count
    clipped = [d.n_clipped for d in model.curator_diagnostics_.per_class]
    assert clipped == [int(np.count_nonzero(outside[y == c])) for c in model.classes_]
    assert sum(clipped) > 0
    text = str(model.curator_diagnostics_)
    assert text.startswith("CURATOR-ONLY") and "class 'rest':" in text and "CURATOR-ONLY" not in model.privacy_report_


def test_one_sampler_warning_names_the_classes_sampled_by_mcmc():
    X, _ = _spd_classes(3, 60, 1, 0.3, 0.5, seed=0)
    # small classes get the widest laws: n = 10 at r = 3.4 gives σ = 0.68 = 0.96 σ_max(3), beyond
    # the exact eigenvalue sampler's range (0.92 σ_max at k = 3); n = 40 stays exact
    y = np.repeat([0, 1, 2], [10, 10, 40])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _model(SPD(3), radius=3.4).fit(X, y)
    sampler = [w for w in caught if issubclass(w.category, ApproximateSamplerWarning)]
    mcmc = [entry["label"] for entry in model.privacy_report_.to_dict()["per_class"] if not entry["exact"]]
    assert len(mcmc) >= 2 and len(sampler) == 1
    assert f"classes {mcmc} (of 3)" in str(sampler[0].message)
    assert not model.privacy_report_.to_dict()["exact"]


def test_release_warnings_name_their_class():
    space = SPD(2, metric="log-euclidean")
    X, y = space.random_point(8, rng=0), np.repeat(["a", "b"], 4)
    with warnings.catch_warnings(record=True) as caught:  # noise far beyond float64's matrix exponential
        warnings.simplefilter("always")
        _model(space, epsilon=1e-4, radius=3.0).fit(X, y)
    numerical = sorted(str(w.message)[:10] for w in caught if issubclass(w.category, NumericalWarning))
    assert numerical == ["class 'a':", "class 'b':"]
    # An invalid record in class 'b': fit raises, and class 'a''s warning must not say first
    # that the record is elsewhere.
    X[-1] = np.nan
    with warnings.catch_warnings(record=True) as caught, pytest.raises(NotOnManifoldError):
        warnings.simplefilter("always")
        _model(space, epsilon=1e-4, radius=3.0).fit(X, y)
    assert not [w for w in caught if issubclass(w.category, NumericalWarning)]


def test_a_release_beyond_float64_still_classifies_through_its_coordinates():
    # At small ε on log-Euclidean SPD the released means overflow the matrix exponential; predict
    # must use their exact chart coordinates (a function of the release only) instead of failing.
    space = SPD(2, metric="log-euclidean")
    X, y = space.random_point(8, rng=0), np.repeat(["a", "b"], 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalWarning)
        model = _model(space, epsilon=1e-4, radius=3.0).fit(X, y)
    assert not np.all(np.isfinite(model.covmeans_))
    coords = np.stack([np.linalg.norm(space.to_coordinates(X)[:, None] - model._mean_coordinates[None], axis=-1)])[0]
    np.testing.assert_allclose(model.transform(X), coords)
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmin(coords, axis=1)])
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)


# ------------------------------------------------------------------ sklearn contract and bad input
def test_sklearn_contract():
    X, y = _spd_classes(3, 20, 2, 0.5, 0.5, seed=1)
    budget = BudgetAccountant(epsilon=3.0)
    model = _model(SPD(3), accountant=budget)
    copy = clone(model)
    assert copy.get_params().keys() == model.get_params().keys() and copy.accountant is budget
    assert np.array_equal(copy.center, model.center) and copy.radius == model.radius
    predicted = copy.fit_predict(X, y)
    assert np.array_equal(predicted, _model(SPD(3)).fit(X, y).predict(X))
    assert copy.score(X, y) == np.mean(predicted == y)
    assert copy.fit_transform(X, y).shape == (40, 2)
    assert not hasattr(clone(copy), "covmeans_")
    with pytest.raises(NotFittedError):
        model.predict(X)
    assert budget.spent == [(1.0, 0.0)] * 2


@pytest.mark.parametrize(
    ("change", "error", "words"),
    [
        (dict(sample_weight=np.ones(30)), InvalidParameterError, "sample_weight"),
        (dict(y=np.zeros(30, dtype=int)), InvalidDataError, "single class (0)"),
        (dict(y=np.repeat([0, 1], 14)), InvalidDataError, "shape (30,)"),
        (dict(y=np.repeat([0, 1], 15)[:, None]), InvalidDataError, "one label per record"),
        (dict(y=np.linspace(0.0, 1.0, 30)), InvalidDataError, "continuous"),
        (dict(classes=[0, 1, 2]), InvalidDataError, "classes [2] have no records"),
        (dict(classes=[0, 3]), InvalidDataError, "labels that are not in classes: [1]"),
        (dict(X=np.ones((30, 3, 4))), InvalidDataError, "shape (n, 3, 3)"),
        (dict(X=np.ones((30, 9))), InvalidDataError, "shape (n, 3, 3)"),
        (dict(space="SPD(3)"), InvalidTypeError, "Manifold"),
        (dict(accountant=object()), InvalidTypeError, "BudgetAccountant"),
    ],
)
def test_bad_input_is_refused_before_anything_is_charged(change, error, words):
    X, y = _spd_classes(3, 15, 2, 0.3, 0.5, seed=0)
    budget = BudgetAccountant(epsilon=5.0)
    fit_args = dict(X=X, y=y, sample_weight=None) | {
        key: change[key] for key in ("X", "y", "sample_weight") if key in change
    }
    params = dict(space=SPD(3), accountant=budget) | {
        key: change[key] for key in ("classes", "space", "accountant") if key in change
    }
    space = params.pop("space")
    with pytest.raises(error) as raised:
        _model(SPD(3), **params).set_params(space=space).fit(**fit_args)
    assert words in str(raised.value)
    assert budget.spent == []


def test_predict_checks_its_points():
    X, y = _spd_classes(3, 15, 2, 0.3, 0.5, seed=0)
    model = _model(SPD(3)).fit(X, y)
    with pytest.raises(InvalidDataError):
        model.predict(X[0])  # one matrix, not a batch
    with pytest.raises(NotOnManifoldError):
        model.predict(-X)


# ------------------------------------------------------------------ utility
@pytest.mark.parametrize("metric", ["affine", "log-euclidean"])
def test_accuracy_at_moderate_epsilon_is_close_to_the_non_private_one(metric):
    X, y = _spd_classes(4, 2000, 3, 0.2, 0.5, seed=11)
    train, test = slice(0, None, 2), slice(1, None, 2)
    reference = MDM(metric=PYRIEMANN_METRIC[metric]).fit(X[train], y[train]).score(X[test], y[test])
    model = _model(SPD(4, metric=metric)).fit(X[train], y[train])
    assert all(d.n_clipped == 0 for d in model.curator_diagnostics_.per_class)
    assert reference < 0.95 and abs(model.score(X[test], y[test]) - reference) < 0.015
