"""Samplers against their exact laws: KS tests and closed-form moments, with fixed seeds and
enough draws that a ×1.5 error in the scale fails the same test."""

import numpy as np
import pytest
from scipy import stats

from geodp.distributions import RiemannianLaplace, TangentGaussian, l2_laplace_noise
from geodp.errors import AssumptionError, InvalidParameterError
from geodp.manifolds import SPD, Euclidean, Hyperbolic

N = 40_000


@pytest.mark.parametrize("dim", [1, 3, 45])
def test_l2_laplace_second_moment_is_sigma2_d_dplus1(dim):
    sigma = 0.7
    y = l2_laplace_noise(dim, sigma, size=(N,), rng=dim)
    sq = np.sum(y**2, axis=-1)
    expected = sigma**2 * dim * (dim + 1)
    # Var|Y|² = σ⁴ [d(d+1)(d+2)(d+3) − d²(d+1)²]
    sd = sigma**2 * np.sqrt(dim * (dim + 1) * (dim + 2) * (dim + 3) - (dim * (dim + 1)) ** 2)
    assert abs(sq.mean() - expected) < 5 * sd / np.sqrt(N)


def test_l2_laplace_radius_is_gamma_and_direction_uniform():
    dim, sigma = 6, 2.0
    y = l2_laplace_noise(dim, sigma, size=(N,), rng=1)
    r = np.linalg.norm(y, axis=-1)
    assert stats.kstest(r, stats.gamma(a=dim, scale=sigma).cdf).pvalue > 1e-3
    assert stats.kstest(r, stats.gamma(a=dim, scale=1.5 * sigma).cdf).pvalue < 1e-6
    u = y / r[:, None]
    np.testing.assert_allclose(u.mean(axis=0), 0.0, atol=5 / np.sqrt(N))
    np.testing.assert_allclose(u.T @ u / N, np.eye(dim) / dim, atol=5 / np.sqrt(N))


@pytest.mark.parametrize("space", [SPD(3, metric="log-euclidean"), Euclidean(4)], ids=repr)
def test_riemannian_laplace_distance_law(space):
    eta = space.random_point(rng=2)
    sigma = 0.3
    x = RiemannianLaplace(space, eta, sigma).sample(size=N, rng=3)
    rho = space.dist(eta, x)  # measured on the manifold, not in the chart
    assert stats.kstest(rho, stats.gamma(a=space.dim, scale=sigma).cdf).pvalue > 1e-3
    assert stats.kstest(rho, stats.gamma(a=space.dim, scale=1.5 * sigma).cdf).pvalue < 1e-6
    assert np.all(space.belongs(x))


def test_log_gaussian_distance_squared_is_sigma2_chi2():
    space = SPD(4, metric="log-euclidean")
    m = space.random_point(rng=4)
    sigma = 0.25
    x = TangentGaussian(space, m, sigma).sample(size=N, rng=5)
    sq = space.dist(m, x) ** 2 / sigma**2
    assert stats.kstest(sq, stats.chi2(df=space.dim).cdf).pvalue > 1e-3
    assert stats.kstest(space.dist(m, x) ** 2 / (1.5 * sigma) ** 2, stats.chi2(df=space.dim).cdf).pvalue < 1e-6


def test_log_densities_are_the_stated_laws():
    space = SPD(3, metric="log-euclidean")
    eta = space.random_point(rng=6)
    x = space.random_point(10, rng=7)
    np.testing.assert_allclose(RiemannianLaplace(space, eta, 0.5).log_density(x), -space.dist(eta, x) / 0.5, rtol=1e-10)
    np.testing.assert_allclose(
        TangentGaussian(space, eta, 0.5).log_density(x), -(space.dist(eta, x) ** 2) / 0.5, rtol=1e-10
    )


def test_seeded_draws_are_reproducible_and_unseeded_differ():
    law = RiemannianLaplace(Euclidean(3), np.zeros(3), 1.0)
    np.testing.assert_array_equal(law.sample(5, rng=8), law.sample(5, rng=8))
    assert not np.array_equal(law.sample(5), law.sample(5))


def test_laplace_refuses_improper_laws_and_bad_scale():
    with pytest.raises(AssumptionError, match="not normalisable"):
        RiemannianLaplace(SPD(2), np.eye(2), 1.5)  # sigma_max(2) = sqrt(2)
    with pytest.raises(AssumptionError, match="not normalisable"):
        RiemannianLaplace(Hyperbolic(3), Hyperbolic(3).origin, 0.5)  # needs 1/σ > 2
    with pytest.raises(InvalidParameterError, match="scale"):
        RiemannianLaplace(Euclidean(2), np.zeros(2), -1.0)
