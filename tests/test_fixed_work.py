"""Timing-safe mode's fixed public work (geodp.work): the work is counted (proposals, iterations,
records read), not timed, and must be the same on neighbouring datasets, adversarial ones
included; the fixed-count rejection sampler is still exact; a sampler that accepts none of its
proposals releases the public fallback, and δ_t is in the report and in the charge."""

import math

import numpy as np
import pytest
from scipy import stats

from geodp.accountant import BudgetAccountant
from geodp.audit.timing import CASES
from geodp.distributions.base import rejection_sample
from geodp.distributions.radial import RadialLaw
from geodp.domain import private_ball
from geodp.errors import InvalidParameterError
from geodp.frechet import frechet_mean, karcher_iteration_budget
from geodp.manifolds import SPD, Euclidean, Hyperbolic, Sphere
from geodp.models import (
    PrivateFrechetMean,
    PrivateGeodesicRegression,
    PrivateGeometricMedian,
    PrivateLinearRegression,
    PrivateMDM,
)
from geodp.optim import private_riemannian_gd
from geodp.release import TIMING_SAFE_DELTA
from geodp.work import NoAcceptance, counting, fixed_proposals, fixed_work_section

NORTH = np.array([0.0, 0.0, 1.0])
DEADLINE = 1e-3  # a given deadline: no calibration (the counts, not the clock, are tested here)


def _binomial_below(need, n, p):
    """P(Binomial(n, p) < need), summed exactly term by term (independent of scipy)."""
    return sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(need))


@pytest.mark.parametrize(
    ("rate", "need", "delta"), [(0.25, 1, 1e-10), (0.05, 1, 1e-12), (0.3, 7, 1e-10), (0.9, 40, 1e-6)]
)
def test_the_fixed_number_of_proposals_is_the_smallest_that_fails_below_delta(rate, need, delta):
    n = fixed_proposals(rate, need, delta)
    assert _binomial_below(need, n, rate) <= delta < _binomial_below(need, n - 1, rate)


def _sphere_records(n, radius, rng):
    space = Sphere(2)
    return space.exp(NORTH, radius * space.random_tangent(NORTH, size=n, rng=rng))


def _boundary_vs_centre(space, center, radius, n, seed):
    """Neighbours: one record at the centre vs on the boundary (the rest shared)."""
    inner = space.exp(center, 0.3 * radius * space.random_unit_tangent(center, size=n, rng=seed))
    far = inner.copy()
    inner[0] = center
    far[0] = space.exp(center, radius * space.random_unit_tangent(center, rng=seed + 1))
    return inner, far


def _opposite_vs_together(space, center, radius, n, seed):
    """Neighbours (two records differ by one replacement): two boundary records opposite each
    other vs together, the KNG audit's pair."""
    inner = space.exp(center, 0.2 * radius * space.random_unit_tangent(center, size=n - 2, rng=seed))
    v = radius * space.random_unit_tangent(center, rng=seed + 1)
    east, west = space.exp(center, v), space.exp(center, -v)
    return np.concatenate([inner, [east, west]]), np.concatenate([inner, [east, east]])


def _work(fit, X, *args):
    with counting() as work:
        fit(X, *args)
    return dict(work)


FRECHET_CASES = [
    (Sphere(2), NORTH, 0.5, "laplace"),
    (Sphere(2), NORTH, 0.5, "kng"),
    (Sphere(2), NORTH, 0.5, "wrapped-laplace"),
    (Sphere(2), NORTH, 0.5, "wrapped-gaussian"),
    (Sphere(2), NORTH, 0.5, "riemannian-gaussian"),
    (Sphere(2), NORTH, 0.5, "gradient"),
    (Hyperbolic(2), Hyperbolic(2).reference_point(), 0.5, "laplace"),
    (Hyperbolic(2), Hyperbolic(2).reference_point(), 0.5, "kng"),
    (SPD(2, metric="log-euclidean"), np.eye(2), 1.0, "tangent-gaussian"),
    (SPD(2), np.eye(2), 0.5, "laplace"),
    (Euclidean(2), np.zeros(2), 1.0, "laplace"),
]


@pytest.mark.parametrize(("space", "center", "radius", "mechanism"), FRECHET_CASES, ids=lambda c: str(c))
@pytest.mark.parametrize("pair", [_boundary_vs_centre, _opposite_vs_together])
def test_frechet_mean_work_is_the_same_on_neighbours(space, center, radius, mechanism, pair):
    delta = 1e-5 if mechanism.endswith("gaussian") or mechanism == "gradient" else 0.0
    model = PrivateFrechetMean(
        space, epsilon=1.0, delta=delta, center=center, radius=radius, mechanism=mechanism, timing_safe=DEADLINE
    )
    first, second = pair(space, center, radius, 30, seed=3)
    work = [_work(model.fit, X) for X in (first, second, first)]
    assert work[0] == work[1] == work[2]
    # validated and read, every record (the gradient mean validates once, then descends on them)
    assert work[0]["records"] >= (1 if mechanism == "gradient" else 2) * 30
    if not space.is_flat and mechanism in ("laplace", "kng"):
        assert work[0]["iterations"] > 0 and work[0]["proposals"] > 0


def test_without_the_mode_the_work_differs_on_those_neighbours():
    """The control: the default path stops early, so the counts tell the timing audit's H² pair
    apart (far record: one more Karcher iteration); the mode runs the whole budget."""
    space, origin, radius, mechanism, near, far = CASES["h2-laplace"](1.0)
    model = PrivateFrechetMean(space, epsilon=1.0, center=origin, radius=radius, random_state=0)
    assert _work(model.fit, near)["iterations"] < _work(model.fit, far)["iterations"]
    small = PrivateFrechetMean(space, epsilon=1.0, center=origin, radius=0.5, random_state=0)
    fixed = small.set_params(timing_safe=DEADLINE)
    assert _work(fixed.fit, near[1:])["iterations"] == karcher_iteration_budget(
        space, 0.5, fixed.plan(near[1:]).facts["tol"]
    )


def test_mdm_work_is_the_same_on_neighbours():
    space = Sphere(2)
    near, far = _boundary_vs_centre(space, NORTH, 0.5, 20, seed=5)
    labels = np.repeat([0, 1], 10)
    model = PrivateMDM(space, epsilon=1.0, center=NORTH, radius=0.5, timing_safe=DEADLINE)
    assert _work(model.fit, near, labels) == _work(model.fit, far, labels)


@pytest.mark.parametrize("mechanism", ["kng", "tangent"])
def test_geodesic_regression_work_is_the_same_on_neighbours(mechanism):
    space = Sphere(2)
    x = np.linspace(-1.0, 1.0, 30)
    near, far = _boundary_vs_centre(space, NORTH, 0.5, 30, seed=7)
    model = PrivateGeodesicRegression(
        space, epsilon=1.0, center=NORTH, radius=0.5, x_bounds=(-1.0, 1.0), mechanism=mechanism, timing_safe=DEADLINE
    )
    assert _work(model.fit, x, near) == _work(model.fit, x, far)


def test_linear_regression_work_is_the_same_on_neighbours():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (30, 2))
    y = X.sum(axis=1)
    y_far = y.copy()
    X_far = X.copy()
    X_far[0], y_far[0] = (1.0, 1.0), 3.0  # a corner record vs an ordinary one
    model = PrivateLinearRegression(epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 3), timing_safe=DEADLINE)
    work = _work(model.fit, X, y)
    assert work == _work(model.fit, X_far, y_far)
    # the planned route ran (KNG: proposals drawn), not the one δ_t's δ > 0 would select (AdaSSP)
    assert work["proposals"] > 0
    assert model.privacy_report_.to_dict()["scale"] == pytest.approx(model.scale_)


def test_geometric_median_private_ball_and_gd_work_is_the_same_on_neighbours():
    space = Sphere(2)
    near, far = _boundary_vs_centre(space, NORTH, 0.5, 200, seed=9)
    median = PrivateGeometricMedian(space, epsilon=1.0, delta=1e-5, center=NORTH, radius=0.5, timing_safe=DEADLINE)
    assert _work(median.fit, near) == _work(median.fit, far)

    def ball(X):
        return private_ball(space, X, epsilon=2.0, center=NORTH, radius=0.5, timing_safe=DEADLINE)

    assert _work(ball, near) == _work(ball, far)

    def radius_only(X):
        return private_ball(space, X, epsilon=2.0, center=NORTH, radius=0.5, center_share=0.0, timing_safe=DEADLINE)

    assert _work(radius_only, near) == _work(radius_only, far)

    def gd(X):
        return private_riemannian_gd(
            space,
            lambda x, R: -space.log(x, R),
            X,
            epsilon=1.0,
            delta=1e-5,
            iterations=10,
            step=0.5,
            clip=1.0,
            center=NORTH,
            radius=0.5,
            timing_safe=DEADLINE,
        )

    assert _work(gd, near) == _work(gd, far)


def _h2_radial_cdf(t):
    """The radial law of the Laplace on H² at σ = 1/2: density ∝ e^{−2t} sinh t, so
    CDF(t) = (3/2)·[(1 − e^{−t}) − (1 − e^{−3t})/3] (by hand)."""
    return 1.5 * ((1.0 - np.exp(-t)) - (1.0 - np.exp(-3.0 * t)) / 3.0)


def _fixed_draws(scale, count, seed):
    law = RadialLaw(Hyperbolic(2), scale)
    rng = np.random.default_rng(seed)
    with fixed_work_section(TIMING_SAFE_DELTA):  # one fixed-work loop per release: need = 1 each time
        return np.array([float(law.sample(rng=rng)) for _ in range(count)])


def test_the_fixed_count_sampler_is_exact():
    """The first accepted of a fixed number of proposals is an exact draw: KS against the closed
    form, and the ×1.5 mutant of the scale is caught with the same number of draws."""
    draws = _fixed_draws(0.5, 3000, seed=0)
    assert stats.kstest(draws, _h2_radial_cdf).pvalue > 0.01
    assert abs(draws.mean() - 1.5 * (1.0 - 1.0 / 9.0)) < 0.05  # E t = (3/2)(1 − 1/9) for e^{−2t} sinh t
    mutant = _fixed_draws(0.75, 3000, seed=1)
    assert stats.kstest(mutant, _h2_radial_cdf).pvalue < 1e-6


def test_a_fixed_loop_makes_every_proposal_even_after_acceptances():
    calls = []

    def propose(m, rng):
        calls.append(m)
        return rng.random(m), np.zeros(m)  # always accepts

    with fixed_work_section(1e-10), counting() as work:
        draws, _ = rejection_sample(propose, 1, (), 0.5, np.random.default_rng(0), min_rate=0.5)
    assert len(draws) == 1 and work["proposals"] == sum(calls) == fixed_proposals(0.5, 1, 1e-10 / 2)


def test_no_acceptance_is_raised_only_after_the_fixed_work():
    def never(m, rng):
        return rng.random(m), np.full(m, -np.inf)

    with fixed_work_section(1e-10), counting() as work, pytest.raises(NoAcceptance):
        rejection_sample(never, 1, (), 0.5, np.random.default_rng(0), min_rate=0.5)
    assert work["proposals"] == fixed_proposals(0.5, 1, 1e-10 / 2)


def test_the_fallback_is_the_public_centre_and_delta_t_is_charged(monkeypatch):
    space, origin = Hyperbolic(2), Hyperbolic(2).reference_point()
    near, _ = _boundary_vs_centre(space, origin, 1.0, 30, seed=3)
    accountant = BudgetAccountant(epsilon=5.0, delta=1e-6)
    model = PrivateFrechetMean(
        space, epsilon=1.0, center=origin, radius=1.0, accountant=accountant, timing_safe=DEADLINE
    )
    plan = model.plan(near)

    def no_acceptance(*args, **kwargs):
        raise NoAcceptance

    monkeypatch.setattr(type(plan.mechanism), "randomise", no_acceptance)
    model.fit(near)
    np.testing.assert_array_equal(model.mean_, origin)
    report = model.privacy_report_.to_dict()
    assert report["timing_delta"] == TIMING_SAFE_DELTA and report["delta"] == TIMING_SAFE_DELTA
    assert report["gdp_mu"] is None and "(epsilon, delta + delta_t)" in str(model.privacy_report_)
    assert accountant.total_spent == (1.0, TIMING_SAFE_DELTA)
    assert plan.delta == TIMING_SAFE_DELTA


def test_without_a_fallback_the_refusal_is_a_fixed_message():
    from geodp.errors import GeodpError
    from geodp.release import ReleasePlan, execute

    def private_part():
        raise NoAcceptance

    plan = ReleasePlan("Demo", 10, 1.0, 0.0, 0.1, 0.1, True, "exact", report="")
    with pytest.raises(GeodpError, match="accepted none of its fixed public number"):
        execute(plan, None, private_part, deadline=DEADLINE)


def test_the_fixed_flow_meets_the_tolerance_and_lands_on_the_default_flows_mean():
    """Converged iterations compute and keep the mean; both flows end within ``tol`` of the
    exact mean (μ = 1), so within ``2·tol`` of each other, as the sensitivity margin assumes."""
    space, origin = Hyperbolic(2), Hyperbolic(2).reference_point()
    X = space.exp(origin, space.random_tangent(origin, size=40, rng=0))
    tol = 1e-10
    default, info = frechet_mean(space, X, tol=tol, max_iter=300, return_info=True)
    with fixed_work_section(1e-10), counting() as work:
        fixed, fixed_info = frechet_mean(space, X, tol=tol, max_iter=300, return_info=True)
    assert fixed_info.converged and info.converged
    assert float(space.dist(fixed, default)) <= 2 * tol
    # first-order optimality, measured through the validated public geometry
    assert float(space.norm(fixed, np.mean(space.log(fixed, X), axis=0))) < 2 * tol
    assert work["iterations"] == fixed_info.n_iter == 300 > info.n_iter
    assert fixed_info.n_passes >= 2 * 300 + 1 and work["records"] == 40 * fixed_info.n_passes


def test_the_hyperbolic_pass_takes_the_exact_forms_for_every_record_under_fixed_work():
    """The default pass takes the exact (slower) distance forms only for records near the
    current point far from the origin, where the cross form cancels: a data-dependent amount of
    work. Under fixed work every record takes them, on either neighbour, and the mean agrees."""
    space, origin = Hyperbolic(2), Hyperbolic(2).reference_point()
    direction = space.random_unit_tangent(origin, rng=4)
    far_out = space.exp(origin, 6.0 * direction)
    cluster = space.exp(far_out, 0.05 * space.random_tangent(far_out, size=20, rng=5))
    near = space.exp(origin, 0.3 * space.random_tangent(origin, size=20, rng=6))
    counts = []
    for X in (near, cluster):
        with counting() as default_work:
            default = frechet_mean(space, X, init=origin, max_iter=50)
        with fixed_work_section(1e-10), counting() as fixed:
            mean = frechet_mean(space, X, init=origin, max_iter=50)
        assert float(space.dist(mean, default)) < 1e-9
        counts.append((default_work["exact distances"], fixed["exact distances"], fixed["records"]))
    # the distance forms are all evaluated under fixed work, and the same one chosen per pair
    with fixed_work_section(1e-10):
        fixed_dist = space.dist(cluster[0], cluster)
    np.testing.assert_array_equal(fixed_dist, space.dist(cluster[0], cluster))
    assert counts[0][0] == 0 < counts[1][0]  # the control: the default work differs
    # every record of every pass (all but the validation's read)
    assert counts[0][1] == counts[1][1] == counts[0][2] - 20 == counts[1][2] - 20 > 0


def _objective_and_gradient(space, x, X):
    logs = space.log(x, X)
    grad = np.mean(logs, axis=0)
    return 0.5 * float(np.mean(space.dist(x, X) ** 2)), grad, float(space.norm(x, grad))


@pytest.mark.parametrize(
    ("space", "radius"), [(Hyperbolic(2), 10.0), (Hyperbolic(3, curvature=-4.0), 3.0), (SPD(2), 4.0)]
)
def test_the_safe_step_alone_meets_the_budget_on_adversarial_data(space, radius):
    """docs/math.md §15, "Iterations": on non-positively curved spaces every fixed-work iteration
    does at least as well as the safe step, whose length is at least ``1/L_B``
    (``L_B = 1 + 2r√−κ``); then the gap contracts by ``1 − 1/L_B`` and ``‖∇F‖² ≤ 2 L_B·gap``.
    The lemma's steps are checked one by one along the safe-step flow alone (the worst case the
    budget counts on), written here from the public geometry, on records that make the Hessian
    large: all on the boundary, in opposite clusters, or one record far from the rest."""
    center = space.reference_point() if hasattr(space, "reference_point") else np.eye(2)
    a = math.sqrt(-space.curvature_bounds[0])
    big_l = 1.0 + 2.0 * radius * a
    rng = np.random.default_rng(11)
    tol = 1e-9
    budget = karcher_iteration_budget(space, radius, tol)
    unit = space.random_unit_tangent(center, size=2, rng=rng)
    datasets = [
        space.exp(center, radius * space.random_unit_tangent(center, size=30, rng=rng)),  # all on the boundary
        space.exp(center, radius * np.concatenate([np.repeat(unit[:1], 20, 0), -np.repeat(unit[:1], 10, 0)])),
        np.concatenate([np.repeat(space.exp(center, radius * unit[:1]), 29, 0), space.exp(center, -radius * unit[:1])]),
    ]
    for X in datasets:
        exact = frechet_mean(space, X, tol=1e-13, max_iter=10_000)
        f_star = _objective_and_gradient(space, exact, X)[0]
        x = center
        f, grad, g = _objective_and_gradient(space, x, X)
        assert f - f_star <= 0.5 * radius**2 * (1 + 1e-9)
        for _ in range(budget):
            if g < tol:
                break
            step = 1.0 / (1.0 + a * (math.sqrt(2 * f) + g))  # the safe step's mean-distance bound
            assert step >= 1.0 / big_l * (1 - 1e-12)
            x = space.exp(x, step * grad)
            f_next, grad, g_next = _objective_and_gradient(space, x, X)
            resolved = f_next - f_star > 1e-9 * max(1.0, f_star)  # a gap that F's rounding can tell
            assert f_next <= f - 0.5 * step * g**2 + 1e-12 * max(1.0, f)  # descent lemma
            assert f_next - f_star <= (1 - 1 / big_l) * (f - f_star) + 1e-12 * max(1.0, f)  # contraction
            assert not resolved or g_next**2 <= 2 * big_l * (f_next - f_star)  # gradient from the gap
            f, g = f_next, g_next
        assert g < tol, g


def test_a_fallback_that_fails_too_is_the_fixed_refusal():
    from geodp.errors import GeodpError
    from geodp.release import ReleasePlan, execute

    def fail():
        raise NoAcceptance

    plan = ReleasePlan("Demo", 10, 1.0, 0.0, 0.1, 0.1, True, "exact", report="")
    assert execute(plan, None, fail, deadline=DEADLINE, fallback=lambda: "public")[0] == "public"
    with pytest.raises(GeodpError, match="accepted none"):
        execute(plan, None, fail, deadline=DEADLINE, fallback=fail)


@pytest.mark.parametrize("space", [SPD(2), Hyperbolic(2)], ids=repr)
def test_records_all_at_the_centre_run_the_fixed_flow(space):
    """A zero gradient from the start (the calibration's first stand-in): converged iterations
    still compute, without dividing by the gradient norm."""
    center = space.reference_point()
    X = np.broadcast_to(center, (10, *np.shape(center))).copy()
    model = PrivateFrechetMean(space, epsilon=1.0, center=center, radius=0.5, timing_safe=DEADLINE, random_state=0)
    with counting() as work:
        model.fit(X)
    assert work["iterations"] == karcher_iteration_budget(space, 0.5, model.plan(X).facts["tol"])


def test_the_cli_ledger_and_guarantee_carry_delta_t(tmp_path, capsys):
    import json

    import jsonschema

    from geodp.cli import guarantee_schema, main

    np.save(tmp_path / "x.npy", _sphere_records(30, 0.2, 0))
    (tmp_path / "b.json").write_text('{"epsilon": 5, "delta": 1e-6}')
    args = ["release", str(tmp_path / "x.npy"), "--space", "sphere:2", "--center", "north", "--radius", "0.5"]
    args += ["--epsilon", "1", "--timing-safe", "--budget-file", str(tmp_path / "b.json")]
    args += ["--output", str(tmp_path / "r.npy"), "--guarantee", str(tmp_path / "g.json")]
    assert main(args) == 0
    spend = json.loads((tmp_path / "b.json").read_text())["spends"][-1]
    record = json.loads((tmp_path / "g.json").read_text())
    assert spend["delta"] == TIMING_SAFE_DELTA and spend["gdp_mu"] is None
    assert record["report"]["timing_delta"] == record["report"]["delta"] == TIMING_SAFE_DELTA
    jsonschema.validate(record, guarantee_schema(), cls=jsonschema.Draft202012Validator)


def test_kng_without_a_public_acceptance_bound_is_refused_before_the_charge():
    accountant = BudgetAccountant(epsilon=100.0)
    model = PrivateFrechetMean(
        Sphere(50),
        epsilon=50.0,
        center=np.eye(51)[0],
        radius=0.5,
        mechanism="kng",
        accountant=accountant,
        timing_safe=DEADLINE,
    )
    with pytest.raises(InvalidParameterError, match="envelope route"):
        model.fit(np.tile(np.eye(51)[0], (200, 1)))
    assert accountant.total_spent == (0.0, 0.0)


def test_kng_tangent_route_on_affine_spd_is_refused_before_the_charge():
    """The exact tangent route of KNG on affine-invariant SPD has no public acceptance bound
    either: the mode refuses it at plan time (it would otherwise fail after the charge)."""
    accountant = BudgetAccountant(epsilon=1.0)
    model = PrivateFrechetMean(
        SPD(8), epsilon=0.5, center=np.eye(8), radius=3.0, mechanism="kng", accountant=accountant, timing_safe=DEADLINE
    )
    assert PrivateFrechetMean(SPD(8), epsilon=0.5, center=np.eye(8), radius=3.0, mechanism="kng").plan(20).exact
    with pytest.raises(InvalidParameterError, match="tangent route on affine-invariant SPD"):
        model.fit(np.tile(np.eye(8), (20, 1, 1)))
    assert accountant.total_spent == (0.0, 0.0)


def test_kng_cap_route_without_a_public_bound_is_refused_before_the_charge():
    """The auditor's case: H¹⁰, r = 2.5, σ ≥ 0.25 takes the cap route with a public bound of 0;
    under fixed work its loop had no proposal count and failed after the charge."""
    space = Hyperbolic(10)
    center = space.reference_point()
    X = space.exp(center, 2.25 * space.random_unit_tangent(center, size=100, rng=1))
    plain = PrivateFrechetMean(space, epsilon=0.1, center=center, radius=2.5, mechanism="kng")
    assert plain.plan(X).mechanism.acceptance_bound == 0.0  # the public route this test is about
    accountant = BudgetAccountant(epsilon=10.0)
    model = plain.set_params(accountant=accountant, timing_safe=DEADLINE)
    with pytest.raises(InvalidParameterError, match="no public acceptance bound"):
        model.fit(X)
    assert accountant.total_spent == (0.0, 0.0)


def test_the_report_headline_states_what_is_charged():
    """The cold user's case: the headline said ε-DP with δ = 0 while δ_t was charged."""
    space = Sphere(2)
    X = space.exp(NORTH, 0.2 * space.random_unit_tangent(NORTH, size=30, rng=0))
    report = PrivateFrechetMean(space, epsilon=1.0, center=NORTH, radius=0.5, timing_safe=DEADLINE).fit(X)
    text, facts = str(report.privacy_report_), report.privacy_report_.to_dict()
    assert f"(ε, δ)-DP with fixed work: epsilon = 1.0, delta = {facts['delta']!r}" in text
    assert facts["delta"] == TIMING_SAFE_DELTA and "ε-DP: epsilon = 1.0, delta = 0.0" not in text


def test_the_mode_refuses_a_kng_race_past_its_proven_range_before_the_charge():
    """Past the proven-exact n·ε the race may end by MH, which runs only when the race does
    not finish in its cap (data-dependent work): refused from public settings, nothing charged."""
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, (200, 2))
    y = X.sum(axis=1)
    accountant = BudgetAccountant(epsilon=10.0)
    model = PrivateLinearRegression(
        epsilon=1.0, bounds_X=(0, 1), bounds_y=(0, 3), timing_safe=DEADLINE, accountant=accountant
    )
    with pytest.raises(InvalidParameterError, match="proven-exact range"):
        model.fit(X, y)
    assert accountant.total_spent == (0.0, 0.0)
    euclid = Euclidean(1)
    x = rng.uniform(0, 1, 200)
    Y = (2.0 * x)[:, None]
    regression = PrivateGeodesicRegression(
        euclid,
        epsilon=5.0,
        center=np.zeros(1),
        radius=3.0,
        x_bounds=(0, 1),
        timing_safe=DEADLINE,
        accountant=accountant,
    )
    with pytest.raises(InvalidParameterError, match="proven-exact range"):
        regression.fit(x, Y)
    assert accountant.total_spent == (0.0, 0.0)
