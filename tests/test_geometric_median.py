"""PrivateGeometricMedian: its injected noise (KS through fit, ×1.5 mutant), its gradient bound, its
charge against dp-accounting's, and robustness to an outlier beside the Fréchet mean."""

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from geodp.accountant import BudgetAccountant
from geodp.errors import AssumptionError, InvalidParameterError, NotOnManifoldError
from geodp.manifolds import SPD, Euclidean, Sphere
from geodp.models import PrivateGeometricMedian
from geodp.models.geometric_median import median_gradients

NORTH = np.array([0.0, 0.0, 1.0])


def _one_step_noise(fits=600):
    """Tangent coordinates of one-step releases on records all at the centre (zero gradient), so
    the release is Exp_c(−step·σZ/n): Log recovers σZ; over the declared scale σ (both axes pooled:
    the noise is isotropic)."""
    space, n, step = Sphere(2), 4, 0.02
    X = np.tile(NORTH, (n, 1))
    coords = []
    for seed in range(fits):
        model = PrivateGeometricMedian(
            space, epsilon=1.0, delta=1e-5, center=NORTH, radius=0.7, iterations=1, step=step, random_state=seed
        ).fit(X)
        noise = space.log(NORTH, model.median_) * (-n / step)
        coords.append(noise[:2] / model.privacy_report_.to_dict()["scale"])
    return np.array(coords).ravel()


def test_fit_injects_exactly_the_calibrated_tangent_gaussian_and_a_1_5_mutant_fails():
    standardised = _one_step_noise()
    assert stats.kstest(standardised, "norm").pvalue > 1e-3
    # The mutant: noise 1.5× the declared scale (or the declared scale 1.5× too small) fails the check.
    assert stats.kstest(1.5 * standardised, "norm").pvalue < 1e-6
    assert stats.kstest(standardised / 1.5, "norm").pvalue < 1e-6


@pytest.mark.parametrize("space", [Sphere(2), SPD(2)], ids=["sphere", "spd-affine"])
def test_median_gradients_have_norm_at_most_one_even_at_the_point_and_far_away(space):
    x = space.random_point(rng=0) if not isinstance(space, Sphere) else NORTH
    far = space.unchecked.exp(x, 3.0 * space.random_unit_tangent(x, size=5, rng=1))
    X = np.concatenate([x[None], far, space.random_point(size=20, rng=2)])
    norms = space.norm(x, median_gradients(space, x, X))
    assert norms[0] <= 1.0  # at the point itself: 0, or a rounding-level Log normalised (a subgradient)
    assert np.all(norms <= 1.0 + 1e-12)
    assert np.allclose(norms[1:], 1.0)  # the bound is attained: clip = 1 is exact, not loose


def test_the_charge_equals_dp_accountings_for_the_same_steps():
    iterations, delta = 40, 1e-5
    acc = BudgetAccountant(epsilon=2.0, delta=delta, composition="pld")
    model = PrivateGeometricMedian(
        Sphere(2), epsilon=0.8, delta=delta, center=NORTH, radius=0.5, iterations=iterations, accountant=acc
    )
    plan = model.plan(np.zeros((50, 3)))
    reference = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    reference.compose(
        dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(plan.scale / plan.sensitivity), iterations)
    )
    model.fit(np.tile(NORTH, (50, 1)))
    assert acc.total_spent[0] == pytest.approx(reference.get_epsilon(delta), rel=2e-3)
    assert acc.total_spent[0] == pytest.approx(0.8, rel=1e-6)
    report = model.privacy_report_.to_dict()
    assert (report["iterations"], report["clip"], report["n_samples"]) == (iterations, 1.0, 50)


def _frechet_mean_euclidean(X):
    return X.mean(axis=0)


def test_one_far_outlier_moves_the_frechet_mean_a_lot_and_the_private_median_little():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    Y = X.copy()
    Y[0] = [1e4, 0.0]  # one far outlier
    settings = dict(epsilon=1.0, delta=1e-5, center=np.zeros(2), radius=3.0, iterations=50, random_state=5)
    median_x = PrivateGeometricMedian(Euclidean(2), **settings).fit(X).median_
    median_y = PrivateGeometricMedian(Euclidean(2), **settings).fit(Y).median_
    mean_shift = np.linalg.norm(_frechet_mean_euclidean(Y) - _frechet_mean_euclidean(X))
    median_shift = np.linalg.norm(median_y - median_x)
    assert mean_shift > 40.0
    # Same noise draws: the outlier changes one of 200 unit gradients per step (by ≤ 2), and the
    # median's shift stays of order step·T·2/n·(contraction) — here well under 0.2.
    assert median_shift < 0.2
    assert np.linalg.norm(median_x) < 0.3  # and the private median is near the true centre


def test_sphere_median_resists_contamination_better_than_the_mean():
    space = Sphere(2)
    rng = np.random.default_rng(1)
    inliers = space.unchecked.exp(NORTH, 0.1 * space.random_tangent(NORTH, size=180, rng=rng))
    edge = space.unchecked.exp(NORTH, np.array([0.6, 0.0, 0.0]))
    X = np.concatenate([inliers, np.tile(edge, (20, 1))])  # 10 % at the ball's edge
    model = PrivateGeometricMedian(
        space, epsilon=2.0, delta=1e-5, center=NORTH, radius=0.6, iterations=60, random_state=0
    ).fit(X)
    mean_dir = X.mean(axis=0) / np.linalg.norm(X.mean(axis=0))  # the extrinsic mean, ≈ Fréchet's here
    assert space.dist(mean_dir, NORTH) > 0.05
    assert space.dist(model.median_, NORTH) < space.dist(mean_dir, NORTH)


def test_public_refusals_charge_nothing_and_invalid_records_are_charged():
    acc = BudgetAccountant(epsilon=5.0, delta=1e-5, composition="pld")
    bad_radius = PrivateGeometricMedian(Sphere(2), epsilon=1.0, delta=1e-5, center=NORTH, radius=3.0, accountant=acc)
    with pytest.raises(AssumptionError):
        bad_radius.fit(np.tile(NORTH, (5, 1)))
    with pytest.raises(InvalidParameterError):
        PrivateGeometricMedian(Sphere(2), epsilon=1.0, delta=0.0, center=NORTH, radius=0.5, accountant=acc).fit(
            np.tile(NORTH, (5, 1))
        )
    assert acc.charges == []
    model = PrivateGeometricMedian(Sphere(2), epsilon=1.0, delta=1e-5, center=NORTH, radius=0.5, accountant=acc)
    with pytest.raises(NotOnManifoldError):
        model.fit(np.ones((5, 3)))
    assert len(acc.charges) == 1


def test_an_invalid_record_is_refused_with_one_message_whatever_its_fault_or_replaced_by_the_centre():
    """NaN and off-sphere records were told apart by the refusal (InvalidDataError "NaN or
    infinite" vs NotOnManifoldError): one type and one text now; on_invalid="center" releases
    what the records replaced by the centre by hand give (same seed)."""
    space = Sphere(2)
    X = space.exp(NORTH, 0.2 * space.random_unit_tangent(NORTH, size=20, rng=0))
    settings = dict(epsilon=1.0, delta=1e-5, center=NORTH, radius=0.5, iterations=5)
    messages = set()
    for bad in (np.array([np.nan, 0.0, 1.0]), np.array([np.inf, 0.0, 0.0]), np.array([0.0, 0.0, 2.0])):
        acc = BudgetAccountant(epsilon=5.0, delta=1e-4)
        Y = X.copy()
        Y[3] = bad
        with pytest.raises(NotOnManifoldError) as caught:
            PrivateGeometricMedian(space, accountant=acc, **settings).fit(Y)
        messages.add(str(caught.value))
        assert len(acc.charges) == 1
    assert len(messages) == 1
    Y, replaced = X.copy(), X.copy()
    Y[[3, 9]], replaced[[3, 9]] = np.array([[np.nan, 0.0, 1.0], [0.0, 0.0, 2.0]]), NORTH
    center = PrivateGeometricMedian(space, on_invalid="center", random_state=3, **settings).fit(Y).median_
    by_hand = PrivateGeometricMedian(space, on_invalid="center", random_state=3, **settings).fit(replaced).median_
    np.testing.assert_array_equal(center, by_hand)
    acc = BudgetAccountant(epsilon=5.0, delta=1e-4)
    with pytest.raises(InvalidParameterError, match="on_invalid"):
        PrivateGeometricMedian(space, on_invalid="drop", accountant=acc, **settings).fit(X)
    assert acc.charges == []
