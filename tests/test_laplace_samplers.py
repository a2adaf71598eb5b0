"""Exact Riemannian Laplace samplers on curved spaces against an independent long MH run on the
same density, against the closed-form radial law, and with a ×1.5 scale that must fail.

MH reference: 8,000 (SPD: 3,000) independent chains started at the footpoint, one draw each after 600
(SPD: 400) adapted burn-in steps (independent draws, so the two-sample KS test is valid)."""

import numpy as np
import pytest
from scipy import stats

from geodp.distributions import RiemannianLaplace
from geodp.distributions.mcmc import random_walk_metropolis
from geodp.distributions.radial import RadialLaw, is_isotropic
from geodp.errors import ApproximateSamplerWarning
from geodp.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere

N = 8000
CASES = [
    (Sphere(2), 0.3),
    (Sphere(5, curvature=2.0), 0.15),
    (Hyperbolic(2), 0.5),
    (Hyperbolic(3, curvature=-0.5), 0.3),
    (KendallShape(5), 0.15),
    (KendallShape(8), 0.1),
    (SPD(2), 0.4),
    (SPD(3), 0.15),
]


def len_for(space):
    """Draws per test: fewer on SPD, whose MH reference pays two batched eigh per step."""
    return 3000 if isinstance(space, SPD) else N


def mh_reference(space, law, seed, scale=None):
    start = np.repeat(law.footpoint[None], len_for(space), axis=0)
    log_density = law.log_density if scale is None else (lambda x: -space.dist(law.footpoint, x) / scale)
    support = None
    if law.truncated:

        def support(x):
            return space.dist(law.center, x) <= law.radius

    result = random_walk_metropolis(
        space,
        log_density,
        start,
        burn_in=400 if isinstance(space, SPD) else 600,
        thinning=1,
        step_size=law.scale,
        in_support=support,
        rng=seed,
    )
    assert 0.1 < result.diagnostics.acceptance_rate < 0.7
    return space.dist(law.footpoint, result.samples[0])


@pytest.mark.parametrize("space, scale", CASES, ids=lambda v: repr(v) if not isinstance(v, float) else str(v))
def test_exact_laplace_matches_mh_and_fails_with_scale_times_1_5(space, scale):
    eta = space.random_point(rng=1)
    law = RiemannianLaplace(space, eta, scale)
    assert law.exact
    x = law.sample(len_for(space), rng=2)
    assert np.all(space.belongs(x))
    rho = space.dist(eta, x)
    mh = mh_reference(space, law, seed=3)
    assert stats.ks_2samp(rho, mh).pvalue > 1e-3
    # a wrong scale is caught by the same test against MH
    wrong = RiemannianLaplace(space, eta, 1.5 * scale).sample(len_for(space), rng=4)
    assert stats.ks_2samp(space.dist(eta, wrong), mh).pvalue < 1e-6
    if is_isotropic(space):
        assert stats.kstest(rho, RadialLaw(space, scale).cdf).pvalue > 1e-3
        assert stats.kstest(rho, RadialLaw(space, 1.5 * scale).cdf).pvalue < 1e-6


def test_radial_law_is_gamma_on_euclidean_space():
    law = RadialLaw(Euclidean(4), 0.7)
    t = np.linspace(0.01, 10, 50)
    np.testing.assert_allclose(law.cdf(t), stats.gamma(4, scale=0.7).cdf(t), atol=1e-6)


@pytest.mark.parametrize("space, scale", [(Sphere(2), 20.0), (Sphere(6), 5.0), (KendallShape(8), 3.0)], ids=repr)
def test_wide_laws_on_compact_spaces_use_the_secant_hat(space, scale):
    law = RadialLaw(space, scale)
    assert law.envelope == "secant" and law.acceptance_rate > 0.5
    t = law.sample(3 * N, rng=5)  # the σ/3 law is only 0.028 away in KS distance on S²
    assert stats.kstest(t, law.cdf).pvalue > 1e-3
    assert stats.kstest(t, RadialLaw(space, scale / 3).cdf).pvalue < 1e-6


@pytest.mark.parametrize(
    "space, scale, radius",
    # scales that are not normalisable untruncated (H², SPD(2)) or comparable to the radius, so the
    # truncated law is far from uniform on the ball and a ×1.5 scale is detectable
    [(Hyperbolic(2), 1.5, 2.0), (Sphere(2), 0.2, 0.6), (SPD(2), 2.0, 4.0), (KendallShape(5), 0.1, 0.3)],
    ids=repr,
)
def test_truncated_laplace_matches_mh_on_the_ball(space, scale, radius):
    center = space.random_point(rng=6)
    v = space.random_unit_tangent(center, rng=7)
    eta = space.exp(center, 0.7 * radius * v)  # off-centre footpoint inside the ball
    law = RiemannianLaplace(space, eta, scale, center=center, radius=radius)
    assert law.exact and law.truncated
    x = law.sample(len_for(space), rng=8)
    assert np.all(space.dist(center, x) <= radius)
    rho = space.dist(eta, x)
    assert stats.ks_2samp(rho, mh_reference(space, law, seed=9)).pvalue > 1e-3
    wrong = RiemannianLaplace(space, eta, 1.5 * scale, center=center, radius=radius).sample(len_for(space), rng=10)
    assert stats.ks_2samp(space.dist(eta, wrong), rho).pvalue < 1e-6


def test_spd_eigenvalue_mh_fallback_agrees_with_exact_rejection():
    law = RiemannianLaplace(SPD(3), np.eye(3), 0.2)
    exact = np.linalg.norm(np.log(np.linalg.eigvalsh(law.sample(4000, rng=11))), axis=-1)
    S, result = law._eigen.sample_symmetric_mcmc(4000, rng=12, burn_in=2000, thinning=1)
    mh = np.linalg.norm(np.linalg.eigvalsh(S), axis=-1)
    assert 0.1 < result.diagnostics.acceptance_rate < 0.7
    assert stats.ks_2samp(exact, mh).pvalue > 1e-3


def test_mcmc_fallback_reports_diagnostics_and_is_marked_inexact():
    # SPD(5) at σ = 0.3 has rejection acceptance ~1e-16: the eigenvalue law falls back to MH.
    law = RiemannianLaplace(SPD(5), np.eye(5), 0.3, burn_in=300, thinning=5)
    assert not law.exact and "MH" in law.sampler
    with pytest.warns(ApproximateSamplerWarning, match="log-eigenvalues"):
        x = law.sample(3, rng=13)
    assert x.shape == (3, 5, 5) and np.all(SPD(5).belongs(x))
    assert law.diagnostics is not None and 0 < law.diagnostics.acceptance_rate < 1


def test_truncation_with_tiny_acceptance_switches_to_mh_and_says_so():
    # On Kendall shapes with 20 landmarks a wide law keeps ≈ sin(0.8)^36 ≈ 6e-6 of its draws in a
    # ball of radius 0.8 ≥ π/4, where no polar construction holds: MH on the ball. (In a ball of
    # radius < π/4 the law is drawn exactly in polar coordinates; tests/test_ball_polar.py.)
    space = KendallShape(20)
    angles = 2 * np.pi * np.arange(20) / 20
    center = space.project(np.stack([np.cos(angles), 0.5 * np.sin(angles)], axis=1))
    law = RiemannianLaplace(space, center, 50.0, center=center, radius=0.8, burn_in=200, thinning=2)
    assert not law.exact and "MH restricted to the ball" in law.sampler
    with pytest.warns(ApproximateSamplerWarning, match="restricted to the ball"):
        x = law.sample(5, rng=14)
    assert np.all(space.dist(center, x) <= 0.8)
    assert law.diagnostics.acceptance_rate > 0.05


def test_truncated_spd_law_without_a_usable_exact_sampler_uses_mh_on_the_ball():
    # SPD(6) at σ = 1 is not normalisable and the truncated eigenvalue rejection accepts ~0:
    # the law must go to MH on the ball (and not hang estimating the ball acceptance).
    space, I = SPD(6), np.eye(6)
    law = RiemannianLaplace(space, I, 1.0, center=I, radius=2.0, burn_in=200, thinning=50)
    assert not law.exact and "MH restricted to the ball" in law.sampler
    with pytest.warns(ApproximateSamplerWarning, match="restricted to the ball"):
        x = law.sample(4, rng=15)
    assert np.all(space.dist(I, x) <= 2.0) and law.diagnostics.acceptance_rate > 0
