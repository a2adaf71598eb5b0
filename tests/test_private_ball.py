"""The private data ball: the exact exponential-mechanism quantile (its law, its privacy against
adversarial neighbours, mutants that must fail), private_ball's guarantee and accounting, and the
estimators' ``ball=``."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from geodp.accountant import BudgetAccountant
from geodp.domain import private_ball, radius_limit
from geodp.errors import AssumptionError, BudgetExceededError, InvalidParameterError, InvalidTypeError
from geodp.manifolds import SPD, Euclidean, Sphere
from geodp.mechanisms.quantile import private_quantile, quantile_interval_law
from geodp.models import PrivateFrechetMean, PrivateGeodesicRegression, PrivateMDM

NORTH = np.array([0.0, 0.0, 1.0])


# ----------------------------------------------------------------------------- reference law
def reference_cdf(values, t, *, epsilon, quantile, lower, upper):
    """The exponential mechanism's CDF written from its definition, independently of the code:
    density ∝ exp(−ε|#{v < s} − q n|/2) on [lower, upper], integrated on a fine partition."""
    values = np.clip(np.asarray(values, float), lower, upper)
    n = values.size
    knots = np.unique(np.concatenate(([lower, upper], values)))
    mids = 0.5 * (knots[:-1] + knots[1:])
    below = np.array([np.sum(values < m) for m in mids])
    mass = np.diff(knots) * np.exp(-0.5 * epsilon * np.abs(below - quantile * n))
    cum = np.concatenate(([0.0], np.cumsum(mass))) / mass.sum()
    return np.interp(t, knots, cum)


def code_log_density(values, t, **law):
    """The code's output density at points ``t`` (inside positive-length intervals)."""
    edges, logp = quantile_interval_law(values, **law)
    index = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, logp.size - 1)
    return logp[index] - np.log(edges[index + 1] - edges[index])


VALUES = np.array([0.05, 0.1, 0.12, 0.3, 0.31, 0.5, 0.55, 0.9])
LAW = dict(epsilon=1.0, quantile=0.5, lower=0.0, upper=1.5)


def _draws(epsilon, size=4000, seed=7):
    rng = np.random.default_rng(seed)
    law = dict(LAW, epsilon=epsilon)
    return np.array([private_quantile(VALUES, random_state=rng, **law) for _ in range(size)])


def test_interval_law_matches_the_definition():
    edges, logp = quantile_interval_law(VALUES, **LAW)
    cdf_code = np.concatenate(([0.0], np.cumsum(np.exp(logp))))
    assert np.allclose(cdf_code, reference_cdf(VALUES, edges, **LAW), atol=1e-12)


def test_grid_law_is_the_exponential_mechanism_over_the_grid_points():
    """Brute force on a coarse grid: every grid point's probability ∝ exp(−ε|#{v < g} − qn|/2),
    and the sampler's frequencies follow it (chi-square); a 1.5× ε sampler fails."""
    law = dict(epsilon=1.0, quantile=0.5, lower=0.0, upper=1.5, cells=24)
    grid = law["lower"] + (np.arange(24) + 0.5) * (law["upper"] - law["lower"]) / 24
    weights = np.exp(-0.5 * law["epsilon"] * np.abs((VALUES[None, :] < grid[:, None]).sum(axis=1) - 0.5 * VALUES.size))
    pmf = weights / weights.sum()
    edges, logp = quantile_interval_law(VALUES, **law)
    runs = np.searchsorted(edges, grid, side="right") - 1
    np.testing.assert_allclose(np.bincount(runs, weights=pmf, minlength=logp.size), np.exp(logp), atol=1e-12)
    for factor, accept in ((1.0, True), (1.5, False)):
        rng = np.random.default_rng(3)
        draws = [private_quantile(VALUES, random_state=rng, **dict(law, epsilon=factor)) for _ in range(6000)]
        counts = np.bincount(np.searchsorted(grid, draws), minlength=24)
        p = stats.chisquare(counts, 6000 * pmf).pvalue
        assert (p > 1e-3) if accept else (p < 1e-6)


def test_the_release_is_a_public_grid_point_whatever_the_data():
    """The audit's floating-point attack: neighbours differing in the tenth digit of one value. A
    draw between sorted values carried that value's low bits; a grid point carries none."""
    base = np.linspace(-0.01, 0.5, 20)
    for changed in (-0.0012345678, -0.0012345679):
        values = base.copy()
        values[3] = changed
        rng = np.random.default_rng(0)
        for _ in range(300):
            t = private_quantile(values, epsilon=1.0, quantile=0.5, lower=-0.02, upper=0.6, random_state=rng)
            j = (t - (-0.02)) / ((0.6 - (-0.02)) / 2**20) - 0.5
            assert abs(j - round(j)) < 1e-6 and t == -0.02 + (round(j) + 0.5) * ((0.6 - (-0.02)) / 2**20)


def test_sampler_follows_the_exact_law_ks():
    draws = _draws(LAW["epsilon"])
    p = stats.kstest(draws, lambda t: reference_cdf(VALUES, t, **LAW)).pvalue
    assert p > 1e-3


@pytest.mark.parametrize("factor", [1.5, 2.0])
def test_ks_catches_a_scaled_epsilon_mutant(factor):
    draws = _draws(factor * LAW["epsilon"])  # a sampler that used the wrong ε
    p = stats.kstest(draws, lambda t: reference_cdf(VALUES, t, **LAW)).pvalue
    assert p < 1e-6


def _worst_log_ratio(values, law, log_density, grid):
    """Max over neighbours (one value replaced by a grid point) and outputs of |log f − log f'|."""
    worst = 0.0
    for j in range(values.size):
        for v in grid:
            other = values.copy()
            other[j] = v
            knots = np.unique(np.concatenate((values, other, [law["lower"], law["upper"]])))
            t = 0.5 * (knots[:-1] + knots[1:])
            gap = np.abs(log_density(values, t, **law) - log_density(other, t, **law))
            worst = max(worst, float(gap.max()))
    return worst


def _adversarial(log_density, law, *, seed=0, n=6, rounds=2, climb=True):
    """Hill-climb the dataset (one value at a time) to maximise the worst neighbour ratio."""
    rng = np.random.default_rng(seed)
    grid = np.linspace(law["lower"], law["upper"], 9)
    best = 0.0
    for _ in range(rounds):
        values = rng.choice(grid, size=n)
        score = _worst_log_ratio(values, law, log_density, grid)
        for j in range(n if climb else 0):  # coordinate ascent on the dataset itself
            for v in grid[::3]:
                trial = values.copy()
                trial[j] = v
                s = _worst_log_ratio(trial, law, log_density, grid)
                if s > score:
                    values, score = trial, s
        best = max(best, score)
    return best


@pytest.mark.parametrize("quantile", [0.5, 5 / 6])  # q·n integer at n = 6: the bound is attained
def test_quantile_is_epsilon_dp_against_adversarial_neighbours(quantile):
    law = dict(epsilon=0.8, quantile=quantile, lower=0.0, upper=1.0)
    worst = _adversarial(code_log_density, law)
    assert worst <= law["epsilon"] + 1e-9
    assert worst >= 0.75 * law["epsilon"]  # the search finds near-tight neighbours


def test_adversarial_search_catches_a_mutant_without_the_half():
    def mutant(values, t, **law):  # exp(−ε|rank − qn|): twice the allowed ε
        return code_log_density(values, t, **dict(law, epsilon=2.0 * law["epsilon"]))

    law = dict(epsilon=0.8, quantile=0.5, lower=0.0, upper=1.0)
    assert _adversarial(mutant, law, climb=False) > law["epsilon"] * 1.2


def test_quantile_refuses_bad_input():
    with pytest.raises(InvalidParameterError):
        private_quantile(VALUES, epsilon=1.0, quantile=1.0, lower=0.0, upper=1.0)
    with pytest.raises(InvalidParameterError):
        private_quantile(VALUES, epsilon=1.0, quantile=0.5, lower=1.0, upper=1.0)
    with pytest.raises(InvalidParameterError):
        private_quantile(VALUES, epsilon=0.0, quantile=0.5, lower=0.0, upper=1.0)
    with pytest.raises(Exception, match="finite") as error:
        private_quantile([0.1, np.nan, np.nan], epsilon=1.0, quantile=0.5, lower=0.0, upper=1.0)
    assert "2" not in str(error.value)  # no count of the bad values


# ----------------------------------------------------------------------------- private_ball
def _sphere_data(n=4000, spread=0.05, seed=0):
    space = Sphere(2)
    rng = np.random.default_rng(seed)
    m = space.exp(NORTH, np.array([0.25, 0.1, 0.0]))
    return space, space.exp(m, space.to_tangent(m, spread * rng.normal(size=(n, 3)))), m


def test_private_ball_localises_the_data_and_is_valid():
    space, X, m = _sphere_data()
    ball = private_ball(space, X, epsilon=0.2, center=NORTH, radius=0.7, quantile=0.9, random_state=1)
    assert bool(space.belongs(ball.center)) and float(space.dist(ball.center, m)) < 0.05
    # 90% of the records within ~0.05·√(2 ln 10) ≈ 0.11 of m
    assert 0.05 < ball.radius < 0.2
    assert 0.8 < ball.curator_diagnostics_.fraction_inside < 0.97
    assert "CURATOR-ONLY" in str(ball.curator_diagnostics_)
    report = ball.privacy_report_
    assert "epsilon = 0.2" in report and "exponential-mechanism quantile" in report
    data = report.to_dict()
    assert data["center_epsilon"] + data["radius_epsilon"] == pytest.approx(0.2)
    assert data["radius"] == ball.radius and "fraction" not in report


def test_radius_is_clipped_to_the_space_limit():
    space = Sphere(2)
    X = space.random_point(500, rng=0)  # spread over the whole sphere: clipped onto the coarse ball
    ball = private_ball(space, X, epsilon=5.0, center=NORTH, radius=0.78, quantile=0.99, random_state=0)
    assert ball.radius <= radius_limit(space) < math.pi / 4
    PrivateFrechetMean(space, epsilon=1.0, ball=ball, random_state=0).fit(X)


def test_a_radius_not_below_the_coarse_one_gives_back_the_coarse_ball():
    space = Euclidean(2)
    angles = np.random.default_rng(0).uniform(0.0, 2 * np.pi, 400)
    X = 1.4 * np.column_stack([np.cos(angles), np.sin(angles)])  # just inside the coarse boundary
    fell_back = 0
    for seed in range(20):  # the 0.95-quantile of the distances is near the coarse radius
        ball = private_ball(space, X, epsilon=0.5, center=np.zeros(2), radius=1.5, random_state=seed)
        data = ball.privacy_report_.to_dict()
        if data["fell_back_to_coarse_ball"]:
            fell_back += 1
            assert ball.radius == 1.5 and np.array_equal(ball.center, np.zeros(2))
            assert data["drawn_radius"] >= 1.5 and "coarse ball" in ball.privacy_report_.splitlines()[-1]
        else:
            assert ball.radius == data["drawn_radius"] < 1.5
    assert 0 < fell_back < 20


def test_nothing_observable_depends_on_the_records():
    space = Sphere(2)
    far = np.tile(-NORTH, (50, 1))  # every record outside the coarse ball
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ball = private_ball(space, far, epsilon=5.0, center=NORTH, radius=0.5, random_state=0)
    assert ball.curator_diagnostics_.n_clipped_coarse == 50


def test_accountant_is_charged_for_both_steps():
    space, X, _ = _sphere_data(n=2000)
    budget = BudgetAccountant(epsilon=1.0)
    ball = private_ball(space, X, epsilon=0.1, center=NORTH, radius=0.7, accountant=budget, random_state=0)
    assert budget.total_spent == (0.1, 0.0)
    PrivateFrechetMean(space, epsilon=0.9, ball=ball, accountant=budget, random_state=0).fit(X)
    assert budget.total_spent[0] == pytest.approx(1.0)
    with pytest.raises(BudgetExceededError):
        private_ball(space, X, epsilon=0.1, center=NORTH, radius=0.7, accountant=budget)


def test_budget_refusal_comes_before_the_records_are_read():
    space, X, _ = _sphere_data(n=2000)
    X = X.copy()
    X[3] = np.nan  # would raise NotOnManifoldError if the records were read
    budget = BudgetAccountant(epsilon=0.05)
    with pytest.raises(BudgetExceededError):
        private_ball(space, X, epsilon=0.1, center=NORTH, radius=0.7, accountant=budget)
    assert budget.total_spent == (0.0, 0.0)


def test_estimators_accept_the_ball():
    space = Euclidean(2)
    rng = np.random.default_rng(3)
    x = rng.uniform(0.0, 1.0, 3000)
    Y = 5.0 + np.outer(x - 0.5, [0.4, 0.0]) + 0.05 * rng.normal(size=(3000, 2))
    ball = private_ball(space, Y, epsilon=0.5, center=np.zeros(2), radius=20.0, random_state=0)
    assert ball.radius < 1.0
    mean = PrivateFrechetMean(space, epsilon=1.0, ball=ball, random_state=0).fit(Y)
    assert mean.privacy_report_.to_dict()["radius"] == ball.radius
    assert "chosen privately" in mean.privacy_report_ and "epsilon = 0.5" in mean.privacy_report_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exact flat regression may say its n·ε range
        reg = PrivateGeodesicRegression(space, epsilon=1.0, ball=ball, x_bounds=(0.0, 1.0), random_state=0).fit(x, Y)
    assert "chosen privately" in reg.privacy_report_ and reg.privacy_report_.to_dict()["radius"] == ball.radius
    labels = (Y[:, 1] > 5.0).astype(int)
    mdm = PrivateMDM(space, epsilon=1.0, ball=ball, random_state=0).fit(Y, labels)
    assert "chosen privately" in mdm.privacy_report_ and mdm.privacy_report_.to_dict()["radius"] == ball.radius


def test_affine_spd_ball():
    space = SPD(3)
    rng = np.random.default_rng(0)
    base = space.exp(np.eye(3), np.diag([1.0, -0.5, 0.2]))
    X = space.exp(base, space.to_tangent(base, 0.05 * rng.normal(size=(3000, 3, 3))))
    ball = private_ball(space, X, epsilon=0.5, center=np.eye(3), radius=5.0, random_state=0)
    assert bool(space.belongs(ball.center)) and ball.radius < 1.0


def test_a_budget_too_small_for_a_useful_radius_is_refused_before_the_charge():
    """A cold trial (n = 300, ε = 0.1) got balls holding no record: the rule refuses it publicly."""
    space, X, _ = _sphere_data(n=300)
    budget = BudgetAccountant(epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="mostly noise"):
        private_ball(space, X, epsilon=0.1, center=NORTH, radius=0.7, accountant=budget)
    assert budget.total_spent == (0.0, 0.0)
    private_ball(space, X, epsilon=0.1, quantile=0.5, center=NORTH, radius=0.7)  # a median is informative there


def test_bad_input_is_refused_with_typed_errors():
    space, X, _ = _sphere_data(n=500)
    ball = private_ball(space, X, epsilon=0.5, center=NORTH, radius=0.7, random_state=0)
    with pytest.raises(InvalidParameterError, match="not both"):
        PrivateFrechetMean(space, epsilon=1.0, ball=ball, center=NORTH, radius=0.5).fit(X)
    with pytest.raises(InvalidTypeError, match="PrivateBall"):
        PrivateFrechetMean(space, epsilon=1.0, ball=(NORTH, 0.5)).fit(X)
    with pytest.raises(InvalidParameterError, match="chosen on"):
        PrivateFrechetMean(Sphere(2, curvature=4.0), epsilon=1.0, ball=ball).fit(X / 2.0)
    with pytest.raises(InvalidParameterError, match="required"):
        PrivateFrechetMean(space, epsilon=1.0).fit(X)
    budget = BudgetAccountant(epsilon=1.0)
    with pytest.raises(AssumptionError):  # the coarse ball passes the estimators' checks, before the charge
        private_ball(space, X, epsilon=0.5, center=NORTH, radius=1.0, accountant=budget)
    assert budget.total_spent == (0.0, 0.0)
    with pytest.raises(InvalidParameterError):
        private_ball(space, X, epsilon=0.5, center=NORTH, radius=0.7, quantile=1.0)
    for share in (-0.1, 1.0):  # 0 is the radius-only mode
        with pytest.raises(InvalidParameterError, match="center_share"):
            private_ball(space, X, epsilon=0.5, center=NORTH, radius=0.7, center_share=share)
    with pytest.raises(InvalidParameterError):
        private_ball(space, X, epsilon=-1.0, center=NORTH, radius=0.7)


# ----------------------------------------------------------------------------- radius only
def _shell(n=60, seed=0):
    """Records at distances 2.5-3.5 from the public centre 0 of Euclidean(3)."""
    rng = np.random.default_rng(seed)
    directions = rng.normal(size=(n, 3))
    return directions / np.linalg.norm(directions, axis=1, keepdims=True) * rng.uniform(2.5, 3.5, n)[:, None]


def test_radius_only_keeps_the_public_centre_and_charges_the_radius_alone():
    X = _shell(n=2000)
    budget = BudgetAccountant(epsilon=1.0)
    ball = private_ball(Euclidean(3), X, epsilon=0.4, center=np.zeros(3), radius=30.0, quantile=0.75,
                        center_share=0.0, accountant=budget, random_state=0)  # fmt: skip
    assert budget.total_spent == (0.4, 0.0)
    assert np.array_equal(ball.center, np.zeros(3)) and 2.5 < ball.radius < 3.5
    data = ball.privacy_report_.to_dict()
    assert data["center_epsilon"] == 0.0 and data["radius_epsilon"] == 0.4 and data["center_release"] is None
    assert "step 1      : none" in ball.privacy_report_ and "one release on the records" in ball.privacy_report_
    mean = PrivateFrechetMean(Euclidean(3), epsilon=0.6, ball=ball, accountant=budget, random_state=0).fit(X)
    assert "chosen privately" in mean.privacy_report_ and budget.total_spent[0] == pytest.approx(1.0)


def test_radius_only_draws_the_exact_quantile_law_of_the_distances_to_the_public_centre():
    """KS against the exponential mechanism written from its definition (reference_cdf) on the
    log-distances to the centre, at the whole ε; a ×1.5 error in ε is rejected."""
    X, epsilon, radius = _shell(n=30), 0.5, 30.0
    law = dict(quantile=0.5, lower=math.log(radius * 1e-6), upper=math.log(radius))
    logs = np.log(np.linalg.norm(X, axis=1))
    draws = np.log([
        private_ball(Euclidean(3), X, epsilon=epsilon, center=np.zeros(3), radius=radius, quantile=0.5,
                     center_share=0.0, random_state=seed).privacy_report_.to_dict()["drawn_radius"]
        for seed in range(1500)
    ])  # fmt: skip
    assert stats.kstest(draws, lambda t: reference_cdf(logs, t, epsilon=epsilon, **law)).pvalue > 1e-3
    assert stats.kstest(draws, lambda t: reference_cdf(logs, t, epsilon=1.5 * epsilon, **law)).pvalue < 1e-6


def test_radius_only_strength_rule_uses_the_whole_epsilon():
    """The connectome setting of docs/guide.md: n = 86, ε = 0.1 admits q = 0.75 (strength 1.08)
    but not q = 0.9 (0.43), before any charge."""
    X = _shell(n=86)
    budget = BudgetAccountant(epsilon=1.0)
    kwargs = dict(epsilon=0.1, center=np.zeros(3), radius=30.0, center_share=0.0, accountant=budget)
    with pytest.raises(InvalidParameterError, match="mostly noise"):
        private_ball(Euclidean(3), X, quantile=0.9, **kwargs)
    assert budget.total_spent == (0.0, 0.0)
    private_ball(Euclidean(3), X, quantile=0.75, random_state=0, **kwargs)
    assert budget.total_spent == (0.1, 0.0)


def test_radius_only_refuses_invalid_records_after_the_charge_or_replaces_them():
    from geodp.errors import NotOnManifoldError

    X = _shell()
    X[4] = np.nan
    budget = BudgetAccountant(epsilon=1.0)
    kwargs = dict(epsilon=0.4, center=np.zeros(3), radius=30.0, center_share=0.0, accountant=budget)
    with pytest.raises(NotOnManifoldError):
        private_ball(Euclidean(3), X, **kwargs)
    assert budget.total_spent == (0.4, 0.0)  # whether it raises depends on the data: after the charge
    ball = private_ball(Euclidean(3), X, on_invalid="center", quantile=0.5, random_state=0, **kwargs)
    assert ball.curator_diagnostics_.n_invalid == 1


def test_radius_only_on_a_curved_space():
    space, X, m = _sphere_data(n=2000)
    ball = private_ball(space, X, epsilon=0.5, center=m, radius=0.7, quantile=0.9, center_share=0.0, random_state=0)
    assert np.array_equal(ball.center, m) and 0.05 < ball.radius < 0.2
