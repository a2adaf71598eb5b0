"""AffineKNG: the exact KNG law of an affine gradient field, checked statistically (fixed seeds)."""

import numpy as np
import pytest
from scipy import stats

from geodp.distributions.affine_kng import AffineKNG, CrossPolytopeDomain
from geodp.distributions.polytope import _lasso_path_to_radius
from geodp.errors import (
    GeodpError,
    InvalidDataError,
    InvalidParameterError,
    InvalidTypeError,
    ProposalBudgetExhaustedError,
)


def everywhere(theta):
    return np.ones(len(theta), dtype=bool)


def random_problem(q, d, seed):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(q, q))
    return M @ M.T / q + 0.3 * np.eye(q), rng.normal(size=(q, d))


def random_walk(law, start, n_chains, steps, step_size, seed):
    """Independent random-walk MH chains on the law's log-density; returns their last states."""
    rng = np.random.default_rng(seed)
    x = np.repeat(start[None], n_chains, axis=0)
    logp = law.log_density(x)
    for _ in range(steps):
        y = x + step_size * rng.standard_normal(x.shape)
        logq = law.log_density(y)
        accept = np.log(rng.random(n_chains)) < logq - logp
        x[accept], logp[accept] = y[accept], logq[accept]
    return x


def test_untruncated_law_of_the_gradient_norm_is_sigma_gamma_and_the_test_has_power():
    gram, target = random_problem(3, 2, 0)
    sigma = 0.2
    law = AffineKNG(gram, target, sigma, in_domain=everywhere)
    theta = law.sample(6000, rng=1)
    assert theta.shape == (6000, 3, 2)
    gradient = np.einsum("ij,njk->nik", gram, theta) - target  # A(θ − θ̂) = Aθ − B
    norms = np.linalg.norm(gradient.reshape(6000, -1), axis=1)
    assert stats.kstest(norms, stats.gamma(a=6, scale=sigma).cdf).pvalue > 0.01
    assert stats.kstest(norms, stats.gamma(a=6, scale=1.5 * sigma).cdf).pvalue < 0.01
    # isotropic in the gradient's coordinates: E[g gᵀ] = σ²(k + 1) I with k = 6
    cov = np.cov(gradient.reshape(6000, -1).T)
    np.testing.assert_allclose(cov, sigma**2 * 7 * np.eye(6), atol=0.12 * sigma**2 * 7)
    assert law.acceptance_rate == 1.0


def test_truncated_law_agrees_with_a_long_random_walk():
    gram, target = np.array([[1.0, 0.4], [0.4, 0.5]]), np.array([[0.3], [0.2]])
    sigma = 0.3

    def half_plane(theta):  # cuts the law's bulk: acceptance ≈ 0.4
        return theta[:, 0, 0] + theta[:, 1, 0] <= 0.5

    law = AffineKNG(gram, target, sigma, in_domain=half_plane)
    exact = law.sample(5000, rng=2)
    assert 0.2 < law.acceptance_rate < 0.7
    assert half_plane(exact).all()
    chains = random_walk(law, np.zeros((2, 1)), n_chains=3000, steps=300, step_size=0.5, seed=3)
    for projection in (lambda t: t[:, 0, 0], lambda t: t[:, 0, 0] + t[:, 1, 0], lambda t: t[:, 1, 0] - t[:, 0, 0]):
        assert stats.ks_2samp(projection(exact), projection(chains)).pvalue > 0.01


@pytest.mark.parametrize("kind", ["race", "hyperbolic", "uniform"])
def test_structured_proposals_are_exact_when_the_mode_is_outside_the_cross_polytope(kind):
    # θ̂ = (1.2, 0.5) lies outside the l1 ball of radius 1: the law piles against its boundary.
    gram = np.array([[1.0, 0.5], [0.5, 0.8]])
    target = gram @ np.array([[1.2], [0.5]])
    domain = CrossPolytopeDomain([1.0, 1.0], np.zeros((2, 1)), [1.0])
    law = AffineKNG(gram, target, 0.25, in_domain=domain)
    assert not domain(law.mode()[None])[0]
    proposals = dict(zip(("hyperbolic", "uniform"), law._structured_proposals(), strict=True))
    if kind == "race":
        exact = law.sample(4000, rng=4)
        assert not law.fell_back  # the race finished: these are exact draws
    else:
        proposal_rng = np.random.default_rng(4)
        theta, log_accept = proposals[kind](40000, proposal_rng)
        exact = theta[np.log(proposal_rng.random(len(theta))) < log_accept]
        assert len(exact) > 2000
    assert domain(exact).all()
    chains = random_walk(law, np.zeros((2, 1)), n_chains=3000, steps=300, step_size=0.4, seed=5)
    for projection in (lambda t: t[:, 0, 0], lambda t: t[:, 1, 0], lambda t: t[:, 0, 0] - t[:, 1, 0]):
        assert stats.ks_2samp(projection(exact), projection(chains)).pvalue > 0.01


def test_draws_outside_the_domain_never_appear_and_log_density_is_minus_inf_there():
    gram, target = random_problem(4, 1, 6)
    domain = CrossPolytopeDomain(np.full(4, 0.5), np.zeros((4, 1)), [0.3])
    law = AffineKNG(gram, target, 0.5, in_domain=domain)
    draws = law.sample((50, 4), rng=7)
    assert draws.shape == (50, 4, 4, 1)
    assert domain(draws.reshape(-1, 4, 1)).all()
    assert law.log_density(np.full((4, 1), 10.0)) == -np.inf
    inside = np.zeros((4, 1))
    assert np.isfinite(law.log_density(inside))
    np.testing.assert_allclose(law.log_density(inside), -np.linalg.norm(target) / 0.5)
    assert law.sample(rng=0).shape == (4, 1)


def test_exhausted_proposal_budget_raises_a_typed_error_without_data_numbers():
    gram, target = np.eye(2), np.zeros((2, 1))
    far = AffineKNG(gram, target, 0.01, in_domain=lambda t: t[:, 0, 0] > 5.0, max_proposals=5000)
    with pytest.raises(ProposalBudgetExhaustedError, match="barely overlaps") as info:
        far.sample(rng=0)
    assert isinstance(info.value, GeodpError)
    assert "no public center" in str(info.value)
    assert far.acceptance_rate == 0.0


def test_singular_gram_is_sampled_exactly_by_uniform_proposals():
    """A = [[1, 1], [1, 1]]: the density depends on s = θ0 + θ1 only, and on the l1 ball
    |θ0| + |θ1| ≤ 1 every line s = const has the same length, so s follows a Laplace with scale
    σ/√2 around b truncated to [−1, 1] (KS test; and it fails at 1.5σ)."""
    from scipy import stats

    sigma, b = 0.3, 0.2
    domain = CrossPolytopeDomain(np.ones(2), np.zeros((2, 1)), np.ones(1))
    law = AffineKNG(np.ones((2, 2)), np.full((2, 1), b), sigma, in_domain=domain)
    assert law.singular
    s = law.sample(6000, rng=5)[:, :, 0].sum(axis=1)
    assert np.all(np.abs(s) <= 1 + 1e-12)

    def cdf(scale):
        ref = stats.laplace(b, scale / np.sqrt(2))
        lo, hi = ref.cdf(-1.0), ref.cdf(1.0)
        return lambda v: (ref.cdf(np.clip(v, -1, 1)) - lo) / (hi - lo)

    assert stats.kstest(s, cdf(sigma)).pvalue > 0.01
    assert stats.kstest(s, cdf(1.5 * sigma)).pvalue < 1e-6


def test_singular_gram_with_a_narrow_law_uses_the_range_kernel_proposal():
    """Same closed form as above with σ = 0.003: uniform proposals alone would accept about
    σ·√2 of the time; the range × kernel proposal keeps acceptance high and the law exact
    (KS test; fails at 1.5σ)."""
    from scipy import stats

    sigma, b = 0.003, 0.2
    domain = CrossPolytopeDomain(np.ones(2), np.zeros((2, 1)), np.ones(1))
    law = AffineKNG(np.ones((2, 2)), np.full((2, 1), b), sigma, in_domain=domain)
    s = law.sample(6000, rng=6)[:, :, 0].sum(axis=1)
    assert law.acceptance_rate > 0.2
    ref = stats.laplace(b, sigma / np.sqrt(2))  # [−1, 1] truncation is negligible here
    assert stats.kstest(s, ref.cdf).pvalue > 0.01
    assert stats.kstest(s, stats.laplace(b, 1.5 * sigma / np.sqrt(2)).cdf).pvalue < 1e-6
    # the kernel coordinate t = θ1 − θ0 is uniform on the slice {θ0 + θ1 = s} of the l1 ball,
    # which is t ∈ [−1, 1] for every |s| ≤ 1
    t = np.diff(law.sample(4000, rng=7)[:, :, 0], axis=1)[:, 0]
    assert stats.kstest(t, stats.uniform(-1.0, 2.0).cdf).pvalue > 0.01
    assert stats.kstest(t, stats.uniform(-0.8, 1.6).cdf).pvalue < 1e-6


def test_singular_or_ill_conditioned_gram_is_refused():
    """... when the domain offers no uniform draws."""
    with pytest.raises(InvalidDataError, match="the design is singular: a covariate is constant"):
        AffineKNG(np.array([[1.0, 1.0], [1.0, 1.0]]), np.zeros((2, 1)), 1.0, in_domain=everywhere)
    with pytest.raises(InvalidDataError, match="singular"):
        AffineKNG(np.diag([1.0, 1e-14]), np.zeros((2, 1)), 1.0, in_domain=everywhere)


def test_bad_arguments_give_typed_errors():
    with pytest.raises(InvalidDataError, match="square"):
        AffineKNG(np.ones((2, 3)), np.zeros((2, 1)), 1.0, in_domain=everywhere)
    with pytest.raises(InvalidDataError, match="target"):
        AffineKNG(np.eye(2), np.zeros(2), 1.0, in_domain=everywhere)
    with pytest.raises(InvalidDataError, match="symmetric"):
        AffineKNG(np.array([[1.0, 0.5], [0.0, 1.0]]), np.zeros((2, 1)), 1.0, in_domain=everywhere)
    with pytest.raises(InvalidParameterError, match="scale"):
        AffineKNG(np.eye(2), np.zeros((2, 1)), 0.0, in_domain=everywhere)
    with pytest.raises(InvalidTypeError, match="in_domain"):
        AffineKNG(np.eye(2), np.zeros((2, 1)), 1.0, in_domain=None)
    with pytest.raises(InvalidParameterError, match="max_proposals"):
        AffineKNG(np.eye(2), np.zeros((2, 1)), 1.0, in_domain=everywhere, max_proposals=0)
    bad_shape = AffineKNG(np.eye(2), np.zeros((2, 1)), 1.0, in_domain=lambda t: True)
    with pytest.raises(InvalidTypeError, match="shape"):
        bad_shape.sample(rng=0)


def test_lasso_path_meets_the_kkt_conditions():
    rng = np.random.default_rng(8)
    for _ in range(40):
        q = int(rng.integers(2, 9))
        M = rng.normal(size=(q, q))
        H = M @ M.T + 1e-3 * np.eye(q)
        g, w, radius = 3 * rng.normal(size=q), rng.uniform(0.3, 1.5, q), rng.uniform(0.05, 2.0)
        u = _lasso_path_to_radius(H, g, w, radius)
        gradient = H @ u - g
        if w @ np.abs(u) < radius * (1 - 1e-9):  # unconstrained optimum inside
            np.testing.assert_allclose(gradient, 0.0, atol=1e-8)
            continue
        np.testing.assert_allclose(w @ np.abs(u), radius, rtol=1e-9)
        support = np.abs(u) > 1e-12
        mu = -gradient[support] / (w[support] * np.sign(u[support]))
        assert np.all(mu > 0) and np.ptp(mu) <= 1e-7 * mu.max()
        assert np.all(np.abs(gradient[~support]) <= mu[0] * w[~support] * (1 + 1e-7))
