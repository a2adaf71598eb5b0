"""Nothing fails after the charge: every release path ends within public work on every dataset of
its public domain, and no single record decides whether a release happens (issue: one record
changed whether the capped exact sampler of flat regression gave up)."""

import warnings

import numpy as np
import pytest

import geodp.distributions.affine_kng as affine_kng
from geodp.accountant import BudgetAccountant
from geodp.distributions.affine_kng import AffineKNG, affine_kng_route
from geodp.errors import ApproximateSamplerWarning, ProposalBudgetExhaustedError
from geodp.manifolds import Euclidean
from geodp.models import PrivateGeodesicRegression, PrivateLinearRegression
from geodp.models.geodesic_sampling import BallPairDomain, flat_gradient_bound
from geodp.models.linear_regression import _gradient_bound, _normalisation


def _split_pair(n):
    """The audit's pair: D0 has half its covariates at 0.5 − 1.5e-4 (response −1) and half at
    0.5 + 1.5e-4 (response +1), so the design is nearly singular and the least-squares slope
    (≈ 6,700) is far outside the support; D1 replaces one record by (1, −1)."""
    x = np.r_[np.full(n // 2, 0.5 - 1.5e-4), np.full(n - n // 2, 0.5 + 1.5e-4)]
    y = np.r_[-np.ones(n // 2), np.ones(n - n // 2)][:, None]
    x1, y1 = x.copy(), y.copy()
    x1[0], y1[0] = 1.0, -1.0
    return (x, y), (x1, y1)


def _regression(seed, accountant=None):
    return PrivateGeodesicRegression(
        Euclidean(1), epsilon=1.0, center=[0.0], radius=1.0, x_bounds=(0, 1), accountant=accountant, random_state=seed
    )


def test_the_audit_pair_releases_in_every_fit_with_identical_reports(monkeypatch):
    """At the real cap a few fits each side (10⁶ records, as the audit ran them); with the public
    cap lowered to 300 proposals, 40 seeded fits each side, where D0 reaches the cap in most
    fits (the fallback chain runs) and its neighbour in some: every fit releases."""
    (x0, y0), (x1, y1) = _split_pair(1_000_000)
    reports = set()
    for seed in range(3):
        for x, y in ((x0, y0), (x1, y1)):
            accountant = BudgetAccountant(1.0)
            with pytest.warns(ApproximateSamplerWarning):
                model = _regression(seed, accountant).fit(x, y)
            assert accountant.total_spent[0] == 1.0
            assert model.privacy_report_.to_dict()["exact"] is False
            reports.add(str(model.privacy_report_))
    assert len(reports) == 1
    reports = set()
    monkeypatch.setattr(affine_kng, "MAX_PROPOSALS", 300)
    (x0, y0), (x1, y1) = _split_pair(20_000)
    fell_back = []
    for seed in range(40):
        for x, y in ((x0, y0), (x1, y1)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ApproximateSamplerWarning)
                model = _regression(seed).fit(x, y)
            assert np.all(np.isfinite(model.intercept_)) and abs(model.intercept_[0]) <= 1.0
            fell_back.append(model.curator_diagnostics_.sampler_fell_back)
            reports.add(str(model.privacy_report_))
    assert sum(fell_back[0::2]) >= 20  # D0 reached the cap in many fits, and still released
    assert len(reports) == 1


def test_the_fallback_chain_lands_where_the_exact_law_is(monkeypatch):
    """On the audit's D0 (2·10⁴ records) the fallback chain's draws have the log-density of the
    exact race's (two-sample KS on −‖Aθ − B‖/σ): the fallback is approximate, not garbage."""
    from scipy import stats

    (x0, y0), _ = _split_pair(20_000)
    xs = x0[:, None] - 0.5
    design = np.column_stack([np.ones(len(xs)), xs])
    gram, target = design.T @ design / len(xs), design.T @ y0 / len(xs)
    domain = BallPairDomain(1.0, 2.0, 2, 1)
    exact = AffineKNG(gram, target, 2e-4, in_domain=domain)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateSamplerWarning)
        reference = exact.sample(400, rng=1)
        assert not exact.fell_back
        capped = AffineKNG(gram, target, 2e-4, in_domain=domain, max_proposals=50)
        chain = capped.sample(400, rng=2)
    assert capped.fell_back
    assert stats.ks_2samp(exact.log_density(reference), exact.log_density(chain)).pvalue > 0.01
    # the test has power: the public centre's neighbourhood (what a stuck chain gives) is rejected
    stuck = reference * 0 + domain.center + 0.05
    assert stats.ks_2samp(exact.log_density(reference), exact.log_density(stuck)).pvalue < 1e-6


def test_linear_regression_releases_on_diabetes_with_natural_bounds():
    """The audit's case: scikit-learn's diabetes data, bounds = the data's min/max, ε = 30 and
    100 raised ProposalBudgetExhaustedError after charging; now it releases (approximate route)."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    for epsilon in (30.0, 100.0):
        accountant = BudgetAccountant(epsilon)
        with pytest.warns(ApproximateSamplerWarning):
            model = PrivateLinearRegression(
                epsilon=epsilon,
                bounds_X=(X.min(0), X.max(0)),
                bounds_y=(y.min(), y.max()),
                accountant=accountant,
                random_state=0,
            ).fit(X, y)
        assert model.score(X, y) > 0.3  # OLS: 0.52
        assert model.privacy_report_.to_dict()["exact"] is False


@pytest.mark.parametrize("case", ["singular", "far-outside", "corner"])
def test_adversarial_designs_release_within_public_work(case, monkeypatch):
    """A singular design, a narrow law far outside the support, and every record at a corner of
    the box (residuals at their bound): each releases, with the cap lowered so the fallback is
    reachable too."""
    monkeypatch.setattr(affine_kng, "MAX_PROPOSALS", 5_000)
    rng = np.random.default_rng(0)
    n = 5_000
    if case == "singular":
        X, y = np.full((n, 2), 0.3), rng.uniform(0, 1, n)
    elif case == "far-outside":
        X = rng.uniform(0.49, 0.51, (n, 2))
        y = np.where(X[:, 0] > 0.5, 1.0, 0.0)
    else:
        X = rng.integers(0, 2, (n, 2)).astype(float)
        y = np.where(X.sum(axis=1) == 1, 1.0, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateSamplerWarning)
        for seed in range(5):
            model = PrivateLinearRegression(epsilon=10.0, bounds_X=(0, 1), bounds_y=(0, 1), random_state=seed).fit(X, y)
            assert np.all(np.isfinite(model.coef_))


def test_linear_regression_gradient_bound_holds_on_adversarial_data_and_a_halved_bound_fails():
    """G = max‖x̃‖·‖τ‖ bounds ‖Aθ − B‖ at every vertex of the domain for datasets whose records sit
    at corners of the box with extreme responses (where the supremum is reached); G/2 does not."""
    m = 3
    lo, hi, y_lo, y_hi = np.zeros(m), np.ones(m), np.zeros(1), np.ones(1)
    for intercept in (True, False):
        facts = _normalisation(lo, hi, y_lo, y_hi, intercept)
        bound = _gradient_bound(facts)
        domain = facts["in_domain"]
        q = len(domain.weights)
        vertices = []
        for i in range(q):
            for sign in (-1.0, 1.0):
                v = np.zeros((q, 1))
                v[i, 0] = sign * domain.radius[0] / domain.weights[i]
                vertices.append(v)
        largest = 0.0
        corners = np.array(np.meshgrid(*[[0.0, 1.0]] * m)).reshape(m, -1).T
        for corner in corners:
            z = facts["to_design"](corner[None])
            for y in (y_lo, y_hi):
                r = facts["to_response"](y[None])
                for v in vertices:  # one record type repeated: the gradient is x̃ (x̃ᵀθ − ỹ)
                    largest = max(largest, float(np.linalg.norm(z.T @ (z @ v - r))))
        assert largest <= bound * (1 + 1e-12)
        assert largest > bound / 2


def test_flat_regression_gradient_bound_is_reached_up_to_a_small_factor():
    """G = √(1 + m/4)·(2r + x_max·V): a dataset at x̃ = (1, ½) with responses at −r and θ at
    (r, V) reaches ‖Aθ − B‖ = √(1.25)·(2r + V/2) in one dimension: equality."""
    radius, velocity = 1.0, 2.0
    bound = flat_gradient_bound(1, 2 * radius + 0.5 * velocity)
    x_tilde = np.array([[1.0, 0.5]])
    theta = np.array([[radius], [velocity]])
    gradient = x_tilde.T @ (x_tilde @ theta - (-radius))
    assert np.linalg.norm(gradient) == pytest.approx(bound, rel=1e-12)


def test_proven_route_acceptance_bound_holds_on_adversarial_data():
    """At small n·ε the route is exact: its bound exp(−G/σ)/3 is below the race's observed
    acceptance on records of the public domain built to defeat it — covariates split just around
    the middle of the box with opposite extreme responses (a nearly singular design whose
    least-squares slope lies far outside the domain, the law piling against its boundary)."""
    lo, hi, y_lo, y_hi = np.zeros(1), np.ones(1), np.zeros(1), np.ones(1)
    facts = _normalisation(lo, hi, y_lo, y_hi, True)
    n = 120
    x = np.r_[np.full(n // 2, 0.5 - 1e-4), np.full(n // 2, 0.5 + 1e-4)][:, None]
    y = np.r_[np.zeros(n // 2), np.ones(n // 2)][:, None]
    design, response = facts["to_design"](x), facts["to_response"](y)
    gram, target = design.T @ design / n, design.T @ response / n
    bound = _gradient_bound(facts)
    scale = bound / 8.0  # G/σ = 8: inside the proven range (n·ε = 32 for this estimator)
    route = affine_kng_route(scale, bound)
    assert route.exact
    law = AffineKNG(gram, target, scale, in_domain=facts["in_domain"], gradient_bound=bound)
    thetas = facts["in_domain"].uniform(4000, np.random.default_rng(1))
    assert law._objective(thetas).max() <= bound  # G bounds the gradient on these records too
    law.sample(2_000, rng=0)
    assert not law.fell_back
    assert law.acceptance_rate >= route.acceptance_bound


def test_route_is_decided_from_public_quantities_only():
    assert affine_kng_route(1.0, 2.0).exact
    assert not affine_kng_route(1e-3, 2.0).exact
    assert not affine_kng_route(1.0, None).exact  # no proof without a bound
    assert not affine_kng_route(1.0, 2.0, uniform=False).exact
    assert "Metropolis" in affine_kng_route(1e-3, 2.0).sampler


def test_a_domain_without_a_center_still_raises_the_typed_error_for_direct_use():
    law = AffineKNG(np.eye(2), np.zeros((2, 1)), 0.01, in_domain=lambda t: t[:, 0, 0] > 5.0, max_proposals=500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ApproximateSamplerWarning)
        with pytest.raises(ProposalBudgetExhaustedError, match="no public center"):
            law.sample(rng=0)


@pytest.mark.parametrize("side", [-1, 1])
def test_both_regressions_switch_route_at_the_documented_n_epsilon(side):
    """G/σ = n·ε/4 for least squares and flat geodesic regression, so both are exact exactly up
    to proven_n_epsilon() (36.1, the number docs/regression.md and the guide give)."""
    from geodp.distributions.affine_kng import proven_n_epsilon

    n = 40
    epsilon = proven_n_epsilon() / n * (1 + side * 1e-3)
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (n, 2))
    y = X.sum(axis=1) / 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        linear = PrivateLinearRegression(epsilon=epsilon, bounds_X=(0, 1), bounds_y=(0, 1), random_state=0).fit(X, y)
        geodesic = PrivateGeodesicRegression(
            Euclidean(1), epsilon=epsilon, center=[0.5], radius=0.5, x_bounds=(0, 1), random_state=0
        ).fit(X[:, 0], y[:, None])
    exact = side < 0
    assert linear.privacy_report_.to_dict()["exact"] is exact
    assert geodesic.privacy_report_.to_dict()["exact"] is exact
    assert sum(issubclass(w.category, ApproximateSamplerWarning) for w in caught) == (0 if exact else 2)
    assert ("exact       : yes" in str(linear.privacy_report_)) is exact


def test_tiny_designs_release_where_the_anchor_solver_underflows():
    """Audit: with no intercept and every covariate at 1e-100 (or 1e-140), the anchor's solver
    underflowed and the hyperbolic envelope's GIG sampler failed after the charge, while the
    neighbour with one covariate at 1 released. Both release now."""
    for tiny in (1e-100, 1e-140, 1e-300):
        X, y = np.full((10, 1), tiny), np.full(10, 0.5)
        neighbour = X.copy()
        neighbour[0] = 1.0
        for data in (X, neighbour):
            accountant = BudgetAccountant(1.0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ApproximateSamplerWarning)
                model = PrivateLinearRegression(
                    epsilon=1.0,
                    bounds_X=(-1, 1),
                    bounds_y=(-1, 1),
                    fit_intercept=False,
                    on_invalid="center",
                    accountant=accountant,
                    random_state=0,
                )
                model.fit(data, y)
            assert np.all(np.isfinite(model.coef_)) and accountant.total_spent[0] == 1.0


def test_bounds_taken_from_the_data_never_raise_after_the_charge():
    """Not DP (PrivacyLeakWarning), but still nothing fails after the charge: a constant column or
    no valid record at all (on_invalid="center") gives widened or unit bounds instead of an error."""
    X = np.full((20, 2), 3.0)
    y = np.linspace(0, 1, 20)
    for data in (X, np.full((20, 2), np.nan)):
        accountant = BudgetAccountant(1.0)
        with pytest.warns(Warning):
            model = PrivateLinearRegression(epsilon=1.0, on_invalid="center", accountant=accountant, random_state=0)
            model.fit(data, y)
        assert accountant.total_spent[0] == 1.0 and np.all(np.isfinite(model.coef_))
