"""AdaSSP in PrivateLinearRegression (docs/math.md §9.2): the sensitivity of each released statistic
against optimised neighbours, the noise law against the calibrated Gaussian (a ×1.5 mutant is
caught), the GDP calibration, utility at huge ε, the accountant and the refusals."""

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy import optimize, stats
from sklearn.linear_model import LinearRegression, Ridge

from geodp.accountant import BudgetAccountant
from geodp.errors import BudgetExceededError, InvalidDataError, InvalidParameterError
from geodp.models.adassp import AdasspCalibration, adassp_calibration, adassp_release, perturbed_statistics
from geodp.models.linear_regression import PrivateLinearRegression, _normalisation

BOUNDS = dict(bounds_X=(0.0, 10.0), bounds_y=(-4.0, 8.0))


def data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, size=(n, 2))
    y = 1.0 + X @ np.array([0.5, -0.2]) + rng.normal(scale=0.5, size=n)
    return X, np.clip(y, -4.0, 8.0)


def gdp_mu(epsilon, delta):
    """The μ whose GDP privacy curve passes through (ε, δ), solved here from Dong, Roth & Su
    (2022, Cor. 2.13): δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)."""

    def excess(mu):
        tail = math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2)
        return stats.norm.cdf(-epsilon / mu + mu / 2) - tail - delta

    return optimize.brentq(excess, 1e-3, 50.0, xtol=1e-14)


# --- sensitivity against optimised neighbours ------------------------------------------------


def _largest_change(statistic, lo, hi, y_lo, y_hi, intercept, *, n=10, starts=6, seed=0):
    """The largest change of ``statistic`` (of the summed moments) found by L-BFGS-B over the
    replaced record and its replacement (both anywhere in the public box), from random starts
    and the box's corners, with n − 1 fixed random records."""
    m, d = len(lo), len(y_lo)
    maps = _normalisation(lo, hi, y_lo, y_hi, intercept)
    rng = np.random.default_rng(seed)
    rest_x, rest_y = rng.uniform(lo, hi, size=(n - 1, m)), rng.uniform(y_lo, y_hi, size=(n - 1, d))

    def moments(record):
        Z = maps["to_design"](np.vstack([rest_x, record[:m]]))
        R = maps["to_response"](np.vstack([rest_y, record[m:]]))
        return Z.T @ Z, Z.T @ R

    def change(v):
        (g1, b1), (g2, b2) = moments(v[: m + d]), moments(v[m + d :])
        if statistic == "lambda_min":
            return abs(np.linalg.eigvalsh(g1)[0] - np.linalg.eigvalsh(g2)[0])
        return float(np.linalg.norm(g1 - g2) if statistic == "gram" else np.linalg.norm(b1 - b2))

    box = [*zip(np.r_[lo, y_lo], np.r_[hi, y_hi])] * 2
    corners = [np.array(c) for c in zip(*[rng.choice(side, size=starts) for side in box])]
    randoms = [np.array([rng.uniform(a, b) for a, b in box]) for _ in range(starts)]
    best = 0.0
    for start in corners + randoms:
        found = optimize.minimize(lambda v: -change(v), start, bounds=box, method="L-BFGS-B")
        best = max(best, change(found.x), change(start))
    return best


SENSITIVITY_CASES = {
    # name: (bounds, intercept, hand-derived B², Y): B = max‖x̃‖, Y = max‖ỹ‖ in normalised units
    "intercept, 2 covariates": ((np.zeros(2), np.full(2, 3.0), np.array([-1.0]), np.array([2.0])), True, 1.5, 0.5),
    "no intercept, symmetric box": (
        (np.full(2, -3.0), np.full(2, 3.0), np.array([-1.0, -2.0]), np.array([1.0, 2.0])),
        False,
        2.0,
        math.sqrt(0.25 + 0.25),
    ),
}


@pytest.mark.parametrize("case", list(SENSITIVITY_CASES))
@pytest.mark.parametrize("index, statistic", [(0, "lambda_min"), (1, "gram"), (2, "target")])
def test_sensitivity_of_each_statistic_holds_against_optimised_neighbours(case, index, statistic):
    bounds, intercept, b2, y_max = SENSITIVITY_CASES[case]
    n = 10
    cal = adassp_calibration(1.0, 1e-6, n=n, q=len(bounds[0]) + intercept, x_norm_max=math.sqrt(b2), y_norm_max=y_max)
    hand = (b2, math.sqrt(2.0) * b2, 2.0 * math.sqrt(b2) * y_max)[index]
    assert cal.sensitivities[index] * n == pytest.approx(hand, rel=1e-12)
    found = _largest_change(statistic, *bounds, intercept, n=n)
    assert found <= hand * (1 + 1e-9)
    if not intercept and statistic != "lambda_min":
        assert found >= 0.99 * hand  # the symmetric box attains the bound: Δ is not loose there
    if statistic == "lambda_min" and not intercept:
        assert found >= 0.25 * hand  # the optimiser does move λ_min (it would find 0 if broken)


def test_lambda_min_bound_is_attained_by_a_built_neighbour():
    # Weyl's bound B² is tight: remove the record along the weakest direction, add one orthogonal
    b2 = 2.0
    rest = np.array([[1.0, 1.0]] * 6 + [[1.0, -1.0]] * 3)  # normalised records in the box [-1, 1]²
    old, new = np.array([[1.0, -1.0]]), np.array([[1.0, 1.0]])
    g1, g2 = (np.vstack([rest, r]).T @ np.vstack([rest, r]) for r in (old, new))
    assert np.linalg.eigvalsh(g1)[0] - np.linalg.eigvalsh(g2)[0] == pytest.approx(b2)


# --- the noise law --------------------------------------------------------------------------


def _standardised_noise(cal, expected_sigmas, draws=2000, seed=3):
    """Each released statistic minus its exact value, divided by the σ the calibration must have
    (off-diagonal Gram entries by σ/√2), pooled per statistic."""
    gram = np.diag([40.0, 50.0, 60.0]) + 0.5  # λ_min ≫ σ: the clamp at 0 never binds
    target = np.array([[1.0, -2.0], [0.5, 0.0], [3.0, 1.0]])
    lam_min = np.linalg.eigvalsh(gram)[0]
    rng = np.random.default_rng(seed)
    out = {"lambda_min": [], "gram": [], "target": []}
    upper = np.triu_indices(3, 1)
    for _ in range(draws):
        lam, g, b = perturbed_statistics(gram, target, cal, rng)
        out["lambda_min"].append((lam + cal.shift - lam_min) / expected_sigmas[0])
        e = g - gram
        out["gram"] += list(np.diag(e) / expected_sigmas[1]) + list(e[upper] / (expected_sigmas[1] / math.sqrt(2)))
        out["target"] += list((b - target).ravel() / expected_sigmas[2])
    return {k: np.asarray(v) for k, v in out.items()}


def _expected_sigmas(epsilon, delta, n, b2, y_max):
    mu = gdp_mu(epsilon, delta)
    deltas = (b2 / n, math.sqrt(2) * b2 / n, 2 * math.sqrt(b2) * y_max / n)
    return mu, tuple(math.sqrt(3) * d / mu for d in deltas)


def test_noise_of_each_release_is_the_calibrated_gaussian_and_a_1_5x_mutant_is_caught():
    epsilon, delta, n, b2, y_max = 1.0, 1e-6, 50, 1.5, math.sqrt(0.5)
    cal = adassp_calibration(epsilon, delta, n=n, q=3, x_norm_max=math.sqrt(b2), y_norm_max=y_max)
    mu, sigmas = _expected_sigmas(epsilon, delta, n, b2, y_max)
    assert cal.mu == pytest.approx(mu, rel=1e-6) and cal.mu <= mu * (1 + 1e-12)  # never above the exact μ
    noise = _standardised_noise(cal, sigmas)
    for name, z in noise.items():
        assert stats.kstest(z, "norm").pvalue > 1e-3, name
        assert abs(np.var(z) - 1.0) < 0.12, name
    for index, name in enumerate(noise):  # one σ scaled by 1.5 (or 2) fails its own check
        for factor in (1.5, 2.0):
            scaled = tuple(s * (factor if i == index else 1.0) for i, s in enumerate(cal.sigmas))
            mutant = dataclasses.replace(cal, sigmas=scaled)
            z = _standardised_noise(mutant, sigmas, draws=600)[name]
            assert stats.kstest(z, "norm").pvalue < 1e-6, (name, factor)


def test_the_three_releases_compose_to_mu_gdp_meeting_epsilon_delta():
    for epsilon, delta in [(0.1, 1e-5), (1.0, 1e-6), (5.0, 1e-8)]:
        cal = adassp_calibration(epsilon, delta, n=100, q=4, x_norm_max=1.3, y_norm_max=0.5)
        composed = math.sqrt(sum((d / s) ** 2 for d, s in zip(cal.sensitivities, cal.sigmas, strict=True)))
        assert composed == pytest.approx(cal.mu, rel=1e-12)
        assert cal.mu == pytest.approx(gdp_mu(epsilon, delta), rel=1e-6)
        # each release alone is (μ/√3)-GDP: the even split of μ², the GDP form of the paper's thirds
        for d, s in zip(cal.sensitivities, cal.sigmas, strict=True):
            assert d / s == pytest.approx(cal.mu / math.sqrt(3), rel=1e-12)


# --- utility -----------------------------------------------------------------------------------


@pytest.mark.parametrize("intercept", [True, False])
def test_at_huge_epsilon_adassp_is_ordinary_least_squares(intercept):
    X, y = data()
    y2 = np.column_stack([y, np.clip(2.0 - 0.1 * X[:, 0] + 0.2 * X[:, 1], -4, 8)])
    ref = LinearRegression(fit_intercept=intercept).fit(X, y2)
    model = PrivateLinearRegression(
        epsilon=1e9, delta=1e-6, mechanism="adassp", fit_intercept=intercept, random_state=0, **BOUNDS
    ).fit(X, y2)
    np.testing.assert_allclose(model.coef_, ref.coef_, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(model.intercept_, ref.intercept_ if intercept else 0.0, rtol=1e-4, atol=1e-6)


def test_the_ridge_is_eta_minus_lambda_min_and_the_estimate_is_ridge_regression():
    rng = np.random.default_rng(1)
    n = 300
    Z = np.column_stack([np.ones(n), rng.uniform(-0.5, 0.5, size=(n, 2)) * [1.0, 0.02]])  # a weak direction
    R = rng.uniform(-0.5, 0.5, size=(n, 1))
    gram, target = Z.T @ Z / n, Z.T @ R / n
    lam_min = np.linalg.eigvalsh(gram)[0]
    eta = lam_min + 0.01
    silent = AdasspCalibration(1.0, 1e-6, 1.0, (1.0, 1.0, 1.0), (0.0, 0.0, 0.0), shift=0.0, eta=eta)
    theta, ridge = adassp_release(gram, target, silent, rng)
    assert ridge == pytest.approx(0.01, rel=1e-9)
    ref = Ridge(alpha=0.01 * n, fit_intercept=False, solver="svd").fit(Z, R[:, 0])
    np.testing.assert_allclose(theta[:, 0], ref.coef_, rtol=1e-8)
    no_ridge = dataclasses.replace(silent, eta=lam_min / 2)  # η below λ_min: no ridge, least squares
    theta, ridge = adassp_release(gram, target, no_ridge, rng)
    assert ridge == 0.0
    np.testing.assert_allclose(theta[:, 0], np.linalg.lstsq(Z, R, rcond=None)[0][:, 0], rtol=1e-8)


def test_at_moderate_epsilon_the_release_is_near_least_squares_on_many_records():
    X, y = data(n=20000)
    ref = LinearRegression().fit(X, y)
    model = PrivateLinearRegression(epsilon=1.0, delta=1e-6, mechanism="adassp", random_state=0, **BOUNDS).fit(X, y)
    assert np.abs(model.coef_ - ref.coef_).max() < 0.05
    assert model.score(X, y) > 0.97 * ref.score(X, y)


# --- the release path: report, accountant, refusals -------------------------------------------


def test_report_is_public_and_carries_gdp_mu_and_delta():
    model = PrivateLinearRegression(epsilon=2.0, delta=1e-7, mechanism="adassp", random_state=0, **BOUNDS)
    X1, y1 = data(500, seed=1)
    X2, y2 = data(500, seed=2)
    plan = model.plan(X1, y1)
    assert (plan.epsilon, plan.delta, plan.exact) == (2.0, 1e-7, True)
    r1 = model.fit(X1, y1).privacy_report_
    r2 = PrivateLinearRegression(epsilon=2.0, delta=1e-7, mechanism="adassp", random_state=5, **BOUNDS).fit(X2, y2)
    assert str(r1) == str(r2.privacy_report_) == str(plan.report)  # nothing in it depends on the data
    info = r1.to_dict()
    json.dumps(info)
    assert info["gdp_mu"] == pytest.approx(gdp_mu(2.0, 1e-7), rel=1e-6)
    assert info["delta"] == 1e-7 and info["release_mechanism"] == "adassp" and info["support"] == "the whole space"
    assert "(ε, δ)-DP" in str(r1)
    kng = PrivateLinearRegression(epsilon=2.0, random_state=0, **BOUNDS).fit(X1, y1).privacy_report_.to_dict()
    assert kng["gdp_mu"] is None and kng["delta"] == 0.0 and kng["release_mechanism"] == "kng"


def test_accountant_is_charged_epsilon_delta_once_and_refuses_overspending():
    X, y = data(500)
    budget = BudgetAccountant(epsilon=1.0, delta=1.5e-6)
    model = PrivateLinearRegression(epsilon=0.6, delta=1e-6, mechanism="adassp", accountant=budget, **BOUNDS)
    model.fit(X, y)
    assert budget.spent == [(0.6, 1e-6)]
    with pytest.raises(BudgetExceededError):
        model.fit(X, y)
    assert budget.spent == [(0.6, 1e-6)]


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(mechanism="adassp"), "pass delta"),
        (dict(mechanism="adassp", delta=0.0), "delta must lie in"),
        (dict(mechanism="adassp", delta=1.0), "delta must lie in"),
        (dict(mechanism="adassp", delta=float("nan")), "delta"),
        (dict(mechanism="kng", delta=1e-6), "delta must be None"),
        (dict(mechanism="ADASSP", delta=1e-6), "mechanism must be one of"),
        (dict(mechanism=None), "mechanism must be one of"),
    ],
)
def test_bad_mechanism_or_delta_is_refused_before_the_charge(params, match):
    X, y = data(200)
    budget = BudgetAccountant(epsilon=10.0, delta=0.5)
    with pytest.raises(InvalidParameterError, match=match):
        PrivateLinearRegression(epsilon=1.0, accountant=budget, **params, **BOUNDS).fit(X, y)
    assert budget.spent == []


def test_invalid_records_follow_the_estimator_policy():
    X, y = data(300)
    X[5, 0] = np.nan
    budget = BudgetAccountant(delta=1e-3)
    with pytest.raises(InvalidDataError, match="NaN, infinite or non-numeric"):
        PrivateLinearRegression(epsilon=1.0, delta=1e-6, mechanism="adassp", accountant=budget, **BOUNDS).fit(X, y)
    assert budget.spent == [(1.0, 1e-6)]  # after the charge, as for KNG: whether it raises depends on the data
    model = PrivateLinearRegression(epsilon=1.0, delta=1e-6, mechanism="adassp", on_invalid="center", **BOUNDS)
    assert np.all(np.isfinite(model.fit(X, y).coef_))


def test_dask_records_give_the_in_memory_release():
    da = pytest.importorskip("dask.array")
    X, y = data(3000)
    kwargs = dict(epsilon=1.0, delta=1e-6, mechanism="adassp", random_state=4, **BOUNDS)
    eager = PrivateLinearRegression(**kwargs).fit(X, y)
    lazy = PrivateLinearRegression(**kwargs).fit(da.from_array(X, chunks=700), da.from_array(y, chunks=700))
    np.testing.assert_array_equal(lazy.coef_, eager.coef_)
