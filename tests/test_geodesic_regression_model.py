"""PrivateGeodesicRegression: exact law on flat spaces, MH against it, reports, bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from geodp.accountant import BudgetAccountant
from geodp.errors import (
    ApproximateSamplerWarning,
    AssumptionError,
    BudgetExceededError,
    InvalidDataError,
    InvalidParameterError,
    NotOnManifoldError,
    PrivacyLeakWarning,
)
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.models import PrivateGeodesicRegression
from geodp.models.geodesic_sampling import exact_flat_release, mcmc_draws
from geodp.regression import geodesic_regression
from geodp.sensitivity import geodesic_regression_sensitivity

NORTH = np.array([0.0, 0.0, 1.0])


def _line_data(space, base, n, slope, noise, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 1.0, n)
    direction = np.asarray(slope, dtype=float)
    Y = space.exp(base, np.multiply.outer(t - 0.5, direction))
    Y = space.exp(Y, noise * space.random_tangent(Y, rng=seed + 1))
    return t, Y


@pytest.fixture
def short_chains(monkeypatch):
    """Short MH runs for the tests that check wiring, not the law (the law is tested with the
    full settings in the tests that do not use this fixture)."""
    import geodp.models.geodesic_regression as module

    monkeypatch.setattr(module, "BURN_IN", 600)
    monkeypatch.setattr(module, "THINNING", 200)


def _quiet_fit(model, x, Y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateSamplerWarning)
        return model.fit(x, Y)


# ------------------------------------------------------------------------ flat, exact
@pytest.mark.parametrize("space,center", [(Euclidean(3), np.zeros(3)), (SPD(2, metric="log-euclidean"), np.eye(2))])
def test_flat_release_tends_to_ols_as_epsilon_grows(space, center):
    slope = space.random_tangent(center, rng=3) * 0.5
    t, Y = _line_data(space, center, 300, slope, 0.1)
    x = 10.0 + 5.0 * t  # original units: the model maps x_bounds to [-1/2, 1/2]
    model = PrivateGeodesicRegression(
        space, epsilon=1e9, center=center, radius=3.0, x_bounds=(10.0, 15.0), random_state=0
    ).fit(x, Y)
    # OLS in the chart, in the model's parametrisation (centred at the middle of x_bounds)
    coords = space.to_coordinates(Y)
    design = np.column_stack([np.ones_like(x), x - 12.5])
    beta, *_ = np.linalg.lstsq(design, coords, rcond=None)
    assert np.allclose(space.to_coordinates(model.intercept_), beta[0], atol=1e-6)
    fitted = model.predict(np.array([11.0, 14.0]))
    assert np.allclose(space.to_coordinates(fitted), beta[0] + np.outer([-1.5, 1.5], beta[1]), atol=1e-6)
    report = model.privacy_report_.to_dict()
    # n·ε = 3e11: no acceptance bound holds for every dataset, so the release is labelled approximate
    assert report["exact"] is False and report["delta"] == 0.0
    assert not model.curator_diagnostics_.sampler_fell_back


def test_flat_release_follows_the_exact_kng_law():
    """‖A(θ − θ̂)‖_F / σ ~ Gamma(q·d) for the untruncated law (a large ball): KS test, and the
    same test with the scale off by ×1.5 must fail."""
    space = Euclidean(2)
    t, Y = _line_data(space, np.zeros(2), 60, [0.4, -0.2], 0.2, seed=4)
    xs = (t - 0.5)[:, None]
    n = len(t)
    radius, velocity = 100.0, 200.0
    scale = 0.05
    rng = np.random.default_rng(7)
    releases = [exact_flat_release(space, xs, Y, np.zeros(2), radius, velocity, scale, None, rng) for _ in range(3000)]
    assert not any(info["fell_back"] for *_, info in releases)  # every draw came from the exact race
    draws = np.array([np.concatenate([p, v.ravel()]) for p, v, _ in releases])
    design = np.column_stack([np.ones(n), xs[:, 0]])
    gram = design.T @ design / n
    theta_hat = np.linalg.solve(design.T @ design, design.T @ Y)
    theta = draws.reshape(-1, 2, 2)
    radial = np.linalg.norm(np.einsum("ij,njk->nik", gram, theta - theta_hat), axis=(1, 2))
    assert stats.kstest(radial / scale, stats.gamma(4).cdf).pvalue > 0.01
    assert stats.kstest(radial / (1.5 * scale), stats.gamma(4).cdf).pvalue < 1e-6


def test_mh_sampler_agrees_with_the_exact_law_on_a_flat_space():
    """The MH machinery used on curved spaces (tangent-bundle moves, public start), run on
    Euclidean data, reproduces the exact truncated law (two-sample KS per coordinate)."""
    space = Euclidean(1)
    t, Y = _line_data(space, np.zeros(1), 40, [0.6], 0.3, seed=5)
    xs = (t - 0.5)[:, None]
    radius, velocity, scale = 0.5, 1.0, 0.02
    tau = 2 * radius + 0.5 * velocity  # no residual is clipped: the field is affine
    rng = np.random.default_rng(11)
    releases = [exact_flat_release(space, xs, Y, np.zeros(1), radius, velocity, scale, None, rng) for _ in range(800)]
    assert not any(info["fell_back"] for *_, info in releases)
    exact = np.array([np.concatenate([p, v.ravel()]) for p, v, _ in releases])
    mh = mcmc_draws(space, xs, Y, np.zeros(1), radius, velocity, tau, scale, rng, n_chains=800).samples[0]
    mh = mh.reshape(800, -1)
    for j in range(2):
        assert stats.ks_2samp(exact[:, j], mh[:, j]).pvalue > 0.01, j


# -------------------------------------------------------------------------- curved
@pytest.mark.parametrize(
    "space,center,slope",
    [
        (Sphere(2), NORTH, [0.5, 0.0, 0.0]),
        (Hyperbolic(2), np.array([1.0, 0.0, 0.0]), [0.0, 0.6, 0.0]),
    ],
)
def test_curved_release_is_close_to_the_fit_and_says_it_is_approximate(space, center, slope):
    t, Y = _line_data(space, center, 80, slope, 0.05, seed=2)
    p_hat, v_hat = geodesic_regression(space, t - 0.5, Y)
    model = PrivateGeodesicRegression(
        space, epsilon=60.0, center=center, radius=0.6, x_bounds=(0.0, 1.0), mechanism="kng", random_state=1
    )
    with pytest.warns(ApproximateSamplerWarning):
        model.fit(t, Y)
    assert float(space.dist(model.intercept_, p_hat)) < 0.05
    assert float(np.linalg.norm(model.coef_ - v_hat)) < 0.2
    report = model.privacy_report_.to_dict()
    assert report["exact"] is False and "Metropolis" in report["sampler"]
    assert model.curator_diagnostics_.sampler_acceptance is not None
    assert str(model.curator_diagnostics_).startswith("CURATOR-ONLY")


def test_kendall_release_runs_with_two_covariates(short_chains):
    space = KendallShape(5)
    base = space.random_point(rng=0)
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (150, 2))
    slopes = space.random_tangent(np.stack([base, base]), rng=1) * 0.2
    Y = space.exp(base, np.tensordot(x - 0.5, slopes, axes=1))
    model = _quiet_fit(
        PrivateGeodesicRegression(
            space, epsilon=10.0, center=base, radius=0.3, x_bounds=([0, 0], [1, 1]), random_state=0
        ),
        x,
        Y,
    )
    assert model.coef_.shape == (2, 5, 2)
    assert np.all(space.belongs(model.predict(x[:3])))


# --------------------------------------------------------------------------- reports
def test_report_is_identical_for_neighbours_that_differ_in_clipping():
    space = Euclidean(2)
    t, Y = _line_data(space, np.zeros(2), 50, [0.3, 0.1], 0.1)
    Y2, t2 = Y.copy(), t.copy()
    Y2[0] = [50.0, -50.0]  # far outside the ball: clipped
    t2[1] = 7.0  # outside x_bounds: clipped
    reports, diagnostics = [], []
    for x_, Y_ in ((t, Y), (t2, Y2)):
        m = PrivateGeodesicRegression(
            space, epsilon=1.0, center=np.zeros(2), radius=1.0, x_bounds=(0, 1), random_state=0
        ).fit(x_, Y_)
        reports.append((str(m.privacy_report_), m.privacy_report_.to_dict()))
        diagnostics.append(m.curator_diagnostics_)
    assert reports[0] == reports[1]
    assert (diagnostics[0].n_clipped_x, diagnostics[0].n_clipped_y) == (0, 0)
    assert (diagnostics[1].n_clipped_x, diagnostics[1].n_clipped_y) == (1, 1)


def test_report_states_the_sound_bound_and_scale():
    space = Euclidean(1)
    t, Y = _line_data(space, np.zeros(1), 80, [0.5], 0.1)
    m = PrivateGeodesicRegression(
        space, epsilon=2.0, center=np.zeros(1), radius=1.0, x_bounds=(0, 1), random_state=0
    ).fit(t, Y)
    d = m.privacy_report_.to_dict()
    tau = 2 * 1.0 + 0.5 * 2.0  # default V = 2r, x_max = 1/2
    expected = geodesic_regression_sensitivity(space, 80, residual_bound=tau, x_bound=0.5, velocity_bound=2.0)
    assert d["residual_bound"] == pytest.approx(tau, rel=1e-11)
    assert d["sensitivity"] == pytest.approx(expected.joint, rel=1e-11)
    assert d["scale"] == pytest.approx(2 * expected.joint / 2.0)
    assert "epsilon = 2.0" in m.privacy_report_


def test_as_published_warns_and_says_it_is_not_dp(short_chains):
    space = Sphere(2)
    t, Y = _line_data(space, NORTH, 60, [0.4, 0, 0], 0.05)
    model = PrivateGeodesicRegression(
        space, epsilon=2.0, center=NORTH, radius=0.5, x_bounds=(0, 1), as_published=True, random_state=0
    )
    with pytest.warns(PrivacyLeakWarning), warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateSamplerWarning)
        model.fit(t, Y)
    d = model.privacy_report_.to_dict()
    assert d["as_published"] is True and "NOT ε-DP" in d["mechanism"]
    assert d["sensitivity_footpoint"] == pytest.approx(2 * d["residual_bound"] * math.cos(1.0) / 60)


def test_accountant_is_charged_and_clone_keeps_parameters():
    accountant = BudgetAccountant(epsilon=1.5)
    space = Euclidean(1)
    t, Y = _line_data(space, np.zeros(1), 40, [0.5], 0.1)
    model = PrivateGeodesicRegression(
        space, epsilon=1.0, center=np.zeros(1), radius=1.0, x_bounds=(0, 1), accountant=accountant, random_state=0
    )
    model.fit(t, Y)
    assert accountant.total_spent[0] == pytest.approx(1.0)
    with pytest.raises(BudgetExceededError):
        clone(model).fit(t, Y)


# ------------------------------------------------------------------------- bad input
def _model(space=None, **kwargs):
    space = space or Euclidean(1)
    args = dict(epsilon=1.0, center=np.zeros(space.point_shape), radius=1.0, x_bounds=(0, 1), random_state=0) | kwargs
    return PrivateGeodesicRegression(space, **args)


def test_not_fitted():
    with pytest.raises(NotFittedError):
        _model().predict([0.5])


@pytest.mark.parametrize(
    "kwargs,error",
    [
        (dict(epsilon=0.0), InvalidParameterError),
        (dict(x_bounds=(1, 0)), InvalidParameterError),
        (dict(x_bounds=(0, np.inf)), InvalidParameterError),
        (dict(x_bounds=None), InvalidParameterError),
        (dict(on_invalid="drop"), InvalidParameterError),
        (dict(residual_bound=-1.0), InvalidParameterError),
    ],
)
def test_bad_parameters(kwargs, error):
    t, Y = _line_data(Euclidean(1), np.zeros(1), 20, [0.5], 0.1)
    with pytest.raises(error):
        _model(**kwargs).fit(t, Y)


def test_velocity_bound_beyond_injectivity_is_refused():
    t, Y = _line_data(Sphere(2), NORTH, 20, [0.3, 0, 0], 0.05)
    with pytest.raises(AssumptionError, match="injectivity"):
        _model(Sphere(2), center=NORTH, radius=0.5, velocity_bound=7.0).fit(t, Y)


def test_affine_invariant_spd_release_uses_the_negative_curvature_bound(short_chains):
    """κ_min = −1/2: Δ_p carries cosh(√(1/2)·x_max·V); the release is SPD (MH)."""
    space = SPD(2)
    x = np.linspace(0.0, 1.0, 12)
    Y = space.exp(np.eye(2), np.multiply.outer(x - 0.5, np.diag([0.3, -0.2])))
    model = _quiet_fit(_model(space, center=np.eye(2), radius=1.0, epsilon=50.0, mechanism="kng"), x, Y)
    d = model.privacy_report_.to_dict()
    tau, velocity = d["residual_bound"], d["velocity_bound"]
    assert d["sensitivity_footpoint"] == pytest.approx(2 * tau * math.cosh(math.sqrt(0.5) * 0.5 * velocity) / 12)
    assert d["exact"] is False
    assert np.all(np.linalg.eigvalsh(model.intercept_) > 0)


@pytest.mark.parametrize(
    "x,Y,error",
    [
        (np.linspace(0, 1, 10), np.zeros((9, 1)), InvalidDataError),  # mismatched n
        (np.linspace(0, 1, 2), np.zeros((2, 1)), InvalidDataError),  # n < m + 2
        (np.zeros((10, 2)), np.zeros((10, 1)), InvalidDataError),  # m does not match x_bounds
        (["a"] * 10, np.zeros((10, 1)), NotOnManifoldError),  # text entries: invalid records (on_invalid="raise")
    ],
)
def test_bad_data(x, Y, error):
    with pytest.raises(error):
        _model().fit(x, Y)


def test_constant_covariate_releases_and_tells_only_the_curator():
    """A singular design must not make fit raise (that would depend on one record): the KNG law
    is proper on the bounded support and is sampled by uniform proposals."""
    t, Y = _line_data(Euclidean(1), np.zeros(1), 30, [0.5], 0.1)
    model = _model().fit(np.full(30, 0.3), Y)
    assert np.all(np.isfinite(model.coef_))
    assert any("singular" in w for w in model.curator_diagnostics_.warnings)
    reference = _model().fit(t, Y)
    assert str(model.privacy_report_) == str(reference.privacy_report_)


def test_invalid_records_raise_or_are_replaced():
    t, Y = _line_data(Euclidean(1), np.zeros(1), 30, [0.5], 0.1)
    t[3] = np.nan
    with pytest.raises(NotOnManifoldError):
        _model().fit(t, Y)
    model = _model(on_invalid="center").fit(t, Y)
    assert np.all(np.isfinite(model.intercept_))
    assert model.curator_diagnostics_.n_clipped_x == 0


def test_object_covariates_invalidate_only_their_record():
    """None or text inside an object array is an invalid record, not an error about the data."""
    t, Y = _line_data(Euclidean(1), np.zeros(1), 30, [0.5], 0.1)
    x = t.astype(object)
    x[2], x[5] = None, "n/a"
    with pytest.raises(NotOnManifoldError) as info:
        _model().fit(x, Y)
    assert "n/a" not in str(info.value)
    assert np.all(np.isfinite(_model(on_invalid="center").fit(x, Y).intercept_))


def test_as_published_refuses_to_run_where_its_warning_is_filtered_out():
    t, Y = _line_data(Euclidean(1), np.zeros(1), 20, [0.5], 0.1)
    model = _model(as_published=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidParameterError, match="PrivacyLeakWarning can be seen"):
            model.fit(t, Y)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=PrivacyLeakWarning)
        with pytest.raises(InvalidParameterError):
            model.fit(t, Y)
    with warnings.catch_warnings():  # a re-audit: an "always" filter for some other line in front
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.filterwarnings("always", category=PrivacyLeakWarning, lineno=1)
        with pytest.raises(InvalidParameterError):
            model.fit(t, Y)
    with warnings.catch_warnings():  # ... or for some other module
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.filterwarnings("always", category=PrivacyLeakWarning, module="elsewhere")
        with pytest.raises(InvalidParameterError):
            model.fit(t, Y)


def _lorentz_boost(distance, phi=0.7):
    c, s = math.cosh(distance), math.sinh(distance)
    u = np.array([math.cos(phi), math.sin(phi)])
    B = np.eye(3)
    B[0, 0], B[0, 1:], B[1:, 0] = c, s * u, s * u
    B[1:, 1:] = np.eye(2) + (c - 1) * np.outer(u, u)
    return B


def test_far_hyperbolic_centre_keeps_the_sensitivity_bound():
    """Neighbours far out (distance 37 from the origin): computed there, the gradient norms lose
    all precision and their gap exceeds Δ; the model recentres them at the public centre first,
    after which the gap stays within the bound."""
    from geodp.models.geodesic_regression import _recentring
    from geodp.models.geodesic_sampling import joint_gradient_norm

    H = Hyperbolic(2)
    o = H.origin
    rng = np.random.default_rng(0)
    n, r, V = 40, 1.0, 2.0
    tau = 2 * r + 0.5 * V
    delta = geodesic_regression_sensitivity(H, n, residual_bound=tau, x_bound=0.5, velocity_bound=V).joint
    x = rng.uniform(-0.5, 0.5, (n, 1))
    x[0] = 0.5
    Y = H._exp(np.tile(o, (n, 1)), H.boost(np.tile(o, (n, 1)), rng.normal(size=(n, 2))) * 0.45)
    Y2 = Y.copy()
    Y[0] = H._exp(o, H.boost(o, np.array([0.99, 0.0])))
    Y2[0] = H._exp(o, H.boost(o, np.array([-0.99, 0.0])))
    B = _lorentz_boost(37.0)
    far, far2, centre = H.project(Y @ B.T), H.project(Y2 @ B.T), B @ o
    far_ok = Hyperbolic(2)
    far_ok.RECENTRING_LIMIT = 40.0  # the model refuses centres beyond 12; the isometry is measured here
    to_origin, _, origin = _recentring(far_ok, centre)
    near, near2 = to_origin(far), to_origin(far2)
    assert np.allclose(origin, o)
    gaps, raw_gaps = [], []
    for _ in range(60):
        p = H._exp(o, H.boost(o, rng.normal(size=2)) * 0.5 * rng.random())
        v = H.boost(p, rng.normal(size=2))
        v = (v * V * rng.random() / math.sqrt(float(H._inner(p, v, v))))[None]
        a, b = (float(joint_gradient_norm(H, p, v, x, Z, tau)) for Z in (near, near2))
        gaps.append(abs(a - b))
        pb, vb = H.project(B @ p), v @ B.T
        a, b = (float(joint_gradient_norm(H, pb, vb, x, Z, tau)) for Z in (far, far2))
        raw_gaps.append(abs(a - b) if np.isfinite(a - b) else np.inf)
    assert max(gaps) <= delta * (1 + 1e-9)
    assert max(raw_gaps) > delta  # the test has power: without recentring the bound breaks


def test_reach_beyond_float64_precision_is_refused():
    t, Y = _line_data(Hyperbolic(2), np.array([1.0, 0.0, 0.0]), 20, [0.0, 0.3, 0.0], 0.05)
    with pytest.raises(AssumptionError, match="float64"):
        _model(Hyperbolic(2), center=np.array([1.0, 0.0, 0.0]), radius=8.0, velocity_bound=10.0).fit(t, Y)


def test_end_to_end_scale_of_the_exact_release():
    """Fit the model itself many times (new seed each) and KS-test ‖A(θ − θ̂)‖/σ against
    Gamma(q·d) with σ computed here from the formula, not taken from the model: a model that
    used σ/2 (or 2σ) internally fails. Large ball: truncation is negligible."""
    space = Euclidean(1)
    t, Y = _line_data(space, np.zeros(1), 50, [0.5], 0.2, seed=9)
    n, eps, radius, velocity = 50, 200.0, 40.0, 80.0
    tau = 2 * radius + 0.5 * velocity
    sigma = 2 * math.hypot(2 * tau / n, 2 * tau * 0.5 / n) / eps
    xs = t - 0.5
    design = np.column_stack([np.ones(n), xs])
    gram = design.T @ design / n
    theta_hat = np.linalg.solve(design.T @ design, design.T @ Y)
    radial = []
    for seed in range(1500):
        m = PrivateGeodesicRegression(
            space,
            epsilon=eps,
            center=np.zeros(1),
            radius=radius,
            x_bounds=(0, 1),
            velocity_bound=velocity,
            random_state=seed,
        ).fit(t, Y)
        theta = np.stack([m.intercept_, m.coef_])  # coef_ per unit of x = per unit of x̃ here
        radial.append(np.linalg.norm(gram @ (theta - theta_hat)))
    radial = np.array(radial)
    assert stats.kstest(radial / sigma, stats.gamma(2).cdf).pvalue > 0.01
    assert stats.kstest(radial / (2 * sigma), stats.gamma(2).cdf).pvalue < 1e-6
    assert stats.kstest(radial / (0.5 * sigma), stats.gamma(2).cdf).pvalue < 1e-6


@pytest.mark.parametrize(
    "space,center",
    [
        (Hyperbolic(2), np.array([math.cosh(20.0), math.sinh(20.0), 0.0])),
        (SPD(2), np.diag([1e-7, 1e7])),  # condition e^32: PD beyond rounding, too far to recentre
    ],
)
def test_centres_too_far_to_recentre_accurately_are_refused(space, center):
    x = np.linspace(0.0, 1.0, 10)
    Y = np.repeat(center[None], 10, axis=0)
    with pytest.raises(AssumptionError, match="float64"):
        _model(space, center=center, radius=0.5).fit(x, Y)


def test_recentring_round_trip_on_a_badly_conditioned_spd_centre():
    """Within the limit, the isometry to the origin and back is accurate and symmetric."""
    from geodp.models.geodesic_regression import _recentring

    space = SPD(2)
    center = np.diag([1e-5, 1e5])
    Y = space.exp(center, space.random_tangent(np.repeat(center[None], 5, axis=0), rng=0) * 0.3)
    to_origin, from_origin, origin = _recentring(space, center)
    moved = to_origin(Y)
    assert np.allclose(moved, np.swapaxes(moved, -1, -2), rtol=0, atol=0)
    assert np.allclose(space.dist(moved, origin), space.dist(Y, center), atol=1e-8)
    back, _ = from_origin(moved[0], np.zeros((1, 2, 2)))
    assert float(space.dist(back, Y[0])) < 1e-8


def test_flat_release_is_scale_equivariant_far_from_unit_size():
    """Sampled in units of the domain (a power of two): data and domain scaled by 2^450 give the
    release scaled by 2^450 (or 2^-450), bit for bit; beyond Euclidean space's representable radius (1e150:
    distances would overflow) the ball is refused before the charge (an audit's radius 1e160
    released the centre itself)."""
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 200)
    Y = np.stack([0.3 + 0.5 * x, -0.2 * x], 1) + 0.05 * rng.standard_normal((200, 2))
    fits = []
    for unit in (1.0, 2.0**450, 2.0**-450):
        model = PrivateGeodesicRegression(
            Euclidean(2),
            epsilon=0.1,
            center=np.zeros(2),
            radius=unit,
            x_bounds=(0, 1),
            velocity_bound=2 * unit,
            random_state=1,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ApproximateSamplerWarning)
            fits.append((unit, model.fit(x, unit * Y)))
    (_, small), *others = fits
    assert not small.curator_diagnostics_.sampler_fell_back
    for unit, big in others:
        np.testing.assert_array_equal(big.coef_, unit * small.coef_)
        np.testing.assert_array_equal(big.intercept_, unit * small.intercept_)
    with pytest.raises(AssumptionError, match="exceeds"):
        PrivateGeodesicRegression(Euclidean(2), epsilon=0.1, center=np.zeros(2), radius=1e160, x_bounds=(0, 1)).plan(
            x, Y
        )


def test_radius_and_velocity_bound_far_apart_are_refused_before_the_charge():
    """A re-audit: velocity_bound 1.7e308 overflowed the sampling unit after the charge, and radius
    1e-300 against velocity 1e300 released the centre; radius 5e-324 was refused as "scale"."""
    from geodp.accountant import BudgetAccountant

    x, Y = np.linspace(0, 1, 20), np.zeros((20, 2))
    for radius, velocity in [(1.0, 1.7e308), (1e-140, 1e20), (5e-324, None)]:
        accountant = BudgetAccountant(epsilon=10.0)
        model = PrivateGeodesicRegression(
            Euclidean(2),
            epsilon=1.0,
            center=np.zeros(2),
            radius=radius,
            x_bounds=(0, 1),
            velocity_bound=velocity,
            accountant=accountant,
        )
        with pytest.raises(AssumptionError, match="radius|velocity_bound"):
            model.fit(x, Y)
        assert accountant.total_spent == (0.0, 0.0)
