"""The tangent release of PrivateGeodesicRegression (mechanism="tangent"): its sensitivities under
adversarial neighbours, the Lipschitz constant of Log_p0, the exactness of its noise, the estimator."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from geodp.accountant import BudgetAccountant
from geodp.errors import InvalidParameterError
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.models import PrivateGeodesicRegression
from geodp.models.geodesic_tangent import (
    residual_statistics,
    tangent_laplace,
    tangent_lipschitz,
    tangent_settings,
    tangent_statistics,
)
from geodp.regression import geodesic_regression

S2 = Sphere(2)
NORTH = np.array([0.0, 0.0, 1.0])
E1, E2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])


def _ball_point(radius, params):
    """A point of B_radius(NORTH) on S² from unconstrained (s, φ): distance radius·min(|s|, 1)."""
    s, phi = params
    rho = radius * min(abs(s), 1.0)
    return S2.exp(NORTH, rho * (math.cos(phi) * E1 + math.sin(phi) * E2))


def _covariate(z):
    return min(max(z, -0.5), 0.5)  # onto [−½, ½]


def _records(n, radius, seed):
    rng = np.random.default_rng(seed)
    xs = rng.uniform(-0.5, 0.5, n)
    Y = np.array([_ball_point(radius, rng.normal(size=2) * [1.5, 3.0]) for _ in range(n)])
    return xs, Y


def _search(objective, n_params, seed, starts=6):
    """Largest value of ``objective`` found by Nelder–Mead from random starts (an adversary)."""
    rng = np.random.default_rng(seed)
    best = 0.0
    for _ in range(starts):
        result = optimize.minimize(
            lambda z: -objective(z), rng.normal(size=n_params) * 2.0, method="Nelder-Mead", options={"maxiter": 300}
        )
        best = max(best, -result.fun)
    return best


# -------------------------------------------------------------- sensitivities, adversarially
@pytest.mark.parametrize("seed", [0])
def test_tangent_sums_move_by_at_most_2r_in_the_group_norm_and_an_adversary_gets_there(seed):
    radius, n = 0.7, 6
    xs, Y = _records(n, radius, seed)

    def change(z, i):  # the adversary picks both records of the neighbouring pair at index i
        stats_ = []
        for part in (z[:3], z[3:]):
            xs2, Y2 = xs.copy(), Y.copy()
            xs2[i], Y2[i] = _covariate(part[0]), _ball_point(radius, part[1:3])
            stats_.append(tangent_statistics(S2, xs2, Y2, NORTH, radius))
        a, b = stats_
        return float(np.linalg.norm(a[2] - b[2]) + np.linalg.norm(a[3] - b[3]))

    worst = max(_search(lambda z, i=i: change(z, i), 6, seed * 10 + i) for i in range(2))
    bound = tangent_settings(S2, n, 1.0, radius, 0.1).sensitivity.statistics
    assert bound == pytest.approx(2 * radius)  # Δ = 2r, by hand
    assert worst <= bound * (1 + 1e-12)
    assert worst >= 0.98 * bound  # tight: a bound half as large would fail the line above


@pytest.mark.parametrize("seed", [0, 1])
def test_count_and_covariate_sums_obey_their_sensitivities_against_an_adversary(seed):
    radius, n = 0.7, 6
    xs, Y = _records(n, radius, seed)

    def moved(z, i):  # both covariates of the neighbouring pair at index i
        out = []
        for value in z:
            xs2 = xs.copy()
            xs2[i] = _covariate(value)
            out.append(tangent_statistics(S2, xs2, Y, NORTH, radius))
        (c1, (lo1, hi1), *_), (c2, (lo2, hi2), *_) = out
        return abs(c2 - c1), abs(lo2 - lo1) + abs(hi2 - hi1)

    sens = tangent_settings(S2, n, 1.0, radius, 0.1).sensitivity
    worst_cov = max(_search(lambda z, i=i: moved(z, i)[1], 2, seed + i) for i in range(2))
    grid = np.linspace(-0.5, 0.5, 21)
    worst_count = max(moved((a, b), 0)[0] for a in grid for b in grid)
    assert (sens.count, sens.covariate_sums) == (1.0, 0.5)
    assert worst_count == 1.0
    assert 0.98 * 0.5 <= worst_cov <= 0.5 * (1 + 1e-12)


def test_clipped_residual_sums_move_by_at_most_2c_against_an_adversary():
    radius, n, clip = 0.7, 6, 0.15
    xs, Y = _records(n, radius, 3)
    u = S2.log(NORTH, Y)
    a_lo, a_hi = 0.2 * E1, -0.1 * E1 + 0.3 * E2  # a public pilot line

    def change(z, i):  # both records of the neighbouring pair at index i
        out = []
        for part in (z[:3], z[3:]):
            xs2, u2 = xs.copy(), u.copy()
            xs2[i], u2[i] = _covariate(part[0]), S2.log(NORTH, _ball_point(radius, part[1:3]))
            out.append(residual_statistics(S2, xs2, u2, NORTH, a_lo, a_hi, clip))
        (a0, a1), (b0, b1) = out
        return float(np.linalg.norm(a0 - b0) + np.linalg.norm(a1 - b1))

    worst = max(_search(lambda z, i=i: change(z, i), 6, 40 + i) for i in range(2))
    assert 0.98 * 2 * clip <= worst <= 2 * clip * (1 + 1e-12)


# ---------------------------------------------------------------- the Lipschitz constant
@pytest.mark.parametrize("radius", [0.3, 0.7])
def test_log_at_the_centre_is_r_over_sin_r_lipschitz_on_the_sphere_ball_and_no_better(radius):
    def ratio(z):
        y = _ball_point(radius, z[0:2])
        w = math.cos(z[2]) * np.cross(y, E1) + math.sin(z[2]) * np.cross(y, E2)
        w -= np.dot(w, y) * y
        step = 1e-4 + 2 * radius / (1.0 + math.exp(-z[3]))
        y2 = S2.exp(y, step * w / np.linalg.norm(w))
        if S2.dist(NORTH, y2) > radius:
            return 0.0
        return float(np.linalg.norm(S2.log(NORTH, y) - S2.log(NORTH, y2)) / S2.dist(y, y2))

    worst = _search(ratio, 4, 5)
    L = tangent_lipschitz(S2, radius)
    assert L == pytest.approx(radius / math.sin(radius))  # by hand
    assert worst <= L * (1 + 1e-9)
    assert worst >= 1 + 0.9 * (L - 1)  # nearly attained (tangential pairs at the boundary)


def test_log_at_the_centre_is_1_lipschitz_where_the_curvature_is_negative():
    space, origin = Hyperbolic(2), np.array([1.0, 0.0, 0.0])
    rng = np.random.default_rng(2)
    a = space.exp(origin, space.random_tangent(origin, size=4000, rng=rng) * 1.5)
    b = space.exp(origin, space.random_tangent(origin, size=4000, rng=rng) * 1.5)
    ratios = np.linalg.norm(space.log(origin, a) - space.log(origin, b), axis=-1) / space.dist(a, b)
    assert tangent_lipschitz(space, 3.0) == 1.0
    assert ratios.max() <= 1 + 1e-9


def test_kendall_uses_the_largest_curvature_4():
    space = KendallShape(5)
    z0 = space.random_point(rng=0)
    rng = np.random.default_rng(1)
    radius = 0.35
    L = tangent_lipschitz(space, radius)
    assert L == pytest.approx(2 * radius / math.sin(2 * radius))
    v = space.random_tangent(z0, size=3000, rng=rng)
    v *= (radius * rng.uniform(0, 1, 3000) / np.linalg.norm(v.reshape(3000, -1), axis=1))[:, None, None]
    pts = space.exp(z0, v)
    a, b = pts[:1500], pts[1500:]
    diff = space.log(z0, a) - space.log(z0, b)
    ratios = np.linalg.norm(diff.reshape(1500, -1), axis=1) / space.dist(a, b)
    assert ratios.max() <= L * (1 + 1e-9)


# ------------------------------------------------------------------------- exact noise
def test_tangent_laplace_has_gamma_radii_and_uniform_directions_and_the_test_catches_a_wrong_scale():
    sigma, rng = 0.3, np.random.default_rng(11)
    draws = np.array([tangent_laplace(S2, NORTH, sigma, rng) for _ in range(4000)])
    assert np.allclose(draws[:, 2], 0.0)  # tangent at the north pole
    radii = np.linalg.norm(draws, axis=1)
    law = stats.gamma(a=2, scale=sigma)  # l2-Laplace in dimension 2: |η| ~ Gamma(2, σ)
    assert stats.kstest(radii, law.cdf).pvalue > 1e-3
    assert stats.kstest(radii * 1.5, law.cdf).pvalue < 1e-6  # the mutant ×1.5 is caught
    angles = np.arctan2(draws[:, 1], draws[:, 0])
    assert stats.kstest(angles, stats.uniform(-np.pi, 2 * np.pi).cdf).pvalue > 1e-3


def test_noise_scales_are_each_parts_sensitivity_over_its_share_of_epsilon():
    one = tangent_settings(S2, 20, 2.0, 0.7, 0.1)  # n·ε = 40: one pass
    assert one.clips == () and one.passes == 1 and sum(one.epsilons) == pytest.approx(2.0)
    assert one.scales == pytest.approx((1 / 0.3, 0.5 / 0.2, 1.4 / 1.5))
    floor = 0.1 * 0.7 / math.sin(0.7)  # L·τ
    two = tangent_settings(S2, 1000, 2.0, 0.7, 0.1)  # n·ε = 2000: margin 0.0037 < ¼·L·τ, two passes
    c = floor + 0.1 * 8 * 2 * (1.4 / 0.6) / 1000
    assert two.passes == 2 and two.clips == pytest.approx((c,))
    assert two.scales == pytest.approx((1 / 0.2, 0.5 / 0.2, 1.4 / 0.6, 2 * c / 1.0))
    assert tangent_settings(S2, 1000, 2.0, 0.7, 1.8).clips == ()  # τ too large to help: one pass


def test_three_passes_at_moderate_n_epsilon_each_clip_from_the_pass_before():
    floor = 0.1 * 0.7 / math.sin(0.7)
    # n·ε = 200: the two-pass margin 0.1·16·(1.4/0.6)/100 = 0.0373 exceeds ¼·L·τ = 0.0272.
    three = tangent_settings(S2, 100, 2.0, 0.7, 0.1)
    c1 = floor + 0.2 * 8 * 2 * (1.4 / 0.4) / 100  # κ = 0.2 times the pilot's scale 2r/ε_S, ε_S = 0.2ε
    c2 = floor + 0.0 * 8 * 2 * (2 * c1 / 0.5) / 100  # κ = 0: exactly L·τ
    assert three.passes == 3 and three.clips == pytest.approx((c1, c2))
    assert three.epsilons == pytest.approx((0.2, 0.2, 0.4, 0.5, 0.7)) and sum(three.epsilons) == pytest.approx(2.0)
    assert three.sensitivity.residuals == pytest.approx((2 * c1, 2 * c2))
    assert three.scales == pytest.approx((1 / 0.2, 0.5 / 0.2, 1.4 / 0.4, 2 * c1 / 0.5, 2 * c2 / 0.7))
    # n·ε = 500: margin 0.1·16·(1.4/0.15)/1000 = 0.0149 < 0.0272, two passes.
    assert tangent_settings(S2, 1000, 0.5, 0.7, 0.1).passes == 2


def test_a_three_pass_release_charges_epsilon_once_and_reports_every_pass():
    t, Y = _line(S2, NORTH, [0.4, 0.0, 0.0], 100, 1)
    budget = BudgetAccountant(epsilon=2.0)
    model = PrivateGeodesicRegression(
        S2,
        epsilon=2.0,
        center=NORTH,
        radius=0.7,
        x_bounds=(0, 1),
        residual_bound=0.1,
        mechanism="tangent",
        accountant=budget,
        random_state=0,
    ).fit(t, Y)
    d = model.privacy_report_.to_dict()
    assert budget.total_spent == (2.0, 0.0)
    assert d["passes"] == 3 and len(d["tangent_clips"]) == 2 and len(d["sensitivities"]["residuals"]) == 2
    assert sum(d["epsilon_split"]) == pytest.approx(2.0) and len(d["scales"]) == 5
    assert "pass 3" in str(model.privacy_report_)


# ---------------------------------------------------------------------------- estimator
def _line(space, p0, direction, n, seed, noise=0.02):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 1, n)
    v = np.asarray(direction, dtype=float)
    Y = space.exp(p0, np.multiply.outer(t - 0.5, v))
    Y = space.exp(Y, noise * space.random_tangent(Y, rng=rng))
    return t, Y


CASES = [
    (S2, NORTH, [0.4, 0.0, 0.0], 0.6),
    (Hyperbolic(2), np.array([1.0, 0.0, 0.0]), [0.0, 0.5, 0.0], 0.8),
    (SPD(2), np.eye(2), np.diag([0.4, -0.2]), 0.8),
    (Euclidean(2), np.zeros(2), [0.4, 0.1], 0.8),
]


@pytest.mark.parametrize("space,p0,direction,radius", CASES)
def test_tangent_release_is_exact_close_to_the_fit_and_reports_its_parts(space, p0, direction, radius):
    t, Y = _line(space, p0, direction, 400, 0)
    p_hat, _ = geodesic_regression(space, t[:, None], Y)
    budget = BudgetAccountant(epsilon=100.0)
    model = PrivateGeodesicRegression(
        space,
        epsilon=50.0,
        center=p0,
        radius=radius,
        x_bounds=(0, 1),
        residual_bound=0.1,
        mechanism="tangent",
        accountant=budget,
        random_state=0,
    ).fit(t, Y)
    assert budget.total_spent == (50.0, 0.0)
    assert float(space.dist(model.predict([0.0])[0], p_hat)) < 0.03
    d = model.privacy_report_.to_dict()
    assert d["exact"] is True and d["mechanism_option"] == "tangent" and d["passes"] == 2
    assert sum(d["epsilon_split"]) == pytest.approx(50.0)
    assert d["lipschitz"] == tangent_lipschitz(space, radius)
    assert d["sensitivities"]["statistics"] == 2 * radius
    assert np.allclose(d["center"], p0)
    assert model.coef_.shape == tuple(space.point_shape)


def test_kendall_tangent_release_runs_and_is_exact():
    space = KendallShape(4)
    z0 = space.random_point(rng=3)
    direction = 0.3 * space.random_unit_tangent(z0, rng=4)
    t, Y = _line(space, z0, direction, 200, 1, noise=0.01)
    model = PrivateGeodesicRegression(
        space, epsilon=20.0, center=z0, radius=0.35, x_bounds=(0, 1), residual_bound=0.05, random_state=0
    ).fit(t, Y)
    p_hat, _ = geodesic_regression(space, t[:, None], Y)
    assert model.privacy_report_.to_dict()["exact"] is True
    assert float(space.dist(model.predict([0.0])[0], p_hat)) < 0.1


def test_the_report_does_not_depend_on_the_data():
    a, b = _line(S2, NORTH, [0.4, 0, 0], 50, 0), _line(S2, NORTH, [0, -0.3, 0], 50, 1)
    kwargs = dict(epsilon=1.0, center=NORTH, radius=0.6, x_bounds=(0, 1), residual_bound=0.1)
    ra = PrivateGeodesicRegression(S2, random_state=0, **kwargs).fit(*a).privacy_report_
    rb = PrivateGeodesicRegression(S2, random_state=1, **kwargs).fit(*b).privacy_report_
    assert str(ra) == str(rb) and ra.to_dict() == rb.to_dict()


def test_auto_picks_tangent_on_curved_spaces_with_one_covariate_and_kng_otherwise():
    def option(space, center, m, **extra):
        bounds = (0, 1) if m == 1 else ([0] * m, [1] * m)
        model = PrivateGeodesicRegression(space, epsilon=1.0, center=center, radius=0.5, x_bounds=bounds, **extra)
        x = np.zeros(50) if m == 1 else np.zeros((50, m))
        return model.plan(x, np.tile(center, (50, 1))).report.to_dict().get("mechanism_option", "kng")

    assert option(S2, NORTH, 1) == "tangent"
    assert option(S2, NORTH, 2) == "kng"
    assert option(Euclidean(3), np.zeros(3), 1) == "kng"
    assert option(Euclidean(3), np.zeros(3), 1, mechanism="tangent") == "tangent"
    assert option(S2, NORTH, 1, mechanism="kng") == "kng"


@pytest.mark.parametrize(
    "extra,m,match",
    [
        (dict(mechanism="tangent"), 2, "one covariate"),
        (dict(mechanism="tangent", as_published=True), 1, "as_published"),
        (dict(mechanism="wrapped"), 1, "mechanism must be one of"),
    ],
)
def test_bad_mechanism_settings_are_refused_before_the_charge(extra, m, match):
    budget = BudgetAccountant(epsilon=5.0)
    bounds = (0, 1) if m == 1 else ([0] * m, [1] * m)
    model = PrivateGeodesicRegression(
        S2, epsilon=1.0, center=NORTH, radius=0.5, x_bounds=bounds, accountant=budget, **extra
    )
    x = np.full(20, 0.5) if m == 1 else np.full((20, m), 0.5)
    with pytest.raises(InvalidParameterError, match=match):
        model.fit(x, np.tile(NORTH, (20, 1)))
    assert budget.total_spent == (0.0, 0.0)
