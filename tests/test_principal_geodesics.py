"""PrivatePrincipalGeodesics: the injected noise (KS, ×1.5 mutant), the covariance's sensitivity
against adversarial neighbours, recovery of principal directions at large ε, the charges and the
typed refusals."""

import dp_accounting
import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import NotFittedError

from geodp.accountant import BudgetAccountant
from geodp.errors import AssumptionError, BudgetExceededError, InvalidParameterError, NotOnManifoldError
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.models import PrivatePrincipalGeodesics
from geodp.models.principal_geodesics import covariance_sensitivity, tangent_covariance, tangent_frame


def _pole(dim):
    return np.eye(dim + 1)[-1]


def _upper(matrix):
    return matrix[np.triu_indices(matrix.shape[0])]


@pytest.mark.parametrize(
    "space",
    [Sphere(4), SPD(3), SPD(2, metric="log-euclidean"), Hyperbolic(3), KendallShape(5), Euclidean(3)],
    ids=["sphere", "spd-affine", "spd-le", "hyperbolic", "kendall", "euclidean"],
)
def test_tangent_frame_is_orthonormal_and_tangent(space):
    p = space.random_point(rng=3)
    frame = tangent_frame(space, p)
    assert frame.shape == (space.dim, *space.point_shape)
    gram = space.inner(p, frame[:, None], frame[None, :])
    np.testing.assert_allclose(gram, np.eye(space.dim), atol=1e-9)
    np.testing.assert_allclose(space.to_tangent(p, frame), frame, atol=1e-10)  # no normal part


def _noise_fits(fits=120):
    """Released covariances on records all at the public footpoint (noiseless part 0): each
    upper-triangle entry over the declared σ should be N(0, 1)."""
    space, pole = Sphere(5), _pole(5)
    X = np.tile(pole, (40, 1))
    entries, scales = [], set()
    for seed in range(fits):
        model = PrivatePrincipalGeodesics(
            space, 2, epsilon=1.0, delta=1e-5, center=pole, radius=0.5, footpoint=pole, random_state=seed
        ).fit(X)
        np.testing.assert_array_equal(model.covariance_, model.covariance_.T)
        scale = model.privacy_report_.to_dict()["covariance"]["scale"]
        scales.add(scale)
        entries.append(_upper(model.covariance_) / scale)
    assert len(scales) == 1
    return np.concatenate(entries), scales.pop()


def test_fit_injects_the_calibrated_symmetric_gaussian_and_a_1_5_mutant_fails():
    standardised, scale = _noise_fits()
    assert standardised.size == 120 * 15
    assert stats.kstest(standardised, "norm").pvalue > 1e-3
    assert stats.kstest(1.5 * standardised, "norm").pvalue < 1e-6
    assert stats.kstest(standardised / 1.5, "norm").pvalue < 1e-6
    # The declared scale is the analytic Gaussian's of Δ = √2·r²/n (public footpoint at the centre: R = r),
    # checked against the δ(σ) curve of Balle & Wang (Thm 8) at ε = 1.
    delta_sens = np.sqrt(2.0) * 0.5**2 / 40
    a, b = delta_sens / (2 * scale), scale / delta_sens
    assert stats.norm.cdf(a - b) - np.e * stats.norm.cdf(-a - b) == pytest.approx(1e-5, rel=1e-3)


def test_sensitivity_is_attained_by_orthogonal_records_at_the_bound():
    # Euclidean: Log is the difference; u = R e1, v = R e2 attain √2·R²/n exactly.
    space, n, bound = Euclidean(3), 10, 2.0
    base = np.random.default_rng(0).uniform(-0.5, 0.5, size=(n, 3))
    X, Y = base.copy(), base.copy()
    X[0], Y[0] = [bound, 0.0, 0.0], [0.0, bound, 0.0]
    frame = np.eye(3)  # the upper triangle's norm depends on the frame; the bound holds in every one, tight in this
    diff = tangent_covariance(space, np.zeros(3), frame, X, bound) - tangent_covariance(
        space, np.zeros(3), frame, Y, bound
    )
    assert np.linalg.norm(_upper(diff)) == pytest.approx(covariance_sensitivity(bound, n), rel=1e-12)


@pytest.mark.parametrize("space_name", ["sphere", "spd-affine", "hyperbolic"])
def test_adversarial_neighbours_never_move_the_covariance_beyond_its_sensitivity(space_name):
    """Footpoint on the ball's boundary (the worst case for |Log_m x| ≤ 2r), records at the far
    side, orthogonal pairs, far outliers clipped into the ball, non-finite and cut-locus records;
    a local search maximises the move over the replaced record's position."""
    space, center, radius = {
        "sphere": (Sphere(2), _pole(2), 0.7),
        "spd-affine": (SPD(2), np.eye(2), 1.5),
        "hyperbolic": (Hyperbolic(2), np.eye(3)[0], 2.0),
    }[space_name]
    rng = np.random.default_rng(1)
    n = 6
    directions = space.random_unit_tangent(center, size=40, rng=rng)
    footpoint = space.exp(center, radius * directions[0])
    bound = 2.0 * radius
    frame = tangent_frame(space, footpoint)
    candidates = np.concatenate(
        [
            space.exp(center, radius * directions),  # the ball's boundary, all around
            space.exp(center, 5.0 * radius * directions[:5]),  # far outliers (clipped first)
            space.exp(center, 0.3 * radius * directions[:5]),
            center[None],
            footpoint[None],
        ]
    )
    rest = space.exp(center, 0.5 * radius * space.random_unit_tangent(center, size=n - 1, rng=rng))

    def statistic(record):
        records = np.concatenate([record[None], rest])
        records = space.unchecked.clip_to_ball(records, center, radius)[0]
        return _upper(tangent_covariance(space, footpoint, frame, records, bound))

    values = np.array([statistic(c) for c in candidates])
    moves = np.linalg.norm(values[:, None] - values[None, :], axis=-1)
    i, j = np.unravel_index(np.argmax(moves), moves.shape)
    best, pair = moves[i, j], [candidates[i], candidates[j]]
    for step in (0.3, 0.1, 0.03):  # hill-climb both records along the boundary
        for _ in range(30):
            trial = [space.exp(center, radius * space.random_unit_tangent(center, rng=rng)) if rng.random() < 0.2
                     else space.exp(p, step * space.random_unit_tangent(p, rng=rng)) for p in pair]  # fmt: skip
            move = np.linalg.norm(statistic(trial[0]) - statistic(trial[1]))
            if move > best:
                best, pair = move, trial
    limit = covariance_sensitivity(bound, n)
    assert best <= limit * (1 + 1e-12)
    # The search finds strong neighbours (the check is not vacuous): about limit/√2 here, since with the
    # footpoint on the boundary only the far side of the ball holds records at distance 2r.
    assert best > 0.6 * limit
    # A non-finite Log (a record the caller's data would never hold, forced here) counts as zero.
    bad = np.concatenate([np.full((1, *space.point_shape), np.nan), rest])
    with np.errstate(invalid="ignore"):
        nan_stat = _upper(tangent_covariance(space, footpoint, frame, bad, bound))
    assert np.all(np.isfinite(nan_stat))
    assert np.linalg.norm(nan_stat - values[0]) <= limit * (1 + 1e-12)


def test_principal_directions_are_recovered_at_large_epsilon_on_the_sphere_and_spd():
    # Sphere(3): spread 0.3 along e1, 0.1 along e2, 0.02 along e3 at the pole.
    space, pole = Sphere(3), _pole(3)
    rng = np.random.default_rng(2)
    v = np.c_[rng.normal(0, 0.3, 3000), rng.normal(0, 0.1, 3000), rng.normal(0, 0.02, 3000), np.zeros(3000)]
    X = space.unchecked.exp(pole, v)
    model = PrivatePrincipalGeodesics(space, 2, epsilon=20.0, delta=1e-5, center=pole, radius=0.7, random_state=0)
    model.fit(X)
    assert space.dist(model.mean_, pole) < 0.05
    assert abs(model.components_[0][0]) > 0.98 and abs(model.components_[1][1]) > 0.95
    np.testing.assert_allclose(space.norm(model.mean_, model.components_), 1.0, atol=1e-10)
    assert abs(space.inner(model.mean_, model.components_[0], model.components_[1])) < 1e-10
    assert model.explained_variance_[0] == pytest.approx(0.09, rel=0.15)
    # SPD(2), affine metric: records Exp_I(t·A) along one symmetric direction A (plus a little noise).
    spd = SPD(2)
    A = np.array([[1.0, 1.0], [1.0, -1.0]]) / 2.0  # unit norm at I
    t = rng.normal(0, 0.3, 2000)
    small = 0.03 * spd.random_tangent(np.eye(2), size=2000, rng=rng)
    Y = spd.unchecked.exp(np.eye(2), t[:, None, None] * A + small)
    fitted = PrivatePrincipalGeodesics(spd, 1, epsilon=20.0, delta=1e-5, center=np.eye(2), radius=1.5,
                                       random_state=1).fit(Y)  # fmt: skip
    direction = spd.transport(fitted.mean_, np.eye(2), fitted.components_[0])
    assert abs(spd.inner(np.eye(2), direction, A)) > 0.95


def test_both_releases_are_charged_once_as_their_composition_and_the_covariance_equals_dp_accountings():
    space, pole, delta = Sphere(2), _pole(2), 1e-5
    X = space.unchecked.exp(pole, 0.2 * space.random_tangent(pole, size=200, rng=0))
    acc = BudgetAccountant(epsilon=1.0, delta=delta)
    model = PrivatePrincipalGeodesics(space, 1, epsilon=1.0, delta=delta, center=pole, radius=0.5, accountant=acc,
                                      random_state=0).fit(X)  # fmt: skip
    [charge] = acc.charges  # one charge: both releases or neither
    assert (charge.epsilon, charge.delta) == (1.0, delta)
    assert isinstance(charge.event, dp_accounting.ComposedDpEvent)
    mean_event, cov_event = charge.event.events
    assert mean_event.epsilon == 0.5 and mean_event.delta == 0.0
    report = model.privacy_report_.to_dict()
    assert cov_event.noise_multiplier == pytest.approx(
        report["covariance"]["scale"] / report["covariance"]["sensitivity"]
    )
    assert model.privacy_report_.dp_event() == charge.event
    assert (report["epsilon"], report["delta"]) == (1.0, delta)
    assert (report["mean"]["epsilon"], report["mean"]["delta"]) == (0.5, 0.0)  # the Laplace mean: pure ε-DP
    cov = report["covariance"]
    reference = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    reference.compose(dp_accounting.GaussianDpEvent(cov["scale"] / cov["sensitivity"]))
    assert reference.get_epsilon(delta) == pytest.approx(0.5, rel=2e-3)
    assert cov["sensitivity"] == pytest.approx(np.sqrt(2) * 1.0**2 / 200)  # R = 2r = 1
    # PLD composes the parts by their own curves: dp-accounting's PLD of (pure 0.5) ⊗ (the Gaussian),
    # below the 1.0 that one merged (ε, δ) event would cost.
    pld = BudgetAccountant(epsilon=1.0, delta=delta, composition="pld")
    pld.spend(model.privacy_report_)
    pure = dp_accounting.pld.privacy_loss_distribution.from_privacy_parameters(
        dp_accounting.pld.common.DifferentialPrivacyParameters(0.5, 0.0), value_discretization_interval=1e-4
    )
    gaussian = dp_accounting.pld.privacy_loss_distribution.from_gaussian_mechanism(
        cov["scale"] / cov["sensitivity"], value_discretization_interval=1e-4
    )
    independent = pure.compose(gaussian).get_epsilon_for_delta(delta)
    assert pld.total_spent[0] == pytest.approx(independent, abs=2e-3) and pld.total_spent[0] < 0.99


def test_public_refusals_and_a_short_budget_charge_nothing():
    space, pole = Sphere(2), _pole(2)
    X = np.tile(pole, (20, 1))
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    settings = dict(epsilon=1.0, delta=1e-5, center=pole, radius=0.5, accountant=acc)
    with pytest.raises(InvalidParameterError, match="n_components"):
        PrivatePrincipalGeodesics(space, 3, **settings).fit(X)
    with pytest.raises(InvalidParameterError, match="n_components"):
        PrivatePrincipalGeodesics(space, 0, **settings).fit(X)
    with pytest.raises(InvalidParameterError, match="mean_share"):
        PrivatePrincipalGeodesics(space, 1, mean_share=1.0, **settings).fit(X)
    with pytest.raises(InvalidParameterError):
        PrivatePrincipalGeodesics(space, 1, **{**settings, "delta": 0.0}).fit(X)
    with pytest.raises(AssumptionError):
        PrivatePrincipalGeodesics(space, 1, **{**settings, "radius": 1.0}).fit(X)
    with pytest.raises(InvalidParameterError, match="y must be None"):
        PrivatePrincipalGeodesics(space, 1, **settings).fit(X, y=np.zeros(20))
    with pytest.raises(BudgetExceededError):  # the mean alone fits, both do not: neither is charged
        PrivatePrincipalGeodesics(space, 1, **{**settings, "epsilon": 1.5}).fit(X)
    assert acc.charges == []
    with pytest.raises(NotFittedError):
        _ = PrivatePrincipalGeodesics(space, 1, **settings).components_
    with pytest.raises(NotOnManifoldError):  # whether the records are valid depends on the data: after the charge
        PrivatePrincipalGeodesics(space, 1, **settings).fit(np.ones((20, 3)))
    assert [(c.epsilon, c.delta) for c in acc.charges] == [(1.0, 1e-5)]  # both releases, charged once


@pytest.mark.parametrize(
    ("space", "center", "radius"),
    [(SPD(3), np.eye(3), 15.0), (Hyperbolic(2), np.eye(3)[0], 8.0), (Sphere(2), _pole(2), 0.785)],
    ids=["spd-affine-r15", "hyperbolic-r8", "sphere-near-r*"],
)
def test_records_at_the_edge_of_a_large_ball_stay_finite_and_within_the_bound(space, center, radius):
    """The extremes of the public domain: footpoint and records on the boundary of the largest
    balls, on opposite sides (distance 2r): the statistic is finite and one replacement moves it
    by at most √2·(2r)²/n."""
    directions = space.random_unit_tangent(center, size=8, rng=4)
    footpoint = space.exp(center, radius * directions[0])
    far = space.exp(center, -radius * directions)  # the far side, and around it
    frame = tangent_frame(space, footpoint)
    with np.errstate(all="ignore"):
        records = space.unchecked.clip_to_ball(far, center, radius)[0]
        stats_ = [_upper(tangent_covariance(space, footpoint, frame, np.roll(records, k, axis=0), 2 * radius))
                  for k in range(2)]  # fmt: skip
        replaced = records.copy()
        replaced[0] = footpoint
        moved = _upper(tangent_covariance(space, footpoint, frame, replaced, 2 * radius))
    assert all(np.all(np.isfinite(s)) for s in stats_) and np.all(np.isfinite(moved))
    np.testing.assert_allclose(stats_[0], stats_[1], rtol=1e-9, atol=1e-9)  # order does not matter
    assert np.linalg.norm(moved - stats_[0]) <= covariance_sensitivity(2 * radius, 8) * (1 + 1e-9)
    assert np.linalg.norm(moved - stats_[0]) > 0.3 * covariance_sensitivity(2 * radius, 8)


def test_the_gradient_mean_takes_a_share_of_delta():
    """The auditor's case: the δ split must give the gradient mean (an (ε, δ > 0) mechanism) its
    share of δ, not refuse it."""
    space = Sphere(2)
    north = np.array([0.0, 0.0, 1.0])
    X = space.exp(north, space.to_tangent(north, 0.1 * np.random.default_rng(0).normal(size=(200, 3))))
    model = PrivatePrincipalGeodesics(
        space, 1, epsilon=2.0, delta=1e-5, center=north, radius=0.5, mean_mechanism="gradient", random_state=0
    ).fit(X)
    assert model.privacy_report_.to_dict()["delta"] == pytest.approx(1e-5)
