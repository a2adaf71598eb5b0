"""KNG: exact rejection sampler vs long MH on the same density, flat-space reduction to the
Laplace, and adversarial checks of the gradient-norm lower bound and the gradient sensitivity."""

import numpy as np
import pytest
from scipy import optimize, special, stats

from geodp import frechet_mean
from geodp.distributions import KNGDistribution
from geodp.distributions.kng import gradient_norm_bounds
from geodp.distributions.mcmc import random_walk_metropolis
from geodp.errors import ApproximateSamplerWarning, InvalidDataError
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from geodp.mechanisms import KNGMechanism
from geodp.models import PrivateFrechetMean
from geodp.sensitivity import curvature_factor, frechet_mean_sensitivity
from test_sensitivity_curved import tangent_basis


def ball_data(space, radius, n, seed, spread=0.8):
    center = space.random_point(rng=seed)
    v = space.random_tangent(center, size=n, rng=seed + 1)
    X, _ = space.clip_to_ball(space.exp(center, spread * radius * v / np.sqrt(space.dim)), center, radius)
    return center, X


CASES = [(Sphere(2), 0.5, 0.08, 4000), (SPD(2), 1.0, 0.1, 2000), (KendallShape(8), 0.2, 0.03, 2000)]


@pytest.mark.parametrize("space, radius, scale, draws", CASES, ids=lambda v: repr(v))
def test_exact_kng_matches_mh_and_fails_with_scale_times_1_5(space, radius, scale, draws):
    center, X = ball_data(space, radius, 20, seed=1)
    law = KNGDistribution(space, X, scale, center=center, radius=radius)
    assert law.exact
    x = law.sample(draws, rng=2)
    assert np.all(space.dist(center, x) <= radius) and 0 < law.acceptance_rate <= 1
    assert law.acceptance_rate >= 0.8 * law.acceptance_bound  # the public bound is a lower bound
    rho = space.dist(law.frechet_mean, x)
    mh = random_walk_metropolis(
        space,
        law.log_density,
        np.repeat(law.frechet_mean[None], draws, axis=0),
        burn_in=400,
        thinning=1,
        step_size=scale,
        in_support=lambda y: space.dist(center, y) <= radius,
        rng=3,
    )
    rho_mh = space.dist(law.frechet_mean, mh.samples[0])
    assert stats.ks_2samp(rho, rho_mh).pvalue > 1e-3
    wrong = KNGDistribution(space, X, 1.5 * scale, center=center, radius=radius).sample(draws, rng=4)
    assert stats.ks_2samp(space.dist(law.frechet_mean, wrong), rho_mh).pvalue < 1e-6


@pytest.mark.parametrize("space", [Euclidean(3), SPD(2, metric="log-euclidean")], ids=repr)
def test_kng_is_the_laplace_at_the_mean_in_flat_spaces(space):
    center, X = ball_data(space, 2.0, 30, seed=5)
    delta = frechet_mean_sensitivity(space, 2.0, 30, mechanism="kng")
    mech = KNGMechanism(space, epsilon=0.5, sensitivity=delta, center=center, radius=2.0)
    assert mech.scale == pytest.approx(delta / 0.5)  # Δ/ε, not 2Δ/ε
    law = mech.distribution(X)
    np.testing.assert_allclose(
        law.gradient_norm(space.random_point(50, rng=6)),
        space.dist(law.frechet_mean, space.random_point(50, rng=6)),
        rtol=1e-8,
    )
    rho = space.dist(law.frechet_mean, mech.randomise(X, rng=7, size=5000))
    assert stats.kstest(rho, stats.gamma(space.dim, scale=mech.scale).cdf).pvalue > 1e-3
    assert stats.kstest(rho, stats.gamma(space.dim, scale=1.5 * mech.scale).cdf).pvalue < 1e-6


GEOMETRIES = [(Sphere(2), 0.5), (Sphere(2), 0.7), (KendallShape(4), 0.3), (Hyperbolic(2), 1.0), (SPD(2), 1.0)]


def _records_and_point(space, center, radius, basis, z, n):
    """n boundary-or-interior records and a point x, all in the ball, from free parameters."""
    d = space.dim
    dirs = z[: (n + 1) * d].reshape(n + 1, d)
    radii = radius * (1 - 1e-9) * special.expit(z[(n + 1) * d :])  # in (0, r)
    u = dirs / np.linalg.norm(dirs, axis=1, keepdims=True)
    pts = space.exp(
        center, radii[:, None].reshape((-1,) + (1,) * len(space.point_shape)) * np.tensordot(u, basis, axes=1)
    )
    return pts[:n], pts[n]


@pytest.mark.parametrize("space, radius", GEOMETRIES, ids=lambda v: repr(v))
def test_gradient_norm_lower_bound_survives_adversarial_search(space, radius):
    center = space.random_point(rng=10)
    basis = tangent_basis(space, center)
    h, _ = gradient_norm_bounds(space, radius)
    n = 3

    def ratio(z):
        X, x = _records_and_point(space, center, radius, basis, z, n)
        law_mean = frechet_mean(space, X, tol=1e-12)
        rho = float(space.dist(law_mean, x))
        grad = -np.mean(space.log(x, X), axis=0)
        return float(space.norm(x, grad)) / (h * rho) if rho > 1e-6 else np.inf

    worst = np.inf
    for seed in range(3):
        z0 = np.random.default_rng(seed).standard_normal((n + 1) * (space.dim + 1))
        res = optimize.minimize(ratio, z0, method="Nelder-Mead", options={"maxfev": 400})
        worst = min(worst, res.fun)
    print(f"{space!r} r={radius}: smallest ‖∇F‖/(hρ) = {worst:.4f}")
    assert worst >= 1.0 - 1e-6


@pytest.mark.parametrize("space, radius", GEOMETRIES, ids=lambda v: repr(v))
def test_kng_gradient_sensitivity_survives_adversarial_search(space, radius):
    # Δ_K = (1/n) sup ‖log_x a − log_x b‖ ≤ 2r(2 − h)/n for x, a, b in the ball.
    center = space.random_point(rng=11)
    basis = tangent_basis(space, center)
    bound = 2 * radius * (2 - curvature_factor(radius, space.curvature_bounds[1]))

    def gap(z):
        (a, b), x = _records_and_point(space, center, radius, basis, z, 2)
        return float(space.norm(x, space.log(x, a) - space.log(x, b))) / bound

    best = 0.0
    for seed in range(3):
        z0 = np.random.default_rng(seed).standard_normal(3 * (space.dim + 1))
        z0[-3:] = 4.0  # start near the boundary
        res = optimize.minimize(lambda z: -gap(z), z0, method="Nelder-Mead", options={"maxfev": 600})
        best = max(best, -res.fun)
    print(f"{space!r} r={radius}: largest ‖log_x a − log_x b‖ / (2r(2−h)) = {best:.4f}")
    assert best <= 1.0 + 1e-9
    assert best * bound >= 0.99 * 2 * radius  # at least the flat value 2r: the search has power


@pytest.mark.parametrize("space, radius", [(Sphere(2), 0.5), (KendallShape(6), 0.3), (SPD(2), 1.0)], ids=repr)
def test_private_frechet_mean_with_kng(space, radius):
    center, X = ball_data(space, radius, 40, seed=12, spread=1.5)
    model = PrivateFrechetMean(space, epsilon=1.0, center=center, radius=radius, mechanism="kng", random_state=13).fit(
        X
    )
    assert space.dist(center, model.mean_) <= radius
    assert model.sensitivity_ == frechet_mean_sensitivity(space, radius, 40, mechanism="kng")
    assert model.mechanism_.scale == 2 * model.sensitivity_
    text = str(model.privacy_report_)
    assert "K-norm gradient (S22)" in text and "σ = 2Δ/ε" in text and "S22 Lemma 1" in text


def test_kng_on_spd_is_exact_below_the_floor_and_runs_mh_only_when_asked():
    # Spheres, hyperbolic spaces and Kendall shapes are exact at every σ (the data's own envelope,
    # tests/test_kng_envelope.py); affine-invariant SPD takes the exact tangent route below the
    # floor (tests/test_spd_kng.py). MH runs, with its diagnostics, when sampler="mcmc" asks for it.
    space, radius = SPD(3), 3.0
    center, X = ball_data(space, radius, 10, seed=14)
    mech = KNGMechanism(space, epsilon=1.0, sensitivity=5e-5, center=center, radius=radius)
    assert mech.acceptance_bound == 0.0 and mech.guarantee.exact and "spd-tangent" == mech._route
    forced = KNGMechanism(space, epsilon=1.0, sensitivity=5e-5, center=center, radius=radius, sampler="mcmc")
    assert not forced.guarantee.exact and "MH" in forced.guarantee.sampler
    assert any("approximately" in a for a in forced.guarantee.assumptions)
    law = KNGDistribution(space, X, mech.scale, center=center, radius=radius, sampler="mcmc", burn_in=200, thinning=5)
    with pytest.warns(ApproximateSamplerWarning, match="requested"):
        x = law.sample(3, rng=15)
    assert not law.exact and law.diagnostics is not None and np.all(space.dist(center, x) <= radius * (1 + 1e-9))


def test_kng_refuses_data_outside_the_ball():
    space = Sphere(2)
    center = np.array([0.0, 0.0, 1.0])
    with pytest.raises(InvalidDataError, match="clip them first"):
        KNGDistribution(space, space.random_point(10, rng=16), 0.1, center=center, radius=0.5)


def test_kng_needs_a_ball_below_r_star():
    from geodp.errors import AssumptionError, InvalidParameterError

    space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    with pytest.raises(InvalidParameterError, match="public ball"):
        KNGMechanism(space, epsilon=1.0, sensitivity=0.1, center=None, radius=None)
    with pytest.raises(AssumptionError, match=r"r\*"):
        KNGMechanism(space, epsilon=1.0, sensitivity=0.1, center=north, radius=0.8)


def test_kng_refuses_a_batch_as_center():
    space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    with pytest.raises(InvalidDataError, match="one point"):
        KNGMechanism(space, epsilon=1.0, sensitivity=0.1, center=np.stack([north, north]), radius=0.5)


def test_kng_guarantee_is_inexact_when_the_envelope_itself_needs_mh():
    # SPD(5) in a ball of radius 12: the proposal's public acceptance bound is far below the floor
    # (the eigenvalue envelope is exact only for balls up to radius ≈ 8 at this σ) and the tangent
    # route's volume step is impractical (spd_volume_slack ≈ 32), so the release is MH, not
    # exact, and the guarantee must say so; sampler="exact" is refused there.
    from geodp.errors import AssumptionError

    space, I = SPD(5), np.eye(5)
    mech = KNGMechanism(space, epsilon=1.0, sensitivity=1.5, center=I, radius=12.0)
    with pytest.raises(AssumptionError, match="no exact KNG sampler"):
        KNGMechanism(space, epsilon=1.0, sensitivity=1.5, center=I, radius=12.0, sampler="exact")
    g = mech.guarantee
    assert not g.exact and "MH" in g.sampler and any("approximately" in a for a in g.assumptions)
    assert KNGMechanism(
        Sphere(2), epsilon=1.0, sensitivity=0.01, center=np.array([0.0, 0.0, 1.0]), radius=0.5
    ).guarantee.exact


def test_spd8_whose_laplace_proposal_was_mh_is_exact_by_the_tangent_route():
    """SPD(8), r = 1.5: the σ/h Laplace proposal truncated to the ball would be MH (so
    ``sampler="exact"`` used to be refused); the tangent route is exact there, "auto" and "exact"
    alike. The refusal where only MH exists: SPD(5), r = 12 (above)."""
    for sampler in ("auto", "exact"):
        mech = KNGMechanism(SPD(8), epsilon=1.0, sensitivity=0.05, center=np.eye(8), radius=1.5, sampler=sampler)
        assert mech._route == "spd-tangent" and mech.guarantee.exact


def test_loop_floor_follows_the_anchors_residual_gradient(monkeypatch):
    """An anchor with residual gradient g' lowers every acceptance by up to e^{−2g'/σ}: the
    rejection loop's floor follows, so data whose flow stopped short (or whose anchor fell back to
    the centre) make the release slower, never raise."""
    import geodp.distributions.kng as kng_module

    original = kng_module.rejection_sample
    space, north = Sphere(2), np.array([0.0, 0.0, 1.0])
    X = space.exp(north, space.random_tangent(north, size=50, rng=3) * 0.1)
    law = KNGDistribution(space, X, 0.05, center=north, radius=0.5)
    floors = []

    def spy(propose, need, item_shape, rate_guess, rng, max_batch=1_000_000, min_rate=None):
        floors.append(min_rate)
        return original(propose, need, item_shape, rate_guess, rng, max_batch, min_rate)

    monkeypatch.setattr(kng_module, "rejection_sample", spy)
    law.sample(2, rng=0)
    law._mean_offset = 0.1  # as if the flow had stopped 0.1 short of the mean
    law.sample(2, rng=0)
    assert floors[1] == pytest.approx(floors[0] * np.exp(-2 * 0.1 / 0.05), rel=1e-12)
