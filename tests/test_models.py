import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone

from geodp import frechet_mean
from geodp.accountant import BudgetAccountant
from geodp.errors import (
    AssumptionError,
    BudgetExceededError,
    InvalidDataError,
    InvalidParameterError,
    InvalidTypeError,
    NotOnManifoldError,
)
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.models import PrivateFrechetMean
from geodp.sensitivity import frechet_mean_sensitivity, max_radius

LE = SPD(3, metric="log-euclidean")


def data(n=60, seed=0):
    return LE.random_point(n, rng=seed)


def test_report_states_parameters_clipping_and_scale():
    X = data()
    radius = 2.0
    n_out = int(np.sum(LE.dist(np.eye(3), X) > radius))
    assert 0 < n_out < len(X)
    model = PrivateFrechetMean(
        LE, epsilon=0.25, delta=1e-7, center=np.eye(3), radius=radius, mechanism="tangent-gaussian", random_state=0
    ).fit(X)
    text = str(model.privacy_report_)
    for fact in (repr(0.25), repr(1e-7), f"{model.sensitivity_:.6g}", f"{model.mechanism_.scale:.6g}"):
        assert fact in text
    d = model.privacy_report_.to_dict()
    assert d["sensitivity"] == model.sensitivity_ and d["scale"] == model.mechanism_.scale  # full precision
    assert f"{n_out}" not in text.replace(f"{model.mechanism_.scale:.6g}", "").replace("60 records", "")
    assert model.curator_diagnostics_.n_clipped == n_out
    assert f"records clipped onto the ball's boundary : {n_out}" in str(model.curator_diagnostics_)
    d = model.privacy_report_.to_dict()
    assert d["epsilon"] == 0.25 and d["delta"] == 1e-7 and d["exact"] is True and "n_clipped" not in d
    assert model.sensitivity_ == frechet_mean_sensitivity(LE, radius, 60)


def test_released_mean_has_the_exact_laplace_law_around_the_clipped_mean():
    X = data(40, 1)
    center, radius = np.eye(3), 1.5
    clipped, _ = LE.clip_to_ball(X, center, radius)
    truth = LE.to_coordinates(frechet_mean(LE, clipped))
    rng = np.random.default_rng(2)
    errors = []
    for _ in range(3000):
        m = PrivateFrechetMean(LE, epsilon=2.0, center=center, radius=radius, random_state=rng).fit(X)
        errors.append(np.linalg.norm(m.mean_coordinates_ - truth))
    sigma = 2 * radius / 40 / 2.0
    assert stats.kstest(errors, stats.gamma(a=LE.dim, scale=sigma).cdf).pvalue > 1e-3
    assert stats.kstest(errors, stats.gamma(a=LE.dim, scale=1.5 * sigma).cdf).pvalue < 1e-6
    np.testing.assert_allclose(LE.to_coordinates(m.mean_), m.mean_coordinates_, atol=1e-10)


def test_euclidean_space_and_reproducibility():
    X = np.random.default_rng(3).normal(size=(100, 2))
    kw = dict(epsilon=1.0, center=np.zeros(2), radius=3.0, random_state=4)
    a = PrivateFrechetMean(Euclidean(2), **kw).fit(X).mean_
    b = PrivateFrechetMean(Euclidean(2), **kw).fit(X).mean_
    np.testing.assert_array_equal(a, b)
    g = PrivateFrechetMean(Euclidean(2), mechanism="tangent-gaussian", delta=1e-6, **kw).fit(X)
    assert g.mean_.shape == (2,)


def test_accountant_refuses_overspending_before_release():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-6)
    X = data()
    kw = dict(center=np.eye(3), radius=3.0, accountant=acc, random_state=0)
    PrivateFrechetMean(LE, epsilon=0.6, **kw).fit(X)
    model = PrivateFrechetMean(LE, epsilon=0.6, **kw)
    with pytest.raises(BudgetExceededError, match="remaining: epsilon=0.4"):
        model.fit(X)
    assert not hasattr(model, "mean_")
    assert acc.total_spent == (0.6, 0.0)


def test_sklearn_contract():
    model = PrivateFrechetMean(LE, epsilon=1.0, center=np.eye(3), radius=2.0)
    params = model.get_params()
    assert params["epsilon"] == 1.0 and params["mechanism"] == "laplace"
    assert clone(model).get_params()["radius"] == 2.0


@pytest.mark.parametrize(
    "kwargs,X,error,match",
    [
        (dict(center=None), None, InvalidParameterError, "public data domain"),
        (dict(radius=0.0), None, InvalidParameterError, "radius"),
        (dict(center=-np.eye(3)), None, NotOnManifoldError, "center"),
        (dict(center=np.stack([np.eye(3)] * 2)), None, InvalidDataError, "one point"),
        (dict(mechanism="gaussian"), None, InvalidParameterError, "mechanism"),
        (dict(mechanism="tangent-gaussian", delta=0.0), None, InvalidParameterError, "delta"),
        (
            dict(mechanism="tangent-gaussian", delta=1e-6, calibration="classical", epsilon=2.0),
            None,
            InvalidParameterError,
            "epsilon < 1",
        ),
        (dict(epsilon=-1.0), None, InvalidParameterError, "epsilon"),
        (dict(accountant="budget"), None, InvalidTypeError, "accountant"),
        ({}, np.eye(4)[None].repeat(5, 0), InvalidDataError, r"shape \(n, 3, 3\)"),
        ({}, np.eye(3), InvalidDataError, r"shape \(n, 3, 3\)"),
        # record-level problems: the message names neither the records nor their number
        ({}, np.full((4, 3, 3), np.inf), NotOnManifoldError, "not points of SPD"),
        ({}, np.zeros((0, 3, 3)), InvalidDataError, "n >= 1"),
        ({}, np.array([[[1, 2, 0], [0, 1, 0], [0, 0, 1]]] * 3, dtype=float), NotOnManifoldError, "invalid_records"),
    ],
)
def test_bad_input_raises_typed_errors(kwargs, X, error, match):
    params = dict(epsilon=1.0, center=np.eye(3), radius=2.0) | kwargs
    with pytest.raises(error, match=match):
        PrivateFrechetMean(LE, **params).fit(data() if X is None else X)


def test_tangent_gaussian_is_refused_on_curved_spaces():
    with pytest.raises(InvalidParameterError, match="flat"):
        PrivateFrechetMean(
            SPD(3), epsilon=1.0, delta=1e-6, center=np.eye(3), radius=2.0, mechanism="tangent-gaussian"
        ).fit(data())


def test_space_must_be_a_manifold():
    with pytest.raises(InvalidTypeError):
        PrivateFrechetMean("SPD", epsilon=1.0, center=np.eye(3), radius=2.0).fit(data())


CURVED = [
    (Sphere(2), 0.5),
    (Hyperbolic(2), 1.0),
    (KendallShape(6), 0.3),
    (SPD(2), 1.0),
]


@pytest.mark.parametrize("space, radius", CURVED, ids=lambda v: repr(v))
def test_private_frechet_mean_on_curved_spaces(space, radius):
    center = space.random_point(rng=20)
    X = space.exp(center, space.random_tangent(center, size=40, rng=21) * radius * 0.6)
    model = PrivateFrechetMean(space, epsilon=1.0, center=center, radius=radius, random_state=22).fit(X)
    assert model.mean_.shape == space.point_shape and space.belongs(model.mean_)
    # the bound plus the Karcher-flow tolerance margin 2·tol/μ (tiny)
    assert 0 < model.sensitivity_ - frechet_mean_sensitivity(space, radius, 40) < 1e-6
    text = str(model.privacy_report_)
    assert "R21 Thm 2" in text and f"r* = {max_radius(space):.6g}" in text
    assert model.privacy_report_.to_dict()["exact"] is True
    assert 0 < model.curator_diagnostics_.n_clipped < 40 and model.curator_diagnostics_.mean_converged


def test_released_sphere_mean_has_the_exact_laplace_law():
    from geodp.distributions.radial import RadialLaw

    space, radius = Sphere(2), 0.6
    center = np.array([0.0, 0.0, 1.0])
    X = space.exp(center, space.random_tangent(center, size=30, rng=23) * 0.5)
    clipped, _ = space.clip_to_ball(X, center, radius)
    mean = frechet_mean(space, clipped)
    releases = np.stack(
        [
            PrivateFrechetMean(space, epsilon=2.0, center=center, radius=radius, random_state=s).fit(X).mean_
            for s in range(1500)
        ]
    )
    sigma = frechet_mean_sensitivity(space, radius, 30) / 2.0
    rho = space.dist(mean, releases)
    assert stats.kstest(rho, RadialLaw(space, sigma).cdf).pvalue > 1e-3
    assert stats.kstest(rho, RadialLaw(space, 1.5 * sigma).cdf).pvalue < 1e-6


def test_non_normalisable_laplace_is_truncated_with_twice_the_scale():
    space = Hyperbolic(3)
    center = space.origin
    X = space.exp(center, space.random_tangent(center, size=4, rng=24) * 0.3)
    model = PrivateFrechetMean(space, epsilon=1.0, center=center, radius=1.0, random_state=25).fit(X)
    delta = frechet_mean_sensitivity(space, 1.0, 4)  # 0.5: σ = Δ/ε = 0.5 is not normalisable (needs < 0.5)
    assert model.mechanism_.truncated and model.mechanism_.scale == 2 * model.sensitivity_
    assert 0 < model.sensitivity_ - delta < 1e-6  # the Karcher-flow tolerance margin
    assert space.dist(center, model.mean_) <= 1.0
    assert "σ = 2Δ/ε" in model.privacy_report_ and "not normalisable" in model.privacy_report_


@pytest.mark.parametrize(
    "space, center, radius, error, match",
    [
        (Sphere(2), np.array([0.0, 0.0, 1.0]), np.pi / 4, AssumptionError, "r\\*"),
        (KendallShape(5), np.eye(5, 2), 0.4, AssumptionError, "r\\*"),
        (Sphere(2), np.array([0.0, 0.0, 2.0]), 0.5, NotOnManifoldError, "center"),
        (KendallShape(5), np.ones((5, 2)), 0.3, NotOnManifoldError, "degenerate"),
    ],
)
def test_curved_bad_input(space, center, radius, error, match):
    X = space.random_point(10, rng=26)
    with pytest.raises(error, match=match):
        PrivateFrechetMean(space, epsilon=1.0, center=center, radius=radius).fit(X)


def test_kendall_landmark_mismatch_is_named():
    space = KendallShape(5)
    with pytest.raises(InvalidDataError, match=r"shape \(n, 5, 2\)"):
        PrivateFrechetMean(space, epsilon=1.0, center=space.random_point(rng=0), radius=0.3).fit(
            np.random.default_rng(1).standard_normal((10, 6, 2))
        )
